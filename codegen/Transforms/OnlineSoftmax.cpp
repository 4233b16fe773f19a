//===- OnlineSoftmax.cpp - softmax's sum without a nested reduction -------===//
//
// softmax's denominator, sum(exp(x - max(x))), reads the max: a second
// reduction level, so a second barrier. `reduce expsum x` gives the same sum
// in one level: each thread keeps the max of its elements and the sum of
// their exponentials less it, and threads merge pairs by rescaling the sum
// of the smaller max (the online softmax of Milakov and Gimelshein, as
// FlashAttention's). The max reduction then takes the expsum's max.
//
// As for kgen-one-pass-variance, only the variants for few rows
// (`_vec_cluster`, the cluster kind) take it: a second cluster barrier lost
// there, while on many rows another block hides the barrier and the
// rescaling's exponentials would cost arithmetic.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENONLINESOFTMAX
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

/// The math.exp of `reduce sum (exp(x - max(x)))`, or null.
static math::ExpOp expOfMaxShift(ReduceOp r) {
  if (r.getKind() != ReduceKind::sum)
    return {};
  auto exp = r.getInput().getDefiningOp<math::ExpOp>();
  if (!exp)
    return {};
  auto shifted = exp.getOperand().getDefiningOp<arith::SubFOp>();
  if (!shifted)
    return {};
  auto top = shifted.getRhs().getDefiningOp<BroadcastOp>();
  auto max = top ? top.getInput().getDefiningOp<ReduceOp>() : ReduceOp();
  if (!max || max.getKind() != ReduceKind::max ||
      max.getInput() != shifted.getLhs())
    return {};
  return exp;
}

Value mlir::kgen::expSumInput(ReduceOp r) {
  math::ExpOp exp = expOfMaxShift(r);
  return exp ? exp.getOperand().getDefiningOp<arith::SubFOp>().getLhs()
             : Value();
}

namespace {

struct OnlineSoftmax
    : ::mlir::kgen::impl::KgenOnlineSoftmaxBase<OnlineSoftmax> {
  void runOnOperation() override {
    getOperation().walk([](KernelOp k) {
      if (getVariantKind(k) != VariantKind::cluster)
        return;
      for (ReduceOp r : k.getBody().getOps<ReduceOp>()) {
        Value x = expSumInput(r);
        if (!x)
          continue;
        auto exp = r.getInput().getDefiningOp<math::ExpOp>();
        r->setAttr(kExpFastMathAttr, exp.getFastmathAttr());
        r.setKind(ReduceKind::expsum);
        r.getInputMutable().assign(x);
      }
    });
  }
};

} // namespace
