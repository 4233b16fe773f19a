//===- FakeCuda.cpp - A fake libcuda for tests without a GPU --------------===//

#include "FakeCuda.h"

#include <chrono>
#include <thread>

#include <cuda.h>

#include <cstring>

namespace {

FakeCudaState &state() {
  static FakeCudaState *s = new FakeCudaState();
  return *s;
}

thread_local CUcontext current = nullptr;

CUresult ok() { return CUDA_SUCCESS; }

} // namespace

extern "C" {

FakeCudaState *fakeCudaState() { return &state(); }

CUresult cuInit(unsigned) { return ok(); }

CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
  case CUDA_ERROR_INVALID_VALUE:
    *s = "CUDA_ERROR_INVALID_VALUE";
    return ok();
  case CUDA_ERROR_INVALID_PTX:
    *s = "CUDA_ERROR_INVALID_PTX";
    return ok();
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    return ok();
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult r, const char **s) {
  if (r == CUDA_ERROR_INVALID_PTX) {
    *s = "a PTX JIT compilation failed";
    return ok();
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDeviceGetCount(int *n) {
  *n = state().deviceCount;
  return ok();
}

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return ok();
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice) {
  switch (attr) {
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *v = state().multiprocessors;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = state().computeCapability / 10;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *v = state().computeCapability % 10;
    break;
  default:
    *v = 0;
  }
  return ok();
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().retains;
  *ctx = static_cast<CUcontext>(FakeContext);
  return ok();
}

CUresult cuCtxGetCurrent(CUcontext *ctx) {
  *ctx = current;
  return ok();
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  current = ctx;
  return ok();
}

CUresult cuCtxGetDevice(CUdevice *d) {
  *d = state().currentDevice;
  return ok();
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id) {
  *id = reinterpret_cast<uintptr_t>(ctx) + 1000;
  return ok();
}

CUresult cuCtxSynchronize() { return ok(); }

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned numOptions, CUjit_option *options,
                            void **values) {
  if (std::strstr(static_cast<const char *>(image), "BROKEN")) {
    for (unsigned i = 0; i < numOptions; ++i)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        std::strcpy(static_cast<char *>(values[i]),
                    "ptxas application ptx input, line 3; fatal   : Parsing "
                    "error near 'BROKEN'\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  std::string slow;
  int slowMs;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    slow = state().slowImage;
    slowMs = state().slowLoadMs;
  }
  if (!slow.empty() &&
      std::strstr(static_cast<const char *>(image), slow.c_str())) {
    ++state().slowLoadsStarted;
    std::this_thread::sleep_for(std::chrono::milliseconds(slowMs));
  }
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().moduleLoads;
  const char *text = static_cast<const char *>(image);
  if (std::strncmp(text,
                   "\x7f"
                   "ELF",
                   4) == 0) {
    state().loadedImages.push_back(std::string("cubin:") + (text + 4));
  } else {
    const char *mark = std::strstr(text, "// image ");
    std::string word = mark ? std::string(mark + 9) : std::string();
    state().loadedImages.push_back("ptx:" +
                                   word.substr(0, word.find_first_of(" \n")));
  }
  *module = reinterpret_cast<CUmodule>(uintptr_t(state().moduleLoads));
  return ok();
}

CUresult cuModuleUnload(CUmodule) { return ok(); }

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule, const char *name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().functions.push_back(name);
  *fn = reinterpret_cast<CUfunction>(uintptr_t(state().functions.size()));
  return ok();
}

CUresult cuFuncGetAttribute(int *v, CUfunction_attribute attr, CUfunction) {
  *v = attr == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
           ? state().maxThreadsPerBlock
           : 0;
  return ok();
}

CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute attr, int v) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    state().sharedAttributes.emplace_back(
        state().functions[reinterpret_cast<uintptr_t>(fn) - 1], v);
  return ok();
}

CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        CUstream stream, void **params, void **) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (state().launchResult)
    return static_cast<CUresult>(state().launchResult);
  FakeLaunch l{state().functions[reinterpret_cast<uintptr_t>(fn) - 1],
               {gx, gy, gz},
               {bx, by, bz},
               shared,
               stream,
               {}};
  for (size_t i = 0; i < state().paramSlots; ++i) {
    uint64_t v;
    std::memcpy(&v, params[i], sizeof(v));
    l.params.push_back(v);
  }
  state().launches.push_back(std::move(l));
  return ok();
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction fn,
                          void **params, void **extra) {
  CUresult r =
      cuLaunchKernel(fn, config->gridDimX, config->gridDimY, config->gridDimZ,
                     config->blockDimX, config->blockDimY, config->blockDimZ,
                     config->sharedMemBytes, config->hStream, params, extra);
  std::lock_guard<std::mutex> lock(state().mutex);
  if (r == CUDA_SUCCESS)
    for (unsigned i = 0; i < config->numAttrs; ++i)
      if (config->attrs[i].id ==
          CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
        state().launches.back().programmaticDependent =
            config->attrs[i].value.programmaticStreamSerializationAllowed;
  return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t) {
  *p = 0;
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemFree_v2(CUdeviceptr) { return ok(); }
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t) { return ok(); }
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t) { return ok(); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr, CUdeviceptr, size_t) { return ok(); }
CUresult cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t) { return ok(); }
CUresult cuStreamSynchronize(CUstream) { return ok(); }
CUresult cuEventCreate(CUevent *, unsigned) { return ok(); }
CUresult cuEventRecord(CUevent, CUstream) { return ok(); }
CUresult cuEventSynchronize(CUevent) { return ok(); }
// Only the old name, to exercise the fallback from cuEventElapsedTime_v2
// (cuda.h maps the name to _v2).
#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *ms, CUevent, CUevent) {
  *ms = 0;
  return ok();
}
CUresult cuEventDestroy_v2(CUevent) { return ok(); }

} // extern "C"
