//===- Registry.cpp - The bundled ops -------------------------------------===//
#include "ops/Registry.h"

namespace kgen::ops {

const std::vector<OpDef> &registry() {
  static const std::vector<OpDef> ops = {
      {"rmsnorm",
       "y = weight * (x * rsqrt(mean(x^2) + eps)).to(dtype), in f32 "
       "(Hugging Face LlamaRMSNorm)",
       "hidden",
       rmsnorm,
       {{"eps", 1e-6}}},
      {"gemma_rmsnorm",
       "y = (x * rsqrt(mean(x^2) + eps) * (1 + weight)).to(dtype), all in f32 "
       "(Hugging Face GemmaRMSNorm)",
       "hidden",
       gemmaRMSNorm,
       {{"eps", 1e-6}}},
      {"fused_add_rmsnorm",
       "in place: residual = x + residual; x = rmsnorm(residual) * weight "
       "(vLLM, FlashInfer)",
       "hidden",
       fusedAddRMSNorm,
       {{"eps", 1e-6}}},
      {"layernorm",
       "y = (x - mean) * rsqrt(var + eps) * weight + bias, in f32 "
       "(F.layer_norm)",
       "hidden",
       [](DType dt) { return layerNorm(dt, true); },
       {{"eps", 1e-5}}},
      {"layernorm_nobias",
       "layernorm without a bias",
       "hidden",
       [](DType dt) { return layerNorm(dt, false); },
       {{"eps", 1e-5}}},
      {"softmax",
       "y = exp(x - max(x)) / sum(exp(x - max(x))), in f32",
       "n",
       softmax,
       {}},
      {"rmsnorm_quant_static",
       "y = (rmsnorm(x) * weight / scale).to(f8e4m3), saturating (vLLM)",
       "hidden",
       [](DType dt) { return rmsnormQuant(dt, false); },
       {{"eps", 1e-6}, {"scale", 0.05}}},
      {"rmsnorm_quant_dynamic",
       "per-row scale = amax|rmsnorm(x) * weight| / 448; y = (.. / scale)"
       ".to(f8e4m3); outputs y and scale (vLLM)",
       "hidden",
       [](DType dt) { return rmsnormQuant(dt, true); },
       {{"eps", 1e-6}}},
      {"silu_and_mul",
       "SwiGLU: x is [T, 2d], y = silu(x[:, :d]) * x[:, d:]",
       "d",
       siluAndMul,
       {}},
      {"gelu_and_mul",
       "GEGLU with erf GELU: y = gelu(x[:, :d]) * x[:, d:]",
       "d",
       [](DType dt) { return geluAndMul(dt, false); },
       {}},
      {"gelu_tanh_and_mul",
       "GEGLU with tanh GELU: y = gelu_tanh(x[:, :d]) * x[:, d:]",
       "d",
       [](DType dt) { return geluAndMul(dt, true); },
       {}},
  };
  return ops;
}

const OpDef *findOp(const std::string &name) {
  for (const OpDef &op : registry())
    if (op.name == name)
      return &op;
  return nullptr;
}

} // namespace kgen::ops
