//===- SiluAndMulGroupQuant.cpp - SwiGLU quantized per group --------------===//
#include "dsl/Registry.h"
#include "ops/Quant.h"

namespace kgen::ops {

// vLLM's silu_and_mul_per_block_quant: y = silu(a) * b of x = [a | b], all in
// f32 (silu(a) = a * (1 / (1 + exp(-a))), as vLLM's kernel rounds it), with a
// scale per group of `group` elements of y: max(min(amax|y| / qmax,
// scale_ub), least scale). The bound caps the scale here (rmsnorm_quant_group
// caps amax). y / scale goes to fp8 saturating or to int8 rounded to nearest
// even, as vLLM's ScaledQuant. As per_token_group_quant, a group is a row
// program: "gate" and "up" are x's halves, [T, groups * group] each, and the
// scales [T, groups] have a row stride and a group stride (row-major or
// transposed).
static Kernel siluAndMulGroupQuant(DType dt, int64_t group, Quant8 to) {
  Builder b(std::string("silu_and_mul_quant") + quantSuffix(to) + "_group");
  Len groups = b.dim("groups");
  Tensor gate = b.heads({{"gate", groups}}, dt, group);
  Tensor up = b.heads({{"up", groups}}, dt, group);
  DType out = to == Quant8::I8 ? DType::I8 : DType::F8E4M3;
  Tensor y = b.outputHeads({{"y", groups}}, out, group);
  Expr a = gate.to(DType::F32);
  Expr v = a * (1.0 / (1.0 + exp(-a))) * up.to(DType::F32);
  Expr scale = amax(abs(v)) / quantMax(to);
  if (to == Quant8::F8E4M3)
    scale = min(scale, b.scalar("scale_ub", DType::F32));
  scale = max(scale, leastScale(to));
  b.storeSlice(y, 0, 1,
               to == Quant8::I8 ? round(v / scale).to(out) : (v / scale).to(out));
  b.outputPerHead({"scale", groups, b.dim("scale_group_stride")}, scale, gate);
  return b.build();
}

KGEN_REGISTER_OP(silu_and_mul_quant_group)
    .summary("SwiGLU of gate and up (x's halves) in f32, then per group "
             "of --hidden elements: scale = min(amax|y| / 448, scale_ub), y "
             "/ scale as f8e4m3; outputs y and scale [T, groups], row-major "
             "or transposed (vLLM's silu_and_mul_per_block_quant)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("scale_ub", 1000.0)
    .kernelForLength([](DType dt, int64_t group) {
      return siluAndMulGroupQuant(dt, group, Quant8::F8E4M3);
    });

KGEN_REGISTER_OP(silu_and_mul_quant_int8_group)
    .summary("silu_and_mul_quant_group into int8: scale = amax|y| / 127, "
             "round(y / scale)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .kernelForLength([](DType dt, int64_t group) {
      return siluAndMulGroupQuant(dt, group, Quant8::I8);
    });

} // namespace kgen::ops
