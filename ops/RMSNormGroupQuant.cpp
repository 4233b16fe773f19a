//===- RMSNormGroupQuant.cpp - RMSNorm with a scale per group -------------===//
#include "dsl/Registry.h"
#include "ops/Quant.h"

namespace kgen::ops {

// vLLM's rms_norm_per_block_quant: the rmsnorm of rmsnorm_quant (the norm
// rounded to the dtype, then the weight's product) quantized with a scale
// per group of `group` elements of a row (ops/Quant.h's storeGroupQuant).
// With a residual, residual <- x + residual in place and the f32 sum is
// normalised, as vLLM's kernel does. fp8 scales are bounded by scale_ub.
// The rows are `groups` groups long; the scales are [T, groups], row-major
// or, in the _transposed forms, vLLM's is_scale_transposed layout.
static Kernel rmsnormGroupQuant(DType dt, int64_t group, bool residual,
                                Quant8 to, bool transposed) {
  Builder b(std::string(residual ? "fused_add_" : "") + "rmsnorm_quant" +
            quantSuffix(to) + "_group" + (transposed ? "_transposed" : ""));
  Len hidden = b.dim("groups") * group;
  Tensor x = b.input("x", dt, hidden);
  Expr sum = x.to(DType::F32);
  if (residual) {
    Tensor r = b.input("residual", dt, hidden);
    sum = sum + r.to(DType::F32);
    b.store(r, sum.to(dt));
  }
  Tensor w = b.vector("weight", dt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr y = (w * (sum * rsqrt(mean(sum * sum) + eps)).to(dt)).to(DType::F32);
  storeGroupQuant(b, y, group, to,
                  to == Quant8::I8
                      ? std::nullopt
                      : std::optional(b.scalar("scale_ub", DType::F32)),
                  transposed);
  return b.build();
}

KGEN_REGISTER_OP(rmsnorm_quant_group)
    .summary("per group of --hidden elements of y = rmsnorm(x) * weight: "
             "scale = min(amax|y|, scale_ub) / 448; outputs (y / "
             "scale).to(f8e4m3) and scale [T, groups] (vLLM)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-6)
    .scalar("scale_ub", 1000.0)
    .kernelForLength([](DType dt, int64_t group) {
      return rmsnormGroupQuant(dt, group, false, Quant8::F8E4M3, false);
    });

KGEN_REGISTER_OP(rmsnorm_quant_int8_group)
    .summary("rmsnorm_quant_group with scale = amax|y| / 127 and "
             "round(y * (1 / scale)) as int8")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-6)
    .kernelForLength([](DType dt, int64_t group) {
      return rmsnormGroupQuant(dt, group, false, Quant8::I8, false);
    });

KGEN_REGISTER_OP(fused_add_rmsnorm_quant_group)
    .summary("residual = x + residual in place; rmsnorm_quant_group of the "
             "f32 sum (vLLM)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-6)
    .scalar("scale_ub", 1000.0)
    .kernelForLength([](DType dt, int64_t group) {
      return rmsnormGroupQuant(dt, group, true, Quant8::F8E4M3, false);
    });

KGEN_REGISTER_OP(fused_add_rmsnorm_quant_int8_group)
    .summary("residual = x + residual in place; rmsnorm_quant_int8_group of "
             "the f32 sum (vLLM)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-6)
    .kernelForLength([](DType dt, int64_t group) {
      return rmsnormGroupQuant(dt, group, true, Quant8::I8, false);
    });

KGEN_REGISTER_OP(rmsnorm_quant_group_transposed)
    .summary("rmsnorm_quant_group with the scales' groups "
             "scale_group_stride apart (vLLM's is_scale_transposed: row "
             "stride 1)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-6)
    .scalar("scale_ub", 1000.0)
    .kernelForLength([](DType dt, int64_t group) {
      return rmsnormGroupQuant(dt, group, false, Quant8::F8E4M3, true);
    });

KGEN_REGISTER_OP(rmsnorm_quant_int8_group_transposed)
    .summary("rmsnorm_quant_int8_group with transposed scales")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-6)
    .kernelForLength([](DType dt, int64_t group) {
      return rmsnormGroupQuant(dt, group, false, Quant8::I8, true);
    });

KGEN_REGISTER_OP(fused_add_rmsnorm_quant_group_transposed)
    .summary("fused_add_rmsnorm_quant_group with transposed scales")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-6)
    .scalar("scale_ub", 1000.0)
    .kernelForLength([](DType dt, int64_t group) {
      return rmsnormGroupQuant(dt, group, true, Quant8::F8E4M3, true);
    });

KGEN_REGISTER_OP(fused_add_rmsnorm_quant_int8_group_transposed)
    .summary("fused_add_rmsnorm_quant_int8_group with transposed scales")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-6)
    .kernelForLength([](DType dt, int64_t group) {
      return rmsnormGroupQuant(dt, group, true, Quant8::I8, true);
    });

} // namespace kgen::ops
