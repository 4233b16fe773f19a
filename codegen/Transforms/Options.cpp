//===- Options.cpp - Range checks of the passes' tuning options -----------===//
#include "codegen/Transforms/Passes.h"

using namespace mlir;

static InFlightDiagnostic optionError(MLIRContext *ctx, const Pass &pass,
                                      StringRef option) {
  return emitError(UnknownLoc::get(ctx))
         << pass.getArgument() << ": option '" << option << "' ";
}

LogicalResult mlir::kgen::checkOption(MLIRContext *ctx, const Pass &pass,
                                      const Pass::Option<int64_t> &option,
                                      int64_t least, int64_t most) {
  int64_t value = option;
  if (value >= least && value <= most)
    return success();
  return optionError(ctx, pass, option.ArgStr)
         << "must lie in [" << least << ", " << most << "], not " << value;
}

LogicalResult mlir::kgen::checkOption(MLIRContext *ctx, const Pass &pass,
                                      const Pass::ListOption<int64_t> &option,
                                      int64_t least, int64_t most) {
  SmallVector<int64_t> values(option.begin(), option.end());
  for (auto [i, v] : llvm::enumerate(values)) {
    if (v < least || v > most)
      return optionError(ctx, pass, option.ArgStr)
             << "must list values in [" << least << ", " << most << "], not "
             << v;
    if (i > 0 && v <= values[i - 1])
      return optionError(ctx, pass, option.ArgStr)
             << "must list its values in strictly ascending order";
  }
  return success();
}
