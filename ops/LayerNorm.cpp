//===- LayerNorm.cpp - torch.nn.functional.layer_norm over the row --------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// F.layer_norm as PyTorch's CUDA kernel computes it: mean and biased
// variance in f32, (x - mean) * rstd * weight (+ bias) in f32, one rounding.
// Weight and bias may be f32 with a narrower x (torch's mixed-dtype form).
static Kernel layerNorm(const char *name, DType dt, bool withBias, DType wdt) {
  Builder b(name);
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", wdt, hidden);
  Tensor bias;
  if (withBias)
    bias = b.vector("bias", wdt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  Expr centered = xf - mean(xf);
  Expr y = centered * rsqrt(mean(centered * centered) + eps) * w.to(DType::F32);
  if (withBias)
    y = y + bias.to(DType::F32);
  b.output("y", y.to(dt));
  return b.build();
}

KGEN_REGISTER_OP(layernorm)
    .summary("y = (x - mean) * rsqrt(var + eps) * weight + bias, in f32 "
             "(F.layer_norm)")
    .scalar("eps", 1e-5)
    .kernel([](DType dt) { return layerNorm("layernorm", dt, true, dt); });

KGEN_REGISTER_OP(layernorm_nobias)
    .summary("layernorm without a bias")
    .scalar("eps", 1e-5)
    .kernel([](DType dt) {
      return layerNorm("layernorm_nobias", dt, false, dt);
    });

KGEN_REGISTER_OP(layernorm_f32w)
    .summary("layernorm with f32 weight and bias")
    .scalar("eps", 1e-5)
    .dtypes({DType::F16, DType::BF16})
    .kernel([](DType dt) {
      return layerNorm("layernorm_f32w", dt, true, DType::F32);
    });

KGEN_REGISTER_OP(layernorm_nobias_f32w)
    .summary("layernorm_nobias with an f32 weight")
    .scalar("eps", 1e-5)
    .dtypes({DType::F16, DType::BF16})
    .kernel([](DType dt) {
      return layerNorm("layernorm_nobias_f32w", dt, false, DType::F32);
    });

} // namespace kgen::ops
