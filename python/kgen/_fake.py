"""Fake (meta) implementations: output shapes and dtypes of each kgen op, for
FakeTensor tracing (torch.compile, torch.export, opcheck)."""
import torch
from torch.library import register_fake

_F8 = torch.float8_e4m3fn
_I8 = torch.int8


def _like(x, dtype=None, last=None):
    shape = list(x.shape)
    if last is not None:
        shape[-1] = last
    return x.new_empty(shape, dtype=dtype or x.dtype)


def _norm(x, weight, eps=1e-6):
    return _like(x)


for _name in ("rmsnorm", "gemma_rmsnorm", "rmsnorm_flashinfer"):
    register_fake(f"kgen::{_name}")(_norm)


@register_fake("kgen::layernorm")
def _layernorm(x, weight, bias, eps=1e-5):
    return _like(x)


def _fused_add_norm(x, residual, weight, eps=1e-6):
    return None


for _name in ("fused_add_rmsnorm", "gemma_fused_add_rmsnorm",
              "fused_add_rmsnorm_flashinfer",
              "gemma_fused_add_rmsnorm_flashinfer"):
    register_fake(f"kgen::{_name}")(_fused_add_norm)


@register_fake("kgen::add_rmsnorm")
def _add_rmsnorm(x, residual, weight, eps=1e-6):
    return _like(x), _like(x)


def _quantized(dtype, scales):
    """y in `dtype`, shaped like x; with `scales`, also f32 per-row scales
    [..., 1]. The other arguments do not shape the outputs."""
    def fake(x, *args, **kwargs):
        y = _like(x, dtype)
        return (y, _like(x, torch.float32, last=1)) if scales else y
    return fake


for _name, _dtype, _scales in (
        ("rmsnorm_quant_static", _F8, False),
        ("rmsnorm_quant_dynamic", _F8, True),
        ("fused_add_rmsnorm_quant_static", _F8, False),
        ("fused_add_rmsnorm_quant_dynamic", _F8, True),
        ("rmsnorm_quant_int8_static", _I8, False),
        ("rmsnorm_quant_int8_dynamic", _I8, True),
        ("fused_add_rmsnorm_quant_int8_static", _I8, False),
        ("fused_add_rmsnorm_quant_int8_dynamic", _I8, True),
        ("quant_int8_static", _I8, False),
        ("quant_int8_dynamic", _I8, True)):
    register_fake(f"kgen::{_name}")(_quantized(_dtype, _scales))


def _grouped(dtype, x, group_size):
    """y in `dtype` like x and f32 scales [..., H / group_size]."""
    torch._check(group_size > 0)
    torch._check(x.shape[-1] % group_size == 0)
    return _like(x, dtype), _like(x, torch.float32,
                                  last=x.shape[-1] // group_size)


def _group_quant(dtype):
    def fake(x, group_size, eps=1e-10):
        return _grouped(dtype, x, group_size)
    return fake


@register_fake("kgen::per_token_group_quant_fp8")
def _per_token_group_quant_fp8(x, group_size, eps=1e-10, use_ue8m0=False,
                               column_major_scales=False,
                               tma_aligned_scales=False):
    y, s = _grouped(_F8, x, group_size)
    if not column_major_scales:
        return y, s
    # Each [M, groups] matrix column-major, columns of M floats (TMA: M
    # rounded up to 4), as the op allocates them.
    m, g = x.shape[-2], s.shape[-1]
    p = (m + 3) // 4 * 4 if tma_aligned_scales else m
    lead = s.shape[:-2]
    cm = x.new_empty((*lead, g, p), dtype=torch.float32)[..., :m]
    return y, cm.transpose(-1, -2)


register_fake("kgen::per_token_group_quant_int8")(_group_quant(_I8))


def _transposable(dtype, x, group_size, transposed):
    """_grouped, the scales over a [groups, rows] buffer when `transposed`,
    as the ops allocate them."""
    y, s = _grouped(dtype, x, group_size)
    if not transposed:
        return y, s
    rows = s.numel() // s.shape[-1] if s.shape[-1] else 0
    t = x.new_empty((s.shape[-1], rows), dtype=torch.float32).t()
    return y, t.view(s.shape)


@register_fake("kgen::rmsnorm_quant_group")
def _rmsnorm_quant_group(x, weight, group_size, scale_ub=None, eps=1e-6,
                         is_scale_transposed=False):
    return _transposable(_F8, x, group_size, is_scale_transposed)


@register_fake("kgen::rmsnorm_quant_int8_group")
def _rmsnorm_quant_int8_group(x, weight, group_size, eps=1e-6,
                              is_scale_transposed=False):
    return _transposable(_I8, x, group_size, is_scale_transposed)


@register_fake("kgen::fused_add_rmsnorm_quant_group")
def _fused_add_rmsnorm_quant_group(x, residual, weight, group_size,
                                   scale_ub=None, eps=1e-6,
                                   is_scale_transposed=False):
    return _transposable(_F8, x, group_size, is_scale_transposed)


@register_fake("kgen::fused_add_rmsnorm_quant_int8_group")
def _fused_add_rmsnorm_quant_int8_group(x, residual, weight, group_size,
                                        eps=1e-6, is_scale_transposed=False):
    return _transposable(_I8, x, group_size, is_scale_transposed)


def _adaln(x, scale, shift, eps=1e-6):
    return _like(x)


for _name in ("adaln", "adaln_rmsnorm"):
    register_fake(f"kgen::{_name}")(_adaln)


def _unary(x):
    return _like(x)


for _name in ("silu", "gelu", "gelu_tanh", "gelu_quick", "gelu_new",
              "gelu_fast", "softmax"):
    register_fake(f"kgen::{_name}")(_unary)


@register_fake("kgen::rmsnorm_noweight")
def _rmsnorm_noweight(x, eps=1e-6):
    return _like(x)


def _gated(x):
    torch._check(x.shape[-1] % 2 == 0)
    return _like(x, last=x.shape[-1] // 2)


for _name in ("silu_and_mul", "mul_and_silu", "gelu_and_mul",
              "gelu_tanh_and_mul"):
    register_fake(f"kgen::{_name}")(_gated)


@register_fake("kgen::fatrelu_and_mul")
def _fatrelu_and_mul(x, threshold=0.0):
    return _gated(x)


@register_fake("kgen::swigluoai_and_mul")
def _swigluoai_and_mul(x, alpha=1.702, limit=7.0):
    return _gated(x)


@register_fake("kgen::silu_and_mul_quant")
def _silu_and_mul_quant(x, scale):
    return _like(_gated(x), _F8)


@register_fake("kgen::silu_and_mul_quant_group")
def _silu_and_mul_quant_group(x, group_size, scale_ub=None,
                              is_scale_transposed=False):
    return _transposable(_F8, _gated(x), group_size, is_scale_transposed)


@register_fake("kgen::silu_and_mul_quant_int8_group")
def _silu_and_mul_quant_int8_group(x, group_size, is_scale_transposed=False):
    return _transposable(_I8, _gated(x), group_size, is_scale_transposed)


def _rope_inplace(positions, q, k, cos_sin_cache):
    return None


for _name in ("rope_neox", "rope_gptj", "rope_neox_partial",
              "rope_gptj_partial"):
    register_fake(f"kgen::{_name}")(_rope_inplace)


@register_fake("kgen::qk_rmsnorm")
def _qk_rmsnorm(q, k, q_weight, k_weight, eps=1e-6):
    return None


def _qk_norm_rope(positions, q, k, q_weight, k_weight, cos_sin_cache,
                  eps=1e-6):
    return None


for _name in ("qk_norm_rope_neox", "qk_norm_rope_gptj"):
    register_fake(f"kgen::{_name}")(_qk_norm_rope)


@register_fake("kgen::rope_hf")
def _rope_hf(q, k, cos, sin):
    return _like(q), _like(k)
