//===- GeluAndMul.cpp - GEGLU ---------------------------------------------===//
#include "ops/Activations.h"
#include "ops/Registry.h"

namespace kgen::ops {

// F.gelu(a, approximate=...) * b on [T, 2d], GELU in f32 rounded once.
Kernel geluAndMul(DType dt, bool tanhApproximation) {
  Builder b(tanhApproximation ? "gelu_tanh_and_mul" : "gelu_and_mul");
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, 2 * d);
  Expr a = x.slice(0, d).to(DType::F32);
  b.output("y", geluF32(a, tanhApproximation).to(dt) * x.slice(d, d));
  return b.build();
}

} // namespace kgen::ops
