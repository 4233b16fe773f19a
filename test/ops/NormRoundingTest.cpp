//===- NormRoundingTest.cpp - Each norm rounds where its library does -----===//
//
// The norms ship in the rounding of Hugging Face's modules (and vLLM's
// kernels, which round at the same points) and, as `_flashinfer`, in
// FlashInfer's (docs/rounding.md). Each op's interpreted bf16 output must
// equal its library's reference formula, written here in f32 steps as the
// library's tests write it in torch, bit for bit; and the two roundings
// must differ somewhere, or the choice would be moot.
//
//===----------------------------------------------------------------------===//
#include "dsl/Float.h"
#include "dsl/Interpreter.h"
#include "dsl/Registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace kgen;

namespace {

constexpr double kEps = 1e-6;

float bf16(float v) { return bf16BitsToF32(f32ToBf16Bits(v)); }

/// f32(mean(x^2)) as torch's f32 mean would give it for well-conditioned
/// rows (summed exactly here, rounded once), then rsqrt(var + eps) in f32.
float rrms(const std::vector<float> &x) {
  double s = 0;
  for (float v : x)
    s += double(v) * v;
  float var = float(s / double(x.size()));
  return float(1.0 / std::sqrt(double(float(var + float(kEps)))));
}

struct Rows {
  int64_t rows, hidden;
  std::vector<uint16_t> x, residual, weight; // bf16 bits
};

Rows randomRows(int64_t rows, int64_t hidden, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0, 1);
  Rows r{rows, hidden, {}, {}, {}};
  for (int64_t i = 0; i < rows * hidden; ++i) {
    r.x.push_back(f32ToBf16Bits(n(rng)));
    r.residual.push_back(f32ToBf16Bits(n(rng)));
  }
  for (int64_t i = 0; i < hidden; ++i)
    r.weight.push_back(f32ToBf16Bits(1 + 0.1f * n(rng)));
  return r;
}

float at(const std::vector<uint16_t> &v, int64_t i) {
  return bf16BitsToF32(v[i]);
}

/// Runs `op` (bf16, dynamic) on the rows: its y (or in-place x) and residual.
void run(const std::string &op, Rows r, std::vector<uint16_t> &y,
         std::vector<uint16_t> &residual) {
  const OpDef *def = findOp(op);
  ASSERT_NE(def, nullptr) << op;
  std::map<std::string, int64_t> dims;
  Kernel k = def->instantiate(DType::BF16, 0, dims);
  y.assign(r.x.size(), 0xFFFF);
  Bindings b;
  b.dims = {r.hidden};
  b.rows = r.rows;
  b.params = {kEps};
  for (const TensorDecl &t : k.tensors) {
    void *data = t.name == "x"          ? (void *)r.x.data()
                 : t.name == "residual" ? (void *)r.residual.data()
                 : t.name == "weight"   ? (void *)r.weight.data()
                                        : (void *)y.data();
    b.tensors.push_back({data, 0});
  }
  interpret(k, b);
  if (!k.tensors.empty() && k.tensors.back().name != "y")
    y = r.x; // in place
  residual = r.residual;
}

/// Elements of `got` whose bits differ from `want`'s.
int64_t differ(const std::vector<uint16_t> &got,
               const std::vector<float> &want) {
  int64_t n = 0;
  for (size_t i = 0; i < got.size(); ++i)
    n += got[i] != f32ToBf16Bits(want[i]);
  return n;
}

/// An RMSNorm of each row of x: out(x, rrms, w) element by element.
template <typename F> std::vector<float> rmsnormRows(const Rows &r, F out) {
  std::vector<float> y;
  for (int64_t i = 0; i < r.rows; ++i) {
    std::vector<float> row;
    for (int64_t j = 0; j < r.hidden; ++j)
      row.push_back(at(r.x, i * r.hidden + j));
    float s = rrms(row);
    for (int64_t j = 0; j < r.hidden; ++j)
      y.push_back(out(row[j], s, at(r.weight, j)));
  }
  return y;
}

// Hugging Face LlamaRMSNorm / vLLM rms_norm: the normalized row rounded to
// bf16, then multiplied by the bf16 weight (rounded again).
std::vector<float> rmsnormHF(const Rows &r) {
  return rmsnormRows(
      r, [](float x, float s, float w) { return bf16(w * bf16(x * s)); });
}

// FlashInfer's RMSNorm and its test's llama_rms_norm: (x * rrms * w) in f32,
// rounded once.
std::vector<float> rmsnormFI(const Rows &r) {
  return rmsnormRows(r,
                     [](float x, float s, float w) { return bf16(x * s * w); });
}

/// fused_add: the residual sum rounded (HF, vLLM) or kept in f32 for the
/// norm (FlashInfer); `gemma` multiplies by (1 + w) in f32.
std::vector<float> fusedAdd(const Rows &r, bool flashinfer, bool gemma,
                            std::vector<float> &residual) {
  std::vector<float> y;
  residual.clear();
  for (int64_t i = 0; i < r.rows; ++i) {
    std::vector<float> sum;
    for (int64_t j = 0; j < r.hidden; ++j) {
      float s = at(r.x, i * r.hidden + j) + at(r.residual, i * r.hidden + j);
      residual.push_back(bf16(s));
      sum.push_back(flashinfer ? s : bf16(s));
    }
    float s = rrms(sum);
    for (int64_t j = 0; j < r.hidden; ++j) {
      float w = at(r.weight, j);
      y.push_back(gemma        ? bf16(sum[j] * s * (1 + w))
                  : flashinfer ? bf16(sum[j] * s * w)
                               : bf16(w * bf16(sum[j] * s)));
    }
  }
  return y;
}

class NormRounding : public ::testing::TestWithParam<int64_t> {};

TEST_P(NormRounding, RMSNormMatchesItsLibrary) {
  Rows r = randomRows(19, GetParam(), 7);
  std::vector<uint16_t> y, unused;
  run("rmsnorm", r, y, unused);
  EXPECT_EQ(differ(y, rmsnormHF(r)), 0);
  int64_t apart = differ(y, rmsnormFI(r));
  run("rmsnorm_flashinfer", r, y, unused);
  EXPECT_EQ(differ(y, rmsnormFI(r)), 0);
  EXPECT_GT(apart, 0) << "the roundings never differ: nothing to choose";
}

TEST_P(NormRounding, FusedAddMatchesItsLibrary) {
  Rows r = randomRows(19, GetParam(), 11);
  std::vector<float> wantResidual;
  for (bool gemma : {false, true}) {
    std::string op = gemma ? "gemma_fused_add_rmsnorm" : "fused_add_rmsnorm";
    std::vector<uint16_t> y, residual;
    run(op, r, y, residual);
    EXPECT_EQ(differ(y, fusedAdd(r, false, gemma, wantResidual)), 0) << op;
    EXPECT_EQ(differ(residual, wantResidual), 0) << op;
    int64_t apart = differ(y, fusedAdd(r, true, gemma, wantResidual));
    run(op + "_flashinfer", r, y, residual);
    EXPECT_EQ(differ(y, fusedAdd(r, true, gemma, wantResidual)), 0) << op;
    EXPECT_EQ(differ(residual, wantResidual), 0) << op;
    EXPECT_GT(apart, 0) << op << ": the roundings never differ";
  }
}

// FlashInfer's tests' hidden sizes (an odd one, and powers of two).
INSTANTIATE_TEST_SUITE_P(Hidden, NormRounding,
                         ::testing::Values(111, 1024, 4096));

} // namespace
