//===- NoDriverTest.cpp - Behaviour without libcuda.so.1 ------------------===//

#include "TestSpecs.h"

#include "runtime/Driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

using namespace kgen::test;
using ::testing::HasSubstr;

namespace {

bool driverLoadable() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib)
    dlclose(lib);
  return lib != nullptr;
}

class NoDriver : public ::testing::Test {
protected:
  void SetUp() override {
    if (driverLoadable())
      GTEST_SKIP() << "libcuda.so.1 is loadable here";
  }
};

TEST_F(NoDriver, LaunchFailsCleanly) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(RmsnormPtx, RmsnormSpec), KGEN_OK)
      << kgen::rt::lastError();
  RmsnormArgs a;
  for (int i = 0; i < 2; ++i) { // the failure is sticky, not a crash later
    EXPECT_EQ(k.launch(a.args, 4), KGEN_ERROR_NO_DRIVER);
    EXPECT_THAT(kgen::rt::lastError(),
                HasSubstr("kgen runtime: cannot load the CUDA driver "
                          "(libcuda.so.1): "));
  }
}

TEST_F(NoDriver, DeviceOpenFailsCleanly) {
  void *ctx = reinterpret_cast<void *>(0x1);
  EXPECT_EQ(kgen_device_open(0, &ctx), KGEN_ERROR_NO_DRIVER);
  EXPECT_THAT(kgen_last_error(), HasSubstr("libcuda.so.1"));
  EXPECT_EQ(ctx, reinterpret_cast<void *>(0x1));
}

TEST_F(NoDriver, InternalApiReportsIt) {
  std::string err;
  kgen_status st = KGEN_OK;
  EXPECT_EQ(kgen::rt::driver(&err, &st), nullptr);
  EXPECT_EQ(st, KGEN_ERROR_NO_DRIVER);
  EXPECT_THAT(err, HasSubstr("libcuda.so.1"));
  // Too late to redirect: the driver was already looked for.
  EXPECT_FALSE(kgen::rt::setDriverLibraryForTesting("/nonexistent.so"));
}

} // namespace
