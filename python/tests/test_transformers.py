"""apply_kgen on tiny random models of each family, on CPU (the interpreter):
what it patches and the logits against the unpatched model."""
import pytest
import torch

import kgen

pytest.importorskip("transformers", reason="transformers is not installed")

from kgen.integrations.transformers import apply_kgen  # noqa: E402
from models import FAMILIES, model  # noqa: E402


@pytest.mark.parametrize("family", FAMILIES)
def test_patch_matches_eager(family):
    ref = model(family)
    patched = model(family)
    done = apply_kgen(patched)
    gemma = family.startswith("gemma")
    norms = done["gemma_rmsnorm" if gemma else "rmsnorm"]
    per_layer = {"gemma2": 4, "gemma3": 6, "qwen3": 4}.get(family, 2)
    assert norms == 2 * per_layer + 1, done
    assert done["mlp"] == 2 and done["rope"] == 2, done
    assert done["add_rmsnorm"] == (0 if gemma else 2), done
    ids = torch.randint(0, 512, (2, 7), generator=torch.Generator()
                        .manual_seed(1))
    with torch.no_grad():
        with torch.profiler.profile() as prof:
            want = ref(ids).logits
        # The patch is the model's own: another model of the family is not.
        assert not [e for e in prof.events() if e.name.startswith("kgen::")]
        with torch.profiler.profile() as prof:
            got = patched(ids).logits
    ran = {e.name for e in prof.events() if e.name.startswith("kgen::")}
    act = "gelu_tanh_and_mul" if gemma else "silu_and_mul"
    expect = {"kgen::rope_hf", f"kgen::{act}",
              "kgen::gemma_rmsnorm" if gemma else "kgen::rmsnorm"}
    if not gemma:
        expect.add("kgen::add_rmsnorm")
    assert ran == expect, ran
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    # A decode step through the cache takes the same kernels.
    with torch.no_grad():
        out = patched.generate(ids, max_new_tokens=3, do_sample=False)
        ref_out = ref.generate(ids, max_new_tokens=3, do_sample=False)
    assert torch.equal(out, ref_out)


def test_patch_is_idempotent():
    m = model("llama")
    apply_kgen(m)
    again = apply_kgen(m)
    assert again["rmsnorm"] == 0 and again["mlp"] == 0, again


def test_compile_fullgraph_patched_model():
    m = model("qwen3")
    apply_kgen(m)
    ids = torch.randint(0, 512, (1, 5))
    explain = torch._dynamo.explain(lambda i: m(i).logits)(ids)
    assert explain.graph_break_count == 0, explain.break_reasons


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16,
                                   torch.float32])
def test_rope_hf_equals_apply_rotary_pos_emb_to_the_bit(dtype):
    """rope_hf against transformers' own apply_rotary_pos_emb (Llama's),
    with cos and sin in q's dtype as LlamaRotaryEmbedding returns them:
    each product and the sum rounded to the dtype, so equal to the bit on
    CPU (the interpreter). One rounding in f32 is not (16-bit dtypes)."""
    from transformers.models.llama.modeling_llama import (
        apply_rotary_pos_emb, rotate_half)
    g = torch.Generator().manual_seed(0)
    b, s, hq, hk, d = 2, 7, 4, 2, 64
    q = torch.randn(b, hq, s, d, generator=g).to(dtype)
    k = torch.randn(b, hk, s, d, generator=g).to(dtype)
    inv = 1.0 / (10000.0 ** (torch.arange(0, d, 2).float() / d))
    pos = torch.randint(0, 4096, (b, s), generator=g).float()
    emb = torch.cat([pos[..., None] * inv] * 2, -1)
    cos, sin = emb.cos().to(dtype), emb.sin().to(dtype)
    want_q, want_k = apply_rotary_pos_emb(q, k, cos, sin)
    got_q, got_k = kgen.rope_hf(q.transpose(1, 2), k.transpose(1, 2), cos,
                                sin)
    assert torch.equal(got_q.transpose(1, 2), want_q)
    assert torch.equal(got_k.transpose(1, 2), want_k)
    c, sn = cos[:, None].float(), sin[:, None].float()
    once = (q.float() * c + rotate_half(q).float() * sn).to(dtype)
    assert torch.equal(once, want_q) == (dtype == torch.float32)
