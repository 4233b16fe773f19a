"""FlashInfer's norm test (tests/utils/test_norm.py: test_norm,
test_norm_quant, test_qknorm, test_fused_add_rmsnorm,
test_fused_add_rmsnorm_quant, test_gemma_norm, test_gemma_fused_add_rmsnorm,
test_layernorm) run through kgen's FlashInfer-rounding forms, as an engine
swapping FlashInfer's calls would: the same shapes, dtypes, strided rows,
references (written here after the test's) and tolerances.

FlashInfer's enable_pdl and specify_out parameters have no kgen counterpart
(kgen's kernels wait on the grid before them where the GPU has it; the
Python ops return new outputs), so each case runs once. The fp8 forms are
kgen's rmsnorm_quant_static and fused_add_rmsnorm_quant_static (vLLM's
rounding: the norm rounded to the dtype before the weight), within the
test's tolerance of 1. The CPU (the interpreter) runs 1 and 19 rows of 111
to 1024; CUDA FlashInfer's grid."""
import pytest
import torch
import torch.nn.functional as F

import kgen

HIDDEN = [111, 500, 1024, 3072, 3584, 4096, 8192, 16384]
GRID = [("cpu", b, h) for b in (1, 19) for h in HIDDEN[:3]]
if torch.cuda.is_available():
    GRID += [("cuda", b, h) for b in (1, 19, 99, 989) for h in HIDDEN]
EPS = 1e-6


def llama_rms_norm(x, w, eps=EPS):
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (xf * w.float()).to(x.dtype)


def llama_rms_norm_quant(x, w, scale, eps=EPS):
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    xf = xf * w.float() * torch.reciprocal(torch.tensor(scale)).float()
    return xf.clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


def gemma_rms_norm(x, w, eps=EPS):
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (xf * (1.0 + w.float())).to(x.dtype)


def fused_add_rms_norm(x, residual, w, eps=EPS):
    s = x.float() + residual.float()
    return llama_rms_norm(s, w, eps).to(x.dtype), s.to(x.dtype)


def rows(device, batch, hidden, dtype, contiguous):
    torch.manual_seed(0)
    if contiguous:
        return torch.randn(batch, hidden, device=device).to(dtype)
    return torch.randn(batch, hidden * 2, device=device).to(dtype)[:, :hidden]


@pytest.mark.parametrize("device, batch, hidden", GRID)
@pytest.mark.parametrize("contiguous", [True, False])
def test_norm(device, batch, hidden, contiguous):
    x = rows(device, batch, hidden, torch.float16, contiguous)
    w = torch.randn(hidden, device=device).to(torch.float16)
    torch.testing.assert_close(llama_rms_norm(x, w),
                               kgen.rmsnorm_flashinfer(x, w), rtol=1e-3,
                               atol=1e-3)


@pytest.mark.parametrize("device, batch, hidden", GRID)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("quant_scale", [0.01, 1.0, 10.0])
@pytest.mark.parametrize("contiguous", [True, False])
def test_norm_quant(device, batch, hidden, dtype, quant_scale, contiguous):
    x = rows(device, batch, hidden, dtype, contiguous)
    w = torch.randn(hidden, device=device).to(dtype)
    y = kgen.rmsnorm_quant_static(x, w, quant_scale)
    torch.testing.assert_close(llama_rms_norm_quant(x, w, quant_scale).float(),
                               y.float(), rtol=1, atol=1)


@pytest.mark.parametrize("device", sorted({g[0] for g in GRID}))
@pytest.mark.parametrize("batch", [1, 19, 99, 989])
@pytest.mark.parametrize("num_heads", [4, 7, 16])
@pytest.mark.parametrize("head_dim", [64, 128, 256, 512])
@pytest.mark.parametrize("contiguous", [True, False])
def test_qknorm(device, batch, num_heads, head_dim, contiguous):
    if device == "cpu" and batch > 19:
        pytest.skip("the interpreter: few rows")
    torch.manual_seed(0)
    if contiguous:
        x = torch.randn(batch, num_heads, head_dim, device=device).half()
    else:
        x = torch.randn(batch, num_heads * 2, head_dim,
                        device=device).half()[:, :num_heads]
    w = torch.randn(head_dim, device=device).half()
    torch.testing.assert_close(llama_rms_norm(x, w),
                               kgen.rmsnorm_flashinfer(x, w), rtol=1e-3,
                               atol=1e-3)


@pytest.mark.parametrize("device, batch, hidden", GRID)
@pytest.mark.parametrize("contiguous", [True, False])
def test_fused_add_rmsnorm(device, batch, hidden, contiguous):
    x = rows(device, batch, hidden, torch.float16, contiguous)
    residual = torch.randn_like(x)
    w = torch.randn(hidden, device=device).half()
    x_native, residual_native = fused_add_rms_norm(x.clone(), residual.clone(),
                                                   w)
    x_fused, residual_fused = x.clone(), residual.clone()
    kgen.fused_add_rmsnorm_flashinfer(x_fused, residual_fused, w, EPS)
    torch.testing.assert_close(x_fused, x_native, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(residual_fused, residual_native, rtol=1e-3,
                               atol=1e-3)


@pytest.mark.parametrize("device, batch, hidden", GRID)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("quant_scale", [0.01, 1.0, 10.0])
@pytest.mark.parametrize("contiguous", [True, False])
def test_fused_add_rmsnorm_quant(device, batch, hidden, dtype, quant_scale,
                                 contiguous):
    x = rows(device, batch, hidden, dtype, contiguous)
    residual = torch.randn_like(x)
    w = torch.randn(hidden, device=device).to(dtype)
    s = x.float() + residual.float()
    want = llama_rms_norm_quant(s, w, quant_scale)
    residual_fused = residual.clone()
    y = kgen.fused_add_rmsnorm_quant_static(x.clone(), residual_fused, w,
                                            quant_scale, EPS)
    torch.testing.assert_close(y.float(), want.float(), rtol=1, atol=1)
    torch.testing.assert_close(residual_fused, s.to(dtype), rtol=1e-3,
                               atol=1e-3)


@pytest.mark.parametrize("device, batch, hidden", GRID)
@pytest.mark.parametrize("contiguous", [True, False])
def test_gemma_norm(device, batch, hidden, contiguous):
    x = rows(device, batch, hidden, torch.float16, contiguous)
    w = torch.randn(hidden, device=device).half()
    torch.testing.assert_close(gemma_rms_norm(x, w),
                               kgen.gemma_rmsnorm(x, w), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("device, batch, hidden", GRID)
@pytest.mark.parametrize("contiguous", [True, False])
def test_gemma_fused_add_rmsnorm(device, batch, hidden, contiguous):
    x = rows(device, batch, hidden, torch.float16, contiguous)
    residual = torch.randn_like(x)
    w = torch.randn(hidden, device=device).half()
    s = x + residual  # the test's reference rounds the sum to the dtype
    x_native, residual_native = gemma_rms_norm(s, w), s
    x_fused, residual_fused = x.clone(), residual.clone()
    kgen.gemma_fused_add_rmsnorm_flashinfer(x_fused, residual_fused, w, EPS)
    torch.testing.assert_close(x_fused, x_native, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(residual_fused, residual_native, rtol=1e-3,
                               atol=1e-3)


@pytest.mark.parametrize("device", sorted({g[0] for g in GRID}))
@pytest.mark.parametrize("batch", [1, 2, 3, 128])
@pytest.mark.parametrize("hidden", [128, 129, 1024, 16384])
def test_layernorm(device, batch, hidden):
    if device == "cpu" and hidden > 1024:
        pytest.skip("the interpreter: short rows")
    torch.manual_seed(0)
    x = torch.randn(batch, hidden, dtype=torch.bfloat16, device=device)
    gamma = torch.randn(hidden, device=device)
    beta = torch.randn(hidden, device=device)
    out = kgen.layernorm(x, gamma, beta, EPS)
    ref = F.layer_norm(x.float(), (hidden,), gamma, beta, EPS).to(x.dtype)
    torch.testing.assert_close(out, ref, rtol=1e-2, atol=1e-2)
