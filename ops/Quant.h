//===- Quant.h - fp8 outputs shared by the quantizing ops -------*- C++ -*-===//
#ifndef KGEN_OPS_QUANT_H
#define KGEN_OPS_QUANT_H

#include "dsl/Builder.h"

#include <optional>

namespace kgen::ops {

/// Writes f32 `y` as fp8 e4m3 "y" = (y / scale), saturating at +-448 (vLLM's
/// scaled conversion). A static scale is the kernel scalar "scale"; a dynamic
/// one is each row's amax|y| / 448, bounded above by `bound` where given and
/// at least 1 / (448 * 512) so a zero row divides by no zero, written as the
/// per-row output "scale".
inline void storeFp8(Builder &b, const Expr &y, bool dynamicScale,
                     std::optional<Expr> bound = std::nullopt) {
  const double fp8Max = 448.0;
  Expr scale;
  if (dynamicScale) {
    Expr top = bound ? min(amax(abs(y)), *bound) : amax(abs(y));
    scale = max(top / fp8Max, 1.0 / (fp8Max * 512.0));
  } else {
    scale = b.scalar("scale", DType::F32);
  }
  b.output("y", (y / scale).to(DType::F8E4M3));
  if (dynamicScale)
    b.output("scale", scale);
}

} // namespace kgen::ops

#endif // KGEN_OPS_QUANT_H
