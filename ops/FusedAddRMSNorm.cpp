//===- FusedAddRMSNorm.cpp - Residual add fused with RMSNorm --------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// r = x + residual (added in the dtype) and
// weight * (r * rsqrt(mean(r^2) + eps)).to(dtype) of it: in place, as vLLM's
// and FlashInfer's fused_add_rmsnorm (residual <- r, x <- the norm), or into
// new tensors for Hugging Face decoder layers, which do not own x.
static Kernel addRMSNorm(DType dt, bool inPlace) {
  Builder b(inPlace ? "fused_add_rmsnorm" : "add_rmsnorm");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor residual = b.input("residual", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr r = x + residual;
  Expr rf = r.to(DType::F32);
  Expr y = w * (rf * rsqrt(mean(rf * rf) + eps)).to(dt);
  if (inPlace) {
    b.store(residual, r);
    b.store(x, y);
  } else {
    b.output("y", y);
    b.output("residual_out", r);
  }
  return b.build();
}

KGEN_REGISTER_OP(fused_add_rmsnorm)
    .summary("in place: residual = x + residual; x = rmsnorm(residual) * "
             "weight (vLLM, FlashInfer)")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return addRMSNorm(dt, true); });

KGEN_REGISTER_OP(add_rmsnorm)
    .summary("out of place: residual_out = x + residual; y = "
             "rmsnorm(residual_out) * weight (Hugging Face decoder layers)")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return addRMSNorm(dt, false); });

} // namespace kgen::ops
