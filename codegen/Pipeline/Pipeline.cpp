//===- Pipeline.cpp - DSL kernel to PTX and spec --------------------------===//
#include "codegen/Pipeline/Pipeline.h"

#include "codegen/Import/ImportDSL.h"
#include "codegen/Pipeline/PtxEmitter.h"
#include "codegen/Pipeline/Spec.h"
#include "codegen/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <set>

using namespace mlir;

namespace kgen::codegen {

const char *stageName(Stage s) {
  static const char *names[] = {"kgen", "gpu", "llvm", "ptx", "spec"};
  return names[(int)s];
}

std::optional<Stage> parseStage(const std::string &s) {
  for (Stage st :
       {Stage::Kgen, Stage::Gpu, Stage::Llvm, Stage::Ptx, Stage::Spec})
    if (s == stageName(st))
      return st;
  return std::nullopt;
}

struct Compiler::Impl {
  MLIRContext ctx;
  /// Pass pipelines by stage and options. A pass manager builds its pattern
  /// sets (canonicalizer, conversions) on its first run: reusing it saved a
  /// tenth of a small kernel's compile.
  std::map<std::string, std::unique_ptr<PassManager>> pipelines;
  /// Per toolkit path (the one option the emitter keeps).
  std::unique_ptr<PtxEmitter> emitter;
  Impl() : ctx(makeRegistry()) {
    ctx.disableMultithreading(); // kernels are tiny: threads only cost
    ctx.loadAllAvailableDialects();
  }
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registerAllToLLVMIRTranslations(registry);
    registry.insert<mlir::kgen::KgenDialect>();
    return registry;
  }
};

Compiler::Compiler() : impl(std::make_unique<Impl>()) {}
Compiler::~Compiler() = default;

static std::string print(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  return s;
}

bool Compiler::compile(const Kernel &k, const KernelInfo &info,
                       const CompileOptions &opts, Stage last, Artifact &out,
                       std::string &error) {
  auto t0 = std::chrono::steady_clock::now();
  auto lap = t0;
  auto endStage = [&](Stage st) {
    auto now = std::chrono::steady_clock::now();
    out.stageMillis[(int)st] =
        std::chrono::duration<double, std::milli>(now - lap).count();
    lap = now;
  };
  MLIRContext &ctx = impl->ctx;
  const Arch *arch = findArch(opts.arch);
  if (!arch) {
    error = "unknown arch '" + opts.arch + "'";
    return false;
  }
  std::string diagnostics;
  std::set<std::string> seen;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    std::string line;
    llvm::raw_string_ostream os(line);
    // Imported ops have no source location: the message alone. Each
    // variant of a kernel repeats the same one: it is kept once.
    if (!isa<UnknownLoc>(d.getLocation()))
      os << d.getLocation() << ": ";
    os << d;
    if (seen.insert(line).second)
      diagnostics += line + "\n";
    return success();
  });
  auto fail = [&](const char *what) {
    error = std::string(what) + " failed:\n" + diagnostics;
    return false;
  };

  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  if (!mlir::kgen::importKernel(b, k, opts.dims, info.entry) ||
      failed(verify(*module)))
    return fail("import");
  std::string imported = print(*module);

  // `key` names the stage and every option its passes take.
  auto run = [&](OwningOpRef<ModuleOp> &m, const std::string &key,
                 auto populate) {
    auto build = [&] {
      auto pm = std::make_unique<PassManager>(&ctx);
      // Verifying after every pass cost a third of the MLIR stages: once per
      // stage, unless debugging.
      pm->enableVerifier(opts.debugIR);
      if (opts.debugIR) {
        pm->enableIRPrinting();
        pm->enableTiming();
      }
      populate(*pm);
      return pm;
    };
    std::unique_ptr<PassManager> fresh;
    PassManager *pm;
    if (opts.debugIR) {
      fresh = build();
      pm = fresh.get();
    } else {
      std::unique_ptr<PassManager> &slot = impl->pipelines[key];
      if (!slot)
        slot = build();
      pm = slot.get();
    }
    if (failed(pm->run(*m)))
      return failure();
    return verify(*m);
  };

  // Stage kgen.
  std::string kgenKey = "kgen|" + std::to_string(opts.threadsPerRow) + "|" +
                        std::to_string(opts.rowsPerBlock) + "|" +
                        std::to_string(arch->caps.clusters);
  if (failed(run(module, kgenKey, [&](PassManager &pm) {
        pm.addPass(mlir::kgen::createKgenFastMath());
        mlir::kgen::KgenMakeVariantsOptions mv;
        mv.clusters = arch->caps.clusters;
        pm.addPass(mlir::kgen::createKgenMakeVariants(mv));
        pm.addPass(mlir::kgen::createKgenOnePassVariance());
        pm.addPass(mlir::kgen::createKgenOnlineSoftmax());
        mlir::kgen::KgenScheduleOptions so;
        so.threadsPerRow = opts.threadsPerRow;
        so.rowsPerBlock = opts.rowsPerBlock;
        pm.addPass(mlir::kgen::createKgenSchedule(so));
        pm.addPass(mlir::kgen::createKgenVectorize());
      })))
    return fail("stage kgen");
  // Printing costs as much as a pass: only the stage asked for is printed.
  if (last == Stage::Kgen)
    out.kgen = print(*module);
  OwningOpRef<ModuleOp> scheduled = module->clone();
  endStage(Stage::Kgen);

  // Stage gpu.
  if (last >= Stage::Gpu) {
    std::string key = "gpu|" + std::to_string(arch->caps.fp8Convert) + "|" +
                      std::to_string(arch->tuning.busyRows) + "|" +
                      std::to_string(arch->caps.gridDependency) + "|" +
                      std::to_string(arch->tuning.lateRowRegisters) + "|" +
                      std::to_string(arch->tuning.prefetchAhead);
    if (failed(run(module, key, [&](PassManager &pm) {
          mlir::kgen::KgenLowerToGPUOptions lower;
          lower.busyRows = arch->tuning.busyRows;
          lower.lateRowRegisters = arch->tuning.lateRowRegisters;
          lower.prefetch = arch->caps.gridDependency;
          lower.prefetchAhead = arch->tuning.prefetchAhead;
          pm.addPass(mlir::kgen::createKgenLowerToGPU(lower));
          mlir::kgen::KgenExpandFP8Options fp8;
          fp8.native = arch->caps.fp8Convert;
          pm.addPass(mlir::kgen::createKgenExpandFP8(fp8));
          // One sweep without region simplification: the PTX of the 441
          // kernels of the sm_75/80/90 library came out byte-identical, in
          // 7% fewer instructions of the whole compile.
          GreedyRewriteConfig canon;
          canon.setRegionSimplificationLevel(
              GreedySimplifyRegionLevel::Disabled);
          canon.setMaxIterations(1);
          pm.addPass(createCanonicalizerPass(canon));
          pm.addPass(createCSEPass());
        })))
      return fail("stage gpu");
    if (last == Stage::Gpu)
      out.gpu = print(*module);
    endStage(Stage::Gpu);
  }
  // Stage llvm.
  if (last >= Stage::Llvm) {
    if (failed(run(module, "llvm|" + arch->name(), [&](PassManager &pm) {
          GpuNVVMAttachTargetOptions t;
          t.chip = arch->name();
          t.features = "+ptx" + std::to_string(arch->caps.ptxVersion);
          t.optLevel = 3;
          pm.addPass(createGpuNVVMAttachTarget(t));
          OpPassManager &gm = pm.nest<gpu::GPUModuleOp>();
          gm.addPass(createSCFToControlFlowPass());
          gm.addPass(createConvertGpuOpsToNVVMOps());
          pm.addPass(createReconcileUnrealizedCastsPass());
          if (arch->caps.gridDependency)
            pm.addPass(mlir::kgen::createKgenGridDependency());
        })))
      return fail("stage llvm");
    if (last == Stage::Llvm)
      out.llvm = print(*module);
    endStage(Stage::Llvm);
  }
  // Stage ptx and spec.
  if (last >= Stage::Ptx) {
    std::string emitError;
    if (!impl->emitter || impl->emitter->toolkit() != opts.cudaPath)
      impl->emitter = std::make_unique<PtxEmitter>(opts.cudaPath);
    for (auto gm : module->getOps<gpu::GPUModuleOp>())
      if (!impl->emitter->emit(gm, *arch, out.ptx, emitError))
        return fail(("stage ptx: " + emitError).c_str());
    if (out.ptx.empty())
      return fail("stage ptx (no gpu.module)");
    endStage(Stage::Ptx);
    if (last >= Stage::Spec) {
      std::string key = imported + "|" + arch->name() + "|" +
                        std::to_string(opts.threadsPerRow) + "|" +
                        std::to_string(opts.rowsPerBlock) + "|" + out.ptx;
      std::string hash = llvm::utohexstr(llvm::xxh3_64bits(key), true, 16);
      out.spec = writeSpec(k, info, opts, *scheduled, *module, hash);
      endStage(Stage::Spec);
    }
  }
  out.millis = std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - t0)
                   .count();
  return true;
}

} // namespace kgen::codegen
