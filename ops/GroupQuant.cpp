//===- GroupQuant.cpp - 8-bit quantization with a scale per group ---------===//
#include "dsl/Registry.h"
#include "ops/Quant.h"

namespace kgen::ops {

// vLLM's per_token_group_quant_fp8 and per_token_group_quant_int8: each run
// of `group` elements of a row has the scale max(amax|x|, eps) / qmax and is
// written as x / scale, clamped to the format's range: rounded to nearest even
// into fp8 e4m3, truncated into int8 (vLLM's casts). The scales are [T,
// groups] with a row stride and a group stride (row-major: groups and 1;
// vLLM's column-major: 1 and P >= T). A group is a row program (heads(), as
// rope's heads), so --hidden is the group size.
// With `ue8m0`, each scale is rounded up to a power of two, as for
// DeepGEMM's UE8M0 scales: ceilPow2(max(s, 1e-10)), as vLLM's kernel
// (exp2(ceil(log2(max(|s|, 1e-10))))).
static Kernel groupQuant(DType dt, int64_t group, Quant8 to,
                         bool ue8m0 = false) {
  Builder b(std::string("per_token_group_quant") +
            (to == Quant8::I8 ? "_int8" : "_fp8") + (ue8m0 ? "_ue8m0" : ""));
  Len groups = b.dim("groups");
  Len scaleStride = b.dim("scale_group_stride");
  Tensor x = b.heads({{"x", groups}}, dt, group);
  DType out = to == Quant8::I8 ? DType::I8 : DType::F8E4M3;
  Tensor y = b.outputHeads({{"y", groups}}, out, group);
  // eps >= 1e-30 keeps each scale a normal float, so int8's corrected
  // division needs no subnormal guard (FastMath.cpp).
  Expr eps = b.scalar("eps", DType::F32, 1e-30);
  Expr xf = x.to(DType::F32);
  Expr scale = max(amax(abs(xf)), eps) / quantMax(to);
  if (ue8m0)
    scale = ceilPow2(max(scale, 1e-10));
  b.storeSlice(y, 0, 1, (xf / scale).to(out));
  b.outputPerHead({"scale", groups, scaleStride}, scale, x);
  return b.build();
}

KGEN_REGISTER_OP(per_token_group_quant_fp8)
    .summary("per group of --hidden elements: scale = max(amax|x|, eps) / "
             "448, y = (x / scale).to(f8e4m3); outputs y and scale [T, "
             "groups], row- or column-major (vLLM)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-10)
    .kernelForLength([](DType dt, int64_t group) {
      return groupQuant(dt, group, Quant8::F8E4M3);
    });

KGEN_REGISTER_OP(per_token_group_quant_fp8_ue8m0)
    .summary("per_token_group_quant_fp8 with each scale rounded up to a "
             "power of two (UE8M0, DeepGEMM's; vLLM's use_ue8m0)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-10)
    .kernelForLength([](DType dt, int64_t group) {
      return groupQuant(dt, group, Quant8::F8E4M3, true);
    });

KGEN_REGISTER_OP(per_token_group_quant_int8)
    .summary("per group of --hidden elements: scale = max(amax|x|, eps) / "
             "127, y = x / scale truncated to int8; outputs y and scale [T, "
             "groups], row- or column-major (vLLM)")
    .dim("group_size")
    .lengths(kGroupSizes)
    .scalar("eps", 1e-10)
    .kernelForLength([](DType dt, int64_t group) {
      return groupQuant(dt, group, Quant8::I8);
    });

} // namespace kgen::ops
