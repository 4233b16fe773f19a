//===- SiluAndMul.cpp - SwiGLU, plain and with an fp8 output --------------===//
#include "ops/Activations.h"
#include "ops/Registry.h"

namespace kgen::ops {

// F.silu(a) * b on [T, 2d]: silu is computed in f32 and rounded once, as
// PyTorch does for bf16/f16 tensors; the product rounds again. The quantized
// form is vLLM's silu_and_mul followed by its static fp8 quantization:
// (y / scale).to(f8e4m3), saturating at +-448.
Kernel siluAndMul(DType dt, bool quantize) {
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

} // namespace kgen::ops
