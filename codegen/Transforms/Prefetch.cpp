//===- Prefetch.cpp - Which held rows are prefetched to L2, and how -------===//
//
// A kernel that waits on the grids ahead (griddepcontrol, sm_90) may fetch
// its row into L2 first, and a busy one may fetch a later block's row.
// Whether, in which grids and blocks, and by lines or chunks is decided here
// and recorded in the schedule, so that `--emit=kgen` shows it; the lowering
// emits what the schedule says.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENPREFETCH
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

// The options (Passes.td) and their reasons:
// - prefetch-chunks: past it a thread's chunks are prefetched as the row's
//   lines split over its threads; at 8 a prefetch per chunk spilled.
// - prefetch-blocks: the blocks placed while the grid ahead drains.
// The measurements behind these and the rules below are in
// bench/results/lowering-decisions.md ("kgen-prefetch").

struct Prefetch : ::mlir::kgen::impl::KgenPrefetchBase<Prefetch> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    auto ok = [&](const auto &option, int64_t least) {
      return succeeded(checkOption(ctx, *this, option, least));
    };
    return success(ok(prefetchChunks, 0) && ok(prefetchBlocks, 1));
  }

  void runOnOperation() override {
    getOperation().walk([&](KernelOp k) {
      ScheduleAttr s = requireSchedule(k);
      if (!s)
        return signalPassFailure();
      if (s.getReread())
        return; // only held rows are prefetched
      bool lines = s.getChunks() > prefetchChunks;
      int64_t blocks = prefetch && prefetches(k, s, lines) ? prefetchBlocks
                                                           : int64_t(0);
      k.setScheduleAttr(s.withPrefetch(blocks, blocks && firstBlocks(k, lines),
                                       blocks && lines, ahead(k, s)));
    });
  }

  /// Whether the held row is prefetched before the wait: not in a variant
  /// launched only on grids past prefetch-blocks (its minRows: `_vec_rows`),
  /// where only its first blocks would, nor two rows split by lines
  /// (fused_add_rmsnorm's x and residual): neither gained.
  bool prefetches(KernelOp k, ScheduleAttr s, bool lines) {
    VariantAttr variant = getVariant(k);
    int64_t minRows = variant ? variant.getMinRows() : 0;
    if (minRows &&
        int64_t(llvm::divideCeil(minRows, s.getRowsPerBlock())) *
                std::max<int64_t>(s.getTiles(), 1) >
            prefetchBlocks)
      return false;
    SmallVector<LoadOp> perRow, shared;
    prefetchedLoads(k, perRow, shared);
    return !(lines && perRow.size() > 1);
  }

  /// Whether the first prefetch-blocks blocks of any grid prefetch (else
  /// only grids of at most that many): not in a kernel that writes a row it
  /// loads (slower), nor one that reads rows chosen by another index, nor
  /// where the row's lines are split over its threads (those spilled).
  static bool firstBlocks(KernelOp k, bool lines) {
    return !lines && !readsMappedRows(k) && !loadsAStoredRow(k);
  }

  /// Whether a block prefetches a later block's row once its loads are
  /// issued (prefetch-ahead): not in a cluster's few rows, only where the
  /// row reduces (element-wise kernels reach memcpy's rate without it), not
  /// where a stored row is narrower than the loaded one (fp8 outputs).
  bool ahead(KernelOp k, ScheduleAttr s) {
    if (!prefetchAhead || s.getCluster() ||
        k.getBody().getOps<ReduceOp>().empty() || storesNarrowerRow(k))
      return false;
    return llvm::any_of(rowLoadsHeld(k), [](LoadOp l) {
      auto a = dyn_cast<BlockArgument>(l.getSource());
      return a && isa<RowsType>(a.getType());
    });
  }
};

} // namespace
