//===- Spec.h - The JSON spec of a compiled kernel --------------*- C++ -*-===//
#ifndef KGEN_CODEGEN_PIPELINE_SPEC_H
#define KGEN_CODEGEN_PIPELINE_SPEC_H

#include "codegen/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"

namespace kgen::codegen {

/// Writes the spec (format in docs/design.md) from the graph and the lowered
/// module, whose gpu.funcs carry their parameter order (kgen.abi) and the
/// kgen variants' assumptions.
std::string writeSpec(const Kernel &k, const KernelInfo &info,
                      const CompileOptions &opts, mlir::ModuleOp scheduled,
                      mlir::ModuleOp lowered, const std::string &hash);

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_SPEC_H
