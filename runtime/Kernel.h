//===- Kernel.h - What a kgen_kernel holds ----------------------*- C++ -*-===//
//
// A kernel is one image per arch: a spec, its PTX and optionally a cubin.
// Immutable after creation. Private to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_KERNEL_H
#define KGEN_RUNTIME_KERNEL_H

#include "runtime/Spec.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kgen::rt {

struct KernelImage {
  Spec spec;
  std::shared_ptr<const std::string> ptx;
  uint64_t ptxHash = 0;
  std::shared_ptr<const std::string> cubin; ///< null: none
  uint64_t cubinHash = 0;
  int sm = 0;                ///< 90 for sm_90 and sm_90a
  bool archSpecific = false; ///< sm_90a: runs on sm_90 only
};

} // namespace kgen::rt

struct kgen_kernel {
  std::vector<kgen::rt::KernelImage> images; ///< at least one
  std::string name;                          ///< "<op>_<dtype>"
  uint64_t id = 0; ///< unique in the process, never reused
  /// The first image's spec: what the queries describe.
  const kgen::rt::Spec &spec() const { return images.front().spec; }
};

#endif // KGEN_RUNTIME_KERNEL_H
