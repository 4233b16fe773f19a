//===- Registry.cpp - The bundled ops -------------------------------------===//
#include "ops/Registry.h"

namespace kgen::ops {

const std::vector<OpDef> &registry() {
  static const std::vector<OpDef> ops = {
      {"rmsnorm",
       "y = weight * (x * rsqrt(mean(x^2) + eps)).to(dtype), in f32 "
       "(Hugging Face LlamaRMSNorm)",
       "hidden", rmsnorm, {{"eps", 1e-6}}},
      {"silu_and_mul", "SwiGLU: x is [T, 2d], y = silu(x[:, :d]) * x[:, d:]",
       "d", siluAndMul, {}},
      {"gelu_and_mul",
       "GEGLU with erf GELU: y = gelu(x[:, :d]) * x[:, d:]", "d",
       [](DType dt) { return geluAndMul(dt, false); }, {}},
      {"gelu_tanh_and_mul",
       "GEGLU with tanh GELU: y = gelu_tanh(x[:, :d]) * x[:, d:]", "d",
       [](DType dt) { return geluAndMul(dt, true); }, {}},
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
