//===- FuzzReproTest.cpp - kgen-fuzz cases kept as tests ------------------===//
//
// Cases `kgen-fuzz minimize` printed, or that stand for a class of inputs
// worth pinning: each must pass on the bundle of KGEN_KERNEL_DIR (skipped
// without it or without a GPU).
//
//===----------------------------------------------------------------------===//
#include "GpuCommon.h"
#include "Runner.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace {

std::string runPinned(const std::string &text) {
  const char *dir = std::getenv("KGEN_KERNEL_DIR");
  if (!dir)
    return "skip";
  std::string why;
  if (!kgen::gpu::openGpu(why))
    return "skip";
  return kgen::fuzz::runCaseText(dir, text);
}

#define EXPECT_CASE_PASSES(text)                                               \
  do {                                                                         \
    std::string r = runPinned(text);                                           \
    if (r == "skip") {                                                         \
      kgen::gpu::noGpuSkipFlag() = true;                                       \
      GTEST_SKIP() << "no KGEN_KERNEL_DIR or no GPU";                          \
    }                                                                          \
    EXPECT_EQ(r, "") << text;                                                  \
  } while (0)

// A vector tail after misaligned bases and padded rows.
TEST(FuzzRepro, TailOfMisalignedPaddedRows) {
  EXPECT_CASE_PASSES("op=rmsnorm dtype=bf16 length=9 rows=3 kernel=dyn "
                     "misalign=1 pad=5 values=normal vseed=1");
}

// NaN, Inf, signed zeros and subnormals in a quantizing norm.
TEST(FuzzRepro, SpecialValuesIntoFp8) {
  EXPECT_CASE_PASSES("op=rmsnorm_quant_dynamic dtype=f16 length=4097 rows=5 "
                     "kernel=dyn misalign=0 pad=0 values=specials vseed=2");
}

// Rows of one value: a variance of 0.
TEST(FuzzRepro, ConstantRowsOfLayerNorm) {
  EXPECT_CASE_PASSES("op=layernorm dtype=f32 length=4096 rows=7 kernel=dyn "
                     "misalign=0 pad=0 values=constant vseed=3");
}

// No rows at all: nothing written, nothing read.
TEST(FuzzRepro, ZeroRows) {
  EXPECT_CASE_PASSES("op=silu_and_mul dtype=bf16 length=100 rows=0 kernel=dyn "
                     "misalign=2 pad=3 values=normal vseed=4");
}

} // namespace
