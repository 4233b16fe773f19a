//===- Target.h - What kgen knows of each GPU architecture ------*- C++ -*-===//
//
// An arch is its ISA facts (TargetCaps: what the PTX version and the
// hardware offer) and its tuning (TuningProfile: schedule choices measured
// on, or forced by ptxas for, that arch), kept apart so that a newcomer can
// tell a capability from a measurement. Both are named fields.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_CODEGEN_PIPELINE_TARGET_H
#define KGEN_CODEGEN_PIPELINE_TARGET_H

#include <string>
#include <vector>

namespace kgen::codegen {

/// ISA and PTX facts of an arch. The PTX ISA version is the oldest that has
/// the arch, so any CUDA 12.x driver loads the PTX.
struct TargetCaps {
  std::string name;   ///< "sm_90a"
  int ptxVersion = 0; ///< 80 = PTX ISA 8.0
  /// Programmatic dependent launch (griddepcontrol): sm_90 and newer.
  bool gridDependency = false;
  /// cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 at its PTX version: sm_90 and
  /// newer (sm_89 has it only from PTX 8.1).
  bool fp8Convert = false;
  /// Thread-block clusters (distributed shared memory): sm_90 and newer.
  bool clusters = false;
};

/// Schedule choices that hold on some archs only; bench/RESULTS.md holds the
/// measurements behind them.
struct TuningProfile {
  /// Holds long busy bf16 rows three blocks an SM (kgen-lower-to-gpu's
  /// busy-rows): measured on sm_90; ptxas spilled rmsnorm_quant_dynamic
  /// under that cap for sm_75 to sm_89 and sm_100.
  bool busyRows = false;
  /// Counts rows loaded after the reductions in the register cap of wide
  /// blocks (late-row-registers): sm_100's ptxas spilled adaln and cluster
  /// kernels without it; on sm_90 it cost up to 9%.
  bool lateRowRegisters = false;
  /// Prefetches a later block's row once a held row's loads are issued
  /// (prefetch-ahead): measured on sm_90; sm_100's ptxas spilled with it.
  bool prefetchAhead = false;
};

/// A GPU architecture kgen emits PTX for.
struct Arch {
  TargetCaps caps;
  TuningProfile tuning;
  const std::string &name() const { return caps.name; }
};

const std::vector<Arch> &supportedArchs();
/// The arch named `name` ("sm_90"), or nullptr.
const Arch *findArch(const std::string &name);

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_TARGET_H
