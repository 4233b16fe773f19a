//===- RMSNormQuant.cpp - RMSNorm with an fp8 e4m3 or int8 output ---------===//
#include "dsl/Registry.h"
#include "ops/Quant.h"

namespace kgen::ops {

// vLLM's rms_norm_static_fp8_quant and rms_norm_dynamic_per_token_quant: the
// rmsnorm of LlamaRMSNorm (rounded to the input dtype), divided by a scale
// and converted to fp8 e4m3 with saturation to +-448. The dynamic form picks
// each row's scale as amax(|y|) / 448 (at least 1 / (448 * 512), so a zero
// row does not divide by zero) and writes it as a [rows] f32 output. The
// int8 forms round as vLLM's int8 path does (ops/Quant.h).
static Kernel rmsnormQuant(DType dt, bool dynamicScale, Quant8 to) {
  Builder b(std::string("rmsnorm_quant") + quantSuffix(to) +
            (dynamicScale ? "_dynamic" : "_static"));
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  Expr y = (w * (xf * rsqrt(mean(xf * xf) + eps)).to(dt)).to(DType::F32);
  if (to == Quant8::I8)
    storeInt8(b, y, dynamicScale);
  else
    storeFp8(b, y, dynamicScale);
  return b.build();
}

KGEN_REGISTER_OP(rmsnorm_quant_static)
    .summary("y = (rmsnorm(x) * weight / scale).to(f8e4m3), saturating (vLLM)")
    .scalar("eps", 1e-6)
    .scalar("scale", 0.05)
    .kernel([](DType dt) { return rmsnormQuant(dt, false, Quant8::F8E4M3); });

KGEN_REGISTER_OP(rmsnorm_quant_dynamic)
    .summary("per-row scale = amax|rmsnorm(x) * weight| / 448; y = (.. / "
             "scale).to(f8e4m3); outputs y and scale (vLLM)")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return rmsnormQuant(dt, true, Quant8::F8E4M3); });

KGEN_REGISTER_OP(rmsnorm_quant_int8_static)
    .summary("y = round(rmsnorm(x) * weight / scale) as int8, saturating "
             "(vLLM's rms_norm then static_scaled_int8_quant)")
    .scalar("eps", 1e-6)
    .scalar("scale", 0.05)
    .kernel([](DType dt) { return rmsnormQuant(dt, false, Quant8::I8); });

KGEN_REGISTER_OP(rmsnorm_quant_int8_dynamic)
    .summary("per-row scale = amax|rmsnorm(x) * weight| / 127; y = round(.. "
             "* (1 / scale)) as int8; outputs y and scale (vLLM)")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return rmsnormQuant(dt, true, Quant8::I8); });

} // namespace kgen::ops
