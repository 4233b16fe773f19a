//===- SiluAndMul.cpp - SwiGLU, plain and with an fp8 output --------------===//
#include "dsl/Registry.h"
#include "ops/Activations.h"

namespace kgen::ops {

// F.silu(a) * b on [T, 2d]: silu is computed in f32 and rounded once, as
// PyTorch does for bf16/f16 tensors; the product rounds again. The quantized
// form is vLLM's silu_and_mul followed by its static fp8 quantization:
// (y / scale).to(f8e4m3), saturating at +-448.
static Kernel siluAndMul(DType dt, bool quantize) {
  Builder b(quantize ? "silu_and_mul_quant" : "silu_and_mul");
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, 2 * d);
  Expr y = siluF32(x.slice(0, d).to(DType::F32)).to(dt) * x.slice(d, d);
  if (quantize) {
    Expr scale = b.scalar("scale", DType::F32);
    y = (y.to(DType::F32) / scale).to(DType::F8E4M3);
  }
  b.output("y", y);
  return b.build();
}

KGEN_REGISTER_OP(silu_and_mul)
    .summary("SwiGLU: x is [T, 2d], y = silu(x[:, :d]) * x[:, d:]")
    .dim("d")
    .kernel([](DType dt) { return siluAndMul(dt, false); });

KGEN_REGISTER_OP(silu_and_mul_quant)
    .summary("SwiGLU then static fp8: y = (silu_and_mul(x) / scale)"
             ".to(f8e4m3), saturating (vLLM)")
    .dim("d")
    .scalar("scale", 0.05)
    .kernel([](DType dt) { return siluAndMul(dt, true); });

} // namespace kgen::ops
