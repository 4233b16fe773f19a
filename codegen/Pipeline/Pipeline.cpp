//===- Pipeline.cpp - DSL kernel to PTX and spec --------------------------===//
#include "codegen/Pipeline/Pipeline.h"

#include "codegen/Import/ImportDSL.h"
#include "codegen/Pipeline/CompileCache.h"
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
#include "mlir/Pass/PassRegistry.h"
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

namespace {

/// Options a pass takes from the target or the command line ("name",
/// value): a profile may not set them.
using FixedOptions = std::vector<std::pair<std::string, std::string>>;

std::string flag(bool b) { return b ? "true" : "false"; }

/// Sets `pass`'s `fixed` options, then the profile's for it.
LogicalResult configure(Pass &pass, const FixedOptions &fixed,
                        const TuningProfile &profile, std::string &error) {
  std::string text;
  for (const auto &[name, value] : fixed)
    text += name + "=" + value + " ";
  auto it = profile.options.find(pass.getArgument().str());
  if (it != profile.options.end())
    for (const auto &[name, value] : it->second) {
      if (llvm::any_of(fixed, [&](auto &f) { return f.first == name; })) {
        error = "profile " + profile.name + ": option '" + name + "' of " +
                pass.getArgument().str() +
                " comes from the target or the command line, not a profile";
        return failure();
      }
      text += name + "=" + value + " ";
    }
  std::string message;
  if (failed(pass.initializeOptions(text, [&](const Twine &msg) {
        message = msg.str();
        return failure();
      }))) {
    error = "profile " + profile.name + ": " + pass.getArgument().str() + ": " +
            StringRef(message).trim().str();
    return failure();
  }
  return success();
}

/// Adds `pass`, configured; records its name in `tuned`.
LogicalResult add(OpPassManager &pm, std::unique_ptr<Pass> pass,
                  const FixedOptions &fixed, const TuningProfile &profile,
                  std::set<std::string> &tuned, std::string &error) {
  if (failed(configure(*pass, fixed, profile, error)))
    return failure();
  tuned.insert(pass->getArgument().str());
  pm.addPass(std::move(pass));
  return success();
}

/// Stage kgen: variants, schedule and vector widths.
LogicalResult addKgenStage(OpPassManager &pm, const Arch &arch,
                           const CompileOptions &opts,
                           const TuningProfile &profile,
                           std::set<std::string> &tuned, std::string &error) {
  const TargetCaps &caps = arch.caps;
  pm.addPass(mlir::kgen::createKgenFastMath());
  if (failed(add(pm, mlir::kgen::createKgenLaunchPolicy(), {}, profile, tuned,
                 error)))
    return failure();
  if (failed(add(pm, mlir::kgen::createKgenMakeVariants(),
                 {{"clusters", flag(caps.clusters)}}, profile, tuned, error)))
    return failure();
  pm.addPass(mlir::kgen::createKgenOnePassVariance());
  pm.addPass(mlir::kgen::createKgenOnlineSoftmax());
  if (failed(add(pm, mlir::kgen::createKgenSchedule(),
                 {{"threads-per-row", std::to_string(opts.threadsPerRow)},
                  {"rows-per-block", std::to_string(opts.rowsPerBlock)},
                  {"registers-per-sm", std::to_string(caps.registersPerSM)},
                  {"max-block-threads", std::to_string(caps.maxBlockThreads)}},
                 profile, tuned, error)))
    return failure();
  pm.addPass(mlir::kgen::createKgenVectorize());
  if (failed(add(pm, mlir::kgen::createKgenOccupancy(),
                 {{"registers-per-sm", std::to_string(caps.registersPerSM)}},
                 profile, tuned, error)) ||
      failed(add(pm, mlir::kgen::createKgenPrefetch(),
                 {{"prefetch", flag(caps.gridDependency)}}, profile, tuned,
                 error)))
    return failure();
  return success();
}

/// Stage gpu: gpu.func kernels.
LogicalResult addGpuStage(OpPassManager &pm, const Arch &arch,
                          const TuningProfile &profile,
                          std::set<std::string> &tuned, std::string &error) {
  const TargetCaps &caps = arch.caps;
  if (failed(add(pm, mlir::kgen::createKgenLowerToGPU(), {}, profile, tuned,
                 error)))
    return failure();
  mlir::kgen::KgenExpandFP8Options fp8;
  fp8.native = caps.fp8Convert;
  pm.addPass(mlir::kgen::createKgenExpandFP8(fp8));
  pm.addPass(mlir::kgen::createKgenSaturatingConvert());
  // One sweep without region simplification: the PTX of the 441
  // kernels of the sm_75/80/90 library came out byte-identical, in
  // 7% fewer instructions of the whole compile.
  GreedyRewriteConfig canon;
  canon.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  canon.setMaxIterations(1);
  pm.addPass(createCanonicalizerPass(canon));
  pm.addPass(createCSEPass());
  return success();
}

/// Stage llvm: the nvvm and llvm dialects.
void addLlvmStage(OpPassManager &pm, const Arch &arch) {
  GpuNVVMAttachTargetOptions t;
  t.chip = arch.name();
  t.features = "+ptx" + std::to_string(arch.caps.ptxVersion);
  t.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(t));
  OpPassManager &gm = pm.nest<gpu::GPUModuleOp>();
  gm.addPass(createSCFToControlFlowPass());
  gm.addPass(createConvertGpuOpsToNVVMOps());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (arch.caps.gridDependency)
    pm.addPass(mlir::kgen::createKgenGridDependency());
}

/// kgen-pipeline's options: what a compile takes, as kgen-opt's flags.
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Target GPU (sm_75 ... sm_100)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> profile{
      *this, "profile",
      llvm::cl::desc("Tuning profile: a built-in name or a JSON file "
                     "(default: the arch's own)")};
  Option<std::string> stage{
      *this, "stage",
      llvm::cl::desc("The last stage: kgen, gpu or llvm (as kgen emit)"),
      llvm::cl::init("llvm")};
  Option<int64_t> threadsPerRow{
      *this, "threads-per-row",
      llvm::cl::desc("Force the threads per row (0 = choose)"),
      llvm::cl::init(0)};
  Option<int64_t> rowsPerBlock{
      *this, "rows-per-block",
      llvm::cl::desc("Force the rows per block (0 = choose)"),
      llvm::cl::init(0)};
};

/// What tells two profiles' pipelines apart.
std::string profileKey(const TuningProfile &profile) {
  std::string key;
  for (const auto &[pass, options] : profile.options) {
    key += pass + "{";
    for (const auto &[name, value] : options)
      key += name + "=" + value + " ";
    key += "}";
  }
  return key;
}

} // namespace

struct Compiler::Impl {
  MLIRContext ctx;
  /// Pass pipelines by stage and options. A pass manager builds its pattern
  /// sets (canonicalizer, conversions) on its first run: reusing it saved a
  /// tenth of a small kernel's compile.
  std::map<std::string, std::unique_ptr<PassManager>> pipelines;
  /// Per toolkit path (the one option the emitter keeps).
  std::unique_ptr<PtxEmitter> emitter;
  /// The built-in profiles read so far, by name.
  std::map<std::string, TuningProfile> builtins;
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
  /// The profile a compile for `arch` takes, or null with `error` set.
  const TuningProfile *profileFor(const Arch &arch, const CompileOptions &opts,
                                  std::string &error) {
    const TuningProfile *p = opts.profile ? &*opts.profile : nullptr;
    if (!p) {
      auto it = builtins.find(arch.profile);
      if (it == builtins.end()) {
        TuningProfile loaded;
        if (!loadProfile(arch.profile, loaded, error))
          return nullptr;
        it = builtins.emplace(arch.profile, std::move(loaded)).first;
      }
      p = &it->second;
    }
    if (!p->covers(arch.name())) {
      error = "profile " + p->name + " is for " + llvm::join(p->archs, ", ") +
              ", not " + arch.name();
      return nullptr;
    }
    return p;
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

  const TuningProfile *profile = impl->profileFor(*arch, opts, error);
  if (!profile)
    return false;
  std::string tuning = profileKey(*profile);
  auto finish = [&] {
    out.millis = std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
    return true;
  };
  // The artifact of the same key, compiled before, is this compile's.
  std::string cached;
  if (!opts.cacheDir.empty() && last >= Stage::Ptx && !opts.debugIR) {
    cached = cacheName("kgen-cache-1|" + compilerIdentity(opts.cudaPath) + "|" +
                       arch->name() + "|" + tuning + "|" +
                       std::to_string(opts.threadsPerRow) + "|" +
                       std::to_string(opts.rowsPerBlock) + "|" + info.op + "|" +
                       info.dtype + "|" + info.entry + "|" + imported);
    if (readCached(opts.cacheDir, cached, last >= Stage::Spec, out.ptx,
                   out.spec)) {
      out.cached = true;
      return finish();
    }
  }
  // `key` names the stage and every option its passes take.
  auto run = [&](OwningOpRef<ModuleOp> &m, const std::string &key,
                 auto populate) -> LogicalResult {
    auto build = [&]() -> std::unique_ptr<PassManager> {
      auto pm = std::make_unique<PassManager>(&ctx);
      // Verifying after every pass cost a third of the MLIR stages: once per
      // stage, unless debugging.
      pm->enableVerifier(opts.debugIR);
      if (opts.debugIR) {
        pm->enableIRPrinting();
        pm->enableTiming();
      }
      if (failed(populate(*pm)))
        return nullptr;
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
        slot = build(); // null again on a later call: it fails again
      pm = slot.get();
    }
    if (!pm || failed(pm->run(*m)))
      return failure();
    return verify(*m);
  };
  // A profile's mistakes are the user's: said as they are.
  std::string profileError;
  auto failStage = [&](const char *what) {
    if (!profileError.empty()) {
      error = profileError;
      return false;
    }
    return fail(what);
  };
  std::set<std::string> tuned;

  // Stage kgen.
  std::string kgenKey = "kgen|" + std::to_string(opts.threadsPerRow) + "|" +
                        std::to_string(opts.rowsPerBlock) + "|" + arch->name() +
                        "|" + tuning;
  if (failed(run(module, kgenKey, [&](PassManager &pm) {
        return addKgenStage(pm, *arch, opts, *profile, tuned, profileError);
      })))
    return failStage("stage kgen");
  // Printing costs as much as a pass: only the stage asked for is printed.
  if (last == Stage::Kgen)
    out.kgen = print(*module);
  OwningOpRef<ModuleOp> scheduled = module->clone();
  endStage(Stage::Kgen);

  // Stage gpu.
  if (last >= Stage::Gpu) {
    if (failed(run(
            module, "gpu|" + arch->name() + "|" + tuning, [&](PassManager &pm) {
              return addGpuStage(pm, *arch, *profile, tuned, profileError);
            })))
      return failStage("stage gpu");
    if (last == Stage::Gpu)
      out.gpu = print(*module);
    endStage(Stage::Gpu);
  }
  // Stage llvm.
  if (last >= Stage::Llvm) {
    if (failed(run(module, "llvm|" + arch->name(), [&](PassManager &pm) {
          addLlvmStage(pm, *arch);
          return success();
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
  if (!cached.empty())
    writeCached(opts.cacheDir, cached, out.ptx,
                last >= Stage::Spec ? &out.spec : nullptr);
  return finish();
}

void registerPipeline() {
  registerPassPipeline(
      "kgen-pipeline",
      "kgen's stages up to `stage` for `arch` under `profile`, as kgen emit "
      "runs them",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        PipelineOptions o;
        if (failed(o.parseFromString(text)))
          return failure();
        const Arch *arch = findArch(o.arch);
        if (!arch)
          return errorHandler("kgen-pipeline: unknown arch '" + o.arch + "'");
        std::optional<Stage> last = parseStage(o.stage);
        if (!last || *last > Stage::Llvm)
          return errorHandler("kgen-pipeline: stage must be kgen, gpu or "
                              "llvm, not '" +
                              o.stage + "'");
        std::string error;
        TuningProfile profile;
        if (!loadProfile(o.profile.empty() ? arch->profile : o.profile, profile,
                         error))
          return errorHandler("kgen-pipeline: " + error);
        if (!profile.covers(arch->name()))
          return errorHandler("kgen-pipeline: profile " + profile.name +
                              " is for " + llvm::join(profile.archs, ", ") +
                              ", not " + arch->name());
        CompileOptions opts;
        opts.threadsPerRow = o.threadsPerRow;
        opts.rowsPerBlock = o.rowsPerBlock;
        std::set<std::string> tuned;
        if (failed(addKgenStage(pm, *arch, opts, profile, tuned, error)) ||
            (*last >= Stage::Gpu &&
             failed(addGpuStage(pm, *arch, profile, tuned, error))))
          return errorHandler("kgen-pipeline: " + error);
        if (*last >= Stage::Llvm)
          addLlvmStage(pm, *arch);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(PipelineOptions());
      });
}

bool Compiler::checkProfile(const TuningProfile &profile,
                            const std::string &archName, std::string &error) {
  const Arch *arch = findArch(archName);
  if (!arch) {
    error = "unknown arch '" + archName + "'";
    return false;
  }
  CompileOptions opts;
  opts.profile = profile;
  std::string kgenStage, gpuStage;
  return describe(opts, arch->name(), kgenStage, gpuStage, error);
}

bool Compiler::describe(const CompileOptions &opts, const std::string &archName,
                        std::string &kgenStage, std::string &gpuStage,
                        std::string &error) {
  const Arch *arch = findArch(archName);
  if (!arch) {
    error = "unknown arch '" + archName + "'";
    return false;
  }
  const TuningProfile *profile = impl->profileFor(*arch, opts, error);
  if (!profile)
    return false;
  std::set<std::string> tuned;
  PassManager kgen(&impl->ctx, ModuleOp::getOperationName()),
      gpu(&impl->ctx, ModuleOp::getOperationName());
  if (failed(addKgenStage(kgen, *arch, opts, *profile, tuned, error)) ||
      failed(addGpuStage(gpu, *arch, *profile, tuned, error)))
    return false;
  for (const auto &entry : profile->options)
    if (!tuned.count(entry.first)) {
      error = "profile " + profile->name + ": no pass '" + entry.first +
              "' takes tuning options (" + llvm::join(tuned, ", ") + ")";
      return false;
    }
  // The passes check their options' ranges when a run initializes them.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&impl->ctx, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> empty = ModuleOp::create(UnknownLoc::get(&impl->ctx));
  if (failed(kgen.run(*empty)) || failed(gpu.run(*empty))) {
    error = "profile " + profile->name + ": " + diagnostics;
    if (!error.empty() && error.back() == '\n')
      error.pop_back();
    return false;
  }
  llvm::raw_string_ostream ks(kgenStage), gs(gpuStage);
  kgen.printAsTextualPipeline(ks);
  gpu.printAsTextualPipeline(gs);
  return true;
}

} // namespace kgen::codegen
