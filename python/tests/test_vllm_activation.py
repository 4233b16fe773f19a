"""vLLM's activation test (tests/kernels/core/test_activation.py:
test_act_and_mul and test_activation) run through kgen, as an engine porting
it would: its ops, token counts, widths, dtypes, seed and references (the
layers' forward_native, written here in torch ops in the dtype).

vLLM compares silu_and_mul, mul_and_silu, gelu, gelu_tanh and fatrelu with
its references exactly, and the rest within allclose_default's tolerances
(swigluoai_and_mul: its own rtol). kgen is exact where it computes what
torch's CUDA ops do (bench/results/2026-11-28/act-port: on an H200,
silu_and_mul and mul_and_silu in bf16 and f32, gelu_and_mul and
fatrelu_and_mul in every dtype). Elsewhere it stays within the default
tolerances: f16 silu outputs take the approximate exp (FastMath: 1.4 ulps
at most, on 1.8e-5 of the elements), gelu_tanh is a / (1 + exp(-2z)) rather
than tanhf, and on the CPU the interpreter's libm is not torch's. The CPU
runs 7 and 83 tokens of 512 (the interpreter is slow); CUDA vLLM's grid."""
import math
import random

import pytest
import torch
import torch.nn.functional as F

import kgen

DTYPES = [torch.half, torch.bfloat16, torch.float]
ATOL = {torch.half: 1e-3, torch.bfloat16: 1e-3, torch.float: 1e-5}
RTOL = {torch.half: 1e-3, torch.bfloat16: 1.6e-2, torch.float: 1.3e-6}
SWIGLU_RTOL = {torch.half: 2e-3, torch.bfloat16: 2e-2, torch.float: 1.3e-6}
# (device, num_tokens, d): vLLM's NUM_TOKENS x D on CUDA.
GRID = [("cpu", t, 512) for t in (7, 83)]
if torch.cuda.is_available():
    GRID += [("cuda", t, d) for t in (7, 83, 2048) for d in (512, 13824)]
EXACT_ON_CUDA = {("silu_and_mul", torch.bfloat16), ("silu_and_mul", torch.float),
                 ("mul_and_silu", torch.bfloat16), ("mul_and_silu", torch.float)}
EXACT_ON_CUDA |= {(a, t) for a in ("gelu", "fatrelu") for t in DTYPES}


def act_and_mul_native(activation, x, threshold):
    d = x.shape[-1] // 2
    a, b = x[..., :d], x[..., d:]
    if activation == "silu_and_mul":
        return F.silu(a) * b
    if activation == "mul_and_silu":
        return a * F.silu(b)
    if activation in ("gelu", "gelu_tanh"):
        return F.gelu(a, approximate="tanh" if activation == "gelu_tanh"
                      else "none") * b
    if activation == "fatrelu":
        return F.threshold(a, threshold, 0.0) * b
    # SwigluOAIAndMul: gate and up interleaved, alpha 1.702, limit 7.
    gate = x[..., ::2].clamp(max=7.0)
    up = x[..., 1::2].clamp(min=-7.0, max=7.0)
    return (up + 1) * (gate * torch.sigmoid(gate * 1.702))


KGEN_ACT_AND_MUL = {"silu_and_mul": kgen.silu_and_mul,
                    "mul_and_silu": kgen.mul_and_silu,
                    "gelu": kgen.gelu_and_mul,
                    "gelu_tanh": kgen.gelu_tanh_and_mul,
                    "fatrelu": kgen.fatrelu_and_mul,
                    "swigluoai_and_mul": kgen.swigluoai_and_mul}


@pytest.mark.parametrize("activation", list(KGEN_ACT_AND_MUL))
@pytest.mark.parametrize("device, num_tokens, d", GRID)
@pytest.mark.parametrize("dtype", DTYPES)
@torch.inference_mode()
def test_act_and_mul(activation, device, num_tokens, d, dtype):
    random.seed(0)
    torch.manual_seed(0)
    x = torch.randn(num_tokens, 2 * d, dtype=dtype, device=device)
    threshold = random.uniform(0, 1)
    fn = KGEN_ACT_AND_MUL[activation]
    out = fn(x, threshold) if activation == "fatrelu" else fn(x)
    ref = act_and_mul_native(activation, x, threshold)
    if activation == "swigluoai_and_mul":
        torch.testing.assert_close(out, ref, atol=ATOL[dtype],
                                   rtol=SWIGLU_RTOL[dtype])
    elif device == "cuda" and (activation, dtype) in EXACT_ON_CUDA:
        torch.testing.assert_close(out, ref, atol=0.0, rtol=0.0)
    else:
        torch.testing.assert_close(out, ref, atol=ATOL[dtype],
                                   rtol=RTOL[dtype])


def fast_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 *
                                       (1.0 + 0.044715 * x * x)))


def new_gelu(x):
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3.0))))


def quick_gelu(x):
    return x * torch.sigmoid(1.702 * x)


@pytest.mark.parametrize("activation", [(fast_gelu, kgen.gelu_fast),
                                        (new_gelu, kgen.gelu_new),
                                        (quick_gelu, kgen.gelu_quick)])
@pytest.mark.parametrize("device, num_tokens, d", GRID)
@pytest.mark.parametrize("dtype", DTYPES)
@torch.inference_mode()
def test_activation(activation, device, num_tokens, d, dtype):
    torch.manual_seed(0)
    x = torch.randn(num_tokens, d, dtype=dtype, device=device)
    torch.testing.assert_close(activation[1](x), activation[0](x),
                               atol=ATOL[dtype], rtol=RTOL[dtype])
