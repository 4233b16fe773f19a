//===- ImportTest.cpp - DSL kernels the code generator refuses, clearly ---===//
#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace kgen;
using ::testing::HasSubstr;

namespace {

// The interpreter reads fp8 values; the lowering does not yet. A cast to
// fp8 read back must stop at the user's line, not fail in LLVM's
// translation ("unrealized_conversion_cast").
TEST(Import, ReadingAnFp8ValueNamesTheUsersLine) {
  Builder b("fp8_roundtrip");
  Len n = b.dim("hidden");
  Tensor x = b.input("x", DType::BF16, n);
  int line = __LINE__ + 1;
  Expr back = x.to(DType::F8E4M3).to(DType::F32);
  b.output("y", back);
  Kernel k = b.build();
  codegen::Compiler compiler;
  codegen::CompileOptions opts;
  opts.cudaPath = KGEN_CUDA_PATH;
  codegen::Artifact art;
  std::string error;
  EXPECT_FALSE(compiler.compile(k, {"fp8_roundtrip", "bf16", "k"}, opts,
                                codegen::Stage::Ptx, art, error));
  EXPECT_THAT(error, HasSubstr("ImportTest.cpp:" + std::to_string(line) +
                               ": kernel 'fp8_roundtrip' reads an f8e4m3 "
                               "value: the code generator writes fp8 but "
                               "does not read it yet"));
}

} // namespace
