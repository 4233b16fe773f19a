//===- Divisibility.cpp - What is known of index values -------------------===//
//
// The integer half of the alignment analysis, shared by the vectorizer (an
// access's width), the variants and the lowering (whether a row length is a
// whole number of chunks). Facts come from constants and the variant's
// `kgen.divisibility` assumptions on dims; upper bounds from the dims'
// `kgen.max` (a run-time row length that never exceeds a head).
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

std::optional<int64_t> mlir::kgen::knownUpperBound(Value v, KernelOp k) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto m = k.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kMaxAttr))
      return m.getInt();
    return std::nullopt;
  }
  // Sums and products of non-negative bounds (lengths are >= 1).
  Operation *op = v.getDefiningOp();
  auto both = [&](Value a, Value b, auto combine) -> std::optional<int64_t> {
    std::optional<int64_t> x = knownUpperBound(a, k), y = knownUpperBound(b, k);
    int64_t r;
    if (!x || !y || *x < 0 || *y < 0 || combine(*x, *y, &r))
      return std::nullopt;
    return r;
  };
  if (auto add = dyn_cast_or_null<arith::AddIOp>(op))
    return both(add.getLhs(), add.getRhs(),
                [](int64_t a, int64_t b, int64_t *r) {
                  return __builtin_add_overflow(a, b, r);
                });
  if (auto mul = dyn_cast_or_null<arith::MulIOp>(op))
    return both(mul.getLhs(), mul.getRhs(),
                [](int64_t a, int64_t b, int64_t *r) {
                  return __builtin_mul_overflow(a, b, r);
                });
  return std::nullopt;
}
