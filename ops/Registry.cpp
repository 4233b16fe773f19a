//===- Registry.cpp - The bundled ops -------------------------------------===//
#include "ops/Registry.h"

#include <algorithm>

namespace kgen::ops {

namespace {

/// An op that ignores the length (its kernels take it as a dim).
std::function<Kernel(DType, int64_t)> anyLength(Kernel (*f)(DType)) {
  return [f](DType dt, int64_t) { return f(dt); };
}

std::function<Kernel(DType, int64_t)> ropeOp(std::string name, RopeStyle style,
                                             int64_t rotaryDivisor,
                                             DType positions,
                                             std::optional<DType> cache) {
  return [=](DType dt, int64_t headDim) {
    RopeOptions o{name,      style, headDim, headDim / rotaryDivisor,
                  positions, cache};
    return rope(dt, o);
  };
}

} // namespace

bool OpDef::supportsLength(int64_t length) const {
  if (lengths.empty())
    return true;
  return std::find(lengths.begin(), lengths.end(), length) != lengths.end();
}

Kernel OpDef::instantiate(DType dt, int64_t length,
                          std::map<std::string, int64_t> &dims) const {
  Kernel k = build(dt, length);
  if (length &&
      std::find(k.dims.begin(), k.dims.end(), mainDim) != k.dims.end())
    dims[mainDim] = length;
  return k;
}

const std::vector<OpDef> &registry() {
  // Local, not a namespace-scope global: registry() may run during another
  // file's static initialization (the compile bench registers per op).
  const std::vector<int64_t> kHeadDims = {64, 128, 256};
  static const std::vector<OpDef> ops = {
      {"rmsnorm",
       "y = weight * (x * rsqrt(mean(x^2) + eps)).to(dtype), in f32 "
       "(Hugging Face LlamaRMSNorm)",
       "hidden",
       anyLength(rmsnorm),
       {{"eps", 1e-6}}},
      {"gemma_rmsnorm",
       "y = (x * rsqrt(mean(x^2) + eps) * (1 + weight)).to(dtype), all in f32 "
       "(Hugging Face GemmaRMSNorm)",
       "hidden",
       anyLength(gemmaRMSNorm),
       {{"eps", 1e-6}}},
      {"fused_add_rmsnorm",
       "in place: residual = x + residual; x = rmsnorm(residual) * weight "
       "(vLLM, FlashInfer)",
       "hidden",
       anyLength(fusedAddRMSNorm),
       {{"eps", 1e-6}}},
      {"layernorm",
       "y = (x - mean) * rsqrt(var + eps) * weight + bias, in f32 "
       "(F.layer_norm)",
       "hidden",
       [](DType dt, int64_t) { return layerNorm(dt, true); },
       {{"eps", 1e-5}}},
      {"layernorm_nobias",
       "layernorm without a bias",
       "hidden",
       [](DType dt, int64_t) { return layerNorm(dt, false); },
       {{"eps", 1e-5}}},
      {"softmax",
       "y = exp(x - max(x)) / sum(exp(x - max(x))), in f32",
       "n",
       anyLength(softmax),
       {}},
      {"rmsnorm_quant_static",
       "y = (rmsnorm(x) * weight / scale).to(f8e4m3), saturating (vLLM)",
       "hidden",
       [](DType dt, int64_t) { return rmsnormQuant(dt, false); },
       {{"eps", 1e-6}, {"scale", 0.05}}},
      {"rmsnorm_quant_dynamic",
       "per-row scale = amax|rmsnorm(x) * weight| / 448; y = (.. / scale)"
       ".to(f8e4m3); outputs y and scale (vLLM)",
       "hidden",
       [](DType dt, int64_t) { return rmsnormQuant(dt, true); },
       {{"eps", 1e-6}}},
      {"silu_and_mul",
       "SwiGLU: x is [T, 2d], y = silu(x[:, :d]) * x[:, d:]",
       "d",
       [](DType dt, int64_t) { return siluAndMul(dt, false); },
       {}},
      {"silu_and_mul_quant",
       "SwiGLU then static fp8: y = (silu_and_mul(x) / scale).to(f8e4m3), "
       "saturating (vLLM)",
       "d",
       [](DType dt, int64_t) { return siluAndMul(dt, true); },
       {{"scale", 0.05}}},
      {"gelu_and_mul",
       "GEGLU with erf GELU: y = gelu(x[:, :d]) * x[:, d:]",
       "d",
       [](DType dt, int64_t) { return geluAndMul(dt, false); },
       {}},
      {"gelu_tanh_and_mul",
       "GEGLU with tanh GELU: y = gelu_tanh(x[:, :d]) * x[:, d:]",
       "d",
       [](DType dt, int64_t) { return geluAndMul(dt, true); },
       {}},
      {"silu",
       "y = F.silu(x), in f32",
       "d",
       [](DType dt, int64_t) { return activation(dt, Activation::Silu); },
       {}},
      {"gelu",
       "y = F.gelu(x) (erf), in f32",
       "d",
       [](DType dt, int64_t) { return activation(dt, Activation::Gelu); },
       {}},
      {"gelu_tanh",
       "y = F.gelu(x, approximate='tanh'), in f32",
       "d",
       [](DType dt, int64_t) { return activation(dt, Activation::GeluTanh); },
       {}},
      {"adaln",
       "DiT: y = layer_norm(x) * (1 + scale[row / N]) + shift[row / N]",
       "hidden",
       [](DType dt, int64_t) { return adaLN(dt, false); },
       {{"eps", 1e-6}}},
      {"adaln_rmsnorm",
       "y = rmsnorm(x) * (1 + scale[row / N]) + shift[row / N]",
       "hidden",
       [](DType dt, int64_t) { return adaLN(dt, true); },
       {{"eps", 1e-6}}},
      {"rope_neox",
       "in place on q and k heads: NeoX rotate-half by cos_sin_cache"
       "[positions] (f32 cache, i64 positions); --hidden is head_dim",
       "head_dim",
       ropeOp("rope_neox", RopeStyle::NeoX, 1, DType::I64, DType::F32),
       {},
       {DType::F32, DType::F16, DType::BF16},
       kHeadDims},
      {"rope_gptj",
       "rope_neox with GPT-J's interleaved pairs",
       "head_dim",
       ropeOp("rope_gptj", RopeStyle::GPTJ, 1, DType::I64, DType::F32),
       {},
       {DType::F32, DType::F16, DType::BF16},
       kHeadDims},
      {"rope_neox_partial",
       "rope_neox rotating the first head_dim / 2 elements of each head, "
       "i32 positions, cache in q's dtype",
       "head_dim",
       ropeOp("rope_neox_partial", RopeStyle::NeoX, 2, DType::I32,
              std::nullopt),
       {},
       {DType::F32, DType::F16, DType::BF16},
       kHeadDims},
      {"rope_gptj_partial",
       "rope_gptj rotating the first head_dim / 2 elements of each head, "
       "i32 positions, cache in q's dtype",
       "head_dim",
       ropeOp("rope_gptj_partial", RopeStyle::GPTJ, 2, DType::I32,
              std::nullopt),
       {},
       {DType::F32, DType::F16, DType::BF16},
       kHeadDims},
      {"rope_hf",
       "Hugging Face apply_rotary_pos_emb out of place: q_out, k_out = "
       "x * cos + rotate_half(x) * sin, cos and sin [T, head_dim]",
       "head_dim",
       [](DType dt, int64_t headDim) { return ropeHF(dt, headDim); },
       {},
       {DType::F32, DType::F16, DType::BF16},
       kHeadDims},
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
