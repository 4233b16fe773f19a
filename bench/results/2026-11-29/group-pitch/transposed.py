"""Transposed group scales against row-major ones, through the torch ops in
CUDA graphs (triton's do_bench_cudagraph, median): the group-scale norms and
SwiGLU with is_scale_transposed=False and True, beside the same run's
device-to-device copy of the op's bytes. Also checks each transposed result
equals the row-major one bit for bit."""
import sys

import torch
import triton

import kgen

rows = []
for T in (1, 512, 4096, 16384):
    for H in (4096, 7168):
        x = torch.randn(T, H, dtype=torch.bfloat16, device="cuda")
        w = torch.rand(H, dtype=torch.bfloat16, device="cuda") + 0.5
        x2 = torch.randn(T, 2 * H, dtype=torch.bfloat16, device="cuda")
        cases = {
            "rmsnorm_quant_group": lambda t: kgen.rmsnorm_quant_group(
                x, w, 128, None, 1e-6, t),
            "rmsnorm_quant_int8_group": lambda t: kgen.rmsnorm_quant_int8_group(
                x, w, 128, 1e-6, t),
            "silu_and_mul_quant_group": lambda t: kgen.silu_and_mul_quant_group(
                x2, 128, None, t),
        }
        for name, fn in cases.items():
            a, b = fn(False), fn(True)
            same = all(torch.equal(p.view(torch.uint8) if p.dtype.itemsize == 1
                                   else p, q.view(torch.uint8)
                                   if q.dtype.itemsize == 1 else q)
                       for p, q in zip(a, b))
            assert b[1].stride() == (1, T) or T == 1, b[1].stride()
            nbytes = (x2 if "silu" in name else x).numel() * 2 + a[0].numel() \
                + a[1].numel() * 4
            src = torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            tc = triton.testing.do_bench_cudagraph(lambda: dst.copy_(src))
            t0 = triton.testing.do_bench_cudagraph(lambda: fn(False))
            t1 = triton.testing.do_bench_cudagraph(lambda: fn(True))
            rows.append((name, T, H, t0 * 1e3, t1 * 1e3, tc * 1e3, same))
print("op T H row-major_us transposed_us transposed/row copy_us equal")
for r in rows:
    print("%s %d %d %.2f %.2f %.3f %.2f %s" % (r[0], r[1], r[2], r[3], r[4],
                                              r[4] / r[3], r[5], r[6]))
sys.exit(0 if all(r[6] for r in rows) else 1)
