//===- GemmaRMSNorm.cpp - Hugging Face GemmaRMSNorm -----------------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// As GemmaRMSNorm.forward: everything in f32, the weight as (1 + w), one
// rounding to the input dtype at the very end. The weight may be f32.
static Kernel gemmaRMSNorm(const char *name, DType dt, DType wdt) {
  Builder b(name);
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", wdt, hidden);
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
    .kernel([](DType dt) { return gemmaRMSNorm("gemma_rmsnorm", dt, dt); });

KGEN_REGISTER_OP(gemma_rmsnorm_f32w)
    .summary("gemma_rmsnorm with an f32 weight")
    .scalar("eps", 1e-6)
    .dtypes({DType::F16, DType::BF16})
    .kernel([](DType dt) {
      return gemmaRMSNorm("gemma_rmsnorm_f32w", dt, DType::F32);
    });

} // namespace kgen::ops
