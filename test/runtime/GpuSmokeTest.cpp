//===- GpuSmokeTest.cpp - Launch hand-written PTX on a real GPU -----------===//
//
// Skipped where there is no driver or no device. Shows the internal Driver
// API in use: allocate, copy, synchronize, time with events.
//
//===----------------------------------------------------------------------===//

#include "TestSpecs.h"

#include "runtime/Driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

using namespace kgen::test;
using ::testing::HasSubstr;

namespace {

/// y[r][c] = x[r][c] * alpha + bias, one row per block, threads stride over
/// the columns. Parameter order as in the spec's abi.
std::string scaleEntry(const std::string &name) {
  return ".visible .entry " + name + R"ptx((
  .param .u64 px, .param .u64 py, .param .u64 sx, .param .u64 sy,
  .param .f32 alpha, .param .s32 bias, .param .u64 n, .param .u64 rows)
{
  .reg .pred %p<3>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<16>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [px];
  ld.param.u64 %rd2, [py];
  ld.param.u64 %rd3, [sx];
  ld.param.u64 %rd4, [sy];
  ld.param.f32 %f1, [alpha];
  ld.param.s32 %r4, [bias];
  cvt.rn.f32.s32 %f3, %r4;
  ld.param.u64 %rd5, [n];
  ld.param.u64 %rd6, [rows];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  cvt.u64.u32 %rd7, %r1;
  setp.ge.s64 %p1, %rd7, %rd6;
  @%p1 bra DONE;
  mul.lo.s64 %rd8, %rd7, %rd3;
  shl.b64 %rd8, %rd8, 2;
  add.s64 %rd8, %rd1, %rd8;
  mul.lo.s64 %rd9, %rd7, %rd4;
  shl.b64 %rd9, %rd9, 2;
  add.s64 %rd9, %rd2, %rd9;
  mov.u32 %r2, %tid.x;
  cvt.u64.u32 %rd10, %r2;
  mov.u32 %r3, %ntid.x;
  cvt.u64.u32 %rd11, %r3;
LOOP:
  setp.ge.s64 %p2, %rd10, %rd5;
  @%p2 bra DONE;
  shl.b64 %rd12, %rd10, 2;
  add.s64 %rd13, %rd8, %rd12;
  ld.global.f32 %f2, [%rd13];
  fma.rn.f32 %f2, %f2, %f1, %f3;
  add.s64 %rd14, %rd9, %rd12;
  st.global.f32 [%rd14], %f2;
  add.s64 %rd10, %rd10, %rd11;
  bra.uni LOOP;
DONE:
  ret;
}
)ptx";
}

std::string scalePtx() {
  return ".version 7.0\n.target sm_70\n.address_size 64\n\n" +
         scaleEntry("scale_f32_v4") + scaleEntry("scale_f32_v1");
}

const char *const ScaleSpec = R"({
  "kgen_spec": 2, "op": "scale", "dtype": "f32", "arch": "sm_70", "hash": "5ca1e",
  "dims": {},
  "params": [
    {"name": "x", "kind": "tensor", "dtype": "f32", "access": "rows", "row_length": "n"},
    {"name": "y", "kind": "tensor", "dtype": "f32", "access": "rows", "row_length": "n", "writes": true},
    {"name": "alpha", "kind": "scalar", "dtype": "f32"},
    {"name": "bias", "kind": "scalar", "dtype": "i32"},
    {"name": "n", "kind": "dim", "dtype": "i64"}
  ],
  "variants": [
    {"entry": "scale_f32_v4", "block": 128, "tensor_align": {"x": 16, "y": 16},
     "dim_multiple": {"n": 4},
     "abi": [{"slot": "ptr", "param": "x", "type": "u64"},
             {"slot": "ptr", "param": "y", "type": "u64"},
             {"slot": "stride", "param": "x", "type": "i64"},
             {"slot": "stride", "param": "y", "type": "i64"},
             {"slot": "scalar", "param": "alpha", "type": "f32"},
             {"slot": "scalar", "param": "bias", "type": "i32"},
             {"slot": "dim", "param": "n", "type": "i64"},
             {"slot": "rows", "type": "i64"}]},
    {"entry": "scale_f32_v1", "block": 96,
     "abi": [{"slot": "ptr", "param": "x", "type": "u64"},
             {"slot": "ptr", "param": "y", "type": "u64"},
             {"slot": "stride", "param": "x", "type": "i64"},
             {"slot": "stride", "param": "y", "type": "i64"},
             {"slot": "scalar", "param": "alpha", "type": "f32"},
             {"slot": "scalar", "param": "bias", "type": "i32"},
             {"slot": "dim", "param": "n", "type": "i64"},
             {"slot": "rows", "type": "i64"}]}
  ]
})";

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    std::string err;
    kgen_status st;
    d = kgen::rt::driver(&err, &st);
    if (!d)
      GTEST_SKIP() << err;
    if (kgen_device_open(0, nullptr) != KGEN_OK)
      GTEST_SKIP() << kgen::rt::lastError();
  }

  void TearDown() override {
    for (CUdeviceptr p : allocations)
      d->memFree(p);
  }

  CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    CUresult r = d->memAlloc(&p, bytes);
    EXPECT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "cuMemAlloc");
    allocations.push_back(p);
    return p;
  }

  const kgen::rt::Driver *d = nullptr;
  std::vector<CUdeviceptr> allocations;
};

TEST_F(Gpu, LaunchesBothVariants) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(scalePtx(), ScaleSpec), KGEN_OK) << kgen::rt::lastError();
  const int64_t rows = 37, n = 300, strideX = 304;
  std::vector<float> x(rows * strideX + 1);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i % 97) * 0.25f - 3.0f;
  CUdeviceptr dx = alloc(x.size() * 4), dy = alloc(rows * n * 4);
  ASSERT_EQ(d->memcpyHtoD(dx, x.data(), x.size() * 4), CUDA_SUCCESS);

  for (int64_t offset : {0, 1}) {
    ASSERT_EQ(d->memsetD8(dy, 0, rows * n * 4), CUDA_SUCCESS);
    const void *px = reinterpret_cast<const void *>(dx + offset * 4);
    kgen_arg args[] = {
        kgen::rt::tensorArg(px, KGEN_F32, strideX),
        kgen::rt::tensorArg(reinterpret_cast<void *>(dy), KGEN_F32),
        kgen::rt::f32Arg(1.5f), kgen::rt::intArg(-2, KGEN_I32),
        kgen::rt::dimArg(n)};
    size_t variant;
    ASSERT_EQ(k.selectVariant(args, rows, variant), KGEN_OK);
    EXPECT_EQ(variant, static_cast<size_t>(offset)); // misaligned: fallback
    ASSERT_EQ(k.launch(args, rows), KGEN_OK) << kgen::rt::lastError();
    ASSERT_EQ(d->ctxSynchronize(), CUDA_SUCCESS);
    std::vector<float> y(rows * n);
    ASSERT_EQ(d->memcpyDtoH(y.data(), dy, y.size() * 4), CUDA_SUCCESS);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < n; ++c)
        ASSERT_EQ(y[r * n + c],
                  std::fma(x[offset + r * strideX + c], 1.5f, -2.0f))
            << "offset " << offset << " row " << r << " col " << c;
  }
}

TEST_F(Gpu, ForeignLaunchComputesWhatKgenLaunchDoes) {
  // An engine's own launcher: it loads the PTX and launches the entry with
  // cuLaunchKernel from kgen_launch_config_get and kgen_pack_params alone.
  std::string ptx = scalePtx();
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, ScaleSpec), KGEN_OK) << kgen::rt::lastError();
  CUmodule module = nullptr;
  CUresult r = d->moduleLoadDataEx(&module, ptx.c_str(), 0, nullptr, nullptr);
  ASSERT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "cuModuleLoadDataEx");
  CUdevice dev;
  int multiprocessors = 0;
  ASSERT_EQ(d->ctxGetDevice(&dev), CUDA_SUCCESS);
  ASSERT_EQ(d->deviceGetAttribute(&multiprocessors,
                                  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                  dev),
            CUDA_SUCCESS);
  const int64_t rows = 37, n = 300, strideX = 304;
  std::vector<float> x(rows * strideX + 1);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i % 89) * 0.5f - 7.0f;
  CUdeviceptr dx = alloc(x.size() * 4), dy = alloc(rows * n * 4);
  ASSERT_EQ(d->memcpyHtoD(dx, x.data(), x.size() * 4), CUDA_SUCCESS);
  for (int64_t offset : {0, 1}) { // each variant
    ASSERT_EQ(d->memsetD8(dy, 0, rows * n * 4), CUDA_SUCCESS);
    kgen_arg args[] = {
        kgen::rt::tensorArg(reinterpret_cast<const void *>(dx + offset * 4),
                            KGEN_F32, strideX),
        kgen::rt::tensorArg(reinterpret_cast<void *>(dy), KGEN_F32),
        kgen::rt::f32Arg(-0.75f), kgen::rt::intArg(3, KGEN_I32),
        kgen::rt::dimArg(n)};
    kgen_launch_config c;
    ASSERT_EQ(
        kgen_launch_config_get(k.get(), args, 5, rows, multiprocessors, &c),
        KGEN_OK)
        << kgen::rt::lastError();
    EXPECT_EQ(c.variant, static_cast<size_t>(offset));
    std::vector<uint64_t> slots(c.num_slots);
    ASSERT_EQ(kgen_pack_params(k.get(), args, 5, rows, multiprocessors,
                               slots.data(), slots.size()),
              KGEN_OK)
        << kgen::rt::lastError();
    std::vector<void *> params;
    for (uint64_t &slot : slots)
      params.push_back(&slot);
    CUfunction fn;
    ASSERT_EQ(d->moduleGetFunction(&fn, module, c.entry), CUDA_SUCCESS);
    r = d->launchKernel(fn, c.grid[0], c.grid[1], c.grid[2], c.block[0],
                        c.block[1], c.block[2], c.shared_bytes, nullptr,
                        params.data(), nullptr);
    ASSERT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "cuLaunchKernel");
    ASSERT_EQ(d->ctxSynchronize(), CUDA_SUCCESS);
    std::vector<float> y(rows * n);
    ASSERT_EQ(d->memcpyDtoH(y.data(), dy, y.size() * 4), CUDA_SUCCESS);
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t col = 0; col < n; ++col)
        ASSERT_EQ(y[row * n + col],
                  std::fma(x[offset + row * strideX + col], -0.75f, 3.0f))
            << "offset " << offset << " row " << row << " col " << col;
  }
  d->moduleUnload(module);
}

TEST_F(Gpu, TimesWithEvents) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(scalePtx(), ScaleSpec), KGEN_OK);
  const int64_t rows = 1024, n = 1024;
  CUdeviceptr dx = alloc(rows * n * 4), dy = alloc(rows * n * 4);
  ASSERT_EQ(d->memsetD8(dx, 0, rows * n * 4), CUDA_SUCCESS);
  kgen_arg args[] = {
      kgen::rt::tensorArg(reinterpret_cast<void *>(dx), KGEN_F32),
      kgen::rt::tensorArg(reinterpret_cast<void *>(dy), KGEN_F32),
      kgen::rt::f32Arg(1.0f), kgen::rt::intArg(0, KGEN_I32),
      kgen::rt::dimArg(n)};
  CUevent start, stop;
  ASSERT_EQ(d->eventCreate(&start, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(d->eventCreate(&stop, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(d->eventRecord(start, nullptr), CUDA_SUCCESS);
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(k.launch(args, rows), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(d->eventRecord(stop, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(d->eventSynchronize(stop), CUDA_SUCCESS);
  float ms = -1;
  ASSERT_EQ(d->eventElapsedTime(&ms, start, stop), CUDA_SUCCESS);
  EXPECT_GT(ms, 0.0f);
  d->eventDestroy(start);
  d->eventDestroy(stop);
}

TEST_F(Gpu, NoContextOnAFreshThread) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(scalePtx(), ScaleSpec), KGEN_OK);
  kgen_arg args[] = {
      kgen::rt::tensorArg(reinterpret_cast<void *>(0x10000), KGEN_F32),
      kgen::rt::tensorArg(reinterpret_cast<void *>(0x20000), KGEN_F32),
      kgen::rt::f32Arg(1.0f), kgen::rt::intArg(0, KGEN_I32),
      kgen::rt::dimArg(4)};
  kgen_status st = KGEN_OK;
  std::thread([&] { st = k.launch(args, 1); }).join();
  EXPECT_EQ(st, KGEN_ERROR_NO_CONTEXT);
}

TEST_F(Gpu, JitErrorsCarryTheLog) {
  std::string ptx = scalePtx();
  ptx = replaced(ptx, "fma.rn.f32", "fma.bogus.f32");
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, ScaleSpec), KGEN_OK);
  kgen_arg args[] = {
      kgen::rt::tensorArg(reinterpret_cast<void *>(0x10000), KGEN_F32),
      kgen::rt::tensorArg(reinterpret_cast<void *>(0x20000), KGEN_F32),
      kgen::rt::f32Arg(1.0f), kgen::rt::intArg(0, KGEN_I32),
      kgen::rt::dimArg(4)};
  EXPECT_EQ(k.launch(args, 1), KGEN_ERROR_JIT);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("cuModuleLoadDataEx failed"));
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("JIT log:"));
  std::cout << "JIT error message: " << kgen::rt::lastError() << "\n";
}

} // namespace
