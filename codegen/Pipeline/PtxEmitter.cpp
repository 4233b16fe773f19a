//===- PtxEmitter.cpp - LLVM dialect to PTX -------------------------------===//
#include "codegen/Pipeline/PtxEmitter.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace kgen::codegen {

namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

// What the IR from the kgen lowering still needs before NVPTX code
// generation: libdevice resolved and inlined, then the cleanups that matter
// to ptxas (instcombine, CSE, GVN, CFG). The rows are already unrolled and
// vectorized, and ptxas optimizes again: the O3 pipeline took 3x as long
// (loop, vectorizer and inliner passes finding nothing) for PTX within 3% of
// its size and ptxas registers within 8 (bundle of bf16 sm_90 kernels).
constexpr const char *kOptPipeline =
    "nvvm-reflect,always-inline,"
    "function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,"
    "simplifycfg,gvn,instcombine<no-verify-fixpoint>,simplifycfg),"
    "globaldce";

/// The libdevice bitcode of a toolkit, read once.
const llvm::MemoryBuffer *libdevice(const std::string &cudaPath,
                                    std::string &error) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = cache[cudaPath];
  if (!slot) {
    std::string path = cudaPath + "/nvvm/libdevice/libdevice.10.bc";
    auto buf = llvm::MemoryBuffer::getFile(path);
    if (!buf) {
      error =
          "cannot read libdevice at " + path + ": " + buf.getError().message();
      return nullptr;
    }
    slot = std::move(*buf);
  }
  return slot.get();
}

std::unique_ptr<llvm::TargetMachine> targetMachine(const Arch &arch,
                                                   std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  llvm::Triple triple(kTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string features = "+ptx" + std::to_string(arch.ptxVersion);
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, arch.name, features, llvm::TargetOptions(), std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

bool callsLibdevice(const llvm::Module &m) {
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_"))
      return true;
  return false;
}

} // namespace

bool emitPTX(mlir::gpu::GPUModuleOp module, const Arch &arch,
             const std::string &cudaPath, std::string &ptx,
             std::string &error) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m =
      mlir::translateModuleToLLVMIR(module, ctx, "kgen");
  if (!m) {
    error = "translation to LLVM IR failed";
    return false;
  }
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(arch, error);
  if (!tm)
    return false;
  m->setTargetTriple(tm->getTargetTriple());
  m->setDataLayout(tm->createDataLayout());
  // libdevice picks its flush-to-zero paths from this flag: IEEE here.
  m->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));

  if (callsLibdevice(*m)) {
    const llvm::MemoryBuffer *lib = libdevice(cudaPath, error);
    if (!lib)
      return false;
    auto lazy = llvm::getLazyBitcodeModule(lib->getMemBufferRef(), ctx);
    if (!lazy) {
      error = "cannot parse libdevice: " + llvm::toString(lazy.takeError());
      return false;
    }
    (*lazy)->setTargetTriple(m->getTargetTriple());
    (*lazy)->setDataLayout(m->getDataLayout());
    if (llvm::Linker::linkModules(*m, std::move(*lazy),
                                  llvm::Linker::Flags::LinkOnlyNeeded)) {
      error = "linking libdevice failed";
      return false;
    }
    // Only the kernels stay visible, so that the rest of libdevice is dropped.
    llvm::internalizeModule(*m, [](const llvm::GlobalValue &gv) {
      auto *f = llvm::dyn_cast<llvm::Function>(&gv);
      return f && f->getCallingConv() == llvm::CallingConv::PTX_Kernel;
    });
  }

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (llvm::Error e = pb.parsePassPipeline(mpm, kOptPipeline)) {
    error = "bad LLVM pass pipeline: " + llvm::toString(std::move(e));
    return false;
  }
  mpm.run(*m, mam);

  if (llvm::verifyModule(*m, &llvm::errs())) {
    error = "LLVM IR verification failed after optimization";
    return false;
  }
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr,
                              llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX backend cannot emit assembly";
    return false;
  }
  codegen.run(*m);
  ptx = buffer.str().str();
  return true;
}

} // namespace kgen::codegen
