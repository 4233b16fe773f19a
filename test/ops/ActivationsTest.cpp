//===- ActivationsTest.cpp - The bundled activations against PyTorch's ----===//
//
// The ops may evaluate a formula in another, equal form (gelu_tanh as
// a / (1 + exp(-2z))): their interpreted f32 results must stay within a few
// f32 ulps of PyTorch's definition, computed here in double.
//
//===----------------------------------------------------------------------===//
#include "dsl/Interpreter.h"
#include "dsl/Registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace kgen;

namespace {

/// Runs the op's dynamic f32 kernel on one row of `x`.
std::vector<float> runF32(const char *op, const std::vector<float> &x) {
  const OpDef *def = findOp(op);
  EXPECT_NE(def, nullptr) << op;
  if (!def)
    return {};
  std::map<std::string, int64_t> dims;
  Kernel k = def->instantiate(DType::F32, 0, dims);
  std::vector<float> in = x, out(x.size(), std::nanf(""));
  Bindings b;
  b.dims = {(int64_t)x.size()};
  b.rows = 1;
  b.tensors = {{in.data(), 0}, {out.data(), 0}};
  interpret(k, b);
  return out;
}

/// Inputs over the range that matters, both signs, plus the far tails.
std::vector<float> inputs() {
  std::vector<float> x;
  for (double v = -12; v <= 12; v += 0.0625)
    x.push_back((float)v);
  for (float v : {1e-6f, -1e-6f, 30.f, -30.f, 90.f, -90.f, 1e30f, -1e30f})
    x.push_back(v);
  return x;
}

/// |got - want| within `ulps` f32 ulps of want, plus |a| * 2^-24: PyTorch
/// evaluates 0.5 * a * (1 + t) in f32, so where t is within 2^-24 of -1 its
/// own result is 0 (the erf GELU at a = -8 is -0, not -4.6e-16).
void expectNear(const char *op, std::function<double(double)> ref,
                double ulps) {
  std::vector<float> x = inputs();
  std::vector<float> y = runF32(op, x);
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double want = ref(x[i]);
    double ulp =
        std::ldexp(1.0, std::ilogb(std::max(std::fabs(want), 0x1p-126)) - 23);
    EXPECT_LE(std::fabs(y[i] - want), ulps * ulp + std::fabs(x[i]) * 0x1p-24)
        << op << "(" << x[i] << ") = " << y[i] << ", want " << want;
  }
}

} // namespace

TEST(Activations, GeluTanhMatchesPyTorchsFormula) {
  expectNear(
      "gelu_tanh",
      [](double a) {
        double k = std::sqrt(2.0 / M_PI);
        return 0.5 * a * (1.0 + std::tanh(k * (a + 0.044715 * a * a * a)));
      },
      4);
}

TEST(Activations, GeluErfMatchesPyTorchsFormula) {
  expectNear(
      "gelu", [](double a) { return 0.5 * a * (1.0 + std::erf(a / M_SQRT2)); },
      4);
}

TEST(Activations, SiluMatchesPyTorchsFormula) {
  expectNear(
      "silu", [](double a) { return a / (1.0 + std::exp(-a)); }, 4);
}

TEST(Activations, GeluQuickMatchesVllmsFormula) {
  expectNear(
      "gelu_quick", [](double a) { return a / (1.0 + std::exp(-1.702 * a)); },
      4);
}

// In f32 the roundings of vLLM's gelu_new and gelu_fast are f32's: their
// formulas in double.
TEST(Activations, GeluNewMatchesVllmsFormula) {
  expectNear(
      "gelu_new",
      [](double a) {
        return 0.5 * a *
               (1.0 + std::tanh(0.79788456 * (a + 0.044715 * a * a * a)));
      },
      4);
}

TEST(Activations, GeluFastMatchesVllmsFormula) {
  expectNear(
      "gelu_fast",
      [](double a) {
        return 0.5 * a *
               (1.0 + std::tanh(0.79788456 * a * (1.0 + 0.044715 * a * a)));
      },
      4);
}

TEST(Activations, GeluTanhSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> y = runF32("gelu_tanh", {0.f, -0.f, inf, -inf, NAN});
  ASSERT_EQ(y.size(), 5u);
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[1], 0.f);
  EXPECT_EQ(y[2], inf);
  // PyTorch: 0.5 * -inf * (1 + tanh(-inf)) = -inf * 0 = NaN.
  EXPECT_TRUE(std::isnan(y[3])) << y[3];
  EXPECT_TRUE(std::isnan(y[4])) << y[4];
}
