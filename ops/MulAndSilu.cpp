//===- MulAndSilu.cpp - SwiGLU with the halves swapped --------------------===//
#include "dsl/Registry.h"
#include "ops/Activations.h"

namespace kgen::ops {

// vLLM's mul_and_silu: x[:, :d] * silu(x[:, d:]), the gate in the second
// half. silu is computed in f32 and rounded once; the product rounds again.
static Kernel mulAndSilu(DType dt) {
  Builder b("mul_and_silu");
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, 2 * d);
  b.output("y", x.slice(0, d) * siluF32(x.slice(d, d).to(DType::F32)).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(mul_and_silu)
    .summary("x is [T, 2d], y = x[:, :d] * silu(x[:, d:]) (vLLM)")
    .dim("d")
    .kernel(mulAndSilu);

} // namespace kgen::ops
