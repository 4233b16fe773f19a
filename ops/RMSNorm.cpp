//===- RMSNorm.cpp - Hugging Face LlamaRMSNorm ----------------------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// As LlamaRMSNorm.forward: normalize in f32, round to the input dtype, then
// multiply by the weight in that dtype.
static Kernel rmsnorm(DType dt) {
  Builder b("rmsnorm");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  b.output("y", w * (xf * rsqrt(mean(xf * xf) + eps)).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(rmsnorm)
    .summary("y = weight * (x * rsqrt(mean(x^2) + eps)).to(dtype), in f32 "
             "(Hugging Face LlamaRMSNorm)")
    .scalar("eps", 1e-6)
    .kernel(rmsnorm);

} // namespace kgen::ops
