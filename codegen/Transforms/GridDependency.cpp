//===- GridDependency.cpp - Programmatic dependent launch (sm_90+) --------===//
//
// Back-to-back kernels on one stream each pay a launch and a ramp-up before
// their first load. With programmatic dependent launch (sm_90+) the next
// kernel's blocks may be placed while this one finishes, and wait there:
// every kernel starts with `griddepcontrol.wait` (until the kernels before
// it have completed and their writes are visible; a no-op when launched
// without the attribute), before any memory access, then lets its own
// dependents launch. The runtime launches kernels whose spec says
// "grid_dependency" with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENGRIDDEPENDENCY
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;

namespace {

struct GridDependency
    : ::mlir::kgen::impl::KgenGridDependencyBase<GridDependency> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp f) {
      if (f.isExternal() ||
          !f->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return;
      OpBuilder b = OpBuilder::atBlockBegin(&f.getBody().front());
      NVVM::GriddepcontrolOp::create(b, f.getLoc(),
                                     NVVM::GridDepActionKind::wait);
      NVVM::GriddepcontrolOp::create(
          b, f.getLoc(), NVVM::GridDepActionKind::launch_dependents);
    });
  }
};

} // namespace
