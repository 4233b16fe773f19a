//===- Activation.cpp - silu and gelu alone -------------------------------===//
#include "dsl/Registry.h"
#include "ops/Activations.h"

namespace kgen::ops {

enum class Activation { Silu, Gelu, GeluTanh, GeluQuick, GeluNew, GeluFast };

// vLLM's gelu_new and gelu_fast: the tanh GELU with its kernels' roundings
// to the input dtype (an op on `dt` values rounds to dt; f32 work is spelled
// out), so a bf16 output matches vLLM's to the bit where libm agrees.
static Expr geluNew(const Expr &x, DType dt) {
  Expr inner = ((x * x * x).to(DType::F32) * 0.044715).to(dt);
  Expr c = ((x + inner).to(DType::F32) * 0.79788456).to(dt);
  Expr t = tanhF32(c.to(DType::F32)).to(dt);
  return 0.5 * x * (1.0 + t);
}

static Expr geluFast(const Expr &x, DType dt) {
  Expr f = x.to(DType::F32);
  Expr arg = (f * 0.79788456).to(dt) * (1.0 + (f * 0.044715).to(dt) * x);
  Expr t = tanhF32(arg.to(DType::F32)).to(dt);
  return 0.5 * x * (1.0 + t);
}

// F.silu(x) / F.gelu(x, approximate=...) / vLLM's gelu_quick on [T, d], in
// f32, rounded once; gelu_new and gelu_fast as above.
static Kernel activation(DType dt, Activation act) {
  const char *names[] = {"silu",       "gelu",     "gelu_tanh",
                         "gelu_quick", "gelu_new", "gelu_fast"};
  Builder b(names[(int)act]);
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, d);
  Expr a = x.to(DType::F32);
  Expr y;
  switch (act) {
  case Activation::Silu:
    y = siluF32(a).to(dt);
    break;
  case Activation::Gelu:
  case Activation::GeluTanh:
    y = geluF32(a, act == Activation::GeluTanh).to(dt);
    break;
  case Activation::GeluQuick:
    y = (a / (1.0 + exp(-1.702 * a))).to(dt);
    break;
  case Activation::GeluNew:
    y = geluNew(x.to(dt), dt);
    break;
  case Activation::GeluFast:
    y = geluFast(x.to(dt), dt);
    break;
  }
  b.output("y", y);
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

KGEN_REGISTER_OP(gelu_quick)
    .summary("y = x * sigmoid(1.702 * x), in f32 (QuickGELU; vLLM's "
             "gelu_quick)")
    .dim("d")
    .kernel([](DType dt) { return activation(dt, Activation::GeluQuick); });

KGEN_REGISTER_OP(gelu_new)
    .summary("y = 0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x^3))), "
             "rounded as vLLM's gelu_new")
    .dim("d")
    .kernel([](DType dt) { return activation(dt, Activation::GeluNew); });

KGEN_REGISTER_OP(gelu_fast)
    .summary("y = 0.5 * x * (1 + tanh(0.79788456 * x * (1 + 0.044715 * "
             "x^2))), rounded as vLLM's gelu_fast")
    .dim("d")
    .kernel([](DType dt) { return activation(dt, Activation::GeluFast); });

} // namespace kgen::ops
