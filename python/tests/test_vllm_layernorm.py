"""vLLM's layernorm test (tests/kernels/core/test_layernorm.py) run through
kgen, as an engine porting it would: test_rms_norm (strided inputs, a
residual added in place), test_rms_norm_weightless, test_fused_rms_norm_quant
(the fused static fp8 forms against the norm then vLLM's static quant),
test_gemma_rms_norm and its mixed-dtype case (an f32 weight by bf16 rows),
with vLLM's inputs and tolerances (1e-2 for the norms; 1e-3 between fused
and unfused fp8).

References as vLLM's layers' forward_native, written here in torch (the
weightless norm with a residual: kgen.fused_add_rmsnorm with weight None).
vLLM's weightless tolerance comes from its op registry; 1e-2, as its other
norms, is used here. The CPU (the interpreter) runs 7 and 83
tokens of the hidden sizes up to 769; CUDA vLLM's grid."""
import pytest
import torch

import kgen

DTYPES = [torch.half, torch.bfloat16, torch.float]
HIDDEN_SIZES = [8, 768, 769, 5120, 5125, 8192]
GRID = [("cpu", t, h) for t in (7, 83) for h in HIDDEN_SIZES[:3]]
if torch.cuda.is_available():
    GRID += [("cuda", t, h) for t in (7, 83, 4096) for h in HIDDEN_SIZES]
EPS = 1e-6


def rms_norm_native(x, weight, residual):
    # RMSNorm.forward_native: the f32 sum (the residual gets it rounded),
    # normalised in f32, rounded, times the weight in the dtype.
    orig = x.dtype
    xf = x.float()
    if residual is not None:
        xf = xf + residual.float()
        residual = xf.to(orig)
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    y = xf.to(orig)
    return (y if weight is None else y * weight), residual


def gemma_native(x, weight, residual):
    # GemmaRMSNorm.forward_native: the sum in the dtype, then the norm and
    # the 1 + weight offset in f32, rounded once.
    orig = x.dtype
    if residual is not None:
        x = x + residual
        residual = x
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    return (xf * (1.0 + weight.float())).to(orig), residual


def inputs(device, num_tokens, hidden_size, dtype, strided):
    torch.manual_seed(0)
    scale = 1 / (2 * hidden_size)
    last = 2 * hidden_size if strided else hidden_size
    x = torch.randn(num_tokens, last, dtype=dtype, device=device)
    x = x[..., :hidden_size]
    assert x.is_contiguous() != strided
    x *= scale
    return x, scale


def weight(x, mean):
    # vLLM's: normal(mean, 0.1) in the rows' dtype.
    return torch.empty(x.shape[-1], dtype=x.dtype,
                       device=x.device).normal_(mean=mean, std=0.1)


def strided_like(x, scale):
    # vLLM's residual: x's strides, normal(0, scale).
    return x.new_empty_strided(x.size(), x.stride()).normal_(std=scale)


@pytest.mark.parametrize("device, num_tokens, hidden_size", GRID)
@pytest.mark.parametrize("add_residual", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strided_input", [False, True])
@torch.inference_mode()
def test_rms_norm(device, num_tokens, hidden_size, add_residual, dtype,
                  strided_input):
    x, scale = inputs(device, num_tokens, hidden_size, dtype, strided_input)
    w = weight(x, 1.0)
    residual = None
    if add_residual:
        residual = strided_like(x, scale)
    ref_out, ref_res = rms_norm_native(x, w, residual)
    if add_residual:
        kgen.fused_add_rmsnorm(x, residual, w, EPS)  # in place
        torch.testing.assert_close(x, ref_out, atol=1e-2, rtol=1e-2)
        torch.testing.assert_close(residual, ref_res, atol=1e-2, rtol=1e-2)
    else:
        torch.testing.assert_close(kgen.rmsnorm(x, w, EPS), ref_out,
                                   atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("device, num_tokens, hidden_size", GRID)
@pytest.mark.parametrize("add_residual", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@torch.inference_mode()
def test_rms_norm_weightless(device, num_tokens, hidden_size, add_residual,
                             dtype):
    torch.manual_seed(0)
    x = torch.randn(num_tokens, hidden_size, dtype=dtype, device=device)
    residual = torch.randn_like(x) if add_residual else None
    ref_out, ref_res = rms_norm_native(x, None, residual)
    if add_residual:
        kgen.fused_add_rmsnorm(x, residual, None, EPS)  # in place
        torch.testing.assert_close(x, ref_out, atol=1e-2, rtol=1e-2)
        torch.testing.assert_close(residual, ref_res, atol=1e-2, rtol=1e-2)
    else:
        torch.testing.assert_close(kgen.rmsnorm_noweight(x, EPS), ref_out,
                                   atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("device, num_tokens, hidden_size", GRID)
@pytest.mark.parametrize("add_residual", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("quant_scale", [0.01, 1.0, 10.0])
@pytest.mark.parametrize("strided_input", [False, True])
@torch.inference_mode()
def test_fused_rms_norm_quant(device, num_tokens, hidden_size, add_residual,
                              dtype, quant_scale, strided_input):
    x, scale = inputs(device, num_tokens, hidden_size, dtype, strided_input)
    w = weight(x, 1.0)

    def static_quant(y):  # vLLM's static_scaled_fp8_quant
        return (y.float() / quant_scale).clamp(-448.0, 448.0).to(
            torch.float8_e4m3fn)

    if add_residual:
        residual = torch.randn_like(x) * scale
        residual_fused = residual.clone()
        fused = kgen.fused_add_rmsnorm_quant_static(
            x, residual_fused, w, quant_scale, EPS)
        x_unfused = x.clone()
        kgen.fused_add_rmsnorm(x_unfused, residual, w, EPS)
        unfused = static_quant(x_unfused)
        torch.testing.assert_close(residual_fused, residual, atol=1e-2,
                                   rtol=1e-2)
    else:
        fused = kgen.rmsnorm_quant_static(x, w, quant_scale, EPS)
        unfused = static_quant(kgen.rmsnorm(x, w, EPS))
    torch.testing.assert_close(unfused.float(), fused.float(), atol=1e-3,
                               rtol=1e-3)


@pytest.mark.parametrize("device, num_tokens, hidden_size", GRID)
@pytest.mark.parametrize("add_residual", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("strided_input", [False, True])
@torch.inference_mode()
def test_gemma_rms_norm(device, num_tokens, hidden_size, add_residual, dtype,
                        strided_input):
    x, scale = inputs(device, num_tokens, hidden_size, dtype, strided_input)
    w = weight(x, 0.0)
    if add_residual:
        residual = strided_like(x, scale)
        ref_out, ref_res = gemma_native(x, w, residual.clone())
        kgen.gemma_fused_add_rmsnorm(x, residual, w, EPS)  # in place
        torch.testing.assert_close(x, ref_out, atol=1e-2, rtol=1e-2)
        torch.testing.assert_close(residual, ref_res, atol=1e-2, rtol=1e-2)
    else:
        ref_out, _ = gemma_native(x, w, None)
        torch.testing.assert_close(kgen.gemma_rmsnorm(x, w, EPS), ref_out,
                                   atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("device", sorted({g[0] for g in GRID}))
@torch.inference_mode()
def test_gemma_rms_norm_mixed_input_weight_dtype(device):
    torch.manual_seed(0)
    x = torch.randn(32, 1024, dtype=torch.bfloat16, device=device)
    weight = torch.empty(1024, device=device).normal_(mean=0.0, std=0.1)
    out = kgen.gemma_rmsnorm(x, weight, EPS)
    xf = x.float()
    ref = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
           * (weight + 1.0)).to(x.dtype)
    assert out.dtype == x.dtype
    torch.testing.assert_close(out, ref, atol=1e-2, rtol=1e-2)
