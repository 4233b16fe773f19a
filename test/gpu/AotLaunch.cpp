//===- AotLaunch.cpp - The GPU tests through generated launchers ----------===//
//
// Built with KGEN_GPU_TEST_AOT: kgen-gpu-tests links kgen_gpu_aot, the
// `kgen aot` library of every bundled op (test/gpu/CMakeLists.txt), and
// launches each kernel of the bundle that the library also has through its
// generated launcher. At the end it says which library kernels ran.
//
//===----------------------------------------------------------------------===//
#include "GpuCommon.h"

#include "kgen_gpu_aot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

namespace kgen::gpu {

AotLaunch findAotLaunch(const std::string &op, const std::string &dtype,
                        int64_t length) {
  for (size_t i = 0; i < kgen_gpu_aot_entry_count; ++i) {
    const kgen_gpu_aot_entry &e = kgen_gpu_aot_entries[i];
    if (op == e.op && dtype == e.dtype && length == e.length)
      return e.launch;
  }
  return nullptr;
}

namespace {

/// Prints, after the tests, how many library kernels were launched.
class AotReport : public ::testing::Environment {
  void TearDown() override {
    if (aotLaunches().empty() && !std::getenv("KGEN_GPU_TEST_AOT_ALL"))
      return; // nothing ran (no GPU, or only the manifest checks)
    size_t ran = 0, shown = 0;
    int64_t launches = 0;
    std::string missing;
    for (size_t i = 0; i < kgen_gpu_aot_entry_count; ++i) {
      const kgen_gpu_aot_entry &e = kgen_gpu_aot_entries[i];
      auto it = aotLaunches().find(e.launch);
      if (it == aotLaunches().end()) {
        if (shown++ < 8)
          missing += std::string(missing.empty() ? "" : ", ") + e.op + " " +
                     e.dtype + " " + std::to_string(e.length);
        continue;
      }
      ++ran;
      launches += it->second;
    }
    // bench/aot_check.sh runs shapes that reach every library kernel.
    if (std::getenv("KGEN_GPU_TEST_AOT_ALL") && ran != kgen_gpu_aot_entry_count)
      ADD_FAILURE() << "generated launchers: " << ran << " of "
                    << kgen_gpu_aot_entry_count
                    << " library kernels launched; not launched: " << missing;
    std::cout << "[kgen-gpu] generated launchers: " << ran << " of "
              << kgen_gpu_aot_entry_count << " library kernels launched ("
              << launches << " launches)"
              << (missing.empty() ? "" : "; not launched: " + missing)
              << (shown > 8 ? ", ..." : "") << "\n";
  }
};

[[maybe_unused]] ::testing::Environment *const report =
    ::testing::AddGlobalTestEnvironment(new AotReport);

} // namespace

} // namespace kgen::gpu
