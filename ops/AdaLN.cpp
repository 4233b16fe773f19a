//===- AdaLN.cpp - DiT's adaptive layer norm ------------------------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// DiT's modulate(norm(x), shift, scale) = norm(x) * (1 + scale) + shift on
// x [B*N, C], with scale and shift [B, C] picked by row / N (N tokens per
// batch item). norm is F.layer_norm without affine parameters (mean and
// biased variance in f32) or, for the rms form, x * rsqrt(mean(x^2) + eps).
// Everything is computed in f32 and rounded once, as a fused kernel
// (torch.compile's) does. Eager PyTorch rounds norm(x) and each step of the
// modulation to the dtype; when + shift cancels, one such rounding of the
// intermediate becomes an error of many ulps of the result, which a
// reference must not carry.
static Kernel adaLN(DType dt, bool rms) {
  Builder b(rms ? "adaln_rmsnorm" : "adaln");
  Len hidden = b.dim("hidden");
  Len n = b.dim("tokens_per_batch");
  Tensor x = b.input("x", dt, hidden);
  Tensor scale = b.grouped("scale", dt, hidden, n);
  Tensor shift = b.grouped("shift", dt, hidden, n);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  Expr normed;
  if (rms) {
    normed = xf * rsqrt(mean(xf * xf) + eps);
  } else {
    Expr centered = xf - mean(xf);
    normed = centered * rsqrt(mean(centered * centered) + eps);
  }
  b.output(
      "y",
      (normed * (1.0 + scale.to(DType::F32)) + shift.to(DType::F32)).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(adaln)
    .summary("DiT: y = layer_norm(x) * (1 + scale[row / N]) + shift[row / N]")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return adaLN(dt, false); });

KGEN_REGISTER_OP(adaln_rmsnorm)
    .summary("y = rmsnorm(x) * (1 + scale[row / N]) + shift[row / N]")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return adaLN(dt, true); });

} // namespace kgen::ops
