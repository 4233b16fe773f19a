//===- FatreluAndMul.cpp - Gated ReLU with a threshold --------------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// vLLM's fatrelu_and_mul: a = x[:, :d] where a > threshold, else 0, times
// x[:, d:]. The comparison is in f32; the kept value is exact, so only the
// product rounds.
static Kernel fatreluAndMul(DType dt) {
  Builder b("fatrelu_and_mul");
  Len d = b.dim("d");
  Tensor x = b.input("x", dt, 2 * d);
  Expr threshold = b.scalar("threshold", DType::F32);
  Expr a = x.slice(0, d);
  b.output("y", select(a.to(DType::F32) > threshold, a, 0.0) * x.slice(d, d));
  return b.build();
}

KGEN_REGISTER_OP(fatrelu_and_mul)
    .summary("x is [T, 2d], y = (a > threshold ? a : 0) * x[:, d:] with "
             "a = x[:, :d] (vLLM)")
    .dim("d")
    .scalar("threshold", 0.0)
    .kernel(fatreluAndMul);

} // namespace kgen::ops
