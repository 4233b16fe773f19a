//===- Schedule.cpp - Map rows onto threads -------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENSCHEDULE
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

// Elements of the row one thread may hold in registers per input before the
// row is re-read instead (keeps every bundled kernel free of spills).
constexpr int64_t kMaxRegisterElements = 64;
// Chunks each thread aims to hold: enough independent 16-byte loads in
// flight to cover memory latency without starving occupancy. Kernels
// without reductions need not hold a row, so they take fewer (and more
// threads), which also keeps transcendental-heavy bodies free of spills.
constexpr int64_t kTargetChunks = 4;
constexpr int64_t kTargetChunksElementwise = 2;
// Threads per block the row groups are packed into.
constexpr int64_t kTargetBlock = 256;
// Threads per row for dynamic rows, whose length is unknown.
constexpr int64_t kDynamicThreads = 256;

int64_t elementBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

struct Schedule : ::mlir::kgen::impl::KgenScheduleBase<Schedule> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](KernelOp k) {
      if (failed(schedule(k)))
        signalPassFailure();
    });
  }

  LogicalResult schedule(KernelOp k) {
    // A chunk is 16 bytes of the widest dtype a row access moves.
    int64_t widest = 1;
    k.walk([&](Operation *op) {
      Value v;
      if (auto l = dyn_cast<LoadOp>(op))
        v = l.getResult();
      else if (auto s = dyn_cast<StoreOp>(op))
        v = s.getValue();
      if (auto tt = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr)
        widest = std::max(widest, elementBytes(tt.getElementType()));
    });
    int64_t vector = 16 / widest;
    std::optional<int64_t> length =
        getConstantIntValue(k.getDomainOp().getLength());

    int64_t tpr, chunks = 0;
    bool reread = false;
    if (!length) {
      // Rows up to kTargetChunks chunks per thread stay in registers; longer
      // ones are re-read (decided in the kernel from the length).
      tpr = kDynamicThreads;
      chunks = kTargetChunks;
      reread = true;
    } else {
      int64_t nvec = llvm::divideCeil(*length, vector);
      bool reduces = !k.getBody().getOps<ReduceOp>().empty();
      int64_t target = reduces ? kTargetChunks : kTargetChunksElementwise;
      if (nvec <= 32)
        tpr = llvm::PowerOf2Ceil(nvec);
      else
        tpr = std::clamp<int64_t>(
            llvm::PowerOf2Ceil(llvm::divideCeil(nvec, target)), 32, 1024);
      if (threadsPerRow)
        tpr = threadsPerRow;
      chunks = llvm::divideCeil(nvec, tpr);
      reread = chunks * vector > kMaxRegisterElements;
    }
    if (threadsPerRow)
      tpr = threadsPerRow;
    int64_t rpb = rowsPerBlock ? rowsPerBlock : std::max<int64_t>(1, kTargetBlock / tpr);
    auto attr = ScheduleAttr::getChecked(
        [&] { return k.emitOpError("invalid schedule: "); }, k.getContext(),
        vector, tpr, rpb, chunks, reread);
    if (!attr)
      return failure();
    k.setScheduleAttr(attr);
    return success();
  }
};

} // namespace
