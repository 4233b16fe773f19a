//===- Softmax.cpp - Numerically stable softmax over the row --------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// torch.softmax(x, -1): in f32, subtracting the row max before exp.
static Kernel softmax(DType dt) {
  Builder b("softmax");
  Len n = b.dim("n");
  Tensor x = b.input("x", dt, n);
  Expr xf = x.to(DType::F32);
  Expr e = exp(xf - amax(xf));
  b.output("y", (e / sum(e)).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(softmax)
    .summary("y = exp(x - max(x)) / sum(exp(x - max(x))), in f32")
    .dim("n")
    .kernel(softmax);

} // namespace kgen::ops
