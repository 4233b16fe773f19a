//===- VariantsTest.cpp - Every bundled kernel has the variants it should -===//
//
// Compiles every op x dtype x arch x row length to PTX and checks which
// entries (variants) it has. ptxas's numbers (spills, stack, registers) are
// kgen lint's: ops/lint.json, run by the kgen-diff-bundle test.
//
//===----------------------------------------------------------------------===//
#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Registry.h"

#include "llvm/Support/MathExtras.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace kgen;

namespace {

struct Case {
  std::string op;
  DType dtype;
  std::string arch;
};

// Names the case in test output (instead of its bytes).
void PrintTo(const Case &c, std::ostream *os) {
  *os << c.op << " " << name(c.dtype) << " " << c.arch;
}

class Variants : public ::testing::TestWithParam<Case> {};

TEST_P(Variants, FollowTheSchedule) {
  const Case &c = GetParam();
  const OpDef *op = findOp(c.op);
  ASSERT_NE(op, nullptr);
  codegen::Compiler compiler;
  // 0 = the dynamic kernel; the others cover tails, tiny and long rows
  // (8192: 4 chunks over 256 threads, the capped wide blocks; 32768 and
  // 65536: 512 and 1024 threads, rows re-read, clusters of 4 chunks).
  std::vector<int64_t> lengths = {0, 7, 4095, 4096, 8192, 16384, 32768, 65536};
  if (!op->lengths.empty())
    lengths = op->lengths;
  for (int64_t len : lengths) {
    SCOPED_TRACE("length " + std::to_string(len));
    codegen::CompileOptions opts;
    opts.arch = c.arch;
    opts.cudaPath = KGEN_CUDA_PATH;
    Kernel k = op->instantiate(c.dtype, len, opts.dims);
    // Dynamic: the row length has a dim neither specialized nor bounded
    // (the main dim, or the group-scale ops' count of groups).
    bool dynamic = false;
    for (const auto &[d, coef] : k.domain.terms)
      dynamic |= !opts.dims.count(k.dims[d]) &&
                 (size_t(d) >= k.dimMax.size() || k.dimMax[d] == INT64_MAX);
    codegen::Artifact art;
    std::string error;
    ASSERT_TRUE(compiler.compile(k, {c.op, std::string(name(c.dtype)), "k"},
                                 opts, codegen::Stage::Ptx, art, error))
        << error;
    // Names the kernel in each failure.
    std::string log = c.op + " " + std::string(name(c.dtype)) + " " + c.arch +
                      " length " + std::to_string(len);
    // One .entry per variant: _vec and _any, _vec_rows and _vec_cluster for
    // a static length that reduces, and for the dynamic kernel the
    // exact-length _vec_nN (all four, or for one that reduces those its
    // _vec_holdC variants do not cover), the _vec_holdC whose held chunks
    // fit (kgen-make-variants), _vec_hold1 among them, and _vec_warp where
    // 4 chunks do.
    int entries = 0;
    for (size_t at = 0; (at = art.ptx.find(".entry ", at)) != std::string::npos;
         ++at)
      ++entries;
    int held = 0, exact = 0;
    for (int c : {1, 2, 4, 8})
      held += art.ptx.find(".entry k_vec_hold" + std::to_string(c) + "(") !=
              std::string::npos;
    for (int n : {2048, 4096, 8192, 16384})
      exact += art.ptx.find(".entry k_vec_n" + std::to_string(n) + "(") !=
               std::string::npos;
    // The widest held variant of 4 chunks is split at 256 threads.
    bool has4 = art.ptx.find(".entry k_vec_hold4(") != std::string::npos;
    bool has8 = art.ptx.find(".entry k_vec_hold8(") != std::string::npos;
    int wide = art.ptx.find(".entry k_vec_hold4_wide(") != std::string::npos;
    EXPECT_EQ(wide, has4 && !has8) << log;
    int rows = art.ptx.find(".entry k_vec_rows(") != std::string::npos;
    int warp = art.ptx.find(".entry k_vec_warp(") != std::string::npos;
    EXPECT_EQ(warp, has4) << log;
    bool reduces =
        std::any_of(k.nodes.begin(), k.nodes.end(),
                    [](const Node &n) { return n.kind == NodeKind::Reduce; });
    EXPECT_EQ(held > 0, dynamic && reduces) << log;
    // One chunk a thread fits wherever more chunks do.
    if (held > 0) {
      EXPECT_NE(art.ptx.find(".entry k_vec_hold1("), std::string::npos) << log;
    }
    if (dynamic && !reduces) {
      EXPECT_EQ(exact, 4) << log;
    }
    // The variant for many rows: only for static lengths that reduce, and
    // only where its threads differ from _vec's, not just its rows a block
    // (4096: f32 takes 128 x 8 chunks against 256 x 4; 16-bit types take 128
    // x 4 in both, 2 rows a block at most in _vec); without reductions, only
    // where the arch's profile sets streaming-rows-loads, of whole chunks.
    const codegen::Arch *target = codegen::findArch(c.arch);
    ASSERT_NE(target, nullptr);
    codegen::TuningProfile profile;
    std::string profileError;
    ASSERT_TRUE(codegen::loadProfile(target->profile, profile, profileError))
        << profileError;
    bool streamingRows =
        profile.options["kgen-schedule"].count("streaming-rows-loads") &&
        profile.options["kgen-schedule"]["streaming-rows-loads"] != "0";
    if (rows) {
      EXPECT_TRUE(!dynamic && (reduces || streamingRows)) << log;
    }
    if (reduces && len == 4096) {
      EXPECT_EQ(rows, c.dtype == DType::F32 ? 1 : 0) << log;
    }
    // The variant for few rows: on archs with clusters, for static lengths
    // of at least 256 whole chunks that reduce (4096 to 65536 here,
    // not 7 or 4095) in one level (rmsnorm; layernorm and softmax through their
    // one-pass variance and sum of exponentials; rmsnorm_quant_dynamic's
    // amax of the normalized row only from 2048 chunks), a cluster of blocks
    // per row.
    int cluster = art.ptx.find(".entry k_vec_cluster(") != std::string::npos;
    const codegen::Arch *arch = codegen::findArch(c.arch);
    ASSERT_NE(arch, nullptr);
    bool clusterLength = arch->caps.clusters && !dynamic && len >= 4096;
    if (cluster) {
      EXPECT_TRUE(clusterLength && reduces) << log;
    }
    if (c.op == "rmsnorm" || c.op == "layernorm") {
      EXPECT_EQ(cluster, clusterLength) << log;
    }
    if (c.op == "softmax") { // rows of at least 1024 chunks
      bool longRow = len >= 8192 || (len == 4096 && c.dtype == DType::F32);
      EXPECT_EQ(cluster, clusterLength && longRow) << log;
    }
    if (c.op == "rmsnorm_quant_dynamic") {
      bool longRow = len >= (c.dtype == DType::F32 ? 8192 : 16384);
      EXPECT_EQ(cluster, clusterLength && longRow) << log;
    }
    EXPECT_EQ(cluster, art.ptx.find(".reqnctapercluster") != std::string::npos)
        << log;
    // Kernels placed by a bounded dim (rope's rotary pairs): `_vec_mD` for
    // each power of two D from half a chunk down to 2.
    int narrow = 0;
    for (int d : {2, 4, 8})
      narrow += art.ptx.find(".entry k_vec_m" + std::to_string(d) + "(") !=
                std::string::npos;
    bool bounded = std::any_of(k.dimMax.begin(), k.dimMax.end(),
                               [](int64_t m) { return m != INT64_MAX; });
    int vector = 16 / int(sizeInBytes(c.dtype));
    EXPECT_EQ(narrow, bounded ? llvm::Log2_32(vector) - 1 : 0) << log;
    EXPECT_EQ(entries, 2 + exact + held + wide + rows + cluster + warp + narrow)
        << log;
  }
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (const OpDef &op : registeredOps())
    for (DType dt : op.dtypes)
      for (const codegen::Arch &a : codegen::supportedArchs())
        cases.push_back({op.name, dt, a.name()});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllOps, Variants, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.op + "_" +
                                  std::string(name(info.param.dtype)) + "_" +
                                  info.param.arch;
                         });

} // namespace
