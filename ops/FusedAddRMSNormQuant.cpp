//===- FusedAddRMSNormQuant.cpp - Residual add, RMSNorm, fp8 or int8 ------===//
#include "dsl/Registry.h"
#include "ops/Quant.h"

namespace kgen::ops {

// vLLM's fused_add_rms_norm_static_fp8_quant and, with a residual,
// rms_norm_dynamic_per_token_quant: residual <- x + residual in place, then
// rmsnorm * weight (the norm rounded to the dtype, then the product) divided
// by a scale into fp8 e4m3, saturating. The two round the sum differently,
// as vLLM does: the static form normalises the sum rounded to the dtype, the
// dynamic one the f32 sum. The dynamic scale is min(amax|y|, scale_ub) / 448,
// at least 1 / (448 * 512), written per row. The int8 forms round as vLLM's
// int8 path does (ops/Quant.h) and have no scale_ub, as vLLM's.
static Kernel addRMSNormQuant(DType dt, bool dynamicScale, Quant8 to) {
  Builder b(std::string("fused_add_rmsnorm_quant") + quantSuffix(to) +
            (dynamicScale ? "_dynamic" : "_static"));
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor residual = b.input("residual", dt, hidden);
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr sum = dynamicScale ? x.to(DType::F32) + residual.to(DType::F32)
                          : (x + residual).to(DType::F32);
  b.store(residual, sum.to(dt));
  Expr y = (w * (sum * rsqrt(mean(sum * sum) + eps)).to(dt)).to(DType::F32);
  if (to == Quant8::I8)
    storeInt8(b, y, dynamicScale);
  else
    storeFp8(b, y, dynamicScale,
             dynamicScale ? std::optional(b.scalar("scale_ub", DType::F32))
                          : std::nullopt);
  return b.build();
}

KGEN_REGISTER_OP(fused_add_rmsnorm_quant_static)
    .summary("residual = x + residual in place; y = (rmsnorm(residual) * "
             "weight / scale).to(f8e4m3), saturating (vLLM)")
    .scalar("eps", 1e-6)
    .scalar("scale", 0.05)
    .kernel([](DType dt) {
      return addRMSNormQuant(dt, false, Quant8::F8E4M3);
    });

KGEN_REGISTER_OP(fused_add_rmsnorm_quant_dynamic)
    .summary("residual = x + residual in place; per-row scale = "
             "min(amax|y|, scale_ub) / 448 of y = rmsnorm(x + residual, in "
             "f32) * weight; outputs (y / scale).to(f8e4m3) and scale (vLLM)")
    .scalar("eps", 1e-6)
    .scalar("scale_ub", 1000.0)
    .kernel([](DType dt) { return addRMSNormQuant(dt, true, Quant8::F8E4M3); });

KGEN_REGISTER_OP(fused_add_rmsnorm_quant_int8_static)
    .summary("fused_add_rmsnorm_quant_static with y = round(.. / scale) as "
             "int8, saturating")
    .scalar("eps", 1e-6)
    .scalar("scale", 0.05)
    .kernel([](DType dt) { return addRMSNormQuant(dt, false, Quant8::I8); });

KGEN_REGISTER_OP(fused_add_rmsnorm_quant_int8_dynamic)
    .summary("residual = x + residual in place; per-row scale = amax|y| / "
             "127 of y = rmsnorm(x + residual, in f32) * weight; outputs "
             "round(y * (1 / scale)) as int8 and scale (vLLM)")
    .scalar("eps", 1e-6)
    .kernel([](DType dt) { return addRMSNormQuant(dt, true, Quant8::I8); });

} // namespace kgen::ops
