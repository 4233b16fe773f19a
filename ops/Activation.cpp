//===- Activation.cpp - silu and gelu alone -------------------------------===//
#include "dsl/Registry.h"
#include "ops/Activations.h"

namespace kgen::ops {

enum class Activation { Silu, Gelu, GeluTanh };

// F.silu(x) / F.gelu(x, approximate=...) on [T, d], in f32, rounded once.
static Kernel activation(DType dt, Activation act) {
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

KGEN_REGISTER_OP(silu)
    .summary("y = F.silu(x), in f32")
    .dim("d")
    .kernel([](DType dt) { return activation(dt, Activation::Silu); });

KGEN_REGISTER_OP(gelu)
    .summary("y = F.gelu(x) (erf), in f32")
    .dim("d")
    .kernel([](DType dt) { return activation(dt, Activation::Gelu); });

KGEN_REGISTER_OP(gelu_tanh)
    .summary("y = F.gelu(x, approximate='tanh'), in f32")
    .dim("d")
    .kernel([](DType dt) { return activation(dt, Activation::GeluTanh); });

} // namespace kgen::ops
