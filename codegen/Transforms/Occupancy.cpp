//===- Occupancy.cpp - Register caps for the blocks an SM keeps ----------===//
//
// How many blocks an SM keeps is a schedule decision: it is set here, on the
// schedule (`maxRegisters`, `busyRow`), from the row a thread holds and its
// block, so that `--emit=kgen` shows it and the lowering only applies it.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENOCCUPANCY
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

/// A long held row (`chunks` a thread: bf16 16384 on 256 threads, 8192 on
/// 128) whose kernel has a second reduction level or writes a narrower
/// dtype than it reads spends longer between its loads and its stores, and
/// two blocks an SM left memory idle. It keeps busy-resident-threads an SM
/// and re-widens its held bf16 values after each reduction (rewiden) so
/// that they fit without spills. Only such kernels: the cap cost the
/// one-level norms. One held input row and at most one row loaded after the
/// reductions (more spilled); blocks past `maxBlock` keep one block an SM
/// as without it (bench/results/lowering-decisions.md).
static bool keepsThreeBlocks(KernelOp k, ScheduleAttr s, int64_t chunks,
                             int64_t maxBlock) {
  if (s.getChunks() != chunks || s.getReread() || s.getLaunchThreads() ||
      s.getThreadsPerRow() * s.getRowsPerBlock() > maxBlock)
    return false;
  llvm::SetVector<LoadOp> held = rowLoadsHeld(k);
  if (!allVectorized(held.getArrayRef()) ||
      llvm::count_if(held, [](LoadOp l) {
        return isa<RowsType>(l.getSource().getType());
      }) != 1)
    return false;
  int64_t late = 0;
  Type heldType;
  for (LoadOp l : k.getBody().getOps<LoadOp>()) {
    if (!isa<RankedTensorType>(l.getResult().getType()))
      continue;
    if (!held.contains(l))
      ++late;
    else if (isa<RowsType>(l.getSource().getType()))
      heldType = getElementTypeOrSelf(l.getResult().getType());
  }
  // Only bf16 rows re-widen by a shift; f16 and f32 rows spilled.
  if (late > 1 || !heldType.isBF16())
    return false;
  bool narrows = llvm::any_of(k.getBody().getOps<StoreOp>(), [&](StoreOp st) {
    Type t = st.getValue().getType();
    return isa<RankedTensorType>(t) &&
           getElementTypeOrSelf(t).getIntOrFloatBitWidth() < 16;
  });
  return narrows || hasNestedReduction(k);
}

/// Whether a vectorized variant streams its chunks (streamsChunks): its
/// loads in flight grow with the threads an SM keeps. Rope's heads hold
/// their pairs and spilled under it.
static bool streams(KernelOp k) {
  return getVariantKind(k) != VariantKind::any && streamsChunks(k);
}

namespace {

// The register-cap options (Passes.td) and their reasons:
// - min-resident-threads: two 256-thread blocks, so that while one waits at
//   a reduction's barrier the other keeps loads in flight.
// - reread-resident-threads: a kernel that re-reads its rows holds little
//   a thread, and more rows in flight hide the passes' barriers.
// - wide-block, few-chunks, wide-block-resident-threads: an SM holds whole
//   blocks, and 65 to 85 registers leave 3 of 256 threads where 64 leave 4;
//   smaller blocks spilled or lost. Where the row needs more, it gets what
//   its loaded words need besides registers-beside-row (ptxas keeps the
//   converted values when it can).
// - busy-resident-threads, busy-row-chunks, busy-row-block: long held rows
//   (8 chunks a thread, blocks of up to 256) that do more after their first
//   reduction keep three such blocks an SM (see keepsThreeBlocks).
// - widest-held-threads: a dynamic kernel's widest held variant of 4 chunks
//   (no 8-chunk one: its rows hold two loads, as rmsnorm_quant_dynamic and
//   fused_add_rmsnorm), in its blocks of more than 256 threads
//   (`_vec_hold4_wide`), keeps two blocks of up to this many an SM (72
//   registers). Narrower blocks lost under that cap, hence the split.
// - group-resident-threads, group-row-chunks: a held row quantized per group
//   (a group_reduce) keeps its values across the groups' shuffles; short
//   ones fit a smaller cap, and more rows in flight hid the shuffles.
// - streaming-resident-threads, streaming-one-row-resident-threads: a kernel
//   without reductions holds a chunk of each row a trip; more threads an SM
//   keep more loads in flight, the more so where a thread loads one chunk.
// The measurements are in bench/results/lowering-decisions.md.

struct Occupancy : ::mlir::kgen::impl::KgenOccupancyBase<Occupancy> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    auto ok = [&](const auto &option, int64_t least,
                  int64_t most = kMaxTuningValue) {
      return succeeded(checkOption(ctx, *this, option, least, most));
    };
    return success(ok(registersPerSM, 1) && ok(minResidentThreads, 1) &&
                   ok(rereadResidentThreads, 1) && ok(busyResidentThreads, 1) &&
                   ok(busyRowChunks, 1) && ok(busyRowBlock, 1) &&
                   ok(wideBlock, 1) && ok(fewChunks, 0) &&
                   ok(wideBlockResidentThreads, 1) &&
                   ok(registersBesideRow, 0) && ok(widestHeldThreads, 1) &&
                   ok(groupResidentThreads, 1) && ok(groupRowChunks, 0) &&
                   ok(streamingResidentThreads, 0) &&
                   ok(streamingOneRowResidentThreads, 0));
  }

  void runOnOperation() override {
    getOperation().walk([&](KernelOp k) {
      ScheduleAttr s = requireSchedule(k);
      if (!s)
        return signalPassFailure();
      bool busyRow =
          busyRows && keepsThreeBlocks(k, s, busyRowChunks, busyRowBlock);
      k.setScheduleAttr(s.withRegisters(registerCap(k, s, busyRow), busyRow));
    });
  }

  /// Registers per thread (`.maxnreg`). With only `.maxntid`, ptxas aims at
  /// full occupancy and spills (64 registers at 256 threads on sm_86), while
  /// these kernels want their row in registers. Left free, it takes what the
  /// block leaves and may keep one block per SM (layernorm, bf16 16384: 130
  /// registers, so 8 warps an SM): at most the registers that
  /// keep min-resident-threads (group-resident-threads for rows quantized
  /// per group, where that cap fits them) per SM, when the row a thread
  /// holds is vectorized, at most 8 chunks per load and at most half of
  /// them; else all. Rows re-read, busy rows and rows of few chunks in wide
  /// blocks take the residencies named above. Element-wise rows (the `_any`
  /// variant) need an address per element and spill under the cap, and so
  /// did a 16-chunk f32 row on sm_75; the Ptxas tests check every bundled
  /// kernel for spills.
  int32_t registerCap(KernelOp k, ScheduleAttr s, bool busyRow) {
    int64_t block = s.getThreadsPerRow() * s.getRowsPerBlock();
    int64_t all = std::min<int64_t>(255, registersPerSM / block);
    int64_t shared = std::min<int64_t>(
        all, registersPerSM / std::max<int64_t>(block, minResidentThreads));
    llvm::SetVector<LoadOp> held = rowLoadsHeld(k);
    bool vectorized = allVectorized(held.getArrayRef());
    if (int64_t resident = streamingResidentThreads;
        resident && vectorized && streams(k)) {
      if (streamingOneRowResidentThreads && s.getChunks() <= 1 &&
          distinctViews(held.getArrayRef()) == 1)
        resident = streamingOneRowResidentThreads;
      return std::min<int64_t>(
          all, registersPerSM / std::max<int64_t>(block, resident) / 8 * 8);
    }
    // A vectorized re-reading row holds one loop trip's chunk: it keeps
    // rereadResidentThreads per SM (measured with the cap at 128, 85 and
    // 64; 85 spills nowhere).
    if (s.getReread() && vectorized)
      return std::min<int64_t>(
          all,
          registersPerSM / std::max<int64_t>(block, rereadResidentThreads));
    if (busyRow)
      // Whole 8-register steps, as ptxas allocates them.
      return std::min<int64_t>(
          all, registersPerSM / std::max<int64_t>(block, busyResidentThreads) /
                   8 * 8);
    int64_t heldElements = s.getChunks() * s.getVector() * heldLoadCount(k);
    // The threads of a launched block (rows that reduce over whole warps
    // take fewer rows a block than they may).
    int64_t launched = s.getThreadsPerRow() * (s.getLaunchRowsPerBlock()
                                                   ? s.getLaunchRowsPerBlock()
                                                   : s.getRowsPerBlock());
    if (vectorized && !held.empty() && !s.getLaunchThreads() &&
        launched >= wideBlock && s.getChunks() <= fewChunks) {
      // The row's words as loaded, and the rest of the kernel's registers.
      // With lateRowRegisters, rows loaded after the reductions count too
      // where sm_100's ptxas spilled without (rows chosen per group of rows,
      // and every row in a cluster); elsewhere that cost time
      // (bench/results/lowering-decisions.md).
      auto counts = [&](LoadOp l) {
        if (held.contains(l))
          return true;
        return lateRowRegisters && isa<RankedTensorType>(l.getResult().getType()) &&
               (s.getCluster() || l.getSource().getDefiningOp<GroupOp>());
      };
      int64_t elements = s.getChunks() * s.getVector(), heldBytes;
      int64_t words = 0;
      for (LoadOp l : k.getBody().getOps<LoadOp>())
        if (counts(l))
          words += loadedWords(l, elements);
      // Shared rows wider than the held ones count too (ptxas hoists their
      // loads), twice with lateRowRegisters: at once, sm_100's ptxas spilled
      // rmsnorm_f32w's exact-length variant of 16384 at 72 registers.
      SmallVector<LoadOp> wider = widerSharedLoads(k, heldBytes);
      for (LoadOp l : wider)
        if (!counts(l))
          words += loadedWords(l, elements) * (lateRowRegisters ? 2 : 1);
      // Part vectors (one load beside each held slice of a head) and
      // gathered rows count too, once: ptxas hoists their loads, and heads
      // of 8 slices (qk_norm_rope's partial forms) spilled without them.
      for (LoadOp l : k.getBody().getOps<LoadOp>())
        if ((readsPartVector(l) || l.getSource().getDefiningOp<GatherOp>()) &&
            !counts(l) && !llvm::is_contained(wider, l))
          words += loadedWords(l, elements);
      int64_t need = llvm::alignTo(words + registersBesideRow, 8);
      // As many whole blocks as wideBlockResidentThreads hold, in whole
      // 8-register steps (as ptxas allocates them).
      int64_t blocks =
          std::max<int64_t>(1, wideBlockResidentThreads / launched);
      int64_t fit = registersPerSM / (blocks * launched) / 8 * 8;
      return std::min<int64_t>(all, std::max(need, fit));
    }
    if (vectorized && s.getLaunchThreads() &&
        getVariantKind(k) == VariantKind::held && getVariant(k).getWide())
      return std::min<int64_t>(all, registersPerSM / (2 * widestHeldThreads) /
                                        8 * 8);
    // Held rows quantized per group, of at most group-row-chunks chunks
    // (longer rows and the warp variant spilled under that cap).
    int64_t grouped = std::min<int64_t>(
        all, registersPerSM / std::max<int64_t>(block, groupResidentThreads));
    if (vectorized && getVariantKind(k) == VariantKind::held &&
        s.getChunks() <= groupRowChunks && 2 * heldElements <= grouped &&
        !k.getBody().getOps<GroupReduceOp>().empty())
      return grouped;
    return vectorized && s.getChunks() <= 8 && 2 * heldElements <= shared
               ? shared
               : all;
  }
};

} // namespace
