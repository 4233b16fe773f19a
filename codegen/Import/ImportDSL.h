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

/// The MLIR element type of a DSL dtype.
Type toMLIRType(MLIRContext *ctx, ::kgen::DType t);

} // namespace mlir::kgen

#endif // KGEN_CODEGEN_IMPORT_IMPORTDSL_H
