"""Per-row scalars at any element (c7c7328): per_token_group_quant_fp8's
sm_90 kernel through kgen_ctypes with its scales written into a buffer at
element 1 (4 bytes past a 16-byte boundary), against the same launch at
element 0: the variant the runtime picks and the outputs, bit for bit.
    python3 slice.py BUNDLE RUNTIME_LIB"""
import sys

import torch

sys.path.insert(0, "bench/python")
import kgen_ctypes as kg  # noqa: E402

kg.load(sys.argv[2])
base = sys.argv[1] + "/per_token_group_quant_fp8_bf16_group_size128_sm_90"
k = kg.Kernel(base + ".ptx", base + ".json")
print(torch.cuda.get_device_name(), "| variants:", ", ".join(k.variants))
print("| T | H | variant, scale at element 0 | at element 1 | y equal | scales equal |")
print("|---|---|---|---|---|---|")
for T, H in ((1, 4096), (7, 7168), (512, 7168), (16384, 7168)):
    G = H // 128
    x = torch.randn(T, H, device="cuda", dtype=torch.bfloat16)
    out = []
    for at in (0, 1):
        y = torch.full((T, H), 1.0, device="cuda").to(torch.float8_e4m3fn)
        buf = torch.full((T * G + 1,), -1.0, device="cuda")
        s = buf[at:at + T * G]
        launch = k.bind(x, y, s, 1e-10, G, 1, rows=T * G)
        launch()
        torch.cuda.synchronize()
        untouched = buf[1 - at:1 - at + 1] if at == 1 else buf[-1:]
        assert untouched.item() == -1.0, "wrote outside the scales"
        out.append((k.variants[launch.variant], y.view(torch.uint8), s.clone()))
    print(f"| {T} | {H} | {out[0][0]} | {out[1][0]} | "
          f"{torch.equal(out[0][1], out[1][1])} | {torch.equal(out[0][2], out[1][2])} |")
