//===- RMSNorm.cpp - Hugging Face LlamaRMSNorm ----------------------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// As LlamaRMSNorm.forward: normalize in f32, round to the input dtype, then
// multiply by the weight. A weight in f32 (kept so by some checkpoints) makes
// that product f32, which is rounded to the input dtype once more.
static Kernel rmsnorm(const char *name, DType dt, DType wdt) {
  Builder b(name);
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", wdt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  Expr y = w * (xf * rsqrt(mean(xf * xf) + eps)).to(dt);
  b.output("y", wdt == dt ? y : y.to(dt));
  return b.build();
}

KGEN_REGISTER_OP(rmsnorm)
    .summary("y = weight * (x * rsqrt(mean(x^2) + eps)).to(dtype), in f32 "
             "(Hugging Face LlamaRMSNorm, vLLM)")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return rmsnorm("rmsnorm", dt, dt); });

// As FlashInfer's RMSNorm: the weight multiplies in f32 and the product is
// rounded once (docs/rounding.md).
static Kernel rmsnormFlashInfer(DType dt) {
  Builder b("rmsnorm_flashinfer");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  Expr normed = xf * rsqrt(mean(xf * xf) + eps);
  b.output("y", (normed * w.to(DType::F32)).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(rmsnorm_flashinfer)
    .summary("rmsnorm as FlashInfer rounds: y = (x * rsqrt(mean(x^2) + eps) "
             "* weight).to(dtype), all in f32")
    .scalar("eps", 1e-6)
    .kernel(rmsnormFlashInfer);

KGEN_REGISTER_OP(rmsnorm_f32w)
    .summary("rmsnorm with an f32 weight: y = (weight * "
             "norm(x).to(dtype)).to(dtype)")
    .scalar("eps", 1e-6)
    .dtypes({DType::F16, DType::BF16})
    .kernel([](DType dt) { return rmsnorm("rmsnorm_f32w", dt, DType::F32); });

} // namespace kgen::ops
