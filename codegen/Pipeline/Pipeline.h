//===- Pipeline.h - DSL kernel to PTX and spec ------------------*- C++ -*-===//
//
// The one linear pipeline, in named stages. The stage names are the values of
// `kgen emit --emit=`:
//   kgen  the kgen dialect after variants, schedule and vector widths
//   gpu   gpu.func kernels over gpu/vector/arith/math/scf/memref/llvm
//   llvm  the nvvm and llvm dialects
//   ptx   PTX from LLVM's NVPTX backend (libdevice linked)
//   spec  the JSON spec the runtime launches from
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_CODEGEN_PIPELINE_PIPELINE_H
#define KGEN_CODEGEN_PIPELINE_PIPELINE_H

#include "codegen/Pipeline/Profile.h"
#include "codegen/Pipeline/Target.h"
#include "dsl/Graph.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kgen::codegen {

enum class Stage { Kgen, Gpu, Llvm, Ptx, Spec };
const char *stageName(Stage s);
std::optional<Stage> parseStage(const std::string &s);

struct CompileOptions {
  std::string arch = "sm_90";
  std::map<std::string, int64_t> dims; ///< dims to specialize on
  int64_t threadsPerRow = 0;           ///< 0: the schedule chooses
  int64_t rowsPerBlock = 0;
  std::string cudaPath = "/usr/local/cuda"; ///< for libdevice
  bool debugIR = false; ///< IR after every pass and pass timings, to stderr
  /// The tuning profile; none: the arch's built-in one (Arch::profile).
  std::optional<TuningProfile> profile;
  /// A CompileCache.h folder: compiles to PTX or spec read and write it.
  /// Empty: none.
  std::string cacheDir;
};

/// What the spec says about the kernel besides what the graph knows.
struct KernelInfo {
  std::string op;    ///< "rmsnorm"
  std::string dtype; ///< "bf16"
  std::string entry; ///< base name of the PTX entries
};

struct Artifact {
  std::string kgen, gpu, llvm, ptx, spec;
  bool cached = false; ///< read from CompileOptions::cacheDir
  double millis = 0;   ///< wall time of the whole compile
  double stageMillis[5] = {0, 0, 0, 0, 0}; ///< per Stage (kgen includes import)
};

/// Registers `kgen-pipeline` (kgen-opt's): the kgen, gpu and llvm stages as
/// a compile builds them, with typed options for the arch, the profile, the
/// last stage and the forced threads and rows.
void registerPipeline();

/// Owns an MLIR context so that many kernels compile without re-creating it.
class Compiler {
public:
  Compiler();
  ~Compiler();
  /// Runs the pipeline up to and including `last`. On failure returns false
  /// and sets `error` (the MLIR diagnostics).
  bool compile(const Kernel &k, const KernelInfo &info,
               const CompileOptions &opts, Stage last, Artifact &out,
               std::string &error);
  /// Whether `profile` is for `arch` and every option it sets is one the
  /// passes take, in range. On failure sets `error`.
  bool checkProfile(const TuningProfile &profile, const std::string &arch,
                    std::string &error);
  /// The pass pipelines of the kgen and gpu stages for `arch` under `opts`,
  /// in the textual form kgen-opt's --pass-pipeline takes.
  bool describe(const CompileOptions &opts, const std::string &arch,
                std::string &kgenStage, std::string &gpuStage,
                std::string &error);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_PIPELINE_H
