//===- softcap.cpp - Logit soft-capping, an op kgen does not ship ---------===//
//
// Gemma 2's soft-capping of attention and final logits: y = cap * tanh(x /
// cap), in f32 and rounded once. One file: the formula and its registration.
//
//===----------------------------------------------------------------------===//
#include "dsl/Registry.h"

using namespace kgen;

static Kernel softcap(DType dt) {
  Builder b("softcap");
  Len n = b.dim("n");
  Tensor x = b.input("x", dt, n);
  Expr cap = b.scalar("cap", DType::F32);
  Expr xf = x.to(DType::F32);
  b.output("y", (cap * tanh(xf / cap)).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(softcap)
    .summary("y = cap * tanh(x / cap), in f32 (Gemma 2 logit soft-capping)")
    .dim("n")
    .scalar("cap", 30.0)
    .kernel(softcap);
