//===- FakeCuda.h - A fake libcuda for tests without a GPU ------*- C++ -*-===//
//
// FakeCuda.cpp builds a shared library that exports the driver entry points
// the runtime resolves. It records what the runtime asks for, so the launch
// path (context checks, module cache, ABI packing) is testable in CI.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_TEST_RUNTIME_FAKECUDA_H
#define KGEN_TEST_RUNTIME_FAKECUDA_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

struct FakeLaunch {
  std::string entry;
  unsigned grid[3];
  unsigned block[3];
  unsigned sharedBytes;
  void *stream;
  std::vector<uint64_t> params; // first 8 bytes behind each param pointer
  /// Launched through cuLaunchKernelEx with programmatic stream
  /// serialization allowed.
  bool programmaticDependent = false;
};

struct FakeCudaState {
  std::mutex mutex;
  // Knobs.
  int deviceCount = 1;
  int maxThreadsPerBlock = 1024;
  int multiprocessors = 0;    // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  int launchResult = 0;       // CUresult cuLaunchKernel returns
  int computeCapability = 90; // major * 10 + minor of every device
  int currentDevice = 0;      // what cuCtxGetDevice gives
  size_t paramSlots = 0;      // params cuLaunchKernel records
  /// A module load whose image holds this text sleeps slowLoadMs first,
  /// as the driver's JIT of a large PTX does (outside the fake's lock).
  std::string slowImage;
  int slowLoadMs = 0;
  std::atomic<int> slowLoadsStarted{0};
  // Records.
  int retains = 0;
  int moduleLoads = 0;
  /// Per module load: "cubin:<bytes after the ELF magic>" or
  /// "ptx:<the word after a '// image ' comment>".
  std::vector<std::string> loadedImages;
  std::vector<std::string> functions; // CUfunction i+1 is functions[i]
  std::vector<std::pair<std::string, int>> sharedAttributes;
  std::vector<FakeLaunch> launches;

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    deviceCount = 1;
    maxThreadsPerBlock = 1024;
    multiprocessors = 0;
    launchResult = 0;
    computeCapability = 90;
    currentDevice = 0;
    loadedImages.clear();
    paramSlots = 0;
    slowImage.clear();
    slowLoadMs = 0;
    slowLoadsStarted = 0;
    moduleLoads = 0;
    sharedAttributes.clear();
    launches.clear();
  }
};

/// The fake's context handle for device 0.
inline void *const FakeContext = reinterpret_cast<void *>(0xC0);

/// Exported by the fake library (resolve it with dlsym).
extern "C" FakeCudaState *fakeCudaState();

#endif // KGEN_TEST_RUNTIME_FAKECUDA_H
