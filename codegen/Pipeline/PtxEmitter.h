//===- PtxEmitter.h - LLVM dialect to PTX -----------------------*- C++ -*-===//
#ifndef KGEN_CODEGEN_PIPELINE_PTXEMITTER_H
#define KGEN_CODEGEN_PIPELINE_PTXEMITTER_H

#include "codegen/Pipeline/Pipeline.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace kgen::codegen {

/// Translates gpu.modules in the nvvm/llvm dialects to LLVM IR, links the
/// libdevice functions they call, optimizes and emits PTX with LLVM's NVPTX
/// backend for an arch (its PTX ISA version set on the target machine).
///
/// One emitter serves many kernels, from one thread: it keeps its LLVM
/// context, a target machine per arch and libdevice, opened once (its
/// functions read as kernels first need them) and copied from per kernel.
/// Opening libdevice per kernel, even lazily, was a tenth of a small kernel's
/// compile.
class PtxEmitter {
public:
  explicit PtxEmitter(std::string cudaPath) : cudaPath(std::move(cudaPath)) {}
  /// Returns false with `error` set on failure.
  bool emit(mlir::gpu::GPUModuleOp module, const Arch &arch, std::string &ptx,
            std::string &error);
  const std::string &toolkit() const { return cudaPath; }

private:
  llvm::TargetMachine *targetMachine(const Arch &arch, std::string &error);
  bool linkLibdevice(llvm::Module &m, std::string &error);

  std::string cudaPath;
  llvm::LLVMContext ctx;
  llvm::StringMap<std::unique_ptr<llvm::TargetMachine>> machines;
  std::unique_ptr<llvm::Module> libdevice;
};

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_PTXEMITTER_H
