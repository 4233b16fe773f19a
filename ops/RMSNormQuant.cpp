//===- RMSNormQuant.cpp - RMSNorm with an fp8 e4m3 output -----------------===//
#include "dsl/Registry.h"
#include "ops/Quant.h"

namespace kgen::ops {

// vLLM's rms_norm_static_fp8_quant and rms_norm_dynamic_per_token_quant: the
// rmsnorm of LlamaRMSNorm (rounded to the input dtype), divided by a scale
// and converted to fp8 e4m3 with saturation to +-448. The dynamic form picks
// each row's scale as amax(|y|) / 448 (at least 1 / (448 * 512), so a zero
// row does not divide by zero) and writes it as a [rows] f32 output.
static Kernel rmsnormQuant(DType dt, bool dynamicScale) {
  Builder b(dynamicScale ? "rmsnorm_quant_dynamic" : "rmsnorm_quant_static");
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  Expr y = (w * (xf * rsqrt(mean(xf * xf) + eps)).to(dt)).to(DType::F32);
  storeFp8(b, y, dynamicScale);
  return b.build();
}

KGEN_REGISTER_OP(rmsnorm_quant_static)
    .summary("y = (rmsnorm(x) * weight / scale).to(f8e4m3), saturating (vLLM)")
    .scalar("eps", 1e-6)
    .scalar("scale", 0.05)
    .kernel([](DType dt) { return rmsnormQuant(dt, false); });

KGEN_REGISTER_OP(rmsnorm_quant_dynamic)
    .summary("per-row scale = amax|rmsnorm(x) * weight| / 448; y = (.. / "
             "scale).to(f8e4m3); outputs y and scale (vLLM)")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return rmsnormQuant(dt, true); });

} // namespace kgen::ops
