//===- Driver.cpp - The CUDA driver, opened with dlopen -------------------===//

#include "runtime/Driver.h"

#include <dlfcn.h>

#include <mutex>

namespace kgen::rt {
namespace {

constexpr const char *DefaultLibrary = "libcuda.so.1";

struct LoadState {
  std::once_flag once;
  std::mutex pathMutex;
  std::string path = DefaultLibrary;
  bool started = false;
  Driver table{};
  const Driver *result = nullptr;
  kgen_status status = KGEN_OK;
  std::string error;
};

LoadState &state() {
  // Leaked on purpose: launches may run during static destruction.
  static LoadState *s = new LoadState();
  return *s;
}

template <typename Fn>
bool resolve(void *lib, const char *name, Fn &fn, std::string &missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn)
    missing = name;
  return fn != nullptr;
}

void load(LoadState &s) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(s.pathMutex);
    s.started = true;
    path = s.path;
  }
  // Never dlclose'd: function pointers must outlive every caller.
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    s.status = KGEN_ERROR_NO_DRIVER;
    s.error = "kgen runtime: cannot load the CUDA driver (" + path +
              "): " + (why ? why : "unknown error");
    return;
  }
  Driver &d = s.table;
  std::string missing;
  // Plain dlsym of the versioned names (not cuGetProcAddress) keeps this
  // working with every driver that has them.
  bool ok =
      resolve(lib, "cuInit", d.init, missing) &&
      resolve(lib, "cuGetErrorName", d.getErrorName, missing) &&
      resolve(lib, "cuGetErrorString", d.getErrorString, missing) &&
      resolve(lib, "cuDeviceGetCount", d.deviceGetCount, missing) &&
      resolve(lib, "cuDeviceGet", d.deviceGet, missing) &&
      resolve(lib, "cuDeviceGetAttribute", d.deviceGetAttribute, missing) &&
      resolve(lib, "cuDevicePrimaryCtxRetain", d.devicePrimaryCtxRetain,
              missing) &&
      resolve(lib, "cuCtxGetCurrent", d.ctxGetCurrent, missing) &&
      resolve(lib, "cuCtxSetCurrent", d.ctxSetCurrent, missing) &&
      resolve(lib, "cuCtxGetDevice", d.ctxGetDevice, missing) &&
      resolve(lib, "cuCtxSynchronize", d.ctxSynchronize, missing) &&
      resolve(lib, "cuModuleLoadDataEx", d.moduleLoadDataEx, missing) &&
      resolve(lib, "cuModuleUnload", d.moduleUnload, missing) &&
      resolve(lib, "cuModuleGetFunction", d.moduleGetFunction, missing) &&
      resolve(lib, "cuFuncGetAttribute", d.funcGetAttribute, missing) &&
      resolve(lib, "cuFuncSetAttribute", d.funcSetAttribute, missing) &&
      resolve(lib, "cuLaunchKernel", d.launchKernel, missing) &&
      resolve(lib, "cuMemAlloc_v2", d.memAlloc, missing) &&
      resolve(lib, "cuMemFree_v2", d.memFree, missing) &&
      resolve(lib, "cuMemcpyHtoD_v2", d.memcpyHtoD, missing) &&
      resolve(lib, "cuMemcpyDtoH_v2", d.memcpyDtoH, missing) &&
      resolve(lib, "cuMemcpyDtoD_v2", d.memcpyDtoD, missing) &&
      resolve(lib, "cuMemsetD8_v2", d.memsetD8, missing) &&
      resolve(lib, "cuStreamSynchronize", d.streamSynchronize, missing) &&
      resolve(lib, "cuEventCreate", d.eventCreate, missing) &&
      resolve(lib, "cuEventRecord", d.eventRecord, missing) &&
      resolve(lib, "cuEventSynchronize", d.eventSynchronize, missing) &&
      resolve(lib, "cuEventDestroy_v2", d.eventDestroy, missing);
  // cuEventElapsedTime_v2 appeared in CUDA 12.8 with the same signature.
  if (ok && !resolve(lib, "cuEventElapsedTime_v2", d.eventElapsedTime, missing))
    ok = resolve(lib, "cuEventElapsedTime", d.eventElapsedTime, missing);
  if (!ok) {
    s.status = KGEN_ERROR_NO_DRIVER;
    s.error = "kgen runtime: the CUDA driver (" + path +
              ") is too old: it lacks " + missing;
    return;
  }
  std::string ignored;
  resolve(lib, "cuCtxGetId", d.ctxGetId, ignored);
  resolve(lib, "cuLaunchKernelEx", d.launchKernelEx, ignored);

  CUresult r = d.init(0);
  if (r != CUDA_SUCCESS) {
    s.status =
        r == CUDA_ERROR_NO_DEVICE ? KGEN_ERROR_NO_DEVICE : KGEN_ERROR_CUDA;
    s.error = "kgen runtime: " + d.errorText(r, "cuInit");
    return;
  }
  s.result = &d;
}

} // namespace

std::string Driver::errorText(CUresult result, const char *call) const {
  if (result == CUDA_SUCCESS)
    return "";
  const char *name = nullptr;
  const char *text = nullptr;
  if (getErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = nullptr;
  if (getErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = nullptr;
  std::string msg = std::string(call) + " failed: ";
  msg += name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  if (text)
    msg += std::string(" (") + text + ")";
  return msg;
}

const Driver *driver(std::string *err, kgen_status *status) {
  LoadState &s = state();
  std::call_once(s.once, [&s] { load(s); });
  if (err)
    *err = s.error;
  if (status)
    *status = s.status;
  return s.result;
}

bool setDriverLibraryForTesting(const char *path) {
  LoadState &s = state();
  std::lock_guard<std::mutex> lock(s.pathMutex);
  if (s.started || !path)
    return false;
  s.path = path;
  return true;
}

} // namespace kgen::rt
