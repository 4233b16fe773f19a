//===- Driver.h - The CUDA driver, opened with dlopen -----------*- C++ -*-===//
//
// The kgen runtime never links libcuda: it opens libcuda.so.1 at run time and
// resolves the entry points it needs into a table of function pointers. The
// table is loaded once per process; GPU tests use it too, to allocate, copy
// and time.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_DRIVER_H
#define KGEN_RUNTIME_DRIVER_H

#include "runtime/kgen_runtime.h"

#include <cuda.h>

#include <string>

namespace kgen::rt {

/// Function pointers into libcuda.so.1. The types come from cuda.h's
/// prototypes (decltype only: nothing is linked); the names are those of the
/// versioned symbols that cuda.h's macros select (cuMemAlloc -> cuMemAlloc_v2).
struct Driver {
  decltype(&::cuInit) init;
  decltype(&::cuGetErrorName) getErrorName;
  decltype(&::cuGetErrorString) getErrorString;
  decltype(&::cuDeviceGetCount) deviceGetCount;
  decltype(&::cuDeviceGet) deviceGet;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute;
  decltype(&::cuDevicePrimaryCtxRetain) devicePrimaryCtxRetain;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent;
  decltype(&::cuCtxSetCurrent) ctxSetCurrent;
  decltype(&::cuCtxGetDevice) ctxGetDevice;
  decltype(&::cuCtxSynchronize) ctxSynchronize;
  decltype(&::cuModuleLoadDataEx) moduleLoadDataEx;
  decltype(&::cuModuleUnload) moduleUnload;
  decltype(&::cuModuleGetFunction) moduleGetFunction;
  decltype(&::cuFuncGetAttribute) funcGetAttribute;
  decltype(&::cuFuncSetAttribute) funcSetAttribute;
  decltype(&::cuLaunchKernel) launchKernel;
  decltype(&::cuMemAlloc) memAlloc;
  decltype(&::cuMemFree) memFree;
  decltype(&::cuMemcpyHtoD) memcpyHtoD;
  decltype(&::cuMemcpyDtoH) memcpyDtoH;
  decltype(&::cuMemcpyDtoD) memcpyDtoD;
  decltype(&::cuMemsetD8) memsetD8;
  decltype(&::cuStreamSynchronize) streamSynchronize;
  decltype(&::cuEventCreate) eventCreate;
  decltype(&::cuEventRecord) eventRecord;
  decltype(&::cuEventSynchronize) eventSynchronize;
  decltype(&::cuEventElapsedTime) eventElapsedTime;
  decltype(&::cuEventDestroy) eventDestroy;
  /// Optional (CUDA 12.0+); nullptr when the driver lacks them.
  decltype(&::cuCtxGetId) ctxGetId;
  decltype(&::cuLaunchKernelEx) launchKernelEx;

  /// "" if `result` is CUDA_SUCCESS, else
  /// "<call> failed: CUDA_ERROR_X (description)".
  std::string errorText(CUresult result, const char *call) const;
};

/// Loads the driver once per process (thread-safe) and calls cuInit(0).
/// Returns nullptr on failure, with the reason in *err (if err is non-null)
/// and in *status: KGEN_ERROR_NO_DRIVER if libcuda.so.1 or a symbol is
/// missing, KGEN_ERROR_NO_DEVICE / KGEN_ERROR_CUDA if cuInit failed. The
/// result never changes afterwards.
const Driver *driver(std::string *err = nullptr, kgen_status *status = nullptr);

/// Test hook: open `path` instead of libcuda.so.1. Only effective before the
/// first call to driver(); returns false if it came too late.
bool setDriverLibraryForTesting(const char *path);

} // namespace kgen::rt

#endif // KGEN_RUNTIME_DRIVER_H
