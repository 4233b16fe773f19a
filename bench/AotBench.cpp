//===- AotBench.cpp - Generated launchers: first launch and host cost -----===//
//
// On a GPU, for rmsnorm bf16 (hidden 4096) from two `kgen aot` libraries of
// the same kernels, one with cubins and one with PTX only:
//   first launch  the first call (load, JIT where PTX) and a synchronize,
//                 less a later call and synchronize, per library;
//   host cost     the host time of one launch call, for a bare
//                 cuLaunchKernel(Ex) of the same function with packed
//                 parameters (plain, and with the programmatic-dependent
//                 attribute kgen_launch sets), kgen_launch, and the
//                 generated launchers.
// Prints a table; exits 77 without a GPU. Run it once with
// CUDA_CACHE_DISABLE=1 for a cold JIT (bench/gpu_check.sh does both).
//
//===----------------------------------------------------------------------===//
#include "kgen_bench_aot.h"
#include "kgen_bench_aot_ptx.h"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double microsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

/// The driver calls the bench makes itself, from libcuda.so.1.
struct Driver {
  decltype(&cuModuleLoadData) moduleLoadData;
  decltype(&cuModuleGetFunction) moduleGetFunction;
  decltype(&cuLaunchKernel) launchKernel;
  decltype(&cuLaunchKernelEx) launchKernelEx;
  decltype(&cuCtxSynchronize) ctxSynchronize;
  decltype(&cuMemAlloc) memAlloc;
  decltype(&cuMemsetD8) memsetD8;
  decltype(&cuCtxGetCurrent) ctxGetCurrent;
  decltype(&cuCtxGetId) ctxGetId;

  bool open() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return false;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      return fn != nullptr;
    };
    return sym(moduleLoadData, "cuModuleLoadData") &&
           sym(moduleGetFunction, "cuModuleGetFunction") &&
           sym(launchKernel, "cuLaunchKernel") &&
           sym(launchKernelEx, "cuLaunchKernelEx") &&
           sym(ctxSynchronize, "cuCtxSynchronize") &&
           sym(memAlloc, "cuMemAlloc_v2") && sym(memsetD8, "cuMemsetD8_v2") &&
           sym(ctxGetCurrent, "cuCtxGetCurrent") && sym(ctxGetId, "cuCtxGetId");
  }
};

bool check(kgen_status st, const char *what) {
  if (st != KGEN_OK)
    std::fprintf(stderr, "%s: %s\n", what, kgen_last_error());
  return st == KGEN_OK;
}

/// Host microseconds per call of each launcher: per launcher the median
/// over rounds of the mean of `perRound` calls (then a synchronize, so the
/// queue never fills). Rounds visit the launchers in turn, so that a drift
/// of the machine falls on all alike.
std::vector<double>
hostMicros(const Driver &d, const std::vector<std::function<void()>> &launchers,
           int rounds = 61, int perRound = 100) {
  std::vector<std::vector<double>> means(launchers.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t l = 0; l < launchers.size(); ++l) {
      auto t0 = Clock::now();
      for (int i = 0; i < perRound; ++i)
        launchers[l]();
      means[l].push_back(microsSince(t0) / perRound);
      d.ctxSynchronize();
    }
  std::vector<double> medians;
  for (std::vector<double> &m : means) {
    std::sort(m.begin(), m.end());
    medians.push_back(m[m.size() / 2]);
  }
  return medians;
}

} // namespace

int main() {
  kgen_status st = kgen_device_open(0, nullptr);
  if (st == KGEN_ERROR_NO_DRIVER || st == KGEN_ERROR_NO_DEVICE) {
    std::fprintf(stderr, "no GPU: %s\n", kgen_last_error());
    return 77;
  }
  Driver d;
  if (!check(st, "kgen_device_open") || !d.open())
    return 1;
  const int64_t hidden = 4096, rows = 1;
  CUdeviceptr x, w, y;
  for (CUdeviceptr *p : {&x, &w, &y}) {
    d.memAlloc(p, hidden * 2 * 64);
    d.memsetD8(*p, 0, hidden * 2 * 64);
  }
  auto *xb = reinterpret_cast<const kgen_bf16 *>(x);
  auto *wb = reinterpret_cast<const kgen_bf16 *>(w);
  auto *yb = reinterpret_cast<kgen_bf16 *>(y);
  // The context and the runtime warm up on another kernel first.
  if (!check(
          kgen_bench_aot_silu_and_mul_bf16_dyn(xb, 0, yb, 0, 64, rows, nullptr),
          "warm-up"))
    return 1;
  d.ctxSynchronize();

  auto firstLaunch = [&](auto launch, const char *what) {
    auto t0 = Clock::now();
    bool ok = check(launch(), what);
    d.ctxSynchronize();
    double first = microsSince(t0);
    t0 = Clock::now();
    ok &= check(launch(), what);
    d.ctxSynchronize();
    double later = microsSince(t0);
    return ok ? first - later : -1.0;
  };
  double ptxFirst = firstLaunch(
      [&] {
        return kgen_bench_aot_ptx_rmsnorm_bf16_hidden4096(xb, 0, wb, yb, 0,
                                                          1e-6f, rows, nullptr);
      },
      "ptx library");
  double cubinFirst = firstLaunch(
      [&] {
        return kgen_bench_aot_rmsnorm_bf16_hidden4096(xb, 0, wb, yb, 0, 1e-6f,
                                                      rows, nullptr);
      },
      "cubin library");

  // The same function, loaded by hand from the embedded cubin, launched
  // bare with the parameters and shape the runtime computes.
  kgen_kernel *k;
  if (!check(kgen_bench_aot_rmsnorm_bf16_hidden4096_kernel(&k), "kernel"))
    return 1;
  kgen_arg args[] = {{KGEN_ARG_TENSOR, KGEN_BF16, xb, 0, 0, 0},
                     {KGEN_ARG_TENSOR, KGEN_BF16, wb, 0, 0, 0},
                     {KGEN_ARG_TENSOR, KGEN_BF16, yb, 0, 0, 0},
                     {KGEN_ARG_SCALAR, KGEN_F32, nullptr, 0, 1e-6, 0}};
  kgen_launch_config cfg;
  uint64_t slots[16];
  if (!check(kgen_launch_config_get(k, args, 4, rows, 132, &cfg), "config") ||
      !check(kgen_pack_params(k, args, 4, rows, 132, slots, 16), "pack"))
    return 1;
  size_t images = 0;
  const kgen_image *image =
      kgen_bench_aot_rmsnorm_bf16_hidden4096_images(&images);
  CUmodule module;
  CUfunction fn;
  if (!image->cubin || d.moduleLoadData(&module, image->cubin) ||
      d.moduleGetFunction(&fn, module, cfg.entry)) {
    std::fprintf(stderr, "cannot load the embedded cubin by hand\n");
    return 1;
  }
  void *params[16];
  for (size_t i = 0; i < cfg.num_slots; ++i)
    params[i] = &slots[i];
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig lc{};
  lc.gridDimX = cfg.grid[0];
  lc.gridDimY = cfg.grid[1];
  lc.gridDimZ = cfg.grid[2];
  lc.blockDimX = cfg.block[0];
  lc.blockDimY = cfg.block[1];
  lc.blockDimZ = cfg.block[2];
  lc.sharedMemBytes = cfg.shared_bytes;
  lc.attrs = &attr;
  lc.numAttrs = cfg.grid_dependency ? 1 : 0;

  CUlaunchConfig plain = lc;
  plain.numAttrs = 0;
  CUcontext ctx = nullptr;
  unsigned long long ctxId = 0;
  const char *names[] = {"bare cuLaunchKernel",
                         "bare cuLaunchKernelEx",
                         "bare cuLaunchKernelEx + PDL attribute",
                         "kgen_launch",
                         "generated launcher",
                         "generated dispatcher",
                         "part: kgen_launch's argument checks (rows 0)",
                         "part: cuCtxGetCurrent",
                         "part: cuCtxGetId"};
  static_assert(sizeof(names) / sizeof(*names) == 9);
  std::vector<double> micros = hostMicros(
      d, {[&] {
            d.launchKernel(fn, cfg.grid[0], cfg.grid[1], cfg.grid[2],
                           cfg.block[0], cfg.block[1], cfg.block[2],
                           cfg.shared_bytes, nullptr, params, nullptr);
          },
          [&] { d.launchKernelEx(&plain, fn, params, nullptr); },
          [&] { d.launchKernelEx(&lc, fn, params, nullptr); },
          [&] { kgen_launch(k, args, 4, rows, nullptr); },
          [&] {
            kgen_bench_aot_rmsnorm_bf16_hidden4096(xb, 0, wb, yb, 0, 1e-6f,
                                                   rows, nullptr);
          },
          [&] {
            kgen_bench_aot_rmsnorm_bf16(xb, 0, wb, yb, 0, 1e-6f, hidden, rows,
                                        nullptr);
          },
          [&] { kgen_launch(k, args, 4, 0, nullptr); },
          [&] { d.ctxGetCurrent(&ctx); }, [&] { d.ctxGetId(ctx, &ctxId); }});
  d.ctxSynchronize();

  std::printf("aot bench: rmsnorm bf16 hidden 4096, %lld row(s), entry %s, "
              "grid %u, block %u, programmatic dependent %d\n",
              (long long)rows, cfg.entry, cfg.grid[0], cfg.block[0],
              cfg.grid_dependency);
  std::printf("| what | us |\n|---|---|\n");
  std::printf("| first launch, PTX (JIT%s) | %.1f |\n",
              std::getenv("CUDA_CACHE_DISABLE") ? ", cache off" : "", ptxFirst);
  std::printf("| first launch, cubin | %.1f |\n", cubinFirst);
  for (size_t i = 0; i < micros.size(); ++i)
    std::printf("| host per launch: %s | %.3f |\n", names[i], micros[i]);
  return 0;
}
