//===- RMSNormNoWeight.cpp - RMSNorm without an elementwise weight --------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// vLLM's RMSNorm(has_weight=False) (and torch's F.rms_norm without a weight):
// x * rsqrt(mean(x^2) + eps) in f32, rounded once.
static Kernel rmsnormNoWeight(DType dt) {
  Builder b("rmsnorm_noweight");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  b.output("y", (xf * rsqrt(mean(xf * xf) + eps)).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(rmsnorm_noweight)
    .summary("y = (x * rsqrt(mean(x^2) + eps)).to(dtype), in f32, no weight")
    .scalar("eps", 1e-6)
    .kernel(rmsnormNoWeight);

} // namespace kgen::ops
