//===- Divisibility.cpp - Powers of two known to divide index values ------===//
//
// The integer half of the alignment analysis, shared by the vectorizer (an
// access's width), the variants and the lowering (whether a row length is a
// whole number of chunks). Facts come from constants and the variant's
// `kgen.divisibility` assumptions on dims.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kgen;

int64_t mlir::kgen::knownDivisor(Value v, KernelOp k) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c == 0 ? kUnboundedDivisor
                   : int64_t(1) << llvm::countr_zero(uint64_t(*c));
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto d = k.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                 kDivisibilityAttr))
      if (d.getInt() > 0) // only its power-of-two part survives sums
        return int64_t(1) << llvm::countr_zero(uint64_t(d.getInt()));
    return 1;
  }
  Operation *op = v.getDefiningOp();
  if (auto add = dyn_cast<arith::AddIOp>(op))
    return std::min(knownDivisor(add.getLhs(), k),
                    knownDivisor(add.getRhs(), k));
  if (auto mul = dyn_cast<arith::MulIOp>(op))
    return std::min(kUnboundedDivisor, knownDivisor(mul.getLhs(), k) *
                                           knownDivisor(mul.getRhs(), k));
  return 1;
}
