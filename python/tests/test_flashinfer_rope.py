"""FlashInfer's rope tests (tests/test_rope.py: test_rope, test_rope_pos_ids)
run through kgen.rope_gptj (interleave) and kgen.rope_neox, as an engine
porting them would: q and k views of one packed f16 qkv, positions from
indptr and offsets (kgen.rope_positions) or given as pos_ids in int32 or
int64, Llama and Llama 3.1 frequencies, partial rotary factors 0.25 to 1,
in place or on copies, and FlashInfer's tolerance (1e-3).

FlashInfer computes each position's cos and sin in its kernel; kgen reads
them from a cos_sin_cache [max_pos, rotary_dim] in f32 that the caller
builds, which is how Llama 3.1's scaled frequencies are given (docs/
python.md). The reference is written here after FlashInfer's: the rotation
as complex products in f32, rounded once to the tensors' dtype. On CPU the
ops run the interpreter (the two smaller shapes); on a GPU, the kernels."""
import math

import pytest
import torch

import kgen

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
NUM_KV_HEADS = 8
# (batch_size, qkv_len, num_qo_heads, offset, inplace) from FlashInfer's
# grid; the largest on a GPU only (the interpreter is slow).
SHAPES = [(1, 1, 8, 0, False), (19, 4, 16, 15, True), (99, 19, 8, 99, False)]


def frequencies(rotary_dim, theta, llama31):
    """theta^(-2i / rotary_dim); with llama31, Llama 3.1's scaling (factor
    8, low and high frequency factors 1 and 4, original context 8192)."""
    freqs = 1.0 / theta ** (torch.arange(0, rotary_dim, 2).float()
                            / rotary_dim)
    if not llama31:
        return freqs
    factor, low, high, context = 8.0, 1.0, 4.0, 8192.0
    wavelen = 2 * math.pi / freqs
    smooth = ((context / wavelen - low) / (high - low)).clamp(0, 1)
    scaled = (1 - smooth) * freqs / factor + smooth * freqs
    return torch.where(wavelen < context / high, freqs,
                       torch.where(wavelen > context / low, freqs / factor,
                                   scaled))


def cos_sin_cache(rotary_dim, max_pos, llama31):
    """[max_pos, rotary_dim] f32: cos of position x frequency, then sin."""
    theta = 5e5 if llama31 else 1e4
    angles = (torch.arange(max_pos).float()[:, None]
              * frequencies(rotary_dim, theta, llama31))
    return torch.cat([angles.cos(), angles.sin()], -1)


def reference(x, positions, cache, interleave):
    """The first rotary_dim elements of each head rotated in f32, as complex
    numbers (pairs of neighbours with interleave, else the two halves),
    rounded once; the rest of each head as it was."""
    rot = cache.shape[-1]
    cos, sin = cache[positions.long()].chunk(2, -1)
    cos, sin = cos[:, None], sin[:, None]
    r = x[..., :rot].float()
    a, b = (r[..., 0::2], r[..., 1::2]) if interleave else r.chunk(2, -1)
    o1, o2 = a * cos - b * sin, a * sin + b * cos
    out = (torch.stack((o1, o2), -1).flatten(-2) if interleave
           else torch.cat((o1, o2), -1))
    return torch.cat((out.to(x.dtype), x[..., rot:]), -1)


def packed_qk(nnz, num_qo_heads, head_dim, device, gen):
    """q and k as views of one packed qkv [nnz, (Hq + 2 Hkv) * head_dim]."""
    qkv = torch.randn(nnz, (num_qo_heads + 2 * NUM_KV_HEADS) * head_dim,
                      generator=gen).half().to(device)
    q = qkv[:, : num_qo_heads * head_dim].view(nnz, num_qo_heads, head_dim)
    k = qkv[:, num_qo_heads * head_dim:
            (num_qo_heads + NUM_KV_HEADS) * head_dim].view(nnz, NUM_KV_HEADS,
                                                            head_dim)
    return qkv, q, k


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("idtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("interleave", [True, False])
@pytest.mark.parametrize("partial_rotary_factor", [0.25, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("llama_version", ["llama", "llama31"])
@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_rope(head_dim, llama_version, partial_rotary_factor, interleave,
              idtype, device):
    rotary_dim = int(head_dim * partial_rotary_factor)
    rope = kgen.rope_gptj if interleave else kgen.rope_neox
    gen = torch.Generator().manual_seed(head_dim + rotary_dim)
    for batch, qkv_len, num_qo_heads, offset, inplace in SHAPES:
        if device == "cpu" and batch * qkv_len > 100:
            continue
        nnz = batch * qkv_len
        qkv, q, k = packed_qk(nnz, num_qo_heads, head_dim, device, gen)
        indptr = torch.arange(batch + 1, dtype=idtype) * qkv_len
        offsets = torch.full((batch,), offset, dtype=idtype)
        pos_ids = torch.arange(offset, offset + qkv_len,
                               dtype=idtype).repeat(batch)
        cache = cos_sin_cache(rotary_dim, qkv_len + offset,
                              llama_version == "llama31")
        q_ref = reference(q.cpu(), pos_ids, cache, interleave)
        k_ref = reference(k.cpu(), pos_ids, cache, interleave)
        cache = cache.to(device)
        q_in, k_in = q.clone(), k.clone()
        v_in = qkv[:, (num_qo_heads + NUM_KV_HEADS) * head_dim:].clone()

        # apply_rope (indptr and offsets): in place, or on copies (its
        # out-of-place form), which leaves q and k as they were.
        qa, ka = (q, k) if inplace else (q.clone(), k.clone())
        rope(kgen.rope_positions(indptr, offsets).to(device), qa, ka, cache)
        # apply_rope_pos_ids: positions given in idtype.
        qb, kb = q_in.clone(), k_in.clone()
        rope(pos_ids.to(device), qb, kb, cache)

        for got, want in ((qa, q_ref), (ka, k_ref), (qb, q_ref), (kb, k_ref)):
            torch.testing.assert_close(got.cpu(), want, rtol=1e-3, atol=1e-3)
        assert torch.equal(qa, qb) and torch.equal(ka, kb)
        if not inplace:
            assert torch.equal(q, q_in) and torch.equal(k, k_in)
        # v, the rest of the packed buffer, is never written.
        assert torch.equal(qkv[:, (num_qo_heads + NUM_KV_HEADS) * head_dim:],
                           v_in)
