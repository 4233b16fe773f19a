//===- MakeVariants.cpp - Aligned and fallback clones of each kernel ------===//
#include "codegen/Transforms/Passes.h"
#include "runtime/LaunchPolicy.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENMAKEVARIANTS
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

/// Collects the kernel arguments `v` is computed from.
void argumentsOf(Value v, llvm::SmallDenseSet<Value> &out) {
  if (isa<BlockArgument>(v)) {
    out.insert(v);
    return;
  }
  for (Value o : v.getDefiningOp()->getOperands())
    argumentsOf(o, out);
}

/// The values that place accesses (view starts, sub-row lengths, and with
/// `pitches` head pitches) or size the rows.
SmallVector<Value> addressingValues(KernelOp k, bool pitches = true) {
  SmallVector<Value> values;
  k.walk([&](Operation *op) {
    if (auto l = dyn_cast<LoadOp>(op); l && l.getStart())
      values.push_back(l.getStart());
    else if (auto s = dyn_cast<StoreOp>(op); s && s.getStart())
      values.push_back(s.getStart());
    else if (auto d = dyn_cast<DomainOp>(op))
      values.push_back(d.getLength());
    else if (auto h = dyn_cast<HeadsOp>(op);
             h && !isa<ScalarsType>(h.getType())) { // scalars: no vectors
      values.push_back(h.getLength());
      for (Value p : pitches ? h.getPitches() : ValueRange())
        values.push_back(p);
    }
  });
  return values;
}

/// The dims of addressingValues: the ones whose divisibility the alignment
/// analysis can use. Counts such as heads or table rows are left out, so
/// that a variant does not demand their divisibility for nothing.
llvm::SmallDenseSet<Value> addressingDims(KernelOp k, bool pitches = true) {
  llvm::SmallDenseSet<Value> dims;
  for (Value v : addressingValues(k, pitches))
    argumentsOf(v, dims);
  return dims;
}

/// Halves each dim's assumed divisibility while every addressing value keeps
/// what it was known to divide, up to `divisor`: a dim that only scales a
/// constant (rows of `groups` groups of 128) need not divide by anything.
void relaxDivisibility(KernelOp k, int64_t divisor) {
  SmallVector<Value> values = addressingValues(k);
  auto known = [&] {
    SmallVector<int64_t> d;
    for (Value v : values)
      d.push_back(std::min(divisor, knownDivisor(v, k)));
    return d;
  };
  SmallVector<int64_t> want = known();
  Builder b(k.getContext());
  for (auto [i, t] : llvm::enumerate(k.getArgumentTypes())) {
    auto d = k.getArgAttrOfType<IntegerAttr>(i, kDivisibilityAttr);
    if (!isa<IndexType>(t) || !d || d.getInt() < 2)
      continue;
    for (int64_t next = d.getInt() / 2; next >= 1; next /= 2) {
      k.setArgAttr(i, kDivisibilityAttr, b.getI64IntegerAttr(next));
      if (known() != want) {
        k.setArgAttr(i, kDivisibilityAttr, b.getI64IntegerAttr(next * 2));
        break;
      }
    }
  }
}

/// Whether `arg` is written by group stores only (per-group scales): those
/// move one element at a time, so any element of a buffer will do.
bool onlyGroupStores(Value arg) {
  return !arg.use_empty() && llvm::all_of(arg.getUsers(), [](Operation *u) {
    auto st = dyn_cast<StoreOp>(u);
    return st && st.getGroup();
  });
}

/// Annotates `k` with the assumptions of a variant: `align` bytes for every
/// tensor in memory (0 = element alignment only) and `divisor` for each
/// dynamic dim that places accesses. A bounded dim (rope's rotary pairs)
/// asks `boundedDivisor` (0: a chunk's elements, at most `divisor`): its
/// values are few and small (10, 12, 24). A head pitch asks a chunk's
/// elements, all that aligns its heads (head_dim 120 is not 16 x n).
void assume(KernelOp k, int64_t align, int64_t divisor,
            int64_t boundedDivisor = 0) {
  Builder b(k.getContext());
  llvm::SmallDenseSet<Value> addressing = addressingDims(k);
  llvm::SmallDenseSet<Value> placing = addressingDims(k, /*pitches=*/false);
  int64_t chunk = std::min(divisor, chunkVector(k));
  if (!boundedDivisor)
    boundedDivisor = chunk;
  for (auto [i, t] : llvm::enumerate(k.getArgumentTypes())) {
    if (Type e = getTensorElementType(t)) {
      // Scalars tensors and per-group outputs move one element at a time: a
      // scale at any element (a slice of a larger buffer) keeps the vector
      // variant.
      int64_t bytes = (e.getIntOrFloatBitWidth() + 7) / 8;
      bool single =
          isa<ScalarsType>(t) || onlyGroupStores(k.getBody().getArgument(i));
      int64_t a = single ? bytes : std::max(align, bytes);
      k.setArgAttr(i, kAlignAttr, b.getI64IntegerAttr(a));
    } else if (isa<IndexType>(t)) {
      Value arg = k.getBody().getArgument(i);
      int64_t d = 1;
      if (!placing.contains(arg) && addressing.contains(arg))
        d = chunk;
      else if (addressing.contains(arg))
        d = k.getArgAttr(i, kMaxAttr) ? boundedDivisor : divisor;
      k.setArgAttr(i, kDivisibilityAttr, b.getI64IntegerAttr(d));
    }
  }
  relaxDivisibility(k, divisor);
}

/// Whether a bounded dim (kgen.max) places `k`'s accesses.
bool hasBoundedAddressing(KernelOp k) {
  return llvm::any_of(addressingDims(k), [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && k.getArgAttr(arg.getArgNumber(), kMaxAttr);
  });
}

// The tuning options (Passes.td) and their reasons:
// - exact-lengths: the common hidden sizes, unless a held variant covers them
//   as well (held-threads-as-good).
// - held-chunks: 2 x 224 threads hold hidden 3584, 4 x 352 hold 11008, 8 x
//   512 hold 32768 bf16; max-held-elements bounds them: half the 128
//   registers a block of 512 threads leaves.
// - cluster-*: a cluster shortens a long row's latency, and loses once the
//   rows fill the GPU anyway. softmax's online sum merges by exponentials,
//   dearer than a sum (exp-sum-*); layernorm's `_vec` reduces in two levels
//   and its cluster variant in one, so the cluster wins on more rows
//   (two-level-*, at most 256 blocks of 8-block clusters, the most that
//   prefetch); reductions that stay nested take two cluster barriers, which
//   only long rows on few rows repay (nested-*).
// The measurements are in bench/results/variant-thresholds.md.

/// Whether a `_vec` clone may hold its rows in `chunks` chunks per thread:
/// it reduces (else nothing is held), the held loads fit, and rows are a
/// whole number of chunks, so that a chunk is wholly in or out of the row.
bool canHold(KernelOp vec, int64_t chunks, int64_t maxHeldElements) {
  if (vec.getBody().getOps<ReduceOp>().empty())
    return false;
  int64_t v = chunkVector(vec);
  int64_t held = heldLoadCount(vec);
  return chunks * v * held <= maxHeldElements &&
         knownDivisor(vec.getDomainOp().getLength(), vec) % v == 0;
}

/// A variant's fields beyond its kind (VariantAttr: zero where unset).
struct Fields {
  int64_t length = 0, chunks = 0, maxThreads = 0;
  bool wide = false;
  int64_t minLength = 0, maxLength = 0, minRows = 0, maxRows = 0;
};

/// The order the runtime tries a kernel's variants in, lowest first: those
/// for a range of launches (a warp's rows, one row length, held rows, few or
/// many rows) before the general `_vec`, then `_vec_mD`, the fallback last.
int64_t dispatchPriority(VariantKind kind) {
  switch (kind) {
  case VariantKind::warp:
    return 0;
  case VariantKind::exact:
    return 1;
  case VariantKind::held:
    return 2;
  case VariantKind::cluster:
    return 3;
  case VariantKind::rows:
    return 4;
  case VariantKind::vec:
    return 5;
  case VariantKind::narrow:
    return 6;
  case VariantKind::any:
    return 7;
  }
  llvm_unreachable("a variant kind without a priority");
}

void setVariant(KernelOp k, VariantKind kind, Fields f = {}) {
  k->setAttr(kVariantAttr,
             VariantAttr::get(k.getContext(), kind, f.length, f.chunks,
                              f.maxThreads, f.wide, f.minLength, f.maxLength,
                              f.minRows, f.maxRows, dispatchPriority(kind)));
}

struct MakeVariants : ::mlir::kgen::impl::KgenMakeVariantsBase<MakeVariants> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    auto ok = [&](const auto &option, int64_t least,
                  int64_t most = kMaxTuningValue) {
      return succeeded(checkOption(ctx, *this, option, least, most));
    };
    return success(
        ok(exactLengths, 1, int64_t(1) << 20) && ok(heldChunks, 1, 64) &&
        ok(maxHeldElements, 1, 1024) && ok(splitHeldChunks, 1, 64) &&
        ok(splitHeldThreads, 32, 1024) && ok(heldThreadsAsGood, 0) &&
        ok(warpMinRows, 0) && ok(clusterChunksPerRow, 1) &&
        ok(clusterMinChunks, 1) && ok(expSumClusterChunksPerRow, 1) &&
        ok(expSumClusterMinChunks, 1) && ok(twoLevelClusterChunksPerRow, 1) &&
        ok(twoLevelClusterMaxRows, 1) && ok(nestedClusterMinChunks, 1) &&
        ok(nestedClusterMaxRows, 1));
  }

  void runOnOperation() override {
    const ::kgen::launch::LaunchPolicy policy = getLaunchPolicy(getOperation());
    SmallVector<KernelOp> kernels(getOperation().getOps<KernelOp>());
    for (KernelOp k : kernels) {
      if (k->hasAttr(kVariantAttr))
        continue; // already split
      OpBuilder b(k);
      StringRef name = k.getSymName();
      std::optional<int64_t> length =
          getConstantIntValue(k.getDomainOp().getLength());
      if (!length) {
        // Which held variants fit (their assumptions are the _vec ones).
        SmallVector<int64_t> held;
        auto probe = cast<KernelOp>(b.clone(*k));
        assume(probe, 16, 16);
        for (int64_t c : heldChunks)
          if (canHold(probe, c, maxHeldElements))
            held.push_back(c);
        bool holdOne = canHold(probe, 1, maxHeldElements);
        // Only when the warp's range of rows is not empty.
        bool holdWarp = policy.maxOneChunkThreads < 32 * policy.warpRowChunks &&
                        canHold(probe, policy.warpRowChunks, maxHeldElements);
        probe.erase();
        int64_t vec = chunkVector(k);
        // Rows longer than `_vec_hold1` takes, up to a warp's
        // warp-row-chunks chunks a lane, on many rows: a warp a row, several
        // rows a block. `_vec_hold2` and `_vec_hold4` take one row a block
        // of one or two warps, which on many short rows runs at the rate the
        // GPU starts blocks; on few rows `_vec_warp` lost, so it starts at
        // warp-min-rows (bench/results/variant-thresholds.md).
        if (holdWarp) {
          auto warp = cast<KernelOp>(b.clone(*k));
          warp.setSymName((name + "_vec_warp").str());
          assume(warp, 16, 16);
          Fields f;
          f.minLength = (policy.maxOneChunkThreads + 1) * vec;
          f.maxLength = 32 * policy.warpRowChunks * vec;
          f.minRows = warpMinRows;
          setVariant(warp, VariantKind::warp, f);
        }
        std::optional<int64_t> bound =
            knownUpperBound(k.getDomainOp().getLength(), k);
        for (int64_t n : exactLengths) {
          // The held variants do as well where they take at most
          // held-threads-as-good threads; a bounded row never reaches a
          // length past its bound.
          if ((!held.empty() && n <= heldThreadsAsGood * vec * held.back()) ||
              (bound && n > *bound))
            continue;
          auto exact = cast<KernelOp>(b.clone(*k));
          exact.setSymName((name + "_vec_n" + Twine(n)).str());
          assume(exact, 16, 16);
          Fields f;
          f.length = n;
          setVariant(exact, VariantKind::exact, f);
        }
        // Short rows (the policy's max-one-chunk-threads chunks at most), a
        // chunk a thread, several rows a block (the re-read `_vec` read them
        // twice, `_vec_hold2` took one row of a warp a block).
        if (holdOne)
          held.insert(held.begin(), 1);
        for (int64_t c : held) {
          auto clone = cast<KernelOp>(b.clone(*k));
          assume(clone, 16, 16);
          clone.setSymName((name + "_vec_hold" + Twine(c)).str());
          Fields f;
          f.chunks = c;
          setVariant(clone, VariantKind::held, f);
          if (c != splitHeldChunks || c != held.back())
            continue;
          // The widest held variant of 4 chunks (two held loads: no
          // 8-chunk one) takes rows of up to 2048 chunks: as one variant, the
          // registers that keep two blocks of its widest launches an SM cost
          // its narrow ones up to 30% (kgen-lower-to-gpu), so the narrow
          // launches keep their own, listed first.
          auto wide = cast<KernelOp>(b.clone(*clone));
          wide.setSymName((name + "_vec_hold" + Twine(c) + "_wide").str());
          f.wide = true;
          setVariant(wide, VariantKind::held, f);
          f.wide = false;
          f.maxThreads = splitHeldThreads;
          setVariant(clone, VariantKind::held, f);
        }
      }
      // Only rows of whole chunks: masking the last one cost the registers
      // of ptxas spills (layernorm bf16 4095 on 64 threads x 8 chunks).
      bool wholeReduce = length && *length % chunkVector(k) == 0 &&
                         !k.getBody().getOps<ReduceOp>().empty();
      int64_t nvec = length ? *length / chunkVector(k) : 0;
      // Kernels whose reductions nest get a cluster variant only for rows
      // of at least nested-cluster-min-chunks (a second barrier). The
      // variance and softmax's sum count as one level: kgen-one-pass-variance
      // and kgen-online-softmax make them one in this variant.
      bool expSum = llvm::any_of(k.getBody().getOps<ReduceOp>(),
                                 [](ReduceOp r) { return expSumInput(r); });
      bool nested = hasNestedReduction(k, /*onePass=*/true);
      int64_t fewest = nested   ? nestedClusterMinChunks
                       : expSum ? expSumClusterMinChunks
                                : clusterMinChunks;
      if (clusters && wholeReduce && nvec >= fewest) {
        auto few = cast<KernelOp>(b.clone(*k));
        few.setSymName((name + "_vec_cluster").str());
        assume(few, 16, 16);
        int64_t most =
            nvec / (expSum ? expSumClusterChunksPerRow : clusterChunksPerRow);
        if (!expSum && hasNestedReduction(k))
          most = std::min<int64_t>(nvec / twoLevelClusterChunksPerRow,
                                   twoLevelClusterMaxRows);
        if (nested)
          most = nestedClusterMaxRows;
        Fields f;
        f.maxRows = most;
        setVariant(few, VariantKind::cluster, f);
      }
      // Rows without reductions get a candidate too, from one row: the
      // schedule sets its rows, or erases it where it schedules as `_vec`.
      bool wholeStream =
          length && *length % chunkVector(k) == 0 && streamsChunks(k);
      if (wholeReduce || wholeStream) {
        auto rows = cast<KernelOp>(b.clone(*k));
        rows.setSymName((name + "_vec_rows").str());
        assume(rows, 16, 16);
        Fields f;
        f.minRows = wholeReduce ? policy.manyRows : 1;
        setVariant(rows, VariantKind::rows, f);
      }
      b.setInsertionPointAfter(k);
      auto fallback = cast<KernelOp>(b.clone(*k));
      fallback.setSymName((name + "_any").str());
      // A bounded dim's values that are not whole chunks (rotary pairs 10,
      // 12) still move 2 or 4 elements an access: a clone per smaller power
      // of two, after `_vec` and before the scalar fallback.
      if (narrowBoundedDims && hasBoundedAddressing(k)) {
        b.setInsertionPoint(fallback);
        for (int64_t d = chunkVector(k) / 2; d >= 2; d /= 2) {
          auto narrow = cast<KernelOp>(b.clone(*k));
          narrow.setSymName((name + "_vec_m" + Twine(d)).str());
          assume(narrow, 16, 16, d);
          setVariant(narrow, VariantKind::narrow);
        }
      }
      k.setSymName((name + "_vec").str());
      assume(k, 16, 16);
      assume(fallback, 0, 1);
      setVariant(k, VariantKind::vec);
      setVariant(fallback, VariantKind::any);
    }
  }
};

} // namespace
