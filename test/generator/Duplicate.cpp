//===- Duplicate.cpp - An op named as one that ships with kgen ------------===//
//
// For lit/kgen/generator-errors.test: linked with kgen's ops, the generator
// refuses to run and names both registrations.
//
//===----------------------------------------------------------------------===//
#include "dsl/Registry.h"

using namespace kgen;

static Kernel mine(DType dt) {
  Builder b("rmsnorm");
  Len n = b.dim("hidden");
  Tensor x = b.input("x", dt, n);
  b.output("y", x * 2.0);
  return b.build();
}

KGEN_REGISTER_OP(rmsnorm).summary("a second rmsnorm").kernel(mine); // DUP-LINE
