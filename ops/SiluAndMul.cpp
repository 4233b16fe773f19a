//===- SiluAndMul.cpp - SwiGLU --------------------------------------------===//
#include "ops/Registry.h"

namespace kgen::ops {

// F.silu(a) * b on [T, 2d]: silu is computed in f32 and rounded once, as
// PyTorch does for bf16/f16 tensors; the product rounds again.
Kernel siluAndMul(DType dt) {
  Builder b("silu_and_mul");
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, 2 * d);
  Expr a = x.slice(0, d).to(DType::F32);
  Expr gate = (a / (1.0 + exp(-a))).to(dt);
  b.output("y", gate * x.slice(d, d));
  return b.build();
}

} // namespace kgen::ops
