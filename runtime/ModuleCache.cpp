//===- ModuleCache.cpp - Loaded modules and functions ---------------------===//

#include "runtime/ModuleCache.h"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace kgen::rt {
namespace {

constexpr int DefaultSharedLimit = 48 * 1024;
constexpr size_t LogSize = 16 * 1024;

struct Function {
  CUfunction fn = nullptr;
  int maxThreads = 0;
  int sharedLimit = DefaultSharedLimit; // dynamic shared bytes allowed now
};

struct Module {
  /// Held while the module loads (the driver may JIT its PTX for a long
  /// time) and while its functions change; the cache's lock is not.
  std::mutex mutex;
  std::shared_ptr<const std::string> image;
  CUmodule module = nullptr;
  int multiprocessors = 0; // of the context's device
  std::map<std::string, Function> functions;
  /// KGEN_ERROR_JIT: the driver refused the image here (kept, so that a
  /// launch falling back from a cubin to PTX does not retry it each time).
  kgen_status failure = KGEN_OK;
  std::string failureText;
};

struct Cache {
  std::mutex mutex;
  // Key: (PTX hash, context key). Several texts may share a hash.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<std::unique_ptr<Module>>>
      modules;
  std::map<uint64_t, int> archs; // context key -> compute capability
};

Cache &cache() {
  // Leaked on purpose: launches may run during static destruction.
  static Cache *c = new Cache();
  return *c;
}

std::string trimLog(const char *log) {
  std::string s(log, strnlen(log, LogSize));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == 0))
    s.pop_back();
  return s;
}

kgen_status loadModule(const Driver &d, const std::string &image, CUmodule &out,
                       std::string &err) {
  std::vector<char> errorLog(LogSize, 0), infoLog(LogSize, 0);
  CUjit_option options[] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(LogSize),
                    infoLog.data(), reinterpret_cast<void *>(LogSize)};
  CUresult r = d.moduleLoadDataEx(&out, image.c_str(), 4, options, values);
  if (r == CUDA_SUCCESS)
    return KGEN_OK;
  err = d.errorText(r, "cuModuleLoadDataEx");
  std::string jitErrors = trimLog(errorLog.data());
  std::string log = jitErrors.empty() ? trimLog(infoLog.data()) : jitErrors;
  if (!log.empty())
    err += "; JIT log:\n" + log;
  // Out-of-memory and the like are not compilation problems.
  bool jit = r == CUDA_ERROR_INVALID_PTX || r == CUDA_ERROR_INVALID_IMAGE ||
             r == CUDA_ERROR_NO_BINARY_FOR_GPU ||
             r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
             r == CUDA_ERROR_JIT_COMPILER_NOT_FOUND ||
             r == CUDA_ERROR_INVALID_SOURCE || !jitErrors.empty();
  return jit ? KGEN_ERROR_JIT : KGEN_ERROR_CUDA;
}

kgen_status loadFunction(const Driver &d, CUmodule module,
                         const std::string &entry, Function &out,
                         std::string &err) {
  CUresult r = d.moduleGetFunction(&out.fn, module, entry.c_str());
  if (r != CUDA_SUCCESS) {
    err = d.errorText(r, "cuModuleGetFunction") + " for entry '" + entry + "'";
    return KGEN_ERROR_CUDA;
  }
  r = d.funcGetAttribute(&out.maxThreads,
                         CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, out.fn);
  if (r != CUDA_SUCCESS) {
    err = d.errorText(r, "cuFuncGetAttribute") + " for entry '" + entry + "'";
    return KGEN_ERROR_CUDA;
  }
  return KGEN_OK;
}

} // namespace

// Context handles can be reused after cuCtxDestroy; the context id cannot,
// so it keeps stale modules from being picked up.
uint64_t contextKey(const Driver &d, CUcontext ctx) {
  unsigned long long id = 0;
  if (d.ctxGetId && d.ctxGetId(ctx, &id) == CUDA_SUCCESS)
    return id;
  return reinterpret_cast<uintptr_t>(ctx);
}

uint64_t hashText(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

kgen_status getFunction(const Driver &d, CUcontext ctx, uint64_t ctxKey,
                        const std::shared_ptr<const std::string> &image,
                        uint64_t imageHash, const Variant &variant,
                        CUfunction &out, int &multiprocessors,
                        std::string &err) {
  Cache &c = cache();
  // The cache's lock only finds or adds the module; its load, under the
  // module's own lock, blocks only launches of that module.
  Module *module = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto &bucket = c.modules[{imageHash, ctxKey}];
    for (auto &m : bucket)
      if (m->image == image || *m->image == *image)
        module = m.get();
    if (!module) {
      bucket.push_back(std::make_unique<Module>());
      module = bucket.back().get();
      module->image = image;
    }
  }
  std::lock_guard<std::mutex> lock(module->mutex);
  if (!module->module && !module->failure) {
    CUdevice dev;
    CUresult r = d.ctxGetDevice(&dev);
    if (r == CUDA_SUCCESS)
      r = d.deviceGetAttribute(&module->multiprocessors,
                               CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    if (r != CUDA_SUCCESS) {
      err = d.errorText(r, "the device's multiprocessor count");
      return KGEN_ERROR_CUDA;
    }
    // A JIT failure is kept; other failures (out of memory) are retried.
    if (kgen_status st = loadModule(d, *image, module->module, err)) {
      module->module = nullptr;
      if (st == KGEN_ERROR_JIT) {
        module->failure = st;
        module->failureText = err;
      }
      return st;
    }
  }
  if (module->failure) {
    err = module->failureText;
    return module->failure;
  }

  auto it = module->functions.find(variant.entry);
  if (it == module->functions.end()) {
    Function fn;
    if (kgen_status st =
            loadFunction(d, module->module, variant.entry, fn, err))
      return st;
    it = module->functions.emplace(variant.entry, fn).first;
  }
  Function &fn = it->second;
  if (variant.block > fn.maxThreads) {
    err = "entry '" + variant.entry + "' can run at most " +
          std::to_string(fn.maxThreads) +
          " threads per block on this device, but the spec asks for " +
          std::to_string(variant.block);
    return KGEN_ERROR_CUDA;
  }
  // Above 48 KiB of dynamic shared memory the kernel must opt in.
  if (variant.sharedBytes > fn.sharedLimit) {
    CUresult r = d.funcSetAttribute(
        fn.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        variant.sharedBytes);
    if (r != CUDA_SUCCESS) {
      err = d.errorText(r, "cuFuncSetAttribute") + " (entry '" + variant.entry +
            "' asks for " + std::to_string(variant.sharedBytes) +
            " bytes of dynamic shared memory)";
      return KGEN_ERROR_CUDA;
    }
    fn.sharedLimit = variant.sharedBytes;
  }
  out = fn.fn;
  multiprocessors = module->multiprocessors;
  return KGEN_OK;
}

kgen_status contextArch(const Driver &d, uint64_t key, int &sm,
                        std::string &err) {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.archs.find(key);
  if (it != c.archs.end()) {
    sm = it->second;
    return KGEN_OK;
  }
  CUdevice dev;
  int major = 0, minor = 0;
  CUresult r = d.ctxGetDevice(&dev);
  if (r == CUDA_SUCCESS)
    r = d.deviceGetAttribute(&major,
                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (r == CUDA_SUCCESS)
    r = d.deviceGetAttribute(&minor,
                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  if (r != CUDA_SUCCESS) {
    err = d.errorText(r, "the device's compute capability");
    return KGEN_ERROR_CUDA;
  }
  sm = major * 10 + minor;
  c.archs.emplace(key, sm);
  return KGEN_OK;
}

} // namespace kgen::rt
