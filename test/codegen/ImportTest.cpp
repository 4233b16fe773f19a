//===- ImportTest.cpp - DSL kernels the code generator refuses, clearly ---===//
#include "codegen/Import/ImportDSL.h"
#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Builder.h"
#include "dsl/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <limits>

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

// ceilPow2 is lowered as integer arithmetic on the bits, apart from the
// interpreter's frexp: on a constant it folds, to the interpreter's value.
TEST(Import, CeilPow2FoldsToTheInterpretersValue) {
  Builder k("ceil_pow2");
  Tensor x = k.input("x", DType::F32, k.dim("hidden"));
  k.output("y", ceilPow2(x));
  Kernel kernel = k.build();
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::arith::ArithDialect>();
  mlir::OpBuilder b(&ctx);
  mlir::Location loc = b.getUnknownLoc();
  for (float v : {1.0f, 1.5f, 0.75f, -3.0f, 0x1p-126f, 0x1p-130f, 0x1p127f,
                  0x1.000002p0f, std::numeric_limits<float>::max(), 0.0f, -0.0f,
                  std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN()}) {
    float want = 0;
    Bindings bind;
    bind.dims = {1};
    bind.rows = 1;
    bind.tensors = {{&v}, {&want}};
    interpret(kernel, bind);
    mlir::Value got = mlir::kgen::buildCeilPow2(
        b, loc, mlir::arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)),
        [](mlir::Value c) { return c; });
    auto cst = got.getDefiningOp<mlir::arith::ConstantOp>();
    ASSERT_TRUE(cst) << v << " did not fold";
    float folded =
        cast<mlir::FloatAttr>(cst.getValue()).getValue().convertToFloat();
    EXPECT_EQ(std::bit_cast<uint32_t>(want), std::bit_cast<uint32_t>(folded))
        << v;
  }
}

} // namespace
