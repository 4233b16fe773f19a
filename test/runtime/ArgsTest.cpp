//===- ArgsTest.cpp - Launch argument checks and variant selection -------===//
//
// All of these run before the runtime touches the driver, so they need no
// GPU. Each failing case is checked through kgen_launch too: it must fail the
// same way whether or not a driver is present.
//
//===----------------------------------------------------------------------===//

#include "TestSpecs.h"

#include "runtime/Args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

using namespace kgen::test;
using ::testing::HasSubstr;

namespace {

const void *addr(uintptr_t a) { return reinterpret_cast<const void *>(a); }

/// Stores an out-of-range value in an enum field, as a C caller could.
/// (static_cast would be undefined behaviour in C++.)
template <typename Enum> void setRaw(Enum &field, int value) {
  std::underlying_type_t<Enum> v = value;
  std::memcpy(&field, &v, sizeof(v));
}

class Args : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(kernel.create(RmsnormPtx, RmsnormSpec), KGEN_OK)
        << kgen::rt::lastError();
  }

  /// Expects both kgen_select_variant and kgen_launch to fail with `status`
  /// and a message containing each of `texts`.
  void expectRejected(const kgen_arg *args, size_t nargs, int64_t rows,
                      kgen_status status,
                      std::initializer_list<const char *> texts) {
    size_t variant = 99;
    EXPECT_EQ(kernel.selectVariant(args, nargs, rows, variant), status);
    std::string msg = kgen::rt::lastError();
    for (const char *t : texts)
      EXPECT_THAT(msg, HasSubstr(t));
    EXPECT_EQ(variant, 99u) << "output written on failure";
    EXPECT_EQ(kernel.launch(args, nargs, rows), status);
    EXPECT_EQ(kgen::rt::lastError(), msg);
  }

  void expectRejected(const RmsnormArgs &a, int64_t rows, kgen_status status,
                      std::initializer_list<const char *> texts) {
    expectRejected(a.args, 5, rows, status, texts);
  }

  size_t select(const RmsnormArgs &a, int64_t rows = 4) {
    size_t variant = 99;
    EXPECT_EQ(kernel.selectVariant(a.args, rows, variant), KGEN_OK)
        << kgen::rt::lastError();
    return variant;
  }

  kgen::rt::Kernel kernel;
};

TEST_F(Args, AlignedArgsPickTheVectorVariant) {
  RmsnormArgs a;
  EXPECT_EQ(select(a), 0u);
  EXPECT_STREQ(kgen::rt::lastError(), "");
}

TEST_F(Args, OffsetPointerPicksTheFallback) {
  // One bf16 element past a 16-byte boundary: aligned for bf16, not for v8.
  RmsnormArgs a(addr(0x1002));
  EXPECT_EQ(select(a), 1u);
}

TEST_F(Args, OddStrideOrDimPicksTheFallback) {
  RmsnormArgs a;
  a.args[2].row_stride = 4097; // 8194 bytes: not a multiple of 16
  EXPECT_EQ(select(a), 1u);
  RmsnormArgs b(addr(0x10000), addr(0x20000), addr(0x30000), 4100);
  EXPECT_EQ(select(b), 1u);
  RmsnormArgs c;
  c.args[0].row_stride = 4104; // padded rows, still 16-byte multiples
  EXPECT_EQ(select(c), 0u);
}

TEST(ArgsVector, VectorLengthDoesNotBlockTheFastVariant) {
  // A weight of 4100 bf16 (8200 bytes) with padded, 16-byte-aligned rows:
  // only row tensors step by a stride, so the vector variant still fits.
  kgen::rt::Kernel kernel;
  std::string spec = replaced(RmsnormSpec, R"("dim_multiple": {"hidden": 8})",
                              R"("dim_multiple": {})");
  ASSERT_EQ(kernel.create(RmsnormPtx, spec), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs a(reinterpret_cast<const void *>(0x10000),
                reinterpret_cast<const void *>(0x20000),
                reinterpret_cast<const void *>(0x30000), 4100);
  a.args[0].row_stride = 4104;
  a.args[2].row_stride = 4104;
  size_t variant = 99;
  ASSERT_EQ(kernel.selectVariant(a.args, 4, variant), KGEN_OK)
      << kgen::rt::lastError();
  EXPECT_EQ(variant, 0u);
}

TEST_F(Args, WrongCount) {
  RmsnormArgs a;
  expectRejected(a.args, 4, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"kgen: rmsnorm_bf16: expected 5 arguments, got 4"});
  expectRejected(nullptr, 5, 1, KGEN_ERROR_INVALID_ARGUMENT, {"args is NULL"});
}

TEST_F(Args, WrongKind) {
  RmsnormArgs a;
  a.args[3] = kgen::rt::dimArg(3);
  expectRejected(a, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"argument 'eps' (#3) is a scalar but a dim was passed"});
  setRaw(a.args[3].kind, 42);
  expectRejected(a, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"argument 'eps' (#3) has an invalid kind (42)"});
}

TEST_F(Args, DtypeMismatch) {
  RmsnormArgs a;
  a.args[0].dtype = KGEN_F16;
  expectRejected(a, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"kgen: rmsnorm_bf16: argument 'x' (#0) is a tensor of bf16 "
                  "but a f16 tensor was passed"});
  RmsnormArgs b;
  b.args[3] = kgen::rt::intArg(1, KGEN_I32);
  expectRejected(b, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"argument 'eps' (#3) is a f32 scalar but a i32 scalar was "
                  "passed"});
  RmsnormArgs c;
  setRaw(c.args[1].dtype, -1);
  expectRejected(c, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"invalid dtype (-1) tensor was passed"});
}

TEST_F(Args, NullPointer) {
  RmsnormArgs a(nullptr);
  expectRejected(a, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"argument 'x' (#0) is a NULL pointer"});
  // With no rows, row tensors may be NULL but a vector may not.
  size_t variant = 99;
  RmsnormArgs b(nullptr, addr(0x20000), nullptr);
  EXPECT_EQ(kernel.selectVariant(b.args, 0, variant), KGEN_OK)
      << kgen::rt::lastError();
  EXPECT_EQ(kernel.launch(b.args, 0), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs c(nullptr, nullptr, nullptr);
  expectRejected(c, 0, KGEN_ERROR_INVALID_ARGUMENT,
                 {"argument 'weight' (#1) is a NULL pointer"});
}

TEST_F(Args, MisalignedPointer) {
  RmsnormArgs a(addr(0x1001));
  expectRejected(a, 1, KGEN_ERROR_MISALIGNED,
                 {"argument 'x' (#0) pointer 0x1001 is not aligned to its "
                  "element size (2 bytes for bf16)"});
}

TEST_F(Args, StrideSmallerThanRow) {
  RmsnormArgs a;
  a.args[2].row_stride = 4095;
  expectRejected(a, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"argument 'y' (#2) row_stride 4095 is smaller than its row "
                  "length 4096 (hidden)"});
  RmsnormArgs b;
  b.args[0].row_stride = INT64_MAX;
  expectRejected(b, 1, KGEN_ERROR_INVALID_ARGUMENT, {"overflows"});
  // 2^13 rows of 2^51 bytes: the last row is 2^64 bytes in, aliasing row 0.
  RmsnormArgs c;
  c.args[0].row_stride = int64_t(1) << 50;
  expectRejected(c, int64_t(1) << 13, KGEN_ERROR_INVALID_ARGUMENT,
                 {"argument 'x' (#0) row_stride 1125899906842624 times 8192 "
                  "rows overflows int64 bytes"});
  size_t variant;
  EXPECT_EQ(kernel.selectVariant(c.args, int64_t(1) << 12, variant), KGEN_OK)
      << kgen::rt::lastError();
}

TEST_F(Args, Rows) {
  RmsnormArgs a;
  expectRejected(a, -1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"rows is -1, must be >= 0"});
  expectRejected(a, int64_t(1) << 31, KGEN_ERROR_INVALID_ARGUMENT,
                 {"more than the grid limit"});
  size_t variant;
  EXPECT_EQ(kernel.selectVariant(a.args, INT32_MAX, variant), KGEN_OK);
  // rows == 0 checks the arguments, then succeeds without the driver.
  EXPECT_EQ(kernel.launch(a.args, 0), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs bad(addr(0x1001));
  EXPECT_EQ(kernel.launch(bad.args, 0), KGEN_ERROR_MISALIGNED);
}

TEST_F(Args, DimMustBePositive) {
  RmsnormArgs a(addr(0x10000), addr(0x20000), addr(0x30000), 0);
  expectRejected(a, 1, KGEN_ERROR_INVALID_ARGUMENT,
                 {"argument 'hidden' (#4) is a dim and must be > 0, got 0"});
}

// A dim's "max" bounds what a launch may pass: the kernel relies on it (rope's
// rotary_pairs stays within a head).
TEST(ArgsDim, PastItsMax) {
  kgen::rt::Kernel kernel;
  std::string spec = replaced(
      RmsnormSpec, R"({"name": "hidden", "kind": "dim", "dtype": "i64"})",
      R"({"name": "hidden", "kind": "dim", "dtype": "i64", "max": 4096})");
  ASSERT_EQ(kernel.create(RmsnormPtx, spec), KGEN_OK) << kgen::rt::lastError();
  size_t variant = 99;
  EXPECT_EQ(kernel.selectVariant(RmsnormArgs().args, 5, 4, variant), KGEN_OK)
      << kgen::rt::lastError();
  RmsnormArgs a(reinterpret_cast<const void *>(0x10000),
                reinterpret_cast<const void *>(0x20000),
                reinterpret_cast<const void *>(0x30000), 4104);
  EXPECT_EQ(kernel.selectVariant(a.args, 5, 4, variant),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("argument 'hidden' (#4) is a dim and must be <= 4096, "
                        "got 4104"));
  for (const char *bad : {"0", "4.5", "\"4\""}) {
    std::string s =
        replaced(RmsnormSpec, R"("dtype": "i64"})",
                 std::string(R"("dtype": "i64", "max": )") + bad + "}");
    EXPECT_EQ(kernel.create(RmsnormPtx, s), KGEN_ERROR_INVALID_SPEC) << bad;
    EXPECT_THAT(kgen::rt::lastError(), HasSubstr("'max'")) << bad;
  }
}

TEST_F(Args, NullKernel) {
  RmsnormArgs a;
  size_t variant;
  EXPECT_EQ(kgen_select_variant(nullptr, a.args, 5, 1, &variant),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kgen_launch(nullptr, a.args, 5, 1, nullptr),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("kernel is NULL"));
}

/// A kernel whose only variant has requirements, and integer scalars.
const char *const StrictSpec = R"({
  "kgen_spec": 2, "op": "scale", "dtype": "f32", "arch": "sm_90", "hash": "1",
  "dims": {"n": 256},
  "params": [
    {"name": "x", "kind": "tensor", "dtype": "f32", "access": "rows", "row_length": "2*n"},
    {"name": "k", "kind": "scalar", "dtype": "i32"},
    {"name": "m", "kind": "scalar", "dtype": "i64"},
    {"name": "alpha", "kind": "scalar", "dtype": "f32"}
  ],
  "variants": [{"entry": "scale_v4", "block": 64, "rows_per_block": 4,
                "tiles": 3, "tensor_align": {"x": 16},
                "abi": [{"slot": "rows", "type": "i64"},
                        {"slot": "scalar", "param": "k", "type": "i32"},
                        {"slot": "stride", "param": "x", "type": "i64"},
                        {"slot": "scalar", "param": "alpha", "type": "f32"},
                        {"slot": "ptr", "param": "x", "type": "u64"},
                        {"slot": "scalar", "param": "m", "type": "i64"}]}]
})";
const char *const StrictPtx = ".visible .entry scale_v4() { ret; }";

TEST(ArgsStrict, NoVariantFits) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(StrictPtx, StrictSpec), KGEN_OK) << kgen::rt::lastError();
  kgen_arg args[] = {kgen::rt::tensorArg(addr(0x1004), KGEN_F32),
                     kgen::rt::intArg(3, KGEN_I32), kgen::rt::intArg(5),
                     kgen::rt::f32Arg(2.0f)};
  size_t variant;
  EXPECT_EQ(k.selectVariant(args, 1, variant), KGEN_ERROR_MISALIGNED);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("kgen: scale_f32: no variant accepts these arguments "
                        "(scale_v4: 'x' pointer 0x1004 is not 16-byte "
                        "aligned)"));
  args[0].ptr = addr(0x1000);
  args[0].row_stride = 513; // row length is 2*n = 512
  EXPECT_EQ(k.selectVariant(args, 1, variant), KGEN_ERROR_MISALIGNED);
  EXPECT_THAT(
      kgen::rt::lastError(),
      HasSubstr("'x' row stride of 2052 bytes is not a multiple of 16"));
  args[0].row_stride = 511;
  EXPECT_EQ(k.selectVariant(args, 1, variant), KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("row_stride 511 is smaller than its row length 512 "
                        "(2*n)"));
  args[0].row_stride = 0;
  args[1].i = int64_t(1) << 40;
  EXPECT_EQ(k.selectVariant(args, 1, variant), KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("does not fit in 32 bits"));
}

// An f32 scalar's "min" bounds what a launch may pass: the kernel relies on
// it (group quant's eps keeps each scale a normal float).
TEST(ArgsStrict, ScalarBelowItsMin) {
  kgen::rt::Kernel k;
  std::string spec = replaced(
      StrictSpec, R"("name": "alpha", "kind": "scalar", "dtype": "f32")",
      R"("name": "alpha", "kind": "scalar", "dtype": "f32", "min": 1e-30)");
  ASSERT_EQ(k.create(StrictPtx, spec), KGEN_OK) << kgen::rt::lastError();
  kgen_arg args[] = {kgen::rt::tensorArg(addr(0x1000), KGEN_F32),
                     kgen::rt::intArg(3, KGEN_I32), kgen::rt::intArg(5),
                     kgen::rt::f32Arg(1e-30f)};
  size_t variant = 99;
  EXPECT_EQ(k.selectVariant(args, 1, variant), KGEN_OK)
      << kgen::rt::lastError();
  for (float bad : {0.0f, -1.0f, 1e-31f, std::nanf("")}) {
    args[3].f = bad;
    EXPECT_EQ(k.selectVariant(args, 1, variant), KGEN_ERROR_INVALID_ARGUMENT)
        << bad;
    EXPECT_THAT(kgen::rt::lastError(),
                HasSubstr("argument 'alpha' (#3) must be >= 1e-30 (the kernel "
                          "relies on it), got "))
        << bad;
  }
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("got nan"));
  // Only f32 scalars take one, and it lies within the f32 range.
  const std::string intK = R"("name": "k", "kind": "scalar", "dtype": "i32")";
  const std::string alpha =
      R"("name": "alpha", "kind": "scalar", "dtype": "f32")";
  for (auto [param, bad] :
       {std::pair{intK, R"(, "min": 1)"}, std::pair{alpha, R"(, "min": "1")"},
        std::pair{alpha, R"(, "min": 1e39)"},
        std::pair{alpha, R"(, "min": null)"}}) {
    std::string s = replaced(StrictSpec, param, param + bad);
    EXPECT_EQ(k.create(StrictPtx, s), KGEN_ERROR_INVALID_SPEC) << bad;
    EXPECT_THAT(kgen::rt::lastError(), HasSubstr("'min'")) << bad;
  }
}

/// Heads padded inside a row (rope's q): 64-element heads `p` apart, `h` a
/// row, so a row spans h * p elements.
const char *const PaddedSpec = R"({
  "kgen_spec": 3, "op": "rot", "dtype": "f32", "arch": "sm_90", "hash": "1",
  "dims": {},
  "params": [
    {"name": "q", "kind": "tensor", "dtype": "f32", "access": "rows",
     "row_length": "64*h", "writes": true,
     "row_map": {"rows_per_tensor_row": "h",
                 "sub_rows": {"first": 0, "count": "h", "length": 64,
                              "pitch": "p"}}},
    {"name": "h", "kind": "dim", "dtype": "i64"},
    {"name": "p", "kind": "dim", "dtype": "i64"}
  ],
  "variants": [{"entry": "rot", "block": 64,
                "abi": [{"slot": "ptr", "param": "q", "type": "u64"},
                        {"slot": "stride", "param": "q", "type": "i64"},
                        {"slot": "dim", "param": "h", "type": "i64"},
                        {"slot": "dim", "param": "p", "type": "i64"},
                        {"slot": "rows", "type": "i64"}]}]
})";

TEST(ArgsPadded, HeadsMustNotOverlap) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(".visible .entry rot() { ret; }", PaddedSpec), KGEN_OK)
      << kgen::rt::lastError();
  kgen_arg args[] = {kgen::rt::tensorArg(addr(0x1000), KGEN_F32),
                     kgen::rt::dimArg(4), kgen::rt::dimArg(72)};
  size_t variant;
  // Contiguous rows span 4 * 72 (the stride passed for row_stride 0); a
  // stride of exactly that fits.
  EXPECT_EQ(k.selectVariant(args, 8, variant), KGEN_OK)
      << kgen::rt::lastError();
  kgen::rt::Spec spec;
  std::string err;
  ASSERT_TRUE(kgen::rt::parseSpec(PaddedSpec, spec, err)) << err;
  kgen::rt::BoundArgs bound;
  ASSERT_EQ(kgen::rt::bindArgs(spec, args, 3, 8, bound, err), KGEN_OK) << err;
  EXPECT_EQ(bound.stride[0], 4 * 72);
  kgen_param_info info{};
  ASSERT_EQ(k.param(0, info), KGEN_OK);
  EXPECT_EQ(info.row_length, 0);
  EXPECT_STREQ(info.row_length_expr, "h*p");
  args[0].row_stride = 4 * 72;
  EXPECT_EQ(k.selectVariant(args, 8, variant), KGEN_OK)
      << kgen::rt::lastError();
  // Past 4 * 64 (dense heads) but short of the padded ones: rows overlap.
  args[0].row_stride = 4 * 72 - 1;
  EXPECT_EQ(k.selectVariant(args, 8, variant), KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("row_stride 287 is smaller than its row length 288 "
                        "(h*p): rows would overlap"));
  // Heads closer than their length overlap.
  args[0].row_stride = 0;
  args[2].i = 63;
  EXPECT_EQ(k.selectVariant(args, 8, variant), KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'q' (#0) has heads 63 elements apart (p) but 64 "
                        "long: heads would overlap"));
  args[1].i = int64_t(1) << 40;
  args[2].i = int64_t(1) << 40;
  EXPECT_EQ(k.selectVariant(args, 8, variant), KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("overflow int64"));
  // A version 2 spec cannot ask for the check: older runtimes skip it.
  kgen::rt::Kernel old;
  EXPECT_EQ(old.create(
                ".visible .entry rot() { ret; }",
                replaced(PaddedSpec, R"("kgen_spec": 3)", R"("kgen_spec": 2)")),
            KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("'pitch' needs kgen_spec 3"));
}

/// Per-head scalars (group quant's scales): rows = T tokens x g heads, (t, h)
/// at t * row_stride + h * p, row-major (row_stride g * p) or column-major
/// (row_stride 1, p >= T).
const char *const PaddedScalarsSpec = R"({
  "kgen_spec": 3, "op": "quant", "dtype": "f32", "arch": "sm_90", "hash": "1",
  "dims": {},
  "params": [
    {"name": "scale", "kind": "tensor", "dtype": "f32", "access": "scalars",
     "row_length": 1, "writes": true,
     "row_map": {"rows_per_tensor_row": "g",
                 "sub_rows": {"first": 0, "count": "g", "length": 1,
                              "pitch": "p"}}},
    {"name": "g", "kind": "dim", "dtype": "i64"},
    {"name": "p", "kind": "dim", "dtype": "i64"}
  ],
  "variants": [{"entry": "quant", "block": 32,
                "abi": [{"slot": "ptr", "param": "scale", "type": "u64"},
                        {"slot": "stride", "param": "scale", "type": "i64"},
                        {"slot": "dim", "param": "p", "type": "i64"},
                        {"slot": "rows", "type": "i64"}]}]
})";
const char *const PaddedScalarsPtx = ".visible .entry quant() { ret; }";

// The same kernel's scales as a pitched rows tensor (kgen_spec 4): rows of
// g elements p apart, each row program one row (per-group scales).
const char *const PitchedRowsSpec = R"({
  "kgen_spec": 4, "op": "quant", "dtype": "f32", "arch": "sm_90", "hash": "1",
  "dims": {},
  "params": [
    {"name": "scale", "kind": "tensor", "dtype": "f32", "access": "rows",
     "row_length": "g", "pitch": "p", "writes": true},
    {"name": "g", "kind": "dim", "dtype": "i64"},
    {"name": "p", "kind": "dim", "dtype": "i64"}
  ],
  "variants": [{"entry": "quant", "block": 32, "tensor_align": {"scale": 4},
                "abi": [{"slot": "ptr", "param": "scale", "type": "u64"},
                        {"slot": "stride", "param": "scale", "type": "i64"},
                        {"slot": "dim", "param": "p", "type": "i64"},
                        {"slot": "rows", "type": "i64"}]}]
})";

class ArgsPaddedScalars : public ::testing::Test {
protected:
  void SetUp() override { load(PaddedScalarsSpec); }

  void load(const char *text) {
    std::string err;
    ASSERT_TRUE(kgen::rt::parseSpec(text, spec, err)) << err;
    ASSERT_EQ(kernel.create(PaddedScalarsPtx, text), KGEN_OK)
        << kgen::rt::lastError();
  }

  /// Binds g heads `p` apart with `stride` over `rows` row programs; on
  /// success returns the stride the kernel gets (its abi slot), else -1.
  int64_t bind(int64_t g, int64_t p, int64_t stride, int64_t rows) {
    kgen_arg args[] = {kgen::rt::tensorArg(addr(0x1000), KGEN_F32, stride),
                       kgen::rt::dimArg(g), kgen::rt::dimArg(p)};
    kgen::rt::BoundArgs bound;
    err.clear();
    size_t variant = 99;
    kgen_status selected = kernel.selectVariant(args, rows, variant);
    std::string selectErr = kgen::rt::lastError();
    status = kgen::rt::bindArgs(spec, args, 3, rows, bound, err);
    EXPECT_EQ(selected, status) << selectErr;
    if (status) {
      // kgen_select_variant and kgen_launch fail the same way, before the
      // driver.
      EXPECT_EQ(selectErr, err);
      EXPECT_EQ(kernel.launch(args, rows), status);
      EXPECT_EQ(kgen::rt::lastError(), err);
      return -1;
    }
    std::vector<uint64_t> storage;
    std::vector<void *> params;
    kgen::rt::packAbi(spec, spec.variants[0], bound, storage, params);
    EXPECT_EQ(*static_cast<uint64_t *>(params[0]), 0x1000u);
    EXPECT_EQ(*static_cast<int64_t *>(params[1]), bound.stride[0]);
    return *static_cast<int64_t *>(params[1]);
  }

  kgen::rt::Spec spec;
  kgen::rt::Kernel kernel;
  std::string err;
  kgen_status status = KGEN_OK;
};

TEST_F(ArgsPaddedScalars, RowMajorTakesTheRowStride) {
  // 8 tokens of 4 heads: [8, 4], and row_stride 0 means exactly that.
  EXPECT_EQ(bind(4, 1, 0, 32), 4) << err;
  EXPECT_EQ(bind(4, 1, 4, 32), 4) << err;
  EXPECT_EQ(bind(4, 1, 5, 32), 5) << err;
  // Heads padded to 3 apart: rows of 12, or further apart.
  EXPECT_EQ(bind(4, 3, 0, 32), 12) << err;
  EXPECT_EQ(bind(4, 3, 16, 32), 16) << err;
  kgen_param_info info{};
  ASSERT_EQ(kernel.param(0, info), KGEN_OK);
  EXPECT_EQ(info.row_length, 0);
  EXPECT_STREQ(info.row_length_expr, "g*p");
}

TEST_F(ArgsPaddedScalars, ColumnMajorTakesStrideOneAndAPitchOfTheTokens) {
  // vLLM's [4, P] buffer, transposed: each head holds its 8 tokens.
  EXPECT_EQ(bind(4, 8, 1, 32), 1) << err;
  EXPECT_EQ(bind(4, 16, 1, 32), 1) << err;
  // Tokens 2 apart inside each head's run of 16.
  EXPECT_EQ(bind(4, 16, 2, 32), 2) << err;
  // 30 row programs are 8 tokens (the last one short of a head).
  EXPECT_EQ(bind(4, 8, 1, 30), 1) << err;
  // One token: any pitch of at least its length holds it.
  EXPECT_EQ(bind(4, 1, 1, 4), 1) << err;
  // No rows touch nothing: any stride, and a NULL pointer.
  EXPECT_EQ(bind(4, 1, 3, 0), 3) << err;
  kgen_arg null[] = {kgen::rt::tensorArg(nullptr, KGEN_F32, 1),
                     kgen::rt::dimArg(4), kgen::rt::dimArg(1)};
  size_t variant = 99;
  EXPECT_EQ(kernel.selectVariant(null, 0, variant), KGEN_OK)
      << kgen::rt::lastError();
}

TEST_F(ArgsPaddedScalars, OverlappingLayoutsAreRefused) {
  // Column-major with a pitch short of the 8 tokens: head 0's token 7 is
  // head 1's token 0.
  EXPECT_EQ(bind(4, 7, 1, 32), -1);
  EXPECT_EQ(status, KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'scale' (#0) row_stride 1 and pitch 7 "
                             "(p) for 8 tokens of 4 heads: rows would overlap "
                             "(the layouts allowed: tokens a row apart, "
                             "row_stride >= count * pitch = 28 (g*p); or "
                             "tokens inside each head, row_stride >= 1 and "
                             "row_stride * 8 tokens <= pitch)"));
  EXPECT_EQ(bind(4, 7, 1, 30), -1);
  EXPECT_THAT(err, HasSubstr("for 8 tokens of 4 heads: rows would overlap"));
  // Between the two: tokens closer than a row, heads closer than a run.
  for (int64_t stride = 2; stride < 4; ++stride) {
    EXPECT_EQ(bind(4, 1, stride, 32), -1) << stride;
    EXPECT_EQ(status, KGEN_ERROR_INVALID_ARGUMENT) << stride;
    EXPECT_THAT(err, HasSubstr("row_stride " + std::to_string(stride) +
                               " and pitch 1 (p) for 8 tokens of 4 heads: "
                               "rows would overlap"))
        << stride;
  }
  EXPECT_EQ(bind(4, 16, 3, 32), -1); // 3 * 8 tokens past the pitch of 16
  EXPECT_THAT(err, HasSubstr("rows would overlap"));
  EXPECT_EQ(bind(4, 3, 11, 32), -1); // padded rows of 12
  EXPECT_THAT(err, HasSubstr("row_stride >= count * pitch = 12 (g*p)"));
}

TEST_F(ArgsPaddedScalars, TheScalarsSpanFewerThan2To32Elements) {
  // The kernel addresses them in 32 bits. Rows 2^30 apart: 4 tokens end at
  // 3 * 2^30 + 1, 5 tokens past 2^32.
  int64_t far = int64_t(1) << 30;
  EXPECT_EQ(bind(1, 1, far, 4), far) << err;
  EXPECT_EQ(bind(1, 1, far, 5), -1);
  EXPECT_EQ(status, KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'scale' (#0) row_stride " +
                             std::to_string(far) +
                             " times 5 tokens and 1 heads 1 apart span 2^32 "
                             "elements or more (the kernel addresses "
                             "per-head scalars in 32 bits)"));
  // 2^31 - 1 rows (the grid's limit) two apart fit, three apart do not.
  int64_t rows = (int64_t(1) << 31) - 1;
  EXPECT_EQ(bind(1, 1, 2, rows), 2) << err;
  EXPECT_EQ(bind(1, 1, 3, rows), -1);
  // Column-major: two heads 2^32 - 8 apart hold 7 tokens, not 8.
  int64_t pitch = (int64_t(1) << 32) - 8;
  EXPECT_EQ(bind(2, pitch, 1, 14), 1) << err;
  EXPECT_EQ(bind(2, pitch, 1, 16), -1);
  EXPECT_THAT(err, HasSubstr("span 2^32 elements or more"));
  // A span past int64 is refused by the same check, without overflow.
  EXPECT_EQ(bind(1, 1, int64_t(1) << 62, 16), -1);
  EXPECT_THAT(err, HasSubstr("span 2^32 elements or more"));
  EXPECT_EQ(bind(int64_t(1) << 21, int64_t(1) << 41, 1, int64_t(1) << 21), -1);
  EXPECT_THAT(err, HasSubstr("heads (g of p elements) overflow int64"));
}

TEST_F(ArgsPaddedScalars, TensorAlignLeavesTheRowStrideFree) {
  // Scalars are written one by one: the variant's alignment is the pointer's
  // only, and column-major scales (stride 1) keep the aligned variant.
  std::string aligned =
      replaced(PaddedScalarsSpec, R"("block": 32,)",
               R"("block": 32, "tensor_align": {"scale": 16},)");
  ASSERT_TRUE(kgen::rt::parseSpec(aligned, spec, err)) << err;
  ASSERT_EQ(kernel.create(PaddedScalarsPtx, aligned), KGEN_OK)
      << kgen::rt::lastError();
  EXPECT_EQ(bind(4, 8, 1, 32), 1) << err;
  EXPECT_EQ(bind(4, 1, 0, 32), 4) << err;
  kgen_arg args[] = {kgen::rt::tensorArg(addr(0x1004), KGEN_F32, 1),
                     kgen::rt::dimArg(4), kgen::rt::dimArg(8)};
  size_t variant = 99;
  EXPECT_EQ(kernel.selectVariant(args, 32, variant), KGEN_ERROR_MISALIGNED);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'scale' pointer 0x1004 is not 16-byte aligned"));
}

class ArgsPitchedRows : public ArgsPaddedScalars {
protected:
  void SetUp() override { load(PitchedRowsSpec); }
};

TEST_F(ArgsPitchedRows, TakesRowMajorAndTransposedLayouts) {
  // 8 rows of 4 groups, row-major: row_stride 0 means [8, 4].
  EXPECT_EQ(bind(4, 1, 0, 8), 4) << err;
  EXPECT_EQ(bind(4, 1, 6, 8), 6) << err;
  // vLLM's transposed scales: a [4, P] buffer holding each group's 8 rows.
  EXPECT_EQ(bind(4, 8, 1, 8), 1) << err;
  EXPECT_EQ(bind(4, 12, 1, 8), 1) << err;
  // Addressed in 64 bits: no 2^32 bound, unlike per-head scalars.
  EXPECT_EQ(bind(4, 1, int64_t(1) << 40, 8), int64_t(1) << 40) << err;
}

TEST_F(ArgsPitchedRows, OverlappingLayoutsAreRefused) {
  EXPECT_EQ(bind(4, 7, 1, 8), -1);
  EXPECT_EQ(status, KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'scale' (#0) row_stride 1 and pitch 7 "
                             "(p) for 8 rows of 4 elements: rows would "
                             "overlap (the layouts allowed: rows apart, "
                             "row_stride >= count * pitch = 28 (g*p); or rows "
                             "inside each pitch, row_stride >= 1 and "
                             "row_stride * 8 rows <= pitch)"));
  EXPECT_EQ(bind(4, 2, 7, 8), -1); // rows of 4 elements 2 apart span 8
  EXPECT_THAT(err, HasSubstr("row_stride >= count * pitch = 8 (g*p)"));
}

TEST(ArgsPitchedSpec, RefusesAPitchItCannotCheck) {
  kgen::rt::Spec spec;
  std::string err;
  EXPECT_FALSE(kgen::rt::parseSpec(
      replaced(PitchedRowsSpec, R"("kgen_spec": 4)", R"("kgen_spec": 3)"), spec,
      err));
  EXPECT_THAT(err, HasSubstr("'pitch' needs kgen_spec 4 (this spec says 3)"));
  EXPECT_FALSE(kgen::rt::parseSpec(
      replaced(PitchedRowsSpec, R"("access": "rows")", R"("access": "vector")"),
      spec, err));
  EXPECT_THAT(err, HasSubstr("'pitch' is for a rows tensor without sub_rows"));
  EXPECT_FALSE(kgen::rt::parseSpec(
      replaced(PitchedRowsSpec, R"("pitch": "p")", R"("pitch": "-2")"), spec,
      err));
  EXPECT_THAT(err, HasSubstr("pitch '-2'"));
}

TEST(ArgsStrict, PacksTheAbi) {
  kgen::rt::Spec spec;
  std::string err;
  ASSERT_TRUE(kgen::rt::parseSpec(StrictSpec, spec, err)) << err;
  kgen_arg args[] = {kgen::rt::tensorArg(addr(0x1000), KGEN_F32, 1024),
                     kgen::rt::intArg(-3, KGEN_I32),
                     kgen::rt::intArg(1ll << 40), kgen::rt::f32Arg(2.5f)};
  kgen::rt::BoundArgs bound;
  ASSERT_EQ(kgen::rt::bindArgs(spec, args, 4, 9, bound, err), KGEN_OK) << err;
  EXPECT_EQ(bound.gridX, 9u); // ceil(9 / 4) groups of rows x 3 tiles
  std::vector<uint64_t> storage;
  std::vector<void *> params;
  kgen::rt::packAbi(spec, spec.variants[0], bound, storage, params);
  ASSERT_EQ(params.size(), 6u);
  EXPECT_EQ(*static_cast<int64_t *>(params[0]), 9);
  EXPECT_EQ(*static_cast<int32_t *>(params[1]), -3);
  EXPECT_EQ(*static_cast<int64_t *>(params[2]), 1024);
  EXPECT_EQ(*static_cast<float *>(params[3]), 2.5f);
  EXPECT_EQ(*static_cast<uint64_t *>(params[4]), 0x1000u);
  EXPECT_EQ(*static_cast<int64_t *>(params[5]), 1ll << 40);
}

} // namespace

TEST(ArgsScalars, PerRowOutputsNeedAPointerOnlyWhenThereAreRows) {
  // A [rows] output ("access": "scalars"): one element per row, no stride.
  const char *spec = R"json({
    "kgen_spec": 2, "op": "amax", "dtype": "f32", "arch": "sm_90",
    "hash": "ab", "dims": {"n": 8},
    "params": [
      {"name": "x", "kind": "tensor", "dtype": "f32", "access": "rows", "row_length": 8, "writes": false},
      {"name": "m", "kind": "tensor", "dtype": "f32", "access": "scalars", "row_length": 1, "writes": true}],
    "variants": [{"entry": "e", "block": 32, "rows_per_block": 1,
                  "abi": [{"slot": "ptr", "param": "x", "type": "u64"},
                          {"slot": "stride", "param": "x", "type": "i64"},
                          {"slot": "ptr", "param": "m", "type": "u64"},
                          {"slot": "rows", "type": "i64"}]}]})json";
  const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry e(.param .u64 a) { ret; }\n";
  kgen::rt::Kernel kernel;
  ASSERT_EQ(kernel.create(ptx, spec), KGEN_OK) << kgen::rt::lastError();
  kgen_arg args[2] = {
      kgen::rt::tensorArg(reinterpret_cast<const void *>(0x1000), KGEN_F32),
      kgen::rt::tensorArg(nullptr, KGEN_F32)};
  size_t variant = 99;
  EXPECT_EQ(kernel.selectVariant(args, 0, variant), KGEN_OK)
      << kgen::rt::lastError();
  EXPECT_EQ(kernel.selectVariant(args, 3, variant),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(), ::testing::HasSubstr("NULL pointer"));
  args[1].ptr = reinterpret_cast<const void *>(0x2004);
  EXPECT_EQ(kernel.selectVariant(args, 3, variant), KGEN_OK)
      << kgen::rt::lastError();
}

TEST(ArgsDomain, ExactLengthVariantsFitOnlyTheirLength) {
  // The first variant is compiled for rows of exactly 4096 elements.
  std::string spec = replaced(RmsnormSpec, R"("dims": {},)",
                              R"("dims": {}, "domain": "hidden",)");
  spec = replaced(spec, R"("entry": "rmsnorm_bf16_v8",)",
                  R"("entry": "rmsnorm_bf16_v8", "exact_domain": 4096,)");
  kgen::rt::Kernel kernel;
  ASSERT_EQ(kernel.create(RmsnormPtx, spec), KGEN_OK) << kgen::rt::lastError();
  size_t variant = 99;
  RmsnormArgs fits; // hidden 4096
  ASSERT_EQ(kernel.selectVariant(fits.args, 4, variant), KGEN_OK);
  EXPECT_EQ(variant, 0u);
  RmsnormArgs longer(reinterpret_cast<const void *>(0x10000),
                     reinterpret_cast<const void *>(0x20000),
                     reinterpret_cast<const void *>(0x30000), 4104);
  ASSERT_EQ(kernel.selectVariant(longer.args, 4, variant), KGEN_OK);
  EXPECT_EQ(variant, 1u);
  RmsnormArgs shorter(reinterpret_cast<const void *>(0x10000),
                      reinterpret_cast<const void *>(0x20000),
                      reinterpret_cast<const void *>(0x30000), 2048);
  ASSERT_EQ(kernel.selectVariant(shorter.args, 4, variant), KGEN_OK);
  EXPECT_EQ(variant, 1u);
}

namespace {

/// Expects `kernel` (over RmsnormArgs) to select variant `want` for each
/// (rows, want).
void expectSelected(kgen::rt::Kernel &kernel,
                    std::initializer_list<std::pair<int64_t, size_t>> cases) {
  RmsnormArgs a;
  for (auto [rows, want] : cases) {
    size_t variant = 99;
    ASSERT_EQ(kernel.selectVariant(a.args, rows, variant), KGEN_OK);
    EXPECT_EQ(variant, want) << rows << " rows";
  }
}

/// RmsnormSpec whose first variant is only for `minRows` rows or more.
std::string minRowsSpec(const std::string &minRows) {
  return replaced(RmsnormSpec, R"("entry": "rmsnorm_bf16_v8",)",
                  R"("entry": "rmsnorm_bf16_v8", "min_rows": )" + minRows +
                      ",");
}

} // namespace

TEST(ArgsRows, ManyRowsVariantsFitOnlyFromTheirMinRows) {
  kgen::rt::Kernel kernel;
  ASSERT_EQ(kernel.create(RmsnormPtx, minRowsSpec("8192")), KGEN_OK)
      << kgen::rt::lastError();
  expectSelected(kernel, {{8192, 0}, {65536, 0}, {8191, 1}, {1, 1}, {0, 1}});
}

TEST(ArgsRows, MinRowsMustBePositive) {
  kgen::rt::Kernel kernel;
  EXPECT_EQ(kernel.create(RmsnormPtx, minRowsSpec("0")),
            KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(), ::testing::HasSubstr("min_rows"));
}

namespace {

/// RmsnormSpec whose first variant spreads a row over a cluster of 4 blocks
/// and takes at most `maxRows` rows.
std::string fewRowsSpec(const std::string &maxRows,
                        const std::string &cluster = "4") {
  return replaced(RmsnormSpec, R"("entry": "rmsnorm_bf16_v8", "block": 128,)",
                  R"("entry": "rmsnorm_bf16_v8", "block": 128, "tiles": 4, )"
                  R"("cluster": )" +
                      cluster + R"(, "max_rows": )" + maxRows + ",");
}

} // namespace

TEST(ArgsRows, FewRowsVariantsFitOnlyUpToTheirMaxRows) {
  kgen::rt::Kernel kernel;
  ASSERT_EQ(kernel.create(RmsnormPtx, fewRowsSpec("32")), KGEN_OK)
      << kgen::rt::lastError();
  expectSelected(kernel, {{1, 0}, {32, 0}, {33, 1}, {65536, 1}});
  // Every row takes its cluster of 4 blocks.
  RmsnormArgs a;
  kgen::rt::Spec spec;
  std::string err;
  ASSERT_TRUE(kgen::rt::parseSpec(fewRowsSpec("32"), spec, err)) << err;
  kgen::rt::BoundArgs bound;
  ASSERT_EQ(kgen::rt::bindArgs(spec, a.args, 5, 7, bound, err), KGEN_OK);
  kgen::rt::placeRows(spec, bound, 132);
  EXPECT_EQ(bound.gridX, 28u);
  EXPECT_EQ(bound.blockX, 128u);
}

TEST(ArgsRows, RowsPastAnyGridAreRefusedBeforeTheyWrap) {
  // Four blocks a row: (2^62 + 1) * 4 wraps int64 to 4 blocks.
  kgen::rt::Kernel kernel;
  ASSERT_EQ(
      kernel.create(RmsnormPtx,
                    replaced(RmsnormSpec,
                             R"("entry": "rmsnorm_bf16_v8", "block": 128,)",
                             R"("entry": "rmsnorm_bf16_v8", "block": 128, )"
                             R"("tiles": 4,)")),
      KGEN_OK)
      << kgen::rt::lastError();
  RmsnormArgs a;
  for (int64_t rows : {(int64_t(1) << 62) + 1, (int64_t(1) << 61) + 1,
                       INT64_MAX, int64_t(INT32_MAX) * 1024 + 1}) {
    size_t variant = 99;
    EXPECT_EQ(kernel.selectVariant(a.args, rows, variant),
              KGEN_ERROR_INVALID_ARGUMENT)
        << rows;
    EXPECT_THAT(kgen::rt::lastError(), HasSubstr("grid limit")) << rows;
  }
}

TEST(ArgsRows, SpecChecksTheFewRowsAndTheCluster) {
  kgen::rt::Kernel kernel;
  EXPECT_EQ(kernel.create(RmsnormPtx, fewRowsSpec("0")),
            KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("max_rows"));
  for (const char *bad : {"1", "9"}) {
    EXPECT_EQ(kernel.create(RmsnormPtx, fewRowsSpec("32", bad)),
              KGEN_ERROR_INVALID_SPEC)
        << bad;
    EXPECT_THAT(kgen::rt::lastError(), HasSubstr("cluster"));
  }
  // A cluster other than the row's tiles.
  EXPECT_EQ(kernel.create(RmsnormPtx, fewRowsSpec("32", "2")),
            KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'cluster' must equal 'tiles' over one row a block"));
}

namespace {

/// RmsnormSpec whose first variant holds at most `rows` rows of
/// `threads` threads a block and launches `launch` ("" for none).
std::string launchRowsSpec(int threads, int rows, const std::string &launch) {
  std::string fields = R"("block": )" + std::to_string(threads * rows) +
                       R"(, "rows_per_block": )" + std::to_string(rows);
  if (!launch.empty())
    fields += R"(, "launch_rows_per_block": )" + launch;
  return replaced(RmsnormSpec, R"("block": 128, "rows_per_block": 1)", fields);
}

/// (grid, block) of a launch of `rows` rows on `multiprocessors`.
std::pair<uint32_t, uint32_t> placed(const std::string &specText, int64_t rows,
                                     int multiprocessors) {
  kgen::rt::Spec spec;
  std::string err;
  EXPECT_TRUE(kgen::rt::parseSpec(specText, spec, err)) << err;
  RmsnormArgs a;
  kgen::rt::BoundArgs bound;
  EXPECT_EQ(kgen::rt::bindArgs(spec, a.args, 5, rows, bound, err), KGEN_OK)
      << err;
  EXPECT_EQ(bound.variant, 0u);
  kgen::rt::placeRows(spec, bound, multiprocessors);
  return {bound.gridX, bound.blockX};
}

} // namespace

TEST(ArgsLaunchRows, ManyRowsTakeTheLaunchRowsPerBlock) {
  // At most 4 rows of 64 threads a block, one at launch.
  std::string spec = launchRowsSpec(64, 4, "1");
  EXPECT_EQ(placed(spec, 4096, 132), std::make_pair(4096u, 64u));
  EXPECT_EQ(placed(spec, 4096, 0), std::make_pair(4096u, 64u));
  // Without launch_rows_per_block a block always holds rows_per_block.
  EXPECT_EQ(placed(launchRowsSpec(64, 4, ""), 4096, 132),
            std::make_pair(1024u, 256u));
  EXPECT_EQ(placed(launchRowsSpec(64, 4, ""), 5, 132),
            std::make_pair(2u, 256u));
}

TEST(ArgsLaunchRows, FewRowsSpreadOverEveryMultiprocessor) {
  // Rows of 8 threads, 32 a block (rope's heads of 128).
  std::string spec = launchRowsSpec(8, 32, "32");
  // 65536 rows fill any GPU: 32 a block.
  EXPECT_EQ(placed(spec, 65536, 132), std::make_pair(2048u, 256u));
  // 1280 rows make 40 blocks of 32, too few for 132 multiprocessors: 9 rows
  // a block (143 blocks of 72 threads).
  EXPECT_EQ(placed(spec, 1280, 132), std::make_pair(143u, 72u));
  // 40 rows: one a block.
  EXPECT_EQ(placed(spec, 40, 132), std::make_pair(40u, 8u));
  EXPECT_EQ(placed(spec, 1, 132), std::make_pair(1u, 8u));
  // The multiprocessors unknown: the launch rows.
  EXPECT_EQ(placed(spec, 40, 0), std::make_pair(2u, 256u));
  // Exactly enough blocks: no spreading.
  EXPECT_EQ(placed(spec, 132 * 32, 132), std::make_pair(132u, 256u));
}

TEST(ArgsLaunchRows, SpecChecksTheLaunchRows) {
  kgen::rt::Kernel kernel;
  for (const char *bad : {"0", "5"}) {
    EXPECT_EQ(kernel.create(RmsnormPtx, launchRowsSpec(64, 4, bad)),
              KGEN_ERROR_INVALID_SPEC)
        << bad;
    EXPECT_THAT(kgen::rt::lastError(), HasSubstr("launch_rows_per_block"));
  }
  // A block that is not rows_per_block rows of equal threads.
  std::string uneven = replaced(launchRowsSpec(64, 4, "1"), R"("block": 256)",
                                R"("block": 250)");
  EXPECT_EQ(kernel.create(RmsnormPtx, uneven), KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'launch_rows_per_block' needs a block of "
                        "rows_per_block rows of equal threads"));
}

TEST(ArgsDomain, ExactDomainNeedsADomain) {
  std::string spec =
      replaced(RmsnormSpec, R"("entry": "rmsnorm_bf16_v8",)",
               R"("entry": "rmsnorm_bf16_v8", "exact_domain": 4096,)");
  kgen::rt::Kernel kernel;
  EXPECT_EQ(kernel.create(RmsnormPtx, spec), KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              ::testing::HasSubstr("'exact_domain' needs the spec's 'domain'"));
}

namespace {

/// RmsnormSpec with a domain and, before its two variants, held variants of
/// (chunks, most threads): by default 2, 4 and 8 chunks of 8 elements over
/// at most 512 threads.
std::string heldSpec(const std::vector<std::pair<int, int>> &variants = {
                         {2, 512}, {4, 512}, {8, 512}}) {
  std::string spec = replaced(RmsnormSpec, R"("dims": {},)",
                              R"("dims": {}, "domain": "hidden",)");
  std::string held;
  for (auto [c, block] : variants)
    held += R"({"entry": "rmsnorm_bf16_v8", "block": )" +
            std::to_string(block) + R"(, "rows_per_block": 1,
       "launch_threads": {"chunks": )" +
            std::to_string(c) + R"(, "chunk_elements": 8},
       "tensor_align": {"x": 16, "weight": 16, "y": 16},
       "dim_multiple": {"hidden": 16},
       "abi": )" +
            RmsnormAbi + "},";
  return replaced(spec, R"("variants": [)", R"("variants": [)" + held);
}

/// (variant, block) the runtime picks for `rows` rows of `hidden` elements.
std::pair<size_t, uint32_t> pickHeld(int64_t hidden, int64_t rows = 4,
                                     const std::string &text = heldSpec()) {
  kgen::rt::Spec spec;
  std::string err;
  EXPECT_TRUE(kgen::rt::parseSpec(text, spec, err)) << err;
  RmsnormArgs a(addr(0x10000), addr(0x20000), addr(0x30000), hidden);
  kgen::rt::BoundArgs out;
  EXPECT_EQ(kgen::rt::bindArgs(spec, a.args, 5, rows, out, err), KGEN_OK)
      << err;
  return {out.variant, out.blockX};
}

} // namespace

TEST(ArgsHeld, FewestIdleChunkSlotsThenFewestThreadsPast256ThenFourChunks) {
  // 3584 = 448 chunks: 224 threads of 2 leave none idle; 4 or 8 chunks over
  // 128 or 64 threads leave 64.
  EXPECT_EQ(pickHeld(3584), std::make_pair(size_t(0), uint32_t(224)));
  // 11008 = 1376 chunks: 2 would take 704 threads (> 512); 352 x 4 leaves
  // 32 idle, 192 x 8 leaves 160.
  EXPECT_EQ(pickHeld(11008), std::make_pair(size_t(1), uint32_t(352)));
  // 4096 = 512 chunks: none idle at 256 x 2, 128 x 4 and 64 x 8: 4 chunks.
  EXPECT_EQ(pickHeld(4096), std::make_pair(size_t(1), uint32_t(128)));
  // 14336 = 1792 chunks: 448 x 4 and 224 x 8 leave none; 224 is <= 256.
  EXPECT_EQ(pickHeld(14336), std::make_pair(size_t(2), uint32_t(224)));
  // 32768 = 4096 chunks: only 512 x 8 holds it.
  EXPECT_EQ(pickHeld(32768), std::make_pair(size_t(2), uint32_t(512)));
  // 32784: past every held variant: the plain aligned one (block 128).
  EXPECT_EQ(pickHeld(32784), std::make_pair(size_t(3), uint32_t(128)));
}

TEST(ArgsHeld, FromManyRowsFewestThreadsPast128) {
  // 8192 = 1024 chunks: 256 x 4 and 128 x 8 leave none idle; 4 chunks on
  // fewer rows, 128 threads from 8192 rows (as a specialized _vec_rows).
  EXPECT_EQ(pickHeld(8192, 8191), std::make_pair(size_t(1), uint32_t(256)));
  EXPECT_EQ(pickHeld(8192, 8192), std::make_pair(size_t(2), uint32_t(128)));
  // Idle slots still come first: 11008 keeps 352 x 4 (32 idle, 192 x 8
  // leaves 160), and 4096 keeps 128 x 4.
  EXPECT_EQ(pickHeld(11008, 65536), std::make_pair(size_t(1), uint32_t(352)));
  EXPECT_EQ(pickHeld(4096, 65536), std::make_pair(size_t(1), uint32_t(128)));
  // Past 128 the fewest threads: 16384 = 2048 chunks as 256 x 8, not 512 x
  // 4; 14336 = 1792 as 224 x 8 (on fewer rows too); 12288 = 1536 as 192 x 8.
  EXPECT_EQ(pickHeld(16384, 16384), std::make_pair(size_t(2), uint32_t(256)));
  EXPECT_EQ(pickHeld(14336, 8192), std::make_pair(size_t(2), uint32_t(224)));
  EXPECT_EQ(pickHeld(12288, 65536), std::make_pair(size_t(2), uint32_t(192)));
}

TEST(ArgsHeld, TwoOfFourChunksSplitAtTheirBlocks) {
  // As the widest held variant of 4 chunks is split: the one of at most 256
  // threads listed first takes the rows it fits (equal keys: the first),
  // the one of 512 the longer rows.
  std::string split = heldSpec({{4, 256}, {4, 512}});
  // 8192 = 1024 chunks: 256 x 4 in both; the first.
  EXPECT_EQ(pickHeld(8192, 4, split), std::make_pair(size_t(0), uint32_t(256)));
  EXPECT_EQ(pickHeld(8192, 65536, split),
            std::make_pair(size_t(0), uint32_t(256)));
  // 11008 = 1376 chunks: 352 threads, past the first's block.
  EXPECT_EQ(pickHeld(11008, 4, split),
            std::make_pair(size_t(1), uint32_t(352)));
  EXPECT_EQ(pickHeld(14336, 16384, split),
            std::make_pair(size_t(1), uint32_t(448)));
}

TEST(ArgsHeld, EveryChunkButTheLastIsInTheRow) {
  // 176 = 22 chunks: every held variant would take 32 threads, whose first
  // chunks alone (32) overrun the row; the kernel masks only a thread's last
  // chunk, so each is refused and the plain variant takes the rows.
  kgen::rt::Spec spec;
  std::string err;
  ASSERT_TRUE(kgen::rt::parseSpec(heldSpec(), spec, err)) << err;
  EXPECT_EQ(kgen::rt::launchThreads(spec.variants[0], 176), 32);
  EXPECT_EQ(pickHeld(176), std::make_pair(size_t(3), uint32_t(128)));
  // 1024 = 128 chunks: 64 x 2 and 32 x 4 fill every chunk.
  EXPECT_EQ(pickHeld(1024), std::make_pair(size_t(1), uint32_t(32)));
}

TEST(ArgsHeld, RejectionsSayWhy) {
  std::string spec = heldSpec();
  // Only the held variants: each says why rows of 176 elements do not fit.
  spec = spec.substr(
      0, spec.rfind(R"({"entry": "rmsnorm_bf16_v8", "block": 128)"));
  spec = spec.substr(0, spec.rfind(',')) + "]}";
  kgen::rt::Kernel kernel;
  ASSERT_EQ(kernel.create(RmsnormPtx, spec), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs a(addr(0x10000), addr(0x20000), addr(0x30000), 176);
  size_t variant = 99;
  EXPECT_EQ(kernel.selectVariant(a.args, 4, variant), KGEN_ERROR_MISALIGNED);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("rows of 176 elements do not fill 7 of the 8 chunks "
                        "of 32 threads"));
  RmsnormArgs big(addr(0x10000), addr(0x20000), addr(0x30000), 65536);
  EXPECT_EQ(kernel.selectVariant(big.args, 4, variant), KGEN_ERROR_MISALIGNED);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("rows of 65536 elements need more than 512 threads "
                        "of 8 chunks"));
}

TEST(ArgsHeld, SpecNeedsDomainAndOneRowPerBlock) {
  std::string held = heldSpec();
  kgen::rt::Kernel kernel;
  EXPECT_EQ(
      kernel.create(RmsnormPtx, replaced(held, R"("domain": "hidden",)", "")),
      KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'launch_threads' needs the spec's 'domain'"));
  EXPECT_EQ(kernel.create(RmsnormPtx,
                          replaced(held, R"("block": 512, "rows_per_block": 1)",
                                   R"("block": 512, "rows_per_block": 2)")),
            KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'launch_threads' needs rows_per_block = 1"));
  EXPECT_EQ(kernel.create(RmsnormPtx, replaced(held, R"("chunk_elements": 8)",
                                               R"("chunk_elements": 0)")),
            KGEN_ERROR_INVALID_SPEC);
}

namespace {

/// heldSpec with its plain aligned variant (the fourth) re-reading its rows
/// over threads and rows a block chosen at launch, up to 1024 threads.
std::string rereadSpec() {
  std::string spec = heldSpec();
  size_t at = spec.rfind(R"({"entry": "rmsnorm_bf16_v8", "block": 128)");
  std::string tail =
      replaced(spec.substr(at), R"("block": 128, "rows_per_block": 1)",
               R"("block": 1024, "rows_per_block": 1,
         "launch_threads": {"chunks": 0, "chunk_elements": 8})");
  return spec.substr(0, at) + tail;
}

struct Placed {
  size_t variant;
  uint32_t grid, x, y;
  bool operator==(const Placed &o) const {
    return variant == o.variant && grid == o.grid && x == o.x && y == o.y;
  }
};

std::ostream &operator<<(std::ostream &os, const Placed &p) {
  return os << "{variant " << p.variant << ", grid " << p.grid << ", block "
            << p.x << " x " << p.y << "}";
}

/// Where rows of `hidden` elements go on `multiprocessors` under `text`.
Placed placedBy(const std::string &text, int64_t hidden, int64_t rows,
                int multiprocessors) {
  kgen::rt::Spec spec;
  std::string err;
  EXPECT_TRUE(kgen::rt::parseSpec(text, spec, err)) << err;
  RmsnormArgs a(addr(0x10000), addr(0x20000), addr(0x30000), hidden);
  kgen::rt::BoundArgs bound;
  EXPECT_EQ(kgen::rt::bindArgs(spec, a.args, 5, rows, bound, err), KGEN_OK)
      << err;
  kgen::rt::placeRows(spec, bound, multiprocessors);
  return {bound.variant, bound.gridX, bound.blockX, bound.blockY};
}

Placed placedReread(int64_t hidden, int64_t rows, int multiprocessors) {
  return placedBy(rereadSpec(), hidden, rows, multiprocessors);
}

} // namespace

TEST(ArgsReread, LongRowsTakeUpTo1024ThreadsAndOneRowABlock) {
  // 65536 = 8192 chunks: 1024 threads of 8 chunks a pass.
  EXPECT_EQ(placedReread(65536, 4096, 132), (Placed{3, 4096, 1024, 1}));
  // 32784 = 4098 chunks (past the held variants): 1024 threads, not 513.
  EXPECT_EQ(placedReread(32784, 7, 132), (Placed{3, 7, 1024, 1}));
  // 131072: still 1024 threads, 16 chunks a pass.
  EXPECT_EQ(placedReread(131072, 1, 132), (Placed{3, 1, 1024, 1}));
}

TEST(ArgsReread, ShortRowsTakeAThreadAChunkAndShareBlocks) {
  // 128 = 16 chunks: 16 threads a row, 16 rows a block (256 threads).
  EXPECT_EQ(placedReread(128, 65536, 132), (Placed{3, 4096, 16, 16}));
  // 16 = 2 chunks: 2 threads, 128 rows a block.
  EXPECT_EQ(placedReread(16, 65536, 132), (Placed{3, 512, 2, 128}));
  // 48 = 6 chunks: 8 threads (a power of two), 32 rows.
  EXPECT_EQ(placedReread(48, 4096, 0), (Placed{3, 128, 8, 32}));
  // Too few blocks for 132 multiprocessors: fewer rows each, down to one.
  EXPECT_EQ(placedReread(128, 1024, 132), (Placed{3, 147, 16, 7}));
  EXPECT_EQ(placedReread(128, 7, 132), (Placed{3, 7, 16, 1}));
  // The multiprocessors unknown: 16 rows a block.
  EXPECT_EQ(placedReread(128, 7, 0), (Placed{3, 1, 16, 16}));
}

TEST(ArgsReread, EveryWidthOfBlock) {
  // The block of each width the re-read path has: one thread a row (no
  // butterfly), a whole warp, and 512 threads (16 warps: the cross-warp
  // combine with fewer than 32 warps).
  kgen::rt::Variant v;
  v.block = 1024;
  v.launchThreads = true;
  v.chunkElements = 8;
  const kgen::launch::LaunchPolicy policy;
  using Block = std::pair<int64_t, int64_t>;
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 8, 65536, 132),
            Block(1, 256));
  // Rows of a warp: as many a block as hold 256 chunks.
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 240, 65536, 132),
            Block(32, 9));
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 256, 65536, 132),
            Block(32, 8));
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 20480, 4096, 132),
            Block(512, 1));
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 32768, 4096, 132),
            Block(512, 1));
  // A smaller block caps the threads and the rows.
  v.block = 256;
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 20480, 4096, 132),
            Block(256, 1));
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 8, 65536, 132),
            Block(1, 256));
  EXPECT_EQ(kgen::rt::launchThreads(v, 20480), 256)
      << "a re-read variant's threads are its block's";
}

TEST(ArgsReread, TheSpecsLaunchPolicyShapesTheLaunch) {
  // What codegen compiled with, not the runtime's defaults: rows of part of
  // a warp fill rows_block threads, a warp's rows hold min_block_chunks, and
  // long rows take reread_chunks a thread a pass.
  std::string tuned = replaced(rereadSpec(), R"("kgen_spec": 2,)",
                               R"("kgen_spec": 2, "launch_policy":
      {"rows_block": 128, "min_block_chunks": 512, "reread_chunks": 16},)");
  EXPECT_EQ(placedBy(tuned, 128, 65536, 132), (Placed{3, 8192, 16, 8}));
  EXPECT_EQ(placedBy(tuned, 65536, 4096, 132), (Placed{3, 4096, 512, 1}));
  // The defaults, as a spec without the key reads.
  EXPECT_EQ(placedReread(128, 65536, 132), (Placed{3, 4096, 16, 16}));
  EXPECT_EQ(placedReread(65536, 4096, 132), (Placed{3, 4096, 1024, 1}));
  // Rows of a warp (256 elements, 32 chunks) hold min_block_chunks a block.
  kgen::rt::Variant v;
  v.block = 1024;
  v.launchThreads = true;
  v.chunkElements = 8;
  kgen::launch::LaunchPolicy policy;
  using Block = std::pair<int64_t, int64_t>;
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 256, 65536, 132),
            Block(32, 8));
  policy.minBlockChunks = 512;
  EXPECT_EQ(kgen::rt::launchedRowsBlock(v, policy, 256, 65536, 132),
            Block(32, 16));
}

TEST(ArgsReread, HeldRowsStillTakeTheHeldVariants) {
  // 4096 = 512 chunks: 128 threads x 4 chunks held, as without it.
  EXPECT_EQ(placedReread(4096, 4, 132), (Placed{1, 4, 128, 1}));
}

namespace {

/// `spec` with a first aligned variant of `fields` (its block and what it
/// holds).
std::string withFirstVariant(const std::string &spec,
                             const std::string &fields) {
  return replaced(spec, R"("variants": [)",
                  R"("variants": [{"entry": "rmsnorm_bf16_v8", )" + fields +
                      R"(,
         "tensor_align": {"x": 16, "weight": 16, "y": 16},
         "dim_multiple": {"hidden": 8},
         "abi": )" + RmsnormAbi +
                      "},");
}

/// RmsnormSpec over a dynamic row with a first variant of `fields` (its
/// block and what it holds) and a fallback that refuses every length
/// tested here (its dims' multiple), so that only the first variant's
/// reasons matter.
std::string aloneSpec(const std::string &fields) {
  std::string spec = replaced(RmsnormSpec, R"("dims": {},)",
                              R"("dims": {}, "domain": "hidden",)");
  spec = replaced(spec, R"("block": 128, "rows_per_block": 1,)", fields);
  return replaced(spec, R"("dim_multiple": {},)",
                  R"("dim_multiple": {"hidden": 2048},)");
}

/// Why `spec` refuses rows of `hidden` elements (row strides of `stride`
/// elements, 0: packed), after checking that it does.
std::string refusal(const std::string &spec, int64_t hidden,
                    int64_t stride = 0) {
  kgen::rt::Kernel kernel;
  EXPECT_EQ(kernel.create(RmsnormPtx, spec), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs a(addr(0x10000), addr(0x20000), addr(0x30000), hidden);
  a.args[0].row_stride = a.args[2].row_stride = stride;
  size_t variant = 99;
  EXPECT_EQ(kernel.selectVariant(a.args, 5, 4, variant), KGEN_ERROR_MISALIGNED);
  return kgen::rt::lastError();
}

/// rereadSpec with a first variant holding one chunk a thread over a block
/// of up to 256 threads, x threads a row by y rows.
std::string oneChunkSpec() {
  return withFirstVariant(rereadSpec(), R"("block": 256, "rows_per_block": 1,
         "launch_threads": {"chunks": 1, "chunk_elements": 8})");
}

Placed placedOneChunk(int64_t hidden, int64_t rows, int multiprocessors) {
  return placedBy(oneChunkSpec(), hidden, rows, multiprocessors);
}

} // namespace

TEST(ArgsOneChunk, RowsOfAtMostAWarpOfChunksShareBlocks) {
  // 128 = 16 chunks: 16 threads a row, 16 rows a block, as re-read rows.
  EXPECT_EQ(placedOneChunk(128, 65536, 132), (Placed{0, 4096, 16, 16}));
  // 8 = 1 chunk: a thread a row, 256 rows.
  EXPECT_EQ(placedOneChunk(8, 65536, 132), (Placed{0, 256, 1, 256}));
  // 48 = 6 chunks: 8 threads, 32 rows; few rows spread over the SMs.
  EXPECT_EQ(placedOneChunk(48, 4096, 0), (Placed{0, 128, 8, 32}));
  EXPECT_EQ(placedOneChunk(128, 7, 132), (Placed{0, 7, 16, 1}));
  // 256 = 32 chunks: a warp, none idle (2 chunks over a warp leave 32), 8
  // rows a block (256 chunks).
  EXPECT_EQ(placedOneChunk(256, 65536, 132), (Placed{0, 8192, 32, 8}));
}

TEST(ArgsOneChunk, RowsOfUpTo64ChunksBeforeTheOthers) {
  // 512 = 64 chunks: 64 threads, 4 rows a block (256 chunks), though 2
  // chunks over a warp would leave none idle either.
  EXPECT_EQ(placedOneChunk(512, 65536, 132), (Placed{0, 16384, 64, 4}));
  // 272 = 34 chunks: 64 threads, 30 of them idle.
  EXPECT_EQ(placedOneChunk(272, 4, 132), (Placed{0, 4, 64, 1}));
}

TEST(ArgsOneChunk, LongerRowsTakeTheOthers) {
  // 528 = 66 chunks: past 64 threads of one chunk; 2 chunks over 64
  // threads (4 or 8 would leave more than the last chunk empty).
  EXPECT_EQ(placedOneChunk(528, 4, 132), (Placed{1, 4, 64, 1}));
  // 1024 = 128 chunks: 4 chunks over 32 threads.
  EXPECT_EQ(placedOneChunk(1024, 4, 132), (Placed{2, 4, 32, 1}));
  EXPECT_EQ(placedOneChunk(4096, 4, 132), (Placed{2, 4, 128, 1}));
  // The variant alone says why it refuses 528 (66 chunks).
  EXPECT_THAT(refusal(aloneSpec(R"("block": 256, "rows_per_block": 1,
                      "launch_threads": {"chunks": 1, "chunk_elements": 8},)"),
                      528),
              HasSubstr("rows of 528 elements need more than 64 threads "
                        "of 1 chunk"));
}

namespace {

/// oneChunkSpec with a first variant for rows of 520 to 1024 elements, a
/// warp a row holding 4 chunks a lane, at most 8 rows a block (4 launched).
std::string
warpRowsSpec(const std::string &range =
                 R"("min": 520, "max": 1024, "chunk_elements": 8)") {
  return withFirstVariant(oneChunkSpec(),
                          R"("block": 256, "rows_per_block": 8,
         "launch_rows_per_block": 4, "domain_range": {)" +
                              range + "}");
}

Placed placedWarpRows(int64_t hidden, int64_t rows, int multiprocessors) {
  return placedBy(warpRowsSpec(), hidden, rows, multiprocessors);
}

} // namespace

TEST(ArgsWarpRows, RowsInRangeTakeAWarpEachAsTheSpecializedKernels) {
  // As many rows a block as hold 256 chunks (at least 2): 65 chunks take 4,
  // 96 take 3, 128 take 2.
  EXPECT_EQ(placedWarpRows(520, 65536, 132), (Placed{0, 16384, 128, 1}));
  EXPECT_EQ(placedWarpRows(768, 65536, 132), (Placed{0, 21846, 96, 1}));
  EXPECT_EQ(placedWarpRows(1024, 65536, 132), (Placed{0, 32768, 64, 1}));
  // Few rows spread over the multiprocessors, down to one a block.
  EXPECT_EQ(placedWarpRows(768, 7, 132), (Placed{0, 7, 32, 1}));
  EXPECT_EQ(placedWarpRows(768, 7, 0), (Placed{0, 3, 96, 1}));
}

TEST(ArgsWarpRows, RowsOutOfRangeTakeTheOthers) {
  // 512 = 64 chunks: one chunk a thread, 4 rows of 64 a block.
  EXPECT_EQ(placedWarpRows(512, 65536, 132), (Placed{1, 16384, 64, 4}));
  // 1032 = 129 chunks: where oneChunkSpec puts it, one variant on.
  Placed others = placedOneChunk(1032, 4, 132);
  ++others.variant;
  EXPECT_EQ(placedWarpRows(1032, 4, 132), others);
  // The variant alone says why it refuses 1032.
  std::string alone = aloneSpec(R"("block": 256, "rows_per_block": 8,
                      "launch_rows_per_block": 4,
                      "domain_range": {"min": 520, "max": 1024,
                                       "chunk_elements": 8},)");
  EXPECT_THAT(refusal(alone, 1032),
              HasSubstr("rows of 1032 elements, not 520 to 1024"));
  // Nor, without the dims' multiple, rows that end inside a chunk (on row
  // strides of 1024 elements, which the alignment accepts).
  EXPECT_THAT(refusal(replaced(alone, R"("dim_multiple": {"hidden": 8})",
                               R"("dim_multiple": {})"),
                      1020, 1024),
              HasSubstr("rows of 1020 elements are not a whole number of "
                        "8-element chunks"));
}

TEST(ArgsWarpRows, SpecChecksTheRange) {
  kgen::rt::Kernel kernel;
  EXPECT_EQ(kernel.create(RmsnormPtx, warpRowsSpec()), KGEN_OK)
      << kgen::rt::lastError();
  // The longest row under the shortest.
  EXPECT_EQ(kernel.create(
                RmsnormPtx,
                warpRowsSpec(R"("min": 520, "max": 512, "chunk_elements": 8)")),
            KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("max"));
  EXPECT_EQ(
      kernel.create(RmsnormPtx, warpRowsSpec(R"("min": 520, "max": 1024)")),
      KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("chunk_elements"));
  // A spec without a domain has no row length to range over.
  std::string noDomain =
      replaced(RmsnormSpec, R"("block": 128, "rows_per_block": 1,)",
               R"("block": 256, "rows_per_block": 8,
                      "domain_range": {"min": 520, "max": 1024,
                                       "chunk_elements": 8},)");
  EXPECT_EQ(kernel.create(RmsnormPtx, noDomain), KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'domain_range' needs the spec's 'domain'"));
  // Nor does it go with threads chosen at launch.
  std::string both =
      withFirstVariant(oneChunkSpec(), R"("block": 256, "rows_per_block": 1,
         "launch_threads": {"chunks": 4, "chunk_elements": 8},
         "domain_range": {"min": 520, "max": 1024, "chunk_elements": 8})");
  EXPECT_EQ(kernel.create(RmsnormPtx, both), KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'launch_threads' and 'domain_range' exclude each "
                        "other"));
}

TEST(ArgsReread, RowsOfPartChunksAreRefused) {
  // Without the dims' multiple, the spec's launch_threads still refuses a
  // row that is not a whole number of chunks: the fallback takes it.
  std::string spec = rereadSpec();
  size_t at = spec.rfind(R"("launch_threads": {"chunks": 0)");
  const char *multiple = R"("dim_multiple": {"hidden": 8})";
  size_t dims = spec.find(multiple, at);
  ASSERT_NE(dims, std::string::npos);
  spec.replace(dims, std::strlen(multiple), R"("dim_multiple": {})");
  kgen::rt::Kernel kernel;
  ASSERT_EQ(kernel.create(RmsnormPtx, spec), KGEN_OK) << kgen::rt::lastError();
  RmsnormArgs a(addr(0x10000), addr(0x20000), addr(0x30000), 100);
  size_t variant = 99;
  EXPECT_EQ(kernel.selectVariant(a.args, 4, variant), KGEN_OK);
  EXPECT_EQ(variant, 4u);
}

TEST(ArgsReread, SpecNeedsAPowerOfTwoBlock) {
  kgen::rt::Kernel kernel;
  EXPECT_EQ(kernel.create(RmsnormPtx, replaced(rereadSpec(), R"("block": 1024)",
                                               R"("block": 992)")),
            KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'launch_threads' with chunks = 0 or 1 needs a "
                        "block that is a power of two"));
  EXPECT_EQ(kernel.create(RmsnormPtx, rereadSpec()), KGEN_OK)
      << kgen::rt::lastError();
  // One chunk a thread too (its block is the first "block": 256).
  EXPECT_EQ(
      kernel.create(RmsnormPtx, replaced(oneChunkSpec(), R"("block": 256)",
                                         R"("block": 224)")),
      KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("'launch_threads' with chunks = 0 or 1 needs a "
                        "block that is a power of two"));
  EXPECT_EQ(kernel.create(RmsnormPtx, oneChunkSpec()), KGEN_OK)
      << kgen::rt::lastError();
}
