//===- ForeignLaunchTest.cpp - Launch data for engines' own launchers -----===//
//
// kgen_launch_config_get and kgen_pack_params against the runtime's own
// steps (bindArgs, placeRows, packAbi): an engine that launches with them
// launches what kgen_launch would. No GPU needed; FakeDriverTest.cpp checks
// them against kgen_launch's recorded launches too.
//
//===----------------------------------------------------------------------===//

#include "TestSpecs.h"

#include "runtime/Args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace kgen::test;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

namespace {

const void *addr(uintptr_t a) { return reinterpret_cast<const void *>(a); }

uint64_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

RmsnormArgs argsOfLength(int64_t hidden) {
  return RmsnormArgs(addr(0x10000), addr(0x20000), addr(0x30000), hidden);
}

/// RmsnormSpec over a dynamic row whose first variant takes `fields` (its
/// block and what the launch chooses) instead of its block of 128.
std::string firstVariant(const std::string &fields) {
  std::string spec = replaced(RmsnormSpec, R"("dims": {},)",
                              R"("dims": {}, "domain": "hidden",)");
  return replaced(spec, R"("block": 128, "rows_per_block": 1)", fields);
}

/// What kgen_launch decides for these arguments, by the runtime's own steps.
kgen::rt::BoundArgs decided(const std::string &specText, const kgen_arg *args,
                            size_t nargs, int64_t rows, int multiprocessors) {
  kgen::rt::Spec spec;
  std::string err;
  EXPECT_TRUE(kgen::rt::parseSpec(specText, spec, err)) << err;
  kgen::rt::BoundArgs bound;
  EXPECT_EQ(kgen::rt::bindArgs(spec, args, nargs, rows, bound, err), KGEN_OK)
      << err;
  kgen::rt::placeRows(spec, bound, multiprocessors);
  return bound;
}

class ForeignLaunch : public ::testing::Test {
protected:
  /// Makes `kernel` from `spec`.
  void create(const std::string &spec) {
    ASSERT_EQ(kernel.create(RmsnormPtx, spec), KGEN_OK)
        << kgen::rt::lastError();
  }

  /// kgen_launch_config_get, expected to succeed.
  kgen_launch_config config(const kgen_arg *args, size_t nargs, int64_t rows,
                            int multiprocessors) {
    kgen_launch_config c;
    std::memset(&c, 0xAB, sizeof(c));
    EXPECT_EQ(kgen_launch_config_get(kernel.get(), args, nargs, rows,
                                     multiprocessors, &c),
              KGEN_OK)
        << kgen::rt::lastError();
    EXPECT_STREQ(kgen_last_error(), "");
    return c;
  }

  /// Expects the config to be the launch bindArgs and placeRows give.
  void expectDecided(const std::string &spec, const kgen_arg *args,
                     size_t nargs, int64_t rows, int multiprocessors) {
    SCOPED_TRACE(::testing::Message()
                 << rows << " rows, " << multiprocessors << " multiprocessors");
    kgen::rt::BoundArgs want =
        decided(spec, args, nargs, rows, multiprocessors);
    kgen_launch_config c = config(args, nargs, rows, multiprocessors);
    EXPECT_EQ(c.variant, want.variant);
    kgen_variant_info info;
    ASSERT_EQ(kernel.variant(want.variant, info), KGEN_OK);
    EXPECT_STREQ(c.entry, info.entry);
    EXPECT_THAT(c.grid, ElementsAre(want.gridX, 1u, 1u));
    EXPECT_THAT(c.block, ElementsAre(want.blockX, want.blockY, 1u));
  }

  kgen::rt::Kernel kernel;
};

TEST_F(ForeignLaunch, ConfigOfASimpleSpec) {
  create(RmsnormSpec);
  RmsnormArgs a;
  for (int64_t rows : {1, 7, 4096})
    for (int mp : {0, 132})
      expectDecided(RmsnormSpec, a.args, 5, rows, mp);
  kgen_launch_config c = config(a.args, 5, 7, 132);
  EXPECT_EQ(c.variant, 0u);
  EXPECT_STREQ(c.entry, "rmsnorm_bf16_v8");
  EXPECT_THAT(c.grid, ElementsAre(7u, 1u, 1u));
  EXPECT_THAT(c.block, ElementsAre(128u, 1u, 1u));
  EXPECT_THAT(c.cluster, ElementsAre(1u, 1u, 1u));
  EXPECT_EQ(c.shared_bytes, 0u);
  EXPECT_EQ(c.grid_dependency, 0);
  EXPECT_EQ(c.plain_launch_ok, 1);
  EXPECT_EQ(c.num_slots, 8u);
  // A misaligned row takes the fallback, as kgen_launch would.
  RmsnormArgs offset(addr(0x1002));
  expectDecided(RmsnormSpec, offset.args, 5, 7, 132);
  EXPECT_EQ(config(offset.args, 5, 7, 132).variant, 1u);
}

TEST_F(ForeignLaunch, ConfigOfLaunchThreadsVariants) {
  // Held in 4 chunks a thread: the threads follow the row, one row a block.
  std::string held = firstVariant(R"("block": 512, "rows_per_block": 1,
      "launch_threads": {"chunks": 4, "chunk_elements": 8})");
  create(held);
  for (int64_t hidden : {1024, 4096, 11008}) {
    RmsnormArgs a = argsOfLength(hidden);
    for (int64_t rows : {1, 3, 65536})
      for (int mp : {0, 132})
        expectDecided(held, a.args, 5, rows, mp);
  }
  RmsnormArgs a = argsOfLength(11008); // 1376 chunks: 11 warps of 4 each
  EXPECT_THAT(config(a.args, 5, 3, 132).block, ElementsAre(352u, 1u, 1u));

  // Re-read over x threads a row by y rows: blockDim.y is the rows.
  std::string reread = firstVariant(R"("block": 1024, "rows_per_block": 1,
      "launch_threads": {"chunks": 0, "chunk_elements": 8})");
  create(reread);
  for (int64_t hidden : {16, 128, 65536}) {
    RmsnormArgs b = argsOfLength(hidden);
    for (int64_t rows : {7, 1024, 65536})
      for (int mp : {0, 132})
        expectDecided(reread, b.args, 5, rows, mp);
  }
  RmsnormArgs b = argsOfLength(128); // 16 chunks: 16 threads by 16 rows
  kgen_launch_config c = config(b.args, 5, 65536, 132);
  EXPECT_THAT(c.grid, ElementsAre(4096u, 1u, 1u));
  EXPECT_THAT(c.block, ElementsAre(16u, 16u, 1u));
}

TEST_F(ForeignLaunch, ConfigOfFewerRowsABlockOnFewRows) {
  // At most 32 rows of 8 threads a block, fewer where the blocks would not
  // give every multiprocessor one.
  std::string spec = firstVariant(
      R"("block": 256, "rows_per_block": 32, "launch_rows_per_block": 32)");
  create(spec);
  RmsnormArgs a;
  for (int64_t rows : {1, 40, 1280, 65536})
    for (int mp : {0, 132})
      expectDecided(spec, a.args, 5, rows, mp);
  kgen_launch_config c = config(a.args, 5, 1280, 132);
  EXPECT_THAT(c.grid, ElementsAre(143u, 1u, 1u));
  EXPECT_THAT(c.block, ElementsAre(72u, 1u, 1u));
}

TEST_F(ForeignLaunch, ConfigCarriesClusterSharedMemoryAndGridDependency) {
  std::string spec =
      replaced(RmsnormSpec, R"("entry": "rmsnorm_bf16_v8", "block": 128,)",
               R"("entry": "rmsnorm_bf16_v8", "block": 128, "tiles": 4,
                  "cluster": 4, "max_rows": 32, "shared_bytes": 65536,)");
  spec = replaced(spec, R"(, "shared_bytes": 0,)", ",");
  spec = replaced(spec, R"("kgen_spec": 2,)",
                  R"("kgen_spec": 2, "grid_dependency": true,)");
  create(spec);
  RmsnormArgs a;
  kgen_launch_config c = config(a.args, 5, 7, 132);
  EXPECT_EQ(c.variant, 0u);
  EXPECT_THAT(c.grid, ElementsAre(28u, 1u, 1u)) << "7 rows of 4 tiles";
  EXPECT_THAT(c.cluster, ElementsAre(4u, 1u, 1u));
  EXPECT_EQ(c.shared_bytes, 65536u);
  EXPECT_EQ(c.grid_dependency, 1);
  EXPECT_EQ(c.plain_launch_ok, 1);
  // Past max_rows the fallback: no cluster.
  c = config(a.args, 5, 33, 132);
  EXPECT_EQ(c.variant, 1u);
  EXPECT_THAT(c.cluster, ElementsAre(1u, 1u, 1u));
  EXPECT_EQ(c.shared_bytes, 0u);
  // Tiles without a cluster are separate blocks.
  create(replaced(spec, R"("cluster": 4,)", ""));
  c = config(a.args, 5, 7, 132);
  EXPECT_THAT(c.grid, ElementsAre(28u, 1u, 1u));
  EXPECT_THAT(c.cluster, ElementsAre(1u, 1u, 1u));
}

TEST_F(ForeignLaunch, PacksTheSlotsInTheEntrysOrder) {
  create(RmsnormSpec);
  RmsnormArgs a;
  a.args[2].row_stride = 8192;
  a.args[3] = kgen::rt::f32Arg(-2.5f);
  std::vector<uint64_t> slots(10, ~uint64_t(0));
  ASSERT_EQ(kgen_pack_params(kernel.get(), a.args, 5, 7, 132, slots.data(),
                             slots.size()),
            KGEN_OK)
      << kgen::rt::lastError();
  EXPECT_STREQ(kgen_last_error(), "");
  // ptr x, weight, y; stride x (its row length: none given), stride y;
  // scalar eps (f32 bits, upper bytes zero); dim hidden; rows.
  EXPECT_THAT(slots,
              ElementsAre(0x10000u, 0x20000u, 0x30000u, 4096u, 8192u,
                          bits(-2.5f), 4096u, 7u, ~uint64_t(0), ~uint64_t(0)));
  // The very slots kgen_launch packs.
  kgen::rt::Spec spec;
  std::string err;
  ASSERT_TRUE(kgen::rt::parseSpec(RmsnormSpec, spec, err)) << err;
  kgen::rt::BoundArgs bound = decided(RmsnormSpec, a.args, 5, 7, 132);
  std::vector<uint64_t> storage;
  std::vector<void *> params;
  kgen::rt::packAbi(spec, spec.variants[bound.variant], bound, storage, params);
  EXPECT_THAT(std::vector<uint64_t>(slots.begin(), slots.begin() + 8),
              ElementsAreArray(storage));
  // Exactly num_slots slots are enough.
  ASSERT_EQ(kgen_pack_params(kernel.get(), a.args, 5, 7, 132, slots.data(), 8),
            KGEN_OK)
      << kgen::rt::lastError();
}

TEST_F(ForeignLaunch, PacksIntegerScalarsInTheirWidth) {
  // An i32 scalar takes the slot's first 4 bytes (a negative one too); an
  // i64 scalar all 8, in the abi's own order.
  const char *spec = R"({
    "kgen_spec": 2, "op": "scale", "dtype": "f32", "arch": "sm_90",
    "hash": "1", "dims": {"n": 256},
    "params": [
      {"name": "x", "kind": "tensor", "dtype": "f32", "access": "rows", "row_length": "2*n"},
      {"name": "k", "kind": "scalar", "dtype": "i32"},
      {"name": "m", "kind": "scalar", "dtype": "i64"}],
    "variants": [{"entry": "scale_v4", "block": 64,
                  "abi": [{"slot": "rows", "type": "i64"},
                          {"slot": "scalar", "param": "k", "type": "i32"},
                          {"slot": "stride", "param": "x", "type": "i64"},
                          {"slot": "ptr", "param": "x", "type": "u64"},
                          {"slot": "scalar", "param": "m", "type": "i64"}]}]})";
  ASSERT_EQ(kernel.create(".visible .entry scale_v4() { ret; }", spec), KGEN_OK)
      << kgen::rt::lastError();
  kgen_arg args[] = {kgen::rt::tensorArg(addr(0x1000), KGEN_F32),
                     kgen::rt::intArg(-3, KGEN_I32),
                     kgen::rt::intArg(-(int64_t(1) << 40))};
  uint64_t slots[5];
  ASSERT_EQ(kgen_pack_params(kernel.get(), args, 3, 9, 0, slots, 5), KGEN_OK)
      << kgen::rt::lastError();
  EXPECT_THAT(slots, ElementsAre(9u, uint64_t(0xFFFFFFFDu), 512u, 0x1000u,
                                 static_cast<uint64_t>(-(int64_t(1) << 40))));
}

/// Expects both calls to fail with `status` and a message holding `text`,
/// leaving their outputs untouched.
void expectRejected(const kgen_kernel *kernel, const kgen_arg *args,
                    size_t nargs, int64_t rows, int multiprocessors,
                    kgen_status status, const std::string &text,
                    size_t nslots = 8) {
  kgen_launch_config c, before;
  std::memset(&c, 0xAB, sizeof(c));
  before = c;
  EXPECT_EQ(
      kgen_launch_config_get(kernel, args, nargs, rows, multiprocessors, &c),
      status);
  EXPECT_THAT(kgen_last_error(), HasSubstr(text));
  EXPECT_EQ(std::memcmp(&c, &before, sizeof(c)), 0) << "out written";
  std::vector<uint64_t> slots(8, 7);
  EXPECT_EQ(kgen_pack_params(kernel, args, nargs, rows, multiprocessors,
                             slots.data(), nslots),
            status);
  EXPECT_THAT(kgen_last_error(), HasSubstr(text));
  EXPECT_THAT(slots, ::testing::Each(7u)) << "slots written";
}

TEST_F(ForeignLaunch, RejectsWhatKgenLaunchRejects) {
  create(RmsnormSpec);
  RmsnormArgs a;
  expectRejected(nullptr, a.args, 5, 1, 0, KGEN_ERROR_INVALID_ARGUMENT,
                 "kgen: kernel is NULL");
  expectRejected(kernel.get(), nullptr, 5, 1, 0, KGEN_ERROR_INVALID_ARGUMENT,
                 "kgen: rmsnorm_bf16: args is NULL");
  expectRejected(kernel.get(), a.args, 4, 1, 0, KGEN_ERROR_INVALID_ARGUMENT,
                 "expected 5 arguments, got 4");
  RmsnormArgs dtype;
  dtype.args[0].dtype = KGEN_F16;
  expectRejected(kernel.get(), dtype.args, 5, 1, 0, KGEN_ERROR_INVALID_ARGUMENT,
                 "argument 'x' (#0) is a tensor of bf16 but a f16 tensor was "
                 "passed");
  RmsnormArgs scalar;
  scalar.args[3] = kgen::rt::intArg(1, KGEN_I32);
  expectRejected(kernel.get(), scalar.args, 5, 1, 0,
                 KGEN_ERROR_INVALID_ARGUMENT,
                 "argument 'eps' (#3) is a f32 scalar but a i32 scalar");
  RmsnormArgs misaligned(addr(0x1001));
  expectRejected(kernel.get(), misaligned.args, 5, 1, 0, KGEN_ERROR_MISALIGNED,
                 "argument 'x' (#0) pointer 0x1001 is not aligned to its "
                 "element size (2 bytes for bf16)");
  expectRejected(kernel.get(), a.args, 5, int64_t(1) << 31, 132,
                 KGEN_ERROR_INVALID_ARGUMENT,
                 "rows 2147483648 needs 2147483648 blocks, more than the "
                 "grid limit of 2^31-1");
}

TEST_F(ForeignLaunch, RejectsRowsAndMultiprocessorsOutOfRange) {
  create(RmsnormSpec);
  RmsnormArgs a;
  // kgen_launch takes 0 rows (it launches nothing); a launch config needs
  // a launch.
  expectRejected(kernel.get(), a.args, 5, 0, 0, KGEN_ERROR_INVALID_ARGUMENT,
                 "kgen: rmsnorm_bf16: rows is 0, must be >= 1 (a launch of 0 "
                 "rows launches nothing)");
  expectRejected(kernel.get(), a.args, 5, -1, 0, KGEN_ERROR_INVALID_ARGUMENT,
                 "rows is -1, must be >= 1");
  expectRejected(kernel.get(), a.args, 5, 1, -1, KGEN_ERROR_INVALID_ARGUMENT,
                 "multiprocessors is -1, must be >= 0 (0: unknown)");
}

TEST_F(ForeignLaunch, RejectsMissingOutputs) {
  create(RmsnormSpec);
  RmsnormArgs a;
  EXPECT_EQ(kgen_launch_config_get(kernel.get(), a.args, 5, 1, 0, nullptr),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(), HasSubstr("kgen: out is NULL"));
  EXPECT_EQ(kgen_pack_params(kernel.get(), a.args, 5, 1, 0, nullptr, 8),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(), HasSubstr("kgen: slots is NULL"));
}

TEST_F(ForeignLaunch, TooFewSlotsSayHowManyAreNeeded) {
  create(RmsnormSpec);
  RmsnormArgs a;
  std::vector<uint64_t> slots(7, 7);
  EXPECT_EQ(kgen_pack_params(kernel.get(), a.args, 5, 1, 0, slots.data(), 7),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(),
              HasSubstr("kgen: rmsnorm_bf16: nslots is 7 but entry "
                        "'rmsnorm_bf16_v8' takes 8 parameters: pass at least "
                        "8 slots"));
  EXPECT_THAT(slots, ::testing::Each(7u)) << "slots written";
  EXPECT_EQ(kgen_pack_params(kernel.get(), a.args, 5, 1, 0, nullptr, 0),
            KGEN_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(kgen_last_error(), HasSubstr("nslots is 0 but entry"));
}

TEST_F(ForeignLaunch, ASuccessClearsTheLastError) {
  create(RmsnormSpec);
  RmsnormArgs a;
  kgen_launch_config c;
  ASSERT_NE(kgen_launch_config_get(kernel.get(), a.args, 5, 0, 0, &c), KGEN_OK);
  ASSERT_STRNE(kgen_last_error(), "");
  ASSERT_EQ(kgen_launch_config_get(kernel.get(), a.args, 5, 1, 0, &c), KGEN_OK);
  EXPECT_STREQ(kgen_last_error(), "");
  uint64_t slots[8];
  ASSERT_NE(kgen_pack_params(kernel.get(), a.args, 5, 0, 0, slots, 8), KGEN_OK);
  ASSERT_STRNE(kgen_last_error(), "");
  ASSERT_EQ(kgen_pack_params(kernel.get(), a.args, 5, 1, 0, slots, 8), KGEN_OK);
  EXPECT_STREQ(kgen_last_error(), "");
}

} // namespace
