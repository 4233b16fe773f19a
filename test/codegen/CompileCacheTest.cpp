//===- CompileCacheTest.cpp - A compile reads what it wrote, and only that ===//
#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Registry.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace kgen;

namespace {

struct Cache : ::testing::Test {
  std::string dir;
  codegen::Compiler compiler;
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kgen-cache", path));
    dir = path.str().str();
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  codegen::Artifact compile(codegen::CompileOptions opts,
                            codegen::Stage last = codegen::Stage::Spec) {
    const OpDef *op = findOp("rmsnorm");
    EXPECT_NE(op, nullptr);
    opts.cudaPath = KGEN_CUDA_PATH;
    Kernel k = op->instantiate(DType::BF16, 4096, opts.dims);
    codegen::Artifact art;
    std::string error;
    EXPECT_TRUE(
        compiler.compile(k, {"rmsnorm", "bf16", "k"}, opts, last, art, error))
        << error;
    return art;
  }
};

TEST_F(Cache, ASecondCompileReadsTheFirstsArtifact) {
  codegen::CompileOptions opts;
  opts.cacheDir = dir;
  codegen::Artifact first = compile(opts), again = compile(opts);
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(first.ptx, again.ptx);
  EXPECT_EQ(first.spec, again.spec);
  // Without the cache, the same bytes.
  codegen::Artifact plain = compile(codegen::CompileOptions());
  EXPECT_FALSE(plain.cached);
  EXPECT_EQ(plain.ptx, first.ptx);
  EXPECT_EQ(plain.spec, first.spec);
}

TEST_F(Cache, WhatChangesTheKernelMisses) {
  codegen::CompileOptions opts;
  opts.cacheDir = dir;
  compile(opts);
  codegen::CompileOptions arch = opts;
  arch.arch = "sm_80";
  EXPECT_FALSE(compile(arch).cached);
  codegen::CompileOptions threads = opts;
  threads.threadsPerRow = 64;
  EXPECT_FALSE(compile(threads).cached);
  codegen::CompileOptions profile = opts;
  std::string error;
  profile.profile.emplace();
  ASSERT_TRUE(codegen::parseProfile(
      R"({"profile": "p", "inherits": "sm_90",
          "options": {"kgen-schedule": {"target-chunks": 2}}})",
      "test", *profile.profile, error))
      << error;
  codegen::Artifact tuned = compile(profile);
  EXPECT_FALSE(tuned.cached);
  EXPECT_TRUE(compile(profile).cached);
  EXPECT_TRUE(compile(opts).cached); // the first is still there
}

TEST_F(Cache, APtxOnlyEntryIsNoSpec) {
  codegen::CompileOptions opts;
  opts.cacheDir = dir;
  EXPECT_FALSE(compile(opts, codegen::Stage::Ptx).cached);
  EXPECT_TRUE(compile(opts, codegen::Stage::Ptx).cached);
  codegen::Artifact spec = compile(opts);
  EXPECT_FALSE(spec.cached); // compiled again for its spec
  EXPECT_FALSE(spec.spec.empty());
  EXPECT_TRUE(compile(opts).cached);
}

TEST_F(Cache, AnUnwritableFolderOnlyCostsTime) {
  codegen::CompileOptions opts;
  opts.cacheDir = dir + "/a-file";
  {
    std::FILE *f = std::fopen(opts.cacheDir.c_str(), "w");
    std::fclose(f);
  }
  codegen::Artifact first = compile(opts), again = compile(opts);
  EXPECT_FALSE(again.cached);
  EXPECT_EQ(first.ptx, again.ptx);
}

} // namespace
