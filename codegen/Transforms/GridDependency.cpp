//===- GridDependency.cpp - Programmatic dependent launch (sm_90+) --------===//
//
// Back-to-back kernels on one stream each pay a launch and a ramp-up before
// their first load. With programmatic dependent launch (sm_90+) the next
// kernel's blocks may be placed while this one finishes, and wait there:
// every kernel waits with `griddepcontrol.wait` (until the kernels before
// it have completed and their writes are visible; a no-op when launched
// without the attribute) before any memory access, then lets its own
// dependents launch. L2 prefetches (kgen-prefetch's `prefetch`) may go
// before the wait: a prefetch is a hint that changes no value, so it may run
// while the grids ahead still write, and the loads after the wait find their
// lines in L2. The runtime launches kernels whose spec says
// "grid_dependency" with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENGRIDDEPENDENCY
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;

namespace {

/// libdevice's functions are math on their arguments; before it is linked
/// their declarations say nothing about memory.
bool isLibdeviceCall(Operation &op) {
  auto call = dyn_cast<LLVM::CallOp>(op);
  std::optional<StringRef> callee = call ? call.getCallee() : std::nullopt;
  return callee && callee->starts_with("__nv_");
}

/// Whether the op may touch memory or synchronize (barriers, clusters):
/// everything but prefetches, pure ops, libdevice calls and branches.
bool mustWait(Operation &op) {
  return !isa<NVVM::PrefetchOp>(op) && !isMemoryEffectFree(&op) &&
         !isLibdeviceCall(op) && !op.hasTrait<OpTrait::IsTerminator>();
}

/// Whether the block can reach itself (the entry block cannot: it has no
/// predecessors).
bool inCycle(Block *block) {
  SmallVector<Block *> work(block->getSuccessors());
  DenseSet<Block *> seen;
  while (!work.empty()) {
    Block *b = work.pop_back_val();
    if (b == block)
      return true;
    if (seen.insert(b).second)
      llvm::append_range(work, b->getSuccessors());
  }
  return false;
}

struct GridDependency
    : ::mlir::kgen::impl::KgenGridDependencyBase<GridDependency> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp f) {
      if (f.isExternal() ||
          !f->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return;
      // The block that dominates every op that must wait (every return when
      // none does), out of loops (a re-reading row's first loads are in
      // one), and the first such op in it: the wait goes there.
      DominanceInfo dom(f);
      Block *at = &f.getBody().front();
      bool found = false;
      for (Block &block : f.getBody())
        if (llvm::any_of(block, [](Operation &op) {
              return mustWait(op) || isa<LLVM::ReturnOp>(op);
            })) {
          at = found ? dom.findNearestCommonDominator(at, &block) : &block;
          found = true;
        }
      while (inCycle(at))
        at = dom.getNode(at)->getIDom()->getBlock();
      Operation *before = &at->back();
      for (Operation &op : *at)
        if (mustWait(op)) {
          before = &op;
          break;
        }
      OpBuilder b(before);
      NVVM::GriddepcontrolOp::create(b, f.getLoc(),
                                     NVVM::GridDepActionKind::wait);
      NVVM::GriddepcontrolOp::create(
          b, f.getLoc(), NVVM::GridDepActionKind::launch_dependents);
    });
  }
};

} // namespace
