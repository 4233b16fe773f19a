"""kgen's ops with Python defaults: thin calls of torch.ops.kgen.*.

Layouts: rows are the last dim (rope: the last two, heads x head_dim) and may
have any leading dims. Inputs whose leading dims do not collapse into one row
stride are copied; tensors written in place (fused_add_rmsnorm's x and
residual, rope_neox's q and k) are refused instead. A last dim with a stride
other than 1 is copied for inputs and refused in place. Float inputs are
float32, float16 or bfloat16; weights take the input's dtype, and the norms'
(rmsnorm, gemma_rmsnorm, layernorm, the fused adds) may be float32 by float16
or bfloat16 rows; outputs keep the rows' dtype.
"""
import torch

__all__ = [
    "rmsnorm", "gemma_rmsnorm", "layernorm", "fused_add_rmsnorm", "add_rmsnorm",
    "gemma_fused_add_rmsnorm", "rmsnorm_flashinfer",
    "fused_add_rmsnorm_flashinfer", "gemma_fused_add_rmsnorm_flashinfer",
    "rmsnorm_quant_static", "rmsnorm_quant_dynamic",
    "fused_add_rmsnorm_quant_static", "fused_add_rmsnorm_quant_dynamic",
    "rmsnorm_quant_int8_static", "rmsnorm_quant_int8_dynamic",
    "fused_add_rmsnorm_quant_int8_static",
    "fused_add_rmsnorm_quant_int8_dynamic", "quant_int8_static",
    "quant_int8_dynamic", "per_token_group_quant_fp8",
    "per_token_group_quant_int8", "rmsnorm_quant_group",
    "rmsnorm_quant_int8_group", "fused_add_rmsnorm_quant_group",
    "fused_add_rmsnorm_quant_int8_group", "adaln", "adaln_rmsnorm",
    "rmsnorm_noweight", "silu", "gelu", "gelu_tanh", "gelu_quick", "gelu_new",
    "gelu_fast", "softmax", "silu_and_mul", "mul_and_silu", "gelu_and_mul",
    "gelu_tanh_and_mul", "fatrelu_and_mul", "swigluoai_and_mul",
    "silu_and_mul_quant", "silu_and_mul_quant_group",
    "silu_and_mul_quant_int8_group", "rope_neox", "rope_gptj",
    "rope_neox_partial", "rope_gptj_partial", "rope_hf", "qk_rmsnorm",
    "qk_norm_rope_neox", "qk_norm_rope_gptj",
]

_ops = torch.ops.kgen


def rmsnorm(x, weight, eps=1e-6):
    """weight * (x * rsqrt(mean(x^2) + eps)).to(dtype), as Llama's RMSNorm."""
    return _ops.rmsnorm(x, weight, eps)


def gemma_rmsnorm(x, weight, eps=1e-6):
    """(x * rsqrt(mean(x^2) + eps) * (1 + weight)).to(dtype), in f32."""
    return _ops.gemma_rmsnorm(x, weight, eps)


def layernorm(x, weight, bias=None, eps=1e-5):
    """F.layer_norm over the last dim, in f32."""
    return _ops.layernorm(x, weight, bias, eps)


def fused_add_rmsnorm(x, residual, weight, eps=1e-6):
    """In place: residual += x; x = rmsnorm(residual) * weight; weight None:
    x = (residual * rsqrt(mean(residual^2) + eps)).to(dtype), as vLLM's."""
    _ops.fused_add_rmsnorm(x, residual, weight, eps)


def gemma_fused_add_rmsnorm(x, residual, weight, eps=1e-6):
    """In place: residual += x; x = gemma_rmsnorm(residual, weight) (the sum
    rounded to the dtype, then normalised in f32), as Hugging Face's Gemma
    layers round (FlashInfer's: gemma_fused_add_rmsnorm_flashinfer)."""
    _ops.gemma_fused_add_rmsnorm(x, residual, weight, eps)


def rmsnorm_flashinfer(x, weight, eps=1e-6):
    """rmsnorm as FlashInfer rounds it: x * rsqrt(mean(x^2) + eps) * weight
    in f32, rounded once (docs/rounding.md)."""
    return _ops.rmsnorm_flashinfer(x, weight, eps)


def fused_add_rmsnorm_flashinfer(x, residual, weight, eps=1e-6):
    """fused_add_rmsnorm as FlashInfer rounds it: the norm of the f32 sum
    (residual gets the sum rounded), times the weight in f32, rounded once."""
    _ops.fused_add_rmsnorm_flashinfer(x, residual, weight, eps)


def gemma_fused_add_rmsnorm_flashinfer(x, residual, weight, eps=1e-6):
    """gemma_fused_add_rmsnorm as FlashInfer rounds it: the norm of the f32
    sum."""
    _ops.gemma_fused_add_rmsnorm_flashinfer(x, residual, weight, eps)


def add_rmsnorm(x, residual, weight, eps=1e-6):
    """Out of place: (rmsnorm(x + residual) * weight, x + residual), the sum
    rounded to the dtype first, as Hugging Face's decoder layers do."""
    return _ops.add_rmsnorm(x, residual, weight, eps)


def rmsnorm_quant_static(x, weight, scale, eps=1e-6):
    """(rmsnorm(x) * weight / scale).to(float8_e4m3fn), saturating."""
    return _ops.rmsnorm_quant_static(x, weight, scale, eps)


def rmsnorm_quant_dynamic(x, weight, eps=1e-6):
    """fp8 rows and their f32 scales [..., 1]: amax|rmsnorm(x) * weight| / 448."""
    return _ops.rmsnorm_quant_dynamic(x, weight, eps)


def fused_add_rmsnorm_quant_static(x, residual, weight, scale, eps=1e-6):
    """residual += x in place (rounded to the dtype); returns
    (rmsnorm(residual) * weight / scale).to(float8_e4m3fn), saturating
    (vLLM's fused_add_rms_norm_static_fp8_quant)."""
    return _ops.fused_add_rmsnorm_quant_static(x, residual, weight, scale, eps)


def fused_add_rmsnorm_quant_dynamic(x, residual, weight, scale_ub=None,
                                    eps=1e-6):
    """residual += x in place; fp8 rows of rmsnorm(x + residual) * weight
    (the sum normalised in f32) and their f32 scales [..., 1]:
    min(amax, scale_ub) / 448 (vLLM's rms_norm_dynamic_per_token_quant with
    a residual)."""
    return _ops.fused_add_rmsnorm_quant_dynamic(x, residual, weight, scale_ub,
                                                eps)


def rmsnorm_quant_int8_static(x, weight, scale, eps=1e-6):
    """round(rmsnorm(x) * weight / scale) as int8, ties to even, saturating
    (vLLM's rms_norm, then static_scaled_int8_quant)."""
    return _ops.rmsnorm_quant_int8_static(x, weight, scale, eps)


def rmsnorm_quant_int8_dynamic(x, weight, eps=1e-6):
    """int8 rows of y = rmsnorm(x) * weight and their f32 scales [..., 1]:
    s = amax|y| / 127 (at least FLT_EPSILON), rows round(y * (1 / s))
    (vLLM's rms_norm_dynamic_per_token_quant with an int8 output)."""
    return _ops.rmsnorm_quant_int8_dynamic(x, weight, eps)


def fused_add_rmsnorm_quant_int8_static(x, residual, weight, scale, eps=1e-6):
    """fused_add_rmsnorm_quant_static with int8 rows: round(.. / scale)."""
    return _ops.fused_add_rmsnorm_quant_int8_static(x, residual, weight, scale,
                                                    eps)


def fused_add_rmsnorm_quant_int8_dynamic(x, residual, weight, eps=1e-6):
    """residual += x in place; int8 rows of rmsnorm(x + residual) * weight
    (the sum normalised in f32) and their scales, as
    rmsnorm_quant_int8_dynamic (vLLM has no scale_ub for int8)."""
    return _ops.fused_add_rmsnorm_quant_int8_dynamic(x, residual, weight, eps)


def quant_int8_static(x, scale):
    """round(x / scale) as int8, ties to even, saturating (vLLM's
    static_scaled_int8_quant without a zero point)."""
    return _ops.quant_int8_static(x, scale)


def quant_int8_dynamic(x):
    """int8 rows and their f32 scales [..., 1]: s = amax|x| / 127, rows
    round(x * (127 / amax)) (vLLM's dynamic_scaled_int8_quant, symmetric)."""
    return _ops.quant_int8_dynamic(x)


def per_token_group_quant_fp8(x, group_size, eps=1e-10, use_ue8m0=False,
                              column_major_scales=False,
                              tma_aligned_scales=False):
    """vLLM's per_token_group_quant_fp8: per group of group_size (64 or 128)
    elements s = max(amax|x|, eps) / 448 and y = (x / s).to(float8_e4m3fn);
    returns y and the f32 scales [..., M, hidden / group_size], row-major or,
    with column_major_scales, each [M, groups] matrix column-major (columns
    of M floats; tma_aligned_scales: M rounded up to 4, else ignored), as
    vLLM lays them out for DeepGEMM (the kernel writes them; a batch of
    matrices [..., M, H] takes one copy of row-major scales). With
    use_ue8m0, s is rounded up to a power of two (DeepGEMM's UE8M0 scales:
    2^ceil(log2(max(s, 1e-10))), exactly), as vLLM's use_ue8m0."""
    return _ops.per_token_group_quant_fp8(x, group_size, eps, use_ue8m0,
                                          column_major_scales,
                                          tma_aligned_scales)


def per_token_group_quant_int8(x, group_size, eps=1e-10):
    """per_token_group_quant_fp8 into int8: s = max(amax|x|, eps) / 127 and
    x / s truncated, as vLLM's per_token_group_quant_int8."""
    return _ops.per_token_group_quant_int8(x, group_size, eps)


def rmsnorm_quant_group(x, weight, group_size, scale_ub=None, eps=1e-6,
                        is_scale_transposed=False):
    """vLLM's rms_norm_per_block_quant into fp8: y = rmsnorm(x) * weight, per
    group of group_size (64 or 128) elements s = max(min(amax|y|, scale_ub)
    / 448, 1 / (448 * 512)) and (y / s).to(float8_e4m3fn); returns y
    and the f32 scales [..., hidden / group_size], row-major or, with
    is_scale_transposed, over a [groups, tokens] buffer (vLLM's)."""
    return _ops.rmsnorm_quant_group(x, weight, group_size, scale_ub, eps,
                                    is_scale_transposed)


def rmsnorm_quant_int8_group(x, weight, group_size, eps=1e-6,
                             is_scale_transposed=False):
    """rmsnorm_quant_group into int8: s = max(amax|y| / 127, FLT_EPSILON),
    round(y * (1 / s)) saturating."""
    return _ops.rmsnorm_quant_int8_group(x, weight, group_size, eps,
                                         is_scale_transposed)


def fused_add_rmsnorm_quant_group(x, residual, weight, group_size,
                                  scale_ub=None, eps=1e-6,
                                  is_scale_transposed=False):
    """residual += x in place, then rmsnorm_quant_group of the f32 sum (as
    vLLM's kernel with a residual)."""
    return _ops.fused_add_rmsnorm_quant_group(x, residual, weight, group_size,
                                              scale_ub, eps,
                                              is_scale_transposed)


def fused_add_rmsnorm_quant_int8_group(x, residual, weight, group_size,
                                       eps=1e-6, is_scale_transposed=False):
    """residual += x in place, then rmsnorm_quant_int8_group of the f32 sum."""
    return _ops.fused_add_rmsnorm_quant_int8_group(x, residual, weight,
                                                   group_size, eps,
                                                   is_scale_transposed)


def adaln(x, scale, shift, eps=1e-6):
    """DiT's modulate(layer_norm(x), shift, scale): x [B, T, C], scale and
    shift [B, C]."""
    return _ops.adaln(x, scale, shift, eps)


def adaln_rmsnorm(x, scale, shift, eps=1e-6):
    """adaln with RMSNorm in place of LayerNorm."""
    return _ops.adaln_rmsnorm(x, scale, shift, eps)


def silu(x):
    return _ops.silu(x)


def gelu(x):
    return _ops.gelu(x)


def gelu_tanh(x):
    return _ops.gelu_tanh(x)


def gelu_quick(x):
    """x * sigmoid(1.702 * x) in f32, rounded once (vLLM's gelu_quick)."""
    return _ops.gelu_quick(x)


def gelu_new(x):
    """The tanh GELU rounded where vLLM's gelu_new kernel rounds."""
    return _ops.gelu_new(x)


def gelu_fast(x):
    """The tanh GELU as x * (1 + 0.044715 x^2), rounded as vLLM's gelu_fast."""
    return _ops.gelu_fast(x)


def softmax(x):
    """Softmax over the last dim, in f32."""
    return _ops.softmax(x)


def rmsnorm_noweight(x, eps=1e-6):
    """(x * rsqrt(mean(x^2) + eps)).to(dtype), in f32: RMSNorm without a
    weight (vLLM's has_weight=False)."""
    return _ops.rmsnorm_noweight(x, eps)


def silu_and_mul(x):
    """SwiGLU: silu(x[..., :d]) * x[..., d:] for x [..., 2d]."""
    return _ops.silu_and_mul(x)


def gelu_and_mul(x):
    return _ops.gelu_and_mul(x)


def gelu_tanh_and_mul(x):
    return _ops.gelu_tanh_and_mul(x)


def mul_and_silu(x):
    """x[..., :d] * silu(x[..., d:]) for x [..., 2d] (vLLM)."""
    return _ops.mul_and_silu(x)


def fatrelu_and_mul(x, threshold=0.0):
    """(a if a > threshold else 0) * x[..., d:], a = x[..., :d] (vLLM)."""
    return _ops.fatrelu_and_mul(x, threshold)


def swigluoai_and_mul(x, alpha=1.702, limit=7.0):
    """gpt-oss's SwiGLU on interleaved gate/up pairs of x [..., 2d]:
    (clamp(up, -limit, limit) + 1) * g * sigmoid(alpha * g), g =
    min(gate, limit), in f32, rounded once (vLLM's swigluoai_and_mul)."""
    return _ops.swigluoai_and_mul(x, alpha, limit)


def silu_and_mul_quant(x, scale):
    return _ops.silu_and_mul_quant(x, scale)


def silu_and_mul_quant_group(x, group_size, scale_ub=None,
                             is_scale_transposed=False):
    """vLLM's silu_and_mul_per_block_quant into fp8: y = silu(a) * b of x =
    [a | b] in f32, per group of group_size (64 or 128) elements s =
    max(min(amax|y| / 448, scale_ub), 1 / (448 * 512)) and (y /
    s).to(float8_e4m3fn); returns y [..., d] and the f32 scales [..., d /
    group_size], row-major or over a [groups, tokens] buffer."""
    return _ops.silu_and_mul_quant_group(x, group_size, scale_ub,
                                         is_scale_transposed)


def silu_and_mul_quant_int8_group(x, group_size, is_scale_transposed=False):
    """silu_and_mul_quant_group into int8: s = max(amax|y| / 127,
    FLT_EPSILON), round(y / s) saturating."""
    return _ops.silu_and_mul_quant_int8_group(x, group_size,
                                              is_scale_transposed)


def rope_neox(positions, q, k, cos_sin_cache):
    """vLLM's rotary_embedding (NeoX halves), in place on q [..., Hq, D] and
    k [..., Hk, D] (or q alone, k None); positions int64 per token (int32
    ones are widened first); cos_sin_cache [P, D] in f32 or, as vLLM passes
    it, in q's dtype. A cache
    [P, rotary_dim] with rotary_dim even and below D rotates the first
    rotary_dim elements of each head. With an f32 cache the rotation is
    computed in f32 and rounded once (FlashInfer's); with the cache in q's
    dtype each product and the sum round, as vLLM's kernel does."""
    _ops.rope_neox(positions, q, k, cos_sin_cache)


def rope_gptj(positions, q, k, cos_sin_cache):
    """rope_neox with GPT-J's interleaved pairs (k may be None too)."""
    _ops.rope_gptj(positions, q, k, cos_sin_cache)


def rope_neox_partial(positions, q, k, cos_sin_cache):
    """rope_neox on the first D/2 of each head; int32 positions, cache
    [P, D/2] in q's dtype."""
    _ops.rope_neox_partial(positions, q, k, cos_sin_cache)


def rope_gptj_partial(positions, q, k, cos_sin_cache):
    _ops.rope_gptj_partial(positions, q, k, cos_sin_cache)


def qk_rmsnorm(q, k, q_weight, k_weight, eps=1e-6):
    """Qwen3's q_norm and k_norm in one launch, in place: LlamaRMSNorm of
    each head of q [..., Hq, D] (scaled by q_weight [D]) and k [..., Hk, D]
    (by k_weight). Heads may be views of one qkv buffer."""
    _ops.qk_rmsnorm(q, k, q_weight, k_weight, eps)


def qk_norm_rope_neox(positions, q, k, q_weight, k_weight, cos_sin_cache,
                      eps=1e-6):
    """vLLM's fused_qk_norm_rope (is_neox) on q and k, in place: qk_rmsnorm,
    then rope by cos_sin_cache [P, rotary_dim] in q's dtype at int64 (or
    int32) positions (rotary_dim D, D/2 or D/4: vLLM's partial factors),
    rounded as vLLM's unfused reference (RMSNorm, then
    RotaryEmbedding.forward_native)."""
    _ops.qk_norm_rope_neox(positions, q, k, q_weight, k_weight,
                           cos_sin_cache, eps)


def qk_norm_rope_gptj(positions, q, k, q_weight, k_weight, cos_sin_cache,
                      eps=1e-6):
    """qk_norm_rope_neox with GPT-J's interleaved pairs."""
    _ops.qk_norm_rope_gptj(positions, q, k, q_weight, k_weight,
                           cos_sin_cache, eps)


def rope_hf(q, k, cos, sin):
    """Hugging Face's apply_rotary_pos_emb, token-major: q [..., Hq, D],
    k [..., Hk, D], cos and sin [..., D] per token; returns (q_out, k_out)."""
    return _ops.rope_hf(q, k, cos, sin)
