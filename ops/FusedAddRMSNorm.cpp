//===- FusedAddRMSNorm.cpp - Residual add fused with RMSNorm --------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// vLLM's and FlashInfer's fused_add_rmsnorm, both in place: residual becomes
// x + residual (added in the dtype), and x becomes
// weight * (r * rsqrt(mean(r^2) + eps)).to(dtype) of that new residual.
static Kernel fusedAddRMSNorm(DType dt) {
  Builder b("fused_add_rmsnorm");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor residual = b.input("residual", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr r = x + residual;
  Expr rf = r.to(DType::F32);
  b.store(residual, r);
  b.store(x, w * (rf * rsqrt(mean(rf * rf) + eps)).to(dt));
  return b.build();
}

KGEN_REGISTER_OP(fused_add_rmsnorm)
    .summary("in place: residual = x + residual; x = rmsnorm(residual) * "
             "weight (vLLM, FlashInfer)")
    .scalar("eps", 1e-6)
    .kernel(fusedAddRMSNorm);

// Hugging Face's decoder layer out of place, for callers that do not own the
// residual: residual_out = x + residual (in the dtype) and y its rmsnorm, as
// fused_add_rmsnorm computes them.
static Kernel addRMSNorm(DType dt) {
  Builder b("add_rmsnorm");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor residual = b.input("residual", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr r = x + residual;
  Expr rf = r.to(DType::F32);
  b.output("y", w * (rf * rsqrt(mean(rf * rf) + eps)).to(dt));
  b.output("residual_out", r);
  return b.build();
}

KGEN_REGISTER_OP(add_rmsnorm)
    .summary("out of place: residual_out = x + residual; y = "
             "rmsnorm(residual_out) * weight (Hugging Face decoder layers)")
    .scalar("eps", 1e-6)
    .kernel(addRMSNorm);

} // namespace kgen::ops
