//===- Rope.cpp - Rotary position embedding -------------------------------===//
#include "dsl/Registry.h"

#include <optional>

namespace kgen::ops {

enum class RopeStyle { NeoX, GPTJ };
struct RopeOptions {
  std::string name;
  RopeStyle style = RopeStyle::NeoX;
  int64_t headDim = 128;
  /// Even, <= headDim; 0: a run-time dim, rotary_pairs = rotary_dim / 2.
  int64_t rotaryDim = 128;
  DType positions = DType::I64;
  std::optional<DType> cache = DType::F32; ///< nullopt: q's dtype
  bool key = true; ///< false: q only (vLLM's rotary_embedding with key None)
};

// vLLM's rotary_embedding, in place on q [T, q_heads, head_dim] and
// k [T, k_heads, head_dim] (views of a fused qkv, heads padded inside a row:
// token and head strides are run-time arguments) in one launch, one row
// program per (token, head); or on q alone.
// Row t of cos_sin_cache [max_pos, rotary_dim] at positions[t] holds cos in
// its first half and sin in its second. The first rotary_dim elements of
// each head rotate; the rest pass through untouched.
//   NeoX (rotate-half): x1 = x[:r/2], x2 = x[r/2:r]
//   GPT-J (interleaved): x1 = x[0:r:2], x2 = x[1:r:2]
//   x1' = x1 * cos - x2 * sin,  x2' = x2 * cos + x1 * sin
// With an f32 cache it is computed in f32 and rounded once, as FlashInfer's
// kernels (which take an f32 cache) do. With the cache in q's dtype, vLLM's
// call, each product and the sum round to the dtype, as vLLM's kernel and
// its forward_native reference do (docs/rounding.md).
static Kernel rope(DType dt, const RopeOptions &o) {
  Builder b(o.name);
  Len qHeads = b.dim("q_heads");
  std::vector<HeadsPart> parts = {{"q", qHeads, b.dim("q_head_stride")}};
  if (o.key)
    parts.push_back({"k", b.dim("k_heads"), b.dim("k_head_stride")});
  Len maxPos = b.dim("max_pos");
  Tensor qk = b.heads(parts, dt, o.headDim);
  Len heads = o.key ? qHeads + parts[1].count : qHeads;
  Tensor positions = b.perRow("positions", o.positions, heads);
  Len half =
      o.rotaryDim ? Len(o.rotaryDim / 2) : b.dim("rotary_pairs", o.headDim / 2);
  Tensor cache = b.gather("cos_sin_cache", o.cache.value_or(dt), half * 2,
                          positions, maxPos);
  bool neox = o.style == RopeStyle::NeoX;
  Len start2 = neox ? half : Len(1);
  int64_t stride = neox ? 1 : 2;
  DType work = o.cache ? DType::F32 : dt;
  Expr cos = cache.slice(0, half).to(work);
  Expr sin = cache.slice(half, half).to(work);
  Expr x1 = qk.slice(0, half, stride).to(work);
  Expr x2 = qk.slice(start2, half, stride).to(work);
  b.storeSlice(qk, 0, stride, (x1 * cos - x2 * sin).to(dt));
  b.storeSlice(qk, start2, stride, (x2 * cos + x1 * sin).to(dt));
  return b.build();
}

// Hugging Face's apply_rotary_pos_emb (rotate-half), out of place:
// q_out = q * cos + rotate_half(q) * sin with cos, sin [T, head_dim] (both
// halves equal, as HF's rotary embedding makes them); same for k. In q's
// dtype, each product and the sum rounded, as HF's eager module computes.
static Kernel ropeHF(DType dt, int64_t headDim) {
  Builder b("rope_hf");
  Len qHeads = b.dim("q_heads"), kHeads = b.dim("k_heads");
  Tensor qk = b.heads({{"q", qHeads}, {"k", kHeads}}, dt, headDim);
  Tensor cos = b.grouped("cos", dt, headDim, qHeads + kHeads);
  Tensor sin = b.grouped("sin", dt, headDim, qHeads + kHeads);
  Tensor out =
      b.outputHeads({{"q_out", qHeads}, {"k_out", kHeads}}, dt, headDim);
  int64_t half = headDim / 2;
  Expr x1 = qk.slice(0, half), x2 = qk.slice(half, half);
  b.storeSlice(out, 0, 1, x1 * cos.slice(0, half) - x2 * sin.slice(0, half));
  b.storeSlice(out, half, 1,
               x2 * cos.slice(half, half) + x1 * sin.slice(half, half));
  return b.build();
}

/// The rope kernel `name` for a head_dim, rotating head_dim / rotaryDivisor
/// elements of each head (rotaryDivisor 0: rotary_pairs, a run-time dim).
static std::function<Kernel(DType, int64_t)>
ropeFor(std::string name, RopeStyle style, int64_t rotaryDivisor,
        DType positions, std::optional<DType> cache, bool key = true) {
  return [=](DType dt, int64_t headDim) {
    int64_t rotaryDim = rotaryDivisor ? headDim / rotaryDivisor : 0;
    return rope(dt, RopeOptions{name, style, headDim, rotaryDim, positions,
                                cache, key});
  };
}

static const std::vector<int64_t> kHeadDims = {64,  80,  96,  112, 120,
                                               128, 192, 256, 512};

KGEN_REGISTER_OP(rope_neox)
    .summary("in place on q and k heads: NeoX rotate-half by cos_sin_cache"
             "[positions] (f32 cache, i64 positions); --hidden is head_dim")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_neox", RopeStyle::NeoX, 1, DType::I64,
                             DType::F32));

KGEN_REGISTER_OP(rope_gptj)
    .summary("rope_neox with GPT-J's interleaved pairs")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_gptj", RopeStyle::GPTJ, 1, DType::I64,
                             DType::F32));

KGEN_REGISTER_OP(rope_neox_q)
    .summary("rope_neox on q alone (no k)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_neox_q", RopeStyle::NeoX, 1, DType::I64,
                             DType::F32, /*key=*/false));

KGEN_REGISTER_OP(rope_gptj_q)
    .summary("rope_gptj on q alone (no k)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_gptj_q", RopeStyle::GPTJ, 1, DType::I64,
                             DType::F32, /*key=*/false));

// vLLM's own call: its kernel reads cos_sin_cache in q's dtype.
KGEN_REGISTER_OP(rope_neox_cache16)
    .summary("rope_neox with the cache in q's dtype (f16 or bf16), "
             "rounded as vLLM's kernel")
    .dim("head_dim")
    .lengths(kHeadDims)
    .dtypes({DType::F16, DType::BF16})
    .kernelForLength(ropeFor("rope_neox_cache16", RopeStyle::NeoX, 1,
                             DType::I64, std::nullopt));

KGEN_REGISTER_OP(rope_gptj_cache16)
    .summary("rope_gptj with the cache in q's dtype (f16 or bf16), "
             "rounded as vLLM's kernel")
    .dim("head_dim")
    .lengths(kHeadDims)
    .dtypes({DType::F16, DType::BF16})
    .kernelForLength(ropeFor("rope_gptj_cache16", RopeStyle::GPTJ, 1,
                             DType::I64, std::nullopt));

KGEN_REGISTER_OP(rope_neox_q_cache16)
    .summary("rope_neox_q with the cache in q's dtype (f16 or bf16), "
             "rounded as vLLM's kernel")
    .dim("head_dim")
    .lengths(kHeadDims)
    .dtypes({DType::F16, DType::BF16})
    .kernelForLength(ropeFor("rope_neox_q_cache16", RopeStyle::NeoX, 1,
                             DType::I64, std::nullopt, /*key=*/false));

KGEN_REGISTER_OP(rope_gptj_q_cache16)
    .summary("rope_gptj_q with the cache in q's dtype (f16 or bf16), "
             "rounded as vLLM's kernel")
    .dim("head_dim")
    .lengths(kHeadDims)
    .dtypes({DType::F16, DType::BF16})
    .kernelForLength(ropeFor("rope_gptj_q_cache16", RopeStyle::GPTJ, 1,
                             DType::I64, std::nullopt, /*key=*/false));

KGEN_REGISTER_OP(rope_neox_partial)
    .summary("rope_neox rotating the first head_dim / 2 elements of each "
             "head, i32 positions, cache in q's dtype (rounded as vLLM's)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_neox_partial", RopeStyle::NeoX, 2,
                             DType::I32, std::nullopt));

KGEN_REGISTER_OP(rope_gptj_partial)
    .summary("rope_gptj rotating the first head_dim / 2 elements of each "
             "head, i32 positions, cache in q's dtype (rounded as vLLM's)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_gptj_partial", RopeStyle::GPTJ, 2,
                             DType::I32, std::nullopt));

// Any even rotary_dim up to head_dim, given at launch as rotary_pairs =
// rotary_dim / 2 (partial factors 0.25 to 0.75, rotary_dim 32 of 256).
KGEN_REGISTER_OP(rope_neox_rotary)
    .summary("rope_neox rotating the first 2 * rotary_pairs elements of each "
             "head (rotary_pairs <= head_dim / 2, a run-time dim)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_neox_rotary", RopeStyle::NeoX, 0, DType::I64,
                             DType::F32));

KGEN_REGISTER_OP(rope_gptj_rotary)
    .summary("rope_gptj rotating the first 2 * rotary_pairs elements of each "
             "head (rotary_pairs <= head_dim / 2, a run-time dim)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_gptj_rotary", RopeStyle::GPTJ, 0, DType::I64,
                             DType::F32));

KGEN_REGISTER_OP(rope_neox_rotary_cache16)
    .summary("rope_neox_rotary with the cache in q's dtype (f16 or bf16), "
             "rounded as vLLM's kernel")
    .dim("head_dim")
    .lengths(kHeadDims)
    .dtypes({DType::F16, DType::BF16})
    .kernelForLength(ropeFor("rope_neox_rotary_cache16", RopeStyle::NeoX, 0,
                             DType::I64, std::nullopt));

KGEN_REGISTER_OP(rope_gptj_rotary_cache16)
    .summary("rope_gptj_rotary with the cache in q's dtype (f16 or bf16), "
             "rounded as vLLM's kernel")
    .dim("head_dim")
    .lengths(kHeadDims)
    .dtypes({DType::F16, DType::BF16})
    .kernelForLength(ropeFor("rope_gptj_rotary_cache16", RopeStyle::GPTJ, 0,
                             DType::I64, std::nullopt));

// vLLM's rotary_embedding with key None and a cache narrower than a head.
KGEN_REGISTER_OP(rope_neox_rotary_q)
    .summary("rope_neox_rotary on q alone (no k)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_neox_rotary_q", RopeStyle::NeoX, 0,
                             DType::I64, DType::F32, /*key=*/false));

KGEN_REGISTER_OP(rope_gptj_rotary_q)
    .summary("rope_gptj_rotary on q alone (no k)")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeFor("rope_gptj_rotary_q", RopeStyle::GPTJ, 0,
                             DType::I64, DType::F32, /*key=*/false));

KGEN_REGISTER_OP(rope_neox_rotary_q_cache16)
    .summary("rope_neox_rotary_q with the cache in q's dtype (f16 or bf16), "
             "rounded as vLLM's kernel")
    .dim("head_dim")
    .lengths(kHeadDims)
    .dtypes({DType::F16, DType::BF16})
    .kernelForLength(ropeFor("rope_neox_rotary_q_cache16", RopeStyle::NeoX, 0,
                             DType::I64, std::nullopt, /*key=*/false));

KGEN_REGISTER_OP(rope_gptj_rotary_q_cache16)
    .summary("rope_gptj_rotary_q with the cache in q's dtype (f16 or bf16), "
             "rounded as vLLM's kernel")
    .dim("head_dim")
    .lengths(kHeadDims)
    .dtypes({DType::F16, DType::BF16})
    .kernelForLength(ropeFor("rope_gptj_rotary_q_cache16", RopeStyle::GPTJ, 0,
                             DType::I64, std::nullopt, /*key=*/false));

KGEN_REGISTER_OP(rope_hf)
    .summary("Hugging Face apply_rotary_pos_emb out of place: q_out, k_out = "
             "x * cos + rotate_half(x) * sin, cos and sin [T, head_dim]")
    .dim("head_dim")
    .lengths(kHeadDims)
    .kernelForLength(ropeHF);

} // namespace kgen::ops
