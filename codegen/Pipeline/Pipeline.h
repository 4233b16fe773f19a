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

/// A GPU architecture kgen emits PTX for, with the PTX ISA version used: the
/// oldest that has the architecture, so any CUDA 12.x driver loads it.
struct Arch {
  std::string name; ///< "sm_90a"
  int ptxVersion;   ///< 80 = PTX ISA 8.0
  /// Has programmatic dependent launch (griddepcontrol): sm_90 and newer.
  bool gridDependency = false;
  /// Has cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 at its PTX version: sm_90 and
  /// newer.
  bool fp8Convert = false;
  /// Has thread-block clusters (distributed shared memory): sm_90 and newer.
  bool clusters = false;
  /// Holds long busy bf16 rows three blocks an SM (kgen-lower-to-gpu's
  /// busy-rows): measured on sm_90; ptxas spilled rmsnorm_quant_dynamic
  /// under that cap for sm_75 to sm_89 and sm_100.
  bool busyRows = false;
  /// Counts rows loaded after the reductions in the register cap of wide
  /// blocks (kgen-lower-to-gpu's late-row-registers): rows chosen per group
  /// of rows (adaln's scale and shift) and a cluster's rows. sm_100's ptxas
  /// spilled adaln bf16 8192 and the cluster kernels of fused_add_rmsnorm
  /// and layernorm bf16 65536 without them; on sm_90 they cost up to 9%
  /// (adaln, an H200).
  bool lateRowRegisters = false;
  /// Prefetches, once a held row's loads are issued, the row of a later
  /// block (kgen-lower-to-gpu's prefetch-ahead): measured on sm_90 (an
  /// H200); sm_100's ptxas spilled fused_add_rmsnorm f16 8192 with it, and
  /// it was never timed there.
  bool prefetchAhead = false;
};
const std::vector<Arch> &supportedArchs();
const Arch *findArch(const std::string &name);

struct CompileOptions {
  std::string arch = "sm_90";
  std::map<std::string, int64_t> dims; ///< dims to specialize on
  int64_t threadsPerRow = 0;           ///< 0: the schedule chooses
  int64_t rowsPerBlock = 0;
  std::string cudaPath = "/usr/local/cuda"; ///< for libdevice
  bool debugIR = false; ///< IR after every pass and pass timings, to stderr
};

/// What the spec says about the kernel besides what the graph knows.
struct KernelInfo {
  std::string op;    ///< "rmsnorm"
  std::string dtype; ///< "bf16"
  std::string entry; ///< base name of the PTX entries
};

struct Artifact {
  std::string kgen, gpu, llvm, ptx, spec;
  double millis = 0;                       ///< wall time of the whole compile
  double stageMillis[5] = {0, 0, 0, 0, 0}; ///< per Stage (kgen includes import)
};

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

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_PIPELINE_H
