"""Sample arguments and torch formulas for every kgen op: the CPU tests use
them against the interpreter, the GPU check against the kernels."""
import math

import torch
import torch.nn.functional as F

F8 = torch.float8_e4m3fn
I8 = torch.int8


def _rms(x, eps):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)


def ref_rmsnorm(x, w, eps=1e-6):
    return w * _rms(x, eps).to(x.dtype)


def ref_gemma_rmsnorm(x, w, eps=1e-6):
    return (_rms(x, eps) * (1 + w.float())).to(x.dtype)


def ref_rmsnorm_flashinfer(x, w, eps=1e-6):
    # FlashInfer's tests' llama_rms_norm: the weight in f32, one rounding.
    return (_rms(x, eps) * w.float()).to(x.dtype)


def ref_fused_add_flashinfer(x, r, w, eps=1e-6, bias=0.0):
    # FlashInfer's tests' fused_add_rms_norm: the norm of the f32 sum.
    s = x.float() + r.float()
    y = s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps)
    return (y * (bias + w.float())).to(x.dtype), s.to(x.dtype)


def ref_rmsnorm_f32w(x, w, eps=1e-6):
    # Llama's module with an f32 weight gives f32; kgen keeps x's dtype.
    return ref_rmsnorm(x, w, eps).to(x.dtype)


def ref_layernorm(x, w, b, eps=1e-5):
    return F.layer_norm(x.float(), x.shape[-1:], w.float(),
                        None if b is None else b.float(), eps).to(x.dtype)


def ref_add_rmsnorm(x, r, w, eps=1e-6):
    s = x + r
    return ref_rmsnorm_f32w(s, w, eps), s


def _fp8(y, scale):
    return (y / scale).clamp(-448, 448).to(F8)


def ref_fused_add_rmsnorm_quant_static(x, r, w, scale, eps):
    return _fp8(ref_rmsnorm(x + r, w, eps).float(), scale)


def ref_fused_add_rmsnorm_quant_dynamic(x, r, w, scale_ub, eps):
    # vLLM normalises the f32 sum (the residual keeps it rounded).
    s = x.float() + r.float()
    n = (w * (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps))
         .to(x.dtype)).float()
    amax = n.abs().amax(-1, keepdim=True)
    if scale_ub is not None:
        amax = amax.clamp(max=scale_ub)
    scale = (amax / 448).clamp(min=1.0 / (448 * 512))
    return _fp8(n, scale), scale


def _int8_rn(v):
    # vLLM's float_to_int8_rn: to nearest, ties to even, saturating.
    return v.round().clamp(-128, 127).to(I8)


def _int8_dynamic(y):
    # vLLM's int8 per-token scale and its f32 reciprocal.
    s = (y.abs().amax(-1, keepdim=True) / 127).clamp(
        min=torch.finfo(torch.float32).eps)
    return _int8_rn(y * (1 / s)), s


def ref_fused_add_rmsnorm_quant_int8_dynamic(x, r, w, eps):
    s = x.float() + r.float()
    n = (w * (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps))
         .to(x.dtype)).float()
    return _int8_dynamic(n)


def ref_quant_int8_dynamic(x):
    # vLLM's dynamic_scaled_int8_quant: 127 / amax, 0 for a zero row (a
    # division: torch's 127 / t multiplies 127 by t's reciprocal).
    amax = x.float().abs().amax(-1, keepdim=True)
    inv = torch.where(amax == 0, 0.0, torch.full_like(amax, 127) / amax)
    return _int8_rn(x.float() * inv), amax / 127


def ref_group_quant(x, group_size, eps, lo=-448.0, hi=448.0, dtype=F8,
                    ue8m0=False):
    # vLLM's per_token_group_quant: clamp, then the cast (fp8 rounds to
    # nearest, int8 truncates). UE8M0: s up to a power of two, from frexp
    # (m in [0.5, 1): 2^e unless m is 0.5).
    g = x.float().unflatten(-1, (-1, group_size))
    s = g.abs().amax(-1, keepdim=True).clamp(min=eps) / hi
    if ue8m0:
        m, e = torch.frexp(s.clamp(min=1e-10))
        s = torch.ldexp(torch.ones_like(s), torch.where(m == 0.5, e - 1, e))
    y = (g / s).clamp(lo, hi).to(dtype)
    return y.flatten(-2), s.squeeze(-1)


def _norm_group_quant(n, group_size, scale_ub, int8):
    # vLLM's rms_norm_per_block_quant: each group's scale, then y / s (int8:
    # y * (1 / s)).
    g = n.unflatten(-1, (-1, group_size))
    top = g.abs().amax(-1, keepdim=True)
    if scale_ub is not None:
        top = top.clamp(max=scale_ub)
    s = (top / (127 if int8 else 448)).clamp(
        min=torch.finfo(torch.float32).eps if int8 else 1.0 / (448 * 512))
    q = _int8_rn(g * (1 / s)) if int8 else (g / s).clamp(-448, 448).to(F8)
    return q.flatten(-2), s.squeeze(-1)


def ref_silu_and_mul_quant_group(int8):
    # vLLM's silu_and_mul_per_block_quant: silu(a) * b in f32, the scale
    # capped by scale_ub (not amax), then y / s for both formats.
    def f(x, g, *rest):
        ub = None if int8 or not rest else rest[0]
        d = x.shape[-1] // 2
        a, b = x[..., :d].float(), x[..., d:].float()
        y = (a * (1 / (1 + torch.exp(-a))) * b).unflatten(-1, (-1, g))
        s = y.abs().amax(-1, keepdim=True) / (127 if int8 else 448)
        if ub is not None:
            s = s.clamp(max=ub)
        s = s.clamp(min=torch.finfo(torch.float32).eps if int8
                    else 1.0 / (448 * 512))
        q = _int8_rn(y / s) if int8 else (y / s).clamp(-448, 448).to(F8)
        return q.flatten(-2), s.squeeze(-1)
    return f


def ref_rmsnorm_quant_group(int8, residual):
    def f(x, *args):
        if residual:
            r, w, g, *rest = args
            s = x.float() + r.float()
            n = (w * (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True)
                                      + rest[-1])).to(x.dtype)).float()
        else:
            w, g, *rest = args
            n = ref_rmsnorm(x, w, rest[-1]).float()
        return _norm_group_quant(n, g, None if int8 else rest[0], int8)
    return f


def ref_adaln(x, scale, shift, eps=1e-6, rms=False):
    xf = x.float()
    n = _rms(x, eps) if rms else F.layer_norm(xf, xf.shape[-1:], eps=eps)
    return (n * (1 + scale.float()[:, None]) + shift.float()[:, None]).to(x.dtype)


def _halves(x):
    d = x.shape[-1] // 2
    return x[..., :d].float(), x[..., d:].float()


def ref_gated(act):
    def f(x):
        a, b = _halves(x)
        return (act(a) * b).to(x.dtype)
    return f


def ref_mul_and_silu(x):
    a, b = _halves(x)
    return (a * F.silu(b)).to(x.dtype)


def ref_fatrelu_and_mul(x, threshold):
    a, b = _halves(x)
    return (torch.where(a > threshold, a, 0.0) * b).to(x.dtype)


def ref_swigluoai_and_mul(x, alpha, limit):
    g = x[..., 0::2].float().clamp(max=limit)
    u = x[..., 1::2].float().clamp(-limit, limit)
    return ((u + 1) * g * torch.sigmoid(alpha * g)).to(x.dtype)


def ref_rope_hf(q, k, cos, sin):
    def rot(x):
        d = x.shape[-1] // 2
        return torch.cat((-x[..., d:], x[..., :d]), -1)
    c, s = cos[..., None, :], sin[..., None, :]
    return q * c + rot(q) * s, k * c + rot(k) * s


def ref_rope_neox(positions, q, k, cache, gptj=False):
    rot = cache.shape[-1]
    cs = cache[positions.flatten().long()].float()
    cos, sin = cs[:, : rot // 2], cs[:, rot // 2:]
    outs = []
    for x in (q, k) if k is not None else (q,):  # k None: q alone
        xf = x.float().reshape(-1, x.shape[-2], x.shape[-1]).clone()
        r = xf[..., :rot]
        if gptj:
            a, b = r[..., 0::2], r[..., 1::2]
        else:
            a, b = r[..., : rot // 2], r[..., rot // 2:]
        c, s = cos[:, None, :], sin[:, None, :]
        na, nb = a * c - b * s, b * c + a * s
        if gptj:
            r[..., 0::2], r[..., 1::2] = na, nb
        else:
            r[..., : rot // 2], r[..., rot // 2:] = na, nb
        outs.append(xf.reshape(x.shape).to(x.dtype))
    return outs


def ref_rope_native(positions, q, k, cache, gptj=False):
    """vLLM's RotaryEmbedding.forward_native: the cache in q's dtype, each
    product and sum rounded to it; the first rotary_dim elements rotate."""
    rot = cache.shape[-1]
    cs = cache[positions.flatten().long()][:, None, :]
    cos, sin = cs.chunk(2, dim=-1)
    outs = []
    for x in (q, k):
        r = x[..., :rot]
        if gptj:
            a, b = r[..., 0::2], r[..., 1::2]
        else:
            a, b = r.chunk(2, dim=-1)
        na, nb = a * cos - b * sin, b * cos + a * sin
        out = (torch.stack((na, nb), -1).flatten(-2) if gptj
               else torch.cat((na, nb), -1))
        outs.append(torch.cat((out, x[..., rot:]), -1))
    return outs


def ref_qk_rmsnorm(q, k, wq, wk, eps):
    return ref_rmsnorm(q, wq, eps), ref_rmsnorm(k, wk, eps)


def ref_qk_norm_rope(p, q, k, wq, wk, cache, eps, gptj=False):
    return ref_rope_native(p, *ref_qk_rmsnorm(q, k, wq, wk, eps), cache, gptj)


def randn(*shape, dtype=torch.float32, device="cpu", seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype=dtype, device=device)


def samples(dtype=torch.float32, device="cpu", hidden=64, head_dim=64):
    """(op, args, reference or None) for every op: args as torch.ops.kgen.OP
    takes them; the reference maps the same args to the expected outputs."""
    h = hidden
    x = randn(2, 3, h, dtype=dtype, device=device, seed=1)
    w = randn(h, dtype=dtype, device=device, seed=2)
    b = randn(h, dtype=dtype, device=device, seed=3)
    r = randn(2, 3, h, dtype=dtype, device=device, seed=4)
    scale = randn(2, h, dtype=dtype, device=device, seed=5) * 0.1
    shift = randn(2, h, dtype=dtype, device=device, seed=6) * 0.1
    x2 = randn(4, 2 * h, dtype=dtype, device=device, seed=7)
    xg = randn(2, 3, 384, dtype=dtype, device=device, seed=12)  # groups of 64 and 128
    wg = randn(384, dtype=dtype, device=device, seed=13)
    rg = randn(2, 3, 384, dtype=dtype, device=device, seed=14)
    xg2 = randn(2, 3, 768, dtype=dtype, device=device, seed=15)
    d, hq, hk, t = head_dim, 4, 2, 5
    q = randn(t, hq, d, dtype=dtype, device=device, seed=8)
    k = randn(t, hk, d, dtype=dtype, device=device, seed=9)
    cos = randn(t, d, dtype=dtype, device=device, seed=10)
    sin = randn(t, d, dtype=dtype, device=device, seed=11)
    pos64 = torch.tensor([3, 0, 7, 7, 1], device=device)
    wq = randn(d, dtype=dtype, device=device, seed=13)
    wk = randn(d, dtype=dtype, device=device, seed=14)
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
    ang = torch.arange(16).float()[:, None] * inv[None, :]
    cache = torch.cat([ang.cos(), ang.sin()], -1).to(device)
    half = torch.cat([ang[:, : d // 4].cos(), ang[:, : d // 4].sin()], -1)
    half = half.to(dtype=dtype, device=device)
    quarter = torch.cat([ang[:, : d // 8].cos(), ang[:, : d // 8].sin()], -1)
    quarter = quarter.to(dtype=dtype, device=device)
    # rotary_dim 3/8 of head_dim (rope_*_rotary): an odd count of pairs.
    p3 = 3 * d // 16
    rot3 = torch.cat([ang[:, :p3].cos(), ang[:, :p3].sin()], -1).to(device)
    out = [
        ("rmsnorm", (x, w, 1e-6), ref_rmsnorm),
        ("gemma_rmsnorm", (x, w, 1e-6), ref_gemma_rmsnorm),
        ("layernorm", (x, w, b, 1e-5), ref_layernorm),
        ("layernorm", (x, w, None, 1e-5), ref_layernorm),
        ("add_rmsnorm", (x, r, w, 1e-6), ref_add_rmsnorm),
        ("fused_add_rmsnorm", (x.clone(), r.clone(), w, 1e-6), None),
        ("fused_add_rmsnorm", (x.clone(), r.clone(), None, 1e-6), None),
        ("gemma_fused_add_rmsnorm", (x.clone(), r.clone(), w, 1e-6), None),
        ("rmsnorm_flashinfer", (x, w, 1e-6), ref_rmsnorm_flashinfer),
        ("fused_add_rmsnorm_flashinfer", (x.clone(), r.clone(), w, 1e-6),
         None),
        ("gemma_fused_add_rmsnorm_flashinfer",
         (x.clone(), r.clone(), w, 1e-6), None),
        ("rmsnorm_quant_static", (x, w, 0.05, 1e-6),
         lambda x, w, s, e: (ref_rmsnorm(x, w, e).float() / s).clamp(
             -448, 448).to(F8)),
        ("rmsnorm_quant_dynamic", (x, w, 1e-6), None),
        ("fused_add_rmsnorm_quant_static", (x, r.clone(), w, 0.05, 1e-6),
         ref_fused_add_rmsnorm_quant_static),
        # A bound of 2 clamps most rows' amax: their largest values saturate.
        ("fused_add_rmsnorm_quant_dynamic", (x, r.clone(), w, 2.0, 1e-6),
         ref_fused_add_rmsnorm_quant_dynamic),
        ("fused_add_rmsnorm_quant_dynamic", (x, r.clone(), w, None, 1e-6),
         ref_fused_add_rmsnorm_quant_dynamic),
        ("rmsnorm_quant_int8_static", (x, w, 0.02, 1e-6),
         lambda x, w, s, e: _int8_rn(ref_rmsnorm(x, w, e).float() / s)),
        ("rmsnorm_quant_int8_dynamic", (x, w, 1e-6),
         lambda x, w, e: _int8_dynamic(ref_rmsnorm(x, w, e).float())),
        ("fused_add_rmsnorm_quant_int8_static", (x, r.clone(), w, 0.02, 1e-6),
         lambda x, r, w, s, e: _int8_rn(ref_rmsnorm(x + r, w, e).float() / s)),
        ("fused_add_rmsnorm_quant_int8_dynamic", (x, r.clone(), w, 1e-6),
         ref_fused_add_rmsnorm_quant_int8_dynamic),
        ("quant_int8_static", (x, 0.02),
         lambda x, s: _int8_rn(x.float() / s)),
        ("quant_int8_dynamic", (x,), ref_quant_int8_dynamic),
        ("quant_int8_dynamic", (x * 0,), ref_quant_int8_dynamic),
        ("per_token_group_quant_fp8", (xg, 64, 1e-10), ref_group_quant),
        ("per_token_group_quant_fp8", (xg, 128, 1e-10), ref_group_quant),
        ("per_token_group_quant_fp8", (xg, 128, 1e-10, True),
         lambda x, g, e, u: ref_group_quant(x, g, e, ue8m0=u)),
        ("per_token_group_quant_fp8", (xg * 1e-9, 64, 1e-10, True),
         lambda x, g, e, u: ref_group_quant(x, g, e, ue8m0=u)),
        ("per_token_group_quant_fp8", (xg, 128, 1e-10, True, True, True),
         lambda x, g, e, u, c, t: ref_group_quant(x, g, e, ue8m0=u)),
        ("per_token_group_quant_fp8", (xg, 64, 1e-10, False, True),
         lambda x, g, e, u, c: ref_group_quant(x, g, e)),
        ("per_token_group_quant_int8", (xg, 64, 1e-10),
         lambda x, g, e: ref_group_quant(x, g, e, -128.0, 127.0, I8)),
        ("per_token_group_quant_int8", (xg, 128, 1e-10),
         lambda x, g, e: ref_group_quant(x, g, e, -128.0, 127.0, I8)),
        # A bound of 2 clamps most groups' amax: their largest saturate.
        ("rmsnorm_quant_group", (xg, wg, 128, None, 1e-6),
         ref_rmsnorm_quant_group(False, False)),
        ("rmsnorm_quant_group", (xg, wg, 64, 2.0, 1e-6),
         ref_rmsnorm_quant_group(False, False)),
        ("rmsnorm_quant_int8_group", (xg, wg, 64, 1e-6),
         ref_rmsnorm_quant_group(True, False)),
        ("fused_add_rmsnorm_quant_group", (xg, rg.clone(), wg, 128, 2.0, 1e-6),
         ref_rmsnorm_quant_group(False, True)),
        ("fused_add_rmsnorm_quant_int8_group", (xg, rg.clone(), wg, 128, 1e-6),
         ref_rmsnorm_quant_group(True, True)),
        # vLLM's is_scale_transposed: the same scales over [groups, tokens].
        ("rmsnorm_quant_group", (xg, wg, 64, 2.0, 1e-6, True),
         lambda *a: ref_rmsnorm_quant_group(False, False)(*a[:-1])),
        ("fused_add_rmsnorm_quant_int8_group",
         (xg, rg.clone(), wg, 64, 1e-6, True),
         lambda *a: ref_rmsnorm_quant_group(True, True)(*a[:-1])),
        ("silu_and_mul_quant_group", (xg2, 128), ref_silu_and_mul_quant_group(
            False)),
        ("silu_and_mul_quant_group", (xg2, 64, 0.002, True),
         lambda *a: ref_silu_and_mul_quant_group(False)(*a[:-1])),
        ("silu_and_mul_quant_int8_group", (xg2, 64),
         ref_silu_and_mul_quant_group(True)),
        ("silu_and_mul_quant_int8_group", (xg2, 128, True),
         lambda *a: ref_silu_and_mul_quant_group(True)(*a[:-1])),
        ("adaln", (x, scale, shift, 1e-6), ref_adaln),
        ("adaln_rmsnorm", (x, scale, shift, 1e-6),
         lambda *a: ref_adaln(*a, rms=True)),
        ("silu", (x,), lambda x: F.silu(x.float()).to(x.dtype)),
        ("gelu", (x,), lambda x: F.gelu(x.float()).to(x.dtype)),
        ("gelu_tanh", (x,),
         lambda x: F.gelu(x.float(), approximate="tanh").to(x.dtype)),
        ("gelu_quick", (x,),
         lambda x: (x.float() * torch.sigmoid(1.702 * x.float())).to(x.dtype)),
        # gelu_new and gelu_fast are the tanh GELU rounded as vLLM rounds.
        ("gelu_new", (x,),
         lambda x: F.gelu(x.float(), approximate="tanh").to(x.dtype)),
        ("gelu_fast", (x,),
         lambda x: F.gelu(x.float(), approximate="tanh").to(x.dtype)),
        ("softmax", (x,), lambda x: torch.softmax(x.float(), -1).to(x.dtype)),
        ("rmsnorm_noweight", (x, 1e-6), lambda x, e: _rms(x, e).to(x.dtype)),
        ("mul_and_silu", (x2,), ref_mul_and_silu),
        ("fatrelu_and_mul", (x2, 0.25), ref_fatrelu_and_mul),
        # Scaled so that the clamps at 7 take part.
        ("swigluoai_and_mul", (x2 * 3, 1.702, 7.0), ref_swigluoai_and_mul),
        ("silu_and_mul", (x2,), ref_gated(F.silu)),
        ("gelu_and_mul", (x2,), ref_gated(F.gelu)),
        ("gelu_tanh_and_mul", (x2,),
         ref_gated(lambda a: F.gelu(a, approximate="tanh"))),
        ("silu_and_mul_quant", (x2, 0.05),
         lambda x, s: (ref_gated(F.silu)(x).float() / s).clamp(-448, 448)
         .to(F8)),
        ("rope_neox", (pos64, q.clone(), k.clone(), cache), None),
        ("rope_gptj", (pos64, q.clone(), k.clone(), cache), None),
        ("rope_neox", (pos64, q.clone(), None, cache), None),
        ("rope_gptj", (pos64, q.clone(), None, cache), None),
        ("rope_neox", (pos64, q.clone(), k.clone(), rot3), None),
        ("rope_gptj", (pos64, q.clone(), k.clone(), rot3), None),
        ("rope_neox", (pos64, q.clone(), None, rot3), None),
        ("rope_gptj", (pos64, q.clone(), None, rot3), None),
        ("rope_neox_partial", (pos64.int(), q.clone(), k.clone(), half), None),
        ("rope_gptj_partial", (pos64.int(), q.clone(), k.clone(), half), None),
        ("rope_hf", (q, k, cos, sin), ref_rope_hf),
        ("qk_rmsnorm", (q.clone(), k.clone(), wq, wk, 1e-6), None),
        ("qk_norm_rope_neox", (pos64, q.clone(), k.clone(), wq, wk,
                               cache.to(dtype), 1e-6), None),
        ("qk_norm_rope_gptj", (pos64, q.clone(), k.clone(), wq, wk,
                               cache.to(dtype), 1e-6), None),
        # vLLM's partial factors: a cache of head_dim / 2 and / 4.
        ("qk_norm_rope_neox", (pos64, q.clone(), k.clone(), wq, wk,
                               half.to(dtype), 1e-6), None),
        ("qk_norm_rope_gptj", (pos64, q.clone(), k.clone(), wq, wk,
                               quarter, 1e-6), None),
        # int32 positions (FlashInfer's pos_ids), widened by the op.
        ("rope_gptj", (pos64.int(), q.clone(), None, rot3), None),
        ("qk_norm_rope_neox", (pos64.int(), q.clone(), k.clone(), wq, wk,
                               quarter, 1e-6), None),
    ]
    if dtype != torch.float32:  # the norms' f32 weights by narrower rows
        w32, b32 = w.float() * 1.5, b.float() / 3
        out += [
            ("rmsnorm", (x, w32, 1e-6), ref_rmsnorm_f32w),
            ("gemma_rmsnorm", (x, w32, 1e-6), ref_gemma_rmsnorm),
            ("layernorm", (x, w32, b32, 1e-5), ref_layernorm),
            ("layernorm", (x, w32, None, 1e-5), ref_layernorm),
            ("add_rmsnorm", (x, r, w32, 1e-6), ref_add_rmsnorm),
            ("fused_add_rmsnorm", (x.clone(), r.clone(), w32, 1e-6), None),
            ("gemma_fused_add_rmsnorm", (x.clone(), r.clone(), w32, 1e-6),
             None),
            # vLLM's call: the cache in q's dtype (rope_*_cache16 kernels)
            ("rope_neox", (pos64, q.clone(), k.clone(), cache.to(dtype)),
             None),
            ("rope_gptj", (pos64, q.clone(), None, cache.to(dtype)), None),
            ("rope_neox", (pos64, q.clone(), k.clone(), rot3.to(dtype)),
             None),
            ("rope_gptj", (pos64, q.clone(), None, rot3.to(dtype)), None),
        ]
    return out


# In-place ops: (op, sample index of the mutated args, reference of them).
INPLACE = {
    "fused_add_rmsnorm": lambda x, r, w, e: (
        ref_add_rmsnorm(x, r, w, e)[0] if w is not None
        else _rms(x + r, e).to(x.dtype), x + r),
    "gemma_fused_add_rmsnorm": lambda x, r, w, e: (
        ref_gemma_rmsnorm(x + r, w, e), x + r),
    "fused_add_rmsnorm_flashinfer": ref_fused_add_flashinfer,
    "gemma_fused_add_rmsnorm_flashinfer": lambda x, r, w, e: (
        ref_fused_add_flashinfer(x, r, w, e, bias=1.0)),
    "fused_add_rmsnorm_quant_static": lambda x, r, w, s, e: (x + r,),
    "fused_add_rmsnorm_quant_dynamic": lambda x, r, w, b, e: (
        (x.float() + r.float()).to(x.dtype),),
    "fused_add_rmsnorm_quant_int8_static": lambda x, r, w, s, e: (x + r,),
    "fused_add_rmsnorm_quant_int8_dynamic": lambda x, r, w, e: (
        (x.float() + r.float()).to(x.dtype),),
    "fused_add_rmsnorm_quant_group": lambda x, r, w, g, b, e, *t: (
        (x.float() + r.float()).to(x.dtype),),
    "fused_add_rmsnorm_quant_int8_group": lambda x, r, w, g, e, *t: (
        (x.float() + r.float()).to(x.dtype),),
    "rope_neox": lambda p, q, k, c: ref_rope_neox(p, q, k, c),
    "rope_gptj": lambda p, q, k, c: ref_rope_neox(p, q, k, c, gptj=True),
    "rope_neox_partial": lambda p, q, k, c: ref_rope_neox(p, q, k, c),
    "rope_gptj_partial": lambda p, q, k, c: ref_rope_neox(p, q, k, c,
                                                         gptj=True),
    "qk_rmsnorm": ref_qk_rmsnorm,
    "qk_norm_rope_neox": ref_qk_norm_rope,
    "qk_norm_rope_gptj": lambda *a: ref_qk_norm_rope(*a, gptj=True),
}
MUTATED = {"fused_add_rmsnorm": (0, 1), "gemma_fused_add_rmsnorm": (0, 1),
           "fused_add_rmsnorm_flashinfer": (0, 1),
           "gemma_fused_add_rmsnorm_flashinfer": (0, 1),
           "fused_add_rmsnorm_quant_static": (1,),
           "fused_add_rmsnorm_quant_dynamic": (1,),
           "fused_add_rmsnorm_quant_int8_static": (1,),
           "fused_add_rmsnorm_quant_int8_dynamic": (1,),
           "fused_add_rmsnorm_quant_group": (1,),
           "fused_add_rmsnorm_quant_int8_group": (1,), "rope_neox": (1, 2),
           "rope_gptj": (1, 2), "rope_neox_partial": (1, 2),
           "rope_gptj_partial": (1, 2), "qk_rmsnorm": (0, 1),
           "qk_norm_rope_neox": (1, 2), "qk_norm_rope_gptj": (1, 2)}
