//===- OnePassVariance.cpp - Variance without a nested reduction ----------===//
//
// layernorm's variance, sum((x - mean(x))^2), reads the mean: a second
// reduction level, so a second barrier. `reduce sqdev x` gives the same sum
// in one level: each thread combines its elements' count, sum and squared
// deviations from their own mean, and threads merge those by Chan et al.'s
// pairwise update (PyTorch's layer_norm kernels use Welford's, the same
// idea), which stays accurate when the mean is large against the spread,
// unlike sum(x^2) - sum(x)^2 / n.
//
// Only the variants for few rows (`_vec_cluster`, the cluster kind) take it:
// there the row's latency is the cost, and a second cluster barrier lost
// (the reason MakeVariants gives nested kernels no such variant, counting
// this variance as one level). On many rows another block hides the
// barrier, and the merges' arithmetic cost more than it saved
// (bench/results/variant-thresholds.md).
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENONEPASSVARIANCE
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

/// `v` as the kernel's row length converted to f32 (what `mean` divides by).
bool isRowLength(Value v, Value length) {
  auto toFloat = v.getDefiningOp<arith::UIToFPOp>();
  if (!toFloat)
    return false;
  auto cast = toFloat.getIn().getDefiningOp<arith::IndexCastUIOp>();
  return cast && cast.getIn() == length;
}

/// The x of `reduce sum x` when `m` is that sum over the row length.
Value meanOf(Value m, Value length) {
  auto div = m.getDefiningOp<arith::DivFOp>();
  if (!div || !isRowLength(div.getRhs(), length))
    return {};
  auto sum = div.getLhs().getDefiningOp<ReduceOp>();
  if (!sum || sum.getKind() != ReduceKind::sum)
    return {};
  return sum.getInput();
}

} // namespace

/// The x of `reduce sum ((x - m) * (x - m))` with m the mean of x.
Value mlir::kgen::varianceInput(ReduceOp r) {
  auto kernel = r->getParentOfType<KernelOp>();
  if (!kernel)
    return {};
  Value length = kernel.getDomainOp().getLength();
  if (r.getKind() != ReduceKind::sum)
    return {};
  auto square = r.getInput().getDefiningOp<arith::MulFOp>();
  if (!square || square.getLhs() != square.getRhs())
    return {};
  auto centered = square.getLhs().getDefiningOp<arith::SubFOp>();
  if (!centered)
    return {};
  auto mean = centered.getRhs().getDefiningOp<BroadcastOp>();
  if (!mean || meanOf(mean.getInput(), length) != centered.getLhs())
    return {};
  return centered.getLhs();
}

namespace {

struct OnePassVariance
    : ::mlir::kgen::impl::KgenOnePassVarianceBase<OnePassVariance> {
  void runOnOperation() override {
    getOperation().walk([](KernelOp k) {
      if (getVariantKind(k) != VariantKind::cluster)
        return;
      for (ReduceOp r : k.getBody().getOps<ReduceOp>()) {
        Value x = varianceInput(r);
        if (!x)
          continue;
        Operation *square = r.getInput().getDefiningOp();
        r.setKind(ReduceKind::sqdev);
        r.getInputMutable().assign(x);
        if (square->use_empty())
          square->erase();
      }
    });
  }
};

} // namespace
