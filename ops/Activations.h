//===- Activations.h - Activation formulas shared by the ops ----*- C++ -*-===//
#ifndef KGEN_OPS_ACTIVATIONS_H
#define KGEN_OPS_ACTIVATIONS_H

#include "dsl/Builder.h"

#include <cmath>

namespace kgen::ops {

/// F.silu on an f32 value.
inline Expr siluF32(const Expr &a) { return a / (1.0 + exp(-a)); }

/// F.gelu(approximate="tanh" or "none") on an f32 value. The tanh form
/// 0.5 * a * (1 + tanh(z)) is evaluated as a / (1 + exp(-2z)), the same
/// value (1 + tanh(z) = 2 / (1 + exp(-2z))) without tanh's cancellation
/// near -1 and with SiLU's fast exp and reciprocal on the GPU (libdevice's
/// tanhf took most of the kernel's instructions).
inline Expr geluF32(const Expr &a, bool tanhApproximation) {
  if (tanhApproximation) {
    const double k = std::sqrt(2.0 / M_PI);
    return a / (1.0 + exp(-2.0 * k * (a + 0.044715 * a * a * a)));
  }
  return 0.5 * a * (1.0 + erf(a * M_SQRT1_2));
}

/// tanh on an f32 value through one exp: |t| = 1 - 2e / (1 + e) with
/// e = exp(-2|a|) <= 1, so no overflow and, where |t| nears 1, only a small
/// term is subtracted (libdevice's tanhf is slower on the GPU).
inline Expr tanhF32(const Expr &a) {
  Expr e = exp(-2.0 * abs(a));
  Expr t = 1.0 - 2.0 * e / (1.0 + e);
  return select(a < 0.0, -t, t);
}

} // namespace kgen::ops

#endif // KGEN_OPS_ACTIVATIONS_H
