"""vLLM's fused QK-norm + rope test (tests/kernels/core/test_fused_qk_norm_rope.py,
test_fused_qk_norm_rope_matches_reference) run through kgen.qk_norm_rope_neox
and kgen.qk_norm_rope_gptj, as an engine porting it would: the same shapes,
weights, cache and tolerances, with q, k and v views of one fused qkv buffer.
The reference is written here after vLLM's unfused path: RMSNorm.forward_native
on each head, then RotaryEmbedding.forward_native, op by op in the dtype.

vLLM's op takes the fused buffer and the head counts; kgen's takes q and k as
[tokens, heads, head_dim] views of it. Its rotary ratios 0.5 and 0.25 are a
cache [max_pos, rotary_dim] (the _half and _quarter kernels); other ratios
are refused with a clear error, not computed."""
import pytest
import torch

import kgen

NUM_HEADS, NUM_KV_HEADS, HEAD_DIM, TOKENS = 16, 4, 128, 4
MAX_POSITION = 4096
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def cos_sin_cache(rotary_dim, dtype, device):
    inv = 1.0 / (10000.0 ** (torch.arange(0, rotary_dim, 2, dtype=torch.float)
                             / rotary_dim))
    freqs = torch.arange(MAX_POSITION, dtype=torch.float)[:, None] * inv
    return torch.cat([freqs.cos(), freqs.sin()], -1).to(dtype=dtype,
                                                        device=device)


def rms_norm(x, w, eps):
    """vLLM's RMSNorm.forward_native: normalized in f32, rounded, then
    scaled by the weight in the dtype."""
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return xf.to(x.dtype) * w


def rope(positions, x, cache, neox):
    """forward_native: the first rotary_dim elements rotated, the rest
    passed through."""
    rot = cache.shape[-1]
    cos, sin = cache.index_select(0, positions).chunk(2, dim=-1)
    cos, sin = cos.unsqueeze(-2).to(x.dtype), sin.unsqueeze(-2).to(x.dtype)
    r = x[..., :rot]
    a, b = r.chunk(2, dim=-1) if neox else (r[..., 0::2], r[..., 1::2])
    o1, o2 = a * cos - b * sin, b * cos + a * sin
    out = (torch.cat((o1, o2), -1) if neox
           else torch.stack((o1, o2), -1).flatten(-2))
    return torch.cat((out, x[..., rot:]), -1)


def views(qkv):
    q_size, kv_size = NUM_HEADS * HEAD_DIM, NUM_KV_HEADS * HEAD_DIM
    q, k, v = qkv.split([q_size, kv_size, kv_size], dim=-1)
    return (q.unflatten(-1, (NUM_HEADS, HEAD_DIM)),
            k.unflatten(-1, (NUM_KV_HEADS, HEAD_DIM)), v)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("is_neox", [True, False])
@pytest.mark.parametrize("eps", [1e-5, 1e-6])
@pytest.mark.parametrize("rotary_ratio", [1.0, 0.5, 0.25])
@torch.inference_mode()
def test_fused_qk_norm_rope_matches_reference(device, dtype, is_neox, eps,
                                              rotary_ratio):
    torch.manual_seed(13)
    total = (NUM_HEADS + 2 * NUM_KV_HEADS) * HEAD_DIM
    qkv = torch.randn(TOKENS, total, dtype=dtype, device=device)
    positions = torch.arange(TOKENS, dtype=torch.long, device=device)
    q_weight = torch.empty(HEAD_DIM, dtype=dtype, device=device).normal_(1.0,
                                                                         0.1)
    k_weight = torch.empty(HEAD_DIM, dtype=dtype, device=device).normal_(1.0,
                                                                         0.1)
    cache = cos_sin_cache(int(HEAD_DIM * rotary_ratio), dtype, device)

    q, k, v = views(qkv)
    want_q = rope(positions, rms_norm(q, q_weight, eps), cache, is_neox)
    want_k = rope(positions, rms_norm(k, k_weight, eps), cache, is_neox)
    want_v = v.clone()

    op = kgen.qk_norm_rope_neox if is_neox else kgen.qk_norm_rope_gptj
    op(positions, q, k, q_weight, k_weight, cache, eps)
    tol = 2e-3 if dtype == torch.float16 else 1e-2
    torch.testing.assert_close(q, want_q, atol=tol, rtol=tol)
    torch.testing.assert_close(k, want_k, atol=tol, rtol=tol)
    assert torch.equal(v, want_v)
    # The same rounding points: all but the rare element whose f32 sum of
    # squares lands on the other side of a rounding are exact.
    same = torch.cat([(q == want_q).flatten(), (k == want_k).flatten()])
    assert same.float().mean() >= 0.99


@pytest.mark.parametrize("rotary_ratio", [0.75, 0.375])
def test_other_rotary_ratios_are_refused(rotary_ratio):
    qkv = torch.randn(TOKENS, (NUM_HEADS + 2 * NUM_KV_HEADS) * HEAD_DIM,
                      dtype=torch.bfloat16)
    q, k, _ = views(qkv)
    before = qkv.clone()
    w = torch.ones(HEAD_DIM, dtype=torch.bfloat16)
    cache = cos_sin_cache(int(HEAD_DIM * rotary_ratio), torch.bfloat16, "cpu")
    with pytest.raises(RuntimeError, match=r"rotary_dim 128, 64 or 32"):
        kgen.qk_norm_rope_neox(torch.arange(TOKENS), q, k, w, w, cache)
    assert torch.equal(qkv, before)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@torch.inference_mode()
def test_forms_alternate_on_the_gpu():
    """Each call runs its own kernel when the forms alternate in a process
    (a kernel cache keyed by the name's address once ran a previous call's
    kernel for the next one): every call against the interpreter's."""
    torch.manual_seed(5)
    qkv = torch.randn(4, (NUM_HEADS + 2 * NUM_KV_HEADS) * HEAD_DIM,
                      dtype=torch.bfloat16)
    w = torch.empty(2, HEAD_DIM, dtype=torch.bfloat16).normal_(1.0, 0.1)
    positions = torch.arange(1, TOKENS + 1)
    for _ in range(10):
        for op in (kgen.qk_norm_rope_neox, kgen.qk_norm_rope_gptj):
            for ratio in (1.0, 0.5, 0.25):
                cache = cos_sin_cache(int(HEAD_DIM * ratio), torch.bfloat16,
                                      "cpu")
                out = []
                for dev in ("cpu", "cuda"):
                    x = qkv.to(dev, copy=True)
                    q, k, _ = views(x)
                    op(positions.to(dev), q, k, w[0].to(dev), w[1].to(dev),
                       cache.to(dev))
                    out.append(x.cpu())
                torch.testing.assert_close(out[1], out[0], atol=1e-2,
                                           rtol=1e-2)
