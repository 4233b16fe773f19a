//===- ProfileTest.cpp - Tuning profiles: read, checked, and obeyed -------===//
#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace kgen;
using ::testing::HasSubstr;

namespace {

codegen::TuningProfile parse(const std::string &text) {
  codegen::TuningProfile p;
  std::string error;
  EXPECT_TRUE(codegen::parseProfile(text, "test.json", p, error)) << error;
  return p;
}

std::string parseError(const std::string &text) {
  codegen::TuningProfile p;
  std::string error;
  EXPECT_FALSE(codegen::parseProfile(text, "test.json", p, error)) << text;
  return error;
}

std::string checkError(const std::string &text,
                       const std::string &arch = "sm_90") {
  codegen::Compiler compiler;
  std::string error;
  EXPECT_FALSE(compiler.checkProfile(parse(text), arch, error)) << text;
  return error;
}

TEST(Profile, EveryArchsOwnProfileLoadsAndPasses) {
  codegen::Compiler compiler;
  for (const codegen::Arch &a : codegen::supportedArchs()) {
    codegen::TuningProfile p;
    std::string error;
    ASSERT_TRUE(codegen::loadProfile(a.profile, p, error)) << error;
    EXPECT_EQ(p.name, a.profile);
    EXPECT_TRUE(compiler.checkProfile(p, a.name(), error)) << error;
  }
  // Each built-in profile is named after its file and passes on its archs.
  for (const std::string &name : codegen::builtinProfiles()) {
    codegen::TuningProfile p;
    std::string error;
    ASSERT_TRUE(codegen::loadProfile(name, p, error)) << error;
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.about.empty()) << name;
    for (const std::string &arch : p.archs)
      EXPECT_TRUE(compiler.checkProfile(p, arch, error)) << error;
  }
}

TEST(Profile, InheritsItsParentsOptionsUnderItsOwn) {
  codegen::TuningProfile p = parse(R"({
    "profile": "mine", "inherits": "sm_90",
    "options": {"kgen-prefetch": {"prefetch-ahead": false},
                "kgen-schedule": {"target-chunks": 2}}})");
  EXPECT_EQ(p.chain, (std::vector<std::string>{"mine", "sm_90", "generic"}));
  EXPECT_EQ(p.archs, (std::vector<std::string>{"sm_90", "sm_90a"}));
  EXPECT_EQ(p.options["kgen-prefetch"]["prefetch-ahead"], "false");
  EXPECT_EQ(p.options["kgen-occupancy"]["busy-rows"], "true");
  EXPECT_EQ(p.options["kgen-schedule"]["target-chunks"], "2");
}

TEST(Profile, WrittenProfilesReadBackAlike) {
  codegen::TuningProfile p = parse(R"({
    "profile": "mine", "inherits": "sm_90", "about": "a test",
    "options": {"kgen-make-variants": {"exact-lengths": [4096, 16384],
                                       "held-chunks": [], "warp-min-rows": 64},
                "kgen-prefetch": {"prefetch-ahead": false}}})");
  codegen::TuningProfile back = parse(codegen::writeProfile(p));
  EXPECT_EQ(back.name, "mine");
  EXPECT_EQ(back.about, "a test");
  EXPECT_EQ(back.archs, p.archs);
  EXPECT_EQ(back.options, p.options);
  EXPECT_EQ(back.chain, std::vector<std::string>{"mine"}); // resolved
}

TEST(Profile, MalformedFilesAreRefusedByName) {
  EXPECT_THAT(parseError("[1]"), HasSubstr("test.json: a profile is a JSON "
                                           "object"));
  EXPECT_THAT(parseError("{\"profile\": \"p\",}"), HasSubstr("test.json: "));
  EXPECT_THAT(parseError("{}"), HasSubstr("needs \"profile\""));
  EXPECT_THAT(parseError(R"({"profile": "p", "tuning": {}})"),
              HasSubstr("unknown key 'tuning'"));
  EXPECT_THAT(parseError(R"({"profile": "p", "archs": []})"),
              HasSubstr("\"archs\" must be a non-empty array"));
  EXPECT_THAT(
      parseError(
          R"({"profile": "p", "options": {"kgen-schedule": {"target-chunks": 1.5}}})"),
      HasSubstr("option 'target-chunks' of 'kgen-schedule' must be a bool, an "
                "integer or an array of integers"));
  EXPECT_THAT(
      parseError(
          R"({"profile": "p", "options": {"kgen-schedule": {"target-chunks": "4"}}})"),
      HasSubstr("must be a bool, an integer"));
  EXPECT_THAT(parseError(R"({"profile": "p", "inherits": "a100"})"),
              HasSubstr("inherits 'a100', which is not a built-in profile"));
  EXPECT_THAT(parseError("{\"profile\": \"p\", \"about\": " +
                         std::string(20, '[') + std::string(20, ']') + "}"),
              HasSubstr("nested more than 8 levels"));
  EXPECT_THAT(parseError("{\"profile\": \"p\", \"about\": \"" +
                         std::string(70000, 'x') + "\"}"),
              HasSubstr("more than 65536 bytes"));
  std::string error;
  codegen::TuningProfile p;
  EXPECT_FALSE(codegen::loadProfile("/nonexistent/h100.json", p, error));
  EXPECT_THAT(error, HasSubstr("neither a built-in profile"));
  EXPECT_FALSE(codegen::loadProfile("/dev/zero", p, error));
  EXPECT_THAT(error, HasSubstr("nor a regular file"));
}

TEST(Profile, OptionsThePassesDoNotTakeAreRefused) {
  EXPECT_THAT(
      checkError(
          R"({"profile": "p", "options": {"kgen-vectorize": {"width": 4}}})"),
      HasSubstr("no pass 'kgen-vectorize' takes tuning options"));
  EXPECT_THAT(
      checkError(
          R"({"profile": "p", "options": {"kgen-schedule": {"held-threads": 4}}})"),
      HasSubstr("kgen-schedule"));
  // What the target or the command line sets is not a profile's.
  EXPECT_THAT(
      checkError(
          R"({"profile": "p", "options": {"kgen-make-variants": {"clusters": true}}})",
          "sm_80"),
      HasSubstr("option 'clusters' of kgen-make-variants comes from the "
                "target or the command line"));
  EXPECT_THAT(
      checkError(
          R"({"profile": "p", "options": {"kgen-schedule": {"target-chunks": 0}}})"),
      HasSubstr("kgen-schedule: option 'target-chunks' must lie in [1, "));
  EXPECT_THAT(
      checkError(
          R"({"profile": "p", "options": {"kgen-make-variants": {"held-chunks": [4, 2]}}})"),
      HasSubstr("strictly ascending"));
  EXPECT_THAT(checkError(R"({"profile": "p", "archs": ["sm_90"]})", "sm_80"),
              HasSubstr("profile p is for sm_90, not sm_80"));
}

/// The PTX of `op` (dynamic length, bf16) for `arch` under `profile`.
std::string ptx(const std::string &opName, const std::string &arch,
                std::optional<codegen::TuningProfile> profile) {
  const OpDef *op = findOp(opName);
  EXPECT_NE(op, nullptr);
  codegen::CompileOptions opts;
  opts.arch = arch;
  opts.cudaPath = KGEN_CUDA_PATH;
  opts.profile = std::move(profile);
  Kernel k = op->instantiate(DType::BF16, 0, opts.dims);
  codegen::Compiler compiler;
  codegen::Artifact art;
  std::string error;
  EXPECT_TRUE(compiler.compile(k, {opName, "bf16", "k"}, opts,
                               codegen::Stage::Ptx, art, error))
      << error;
  return art.ptx;
}

TEST(Profile, CompilesFollowTheProfile) {
  // An arch's own profile, named or not, gives the same kernels.
  EXPECT_EQ(ptx("rmsnorm", "sm_90", std::nullopt),
            ptx("rmsnorm", "sm_90", parse(R"({"profile": "p",
              "inherits": "sm_90"})")));
  // The variant set follows exact-lengths (fused_add_rmsnorm holds two
  // rows: its held variants leave 16384 an exact-length one).
  std::string fewer = ptx("fused_add_rmsnorm", "sm_80", parse(R"({
      "profile": "p",
      "options": {"kgen-make-variants": {"exact-lengths": []}}})"));
  EXPECT_NE(ptx("fused_add_rmsnorm", "sm_80", std::nullopt)
                .find(".entry k_vec_n16384("),
            std::string::npos);
  EXPECT_EQ(fewer.find("_vec_n"), std::string::npos);
  EXPECT_NE(fewer.find(".entry k_vec_hold4("), std::string::npos);
  // sm_90's prefetch of later blocks' rows is the profile's choice.
  std::string without = ptx("rmsnorm", "sm_90", parse(R"({"profile": "p",
      "inherits": "sm_90",
      "options": {"kgen-prefetch": {"prefetch-ahead": false}}})"));
  EXPECT_NE(ptx("rmsnorm", "sm_90", std::nullopt), without);
}

TEST(Profile, CompileSaysTheProfilesMistake) {
  const OpDef *op = findOp("rmsnorm");
  ASSERT_NE(op, nullptr);
  codegen::CompileOptions opts;
  opts.arch = "sm_80";
  opts.cudaPath = KGEN_CUDA_PATH;
  opts.profile = parse(R"({"profile": "hopper", "archs": ["sm_90"]})");
  Kernel k = op->instantiate(DType::BF16, 4096, opts.dims);
  codegen::Compiler compiler;
  codegen::Artifact art;
  std::string error;
  EXPECT_FALSE(compiler.compile(k, {"rmsnorm", "bf16", "k"}, opts,
                                codegen::Stage::Ptx, art, error));
  EXPECT_EQ(error, "profile hopper is for sm_90, not sm_80");
  opts.profile = parse(R"({"profile": "p",
      "options": {"kgen-lower-to-gpu": {"no-such-option": 1}}})");
  for (int twice = 0; twice < 2; ++twice) { // a cached failure says it again
    EXPECT_FALSE(compiler.compile(k, {"rmsnorm", "bf16", "k"}, opts,
                                  codegen::Stage::Ptx, art, error));
    EXPECT_THAT(error, HasSubstr("profile p: kgen-lower-to-gpu: "));
    EXPECT_THAT(error, HasSubstr("no-such-option"));
  }
}

} // namespace
