//===- Runtime.cpp - The kgen runtime C API -------------------------------===//
//
// Every entry point catches everything: nothing may throw across the C API.
//
//===----------------------------------------------------------------------===//

#include "runtime/kgen_runtime.h"

#include "runtime/Args.h"
#include "runtime/Driver.h"
#include "runtime/Kernel.h"
#include "runtime/LastError.h"
#include "runtime/ModuleCache.h"
#include "runtime/PerThread.h"
#include "runtime/Spec.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

using namespace kgen::rt;

namespace {

kgen_status fail(kgen_status st, std::string msg) {
  return setLastError(st, std::move(msg));
}

kgen_status ok() { return clearLastError(); }

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

/// "sm_90" -> 90, "sm_90a" -> 90 and arch-specific.
bool parseArch(std::string_view arch, int &sm, bool &specific) {
  if (arch.substr(0, 3) != "sm_" || arch.size() < 5)
    return false;
  std::string_view digits = arch.substr(3);
  specific = digits.back() == 'a';
  if (specific)
    digits.remove_suffix(1);
  sm = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || sm > 10000)
      return false;
    sm = sm * 10 + (c - '0');
  }
  return sm > 0;
}

/// Checks one image and fills `out`. `where` prefixes messages of a kernel
/// of several images ("image 2: ").
kgen_status makeImage(const kgen_image &in, const std::string &where,
                      KernelImage &out) {
  if (!in.ptx || !in.spec_json)
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                "kgen: " + where +
                    (in.ptx ? "spec_json is NULL" : "ptx is NULL"));
  std::string_view ptxText = trimNuls(in.ptx, in.ptx_len);
  if (ptxText.empty())
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                "kgen: " + where + "the PTX text is empty");
  size_t nul = ptxText.find('\0');
  if (nul != std::string_view::npos)
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                "kgen: " + where +
                    "the PTX text contains a NUL byte at offset " +
                    std::to_string(nul));
  std::string err;
  if (!parseSpec(trimNuls(in.spec_json, in.spec_len), out.spec, err))
    return fail(KGEN_ERROR_INVALID_SPEC,
                "kgen: " + where + "invalid spec: " + err);
  const std::string name = out.spec.name();
  if (!parseArch(out.spec.arch, out.sm, out.archSpecific))
    return fail(KGEN_ERROR_INVALID_SPEC,
                "kgen: " + where + name + ": arch '" + out.spec.arch +
                    "' is not of the form sm_XY or sm_XYa");
  // Catch a spec/PTX mismatch now rather than at the first launch on a GPU.
  auto entries = ptxEntries(ptxText);
  for (const Variant &v : out.spec.variants)
    if (!entries.count(v.entry))
      return fail(KGEN_ERROR_INVALID_SPEC,
                  "kgen: " + where + name + ": variant entry '" + v.entry +
                      "' is not defined in the PTX (no '.entry " + v.entry +
                      "')");
  out.ptx = std::make_shared<const std::string>(ptxText);
  out.ptxHash = hashText(ptxText);
  if (in.cubin || in.cubin_len) {
    static constexpr char Elf[] = {0x7f, 'E', 'L', 'F'};
    if (!in.cubin || in.cubin_len < sizeof(Elf) ||
        std::memcmp(in.cubin, Elf, sizeof(Elf)) != 0)
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: " + where + name +
                      ": the cubin is not an ELF image (ptxas's output)");
    std::string_view cubin(static_cast<const char *>(in.cubin), in.cubin_len);
    out.cubin = std::make_shared<const std::string>(cubin);
    out.cubinHash = hashText(cubin);
  }
  return KGEN_OK;
}

/// True if `a` and `b` take the same arguments.
bool sameParams(const Spec &a, const Spec &b) {
  if (a.params.size() != b.params.size())
    return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    const Param &p = a.params[i], &q = b.params[i];
    if (p.name != q.name || p.kind != q.kind || p.dtype != q.dtype ||
        p.access != q.access || p.writes != q.writes ||
        p.rowLength.text != q.rowLength.text || p.padded != q.padded ||
        p.span != q.span)
      return false;
  }
  return true;
}

kgen_status createImages(const kgen_image *images, size_t count,
                         kgen_kernel **out) {
  if (!out)
    return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: out is NULL");
  *out = nullptr;
  if (!images || count == 0)
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                "kgen: a kernel needs at least one image");
  auto kernel = std::make_unique<kgen_kernel>();
  kernel->images.resize(count);
  for (size_t i = 0; i < count; ++i) {
    std::string where =
        count > 1 ? "image " + std::to_string(i) + ": " : std::string();
    if (kgen_status st = makeImage(images[i], where, kernel->images[i]))
      return st;
    const Spec &first = kernel->images[0].spec, &spec = kernel->images[i].spec;
    if (spec.op != first.op || spec.dtype != first.dtype ||
        !sameParams(first, spec))
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: " + where + spec.name() + " (" + spec.arch +
                      ") is not the same kernel as image 0, " + first.name() +
                      " (" + first.arch +
                      "): the images of a kernel need the same op, dtype "
                      "and params");
    for (size_t j = 0; j < i; ++j)
      if (kernel->images[j].spec.arch == spec.arch)
        return fail(KGEN_ERROR_INVALID_ARGUMENT,
                    "kgen: " + where + spec.name() + ": images " +
                        std::to_string(j) + " and " + std::to_string(i) +
                        " are both for " + spec.arch);
  }
  kernel->name = kernel->spec().name();
  static std::atomic<uint64_t> nextId{1};
  kernel->id = nextId.fetch_add(1, std::memory_order_relaxed);
  *out = kernel.release();
  return ok();
}

kgen_status createOnce(kgen_kernel **slot, const kgen_image *images,
                       size_t count, kgen_kernel **out) {
  if (!slot || !out)
    return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: slot or out is NULL");
  kgen_kernel *k = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!k) {
    kgen_kernel *fresh = nullptr;
    if (kgen_status st = createImages(images, count, &fresh))
      return st;
    kgen_kernel *expected = nullptr;
    if (__atomic_compare_exchange_n(slot, &expected, fresh, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      k = fresh;
    } else { // another thread won
      delete fresh;
      k = expected;
    }
  }
  *out = k;
  return ok();
}

/// The image to launch on a device of compute capability `sm`: the newest
/// arch at or below it (an arch-specific one only on its own arch), as its
/// cubin where that runs there (the same major version), else as PTX.
const KernelImage *pickImage(const kgen_kernel &kernel, int sm,
                             bool &useCubin) {
  const KernelImage *best = nullptr;
  for (const KernelImage &img : kernel.images) {
    bool runs = img.archSpecific ? img.sm == sm : img.sm <= sm;
    if (runs && (!best || img.sm > best->sm ||
                 (img.sm == best->sm && img.archSpecific)))
      best = &img;
  }
  useCubin = best && best->cubin && best->sm / 10 == sm / 10;
  return best;
}

std::string archList(const kgen_kernel &kernel) {
  std::string list;
  for (const KernelImage &img : kernel.images)
    list += (list.empty() ? "" : ", ") + img.spec.arch;
  return list;
}

/// What a launch binds and packs, kept per thread so that a warm launch
/// allocates nothing.
struct LaunchScratch {
  BoundArgs bound;
  std::vector<uint64_t> storage;
  std::vector<void *> params;
};

/// The functions this thread launched lately, so that a warm launch takes
/// no lock: (kernel, context, image, variant) to the function and the
/// device's multiprocessors. Kernel ids and context keys are never reused and
/// modules never unloaded, so an entry cannot go stale. Plain data: it stays
/// readable when the thread's other thread-locals are gone.
struct RecentLaunch {
  uint64_t kernelId = 0, ctxKey = 0;
  size_t image = 0, variant = 0;
  CUfunction fn = nullptr;
  int multiprocessors = 0;
};
constexpr size_t RecentLaunches = 8;
thread_local RecentLaunch recentLaunches[RecentLaunches];
thread_local size_t recentNext = 0;

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
  // Arguments are checked against the first image before anything else, and
  // again against the image the device takes where that is another one.
  std::optional<LaunchScratch> own;
  LaunchScratch *scratch = perThread<LaunchScratch>();
  if (!scratch)
    scratch = &own.emplace();
  BoundArgs &bound = scratch->bound;
  std::string err;
  if (kgen_status st = bindArgs(kernel->spec(), args, nargs, rows, bound, err))
    return fail(st, std::move(err));
  if (rows == 0)
    return ok();

  kgen_status st;
  const Driver *d = driver(&err, &st);
  if (!d)
    return fail(st, std::move(err));
  auto prefix = [&] { return "kgen: " + kernel->name + ": "; };
  CUcontext ctx = nullptr;
  CUresult r = d->ctxGetCurrent(&ctx);
  if (r != CUDA_SUCCESS)
    return fail(KGEN_ERROR_CUDA, prefix() + d->errorText(r, "cuCtxGetCurrent"));
  if (!ctx)
    return fail(KGEN_ERROR_NO_CONTEXT,
                prefix() +
                    "no CUDA context is current on this thread; make one "
                    "current first (e.g. with kgen_device_open)");

  // Errors from here on name the device (asked only on the error path).
  auto onDevice = [&] {
    CUdevice dev = 0;
    std::string where = "kgen: " + kernel->name;
    if (d->ctxGetDevice(&dev) == CUDA_SUCCESS)
      where += " on device " + std::to_string(int(dev));
    return where + ": ";
  };
  uint64_t ctxKey = contextKey(*d, ctx);
  // The image this context takes, as this thread last found it, else
  // chosen from the device's arch.
  size_t imageIndex = 0;
  bool byArch = kernel->images.size() > 1 || kernel->images.front().cubin;
  bool known = kernel->images.size() == 1;
  for (size_t i = 0; i < RecentLaunches && !known; ++i) {
    const RecentLaunch &e = recentLaunches[i];
    if (e.kernelId == kernel->id && e.ctxKey == ctxKey) {
      imageIndex = e.image;
      known = true;
    }
  }
  bool useCubin = false;
  auto chooseImage = [&]() -> kgen_status {
    int sm = 0;
    if (kgen_status ast = contextArch(*d, ctxKey, sm, err))
      return fail(ast, onDevice() + err);
    const KernelImage *picked = pickImage(*kernel, sm, useCubin);
    if (!picked)
      return fail(KGEN_ERROR_NO_DEVICE,
                  onDevice() + "no image runs on this device (sm_" +
                      std::to_string(sm) + "); built for " + archList(*kernel));
    imageIndex = picked - kernel->images.data();
    return KGEN_OK;
  };
  if (!known)
    if (kgen_status cst = chooseImage())
      return cst;
  const KernelImage *image = &kernel->images[imageIndex];
  const Spec &spec = image->spec;
  if (imageIndex != 0)
    if (kgen_status bst = bindArgs(spec, args, nargs, rows, bound, err))
      return fail(bst, std::move(err));

  const Variant &variant = spec.variants[bound.variant];
  CUfunction fn = nullptr;
  int multiprocessors = 0;
  for (const RecentLaunch &e : recentLaunches)
    if (e.kernelId == kernel->id && e.ctxKey == ctxKey &&
        e.image == imageIndex && e.variant == bound.variant) {
      fn = e.fn;
      multiprocessors = e.multiprocessors;
      break;
    }
  if (!fn) {
    // Whether the image's cubin runs here (and, again, which image).
    if (byArch)
      if (kgen_status cst = chooseImage())
        return cst;
    kgen_status fst =
        getFunction(*d, ctx, ctxKey, useCubin ? image->cubin : image->ptx,
                    useCubin ? image->cubinHash : image->ptxHash, variant, fn,
                    multiprocessors, err);
    // A cubin the driver refuses (one from a newer ptxas than the driver,
    // say): the same image's PTX, which the driver compiles.
    if (fst == KGEN_ERROR_JIT && useCubin)
      fst = getFunction(*d, ctx, ctxKey, image->ptx, image->ptxHash, variant,
                        fn, multiprocessors, err);
    if (fst)
      return fail(fst, onDevice() + err);
    recentLaunches[recentNext++ % RecentLaunches] = {
        kernel->id, ctxKey, imageIndex, bound.variant, fn, multiprocessors};
  }
  placeRows(spec, bound, multiprocessors);

  std::vector<uint64_t> &storage = scratch->storage;
  std::vector<void *> &params = scratch->params;
  packAbi(spec, variant, bound, storage, params);
  if (spec.gridDependency && d->launchKernelEx && gridDependencyEnabled()) {
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
    return fail(KGEN_ERROR_CUDA,
                onDevice() + d->errorText(r, "cuLaunchKernel") + " (entry '" +
                    variant.entry + "', grid " + std::to_string(bound.gridX) +
                    ", block " + std::to_string(bound.blockX) + " x " +
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

const char *kgen_runtime_version(void) { return KGEN_VERSION; }

const char *kgen_last_error(void) { return lastErrorMessage(); }

kgen_status kgen_set_error(kgen_status status, const char *message) {
  return guarded([&] { return fail(status, message ? message : ""); });
}

kgen_status kgen_kernel_create(const char *ptx, size_t ptx_len,
                               const char *spec_json, size_t spec_len,
                               kgen_kernel **out) {
  return guarded([&] {
    kgen_image image{ptx, ptx_len, spec_json, spec_len, nullptr, 0};
    return createImages(&image, 1, out);
  });
}

kgen_status kgen_kernel_create_images(const kgen_image *images, size_t count,
                                      kgen_kernel **out) {
  return guarded([&] { return createImages(images, count, out); });
}

kgen_status kgen_kernel_create_once(kgen_kernel **slot,
                                    const kgen_image *images, size_t count,
                                    kgen_kernel **out) {
  return guarded([&] { return createOnce(slot, images, count, out); });
}

void kgen_kernel_destroy(kgen_kernel *kernel) { delete kernel; }

kgen_status kgen_kernel_get_info(const kgen_kernel *kernel,
                                 kgen_kernel_info *out) {
  return guarded([&] {
    if (!kernel || !out)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: kernel or out is NULL");
    const Spec &s = kernel->spec();
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
    if (index >= kernel->spec().params.size())
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: " + kernel->name + ": param index " +
                      std::to_string(index) + " is out of range (" +
                      std::to_string(kernel->spec().params.size()) +
                      " params)");
    const Param &p = kernel->spec().params[index];
    bool tensor = p.kind == KGEN_ARG_TENSOR;
    *out = {p.name.c_str(),
            p.kind,
            p.dtype,
            tensor && p.access == Param::Access::Vector,
            tensor && p.writes,
            tensor && !p.padded && p.rowLength.dimParam < 0 ? p.rowLength.scale
                                                            : 0,
            tensor ? p.span.c_str() : ""};
    return ok();
  });
}

kgen_status kgen_kernel_find_param(const kgen_kernel *kernel, const char *name,
                                   size_t *index_out) {
  return guarded([&] {
    if (!kernel || !name || !index_out)
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: kernel, name or index_out is NULL");
    int idx = kernel->spec().findParam(name);
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
    if (index >= kernel->spec().variants.size())
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "kgen: " + kernel->name + ": variant index " +
                      std::to_string(index) + " is out of range (" +
                      std::to_string(kernel->spec().variants.size()) +
                      " variants)");
    const Variant &v = kernel->spec().variants[index];
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
    if (kgen_status st =
            bindArgs(kernel->spec(), args, nargs, rows, bound, err))
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
