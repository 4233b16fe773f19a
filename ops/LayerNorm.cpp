//===- LayerNorm.cpp - torch.nn.functional.layer_norm over the row --------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// F.layer_norm as PyTorch's CUDA kernel computes it: mean and biased
// variance in f32, (x - mean) * rstd * weight (+ bias) in f32, one rounding.
static Kernel layerNorm(DType dt, bool withBias) {
  Builder b(withBias ? "layernorm" : "layernorm_nobias");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Tensor bias;
  if (withBias)
    bias = b.vector("bias", dt, hidden);
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
    .kernel([](DType dt) { return layerNorm(dt, true); });

KGEN_REGISTER_OP(layernorm_nobias)
    .summary("layernorm without a bias")
    .scalar("eps", 1e-5)
    .kernel([](DType dt) { return layerNorm(dt, false); });

} // namespace kgen::ops
