//===- ImportDSL.h - DSL graph to the kgen dialect --------------*- C++ -*-===//
#ifndef KGEN_CODEGEN_IMPORT_IMPORTDSL_H
#define KGEN_CODEGEN_IMPORT_IMPORTDSL_H

#include "codegen/Dialect/KgenOps.h"
#include "dsl/Graph.h"

#include <map>
#include <string>

namespace mlir::kgen {

/// Builds a kgen.kernel named `symName` for `k` at the builder's insertion
/// point. Dims in `staticDims` are specialized (their values become
/// constants); the others become index arguments. bf16/f16 arithmetic is made
/// explicit: widen to f32, compute, round back, so later stages need not know
/// PyTorch's rules. Returns null (with an error emitted) for what the code
/// generator does not support.
KernelOp importKernel(OpBuilder &b, const ::kgen::Kernel &k,
                      const std::map<std::string, int64_t> &staticDims,
                      llvm::StringRef symName);

/// The DSL's ceilPow2 of f32 `x` (a scalar or a row), on its bits: adding a
/// full mantissa carries into the exponent unless the mantissa is 0, and
/// clearing it leaves the power (subnormals carry to 2^-126, the largest
/// floats to infinity); 0, infinities and NaN keep |x|. `splat` gives a
/// scalar constant x's shape. A constant `x` folds to the constant result.
Value buildCeilPow2(OpBuilder &b, Location loc, Value x,
                    function_ref<Value(Value)> splat);

/// The MLIR element type of a DSL dtype.
Type toMLIRType(MLIRContext *ctx, ::kgen::DType t);

} // namespace mlir::kgen

#endif // KGEN_CODEGEN_IMPORT_IMPORTDSL_H
