//===- Schedule.cpp - Map rows onto threads -------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "runtime/LaunchPolicy.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENSCHEDULE
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

// The tuning options (Passes.td) and their reasons:
// - max-register-elements: row elements (over the row loads held across
//   reductions) a thread may hold before the row is re-read; keeps every
//   bundled kernel free of spills.
// - target-chunks: enough independent 16-byte loads in flight to cover
//   memory latency without starving occupancy. Kernels without reductions
//   need not hold a row, so they take fewer (target-chunks-elementwise) and
//   more threads, which keeps transcendental-heavy bodies free of spills.
// - split-target-min-chunks: a row that holds several rows (fused_add_rmsnorm:
//   x and the residual) splits target-chunks between them, on rows this long
//   (shorter ones were not measured) whose chunks a power of two of threads,
//   at most the policy's max-threads-per-row, splits exactly (a masked last
//   chunk counts: 4095); an uneven split, or one held row and a weight, lost.
// - elementwise-block: a block's threads leave the SM together, so smaller
//   blocks free their slots sooner for the next rows; blocks of 64 or fewer
//   are limited by the rate blocks start.
// - dynamic-threads: dynamic rows whose launch does not shape them: rows
//   without reductions, the `_any` fallback, forced threads or rows.
// - wide-row-threads: a row that reduces on fewer than many-rows rows takes
//   up to this many threads (whole warps) before each holds more than
//   target-chunks: half the registers a thread, twice the warps an SM for
//   the same bytes in flight. Not softmax (its max, then sum of
//   exponentials), rows stored narrower than loaded (rmsnorm_quant), nor
//   rows that also read rows chosen by another index (adaln_rmsnorm spilled).
// - max-held-threads: a block of 512 leaves each thread the 128 registers
//   its chunks need.
// - max-held-chunks: past it the kernel gets every register the block
//   leaves, one block an SM, which ran slower than more threads of 8 chunks.
// - min-tile-threads: the fewest threads (whole warps) a tile of a row
//   without reductions takes; narrower tiles were not measured.
// - narrow-row-threads: many rows of at most 32 chunks stored narrower than
//   loaded (per_token_group_quant's groups) pay a row's index, scale and
//   shuffles per thread, so fewer threads hold more chunks; 2 lost to 4.
//   narrow-rows-min-threads: the fewest threads such a launch gained at.
// - streaming-rows-loads: rows without reductions hold one chunk of each
//   view a thread; two chunks of one view gained where a launch fills the
//   SMs, and lost on fewer threads (streaming-rows-min-threads).
// - cluster-block-chunks: one per thread of 128, so that few rows spread
//   their loads over many SMs (2 to 8 blocks a row, hidden 2048 to 8192 in
//   bf16).
// The measurements are in bench/results/schedule-thresholds.md.

// The threads of a block of rows, of a row on many rows or fewer, and the
// rows a block launches come from the module's launch policy
// (kgen-launch-policy), which the runtime shares through the spec.
// The most blocks a cluster takes (the portable cluster size).
constexpr int64_t kMaxClusterBlocks = 8;

/// Splits a row of `nvec` chunks into tiles of `c` <= `target` chunks per
/// thread over `tpr` threads (whole warps), wasting the fewest chunk slots:
/// idle threads in the last tile cost loads in flight (d = 11008 is 1376
/// chunks: 3 tiles of 256 x 2 leave 10% idle, 11 tiles of 128 x 1 only
/// 2.3%). Powers of two (`pow2Threads`, as forced threads per row) first;
/// no tile of fewer than `minThreads` threads. Returns (c, tiles, tpr).
std::tuple<int64_t, int64_t, int64_t>
tileRow(int64_t nvec, int64_t target, int64_t pow2Threads, int64_t minThreads) {
  int64_t c0 = target;
  std::tuple<int64_t, int64_t, int64_t> best = {
      c0, llvm::divideCeil(nvec, pow2Threads * c0), pow2Threads};
  auto waste = [&](const std::tuple<int64_t, int64_t, int64_t> &t) {
    auto [c, tiles, tpr] = t;
    return c * tiles * tpr - nvec;
  };
  // Past nvec / c tiles every tile is one warp: no fewer waste.
  for (int64_t c = target; c >= 1; --c)
    for (int64_t tiles = 1; tiles <= (int64_t)llvm::divideCeil(nvec, c);
         ++tiles) {
      int64_t tpr = llvm::alignTo(llvm::divideCeil(nvec, tiles * c), 32);
      if (tpr > pow2Threads)
        continue;
      if (tpr < minThreads)
        break;
      std::tuple<int64_t, int64_t, int64_t> cand = {c, tiles, tpr};
      if (waste(cand) < waste(best))
        best = cand;
    }
  return best;
}

/// For a row that reduces, held in registers: `tpr` threads of `c` chunks
/// may leave chunk slots idle (hidden 11008: 256 x 6 slots for 1376 chunks,
/// 10%). Whole warps of up to 8 chunks that leave fewer idle (352 x 4:
/// 2.3%) are taken instead: the fewest idle slots, then at most `most`
/// threads, then chunks nearest the target, at most `maxChunks` each
/// (bench/results/schedule-thresholds.md).
/// Returns (tpr, c), or nothing when no candidate leaves fewer idle.
/// At most `cap` threads.
std::optional<std::pair<int64_t, int64_t>> evenRow(int64_t nvec, int64_t tpr,
                                                   int64_t target, int64_t most,
                                                   int64_t maxChunks,
                                                   int64_t cap) {
  int64_t idle = tpr * llvm::divideCeil(nvec, tpr) - nvec;
  if (idle == 0 || tpr < 32)
    return std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> best;
  auto key = [&](int64_t t, int64_t c) {
    return std::make_tuple(t * c - nvec, t > most, std::abs(c - target));
  };
  for (int64_t c = 1; c <= maxChunks; ++c) {
    int64_t t = llvm::alignTo(llvm::divideCeil(nvec, c), 32);
    if (t > cap || t * c - nvec >= idle)
      continue;
    if (!best || key(t, c) < key(best->first, best->second))
      best = std::make_pair(t, c);
  }
  return best;
}

/// How a row of `nvec` chunks spreads over a cluster: (tiles, threads,
/// chunks a thread), equal spans of whole warps, at most `maxThreads` each,
/// so that no chunk needs a mask. The most tiles up to about `blockChunks`
/// chunks a block; none when no 2 to kMaxClusterBlocks tiles split the row
/// so (bf16 11008: 1376 chunks, 43 warps).
std::optional<std::tuple<int64_t, int64_t, int64_t>>
clusterSplit(int64_t nvec, int64_t blockChunks, int64_t maxThreads) {
  int64_t most = std::clamp<int64_t>(nvec / blockChunks, 2, kMaxClusterBlocks);
  for (int64_t tiles = most; tiles >= 2; --tiles) {
    if (nvec % tiles)
      continue;
    int64_t per = nvec / tiles;
    int64_t c = llvm::divideCeil(per, maxThreads);
    if (per % (32 * c) == 0)
      return std::make_tuple(tiles, per / c, c);
  }
  return std::nullopt;
}

/// Sets `k`'s schedule, or fails with the verifier's message; the register
/// cap and the prefetches are left to kgen-occupancy and kgen-prefetch.
LogicalResult setSchedule(KernelOp k, int64_t vector, int64_t threadsPerRow,
                          int64_t rowsPerBlock, int64_t chunks, bool reread,
                          int64_t tiles, bool launchThreads,
                          int64_t launchRowsPerBlock, bool cluster) {
  auto attr = ScheduleAttr::getChecked(
      [&] { return k.emitOpError("invalid schedule: "); }, k.getContext(),
      vector, threadsPerRow, rowsPerBlock, chunks, reread, tiles, launchThreads,
      launchRowsPerBlock, cluster, /*maxRegisters=*/int64_t(0),
      /*busyRow=*/false, /*prefetchBlocks=*/int64_t(0), /*prefetchFirst=*/false,
      /*prefetchLines=*/false, /*prefetchAhead=*/false);
  if (!attr)
    return failure();
  k.setScheduleAttr(attr);
  return success();
}

/// Launches `k` (a variant for a range of rows) from at least `rows` rows.
void raiseMinRows(KernelOp k, int64_t rows) {
  VariantAttr v = getVariant(k);
  if (rows <= v.getMinRows())
    return;
  k->setAttr(kVariantAttr,
             VariantAttr::get(k.getContext(), v.getKind(), v.getLength(),
                              v.getChunks(), v.getMaxThreads(), v.getWide(),
                              v.getMinLength(), v.getMaxLength(), rows,
                              v.getMaxRows(), v.getPriority()));
}

/// Whether two schedules differ at most in the rows a block holds.
bool sameButRows(ScheduleAttr a, ScheduleAttr b) {
  return a.getVector() == b.getVector() &&
         a.getThreadsPerRow() == b.getThreadsPerRow() &&
         a.getChunks() == b.getChunks() && a.getReread() == b.getReread() &&
         a.getTiles() == b.getTiles() &&
         a.getLaunchThreads() == b.getLaunchThreads();
}

struct Schedule : ::mlir::kgen::impl::KgenScheduleBase<Schedule> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    auto ok = [&](const auto &option, int64_t least,
                  int64_t most = kMaxTuningValue) {
      return succeeded(checkOption(ctx, *this, option, least, most));
    };
    return success(
        ok(threadsPerRow, 0) && ok(rowsPerBlock, 0) && ok(registersPerSM, 1) &&
        ok(maxBlockThreads, 32) && ok(maxRegisterElements, 2) &&
        ok(targetChunks, 1) && ok(targetChunksElementwise, 1) &&
        ok(splitTargetMinChunks, 0) &&
        ok(elementwiseBlock, 1, maxBlockThreads) &&
        ok(dynamicThreads, 1, maxBlockThreads) &&
        ok(wideRowThreads, 32, maxBlockThreads) &&
        ok(maxHeldThreads, 32, maxBlockThreads) && ok(maxHeldChunks, 1, 64) &&
        ok(narrowRowThreads, 1, 32) && ok(narrowRowsMinThreads, 1) &&
        ok(clusterBlockChunks, 1) && ok(minTileThreads, 32, maxBlockThreads) &&
        ok(streamingRowsLoads, 0, 64) && ok(streamingRowsMinThreads, 1));
  }

  ::kgen::launch::LaunchPolicy policy;

  void runOnOperation() override {
    policy = getLaunchPolicy(getOperation());
    // A cluster variant whose row splits unevenly would mask its chunks:
    // `_vec` serves those rows.
    for (KernelOp k :
         llvm::make_early_inc_range(getOperation().getOps<KernelOp>()))
      if (getVariantKind(k) == VariantKind::cluster) {
        std::optional<int64_t> length =
            getConstantIntValue(k.getDomainOp().getLength());
        if (!length ||
            !clusterSplit(*length / chunkVector(k), clusterBlockChunks,
                          policy.maxThreadsPerRow))
          k.erase();
      }
    bool ok = true;
    getOperation().walk([&](KernelOp k) { ok &= succeeded(schedule(k)); });
    if (!ok)
      return signalPassFailure();
    // A variant for many rows that schedules like `_vec` would only cost
    // compile time (the launch picks the rows a block holds); one that
    // re-reads its rows was never measured to gain.
    SmallVector<KernelOp> kernels(getOperation().getOps<KernelOp>());
    for (KernelOp k : kernels) {
      if (getVariantKind(k) != VariantKind::rows)
        continue;
      StringRef name = k.getSymName();
      auto base = SymbolTable::lookupNearestSymbolFrom<KernelOp>(
          k, StringAttr::get(k.getContext(), name.drop_back(5)));
      if (k.getScheduleAttr().getReread() ||
          (base && sameButRows(base.getScheduleAttr(), k.getScheduleAttr())))
        k.erase();
    }
  }

  LogicalResult schedule(KernelOp k) {
    int64_t vector = chunkVector(k);
    // A narrow variant's chunk is the multiple its bounded row length keeps,
    // so no chunk crosses the row's end (a per-element path, large code).
    if (getVariantKind(k) == VariantKind::narrow)
      vector = std::min(vector, knownDivisor(k.getDomainOp().getLength(), k));
    // The row loads a thread holds across the reductions (the lowering
    // loads the others, weights say, after them).
    llvm::SetVector<LoadOp> heldLoads = rowLoadsHeld(k);
    int64_t rowLoads = heldLoadCount(k);
    int64_t heldRows = llvm::count_if(heldLoads, [](LoadOp l) {
      return isa<RowsType>(l.getSource().getType());
    });
    VariantAttr variant = getVariant(k);
    VariantKind kind = getVariantKind(k);
    std::optional<int64_t> length =
        getConstantIntValue(k.getDomainOp().getLength());
    if (kind == VariantKind::exact)
      length = variant.getLength();

    int64_t tpr, chunks = 0, narrowTpr = 0;
    bool reread = false;
    bool manyRows = kind == VariantKind::rows;
    bool reduces = !k.getBody().getOps<ReduceOp>().empty();
    bool expSum = llvm::any_of(k.getBody().getOps<ReduceOp>(),
                               [](ReduceOp r) { return expSumInput(r); });
    // Rows chosen by another index (adaln's scale and shift by batch) are
    // loaded late, beyond what `fits` counts.
    bool mapsRows = readsMappedRows(k);
    // The fallback of a kernel that reduces (misaligned pointers or pitch)
    // re-reads its row in a rolled loop rather than holding it: its scalar
    // accesses unrolled over a held row made it the larger half of the
    // kernel's code (compile time) at 118-198 registers.
    bool rolledFallback = kind == VariantKind::any && reduces;
    if (kind == VariantKind::held) {
      // One chunk a thread: x threads a row by y rows, a block of at most
      // rows-block, as the short rows of kernels of static length take.
      int64_t held = variant.getChunks();
      int64_t block = held == 1 ? policy.rowsBlock : maxHeldThreads;
      if (variant.getMaxThreads())
        block = std::min(block, variant.getMaxThreads());
      return setSchedule(k, vector, block, int64_t(1), held, false, int64_t(1),
                         true, int64_t(0), false);
    }
    if (kind == VariantKind::cluster) {
      // Rows of whole chunks (kgen-make-variants checked) that split evenly
      // (checked above). The forced threads and rows do not apply: a block
      // of a cluster holds one row.
      auto [tiles, t, c] = *clusterSplit(*length / vector, clusterBlockChunks,
                                         policy.maxThreadsPerRow);
      return setSchedule(k, vector, t, int64_t(1), c, false, tiles, false,
                         int64_t(0), true);
    }
    if (kind == VariantKind::warp) {
      // Rows of a range of lengths (kgen-make-variants), a warp each holding
      // up to the longest, several rows a block: the runtime launches as
      // many as the specialized kernel of the row's length would, at most
      // those of the shortest row.
      int64_t rows = policy.launchedRowsFor(
          32, llvm::divideCeil(variant.getMinLength(), vector));
      return setSchedule(
          k, vector, int64_t(32), policy.rowsBlock / 32,
          (int64_t)llvm::divideCeil(variant.getMaxLength(), 32 * vector), false,
          int64_t(1), false, rows < policy.rowsBlock / 32 ? rows : int64_t(0),
          false);
    }
    // A dynamic row of whole chunks that reduces: the launch picks the
    // threads of a row and the rows of a block for the row length it sees
    // (unless forced, which keeps the fixed width to compare against).
    if (!length && reduces && !rolledFallback && !threadsPerRow &&
        !rowsPerBlock &&
        knownDivisor(k.getDomainOp().getLength(), k) % vector == 0) {
      return setSchedule(k, vector, int64_t(maxBlockThreads), int64_t(1),
                         int64_t(0), true, int64_t(1), true, int64_t(0), false);
    }
    if (!length || rolledFallback) {
      // A row of a bounded length (rope's rotary pairs within a head) takes
      // the threads its longest row needs, not a long row's.
      tpr = dynamicThreads;
      std::optional<int64_t> bound =
          knownUpperBound(k.getDomainOp().getLength(), k);
      // A narrow variant keeps `_vec`'s threads: a thread per narrow chunk
      // left most of them idle and fewer rows a block.
      if (!length && bound)
        tpr = std::clamp<int64_t>(
            llvm::PowerOf2Ceil(llvm::divideCeil(*bound, chunkVector(k))), 1,
            tpr);
      reread = true;
    } else {
      int64_t nvec = llvm::divideCeil(*length, vector);
      int64_t target = reduces ? targetChunks : targetChunksElementwise;
      // Many rows without reductions hold streaming-rows-loads chunks a
      // thread over the views they load: more loads in flight an SM.
      bool streamingRows = manyRows && !reduces && streamingRowsLoads;
      if (streamingRows)
        target = std::max<int64_t>(
            1, streamingRowsLoads / distinctViews(heldLoads.getArrayRef()));
      // Elementwise kernels hold nothing across chunks: past a few chunks a
      // loop (one chunk at a time) does as well with fewer registers.
      int64_t maxElements =
          reduces ? maxRegisterElements : maxRegisterElements / 2;
      auto threadsFor = [&](int64_t cap) {
        if (nvec <= 32)
          return (int64_t)llvm::PowerOf2Ceil(nvec);
        return std::clamp<int64_t>(
            llvm::PowerOf2Ceil(llvm::divideCeil(nvec, target)), 32, cap);
      };
      tpr = threadsFor(manyRows && reduces ? policy.manyRowsThreads
                                           : policy.maxThreadsPerRow);
      // Many short rows stored narrower (narrow-row-threads), from as many
      // rows as fill narrow-rows-min-threads threads (raised below, if the
      // row keeps those threads).
      if (manyRows && reduces && nvec <= 32 && storesNarrowerRow(k))
        narrowTpr = tpr = std::min<int64_t>(tpr, narrowRowThreads);
      if (threadsPerRow)
        tpr = threadsPerRow;
      // Without reductions nothing ties a row to one block: a long row is
      // split into tiles of a few chunks per thread (consecutive blocks), so
      // that a handful of rows (decode) still spreads over many SMs and no
      // thread holds much. Tiles that divide the row need no masks.
      if (!reduces && (int64_t)llvm::divideCeil(nvec, tpr) > target) {
        auto [c, tiles, t] =
            threadsPerRow
                ? std::tuple<int64_t, int64_t, int64_t>{target,
                                                        llvm::divideCeil(
                                                            nvec, tpr * target),
                                                        tpr}
                : tileRow(nvec, target, tpr, minTileThreads);
        tpr = t;
        if (streamingRows) // fewer rows keep `_vec`'s threads
          raiseMinRows(k, llvm::divideCeil(streamingRowsMinThreads, t * tiles));
        int64_t rpb = rowsPerBlock
                          ? rowsPerBlock
                          : std::max<int64_t>(1, elementwiseBlock / tpr);
        return setSchedule(k, vector, tpr, rpb, c, false, tiles, false,
                           int64_t(0), false);
      }
      // The row fits when it takes at most half the registers a thread of a
      // block this wide can have.
      auto fits = [&](int64_t t) {
        int64_t regs = registersPerSM / std::max<int64_t>(t, policy.rowsBlock);
        int64_t c = llvm::divideCeil(nvec, t);
        return c <= maxHeldChunks &&
               c * vector * rowLoads <= std::min(maxElements, regs / 2);
      };
      // A row too long for the threads of many rows takes `_vec`'s.
      if (manyRows && !fits(tpr))
        tpr = threadsFor(policy.maxThreadsPerRow);
      // Several held rows share the target (split-target-min-chunks).
      if (reduces && heldRows > 1 && nvec >= splitTargetMinChunks) {
        int64_t each = std::max<int64_t>(1, target / heldRows);
        int64_t split = llvm::PowerOf2Ceil(llvm::divideCeil(nvec, each));
        if (split * each == nvec && split > tpr &&
            split <= policy.maxThreadsPerRow && fits(split))
          tpr = split;
      }
      // Otherwise wider rows of threads hold less each (half a block, then a
      // whole one); past that the row is re-read (with fewer loop trips
      // than at 256).
      if (!fits(tpr)) {
        int64_t half = threadsFor(maxBlockThreads / 2);
        tpr = fits(half) ? half : threadsFor(maxBlockThreads);
      }
      // Rows of more than `target` chunks a thread on fewer rows: up to
      // wide-row-threads threads of `target` (whole warps).
      int64_t most = policy.maxThreadsPerRow;
      int64_t wide = llvm::alignTo(llvm::divideCeil(nvec, target), 32);
      if (reduces && !manyRows &&
          (int64_t)llvm::divideCeil(nvec, tpr) > target && wide > tpr &&
          wide <= wideRowThreads && fits(wide) && !storesNarrowerRow(k) &&
          !expSum && !mapsRows) {
        tpr = wide;
        most = wideRowThreads;
      }
      if (threadsPerRow)
        tpr = threadsPerRow;
      else if (auto even = evenRow(nvec, tpr, target, most, maxHeldChunks,
                                   2 * policy.maxThreadsPerRow);
               even && fits(even->first))
        tpr = even->first;
      chunks = llvm::divideCeil(nvec, tpr);
      reread = !fits(tpr);
    }
    if (threadsPerRow)
      tpr = threadsPerRow;
    if (narrowTpr && tpr == narrowTpr)
      raiseMinRows(k, llvm::divideCeil(narrowRowsMinThreads, tpr));
    if (kind == VariantKind::rows && !reduces && streamingRowsLoads)
      raiseMinRows(k, llvm::divideCeil(streamingRowsMinThreads, tpr));
    int64_t block = manyRows && tpr >= 32 ? 1
                    : reduces             ? policy.rowsBlock
                                          : elementwiseBlock;
    int64_t rpb =
        rowsPerBlock ? rowsPerBlock : std::max<int64_t>(1, block / tpr);
    // Rows that reduce over whole warps run in blocks of min-block-threads or
    // the fewest rows over that (a block's barrier then waits on its own row
    // alone) that hold min-block-chunks. Rows of part of a warp keep their
    // blocks of rows-block.
    int64_t launchRows = 0;
    if (!rowsPerBlock && reduces && tpr >= 32) {
      launchRows =
          length
              ? policy.launchedRowsFor(tpr, llvm::divideCeil(*length, vector))
              : llvm::divideCeil(policy.minBlockThreads, tpr);
    }
    if (launchRows >= rpb)
      launchRows = 0; // all of them
    return setSchedule(k, vector, tpr, rpb, chunks, reread, int64_t(1), false,
                       launchRows, false);
  }
};

} // namespace
