//===- Target.cpp - The archs kgen emits PTX for --------------------------===//
#include "codegen/Pipeline/Target.h"

namespace kgen::codegen {

const std::vector<Arch> &supportedArchs() {
  // PTX ISA 8.0 (CUDA 12.0) covers sm_75 to sm_90a; sm_100 needs 8.6 (12.8).
  // cvt to fp8 needs sm_90 with PTX 7.8, or sm_89 with PTX 8.1 (in LLVM's
  // NVPTX): sm_89 keeps PTX 8.0 and converts in integer arithmetic.
  static const std::vector<Arch> archs = {
      {{.name = "sm_75", .ptxVersion = 80}, "generic"},
      {{.name = "sm_80", .ptxVersion = 80}, "generic"},
      {{.name = "sm_86", .ptxVersion = 80}, "generic"},
      {{.name = "sm_89", .ptxVersion = 80}, "generic"},
      {{.name = "sm_90",
        .ptxVersion = 80,
        .gridDependency = true,
        .fp8Convert = true,
        .clusters = true},
       "sm_90"},
      {{.name = "sm_90a",
        .ptxVersion = 80,
        .gridDependency = true,
        .fp8Convert = true,
        .clusters = true},
       "sm_90"},
      {{.name = "sm_100",
        .ptxVersion = 86,
        .gridDependency = true,
        .fp8Convert = true,
        .clusters = true},
       "sm_100"}};
  return archs;
}

const Arch *findArch(const std::string &name) {
  for (const Arch &a : supportedArchs())
    if (a.name() == name)
      return &a;
  return nullptr;
}

} // namespace kgen::codegen
