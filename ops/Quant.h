//===- Quant.h - 8-bit outputs shared by the quantizing ops -----*- C++ -*-===//
#ifndef KGEN_OPS_QUANT_H
#define KGEN_OPS_QUANT_H

#include "dsl/Builder.h"

#include <limits>
#include <optional>
#include <vector>

namespace kgen::ops {

/// The 8-bit format of a quantizing op's output.
enum class Quant8 { F8E4M3, I8 };

/// The group sizes the per-group quantizing ops are built for (vLLM's).
inline const std::vector<int64_t> kGroupSizes = {64, 128};

/// The format's largest value (vLLM's quant_type_max).
inline double quantMax(Quant8 q) { return q == Quant8::I8 ? 127.0 : 448.0; }

/// The least dynamic scale (vLLM's min_scaling_factor), so that a zero row
/// or group divides by no zero.
inline double leastScale(Quant8 q) {
  return q == Quant8::I8 ? (double)std::numeric_limits<float>::epsilon()
                         : 1.0 / (448.0 * 512.0);
}

/// Writes f32 `y` as fp8 e4m3 "y" = (y / scale), saturating at +-448 (vLLM's
/// scaled conversion). A static scale is the kernel scalar "scale"; a dynamic
/// one is each row's amax|y| / 448, bounded above by `bound` where given and
/// at least 1 / (448 * 512) so a zero row divides by no zero, written as the
/// per-row output "scale".
inline void storeFp8(Builder &b, const Expr &y, bool dynamicScale,
                     std::optional<Expr> bound = std::nullopt) {
  Expr scale;
  if (dynamicScale) {
    Expr top = bound ? min(amax(abs(y)), *bound) : amax(abs(y));
    scale = max(top / quantMax(Quant8::F8E4M3), leastScale(Quant8::F8E4M3));
  } else {
    scale = b.scalar("scale", DType::F32);
  }
  b.output("y", (y / scale).to(DType::F8E4M3));
  if (dynamicScale)
    b.output("scale", scale);
}

/// Writes f32 `y` as int8 "y" rounded to nearest even and saturated to
/// [-128, 127] (vLLM's float_to_int8_rn). A static scale divides; a dynamic
/// one is each row's amax|y| / 127, at least FLT_EPSILON, and multiplies as
/// its f32 reciprocal (vLLM's rms_norm_dynamic_per_token_quant), written as
/// the per-row output "scale".
inline void storeInt8(Builder &b, const Expr &y, bool dynamicScale) {
  if (!dynamicScale) {
    b.output("y", round(y / b.scalar("scale", DType::F32)).to(DType::I8));
    return;
  }
  Expr scale = max(amax(abs(y)) / quantMax(Quant8::I8), leastScale(Quant8::I8));
  b.output("y", round(y * (1.0 / scale)).to(DType::I8));
  b.output("scale", scale);
}

/// Writes f32 `y` with a scale per run of `group` elements (vLLM's
/// rms_norm_per_block_quant): min(amax|y|, bound) / qmax, at least the
/// least scale storeFp8 or storeInt8 takes, applied and converted as they
/// apply it (fp8 divides, int8 multiplies by the f32 reciprocal); the
/// [rows, groups] output "scale" holds the scales, row-major or, with
/// `transposed`, its groups "scale_group_stride" apart (vLLM's transposed
/// scales: row stride 1, pitch >= rows). Row-major is a form of its own, so
/// that it pays no multiply by a pitch.
inline void storeGroupQuant(Builder &b, const Expr &y, int64_t group, Quant8 to,
                            std::optional<Expr> bound, bool transposed) {
  Groups g{group};
  Expr top = bound ? min(amax(abs(y), g), *bound) : amax(abs(y), g);
  Expr scale = max(top / quantMax(to), leastScale(to));
  b.output("y", to == Quant8::I8 ? round(y * (1.0 / scale)).to(DType::I8)
                                 : (y / scale).to(DType::F8E4M3));
  if (transposed)
    b.output("scale", scale, g, b.dim("scale_group_stride"));
  else
    b.output("scale", scale, g);
}

inline const char *quantSuffix(Quant8 q) {
  return q == Quant8::I8 ? "_int8" : "";
}

} // namespace kgen::ops

#endif // KGEN_OPS_QUANT_H
