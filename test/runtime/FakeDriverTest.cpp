//===- FakeDriverTest.cpp - The launch path against a fake libcuda --------===//
//
// A separate executable: the driver is loaded once per process, and this one
// loads the fake (KGEN_FAKE_CUDA_PATH) instead of libcuda.so.1.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestSpecs.h"

#include "runtime/Driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

using namespace kgen::test;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

namespace {

FakeCudaState *fake = nullptr;
decltype(&cuCtxSetCurrent) fakeSetCurrent = nullptr;

uint64_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

/// RmsnormSpec whose first variant's threads are chosen at launch over rows
/// of `hidden` elements: held in `chunks` chunks a thread, or re-read (0).
std::string launchThreadsSpec(int block, int chunks) {
  std::string spec = replaced(RmsnormSpec, R"("dims": {},)",
                              R"("dims": {}, "domain": "hidden",)");
  return replaced(spec, R"("block": 128, "rows_per_block": 1,)",
                  R"("block": )" + std::to_string(block) +
                      R"(, "rows_per_block": 1,
                     "launch_threads": {"chunks": )" +
                      std::to_string(chunks) + R"(, "chunk_elements": 8},)");
}

RmsnormArgs argsOfLength(int64_t hidden) {
  return RmsnormArgs(reinterpret_cast<const void *>(0x10000),
                     reinterpret_cast<const void *>(0x20000),
                     reinterpret_cast<const void *>(0x30000), hidden);
}

class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    fake->reset();
    ASSERT_EQ(kgen_device_open(0, nullptr), KGEN_OK) << kgen::rt::lastError();
    // A PTX text of its own per test and run (--gtest_repeat), so the
    // module cache starts empty.
    static int runs = 0;
    ptx = std::string(RmsnormPtx) + "// " +
          ::testing::UnitTest::GetInstance()->current_test_info()->name() +
          " " + std::to_string(runs++) + "\n";
  }

  std::string ptx;
};

TEST_F(FakeDriver, DeviceOpen) {
  void *ctx = nullptr;
  EXPECT_EQ(kgen_device_open(0, &ctx), KGEN_OK);
  EXPECT_EQ(ctx, FakeContext);
  EXPECT_EQ(fake->retains, 1) << "the primary context is retained once";
  EXPECT_EQ(kgen_device_open(1, &ctx), KGEN_ERROR_NO_DEVICE);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("device ordinal 1 is out of range (1 CUDA device)"));
  EXPECT_EQ(kgen_device_open(-1, &ctx), KGEN_ERROR_NO_DEVICE);
}

TEST_F(FakeDriver, NeedsACurrentContext) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, RmsnormSpec), KGEN_OK);
  RmsnormArgs a;
  kgen_status st = KGEN_OK;
  std::string msg;
  std::thread([&] {
    st = k.launch(a.args, 4);
    msg = kgen::rt::lastError();
  }).join();
  EXPECT_EQ(st, KGEN_ERROR_NO_CONTEXT);
  EXPECT_THAT(msg, HasSubstr("kgen: rmsnorm_bf16: no CUDA context is current "
                             "on this thread"));
  EXPECT_THAT(msg, HasSubstr("kgen_device_open"));
  EXPECT_TRUE(fake->launches.empty());
}

TEST_F(FakeDriver, PacksTheAbiAndGrid) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, RmsnormSpec), KGEN_OK);
  RmsnormArgs a;
  a.args[2].row_stride = 8192;
  fake->paramSlots = 8;
  void *stream = reinterpret_cast<void *>(0x5);
  ASSERT_EQ(k.launch(a.args, 7, stream), KGEN_OK) << kgen::rt::lastError();
  EXPECT_STREQ(kgen::rt::lastError(), "");
  ASSERT_EQ(fake->launches.size(), 1u);
  const FakeLaunch &l = fake->launches[0];
  EXPECT_EQ(l.entry, "rmsnorm_bf16_v8");
  EXPECT_THAT(l.grid, ElementsAre(7u, 1u, 1u));
  EXPECT_THAT(l.block, ElementsAre(128u, 1u, 1u));
  EXPECT_EQ(l.sharedBytes, 0u);
  EXPECT_EQ(l.stream, stream);
  // ptr:x ptr:weight ptr:y stride:x stride:y scalar:eps dim:hidden rows
  EXPECT_THAT(l.params, ElementsAre(0x10000u, 0x20000u, 0x30000u, 4096u, 8192u,
                                    bits(1e-6f), 4096u, 7u));
}

TEST_F(FakeDriver, HeldVariantLaunchesTheThreadsItChose) {
  // The first variant holds rows of up to 512 x 4 chunks of 8 elements in
  // whole warps chosen at launch.
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, launchThreadsSpec(512, 4)), KGEN_OK)
      << kgen::rt::lastError();
  RmsnormArgs a = argsOfLength(11008);
  ASSERT_EQ(k.launch(a.args, 3), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(fake->launches.size(), 1u);
  EXPECT_EQ(fake->launches[0].entry, "rmsnorm_bf16_v8");
  EXPECT_THAT(fake->launches[0].grid, ElementsAre(3u, 1u, 1u));
  EXPECT_THAT(fake->launches[0].block, ElementsAre(352u, 1u, 1u));
}

TEST_F(FakeDriver, RereadVariantLaunchesRowsAlongY) {
  // The first variant re-reads rows over x threads a row by y rows, both
  // chosen at launch: 128 elements = 16 chunks, 16 threads x 16 rows. Both
  // launch calls (plain and programmatic dependent) pass the block's y.
  std::string spec = launchThreadsSpec(1024, 0);
  std::string waits = replaced(spec, "\"kgen_spec\": 2",
                               "\"kgen_spec\": 2, \"grid_dependency\": true");
  kgen::rt::Kernel plain, dependent;
  ASSERT_EQ(plain.create(ptx, spec), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(dependent.create(ptx, waits), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs a = argsOfLength(128);
  ASSERT_EQ(plain.launch(a.args, 65536), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(dependent.launch(a.args, 65536), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(fake->launches.size(), 2u);
  for (const FakeLaunch &l : fake->launches) {
    EXPECT_EQ(l.entry, "rmsnorm_bf16_v8");
    EXPECT_THAT(l.grid, ElementsAre(4096u, 1u, 1u));
    EXPECT_THAT(l.block, ElementsAre(16u, 16u, 1u));
  }
  EXPECT_TRUE(fake->launches[1].programmaticDependent);
}

TEST_F(FakeDriver, FallbackVariantAndCaches) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, RmsnormSpec), KGEN_OK);
  RmsnormArgs aligned;
  RmsnormArgs offset(reinterpret_cast<const void *>(0x1002));
  ASSERT_EQ(k.launch(aligned.args, 1), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(k.launch(offset.args, 1), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(k.launch(offset.args, 1), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(fake->launches.size(), 3u);
  EXPECT_EQ(fake->launches[0].entry, "rmsnorm_bf16_v8");
  EXPECT_EQ(fake->launches[1].entry, "rmsnorm_bf16_v1");
  EXPECT_EQ(fake->launches[2].entry, "rmsnorm_bf16_v1");
  EXPECT_EQ(fake->moduleLoads, 1);

  // Same PTX text in another kernel object: same module.
  kgen::rt::Kernel same;
  ASSERT_EQ(same.create(ptx, RmsnormSpec), KGEN_OK);
  ASSERT_EQ(same.launch(aligned.args, 1), KGEN_OK);
  EXPECT_EQ(fake->moduleLoads, 1);
  // Different text: another module.
  kgen::rt::Kernel other;
  ASSERT_EQ(other.create(ptx + "\n", RmsnormSpec), KGEN_OK);
  ASSERT_EQ(other.launch(aligned.args, 1), KGEN_OK);
  EXPECT_EQ(fake->moduleLoads, 2);
}

TEST_F(FakeDriver, GridDependencyLaunchesAsProgrammaticDependent) {
  // Only a spec that says its entries wait (griddepcontrol.wait) may be
  // launched so: the others would race the kernel before them.
  kgen::rt::Kernel plain, waits;
  ASSERT_EQ(plain.create(ptx, RmsnormSpec), KGEN_OK);
  std::string spec = replaced(RmsnormSpec, "\"kgen_spec\": 2",
                              "\"kgen_spec\": 2, \"grid_dependency\": true");
  ASSERT_EQ(waits.create(ptx, spec), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs a;
  ASSERT_EQ(plain.launch(a.args, 1), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(waits.launch(a.args, 1), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(fake->launches.size(), 2u);
  EXPECT_FALSE(fake->launches[0].programmaticDependent);
  EXPECT_TRUE(fake->launches[1].programmaticDependent);
  EXPECT_EQ(fake->launches[1].entry, "rmsnorm_bf16_v8");
  EXPECT_EQ(fake->launches[1].block[0], fake->launches[0].block[0]);
  EXPECT_EQ(fake->launches[1].grid[0], fake->launches[0].grid[0]);
}

TEST_F(FakeDriver, ForeignLaunchDataIsWhatKgenLaunchLaunched) {
  // kgen_launch_config_get and kgen_pack_params on the device's
  // multiprocessors give the launch kgen_launch made: each launch rule,
  // blockDim.y, a cluster's tiles and the programmatic dependent.
  fake->multiprocessors = 132;
  fake->paramSlots = 8;
  std::string cluster =
      replaced(RmsnormSpec, R"("entry": "rmsnorm_bf16_v8", "block": 128,)",
               R"("entry": "rmsnorm_bf16_v8", "block": 128, "tiles": 4, )"
               R"("cluster": 4, "max_rows": 32,)");
  std::string launchRows =
      replaced(RmsnormSpec, R"("block": 128, "rows_per_block": 1)",
               R"("block": 256, "rows_per_block": 32,
                  "launch_rows_per_block": 32)");
  std::string waits = replaced(launchThreadsSpec(1024, 0), "\"kgen_spec\": 2",
                               "\"kgen_spec\": 2, \"grid_dependency\": true");
  struct Case {
    std::string spec;
    int64_t hidden, rows;
    uint32_t cluster;
  } cases[] = {{RmsnormSpec, 4096, 7, 1},
               {cluster, 4096, 7, 4},
               {launchRows, 4096, 1280, 1},
               {launchThreadsSpec(512, 4), 11008, 3, 1},
               {launchThreadsSpec(1024, 0), 128, 65536, 1},
               {waits, 128, 1024, 1}};
  for (const Case &c : cases) {
    kgen::rt::Kernel k;
    ASSERT_EQ(k.create(ptx, c.spec), KGEN_OK) << kgen::rt::lastError();
    RmsnormArgs a = argsOfLength(c.hidden);
    a.args[2].row_stride = c.hidden + 8;
    fake->launches.clear();
    ASSERT_EQ(k.launch(a.args, c.rows), KGEN_OK) << kgen::rt::lastError();
    ASSERT_EQ(fake->launches.size(), 1u);
    const FakeLaunch &l = fake->launches[0];
    SCOPED_TRACE(l.entry + ", " + std::to_string(c.rows) + " rows");

    kgen_launch_config config;
    ASSERT_EQ(kgen_launch_config_get(k.get(), a.args, 5, c.rows, 132, &config),
              KGEN_OK)
        << kgen::rt::lastError();
    EXPECT_EQ(config.entry, l.entry);
    EXPECT_THAT(config.grid, ElementsAreArray(l.grid));
    EXPECT_THAT(config.block, ElementsAreArray(l.block));
    EXPECT_EQ(config.shared_bytes, l.sharedBytes);
    EXPECT_EQ(config.grid_dependency != 0, l.programmaticDependent);
    EXPECT_THAT(config.cluster, ElementsAre(c.cluster, 1u, 1u));
    uint64_t slots[8];
    ASSERT_EQ(kgen_pack_params(k.get(), a.args, 5, c.rows, 132, slots, 8),
              KGEN_OK)
        << kgen::rt::lastError();
    EXPECT_THAT(slots, ElementsAreArray(l.params));
  }
}

TEST_F(FakeDriver, ZeroRowsDoNotLaunch) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, RmsnormSpec), KGEN_OK);
  RmsnormArgs a;
  EXPECT_EQ(k.launch(a.args, 0), KGEN_OK);
  EXPECT_TRUE(fake->launches.empty());
  EXPECT_EQ(fake->moduleLoads, 0);
}

TEST_F(FakeDriver, JitErrorCarriesTheLog) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx + "BROKEN\n", RmsnormSpec), KGEN_OK);
  RmsnormArgs a;
  EXPECT_EQ(k.launch(a.args, 1), KGEN_ERROR_JIT);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("kgen: rmsnorm_bf16 on device 0: cuModuleLoadDataEx "
                        "failed: "
                        "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation "
                        "failed); JIT log:\nptxas application ptx input"));
}

TEST_F(FakeDriver, LargeSharedMemoryOptsIn) {
  std::string spec =
      replaced(RmsnormSpec, "\"shared_bytes\": 0", "\"shared_bytes\": 65536");
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, spec), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs a;
  ASSERT_EQ(k.launch(a.args, 2), KGEN_OK) << kgen::rt::lastError();
  ASSERT_EQ(k.launch(a.args, 2), KGEN_OK) << kgen::rt::lastError();
  EXPECT_THAT(
      fake->sharedAttributes,
      ElementsAre(std::make_pair(std::string("rmsnorm_bf16_v8"), 65536)));
  EXPECT_EQ(fake->launches[1].sharedBytes, 65536u);
}

TEST_F(FakeDriver, BlockTooLargeForTheFunction) {
  fake->maxThreadsPerBlock = 64;
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, RmsnormSpec), KGEN_OK);
  RmsnormArgs a;
  EXPECT_EQ(k.launch(a.args, 1), KGEN_ERROR_CUDA);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("entry 'rmsnorm_bf16_v8' can run at most 64 threads "
                        "per block on this device, but the spec asks for "
                        "128"));
}

TEST_F(FakeDriver, LaunchFailure) {
  fake->launchResult = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  fake->currentDevice = 1; // an error names the device it happened on
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, RmsnormSpec), KGEN_OK);
  RmsnormArgs a;
  EXPECT_EQ(k.launch(a.args, 3), KGEN_ERROR_CUDA);
  EXPECT_THAT(
      kgen::rt::lastError(),
      HasSubstr("kgen: rmsnorm_bf16 on device 1: cuLaunchKernel failed: "
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (entry "
                "'rmsnorm_bf16_v8', grid 3, block 128"));
}

TEST_F(FakeDriver, UnknownErrorCodesStillDescribed) {
  fake->launchResult = 12345;
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, RmsnormSpec), KGEN_OK);
  RmsnormArgs a;
  EXPECT_EQ(k.launch(a.args, 1), KGEN_ERROR_CUDA);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("cuLaunchKernel failed: CUresult "
                        "12345"));
}

TEST_F(FakeDriver, ConcurrentLaunchesShareOneModule) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(ptx, RmsnormSpec), KGEN_OK);
  std::vector<std::thread> threads;
  std::vector<kgen_status> results(8, KGEN_ERROR_INTERNAL);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      if (kgen_device_open(0, nullptr) != KGEN_OK)
        return;
      RmsnormArgs a;
      for (int i = 0; i < 50; ++i)
        if ((results[t] = k.launch(a.args, 1 + i)) != KGEN_OK)
          return;
    });
  for (auto &t : threads)
    t.join();
  for (kgen_status st : results)
    EXPECT_EQ(st, KGEN_OK);
  EXPECT_EQ(fake->moduleLoads, 1);
  EXPECT_EQ(fake->launches.size(), 400u);
}

TEST_F(FakeDriver, ALoadingModuleBlocksOnlyItsOwnLaunches) {
  // Issue 39: a first launch's JIT held the module cache's lock, so every
  // other launch in the process waited for it.
  kgen::rt::Kernel slow, quick;
  std::string slowPtx = ptx + "// SLOWJIT\n";
  ASSERT_EQ(slow.create(slowPtx, RmsnormSpec), KGEN_OK);
  ASSERT_EQ(quick.create(ptx, RmsnormSpec), KGEN_OK);
  {
    std::lock_guard<std::mutex> lock(fake->mutex);
    fake->slowImage = "SLOWJIT";
    fake->slowLoadMs = 1500;
  }
  RmsnormArgs a;
  kgen_status slowResult = KGEN_ERROR_INTERNAL;
  std::thread loader([&] {
    if (kgen_device_open(0, nullptr) == KGEN_OK)
      slowResult = slow.launch(a.args, 1);
  });
  while (fake->slowLoadsStarted == 0)
    std::this_thread::yield();
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(quick.launch(a.args, 1), KGEN_OK) << kgen::rt::lastError();
  auto waited = std::chrono::steady_clock::now() - t0;
  loader.join();
  EXPECT_EQ(slowResult, KGEN_OK);
  EXPECT_LT(waited, std::chrono::milliseconds(750))
      << "the other kernel's launch waited for the JIT";
  EXPECT_EQ(fake->moduleLoads, 2);
}

TEST_F(FakeDriver, InternalApiFallsBackToOldEventSymbol) {
  std::string err;
  const kgen::rt::Driver *d = kgen::rt::driver(&err);
  ASSERT_NE(d, nullptr) << err;
  float ms = -1;
  EXPECT_EQ(d->eventElapsedTime(&ms, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(ms, 0);
  EXPECT_NE(d->ctxGetId, nullptr);
  EXPECT_EQ(d->errorText(CUDA_SUCCESS, "cuFoo"), "");
  EXPECT_EQ(d->errorText(CUDA_ERROR_INVALID_VALUE, "cuFoo"),
            "cuFoo failed: CUDA_ERROR_INVALID_VALUE");
}

/// RmsnormSpec for `arch`: its PTX marked "// image ARCH", and with `cubin`
/// a stand-in cubin, the ELF magic and the arch.
struct TestImage {
  std::string ptx, spec, cubin;
  TestImage(const std::string &arch, bool withCubin, const std::string &tag)
      : ptx(std::string(RmsnormPtx) + "// image " + arch + " " + tag + "\n"),
        spec(replaced(RmsnormSpec, R"("arch": "sm_90")",
                      R"("arch": ")" + arch + "\"")),
        cubin(withCubin ? "\x7f"
                          "ELF" +
                              arch
                        : "") {}
  kgen_image view() const {
    return {ptx.data(),
            ptx.size(),
            spec.data(),
            spec.size(),
            cubin.empty() ? nullptr : cubin.data(),
            cubin.size()};
  }
};

/// Makes a context the runtime has not seen current (the module cache and
/// the device archs are kept per context).
CUcontext makeFreshContextCurrent() {
  static uintptr_t next = 0xE000;
  CUcontext ctx = reinterpret_cast<CUcontext>(next++);
  fakeSetCurrent(ctx);
  return ctx;
}

/// Launches one row of `k` on a fresh context of a device of compute
/// capability `sm`; returns the image the fake loaded ("" if none).
std::string launchOn(kgen_kernel *k, int sm, kgen_status &st) {
  fake->computeCapability = sm;
  makeFreshContextCurrent();
  size_t loads = fake->loadedImages.size();
  RmsnormArgs a;
  st = kgen_launch(k, a.args, 5, 1, nullptr);
  std::string image =
      fake->loadedImages.size() > loads ? fake->loadedImages.back() : "";
  fakeSetCurrent(static_cast<CUcontext>(FakeContext));
  return image;
}

TEST_F(FakeDriver, EachDeviceTakesTheImageOfItsArch) {
  TestImage sm80("sm_80", true, "a"), sm90("sm_90", true, "a");
  kgen_image images[] = {sm80.view(), sm90.view()};
  kgen_kernel *k = nullptr;
  ASSERT_EQ(kgen_kernel_create_images(images, 2, &k), KGEN_OK)
      << kgen_last_error();
  kgen_status st;
  EXPECT_EQ(launchOn(k, 90, st), "cubin:sm_90");
  EXPECT_EQ(launchOn(k, 86, st), "cubin:sm_80") << "same major, older minor";
  EXPECT_EQ(launchOn(k, 89, st), "cubin:sm_80");
  EXPECT_EQ(launchOn(k, 100, st), "ptx:sm_90") << "newer major: the JIT";
  EXPECT_EQ(st, KGEN_OK);
  EXPECT_EQ(launchOn(k, 75, st), "");
  EXPECT_EQ(st, KGEN_ERROR_NO_DEVICE);
  EXPECT_THAT(kgen_last_error(),
              HasSubstr("no image runs on this device (sm_75); built for "
                        "sm_80, sm_90"));
  kgen_kernel_destroy(k);
}

TEST_F(FakeDriver, AnArchSpecificImageRunsOnItsArchOnly) {
  TestImage sm90("sm_90", false, "b"), sm90a("sm_90a", true, "b");
  kgen_image images[] = {sm90.view(), sm90a.view()};
  kgen_kernel *k = nullptr;
  ASSERT_EQ(kgen_kernel_create_images(images, 2, &k), KGEN_OK)
      << kgen_last_error();
  kgen_status st;
  EXPECT_EQ(launchOn(k, 90, st), "cubin:sm_90a");
  EXPECT_EQ(launchOn(k, 100, st), "ptx:sm_90");
  EXPECT_EQ(st, KGEN_OK);
  kgen_kernel_destroy(k);
}

TEST_F(FakeDriver, AnotherVariantOfAKnownImageLoadsItsCubin) {
  TestImage sm80("sm_80", true, "g"), sm90("sm_90", true, "g");
  kgen_image images[] = {sm80.view(), sm90.view()};
  kgen_kernel *k = nullptr;
  ASSERT_EQ(kgen_kernel_create_images(images, 2, &k), KGEN_OK);
  fake->computeCapability = 90;
  makeFreshContextCurrent();
  RmsnormArgs aligned, odd = argsOfLength(4095); // v8, then v1
  ASSERT_EQ(kgen_launch(k, aligned.args, 5, 1, nullptr), KGEN_OK);
  ASSERT_EQ(kgen_launch(k, odd.args, 5, 1, nullptr), KGEN_OK);
  ASSERT_EQ(kgen_launch(k, aligned.args, 5, 1, nullptr), KGEN_OK);
  EXPECT_THAT(fake->loadedImages, ElementsAre("cubin:sm_90"));
  ASSERT_EQ(fake->launches.size(), 3u);
  EXPECT_EQ(fake->launches[0].entry, "rmsnorm_bf16_v8");
  EXPECT_EQ(fake->launches[1].entry, "rmsnorm_bf16_v1");
  EXPECT_EQ(fake->launches[2].entry, "rmsnorm_bf16_v8");
  fakeSetCurrent(static_cast<CUcontext>(FakeContext));
  kgen_kernel_destroy(k);
}

TEST_F(FakeDriver, ARefusedCubinFallsBackToItsPtx) {
  TestImage sm90("sm_90", true, "f");
  sm90.cubin += " BROKEN"; // the fake refuses it as the driver would
  kgen_image image = sm90.view();
  kgen_kernel *k = nullptr;
  ASSERT_EQ(kgen_kernel_create_images(&image, 1, &k), KGEN_OK);
  makeFreshContextCurrent();
  RmsnormArgs a;
  EXPECT_EQ(kgen_launch(k, a.args, 5, 1, nullptr), KGEN_OK)
      << kgen_last_error();
  ASSERT_EQ(fake->loadedImages.size(), 1u);
  EXPECT_EQ(fake->loadedImages[0], "ptx:sm_90");
  // The refusal is remembered: the context's next launch loads nothing.
  EXPECT_EQ(kgen_launch(k, a.args, 5, 1, nullptr), KGEN_OK);
  EXPECT_EQ(fake->loadedImages.size(), 1u);
  fakeSetCurrent(static_cast<CUcontext>(FakeContext));
  kgen_kernel_destroy(k);
}

TEST_F(FakeDriver, OneImageWithoutACubinIsThePtxPath) {
  TestImage sm90("sm_90", false, "c");
  kgen_image image = sm90.view();
  kgen_kernel *k = nullptr;
  ASSERT_EQ(kgen_kernel_create_images(&image, 1, &k), KGEN_OK);
  kgen_status st;
  EXPECT_EQ(launchOn(k, 120, st), "ptx:sm_90");
  EXPECT_EQ(st, KGEN_OK);
  kgen_kernel_destroy(k);
}

TEST_F(FakeDriver, ThreadsLaunchSeveralKernelsAtOnce) {
  // For TSan (scripts/sanitize.sh tsan): first launches race on a fresh
  // context, two kernels share one module, one kernel has two images (its
  // context's arch is looked up), and the threads alternate variants.
  kgen::rt::Kernel a, b;
  ASSERT_EQ(a.create(ptx, RmsnormSpec), KGEN_OK);
  ASSERT_EQ(b.create(ptx, RmsnormSpec), KGEN_OK);
  TestImage sm80("sm_80", true, "t"), sm90("sm_90", false, "t");
  kgen_image images[] = {sm80.view(), sm90.view()};
  kgen_kernel *multi = nullptr;
  ASSERT_EQ(kgen_kernel_create_images(images, 2, &multi), KGEN_OK);
  fake->computeCapability = 90;
  CUcontext ctx = makeFreshContextCurrent();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      fakeSetCurrent(ctx);
      RmsnormArgs aligned, odd = argsOfLength(4095); // v8, v1
      for (int i = 0; i < 20; ++i)
        for (const kgen_kernel *k : {a.get(), b.get(), multi}) {
          const RmsnormArgs &args = (i + t) % 2 ? aligned : odd;
          if (kgen_launch(k, args.args, 5, 1 + i, nullptr) != KGEN_OK ||
              kgen_last_error()[0] != '\0')
            ++failures;
        }
    });
  for (std::thread &t : threads)
    t.join();
  fakeSetCurrent(static_cast<CUcontext>(FakeContext));
  kgen_kernel_destroy(multi);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(fake->moduleLoads, 2) << "a and b share one module";
  EXPECT_THAT(fake->loadedImages, ::testing::Contains("ptx:sm_90"));
  EXPECT_EQ(fake->launches.size(), 8u * 20 * 3);
}

TEST(KernelImages, EveryImageIsChecked) {
  TestImage sm80("sm_80", true, "d"), sm90("sm_90", true, "d");
  kgen_kernel *k = nullptr;
  EXPECT_EQ(kgen_kernel_create_images(nullptr, 0, &k),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(), HasSubstr("at least one image"));

  kgen_image twice[] = {sm90.view(), sm90.view()};
  EXPECT_EQ(kgen_kernel_create_images(twice, 2, &k),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(),
              HasSubstr("images 0 and 1 are both for sm_90"));

  TestImage other = sm80;
  other.spec = replaced(other.spec, R"("dtype": "bf16", "arch")",
                        R"("dtype": "f16", "arch")");
  kgen_image mixed[] = {sm90.view(), other.view()};
  EXPECT_EQ(kgen_kernel_create_images(mixed, 2, &k),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(),
              HasSubstr("image 1: rmsnorm_f16 (sm_80) is not the same kernel "
                        "as image 0, rmsnorm_bf16 (sm_90)"));

  TestImage notElf = sm90;
  notElf.cubin = "// PTX where a cubin goes";
  kgen_image bad = notElf.view();
  EXPECT_EQ(kgen_kernel_create_images(&bad, 1, &k),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(), HasSubstr("the cubin is not an ELF image"));

  TestImage badArch = sm90;
  badArch.spec =
      replaced(badArch.spec, R"("arch": "sm_90")", R"("arch": "compute_90")");
  kgen_image arch = badArch.view();
  EXPECT_EQ(kgen_kernel_create_images(&arch, 1, &k), KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen_last_error(),
              HasSubstr("arch 'compute_90' is not of the form sm_XY"));
  EXPECT_EQ(k, nullptr);
}

TEST(KernelImages, CreateOnceGivesEveryThreadTheSameKernel) {
  TestImage sm90("sm_90", true, "e");
  kgen_image image = sm90.view();
  static kgen_kernel *slot = nullptr;
  std::vector<kgen_kernel *> got(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      EXPECT_EQ(kgen_kernel_create_once(&slot, &image, 1, &got[t]), KGEN_OK);
    });
  for (std::thread &t : threads)
    t.join();
  ASSERT_NE(slot, nullptr);
  for (kgen_kernel *k : got)
    EXPECT_EQ(k, slot);
  // A bad image fails every call and leaves the slot empty.
  static kgen_kernel *empty = nullptr;
  kgen_kernel *k = nullptr;
  TestImage broken = sm90;
  broken.spec = "{}";
  kgen_image bad = broken.view();
  EXPECT_EQ(kgen_kernel_create_once(&empty, &bad, 1, &k),
            KGEN_ERROR_INVALID_SPEC);
  EXPECT_EQ(empty, nullptr);
  EXPECT_EQ(kgen_kernel_create_once(nullptr, &image, 1, &k),
            KGEN_ERROR_INVALID_ARGUMENT);
}

TEST(KernelImages, SetErrorIsWhatLastErrorSays) {
  EXPECT_EQ(kgen_set_error(KGEN_ERROR_INVALID_ARGUMENT, "lib: no kernel"),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kgen_last_error(), "lib: no kernel");
  EXPECT_STRNE(kgen_runtime_version(), "");
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!kgen::rt::setDriverLibraryForTesting(KGEN_FAKE_CUDA_PATH)) {
    fprintf(stderr, "could not redirect the driver\n");
    return 1;
  }
  void *lib = dlopen(KGEN_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  auto get =
      lib ? reinterpret_cast<FakeCudaState *(*)()>(dlsym(lib, "fakeCudaState"))
          : nullptr;
  if (!get) {
    fprintf(stderr, "cannot load %s: %s\n", KGEN_FAKE_CUDA_PATH, dlerror());
    return 1;
  }
  fake = get();
  fakeSetCurrent = reinterpret_cast<decltype(&cuCtxSetCurrent)>(
      dlsym(lib, "cuCtxSetCurrent"));
  return RUN_ALL_TESTS();
}
