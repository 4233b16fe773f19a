//===- Runtime.cpp - The kgen runtime C API -------------------------------===//
//
// Every entry point catches everything: nothing may throw across the C API.
//
//===----------------------------------------------------------------------===//

#include "runtime/kgen_runtime.h"

#include "runtime/Args.h"
#include "runtime/Driver.h"
#include "runtime/ModuleCache.h"
#include "runtime/Spec.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

using namespace kgen::rt;

struct kgen_kernel {
  Spec spec;
  std::string name;
  std::shared_ptr<const std::string> ptx;
  uint64_t ptxHash = 0;
};

namespace {

thread_local std::string lastError;

kgen_status fail(kgen_status st, std::string msg) {
  lastError = std::move(msg);
  return st;
}

kgen_status ok() {
  lastError.clear();
  return KGEN_OK;
}

/// Runs `body`, turning any exception (in practice std::bad_alloc) into a
/// status.
template <typename Body> kgen_status guarded(Body &&body) {
  try {
    lastError.clear();
    return body();
  } catch (const std::exception &e) {
    try {
      return fail(KGEN_ERROR_INTERNAL,
                  std::string("kgen: internal error: ") + e.what());
    } catch (...) {
    }
  } catch (...) {
  }
  return KGEN_ERROR_INTERNAL;
}

/// Drops trailing NULs, so that callers may pass sizeof(text).
std::string_view trimNuls(const char *text, size_t len) {
  while (len && text[len - 1] == '\0')
    --len;
  return std::string_view(text, len);
}

/// Names declared with ".entry NAME" in `ptx`.
std::set<std::string, std::less<>> ptxEntries(std::string_view ptx) {
  std::set<std::string, std::less<>> entries;
  auto isNameChar = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '%';
  };
  constexpr std::string_view Directive = ".entry";
  for (size_t at = ptx.find(Directive); at != std::string_view::npos;
       at = ptx.find(Directive, at + 1)) {
    size_t p = at + Directive.size();
    if (p >= ptx.size() ||
        !(ptx[p] == ' ' || ptx[p] == '\t' || ptx[p] == '\n' || ptx[p] == '\r'))
      continue;
    while (p < ptx.size() && (ptx[p] == ' ' || ptx[p] == '\t' ||
                              ptx[p] == '\n' || ptx[p] == '\r'))
      ++p;
    size_t start = p;
    while (p < ptx.size() && isNameChar(ptx[p]))
      ++p;
    if (p > start)
      entries.emplace(ptx.substr(start, p - start));
  }
  return entries;
}

kgen_status createKernel(const char *ptx, size_t ptxLen, const char *specJson,
                         size_t specLen, kgen_kernel **out) {
  if (!out)
    return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: out is NULL");
  *out = nullptr;
  if (!ptx || !specJson)
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                ptx ? "kgen: spec_json is NULL" : "kgen: ptx is NULL");
  std::string_view ptxText = trimNuls(ptx, ptxLen);
  if (ptxText.empty())
    return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: the PTX text is empty");
  size_t nul = ptxText.find('\0');
  if (nul != std::string_view::npos)
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                "kgen: the PTX text contains a NUL byte at offset " +
                    std::to_string(nul));

  auto kernel = std::make_unique<kgen_kernel>();
  std::string err;
  if (!parseSpec(trimNuls(specJson, specLen), kernel->spec, err))
    return fail(KGEN_ERROR_INVALID_SPEC, "kgen: invalid spec: " + err);
  kernel->name = kernel->spec.name();
  // Catch a spec/PTX mismatch now rather than at the first launch on a GPU.
  auto entries = ptxEntries(ptxText);
  for (const Variant &v : kernel->spec.variants)
    if (!entries.count(v.entry))
      return fail(KGEN_ERROR_INVALID_SPEC,
                  "kgen: " + kernel->name + ": variant entry '" + v.entry +
                      "' is not defined in the PTX (no '.entry " + v.entry +
                      "')");
  kernel->ptx = std::make_shared<const std::string>(ptxText);
  kernel->ptxHash = hashText(ptxText);
  *out = kernel.release();
  return ok();
}

/// KGEN_GRID_DEPENDENCY=0 launches every kernel plainly (to measure what
/// programmatic dependent launch buys, or to rule it out).
bool gridDependencyEnabled() {
  static const bool enabled = [] {
    const char *v = std::getenv("KGEN_GRID_DEPENDENCY");
    return !v || std::string_view(v) != "0";
  }();
  return enabled;
}

kgen_status launch(const kgen_kernel *kernel, const kgen_arg *args,
                   size_t nargs, int64_t rows, void *stream) {
  if (!kernel)
    return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: kernel is NULL");
  BoundArgs bound;
  std::string err;
  if (kgen_status st = bindArgs(kernel->spec, args, nargs, rows, bound, err))
    return fail(st, std::move(err));
  if (rows == 0)
    return ok();

  kgen_status st;
  const Driver *d = driver(&err, &st);
  if (!d)
    return fail(st, std::move(err));
  std::string prefix = "kgen: " + kernel->name + ": ";
  CUcontext ctx = nullptr;
  CUresult r = d->ctxGetCurrent(&ctx);
  if (r != CUDA_SUCCESS)
    return fail(KGEN_ERROR_CUDA, prefix + d->errorText(r, "cuCtxGetCurrent"));
  if (!ctx)
    return fail(KGEN_ERROR_NO_CONTEXT,
                prefix + "no CUDA context is current on this thread; make one "
                         "current first (e.g. with kgen_device_open)");

  const Variant &variant = kernel->spec.variants[bound.variant];
  CUfunction fn;
  int multiprocessors;
  if (kgen_status st = getFunction(*d, ctx, kernel->ptx, kernel->ptxHash,
                                   variant, fn, multiprocessors, err))
    return fail(st, prefix + err);
  placeRows(kernel->spec, bound, multiprocessors);

  std::vector<uint64_t> storage;
  std::vector<void *> params;
  packAbi(kernel->spec, variant, bound, storage, params);
  if (kernel->spec.gridDependency && d->launchKernelEx &&
      gridDependencyEnabled()) {
    // A programmatic dependent of the kernel before it on the stream: its
    // blocks may be placed while that one finishes; each waits at entry
    // (griddepcontrol.wait) until it has completed.
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = bound.gridX;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = bound.blockX;
    config.blockDimY = bound.blockY;
    config.blockDimZ = 1;
    config.sharedMemBytes = variant.sharedBytes;
    config.hStream = static_cast<CUstream>(stream);
    config.attrs = &attr;
    config.numAttrs = 1;
    r = d->launchKernelEx(&config, fn, params.data(), nullptr);
  } else {
    r = d->launchKernel(fn, bound.gridX, 1, 1, bound.blockX, bound.blockY, 1,
                        variant.sharedBytes, static_cast<CUstream>(stream),
                        params.data(), nullptr);
  }
  if (r != CUDA_SUCCESS)
    return fail(KGEN_ERROR_CUDA, prefix + d->errorText(r, "cuLaunchKernel") +
                                     " (entry '" + variant.entry + "', grid " +
                                     std::to_string(bound.gridX) + ", block " +
                                     std::to_string(bound.blockX) + " x " +
                                     std::to_string(bound.blockY) + ", " +
                                     std::to_string(variant.sharedBytes) +
                                     " bytes of shared memory)");
  return ok();
}

kgen_status deviceOpen(int ordinal, void **contextOut) {
  kgen_status st;
  std::string err;
  const Driver *d = driver(&err, &st);
  if (!d)
    return fail(st, std::move(err));
  int count = 0;
  CUresult r = d->deviceGetCount(&count);
  if (r != CUDA_SUCCESS)
    return fail(KGEN_ERROR_CUDA,
                "kgen: " + d->errorText(r, "cuDeviceGetCount"));
  if (ordinal < 0 || ordinal >= count)
    return fail(KGEN_ERROR_NO_DEVICE,
                "kgen: device ordinal " + std::to_string(ordinal) +
                    " is out of range (" + std::to_string(count) +
                    " CUDA device" + (count == 1 ? "" : "s") + ")");

  // Retain each primary context once: repeated opens must not pile up
  // references that nobody releases.
  static std::mutex mutex;
  static auto *retained = new std::map<int, CUcontext>();
  CUcontext ctx = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = retained->find(ordinal);
    if (it != retained->end()) {
      ctx = it->second;
    } else {
      CUdevice dev;
      r = d->deviceGet(&dev, ordinal);
      if (r != CUDA_SUCCESS)
        return fail(KGEN_ERROR_CUDA, "kgen: " + d->errorText(r, "cuDeviceGet"));
      r = d->devicePrimaryCtxRetain(&ctx, dev);
      if (r != CUDA_SUCCESS)
        return fail(KGEN_ERROR_CUDA,
                    "kgen: " + d->errorText(r, "cuDevicePrimaryCtxRetain"));
      retained->emplace(ordinal, ctx);
    }
  }
  r = d->ctxSetCurrent(ctx);
  if (r != CUDA_SUCCESS)
    return fail(KGEN_ERROR_CUDA, "kgen: " + d->errorText(r, "cuCtxSetCurrent"));
  if (contextOut)
    *contextOut = ctx;
  return ok();
}

} // namespace

extern "C" {

const char *kgen_last_error(void) { return lastError.c_str(); }

kgen_status kgen_kernel_create(const char *ptx, size_t ptx_len,
                               const char *spec_json, size_t spec_len,
                               kgen_kernel **out) {
  return guarded(
      [&] { return createKernel(ptx, ptx_len, spec_json, spec_len, out); });
}

void kgen_kernel_destroy(kgen_kernel *kernel) { delete kernel; }

kgen_status kgen_kernel_get_info(const kgen_kernel *kernel,
                                 kgen_kernel_info *out) {
  return guarded([&] {
    if (!kernel || !out)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: kernel or out is NULL");
    const Spec &s = kernel->spec;
    *out = {s.op.c_str(),   s.dtype.c_str(), s.arch.c_str(),
            s.hash.c_str(), s.params.size(), s.variants.size()};
    return ok();
  });
}

kgen_status kgen_kernel_get_param(const kgen_kernel *kernel, size_t index,
                                  kgen_param_info *out) {
  return guarded([&] {
    if (!kernel || !out)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: kernel or out is NULL");
    if (index >= kernel->spec.params.size())
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: " + kernel->name + ": param index " +
                      std::to_string(index) + " is out of range (" +
                      std::to_string(kernel->spec.params.size()) + " params)");
    const Param &p = kernel->spec.params[index];
    bool tensor = p.kind == KGEN_ARG_TENSOR;
    *out = {p.name.c_str(),
            p.kind,
            p.dtype,
            tensor && p.access == Param::Access::Vector,
            tensor && p.writes,
            tensor && p.rowLength.dimParam < 0 ? p.rowLength.scale : 0,
            tensor ? p.rowLength.text.c_str() : ""};
    return ok();
  });
}

kgen_status kgen_kernel_find_param(const kgen_kernel *kernel, const char *name,
                                   size_t *index_out) {
  return guarded([&] {
    if (!kernel || !name || !index_out)
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: kernel, name or index_out is NULL");
    int idx = kernel->spec.findParam(name);
    if (idx < 0)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: " + kernel->name +
                                                   ": no param named '" +
                                                   std::string(name) + "'");
    *index_out = static_cast<size_t>(idx);
    return ok();
  });
}

kgen_status kgen_kernel_get_variant(const kgen_kernel *kernel, size_t index,
                                    kgen_variant_info *out) {
  return guarded([&] {
    if (!kernel || !out)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: kernel or out is NULL");
    if (index >= kernel->spec.variants.size())
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: " + kernel->name + ": variant index " +
                      std::to_string(index) + " is out of range (" +
                      std::to_string(kernel->spec.variants.size()) +
                      " variants)");
    const Variant &v = kernel->spec.variants[index];
    *out = {v.entry.c_str(), v.block, v.rowsPerBlock, v.sharedBytes};
    return ok();
  });
}

kgen_status kgen_select_variant(const kgen_kernel *kernel, const kgen_arg *args,
                                size_t nargs, int64_t rows,
                                size_t *variant_out) {
  return guarded([&] {
    if (!kernel || !variant_out)
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: kernel or variant_out is NULL");
    BoundArgs bound;
    std::string err;
    if (kgen_status st = bindArgs(kernel->spec, args, nargs, rows, bound, err))
      return fail(st, std::move(err));
    *variant_out = bound.variant;
    return ok();
  });
}

kgen_status kgen_launch(const kgen_kernel *kernel, const kgen_arg *args,
                        size_t nargs, int64_t rows, void *cu_stream) {
  return guarded([&] { return launch(kernel, args, nargs, rows, cu_stream); });
}

kgen_status kgen_device_open(int ordinal, void **cu_context_out) {
  return guarded([&] { return deviceOpen(ordinal, cu_context_out); });
}

} // extern "C"
