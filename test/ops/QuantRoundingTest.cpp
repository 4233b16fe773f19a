//===- QuantRoundingTest.cpp - The 8-bit ops round as vLLM's kernels ------===//
//
// The int8 and per-group ops each follow one vLLM kernel's arithmetic: which
// side divides and which multiplies by a reciprocal, and whether the cast to
// int8 rounds to nearest even or truncates. Each op's interpreted bf16 output
// must equal that kernel's arithmetic, written here in f32 steps, bit for
// bit; and the other choice must differ somewhere, or the test could not
// tell them apart.
//
//===----------------------------------------------------------------------===//
#include "dsl/Float.h"
#include "dsl/Interpreter.h"
#include "dsl/Registry.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace kgen;

namespace {

constexpr int64_t kRows = 23;

float bf16(float v) { return bf16BitsToF32(f32ToBf16Bits(v)); }

/// vLLM's float_to_int8_rn (cvt.rni.sat.s8.f32).
int8_t int8Rn(float v) {
  return std::isnan(v) ? 0 : (int8_t)std::fmax(-128, std::fmin(127, std::nearbyint(v)));
}

/// C++'s int8_t(float) after vLLM's clamp: truncation.
int8_t int8Trunc(float v) {
  return (int8_t)std::fmax(-128.f, std::fmin(127.f, v));
}

struct QuantRun {
  std::vector<uint16_t> x, weight; // bf16 bits
  std::vector<int8_t> y;
  std::vector<uint8_t> yFp8;
  std::vector<float> scale;
  float xAt(int64_t i) const { return bf16BitsToF32(x[i]); }
};

/// Runs `op` in bf16 on kRows rows of `hidden` (`length`: the op's fixed
/// length, 0 for the dynamic kernel) with the named scalar values. Per-group
/// scales are [kRows, groups], row-major or (`columnMajor`) column-major.
QuantRun run(const std::string &op, int64_t hidden, int64_t length,
             const std::map<std::string, double> &scalars, uint32_t seed,
             bool columnMajor = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0, 1);
  QuantRun r;
  for (int64_t i = 0; i < kRows * hidden; ++i)
    r.x.push_back(f32ToBf16Bits(n(rng)));
  for (int64_t i = 0; i < hidden; ++i)
    r.weight.push_back(f32ToBf16Bits(1 + 0.1f * n(rng)));
  const OpDef *def = findOp(op);
  EXPECT_NE(def, nullptr) << op;
  if (!def)
    return r;
  std::map<std::string, int64_t> dims;
  Kernel k = def->instantiate(DType::BF16, length, dims);
  Bindings b;
  for (const std::string &d : k.dims)
    b.dims.push_back(d == "hidden"               ? hidden
                     : d == "scale_group_stride" ? (columnMajor ? kRows : 1)
                                                 : hidden / length);
  b.rows = length ? kRows * (hidden / length) : kRows;
  for (const ParamDecl &p : k.params)
    b.params.push_back(scalars.at(p.name));
  r.y.assign(r.x.size(), 0);
  r.yFp8.assign(r.x.size(), 0);
  r.scale.assign(b.rows, 0);
  for (const TensorDecl &t : k.tensors) {
    void *data = t.name == "x"        ? (void *)r.x.data()
                 : t.name == "weight" ? (void *)r.weight.data()
                 : t.name == "scale"  ? (void *)r.scale.data()
                 : t.dtype == DType::I8 ? (void *)r.y.data()
                                        : (void *)r.yFp8.data();
    b.tensors.push_back({data, t.name == "scale" && columnMajor ? 1 : 0});
  }
  interpret(k, b);
  return r;
}

/// Runs of `len` elements of the rows, `f(run's first element, len)` each.
template <typename F> void forRuns(int64_t total, int64_t len, F f) {
  for (int64_t i = 0; i < total; i += len)
    f(i, len);
}

float absMax(const QuantRun &r, int64_t from, int64_t len) {
  float m = 0;
  for (int64_t j = from; j < from + len; ++j)
    m = std::fmax(m, std::fabs(r.xAt(j)));
  return m;
}

TEST(QuantRounding, StaticInt8DividesAndRoundsToEven) {
  const float scale = 0.02f;
  QuantRun r = run("quant_int8_static", 1024, 0, {{"scale", scale}}, 3);
  int64_t wrong = 0, truncDiffers = 0;
  for (size_t i = 0; i < r.x.size(); ++i) {
    wrong += r.y[i] != int8Rn(r.xAt(i) / scale);
    truncDiffers += int8Trunc(r.xAt(i) / scale) != r.y[i];
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(truncDiffers, 0);
}

TEST(QuantRounding, DynamicInt8MultipliesBy127OverAmax) {
  QuantRun r = run("quant_int8_dynamic", 1024, 0, {}, 5);
  int64_t wrong = 0, divideDiffers = 0;
  forRuns(r.x.size(), 1024, [&](int64_t from, int64_t len) {
    float amax = absMax(r, from, len), inv = 127.f / amax;
    EXPECT_EQ(r.scale[from / len], amax / 127.f);
    for (int64_t j = from; j < from + len; ++j) {
      wrong += r.y[j] != int8Rn(r.xAt(j) * inv);
      divideDiffers += r.y[j] != int8Rn(r.xAt(j) / (amax / 127.f));
    }
  });
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(divideDiffers, 0);
}

TEST(QuantRounding, RMSNormDynamicInt8MultipliesByTheReciprocal) {
  const double eps = 1e-6;
  const int64_t h = 1024;
  QuantRun r = run("rmsnorm_quant_int8_dynamic", h, 0, {{"eps", eps}}, 7);
  int64_t wrong = 0, divideDiffers = 0;
  forRuns(r.x.size(), h, [&](int64_t from, int64_t len) {
    double ss = 0;
    for (int64_t j = from; j < from + len; ++j)
      ss += double(r.xAt(j)) * r.xAt(j);
    float rrms = float(1.0 / std::sqrt(double(float(ss / len) + float(eps))));
    std::vector<float> y;
    float amax = 0;
    for (int64_t j = from; j < from + len; ++j) {
      y.push_back(bf16(bf16BitsToF32(r.weight[j - from]) * bf16(r.xAt(j) * rrms)));
      amax = std::fmax(amax, std::fabs(y.back()));
    }
    float s = std::fmax(amax / 127.f, FLT_EPSILON), inv = 1.f / s;
    EXPECT_EQ(r.scale[from / len], s);
    for (int64_t j = 0; j < len; ++j) {
      wrong += r.y[from + j] != int8Rn(y[j] * inv);
      divideDiffers += r.y[from + j] != int8Rn(y[j] / s);
    }
  });
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(divideDiffers, 0);
}

class GroupQuant : public ::testing::TestWithParam<int64_t> {};

TEST_P(GroupQuant, Int8TruncatesAndFp8RoundsToNearest) {
  const int64_t g = GetParam(), h = 7 * 128;
  const double eps = 1e-10;
  QuantRun i8 = run("per_token_group_quant_int8", h, g, {{"eps", eps}}, 11);
  QuantRun f8 = run("per_token_group_quant_fp8", h, g, {{"eps", eps}}, 11);
  int64_t wrong = 0, roundDiffers = 0;
  forRuns(i8.x.size(), g, [&](int64_t from, int64_t len) {
    float amax = std::fmax(absMax(i8, from, len), float(eps));
    float s8 = amax / 127.f, sf = amax / 448.f;
    EXPECT_EQ(i8.scale[from / len], s8);
    EXPECT_EQ(f8.scale[from / len], sf);
    for (int64_t j = from; j < from + len; ++j) {
      float q = i8.xAt(j) / s8;
      wrong += i8.y[j] != int8Trunc(q);
      roundDiffers += i8.y[j] != int8Rn(q);
      float p = std::fmax(-448.f, std::fmin(448.f, f8.xAt(j) / sf));
      wrong += f8.yFp8[j] != f32ToF8E4M3Bits(p);
    }
  });
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(roundDiffers, 0);
}

// vLLM's column-major scales: scale [T, groups] with strides (1, T); the
// same values, transposed, and the same quantized rows.
TEST_P(GroupQuant, ColumnMajorScalesAreTheRowMajorOnesTransposed) {
  const int64_t g = GetParam(), h = 7 * 128, groups = h / g;
  QuantRun rowMajor =
      run("per_token_group_quant_fp8", h, g, {{"eps", 1e-10}}, 11);
  QuantRun colMajor =
      run("per_token_group_quant_fp8", h, g, {{"eps", 1e-10}}, 11, true);
  int64_t wrong = 0;
  for (int64_t t = 0; t < kRows; ++t)
    for (int64_t j = 0; j < groups; ++j)
      wrong += colMajor.scale[j * kRows + t] != rowMajor.scale[t * groups + j];
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(colMajor.yFp8, rowMajor.yFp8);
  EXPECT_NE(colMajor.scale, rowMajor.scale); // the layouts differ
}

// UE8M0 scales: vLLM's register kernel rounds max(s, 1e-10) up to a power
// of two on the bits (the exponent, plus one if the mantissa is not 0), and
// a power of two divides exactly. Some scales must move (the test sees it).
TEST_P(GroupQuant, Ue8m0ScalesArePowersOfTwoAtOrAboveTheScale) {
  const int64_t g = GetParam(), h = 7 * 128;
  const double eps = 1e-10;
  QuantRun f8 =
      run("per_token_group_quant_fp8_ue8m0", h, g, {{"eps", eps}}, 11);
  int64_t wrong = 0, moved = 0;
  forRuns(f8.x.size(), g, [&](int64_t from, int64_t len) {
    float s =
        std::fmax(std::fmax(absMax(f8, from, len), float(eps)) / 448.f, 1e-10f);
    uint32_t bits = std::bit_cast<uint32_t>(s);
    float p =
        std::bit_cast<float>(((bits >> 23) + ((bits & 0x7fffff) != 0)) << 23);
    EXPECT_EQ(f8.scale[from / len], p);
    moved += p != s;
    for (int64_t j = from; j < from + len; ++j) {
      float q = std::fmax(-448.f, std::fmin(448.f, f8.xAt(j) / p));
      wrong += f8.yFp8[j] != f32ToF8E4M3Bits(q);
    }
  });
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(moved, 0);
}

// vLLM's group sizes.
INSTANTIATE_TEST_SUITE_P(Sizes, GroupQuant, ::testing::Values(64, 128));

} // namespace
