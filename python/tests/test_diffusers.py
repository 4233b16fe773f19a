"""kgen.integrations.diffusers on tiny random DiT, Flux and LTX-Video
transformers, on CPU (the interpreter): what it patches, that kgen's ops
run, and the output against the unpatched model."""
import pytest
import torch

diffusers = pytest.importorskip("diffusers",
                                reason="diffusers is not installed")

from kgen.integrations.diffusers import apply_kgen  # noqa: E402
from models import DIFFUSERS, diffusers_model  # noqa: E402


@pytest.mark.parametrize("kind", DIFFUSERS)
def test_patch_matches_eager(kind):
    model, inputs, kinds = diffusers_model(kind)
    model.eval()
    with torch.no_grad():
        want = model(**inputs, return_dict=False)[0]
    done = apply_kgen(model)
    assert all(done[k.replace("gelu_tanh", "gelu")] for k in kinds), done
    with torch.no_grad(), torch.profiler.profile() as prof:
        got = model(**inputs, return_dict=False)[0]
    ran = {e.name[6:] for e in prof.events() if e.name.startswith("kgen::")}
    assert ran == kinds, ran
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
