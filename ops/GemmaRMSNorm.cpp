//===- GemmaRMSNorm.cpp - Hugging Face GemmaRMSNorm -----------------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// As GemmaRMSNorm.forward: everything in f32, the weight as (1 + w), one
// rounding to the input dtype at the very end.
static Kernel gemmaRMSNorm(DType dt) {
  Builder b("gemma_rmsnorm");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  Expr normed = xf * rsqrt(mean(xf * xf) + eps);
  b.output("y", (normed * (1.0 + w.to(DType::F32))).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(gemma_rmsnorm)
    .summary("y = (x * rsqrt(mean(x^2) + eps) * (1 + weight)).to(dtype), all "
             "in f32 (Hugging Face GemmaRMSNorm)")
    .scalar("eps", 1e-6)
    .kernel(gemmaRMSNorm);

} // namespace kgen::ops
