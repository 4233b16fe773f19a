"""apply_kgen on tiny random models of each family, on CPU (the interpreter):
what it patches and the logits against the unpatched model."""
import pytest
import torch

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
