//===- BadFormula.cpp - An op whose formula breaks a DSL rule -------------===//
//
// For lit/kgen/generator-errors.test: the generator reports the rule with
// this file's line, not a crash.
//
//===----------------------------------------------------------------------===//
#include "dsl/Registry.h"

using namespace kgen;

static Kernel broken(DType dt) {
  Builder b("broken");
  Len n = b.dim("n");
  Tensor x = b.input("x", dt, n);
  Tensor g = b.input("g", dt, 2 * n);
  b.output("y", x * g); // BROKEN-LINE: rows of n and 2*n
  return b.build();
}

KGEN_REGISTER_OP(broken)
    .summary("x * g over rows of other lengths")
    .dim("n")
    .kernel(broken);

// Registered without .dim(...): its dim is "n", not the default "hidden", so
// it cannot be specialized (the generator says so instead of building the
// dynamic kernel under a specialized name).
static Kernel noDim(DType dt) {
  Builder b("nodim");
  Len n = b.dim("n");
  b.output("y", b.input("x", dt, n) * 2.0);
  return b.build();
}

KGEN_REGISTER_OP(nodim).summary("x * 2").kernel(noDim); // NODIM-LINE
