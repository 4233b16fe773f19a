"""The cost of column-major scales in kgen.per_token_group_quant_fp8 (one
copy of the scales after the kernel): the torch op with row-major, column-major
and TMA-aligned column-major scales, bf16 x [T, 7168], groups of 128, UE8M0,
and vLLM's layout written by the Triton kernel torch.compile makes of the
same formula. Steady: 20 calls over rotated inputs (> L2) in one CUDA graph,
median of 7 replays / 20."""
import statistics

import torch

import kgen

H, G = 7168, 128


def steady(fn, xs):
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for x in xs[:3]:
            fn(x)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for x in xs:
            fn(x)
    times = []
    for _ in range(7):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / len(xs))
    return statistics.median(times)


def ref(x, tma):
    g = x.float().unflatten(-1, (-1, G))
    s = g.abs().amax(-1, keepdim=True).clamp(min=1e-10) / 448.0
    s = torch.exp2(torch.ceil(torch.log2(s.clamp(min=1e-10))))
    y = (g / s).clamp(-448, 448).to(torch.float8_e4m3fn).flatten(-2)
    m, k = x.shape[0], x.shape[1] // G
    p = (m + 3) // 4 * 4 if tma else m
    out = torch.empty_strided((m, k), (1, p), device=x.device)
    out.copy_(s.squeeze(-1))
    return y, out


print(f"{torch.cuda.get_device_name()}, bf16 x [T, {H}], groups of {G}, ue8m0")
print("| T | row-major us | column-major us | TMA-aligned us | compile TMA us |")
print("|---|---|---|---|---|")
comp = torch.compile(ref)
for T in (1, 64, 512, 4096, 16384):
    n = max(2, int(3 * 64e6 // (T * H * 2)) + 1)
    xs = [torch.randn(T, H, device="cuda", dtype=torch.bfloat16)
          for _ in range(min(n, 20))]
    want = kgen.per_token_group_quant_fp8(xs[0], G, 1e-10, True)[1]
    for cm, tma in ((True, False), (True, True)):
        s = kgen.per_token_group_quant_fp8(xs[0], G, 1e-10, True, cm, tma)[1]
        assert torch.equal(s, want), (T, cm, tma)
        assert torch.equal(comp(xs[0], tma)[1], want), (T, "compile")
    r = [steady(lambda x, c=c, t=t: kgen.per_token_group_quant_fp8(
        x, G, 1e-10, True, c, t), xs)
        for c, t in ((False, False), (True, False), (True, True))]
    c = steady(lambda x: comp(x, True), xs)
    print(f"| {T} | {r[0]:.1f} | {r[1]:.1f} | {r[2]:.1f} | {c:.1f} |", flush=True)
