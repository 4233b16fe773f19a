//===- MultiGpuTest.cpp - One kernel on two GPUs from several threads -----===//
//
// The runtime keeps its module cache per context: one kgen_kernel launched
// on two devices, by threads that each make a device's primary context
// current, on the default stream and on streams of their own, must give each
// device the interpreter's result. Skips without KGEN_KERNEL_DIR or with
// fewer than two GPUs.
//
//===----------------------------------------------------------------------===//
#include "GpuCommon.h"

#include "dsl/Float.h"
#include "dsl/Interpreter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <random>
#include <thread>

using namespace kgen;
using namespace kgen::gpu;

namespace {

using StreamCreateFn = CUresult (*)(CUstream *, unsigned);

TEST(KgenMultiGpu, OneKernelOnTwoDevicesFromThreads) {
  const char *dir = std::getenv("KGEN_KERNEL_DIR");
  std::string why;
  const rt::Driver *d = dir ? openGpu(why) : nullptr;
  int count = 0;
  if (!d || d->deviceGetCount(&count) != CUDA_SUCCESS || count < 2) {
    noGpuSkipFlag() = true;
    GTEST_SKIP() << "needs KGEN_KERNEL_DIR and two GPUs";
  }
  std::vector<ManifestEntry> manifest;
  ASSERT_TRUE(readManifest(dir, manifest, why)) << why;
  const ManifestEntry *entry = nullptr;
  for (const ManifestEntry &e : manifest)
    if (e.op == "rmsnorm" && e.dtype == "bf16" && e.length == 0)
      entry = &e;
  ASSERT_NE(entry, nullptr) << "the bundle has no dynamic rmsnorm bf16";
  RtKernel k;
  ASSERT_TRUE(loadKernel(dir, *entry, k, why)) << why;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto streamCreate =
      lib ? reinterpret_cast<StreamCreateFn>(dlsym(lib, "cuStreamCreate"))
          : nullptr;
  ASSERT_NE(streamCreate, nullptr);

  // Inputs shared by both devices: 64 rows of 4000 (not a multiple of 8
  // chunks of 8: a held variant with a tail), weights in [0.5, 1.5].
  const int64_t rows = 64, L = 4000;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-3, 3), w(0.5, 1.5);
  std::vector<uint16_t> x(rows * L), wt(L), ref(rows * L);
  for (auto &v : x)
    encode(DType::BF16, u(rng), &v);
  for (auto &v : wt)
    encode(DType::BF16, w(rng), &v);
  Bindings b;
  b.dims = {L};
  b.rows = rows;
  b.tensors = {{x.data(), 0}, {wt.data(), 0}, {ref.data(), 0}};
  b.params = {k.op->scalars.at("eps")};
  interpret(k.dsl, b);

  struct Device {
    CUcontext ctx = nullptr;
    CUstream stream = nullptr;
    DeviceBuffer x, w, y;
  } dev[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(kgen_device_open(i, reinterpret_cast<void **>(&dev[i].ctx)),
              KGEN_OK)
        << kgen_last_error();
    ASSERT_EQ(streamCreate(&dev[i].stream, 0), CUDA_SUCCESS);
    size_t bytes = x.size() * 2;
    ASSERT_TRUE(dev[i].x.allocate(d, bytes, why)) << why;
    ASSERT_TRUE(dev[i].w.allocate(d, wt.size() * 2, why)) << why;
    ASSERT_TRUE(dev[i].y.allocate(d, bytes, why)) << why;
    ASSERT_EQ(d->memcpyHtoD(dev[i].x.ptr(), x.data(), bytes), CUDA_SUCCESS);
    ASSERT_EQ(d->memcpyHtoD(dev[i].w.ptr(), wt.data(), wt.size() * 2),
              CUDA_SUCCESS);
    ASSERT_EQ(d->memsetD8(dev[i].y.ptr(), 0xff, bytes), CUDA_SUCCESS);
  }

  // Eight threads, each on one device's context, half of their launches on
  // the device's own stream.
  std::atomic<int> failures{0};
  std::string firstError;
  std::mutex errorMutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      Device &dv = dev[t % 2];
      d->ctxSetCurrent(dv.ctx);
      std::vector<kgen_arg> args;
      std::string err;
      const DeviceBuffer *bufs[] = {&dv.x, &dv.w, &dv.y}; // DSL order
      if (!buildArgs(
              k,
              [&](size_t ti) {
                return TensorArg{bufs[ti]->ptr(), 0};
              },
              L, args, err)) {
        ++failures;
        return;
      }
      for (int i = 0; i < 50; ++i) {
        void *stream = (i + t) % 2 ? dv.stream : nullptr;
        if (kgen_launch(k.k, args.data(), args.size(), rows, stream) !=
            KGEN_OK) {
          std::lock_guard<std::mutex> lock(errorMutex);
          if (failures++ == 0)
            firstError = kgen_last_error();
        }
      }
      if (d->ctxSynchronize() != CUDA_SUCCESS)
        ++failures;
    });
  for (std::thread &th : threads)
    th.join();
  ASSERT_EQ(failures, 0) << firstError;

  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(d->ctxSetCurrent(dev[i].ctx), CUDA_SUCCESS);
    std::vector<uint16_t> got(x.size());
    ASSERT_EQ(d->memcpyDtoH(got.data(), dev[i].y.ptr(), got.size() * 2),
              CUDA_SUCCESS);
    Tolerance tol = outputTolerance(k.dsl, 2);
    int64_t bad = 0;
    for (size_t e = 0; e < got.size(); ++e)
      bad += !withinTolerance(DType::BF16, decode(DType::BF16, &got[e]),
                              decode(DType::BF16, &ref[e]), tol);
    EXPECT_EQ(bad, 0) << "device " << i;
    dev[i].x.reset(), dev[i].w.reset(), dev[i].y.reset(); // its context
  }
  std::cout << "[kgen-gpu] two GPUs: rmsnorm bf16 dyn, 8 threads x 50 "
               "launches, default and own streams: both devices match\n";
}

} // namespace
