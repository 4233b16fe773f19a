"""How far kgen's activations are from vLLM's forward_native references
(torch ops in the dtype) on vLLM's test grid: elements that differ and the
largest difference in ulps of the output dtype, per op and dtype."""
import math

import torch
import torch.nn.functional as F

import kgen

dev = "cuda" if torch.cuda.is_available() else "cpu"


def native(name, x, thr=0.5):
    d = x.shape[-1] // 2
    a, b = x[..., :d], x[..., d:]
    if name == "silu_and_mul":
        return F.silu(a) * b
    if name == "mul_and_silu":
        return a * F.silu(b)
    if name == "gelu_and_mul":
        return F.gelu(a) * b
    if name == "gelu_tanh_and_mul":
        return F.gelu(a, approximate="tanh") * b
    if name == "fatrelu_and_mul":
        return F.threshold(a, thr, 0.0) * b
    if name == "swigluoai_and_mul":
        g, u = x[..., ::2].clamp(max=7.0), x[..., 1::2].clamp(-7.0, 7.0)
        return (u + 1) * (g * torch.sigmoid(g * 1.702))
    if name == "gelu_fast":
        return 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 *
                                           (1.0 + 0.044715 * x * x)))
    if name == "gelu_new":
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + torch.tanh(c * (x + 0.044715 *
                                                torch.pow(x, 3.0))))
    if name == "gelu_quick":
        return x * torch.sigmoid(1.702 * x)


def ulps(got, ref):
    eps = torch.finfo(ref.dtype).eps
    scale = ref.float().abs().clamp(min=torch.finfo(ref.dtype).tiny) * eps
    return ((got.float() - ref.float()).abs() / scale).max().item()


print(f"device {dev} {torch.cuda.get_device_name() if dev == 'cuda' else ''}")
print("| op | dtype | elements differing | most ulps |")
print("|---|---|---|---|")
for name in ["silu_and_mul", "mul_and_silu", "gelu_and_mul",
             "gelu_tanh_and_mul", "fatrelu_and_mul", "swigluoai_and_mul",
             "gelu_fast", "gelu_new", "gelu_quick"]:
    for dt in [torch.half, torch.bfloat16, torch.float]:
        n = bad = 0
        worst = 0.0
        for t in [7, 83, 2048]:
            for d in [512, 13824]:
                torch.manual_seed(0)
                gated = name.endswith("_mul")
                x = torch.randn(t, 2 * d if gated else d, dtype=dt,
                                device=dev)
                fn = getattr(kgen, name)
                got = fn(x, 0.5) if name == "fatrelu_and_mul" else fn(x)
                ref = native(name, x)
                n += got.numel()
                bad += int((got != ref).sum())
                worst = max(worst, ulps(got, ref))
        print(f"| {name} | {str(dt)[6:]} | {bad} of {n} | {worst:.2f} |",
              flush=True)
