//===- Graph.cpp ----------------------------------------------------------===//
#include "dsl/Graph.h"

namespace kgen {

const char *name(UnaryOp op) {
  static const char *names[] = {"neg",     "abs",   "exp",     "log",
                                "sqrt",    "rsqrt", "tanh",    "erf",
                                "sigmoid", "round", "ceilPow2"};
  return names[(int)op];
}

const char *name(BinaryOp op) {
  static const char *names[] = {"+", "-",  "*", "/",  "max", "min",
                                "<", "<=", ">", ">=", "==",  "!="};
  return names[(int)op];
}

const char *name(ReduceOp op) {
  static const char *names[] = {"sum", "mean", "amax", "amin"};
  return names[(int)op];
}

bool isComparison(BinaryOp op) { return op >= BinaryOp::Lt; }

} // namespace kgen
