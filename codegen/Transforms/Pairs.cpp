//===- Pairs.cpp - Even/odd views that together cover a contiguous span ---===//
//
// GPT-J style code reads x[b::2] and x[b+1::2] of one row (and writes both
// back). Each view alone has stride 2, which no vector access can move; the
// two together cover [b + 2*e0, b + 2*(e0 + n)) exactly, so a chunk can load
// that span with full-width accesses and split it with shuffles (stores:
// interleave, then one span store). Shared by the alignment analysis (which
// sizes the span accesses) and the lowering (which emits them).
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::kgen;

/// The constant difference b - a of two index values, when both are the
/// same value plus constants (or constants).
static std::optional<int64_t> constantDifference(Value a, Value b) {
  auto split = [](Value v) -> std::pair<Value, int64_t> {
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return {Value(), *c};
    if (auto add = v.getDefiningOp<arith::AddIOp>()) {
      if (std::optional<int64_t> c = getConstantIntValue(add.getRhs()))
        return {add.getLhs(), *c};
      if (std::optional<int64_t> c = getConstantIntValue(add.getLhs()))
        return {add.getRhs(), *c};
    }
    return {v, 0};
  };
  auto [va, ca] = split(a);
  auto [vb, cb] = split(b);
  if (va != vb)
    return std::nullopt;
  return cb - ca;
}

template <typename Op>
static void pairUp(KernelOp kernel, SmallVector<std::pair<Op, Op>> &out,
                   function_ref<Value(Op)> tensorOf) {
  SmallVector<Op> strided;
  kernel.walk([&](Op op) {
    if (op.getStride() == 2 && op.getStart())
      strided.push_back(op);
  });
  DenseSet<Operation *> used;
  for (Op even : strided) {
    if (used.contains(even))
      continue;
    for (Op odd : strided) {
      if (odd == even || used.contains(odd) || tensorOf(odd) != tensorOf(even))
        continue;
      if (constantDifference(even.getStart(), odd.getStart()) != 1)
        continue;
      out.push_back({even, odd});
      used.insert(even);
      used.insert(odd);
      break;
    }
  }
}

StridePairs mlir::kgen::findStridePairs(KernelOp kernel) {
  StridePairs p;
  pairUp<LoadOp>(kernel, p.loads, [](LoadOp l) { return l.getSource(); });
  pairUp<StoreOp>(kernel, p.stores, [](StoreOp s) { return s.getDest(); });
  return p;
}
