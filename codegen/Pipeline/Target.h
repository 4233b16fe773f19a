//===- Target.h - What kgen knows of each GPU architecture ------*- C++ -*-===//
//
// An arch is its ISA facts (TargetCaps: what the PTX version and the
// hardware offer) and the name of its default tuning profile (Profile.h:
// schedule choices measured on, or forced by ptxas for, that arch, kept as
// data), so that a newcomer can tell a capability from a measurement.
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
  /// 32-bit registers of an SM, and threads a block may take.
  int registersPerSM = 65536;
  int maxBlockThreads = 1024;
};

/// A GPU architecture kgen emits PTX for.
struct Arch {
  TargetCaps caps;
  /// The built-in profile (codegen/Profiles) a compile for it takes unless
  /// told otherwise.
  std::string profile;
  const std::string &name() const { return caps.name; }
};

const std::vector<Arch> &supportedArchs();
/// The arch named `name` ("sm_90"), or nullptr.
const Arch *findArch(const std::string &name);

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_TARGET_H
