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

// vLLM's fused_qk_norm_rope without v: qk_rmsnorm, then rope over the first
// head_dim / divisor elements of each head with cos_sin_cache [max_pos,
// rotary_dim] in q's dtype at positions[t], each product and sum rounded as
// the unfused reference (RMSNorm, then RotaryEmbedding.forward_native)
// computes; the rest of the head is normalized only. Rows are rotary_dim / 2
// long (one row length per kernel): element i carries the pair (x1[i],
// x2[i]) and the same element of each pass-through slice.
static Kernel qkNormRope(DType dt, int64_t headDim, bool neox,
                         int64_t divisor) {
  std::string name = neox ? "qk_norm_rope_neox" : "qk_norm_rope_gptj";
  if (divisor > 1)
    name += divisor == 2 ? "_half" : "_quarter";
  Builder b(name);
  Len qHeads = b.dim("q_heads"), kHeads = b.dim("k_heads");
  Tensor qk = b.heads({{"q", qHeads, b.dim("q_head_stride")},
                       {"k", kHeads, b.dim("k_head_stride")}},
                      dt, headDim);
  Tensor w = b.partVectors(qk, {"q_weight", "k_weight"}, dt);
  Tensor positions = b.perRow("positions", DType::I64, qHeads + kHeads);
  int64_t rotary = headDim / divisor, half = rotary / 2;
  Tensor cache =
      b.gather("cos_sin_cache", dt, rotary, positions, b.dim("max_pos"));
  Expr eps = b.scalar("eps", DType::F32);
  // Slices of `half` elements: the rotated pair, then the pass-through.
  std::vector<std::pair<int64_t, int64_t>> at = {
      {0, neox ? 1 : 2}, {neox ? half : 1, neox ? 1 : 2}};
  for (int64_t start = rotary; start < headDim; start += half)
    at.push_back({start, 1});
  std::vector<Expr> x;
  for (auto [start, stride] : at)
    x.push_back(qk.slice(start, half, stride).to(DType::F32));
  Expr squares = x[0] * x[0];
  for (size_t i = 1; i < x.size(); ++i)
    squares = squares + x[i] * x[i];
  Expr r = rsqrt(sum(squares) / double(headDim) + eps);
  std::vector<Expr> y;
  for (size_t i = 0; i < at.size(); ++i)
    y.push_back(w.slice(at[i].first, half, at[i].second) * (x[i] * r).to(dt));
  Expr cos = cache.slice(0, half), sin = cache.slice(half, half);
  b.storeSlice(qk, at[0].first, at[0].second, y[0] * cos - y[1] * sin);
  b.storeSlice(qk, at[1].first, at[1].second, y[1] * cos + y[0] * sin);
  for (size_t i = 2; i < at.size(); ++i)
    b.storeSlice(qk, at[i].first, 1, y[i]);
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

/// The qk_norm_rope kernel of a style rotating head_dim / divisor elements.
static std::function<Kernel(DType, int64_t)> qkNormRopeFor(bool neox,
                                                           int64_t divisor) {
  return [=](DType dt, int64_t headDim) {
    return qkNormRope(dt, headDim, neox, divisor);
  };
}

KGEN_REGISTER_OP(qk_norm_rope_neox)
    .summary("qk_rmsnorm then NeoX rope by cos_sin_cache[positions] in q's "
             "dtype, in place (vLLM's fused_qk_norm_rope, v untouched)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength(qkNormRopeFor(true, 1));

KGEN_REGISTER_OP(qk_norm_rope_gptj)
    .summary("qk_norm_rope_neox with GPT-J's interleaved pairs")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength(qkNormRopeFor(false, 1));

// vLLM's partial rotary factors 0.5 and 0.25: the cache is [max_pos,
// rotary_dim] and the rest of each head is normalized only.
KGEN_REGISTER_OP(qk_norm_rope_neox_half)
    .summary("qk_norm_rope_neox rotating the first head_dim / 2 elements")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength(qkNormRopeFor(true, 2));

KGEN_REGISTER_OP(qk_norm_rope_gptj_half)
    .summary("qk_norm_rope_gptj rotating the first head_dim / 2 elements")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength(qkNormRopeFor(false, 2));

KGEN_REGISTER_OP(qk_norm_rope_neox_quarter)
    .summary("qk_norm_rope_neox rotating the first head_dim / 4 elements")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength(qkNormRopeFor(true, 4));

KGEN_REGISTER_OP(qk_norm_rope_gptj_quarter)
    .summary("qk_norm_rope_gptj rotating the first head_dim / 4 elements")
    .dim("head_dim")
    .lengths(kHeadDims)
    .scalar("eps", 1e-6)
    .kernelForLength(qkNormRopeFor(false, 4));

} // namespace kgen::ops
