//===- Activation.cpp - silu and gelu alone -------------------------------===//
#include "ops/Activations.h"
#include "ops/Registry.h"

namespace kgen::ops {

// F.silu(x) / F.gelu(x, approximate=...) on [T, d], in f32, rounded once.
Kernel activation(DType dt, Activation act) {
  const char *names[] = {"silu", "gelu", "gelu_tanh"};
  Builder b(names[(int)act]);
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, d);
  Expr a = x.to(DType::F32);
  Expr y = act == Activation::Silu ? siluF32(a)
                                   : geluF32(a, act == Activation::GeluTanh);
  b.output("y", y.to(dt));
  return b.build();
}

} // namespace kgen::ops
