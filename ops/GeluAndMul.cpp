//===- GeluAndMul.cpp - GEGLU ---------------------------------------------===//
#include "dsl/Registry.h"
#include "ops/Activations.h"

namespace kgen::ops {

// F.gelu(a, approximate=...) * b on [T, 2d], GELU in f32 rounded once.
static Kernel geluAndMul(DType dt, bool tanhApproximation) {
  Builder b(tanhApproximation ? "gelu_tanh_and_mul" : "gelu_and_mul");
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, 2 * d);
  Expr a = x.slice(0, d).to(DType::F32);
  b.output("y", geluF32(a, tanhApproximation).to(dt) * x.slice(d, d));
  return b.build();
}

KGEN_REGISTER_OP(gelu_and_mul)
    .summary("GEGLU with erf GELU: y = gelu(x[:, :d]) * x[:, d:]")
    .dim("d")
    .kernel([](DType dt) { return geluAndMul(dt, false); });

KGEN_REGISTER_OP(gelu_tanh_and_mul)
    .summary("GEGLU with tanh GELU: y = gelu_tanh(x[:, :d]) * x[:, d:]")
    .dim("d")
    .kernel([](DType dt) { return geluAndMul(dt, true); });

} // namespace kgen::ops
