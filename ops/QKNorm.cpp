//===- QKNorm.cpp - RMSNorm of q and k heads, with or without rope --------===//
#include "dsl/Registry.h"

namespace kgen::ops {

// Qwen3's q_norm and k_norm in one launch: LlamaRMSNorm over each head of q
// [T, q_heads, head_dim] and k [T, k_heads, head_dim], in place, with q's
// heads scaled by q_weight and k's by k_weight (heads padded inside a row as
// for rope: token and head strides are run-time arguments).
static Kernel qkRmsnorm(DType dt, int64_t headDim) {
  Builder b("qk_rmsnorm");
  Tensor qk = b.heads({{"q", b.dim("q_heads"), b.dim("q_head_stride")},
                       {"k", b.dim("k_heads"), b.dim("k_head_stride")}},
                      dt, headDim);
  Tensor w = b.partVectors(qk, {"q_weight", "k_weight"}, dt);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = qk.to(DType::F32);
  b.store(qk, w * (xf * rsqrt(mean(xf * xf) + eps)).to(dt));
  return b.build();
}

// vLLM's fused_qk_norm_rope without v: qk_rmsnorm, then rope over the whole
// head with cos_sin_cache [max_pos, head_dim] in q's dtype at positions[t],
// each product and sum rounded as the unfused reference (RMSNorm, then
// RotaryEmbedding.forward_native) computes. The rows are head_dim / 2 long:
// element i carries the pair (x1[i], x2[i]) and the squares of both.
static Kernel qkNormRope(DType dt, int64_t headDim, bool neox) {
  Builder b(neox ? "qk_norm_rope_neox" : "qk_norm_rope_gptj");
  Len qHeads = b.dim("q_heads"), kHeads = b.dim("k_heads");
  Tensor qk = b.heads({{"q", qHeads, b.dim("q_head_stride")},
                       {"k", kHeads, b.dim("k_head_stride")}},
                      dt, headDim);
  Tensor w = b.partVectors(qk, {"q_weight", "k_weight"}, dt);
  Tensor positions = b.perRow("positions", DType::I64, qHeads + kHeads);
  Tensor cache =
      b.gather("cos_sin_cache", dt, headDim, positions, b.dim("max_pos"));
  Expr eps = b.scalar("eps", DType::F32);
  int64_t half = headDim / 2;
  int64_t start2 = neox ? half : 1, stride = neox ? 1 : 2;
  Expr x1 = qk.slice(0, half, stride).to(DType::F32);
  Expr x2 = qk.slice(start2, half, stride).to(DType::F32);
  Expr r = rsqrt(sum(x1 * x1 + x2 * x2) / double(headDim) + eps);
  Expr y1 = w.slice(0, half, stride) * (x1 * r).to(dt);
  Expr y2 = w.slice(start2, half, stride) * (x2 * r).to(dt);
  Expr cos = cache.slice(0, half), sin = cache.slice(half, half);
  b.storeSlice(qk, 0, stride, y1 * cos - y2 * sin);
  b.storeSlice(qk, start2, stride, y2 * cos + y1 * sin);
  return b.build();
}

static const std::vector<int64_t> kHeadDims = {64,  80,  96,  112, 120,
                                               128, 192, 256, 512};

KGEN_REGISTER_OP(qk_rmsnorm)
    .summary("in place on q and k heads: LlamaRMSNorm of each head, scaled "
             "by q_weight or k_weight (Qwen3's q_norm and k_norm in one "
             "launch); --hidden is head_dim")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength(qkRmsnorm);

KGEN_REGISTER_OP(qk_norm_rope_neox)
    .summary("qk_rmsnorm then NeoX rope by cos_sin_cache[positions] in q's "
             "dtype, in place (vLLM's fused_qk_norm_rope, v untouched)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength([](DType dt, int64_t headDim) {
      return qkNormRope(dt, headDim, true);
    });

KGEN_REGISTER_OP(qk_norm_rope_gptj)
    .summary("qk_norm_rope_neox with GPT-J's interleaved pairs")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength([](DType dt, int64_t headDim) {
      return qkNormRope(dt, headDim, false);
    });

} // namespace kgen::ops
