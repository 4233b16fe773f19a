"""vLLM's per-token-group quantization test (tests/kernels/quantization/
test_per_token_group_quant.py: test_per_token_group_quant_fp8 and _int8)
run through kgen, as an engine porting it would: the same shapes, column-
major and TMA-aligned scale layouts, UE8M0 scales, group sizes, inputs
(bf16 randn * 8, seed 42) and tolerances (allclose, 0.15 on the quantized
values, 0.01 on the scales).

The reference is vLLM's Triton kernel, written here in torch: s = max(amax,
1e-10) / qmax a group, for UE8M0 2^ceil(log2(s)); x / s clamped, then cast
(fp8 to nearest, int8 truncated). Its division runs in f64 and rounds once to
f32, which is the f32 quotient rounded (as vLLM's CUDA kernel divides): torch
on a GPU multiplies by the reciprocal of a scalar divisor, an ulp off at
times. Beside the tolerances the test checks the layouts' strides (vLLM's: the
scales of each [M, groups] matrix column-major, M or, TMA-aligned, M rounded
up to 4 floats apart) and that kgen's scales equal the reference's exactly."""
import pytest
import torch

import kgen

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
FP8_MAX = 448.0


def ref_group_quant(x, group, quant_dtype, ue8m0=False):
    g = x.float().unflatten(-1, (-1, group))
    hi = 127.0 if quant_dtype == torch.int8 else FP8_MAX
    s = (g.abs().amax(-1, keepdim=True).clamp(min=1e-10).double() / hi)
    if ue8m0:
        s = torch.exp2(torch.ceil(torch.log2(s.float().double())))
    s = s.float()
    q = (g / s).clamp(-hi - (quant_dtype == torch.int8), hi).to(quant_dtype)
    return q.flatten(-2), s.squeeze(-1)


def inputs(shape, device):
    torch.manual_seed(42)
    return torch.randn(shape, dtype=torch.bfloat16).to(device) * 8


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(31, 128), (32, 128), (63, 256),
                                   (64, 256), (16, 512)])
@pytest.mark.parametrize("column_major", [False, True])
@pytest.mark.parametrize("tma_aligned", [False, True])
@pytest.mark.parametrize("scale_ue8m0", [False, True])
@pytest.mark.parametrize("group_size", [64, 128])
def test_per_token_group_quant_fp8(device, shape, column_major, tma_aligned,
                                   scale_ue8m0, group_size):
    x = inputs(shape, device)
    out_q, scale = kgen.per_token_group_quant_fp8(
        x, group_size, column_major_scales=column_major,
        tma_aligned_scales=tma_aligned, use_ue8m0=scale_ue8m0)
    ref_q, ref_s = ref_group_quant(x, group_size, torch.float8_e4m3fn,
                                   scale_ue8m0)
    assert torch.allclose(out_q.float(), ref_q.float(), atol=0.15, rtol=0.15)
    assert torch.allclose(scale, ref_s, atol=0.01, rtol=0.01)
    assert torch.equal(scale, ref_s)
    m, groups = shape[0], shape[1] // group_size
    p = (m + 3) // 4 * 4 if tma_aligned else m
    assert scale.shape == (m, groups)
    assert scale.stride() == ((1, p) if column_major else (groups, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(32, 128), (64, 256), (16, 512)])
@pytest.mark.parametrize("group_size", [64, 128])
def test_per_token_group_quant_int8(device, shape, group_size):
    x = inputs(shape, device)
    out_q, scale = kgen.per_token_group_quant_int8(x, group_size)
    ref_q, ref_s = ref_group_quant(x, group_size, torch.int8)
    assert torch.allclose(out_q.float(), ref_q.float(), atol=0.15, rtol=0.15)
    assert torch.allclose(scale, ref_s, atol=0.01, rtol=0.01)
    assert torch.equal(scale, ref_s)
