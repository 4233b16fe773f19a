//===- PtxEmitter.cpp - LLVM dialect to PTX -------------------------------===//
#include "codegen/Pipeline/PtxEmitter.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/Internalize.h"
#include "llvm/Transforms/Utils/Cloning.h"

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
// to ptxas (instcombine, CSE, CFG), twice. The rows are already unrolled and
// vectorized, and ptxas optimizes again: the O3 pipeline took 3x as long
// (loop, vectorizer and inliner passes finding nothing) for PTX within 3% of
// its size and ptxas registers within 8 (bundle of bf16 sm_90 kernels). GVN
// in place of the second early CSE gave byte-identical PTX for every bundled
// kernel (990: lengths 0, 4096, 16384 on sm_75 to sm_100) in 2% more time;
// without the second round the PTX changed.
constexpr const char *kOptPipeline =
    "nvvm-reflect,always-inline,"
    "function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,"
    "simplifycfg,early-cse<memssa>,instcombine<no-verify-fixpoint>,"
    "simplifycfg),globaldce";

void initNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Loop strength reduction rewrites the row loops' addresses into more
    // live values. Without it the sm_90 bf16 kernels take 3% fewer registers
    // in all (ptxas -v) and a compile 18% fewer instructions (callgrind).
    // LLVM has it only as a process-wide option; Triton sets it the same way
    // (DISABLE_LLVM_OPT=disable-lsr).
    auto options = llvm::cl::getRegisteredOptions();
    if (llvm::cl::Option *lsr = options.lookup("disable-lsr"))
      static_cast<llvm::cl::opt<bool> *>(lsr)->setValue(true);
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

bool callsLibdevice(const llvm::Module &m) {
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_"))
      return true;
  return false;
}

/// The libdevice globals that `m` needs: the functions it declares and what
/// they reference (functions and constant tables), transitively. Materializes
/// the bodies it walks; they stay for the next kernel.
llvm::Expected<llvm::DenseSet<const llvm::GlobalValue *>>
needed(const llvm::Module &m, llvm::Module &lib) {
  llvm::DenseSet<const llvm::GlobalValue *> globals;
  llvm::DenseSet<const llvm::Constant *> constants;
  llvm::SmallVector<llvm::GlobalValue *> work;
  auto add = [&](llvm::GlobalValue *gv) {
    if (gv && globals.insert(gv).second)
      work.push_back(gv);
  };
  // Finds the globals inside a constant (a table, a constant expression).
  auto scan = [&](llvm::Constant *c, auto &self) -> void {
    if (auto *gv = llvm::dyn_cast<llvm::GlobalValue>(c))
      return add(gv);
    if (!constants.insert(c).second)
      return;
    for (llvm::Use &u : c->operands())
      if (auto *op = llvm::dyn_cast<llvm::Constant>(u.get()))
        self(op, self);
  };
  for (const llvm::Function &f : m)
    if (f.isDeclaration())
      add(lib.getNamedValue(f.getName()));
  while (!work.empty()) {
    llvm::GlobalValue *gv = work.pop_back_val();
    if (llvm::Error e = gv->materialize())
      return std::move(e);
    if (auto *var = llvm::dyn_cast<llvm::GlobalVariable>(gv)) {
      if (var->hasInitializer())
        scan(var->getInitializer(), scan);
    } else if (auto *f = llvm::dyn_cast<llvm::Function>(gv)) {
      for (llvm::Instruction &inst : llvm::instructions(*f))
        for (llvm::Use &u : inst.operands())
          if (auto *c = llvm::dyn_cast<llvm::Constant>(u.get()))
            scan(c, scan);
    }
  }
  return globals;
}

} // namespace

llvm::TargetMachine *PtxEmitter::targetMachine(const Arch &arch,
                                               std::string &error) {
  std::unique_ptr<llvm::TargetMachine> &slot = machines[arch.name()];
  if (slot)
    return slot.get();
  initNVPTX();
  llvm::Triple triple(kTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string features = "+ptx" + std::to_string(arch.caps.ptxVersion);
  // Default, not Aggressive: the same PTX for every bundled kernel (990, as
  // above) in 3% less time (codegen's IR passes take early CSE over GVN).
  slot.reset(target->createTargetMachine(
      triple, arch.name(), features, llvm::TargetOptions(), std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Default));
  return slot.get();
}

bool PtxEmitter::linkLibdevice(llvm::Module &m, std::string &error) {
  if (!libdevice) {
    std::string path = cudaPath + "/nvvm/libdevice/libdevice.10.bc";
    auto buf = llvm::MemoryBuffer::getFile(path);
    if (!buf) {
      error =
          "cannot read libdevice at " + path + ": " + buf.getError().message();
      return false;
    }
    // Lazily: a kernel calls a handful of its ~500 functions, and a full
    // parse took longer than compiling a small kernel.
    auto lib = llvm::getOwningLazyBitcodeModule(std::move(*buf), ctx);
    if (!lib) {
      error = "cannot parse libdevice: " + llvm::toString(lib.takeError());
      return false;
    }
    libdevice = std::move(*lib);
  }
  // A copy of just what the kernels call: linking moves functions out of the
  // module it links from, and the opened libdevice must stay whole.
  auto keep = needed(m, *libdevice);
  if (!keep) {
    error = "cannot read libdevice: " + llvm::toString(keep.takeError());
    return false;
  }
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> copy =
      llvm::CloneModule(*libdevice, map, [&](const llvm::GlobalValue *gv) {
        return keep->contains(gv);
      });
  copy->setTargetTriple(m.getTargetTriple());
  copy->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(copy),
                                llvm::Linker::Flags::LinkOnlyNeeded)) {
    error = "linking libdevice failed";
    return false;
  }
  // Only the kernels stay visible, so that the rest of libdevice is dropped.
  llvm::internalizeModule(m, [](const llvm::GlobalValue &gv) {
    auto *f = llvm::dyn_cast<llvm::Function>(&gv);
    return f && f->getCallingConv() == llvm::CallingConv::PTX_Kernel;
  });
  return true;
}

bool PtxEmitter::emit(mlir::gpu::GPUModuleOp module, const Arch &arch,
                      std::string &ptx, std::string &error) {
  std::unique_ptr<llvm::Module> m =
      mlir::translateModuleToLLVMIR(module, ctx, "kgen");
  if (!m) {
    error = "translation to LLVM IR failed";
    return false;
  }
  llvm::TargetMachine *tm = targetMachine(arch, error);
  if (!tm)
    return false;
  m->setTargetTriple(tm->getTargetTriple());
  m->setDataLayout(tm->createDataLayout());
  // libdevice picks its flush-to-zero paths from this flag: IEEE here.
  m->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
  if (callsLibdevice(*m) && !linkLibdevice(*m, error))
    return false;

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
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
