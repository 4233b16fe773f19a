//===- SwigluOAIAndMul.cpp - gpt-oss's clamped SwiGLU ---------------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// gpt-oss's gated activation as vLLM's swigluoai_and_mul computes it: gate
// and up interleaved in x ([g0, u0, g1, u1, ...]), g clamped above at limit,
// u to [-limit, limit], y = (u + 1) * g * sigmoid(alpha * g) in f32, rounded
// once.
static Kernel swigluOAIAndMul(DType dt) {
  Builder b("swigluoai_and_mul");
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, 2 * d);
  Expr alpha = b.scalar("alpha", DType::F32);
  Expr limit = b.scalar("limit", DType::F32);
  Expr g = min(x.slice(0, d, 2).to(DType::F32), limit);
  Expr u = max(min(x.slice(1, d, 2).to(DType::F32), limit), -limit);
  b.output("y", ((u + 1.0) * g / (1.0 + exp(-g * alpha))).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(swigluoai_and_mul)
    .summary("gpt-oss: x is [T, 2d] with gate and up interleaved, y = "
             "(clamp(u, -limit, limit) + 1) * g * sigmoid(alpha * g), "
             "g = min(gate, limit) (vLLM)")
    .dim("d")
    .scalar("alpha", 1.702)
    .scalar("limit", 7.0)
    .kernel(swigluOAIAndMul);

} // namespace kgen::ops
