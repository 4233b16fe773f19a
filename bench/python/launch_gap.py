"""Where a cold single call's time goes: the kernel, or the gap before it.

One row of silu_and_mul (bf16, 4096) after a 256 MiB fill, with CUDA events
around the call as torch_bench's cold timing has them, under torch.profiler
(CUPTI): the kernel's duration and the gap from the fill's end to its start,
for the same work launched seven ways: Triton's launcher; Triton's cubin and
its PTX, and kgen's PTX and ptxas cubins (sm_90, sm_90a), each loaded and
launched here with cuModuleLoadData / cuLaunchKernel; and torch.mul. Also
the gap with no events between the fill and the call.

  python3 bench/python/launch_gap.py KERNELS_DIR OUT_DIR
"""
import ctypes
import json
import os
import statistics
import subprocess
import sys

import torch
import triton
import triton.language as tl

if len(sys.argv) != 3:
    raise SystemExit(__doc__)
kdir, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
dev = torch.device("cuda")
torch.empty(1, device=dev)
cu = ctypes.CDLL("libcuda.so.1")
P = ctypes.c_void_p


def check(r, what):
    if r != 0:
        raise RuntimeError("%s: CUresult %d" % (what, r))


def load(image, entry):
    mod, fn = P(), P()
    check(cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(image)), "load " + entry)
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, entry.encode()), "get " + entry)
    return fn


def launcher(fn, grid, block, args, shmem=0):
    vals = [ctypes.c_uint64(a) for a in args]
    arr = (P * len(vals))(*[ctypes.cast(ctypes.byref(v), P) for v in vals])
    def go():
        s = torch.cuda.current_stream().cuda_stream
        check(cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, shmem, P(s), arr, None), "launch")
    go.keep = (vals, arr)
    return go


@triton.jit
def silu_mul(x_ptr, y_ptr, D: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs).to(tl.float32)
    b = tl.load(x_ptr + D + offs).to(tl.float32)
    tl.store(y_ptr + offs, (a * tl.sigmoid(a) * b).to(tl.bfloat16))


D = 4096
x = torch.randn(1, 2 * D, device=dev).bfloat16()
y = torch.empty(1, D, device=dev, dtype=torch.bfloat16)
ref = (torch.nn.functional.silu(x[:, :D].float()) * x[:, D:].float()).bfloat16()
ck = silu_mul[(D // 1024,)](x, y, D=D, BLOCK=1024, num_warps=4)
torch.cuda.synchronize()
tptx = ck.asm["ptx"]
nparams = sum(1 for l in tptx.splitlines() if l.strip().startswith(".param"))
print("triton kernel", ck.metadata.name, "shared", ck.metadata.shared, "params", nparams, "target", [l for l in tptx.splitlines() if l.startswith(".target")])
calls = {}
calls["triton_native"] = lambda: silu_mul[(D // 1024,)](x, y, D=D, BLOCK=1024, num_warps=4)
targs = [x.data_ptr(), y.data_ptr()] + [0] * (nparams - 2)
calls["triton_cubin_ctypes"] = launcher(load(ck.asm["cubin"], ck.metadata.name), D // 1024, 128, targs, ck.metadata.shared)
open(os.path.join(out, "triton.ptx"), "w").write(tptx)
# The same Triton PTX, JIT-compiled by the driver.
calls["triton_ptx_ctypes"] = launcher(load(tptx.encode() + b"\0", ck.metadata.name), D // 1024, 128, targs, ck.metadata.shared)

ptx_path = os.path.join(kdir, "silu_and_mul_bf16_d4096_sm_90.ptx")
entry = "silu_and_mul_bf16_d4096_sm_90_vec"
kargs = [x.data_ptr(), y.data_ptr(), 2 * D, D, 1]
ptx = open(ptx_path, "rb").read()
calls["kgen_ptx_ctypes"] = launcher(load(ptx + b"\0", entry), 2, 256, kargs)
for arch in ("sm_90", "sm_90a"):
    cub = os.path.join(out, "kgen_%s.cubin" % arch)
    src = ptx.replace(b".target sm_90", b".target " + arch.encode()) if arch == "sm_90a" else ptx
    open(cub + ".ptx", "wb").write(src)
    subprocess.check_call(["/usr/local/cuda/bin/ptxas", "-arch=" + arch, "-O3", cub + ".ptx", "-o", cub])
    calls["kgen_cubin_%s" % arch] = launcher(load(open(cub, "rb").read(), entry), 2, 256, kargs)
ma = torch.randn(4096, device=dev).bfloat16(); mb = torch.randn(4096, device=dev).bfloat16(); mc = torch.empty_like(ma)
calls["torch_mul"] = lambda: torch.mul(ma, mb, out=mc)

for name, c in calls.items():
    y.fill_(float("nan"))
    c()
    torch.cuda.synchronize()
    if name != "torch_mul":
        err = (y.float() - ref.float()).abs().max().item()
        print("%-22s max|err| %.3g" % (name, err))

flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)


def after_fills(call, n, events):
    """Runs n (fill, call) pairs under the profiler, with CUDA events around
    each call when `events`. Returns (event us, [kernel us], [gap us]): a
    gap runs from a fill's end to the next kernel's start."""
    ev = [(torch.cuda.Event(enable_timing=True),
           torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for i, (s, e) in enumerate(ev):
            flush.fill_(i & 0x7F)
            if events:
                s.record()
            call()
            if events:
                e.record()
        torch.cuda.synchronize()
    path = os.path.join(out, "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        tr = json.load(f)
    os.remove(path)
    ks = sorted([k for k in tr["traceEvents"] if k.get("cat") == "kernel"],
                key=lambda k: k["ts"])
    durs, gaps, prev_end = [], [], None
    for k in ks:
        if "fill" in k["name"].lower():
            prev_end = k["ts"] + k["dur"]
            continue
        durs.append(k["dur"])
        if prev_end is not None:
            gaps.append(k["ts"] - prev_end)
    evus = [s.elapsed_time(e) * 1e3 for s, e in ev[3:]] if events else [0.0]
    return statistics.median(evus), durs, gaps


res = []
for rep in range(2):
    for name, call in calls.items():
        event_us, durs, gaps = after_fills(call, 50, True)
        _, _, gaps2 = after_fills(call, 50, False)
        row = dict(name=name, rep=rep, event_us=event_us,
                   kernel_us=statistics.median(durs[3:]),
                   gap_us=statistics.median(gaps[3:]),
                   gap_noevent_us=statistics.median(gaps2[3:]))
        res.append(row)
        print("%-22s rep %d  event %6.2f  kernel %6.2f  gap %6.2f  "
              "gap(no events) %6.2f" % (
                  name, rep, row["event_us"], row["kernel_us"], row["gap_us"],
                  row["gap_noevent_us"]), flush=True)
json.dump(res, open(os.path.join(out, "launch_probe.json"), "w"), indent=1)
