//===- SpecTest.cpp - Spec parsing and kgen_kernel_create ----------------===//

#include "TestSpecs.h"

#include "runtime/Spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace kgen::test;
using kgen::rt::AbiSlot;
using kgen::rt::Param;
using kgen::rt::parseSpec;
using kgen::rt::Spec;
using ::testing::HasSubstr;

namespace {

TEST(Spec, ParsesTheExample) {
  Spec s;
  std::string err;
  ASSERT_TRUE(parseSpec(RmsnormSpec, s, err)) << err;
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.op, "rmsnorm");
  EXPECT_EQ(s.dtype, "bf16");
  EXPECT_EQ(s.arch, "sm_90");
  EXPECT_EQ(s.hash, "9f2cab01");
  EXPECT_EQ(s.name(), "rmsnorm_bf16");
  EXPECT_TRUE(s.dims.empty());
  ASSERT_EQ(s.params.size(), 5u);
  EXPECT_EQ(s.params[0].name, "x");
  EXPECT_EQ(s.params[0].kind, KGEN_ARG_TENSOR);
  EXPECT_EQ(s.params[0].dtype, KGEN_BF16);
  EXPECT_EQ(s.params[0].access, Param::Access::Rows);
  EXPECT_EQ(s.params[0].rowLength.dimParam, 4);
  EXPECT_EQ(s.params[0].rowLength.scale, 1);
  EXPECT_FALSE(s.params[0].writes);
  EXPECT_EQ(s.params[1].access, Param::Access::Vector);
  EXPECT_TRUE(s.params[2].writes);
  EXPECT_EQ(s.params[3].kind, KGEN_ARG_SCALAR);
  EXPECT_EQ(s.params[3].dtype, KGEN_F32);
  EXPECT_EQ(s.params[4].kind, KGEN_ARG_DIM);
  ASSERT_EQ(s.variants.size(), 2u);
  const auto &v = s.variants[0];
  EXPECT_EQ(v.entry, "rmsnorm_bf16_v8");
  EXPECT_EQ(v.block, 128);
  EXPECT_EQ(v.rowsPerBlock, 1);
  EXPECT_EQ(v.sharedBytes, 0);
  ASSERT_EQ(v.tensorAlign.size(), 3u);
  EXPECT_EQ(v.tensorAlign[1], (std::pair<int, int64_t>(1, 16)));
  ASSERT_EQ(v.dimMultiple.size(), 1u);
  EXPECT_EQ(v.dimMultiple[0], (std::pair<int, int64_t>(4, 8)));
  ASSERT_EQ(v.abi.size(), 8u);
  EXPECT_EQ(v.abi[0].kind, AbiSlot::Kind::Ptr);
  EXPECT_EQ(v.abi[0].param, 0);
  EXPECT_EQ(v.abi[4].kind, AbiSlot::Kind::Stride);
  EXPECT_EQ(v.abi[4].param, 2);
  EXPECT_EQ(v.abi[5].kind, AbiSlot::Kind::Scalar);
  EXPECT_EQ(v.abi[6].kind, AbiSlot::Kind::Dim);
  EXPECT_EQ(v.abi[7].kind, AbiSlot::Kind::Rows);
  EXPECT_TRUE(s.variants[1].tensorAlign.empty());
}

TEST(Spec, RowLengthForms) {
  std::string spec =
      replaced(RmsnormSpec, "\"dims\": {}", "\"dims\": {\"inner\": 64}");
  spec = replaced(spec, "\"row_length\": \"hidden\"", "\"row_length\": 4096");
  spec = replaced(spec, "\"row_length\": \"hidden\"",
                  "\"row_length\": \"2*inner\"");
  spec = replaced(spec, "\"row_length\": \"hidden\"",
                  "\"row_length\": \"3 * hidden\"");
  Spec s;
  std::string err;
  ASSERT_TRUE(parseSpec(spec, s, err)) << err;
  EXPECT_EQ(s.params[0].rowLength.scale, 4096);
  EXPECT_EQ(s.params[0].rowLength.dimParam, -1);
  EXPECT_EQ(s.params[1].rowLength.scale, 128); // static: resolved now
  EXPECT_EQ(s.params[1].rowLength.dimParam, -1);
  EXPECT_EQ(s.params[2].rowLength.scale, 3);
  EXPECT_EQ(s.params[2].rowLength.dimParam, 4);
  EXPECT_EQ(s.params[2].rowLength.text, "3 * hidden");
}

TEST(Spec, OptionalKeysDefault) {
  std::string spec = R"({"kgen_spec": 1, "op": "copy", "dtype": "f32",
    "arch": "sm_80", "hash": "00",
    "params": [{"name": "x", "kind": "tensor", "dtype": "f32",
                "access": "rows", "row_length": 8}],
    "variants": [{"entry": "copy_v1", "block": 32, "abi": ["ptr:x", "rows"],
                  "future_key": [1, 2]}], "comment": "ignored"})";
  Spec s;
  std::string err;
  ASSERT_TRUE(parseSpec(spec, s, err)) << err;
  EXPECT_EQ(s.variants[0].rowsPerBlock, 1);
  EXPECT_EQ(s.variants[0].sharedBytes, 0);
  EXPECT_FALSE(s.params[0].writes);
}

/// kgen_kernel_create on a spec derived from the example; returns the
/// status and the message.
std::pair<kgen_status, std::string> create(const std::string &spec,
                                           const char *ptx = RmsnormPtx) {
  kgen_kernel *k = nullptr;
  kgen_status st =
      kgen_kernel_create(ptx, strlen(ptx), spec.data(), spec.size(), &k);
  std::string msg = kgen_last_error();
  if (st == KGEN_OK)
    EXPECT_NE(k, nullptr);
  else
    EXPECT_EQ(k, nullptr);
  kgen_kernel_destroy(k);
  return {st, msg};
}

void expectInvalid(const std::string &spec, const std::string &text) {
  auto [st, msg] = create(spec);
  EXPECT_EQ(st, KGEN_ERROR_INVALID_SPEC) << msg;
  EXPECT_THAT(msg, HasSubstr(text));
  EXPECT_THAT(msg, HasSubstr("kgen: "));
}

TEST(KernelCreate, AcceptsTheExample) {
  auto [st, msg] = create(RmsnormSpec);
  EXPECT_EQ(st, KGEN_OK) << msg;
  EXPECT_EQ(msg, "");
}

TEST(KernelCreate, MalformedJsonHasPosition) {
  expectInvalid(
      replaced(RmsnormSpec, "\"op\": \"rmsnorm\",", "\"op\" \"rmsnorm\","),
      "malformed JSON at line 3, column 8");
  expectInvalid(std::string(RmsnormSpec) + ",", "unexpected text");
}

TEST(KernelCreate, MissingKeysAreNamed) {
  expectInvalid(replaced(RmsnormSpec, "\"op\": \"rmsnorm\",", ""),
                "missing required key 'op'");
  expectInvalid(replaced(RmsnormSpec, "\"kgen_spec\": 1,", ""),
                "missing required key 'kgen_spec'");
  expectInvalid(replaced(RmsnormSpec, "\"kind\": \"scalar\",", ""),
                "params[3] ('eps'): missing required key 'kind'");
  expectInvalid(replaced(RmsnormSpec, "\"access\": \"vector\",", ""),
                "params[1] ('weight'): missing required key 'access'");
  expectInvalid(replaced(RmsnormSpec, "\"block\": 128,", ""),
                "variants[0] ('rmsnorm_bf16_v8'): missing required key "
                "'block'");
  expectInvalid(replaced(RmsnormSpec, "\"hash\": \"9f2cab01\",", ""),
                "missing required key 'hash'");
}

TEST(KernelCreate, RejectsBadValues) {
  expectInvalid(
      replaced(RmsnormSpec, "\"dtype\": \"f32\"", "\"dtype\": \"f64\""),
      "unknown dtype 'f64'");
  expectInvalid(
      replaced(RmsnormSpec, "\"dtype\": \"f32\"", "\"dtype\": \"f16\""),
      "scalar 'eps' has dtype f16");
  expectInvalid(
      replaced(RmsnormSpec, "\"dtype\": \"f32\"", "\"dtype\": \"bf16\""),
      "only f32, i32 and i64 scalars");
  expectInvalid(replaced(RmsnormSpec, "\"kgen_spec\": 1", "\"kgen_spec\": 2"),
                "unsupported kgen_spec version 2");
  expectInvalid(replaced(RmsnormSpec, "\"9f2cab01\"", "\"xyz\""),
                "'hash' must be a non-empty hex string");
  expectInvalid(replaced(RmsnormSpec, "\"block\": 128", "\"block\": 2048"),
                "'block' is 2048, must be in [1, 1024]");
  expectInvalid(replaced(RmsnormSpec, "\"block\": 128", "\"block\": 128.5"),
                "'block' must be an integer");
  expectInvalid(replaced(RmsnormSpec, "\"block\": 128", "\"block\": \"128\""),
                "'block' must be an integer");
  expectInvalid(
      replaced(RmsnormSpec, "\"kind\": \"dim\"", "\"kind\": \"shape\""),
      "unknown kind 'shape'");
  expectInvalid(
      replaced(RmsnormSpec, "\"access\": \"rows\"", "\"access\": \"cols\""),
      "unknown access 'cols'");
  expectInvalid(replaced(RmsnormSpec, "\"params\": [", "\"params\": {"),
                "malformed JSON");
  expectInvalid(replaced(RmsnormSpec, "\"x\": 16", "\"x\": 12"),
                "'x' must be a power of two");
  expectInvalid(
      replaced(RmsnormSpec, "\"name\": \"weight\"", "\"name\": \"x\""),
      "duplicate param name 'x'");
  expectInvalid(replaced(RmsnormSpec, "\"writes\": true", "\"writes\": 1"),
                "'writes' must be a boolean, not a number");
  expectInvalid(replaced(RmsnormSpec, "\"kgen_spec\": 1",
                         "\"kgen_spec\": 1, \"grid_dependency\": \"yes\""),
                "'grid_dependency' must be a boolean, not a string");
}

TEST(KernelCreate, RejectsBadRowLengths) {
  expectInvalid(replaced(RmsnormSpec, "\"row_length\": \"hidden\"",
                         "\"row_length\": \"hidden+1\""),
                "row_length 'hidden+1' is not supported");
  expectInvalid(replaced(RmsnormSpec, "\"row_length\": \"hidden\"",
                         "\"row_length\": \"hidden*2\""),
                "has an invalid factor");
  expectInvalid(replaced(RmsnormSpec, "\"row_length\": \"hidden\"",
                         "\"row_length\": \"inner\""),
                "names an unknown dim 'inner'");
  expectInvalid(
      replaced(RmsnormSpec, "\"row_length\": \"hidden\"", "\"row_length\": 0"),
      "'row_length' is 0");
  // A row length must name a dim, not another kind of param.
  expectInvalid(replaced(RmsnormSpec, "\"row_length\": \"hidden\"",
                         "\"row_length\": \"eps\""),
                "names an unknown dim 'eps'");
}

TEST(KernelCreate, RejectsBadAbi) {
  expectInvalid(replaced(RmsnormSpec, "\"ptr:weight\"", "\"ptr:bias\""),
                "abi entry 'ptr:bias' names an unknown param 'bias'");
  expectInvalid(replaced(RmsnormSpec, "\"scalar:eps\"", "\"scalar:x\""),
                "abi entry 'scalar:x' needs a scalar but 'x' is a tensor");
  expectInvalid(replaced(RmsnormSpec, "\"rows\"]", "\"cols\"]"),
                "unknown abi entry 'cols'");
  expectInvalid(replaced(RmsnormSpec, "\"ptr:x\"", "\"ptr\""),
                "names an unknown param ''");
  expectInvalid(replaced(RmsnormSpec, "\"hidden\": 8", "\"eps\": 8"),
                "dim_multiple needs a dim but 'eps' is a scalar");
  expectInvalid(replaced(RmsnormSpec, "\"weight\": 16", "\"w\": 16"),
                "tensor_align names an unknown param 'w'");
}

TEST(KernelCreate, RequiresEntriesInThePtx) {
  std::string ptx = replaced(RmsnormPtx, "rmsnorm_bf16_v1", "other");
  auto [st, msg] = create(RmsnormSpec, ptx.c_str());
  EXPECT_EQ(st, KGEN_ERROR_INVALID_SPEC);
  EXPECT_THAT(msg, HasSubstr("variant entry 'rmsnorm_bf16_v1' is not "
                             "defined in the PTX"));
}

TEST(KernelCreate, RejectsBadCalls) {
  kgen_kernel *k = reinterpret_cast<kgen_kernel *>(0x1);
  EXPECT_EQ(
      kgen_kernel_create(nullptr, 0, RmsnormSpec, strlen(RmsnormSpec), &k),
      KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(k, nullptr);
  EXPECT_THAT(kgen_last_error(), HasSubstr("ptx is NULL"));
  EXPECT_EQ(
      kgen_kernel_create(RmsnormPtx, 0, RmsnormSpec, strlen(RmsnormSpec), &k),
      KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(), HasSubstr("PTX text is empty"));
  EXPECT_EQ(kgen_kernel_create(RmsnormPtx, strlen(RmsnormPtx), RmsnormSpec,
                               strlen(RmsnormSpec), nullptr),
            KGEN_ERROR_INVALID_ARGUMENT);
  kgen_kernel_destroy(nullptr); // must be harmless
}

TEST(KernelCreate, AcceptsTrailingNuls) {
  // sizeof() of a string literal counts its NUL.
  static const char ptx[] = ".entry a(){ret;}";
  static const char spec[] = R"({"kgen_spec":1,"op":"a","dtype":"f32",
    "arch":"sm_80","hash":"0","params":[],
    "variants":[{"entry":"a","block":1,"abi":["rows"]}]})";
  kgen::rt::Kernel k;
  EXPECT_EQ(k.create(std::string_view(ptx, sizeof(ptx)),
                     std::string_view(spec, sizeof(spec))),
            KGEN_OK)
      << kgen::rt::lastError();
}

TEST(KernelIntrospection, ReportsParamsAndVariants) {
  kgen::rt::Kernel k;
  ASSERT_EQ(k.create(RmsnormPtx, RmsnormSpec), KGEN_OK)
      << kgen::rt::lastError();
  kgen_kernel_info info;
  ASSERT_EQ(k.info(info), KGEN_OK);
  EXPECT_STREQ(info.op, "rmsnorm");
  EXPECT_STREQ(info.dtype, "bf16");
  EXPECT_STREQ(info.arch, "sm_90");
  EXPECT_STREQ(info.hash, "9f2cab01");
  EXPECT_EQ(info.num_params, 5u);
  EXPECT_EQ(info.num_variants, 2u);

  kgen_param_info p;
  ASSERT_EQ(k.param(1, p), KGEN_OK);
  EXPECT_STREQ(p.name, "weight");
  EXPECT_EQ(p.kind, KGEN_ARG_TENSOR);
  EXPECT_EQ(p.dtype, KGEN_BF16);
  EXPECT_EQ(p.is_vector, 1);
  EXPECT_EQ(p.writes, 0);
  EXPECT_EQ(p.row_length, 0); // dynamic
  EXPECT_STREQ(p.row_length_expr, "hidden");
  ASSERT_EQ(k.param(3, p), KGEN_OK);
  EXPECT_EQ(p.kind, KGEN_ARG_SCALAR);
  EXPECT_EQ(p.dtype, KGEN_F32);
  EXPECT_EQ(k.param(5, p), KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(),
              HasSubstr("param index 5 is out of range"));

  size_t idx = 0;
  EXPECT_EQ(k.findParam("y", idx), KGEN_OK);
  EXPECT_EQ(idx, 2u);
  EXPECT_EQ(k.findParam("z", idx), KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen::rt::lastError(), HasSubstr("no param named 'z'"));

  kgen_variant_info v;
  ASSERT_EQ(k.variant(1, v), KGEN_OK);
  EXPECT_STREQ(v.entry, "rmsnorm_bf16_v1");
  EXPECT_EQ(v.block, 128);
  EXPECT_EQ(v.rows_per_block, 1);
  EXPECT_EQ(v.shared_bytes, 0);
  EXPECT_EQ(k.variant(2, v), KGEN_ERROR_INVALID_ARGUMENT);
}

TEST(KernelIntrospection, StaticRowLength) {
  kgen::rt::Kernel k;
  std::string spec = replaced(RmsnormSpec, "\"row_length\": \"hidden\"",
                              "\"row_length\": 4096");
  ASSERT_EQ(k.create(RmsnormPtx, spec), KGEN_OK) << kgen::rt::lastError();
  kgen_param_info p;
  ASSERT_EQ(k.param(0, p), KGEN_OK);
  EXPECT_EQ(p.row_length, 4096);
  EXPECT_STREQ(p.row_length_expr, "4096");
}

} // namespace
