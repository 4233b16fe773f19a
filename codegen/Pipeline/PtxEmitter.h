//===- PtxEmitter.h - LLVM dialect to PTX -----------------------*- C++ -*-===//
#ifndef KGEN_CODEGEN_PIPELINE_PTXEMITTER_H
#define KGEN_CODEGEN_PIPELINE_PTXEMITTER_H

#include "codegen/Pipeline/Pipeline.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace kgen::codegen {

/// Translates a gpu.module in the nvvm/llvm dialects to LLVM IR, links the
/// libdevice functions it calls, optimizes at O3 and emits PTX with LLVM's
/// NVPTX backend for `arch` (its PTX ISA version set on the target machine).
/// libdevice is read once per process and materialized lazily, which is what
/// keeps a compile in milliseconds. Returns false with `error` set on failure.
bool emitPTX(mlir::gpu::GPUModuleOp module, const Arch &arch,
             const std::string &cudaPath, std::string &ptx, std::string &error);

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_PTXEMITTER_H
