"""How fast can a kernel move the first r of every 128 bf16 elements (rope's
rotated span of a head), read and written? torch's strided copy and mul_
against a full copy, on a GPU: python3 bench/python/strided_probe.py
(CUDA events, median of 50, 16384 tokens x 40 heads)."""
import torch
torch.manual_seed(0)
T, H, D = 16384, 40, 128
x = torch.randn(T * H, D, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
def t(fn):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(50):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    ts.sort(); return ts[len(ts) // 2]
big = torch.empty(2 ** 29, dtype=torch.uint8, device="cuda"); big2 = torch.empty_like(big)
us = t(lambda: big2.copy_(big)); memcpy = 2 * big.numel() / us / 1e3
print(f"memcpy 1 GiB: {us:.1f} us, {memcpy:.0f} GB/s")
for r in (128, 64, 48, 32):
    us = t(lambda: y[:, :r].copy_(x[:, :r]))
    gbs = 2 * T * H * r * 2 / us / 1e3
    us2 = t(lambda: x[:, :r].mul_(1.0))
    gbs2 = 2 * T * H * r * 2 / us2 / 1e3
    print(f"first {r:3d} of 128: copy {us:7.1f} us {gbs:5.0f} GB/s ({100*gbs/memcpy:3.0f}%), in-place mul {us2:7.1f} us {gbs2:5.0f} GB/s ({100*gbs2/memcpy:3.0f}%)")
