//===- ActivationRoundingTest.cpp - Activations round where vLLM's do -----===//
//
// A gated activation rounds its activation to the dtype and the product
// once more, as vLLM's kernels and PyTorch's eager ops do; FlashInfer rounds
// once (docs/rounding.md). Each op's interpreted bf16 output must equal the
// vLLM column's formula, written here step by step (f32 steps as the
// interpreter computes them: in double, rounded to f32), bit for bit; and
// the one-rounding form must differ somewhere, or the table would be moot.
//
//===----------------------------------------------------------------------===//
#include "dsl/Float.h"
#include "dsl/Interpreter.h"
#include "dsl/Registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace kgen;

namespace {

float f32(double v) { return float(v); }
float bf16(float v) { return bf16BitsToF32(f32ToBf16Bits(v)); }
float exp32(float v) { return f32(std::exp(double(v))); }

/// silu in f32 steps: a / (1 + exp(-a)).
float silu(float a) { return f32(double(a) / f32(1.0 + exp32(-a))); }

/// erf GELU in f32 steps: 0.5 * a * (1 + erf(a * sqrt(1/2))).
float gelu(float a) {
  float e = f32(std::erf(double(f32(double(a) * f32(M_SQRT1_2)))));
  return f32(double(f32(0.5 * a)) * f32(1.0 + e));
}

/// kgen's tanh: 1 - 2e / (1 + e) with e = exp(-2|a|), the sign put back.
float tanh32(float a) {
  float e = exp32(f32(-2.0 * std::fabs(double(a))));
  float t = f32(1.0 - f32(f32(2.0 * e) / f32(1.0 + e)));
  return a < 0 ? -t : t;
}

/// A bf16 op on bf16 values: computed exactly, rounded once.
float mul(float a, float b) { return bf16(a * b); }
float add(float a, float b) { return bf16(a + b); }

struct Case {
  std::string op;
  bool gated;
  /// The vLLM column's output from the row's bf16 values a (and b).
  std::function<float(float, float)> vllm;
  /// The same in f32, rounded once (FlashInfer's gated forms).
  std::function<float(float, float)> once;
};

std::vector<Case> cases() {
  return {
      {"silu_and_mul", true,
       [](float a, float b) { return mul(bf16(silu(a)), b); },
       [](float a, float b) { return bf16(silu(a) * b); }},
      {"mul_and_silu", true,
       [](float a, float b) { return mul(a, bf16(silu(b))); },
       [](float a, float b) { return bf16(a * silu(b)); }},
      {"gelu_and_mul", true,
       [](float a, float b) { return mul(bf16(gelu(a)), b); },
       [](float a, float b) { return bf16(gelu(a) * b); }},
      {"gelu_quick", false,
       [](float a, float) {
         return bf16(f32(double(a) / f32(1.0 + exp32(f32(-1.702 * a)))));
       },
       // QuickGELUActivation: x * sigmoid(1.702 * x), each op rounded.
       [](float a, float) {
         float s =
             bf16(f32(1.0 / (1.0 + std::exp(-double(bf16(f32(1.702 * a)))))));
         return mul(a, s);
       }},
      {"gelu_new", false,
       [](float x, float) {
         float cube = mul(mul(x, x), x);
         float inner = bf16(f32(double(cube) * f32(0.044715)));
         float c = bf16(f32(double(add(x, inner)) * f32(0.79788456)));
         float t = bf16(tanh32(c));
         return mul(mul(0.5f, x), add(1.0f, t));
       },
       [](float x, float) {
         float z =
             f32(0.79788456 * f32(x + f32(0.044715 * f32(x * f32(x * x)))));
         return bf16(f32(0.5 * x) * f32(1.0 + tanh32(z)));
       }},
      {"gelu_fast", false,
       [](float x, float) {
         float p = bf16(f32(double(x) * f32(0.79788456)));
         float q = mul(bf16(f32(double(x) * f32(0.044715))), x);
         float t = bf16(tanh32(mul(p, add(1.0f, q))));
         return mul(mul(0.5f, x), add(1.0f, t));
       },
       [](float x, float) {
         float z = f32(f32(x * f32(0.79788456)) *
                       f32(1.0 + f32(f32(x * f32(0.044715)) * x)));
         return bf16(f32(0.5 * x) * f32(1.0 + tanh32(z)));
       }},
  };
}

/// Runs `op` (bf16, dynamic) on rows of d (gated: 2d) normal values.
std::vector<uint16_t> run(const Case &c, int64_t rows, int64_t d,
                          const std::vector<uint16_t> &x) {
  const OpDef *def = findOp(c.op);
  EXPECT_NE(def, nullptr) << c.op;
  if (!def)
    return {};
  std::map<std::string, int64_t> dims;
  Kernel k = def->instantiate(DType::BF16, 0, dims);
  std::vector<uint16_t> y(rows * d, 0xFFFF);
  Bindings b;
  b.dims = {d};
  b.rows = rows;
  for (const TensorDecl &t : k.tensors)
    b.tensors.push_back(
        {t.name == "x" ? (void *)x.data() : (void *)y.data(), 0});
  interpret(k, b);
  return y;
}

TEST(ActivationRounding, EachOpRoundsWhereVllmDoes) {
  const int64_t rows = 7, d = 1000;
  for (const Case &c : cases()) {
    std::mt19937 rng(13);
    std::normal_distribution<float> n(0, 2);
    int64_t width = c.gated ? 2 * d : d;
    std::vector<uint16_t> x;
    for (int64_t i = 0; i < rows * width; ++i)
      x.push_back(f32ToBf16Bits(n(rng)));
    std::vector<uint16_t> y = run(c, rows, d, x);
    ASSERT_EQ(y.size(), size_t(rows * d)) << c.op;
    int64_t differ = 0, apart = 0, first = -1;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < d; ++j) {
        float a = bf16BitsToF32(x[r * width + j]);
        float b = c.gated ? bf16BitsToF32(x[r * width + d + j]) : 0;
        uint16_t want = f32ToBf16Bits(c.vllm(a, b));
        if (y[r * d + j] != want && first < 0)
          first = r * d + j;
        differ += y[r * d + j] != want;
        apart += f32ToBf16Bits(c.once(a, b)) != want;
      }
    EXPECT_EQ(differ, 0) << c.op << ": first at element " << first;
    EXPECT_GT(apart, 0) << c.op << ": the roundings never differ";
  }
}

} // namespace
