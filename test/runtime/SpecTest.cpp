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
  EXPECT_EQ(s.version, 2);
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
  std::string spec = R"({"kgen_spec": 2, "op": "copy", "dtype": "f32",
    "arch": "sm_80", "hash": "00",
    "params": [{"name": "x", "kind": "tensor", "dtype": "f32",
                "access": "rows", "row_length": 8}],
    "variants": [{"entry": "copy_v1", "block": 32,
                  "abi": [{"slot": "ptr", "param": "x", "type": "u64"},
                          {"slot": "rows", "type": "i64"}],
                  "future_key": [1, 2]}], "comment": "ignored"})";
  Spec s;
  std::string err;
  ASSERT_TRUE(parseSpec(spec, s, err)) << err;
  EXPECT_EQ(s.variants[0].rowsPerBlock, 1);
  EXPECT_EQ(s.variants[0].sharedBytes, 0);
  EXPECT_FALSE(s.params[0].writes);
}

/// Per-head scales, [T, groups] at a row stride and a pitch.
const char *const PaddedScalarsSpec = R"({
    "kgen_spec": 3, "op": "quant", "dtype": "f32", "arch": "sm_90",
    "hash": "00",
    "params": [
      {"name": "scale", "kind": "tensor", "dtype": "f32",
       "access": "scalars", "row_length": 1, "writes": true,
       "row_map": {"rows_per_tensor_row": "groups",
                   "sub_rows": {"first": 0, "count": "groups", "length": 1,
                                "pitch": "scale_group_stride"}}},
      {"name": "amax", "kind": "tensor", "dtype": "f32",
       "access": "scalars", "row_length": 1, "writes": true},
      {"name": "x", "kind": "tensor", "dtype": "f32", "access": "rows",
       "row_length": 8},
      {"name": "w", "kind": "tensor", "dtype": "f32", "access": "vector",
       "row_length": 8},
      {"name": "groups", "kind": "dim"},
      {"name": "scale_group_stride", "kind": "dim"}],
    "variants": [{"entry": "quant", "block": 32,
                  "abi": [{"slot": "ptr", "param": "scale", "type": "u64"},
                          {"slot": "stride", "param": "scale", "type": "i64"},
                          {"slot": "rows", "type": "i64"}]}]})";

TEST(Spec, PaddedScalarsTakeARowStride) {
  std::string spec = PaddedScalarsSpec;
  Spec s;
  std::string err;
  ASSERT_TRUE(parseSpec(spec, s, err)) << err;
  const Param &scale = s.params[0];
  EXPECT_EQ(scale.access, Param::Access::Scalars);
  EXPECT_TRUE(scale.padded);
  EXPECT_EQ(scale.headCount.dimParam, 4);
  EXPECT_EQ(scale.headLength.scale, 1);
  EXPECT_EQ(scale.headLength.dimParam, -1);
  EXPECT_EQ(scale.headPitch.dimParam, 5);
  EXPECT_EQ(scale.span, "groups*scale_group_stride");
  EXPECT_TRUE(kgen::rt::hasRowStride(scale));
  EXPECT_FALSE(s.params[1].padded);
  EXPECT_FALSE(kgen::rt::hasRowStride(s.params[1])); // one element a row
  EXPECT_TRUE(kgen::rt::hasRowStride(s.params[2]));
  EXPECT_FALSE(kgen::rt::hasRowStride(s.params[3]));
  EXPECT_FALSE(kgen::rt::hasRowStride(s.params[4]));
  ASSERT_EQ(s.variants[0].abi.size(), 3u);
  EXPECT_EQ(s.variants[0].abi[1].kind, AbiSlot::Kind::Stride);
  EXPECT_EQ(s.variants[0].abi[1].param, 0);
  // A stride slot for scalars without a pitch: the launch has none to give.
  EXPECT_FALSE(parseSpec(replaced(spec, R"("stride", "param": "scale")",
                                  R"("stride", "param": "amax")"),
                         s, err));
  EXPECT_THAT(err, HasSubstr("a stride slot for 'amax', which takes no row "
                             "stride (only rows tensors and scalars with a "
                             "pitch do)"));
  // The pitch needs version 3 here too.
  EXPECT_FALSE(parseSpec(
      replaced(spec, R"("kgen_spec": 3)", R"("kgen_spec": 2)"), s, err));
  EXPECT_THAT(err, HasSubstr("params[0] ('scale').row_map.sub_rows: 'pitch' "
                             "needs kgen_spec 3"));
}

TEST(KernelCreate, ImagesMustAgreeOnPaddedHeads) {
  // Without the pitch the scales take no row stride: another kernel's args.
  std::string ptx = ".visible .entry quant() { ret; }";
  std::string padded =
      replaced(PaddedScalarsSpec, R"("arch": "sm_90")", R"("arch": "sm_80")");
  std::string plain =
      replaced(replaced(PaddedScalarsSpec, R"(,
                                "pitch": "scale_group_stride")",
                        ""),
               R"({"slot": "stride", "param": "scale", "type": "i64"},)", "");
  kgen_image images[] = {
      {ptx.data(), ptx.size(), padded.data(), padded.size(), nullptr, 0},
      {ptx.data(), ptx.size(), plain.data(), plain.size(), nullptr, 0}};
  kgen_kernel *k = nullptr;
  EXPECT_EQ(kgen_kernel_create_images(images, 2, &k),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(k, nullptr);
  EXPECT_THAT(kgen_last_error(),
              HasSubstr("image 1: quant_f32 (sm_90) is not the same kernel as "
                        "image 0, quant_f32 (sm_80)"));
  std::string same = PaddedScalarsSpec;
  images[1].spec_json = same.data();
  images[1].spec_len = same.size();
  ASSERT_EQ(kgen_kernel_create_images(images, 2, &k), KGEN_OK)
      << kgen_last_error();
  kgen_kernel_destroy(k);
}

TEST(Spec, LaunchPolicyFieldsDefaultOneByOne) {
  Spec s;
  std::string err;
  ASSERT_TRUE(parseSpec(replaced(RmsnormSpec, R"("kgen_spec": 2,)",
                                 R"("kgen_spec": 2,
                                 "launch_policy": {"many_rows": 4096},)"),
                        s, err))
      << err;
  EXPECT_EQ(s.policy.manyRows, 4096);
  EXPECT_EQ(s.policy.heldThreadsFor(4096), s.policy.manyRowsThreads);
  EXPECT_EQ(s.policy.rowsBlock, kgen::launch::LaunchPolicy{}.rowsBlock);
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
  expectInvalid(replaced(RmsnormSpec, "\"kgen_spec\": 2,", ""),
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

TEST(KernelCreate, RejectsABadLaunchPolicy) {
  auto with = [](const std::string &policy) {
    return replaced(RmsnormSpec, R"("kgen_spec": 2,)",
                    R"("kgen_spec": 2, "launch_policy": )" + policy + ",");
  };
  expectInvalid(with(R"({"rows_blok": 256})"),
                "launch_policy: unknown field 'rows_blok'");
  expectInvalid(with(R"({"rows_block": 96})"),
                "launch_policy: 'rows_block' must be a power of two");
  expectInvalid(with(R"({"min_block_threads": 2048})"),
                "'min_block_threads' is 2048, must be in [1, 1024]");
  expectInvalid(with(R"({"many_rows": 0})"),
                "'many_rows' is 0, must be in [1, 1073741824]");
  expectInvalid(with(R"({"many_rows": "8192"})"),
                "'many_rows' must be an integer");
  expectInvalid(with("[]"), "launch_policy");
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
  expectInvalid(replaced(RmsnormSpec, "\"kgen_spec\": 2", "\"kgen_spec\": 5"),
                "unsupported kgen_spec version 5 (this runtime reads 2 to 4)");
  // Version 1's abi was untyped strings: such a spec must be re-emitted.
  expectInvalid(replaced(RmsnormSpec, "\"kgen_spec\": 2", "\"kgen_spec\": 1"),
                "kgen_spec version 1 is no longer read (this runtime reads 2, "
                "whose abi entries are typed objects): re-emit it with this "
                "kgen");
  expectInvalid(replaced(RmsnormSpec, "\"9f2cab01\"", "\"xyz\""),
                "'hash' must be a non-empty hex string");
  expectInvalid(replaced(RmsnormSpec, "\"block\": 128", "\"block\": 2048"),
                "'block' is 2048, must be in [1, 1024]");
  expectInvalid(replaced(RmsnormSpec, "\"block\": 128", "\"block\": 128.5"),
                "'block' must be an integer");
  expectInvalid(replaced(RmsnormSpec, "\"block\": 128", "\"block\": \"128\""),
                "'block' must be an integer");
  // More rows a block than threads gave a launch of blocks of 0 threads.
  expectInvalid(replaced(RmsnormSpec, "\"rows_per_block\": 1,",
                         "\"rows_per_block\": 129,"),
                "variants[0] ('rmsnorm_bf16_v8'): 'rows_per_block' is 129, "
                "must be in [1, 128]");
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
  expectInvalid(replaced(RmsnormSpec, "\"kgen_spec\": 2",
                         "\"kgen_spec\": 2, \"grid_dependency\": \"yes\""),
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
  const std::string weight =
      R"({"slot": "ptr", "param": "weight", "type": "u64"})";
  const std::string eps =
      R"({"slot": "scalar", "param": "eps", "type": "f32"})";
  const std::string rows = R"({"slot": "rows", "type": "i64"})";
  expectInvalid(replaced(RmsnormSpec, weight,
                         R"({"slot": "ptr", "param": "bias", "type": "u64"})"),
                "variants[0] ('rmsnorm_bf16_v8').abi[1]: ptr slot names an "
                "unknown param 'bias'");
  expectInvalid(replaced(RmsnormSpec, eps,
                         R"({"slot": "scalar", "param": "x", "type": "f32"})"),
                "scalar slot needs a scalar but 'x' is a tensor");
  expectInvalid(
      replaced(RmsnormSpec, rows, R"({"slot": "cols", "type": "i64"})"),
      "unknown slot 'cols' (expected ptr, stride, scalar, dim or "
      "rows)");
  expectInvalid(
      replaced(RmsnormSpec, weight, R"({"slot": "ptr", "type": "u64"})"),
      "abi[1]: missing required key 'param'");
  expectInvalid(replaced(RmsnormSpec, rows, R"({"slot": "rows"})"),
                "abi[7]: missing required key 'type'");
  expectInvalid(replaced(RmsnormSpec, rows,
                         R"({"slot": "rows", "param": "x", "type": "i64"})"),
                "a rows slot names no param");
  // The v1 form.
  expectInvalid(replaced(RmsnormSpec, weight, R"("ptr:weight")"),
                "abi[1]: must be an object {\"slot\", \"param\", \"type\"}, "
                "not a string");
  expectInvalid(replaced(RmsnormSpec, "\"hidden\": 8", "\"eps\": 8"),
                "dim_multiple needs a dim but 'eps' is a scalar");
  expectInvalid(replaced(RmsnormSpec, "\"weight\": 16", "\"w\": 16"),
                "tensor_align names an unknown param 'w'");
}

TEST(KernelCreate, AbiTypesAreThePackedOnes) {
  // A pointer is u64, strides, dims and rows i64, a scalar its dtype.
  expectInvalid(
      replaced(RmsnormSpec,
               R"({"slot": "ptr", "param": "weight", "type": "u64"})",
               R"({"slot": "ptr", "param": "weight", "type": "i64"})"),
      "abi[1]: type 'i64' of ptr slot 'weight' must be u64");
  expectInvalid(replaced(RmsnormSpec,
                         R"({"slot": "stride", "param": "y", "type": "i64"})",
                         R"({"slot": "stride", "param": "y", "type": "i32"})"),
                "type 'i32' of stride slot 'y' must be i64");
  expectInvalid(
      replaced(RmsnormSpec,
               R"({"slot": "scalar", "param": "eps", "type": "f32"})",
               R"({"slot": "scalar", "param": "eps", "type": "f64"})"),
      "type 'f64' of scalar slot 'eps' must be f32");
  expectInvalid(
      replaced(RmsnormSpec,
               R"({"slot": "dim", "param": "hidden", "type": "i64"})",
               R"({"slot": "dim", "param": "hidden", "type": "u64"})"),
      "type 'u64' of dim slot 'hidden' must be i64");
  expectInvalid(replaced(RmsnormSpec, R"({"slot": "rows", "type": "i64"})",
                         R"({"slot": "rows", "type": "i32"})"),
                "type 'i32' of rows slot must be i64");
  // An i32 scalar's slot is i32.
  std::string i32 = RmsnormSpec;
  i32 = replaced(i32, R"("name": "eps", "kind": "scalar", "dtype": "f32")",
                 R"("name": "eps", "kind": "scalar", "dtype": "i32")");
  expectInvalid(i32, "type 'f32' of scalar slot 'eps' must be i32");
  for (int i = 0; i < 2; ++i)
    i32 = replaced(i32, R"({"slot": "scalar", "param": "eps", "type": "f32"})",
                   R"({"slot": "scalar", "param": "eps", "type": "i32"})");
  auto [st, msg] = create(i32);
  EXPECT_EQ(st, KGEN_OK) << msg;
}

/// RmsnormSpec whose first variant has `fields` added after its entry.
std::string firstVariantWith(const std::string &fields) {
  return replaced(RmsnormSpec, R"("entry": "rmsnorm_bf16_v8",)",
                  R"("entry": "rmsnorm_bf16_v8", )" + fields + ",");
}

TEST(KernelCreate, LaunchRuleMustMatchTheFields) {
  // Each rule, as the fields give it.
  std::string domain = R"("domain": "hidden",)";
  struct Case {
    std::string fields, rule;
    bool domain;
  } cases[] = {
      {"", "rows_per_block", false},
      {R"("block": 256, "rows_per_block": 2, "launch_rows_per_block": 1)",
       "launch_rows_per_block", false},
      {R"("block": 256, "rows_per_block": 8, "launch_rows_per_block": 4,
          "domain_range": {"min": 520, "max": 1024, "chunk_elements": 8})",
       "domain_range", true},
      {R"("block": 512, "rows_per_block": 1,
          "launch_threads": {"chunks": 4, "chunk_elements": 8})",
       "launch_threads", true},
      {R"("block": 1024, "rows_per_block": 1,
          "launch_threads": {"chunks": 0, "chunk_elements": 8})",
       "launch_threads_rows", true},
      {R"("block": 256, "rows_per_block": 1,
          "launch_threads": {"chunks": 1, "chunk_elements": 8})",
       "launch_threads_rows", true},
      // A domain range over one row a block launches its rows per block.
      {R"("block": 128, "rows_per_block": 1,
          "domain_range": {"min": 520, "max": 1024, "chunk_elements": 8})",
       "rows_per_block", true},
  };
  for (const Case &c : cases) {
    std::string spec = RmsnormSpec;
    if (c.domain)
      spec = replaced(spec, R"("dims": {},)", R"("dims": {},)" + domain);
    if (!c.fields.empty())
      spec = replaced(spec, R"("block": 128, "rows_per_block": 1)", c.fields);
    Spec s;
    std::string err;
    ASSERT_TRUE(parseSpec(spec, s, err)) << err;
    EXPECT_STREQ(launchRuleName(launchRule(s.variants[0])), c.rule.c_str())
        << c.fields;
    std::string named = replaced(spec, R"("entry": "rmsnorm_bf16_v8",)",
                                 R"("entry": "rmsnorm_bf16_v8", "launch": )"
                                 R"({"rule": ")" +
                                     c.rule + R"("},)");
    auto [st, msg] = create(named);
    EXPECT_EQ(st, KGEN_OK) << c.rule << ": " << msg;
    std::string wrong =
        c.rule == "launch_threads" ? "rows_per_block" : "launch_threads";
    expectInvalid(replaced(named, "\"" + c.rule + "\"}", "\"" + wrong + "\"}"),
                  "variants[0] ('rmsnorm_bf16_v8').launch: rule '" + wrong +
                      "' is not the one the variant's fields give ('" + c.rule +
                      "')");
  }
  expectInvalid(firstVariantWith(R"("launch": "rows_per_block")"),
                "'launch' must be an object, not a string");
  expectInvalid(firstVariantWith(R"("launch": {})"),
                "launch: missing required key 'rule'");
}

TEST(Spec, KeepsTheCluster) {
  Spec s;
  std::string err;
  ASSERT_TRUE(
      parseSpec(firstVariantWith(R"("tiles": 4, "cluster": 4)"), s, err))
      << err;
  EXPECT_TRUE(s.variants[0].cluster);
  EXPECT_EQ(s.variants[0].tiles, 4);
  EXPECT_FALSE(s.variants[1].cluster);
  ASSERT_TRUE(parseSpec(firstVariantWith(R"("tiles": 4)"), s, err)) << err;
  EXPECT_FALSE(s.variants[0].cluster) << "tiles alone are separate blocks";
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
  static const char spec[] = R"({"kgen_spec":2,"op":"a","dtype":"f32",
    "arch":"sm_80","hash":"0","params":[],
    "variants":[{"entry":"a","block":1,"abi":[{"slot": "rows", "type": "i64"}]}]})";
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
