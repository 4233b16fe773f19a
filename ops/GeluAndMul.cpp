//===- GeluAndMul.cpp - GEGLU ---------------------------------------------===//
#include "ops/Registry.h"

#include <cmath>

namespace kgen::ops {

// F.gelu(a, approximate=...) * b on [T, 2d], GELU in f32 rounded once.
Kernel geluAndMul(DType dt, bool tanhApproximation) {
  Builder b(tanhApproximation ? "gelu_tanh_and_mul" : "gelu_and_mul");
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, 2 * d);
  Expr a = x.slice(0, d).to(DType::F32);
  Expr gelu;
  if (tanhApproximation) {
    const double k = std::sqrt(2.0 / M_PI);
    gelu = 0.5 * a * (1.0 + tanh(k * (a + 0.044715 * a * a * a)));
  } else {
    gelu = 0.5 * a * (1.0 + erf(a * M_SQRT1_2));
  }
  b.output("y", gelu.to(dt) * x.slice(d, d));
  return b.build();
}

} // namespace kgen::ops
