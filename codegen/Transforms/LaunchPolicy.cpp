//===- LaunchPolicy.cpp - The launch policy as a module attribute ---------===//
//
// The rows a block takes and the thresholds between variants are shared by
// codegen (which compiles them in) and the runtime (which shapes the launches
// it chooses): one LaunchPolicy, set here from options a profile may change,
// read by the passes from the module, and recorded in the spec.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENLAUNCHPOLICY
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

struct LaunchPolicyPass
    : ::mlir::kgen::impl::KgenLaunchPolicyBase<LaunchPolicyPass> {
  using Base::Base;

  ::kgen::launch::LaunchPolicy policy() const {
    ::kgen::launch::LaunchPolicy p;
    p.rowsBlock = rowsBlock;
    p.minBlockThreads = minBlockThreads;
    p.minBlockChunks = minBlockChunks;
    p.maxOneChunkThreads = maxOneChunkThreads;
    p.warpRowChunks = warpRowChunks;
    p.manyRows = manyRows;
    p.manyRowsThreads = manyRowsThreads;
    p.maxThreadsPerRow = maxThreadsPerRow;
    p.rereadChunks = rereadChunks;
    return p;
  }

  LogicalResult initialize(MLIRContext *ctx) override {
    if (const char *bad = policy().invalidField()) {
      std::string option(bad);
      std::replace(option.begin(), option.end(), '_', '-');
      return emitError(UnknownLoc::get(ctx))
             << getArgument() << ": option '" << option
             << "' is out of range (thread counts: powers of two up to 1024; "
                "others positive)";
    }
    return success();
  }

  void runOnOperation() override {
    getOperation()->setAttr(kLaunchPolicyAttr,
                            LaunchPolicyAttr::get(&getContext(), policy()));
  }
};

} // namespace
