"""vLLM's rotary-embedding test grid (tests/kernels/core/test_pos_encoding.py)
run through kgen.rope_neox / kgen.rope_gptj, as an engine porting its tests
would: the same parameters, tensors and tolerances, with the reference
written here after vLLM's RotaryEmbedding.forward_native (each op in the
tensors' dtype). On CPU the ops run the interpreter (the 11-token cases);
on a GPU, the kernels, 8192 tokens included.

vLLM passes q and k as [..., heads * head_size] with head_size as an
argument; kgen's ops take [..., heads, head_size]. The test's flat case
slices one head_size out of each token's row, so it is viewed as one head
a token (no copy). Its padded case slices each head out of a longer one:
heads head_size + 64 apart, which kgen takes as they are, in place."""
import pytest
import torch

import kgen

MAX_POSITION = 8192
BASE = 10000.0
NUM_HEADS = 17
BATCH = 5
# vLLM's tests/kernels/allclose_default.py
ATOL = {torch.bfloat16: 1e-3, torch.float32: 1e-5}
RTOL = {torch.bfloat16: 1.6e-2, torch.float32: 1.3e-6}

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def cos_sin_cache(rotary_dim, dtype, device):
    """vLLM's cache: [max_position, rotary_dim], cos of position x inverse
    frequency in the first half, sin in the second; made in f32, then cast
    with the module (rope.to(dtype))."""
    inv = 1.0 / (BASE ** (torch.arange(0, rotary_dim, 2, dtype=torch.float)
                          / rotary_dim))
    freqs = torch.arange(MAX_POSITION, dtype=torch.float)[:, None] * inv
    return torch.cat([freqs.cos(), freqs.sin()], -1).to(dtype=dtype,
                                                        device=device)


def reference(positions, x, cache, head_size, neox):
    """forward_native on one of q / k: [tokens, heads, head_size] views, the
    first rotary_dim elements rotated op by op in x's dtype."""
    rot = cache.shape[-1]
    cos, sin = cache.index_select(0, positions.flatten()).chunk(2, dim=-1)
    cos, sin = cos.unsqueeze(-2).to(x.dtype), sin.unsqueeze(-2).to(x.dtype)
    h = x.reshape(positions.numel(), -1, head_size)
    r = h[..., :rot]
    if neox:
        a, b = r.chunk(2, dim=-1)
    else:
        a, b = r[..., 0::2], r[..., 1::2]
    o1, o2 = a * cos - b * sin, b * cos + a * sin
    out = (torch.cat((o1, o2), -1) if neox
           else torch.stack((o1, o2), -1).flatten(-2))
    return torch.cat((out, h[..., rot:]), -1).reshape(x.shape)


SHAPES = {
    "batch": lambda b, s, h, d: (b, s, h, d),
    "flat": lambda b, s, h, d: (b, s, h * d),
    "padded": lambda b, s, h, d: (b, s, h, d + 64),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("use_key", [True, False])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("rotary_dim", [None, 32])
@pytest.mark.parametrize("head_size", [64, 80, 120, 256])
@pytest.mark.parametrize("seq_len", [11, 8192])
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("neox", [True, False])
@torch.inference_mode()
def test_rotary_embedding(neox, shape, seq_len, head_size, rotary_dim, dtype,
                          use_key, device):
    if seq_len > 11 and device == "cpu":
        pytest.skip("8192 tokens: on a GPU only (the interpreter is slow)")
    rotary_dim = rotary_dim or head_size
    torch.manual_seed(0)
    cache = cos_sin_cache(rotary_dim, dtype, device)
    positions = torch.randint(0, MAX_POSITION, (BATCH, seq_len),
                              device=device)
    full = SHAPES[shape](BATCH, seq_len, NUM_HEADS, head_size)
    whole = torch.randn(full, dtype=dtype, device=device)
    query = whole[..., :head_size]
    key = torch.randn_like(query) if use_key else None
    ref_q = reference(positions, query, cache, head_size, neox)
    ref_k = (reference(positions, key, cache, head_size, neox)
             if use_key else None)

    def heads(t):  # kgen's layout: [..., heads, head_size]
        return t if t.dim() == 4 else t.unsqueeze(-2)
    rope = kgen.rope_neox if neox else kgen.rope_gptj
    # In place on q itself, a view (a clone would drop the padding between
    # heads, which must come through untouched); k is dense, as in vLLM's.
    out_q, out_k = query, key
    padding = whole[..., head_size:].clone()
    rope(positions, heads(out_q), heads(out_k) if use_key else None, cache)
    assert torch.equal(whole[..., head_size:], padding)
    torch.testing.assert_close(out_q, ref_q, atol=ATOL[dtype],
                               rtol=RTOL[dtype])
    if use_key:
        torch.testing.assert_close(out_k, ref_k, atol=ATOL[dtype],
                                   rtol=RTOL[dtype])
    if device == "cpu":
        # The interpreter (the ops' definition) rounds where vLLM's
        # reference does: equal to the bit, not only within tolerance.
        assert torch.equal(out_q, ref_q)
        assert not use_key or torch.equal(out_k, ref_k)
