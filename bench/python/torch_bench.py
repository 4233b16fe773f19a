#!/usr/bin/env python3
"""kgen kernels against PyTorch eager and torch.compile, in one process.

    python3 torch_bench.py --kernels KERNEL_DIR [--lib libkgen_runtime.so]
                           [--out OUT_DIR]

For bf16 and each op x T (rows) x hidden, three implementations of the same
formula:
  kgen     the bundle's kernel specialized for that hidden, launched through
           kgen_ctypes (libkgen_runtime.so) on PyTorch's current stream;
  eager    the formula written with torch ops as the op file / Hugging Face
           write it (torch_formulas below);
  compile  torch.compile(dynamic=False) of that same function (default mode).
Each shape is first checked: kgen and compile against eager (outputs of kgen
poisoned with NaN first; elementwise |a - b| <= 1e-2 + 2^-6 |b|, the bf16
tolerance of docs/design.md, and ||a - b|| / ||b|| <= 1e-2; no NaN).
Then each is timed two ways:
  cold    one call after an L2 flush (a 256 MiB buffer written), median of
          30 calls (after 3 warm-ups), CUDA events around the call only;
  steady  K back-to-back calls over rotated copies of all the call's tensors
          (inputs, weights and outputs; together more than 1.2 x L2, at least
          2 copies) captured in one CUDA graph; median over 7 replays (after
          one) of replay time / K. K is a multiple of the copies, large enough
          for about 1 ms of work per replay.
GB/s counts the fewest bytes: inputs read once, outputs written once, weights
once. A 1 GiB device-to-device copy (bytes read + written, torch's copy_,
median of 20) in the same run gives "% of memcpy".

torch.compile compiles once per shape. To keep the run short, the compiles
are done first in parallel worker processes (--workers), which fill
Inductor's on-disk caches (FX graph and Triton caches, local autotune cache
off so that the timed process re-picks its configs on a quiet GPU); the timed
process then mostly hits the caches. The compile cost is reported (worker
wall time per shape, and the timed process's first call per shape).
A deadline (--deadline-s) stops starting new shapes; shapes not run are
listed. Cases that move more than 4.3 GB are skipped.

Writes to OUT_DIR: torch_bench.csv, torch_bench.md, torch_bench_plots.tar.gz
(one PNG per op, if matplotlib is there) and prints the compact table last.
`--plot-only CSV` redraws the PNGs from a CSV (e.g. on a machine without a
GPU).
"""

import argparse
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kgen_ctypes as kg  # noqa: E402

DTYPE = "bf16"
NORM_OPS = ["rmsnorm", "gemma_rmsnorm", "fused_add_rmsnorm", "layernorm",
            "softmax"]
ACT_OPS = ["silu_and_mul", "gelu_tanh_and_mul"]
TOKENS = [1, 32, 512, 4096, 16384, 65536]
HIDDENS = [2048, 4096, 8192, 16384]
MAX_BYTES = 4.3e9
IMPLS = ["kgen", "eager", "compile"]
# Overridden by selftest_emu.py only (a CPU run against the emulated driver).
DEVICE = "cuda"
WORKER_CMD = None  # default: [python, this file]
FLUSH_BYTES = 256 << 20
ATOL, RTOL, REL_NORM_TOL = 1e-2, 2.0 ** -6, 1e-2

# ---------------------------------------------------------------------------
# The formulas, as eager PyTorch (what torch.compile compiles too).
# torch is imported lazily so that --plot-only runs without it.
torch = None
F = None


def _import_torch():
    global torch, F
    if torch is None:
        import torch as _torch
        import torch.nn.functional as _F
        torch, F = _torch, _F
    return torch


def rmsnorm_ref(x, weight, eps):
    # transformers LlamaRMSNorm.forward
    input_dtype = x.dtype
    hidden_states = x.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return weight * hidden_states.to(input_dtype)


def f_rmsnorm(x, weight):
    return rmsnorm_ref(x, weight, 1e-6)


def f_gemma_rmsnorm(x, weight):
    # transformers GemmaRMSNorm.forward (_norm in f32, (1 + w) in f32)
    xf = x.float()
    output = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    output = output * (1.0 + weight.float())
    return output.type_as(x)


def f_fused_add_rmsnorm(x, residual, weight):
    # vLLM's fused_add_rmsnorm reference (out of place): r = x + residual,
    # y = rmsnorm(r); returns (y, r). kgen does it in place: x <- y,
    # residual <- r.
    r = x + residual
    return rmsnorm_ref(r, weight, 1e-6), r


def f_layernorm(x, weight, bias):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, 1e-5)


def f_softmax(x):
    return torch.softmax(x, dim=-1)


def f_silu_and_mul(x):
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


def f_gelu_tanh_and_mul(x):
    d = x.shape[-1] // 2
    return F.gelu(x[..., :d], approximate="tanh") * x[..., d:]


# Per op: the tensors of the kgen kernel (name, layout, role, init), the
# eager function's inputs, the kgen outputs compared with the eager results
# (in order), the scalars. Layout: row = [T, h], row2 = [T, 2h], vec = [h].
# Role: in, out, inout (kgen writes it in place).
OPS = {
    "rmsnorm": dict(
        fn=f_rmsnorm, tensors=[("x", "row", "in", "randn"),
                               ("weight", "vec", "in", "w1"),
                               ("y", "row", "out", None)],
        eager_in=["x", "weight"], compare=["y"], scalars={"eps": 1e-6}),
    "gemma_rmsnorm": dict(
        fn=f_gemma_rmsnorm, tensors=[("x", "row", "in", "randn"),
                                     ("weight", "vec", "in", "w0"),
                                     ("y", "row", "out", None)],
        eager_in=["x", "weight"], compare=["y"], scalars={"eps": 1e-6}),
    "fused_add_rmsnorm": dict(
        fn=f_fused_add_rmsnorm, tensors=[("x", "row", "inout", "randn"),
                                         ("residual", "row", "inout", "randn"),
                                         ("weight", "vec", "in", "w1")],
        eager_in=["x", "residual", "weight"], compare=["x", "residual"],
        scalars={"eps": 1e-6}),
    "layernorm": dict(
        fn=f_layernorm, tensors=[("x", "row", "in", "randn"),
                                 ("weight", "vec", "in", "w1"),
                                 ("bias", "vec", "in", "b"),
                                 ("y", "row", "out", None)],
        eager_in=["x", "weight", "bias"], compare=["y"],
        scalars={"eps": 1e-5}),
    "softmax": dict(
        fn=f_softmax, tensors=[("x", "row", "in", "randn2"),
                               ("y", "row", "out", None)],
        eager_in=["x"], compare=["y"], scalars={}),
    "silu_and_mul": dict(
        fn=f_silu_and_mul, tensors=[("x", "row2", "in", "randn"),
                                    ("y", "row", "out", None)],
        eager_in=["x"], compare=["y"], scalars={}),
    "gelu_tanh_and_mul": dict(
        fn=f_gelu_tanh_and_mul, tensors=[("x", "row2", "in", "randn"),
                                         ("y", "row", "out", None)],
        eager_in=["x"], compare=["y"], scalars={}),
}


def shape_of(layout, T, h):
    return {"row": (T, h), "row2": (T, 2 * h), "vec": (h,)}[layout]


def min_bytes(op, T, h):
    """Inputs read once, outputs written once (in place: both), weights once,
    bf16."""
    n = 0
    for _, layout, role, _ in OPS[op]["tensors"]:
        elems = math.prod(shape_of(layout, T, h))
        n += elems * (2 if role == "inout" else 1)
    return n * 2


def all_cases(ops):
    cases = []
    for op in ops:
        for h in HIDDENS:
            for T in TOKENS:
                cases.append((op, T, h))
    return cases


# ---------------------------------------------------------------------------
def setup_torch(compile_threads=None):
    _import_torch()
    torch.set_grad_enabled(False)
    import torch._dynamo.config as dc
    import torch._inductor.config as ic
    for name in ("cache_size_limit", "recompile_limit"):
        if hasattr(dc, name):
            setattr(dc, name, 4096)
    for name in ("accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(dc, name):
            setattr(dc, name, 1 << 20)
    # The timed process re-benchmarks the autotuning configs on a quiet GPU
    # instead of taking the workers' picks (made while they shared the GPU).
    if hasattr(ic, "autotune_local_cache"):
        ic.autotune_local_cache = False
    if hasattr(ic, "fx_graph_cache"):
        ic.fx_graph_cache = True
    if compile_threads is not None:
        ic.compile_threads = compile_threads


_compiled = {}


def compiled_fn(op):
    if op not in _compiled:
        _compiled[op] = torch.compile(OPS[op]["fn"], dynamic=False)
    return _compiled[op]


def make_tensors(op, T, h, copies, gen, dev):
    """`copies` independent sets of the kgen kernel's tensors, random (never
    zeros); outputs poisoned with NaN. Returns a list of {name: tensor}."""
    bf16 = torch.bfloat16
    sets = [dict() for _ in range(copies)]
    for name, layout, role, init in OPS[op]["tensors"]:
        shape = shape_of(layout, T, h)
        buf = torch.empty((copies,) + shape, dtype=bf16, device=dev)
        if init == "randn":
            buf.normal_(0.0, 1.0, generator=gen)
        elif init == "randn2":
            buf.normal_(0.0, 2.0, generator=gen)
        elif init == "w1":
            buf.uniform_(0.5, 1.5, generator=gen)
        elif init == "w0":
            buf.uniform_(-0.5, 0.5, generator=gen)
        elif init == "b":
            buf.uniform_(-0.2, 0.2, generator=gen)
        else:
            buf.fill_(float("nan"))
        for i in range(copies):
            sets[i][name] = buf[i]
    return sets


def kgen_args(kernel, op, tensors):
    sc = OPS[op]["scalars"]
    args = []
    for p in kernel.params:
        name = p["name"]
        if p["kind"] == "tensor":
            args.append(tensors[name])
        elif p["kind"] == "scalar":
            args.append(float(sc[name]))
        else:
            raise RuntimeError("%s: unexpected dynamic dim %s in a specialized "
                               "kernel" % (kernel.name, name))
    return args


def eager_args(op, tensors):
    return [tensors[n] for n in OPS[op]["eager_in"]]


def compare(a, b):
    """(ok, max_abs, worst err/tol, rel_norm) of a against reference b."""
    a32, b32 = a.float(), b.float()
    diff = (a32 - b32).abs()
    nan = bool(torch.isnan(a32).any().item()) or bool(
        torch.isnan(diff).any().item())
    tol = ATOL + RTOL * b32.abs()
    max_abs = float(diff.max().item()) if diff.numel() else 0.0
    worst = float((diff / tol).max().item()) if diff.numel() else 0.0
    den = float(torch.linalg.vector_norm(b32).item())
    rel = float(torch.linalg.vector_norm(a32 - b32).item()) / max(den, 1e-30)
    ok = (not nan) and worst <= 1.0 and rel <= REL_NORM_TOL
    if nan:
        max_abs = worst = rel = float("nan")
    return ok, max_abs, worst, rel


def as_list(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


# ---------------------------------------------------------------------------
# Timing.
def time_cold(call, flush, n=30, warm=3):
    ev = [(torch.cuda.Event(enable_timing=True),
           torch.cuda.Event(enable_timing=True)) for _ in range(n + warm)]
    for i, (s, e) in enumerate(ev):
        flush.fill_(i & 0x7F)
        s.record()
        r = call()
        e.record()
        del r
    torch.cuda.synchronize()
    us = [s.elapsed_time(e) * 1e3 for s, e in ev[warm:]]
    return statistics.median(us), us


def time_steady(calls, K, replays=7):
    """calls: one zero-argument callable per rotated copy; K calls in one
    graph, copy j % len(calls) for call j. Returns (us per call, all)."""
    keep = []
    g = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    # capture_begin/end rather than torch.cuda.graph(), which empties the
    # allocator's cache (and may gc.collect()) at every capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        g.capture_begin()
        try:
            for j in range(K):
                keep.append(calls[j % len(calls)]())
        finally:
            g.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    g.replay()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True),
           torch.cuda.Event(enable_timing=True)) for _ in range(replays)]
    for s, e in ev:
        s.record()
        g.replay()
        e.record()
    torch.cuda.synchronize()
    per = [s.elapsed_time(e) * 1e3 / K for s, e in ev]
    del keep, g
    return statistics.median(per), per


def memcpy_gbps(dev):
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device=dev)
    b = torch.empty(n, dtype=torch.uint8, device=dev)
    a.random_(0, 256)
    for _ in range(3):
        b.copy_(a)
    ev = [(torch.cuda.Event(enable_timing=True),
           torch.cuda.Event(enable_timing=True)) for _ in range(20)]
    for s, e in ev:
        s.record()
        b.copy_(a)
        e.record()
    torch.cuda.synchronize()
    us = statistics.median([s.elapsed_time(e) * 1e3 for s, e in ev])
    del a, b
    return 2.0 * n / (us * 1e-6) / 1e9, us


# ---------------------------------------------------------------------------
# Compile workers: fill the on-disk caches, one process per slice of shapes.
def worker_main(args):
    setup_torch(compile_threads=args.worker_threads)
    dev = torch.device(DEVICE)
    torch.cuda.init()
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    cases = json.loads(args.worker)
    for op, T, h in cases:
        t0 = time.perf_counter()
        try:
            ts = make_tensors(op, T, h, 1, gen, dev)[0]
            r = compiled_fn(op)(*eager_args(op, ts))
            torch.cuda.synchronize()
            del r, ts
            status = "ok"
        except Exception as e:  # reported, the timed process compiles it
            status = "error: %s" % str(e).splitlines()[0][:200]
        dt = time.perf_counter() - t0
        print(json.dumps({"op": op, "T": T, "h": h, "s": dt,
                          "status": status}), flush=True)
    return 0


def prewarm(cases, workers, threads, limit_s, log):
    """Runs the compile workers; returns {(op, T, h): seconds}."""
    if workers <= 0 or not cases:
        return {}, 0.0
    # Round robin over the cases sorted by size, every other worker starting
    # from its smallest, so that few big shapes are in memory at once.
    order = sorted(cases, key=lambda c: -min_bytes(*c))
    slices = [order[i::workers][::(-1 if i % 2 else 1)]
              for i in range(workers)]
    t0 = time.perf_counter()
    procs = []
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    for sl in slices:
        if not sl:
            continue
        cmd = (WORKER_CMD or [sys.executable, os.path.abspath(__file__)]) + [
            "--worker", json.dumps(sl), "--worker-threads", str(threads)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True,
                                      env=env))
    times = {}
    errors = 0
    for p in procs:
        left = max(1.0, limit_s - (time.perf_counter() - t0))
        try:
            out, err = p.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            log("prewarm: a worker ran past %.0f s and was stopped" % limit_s)
        for line in out.splitlines():
            try:
                d = json.loads(line)
            except ValueError:
                continue
            times[(d["op"], d["T"], d["h"])] = d["s"]
            if d["status"] != "ok":
                errors += 1
                log("prewarm: %s T=%d h=%d: %s" % (d["op"], d["T"], d["h"],
                                                   d["status"]))
        if p.returncode not in (0, None) and err:
            log("prewarm: worker exit %s: %s" % (p.returncode,
                                                 err.strip()[-600:]))
    wall = time.perf_counter() - t0
    log("prewarm: %d workers x %d compile threads compiled %d/%d shapes in "
        "%.1f s wall (sum of per-shape times %.1f s, %d errors)"
        % (len(procs), threads, len(times), len(cases), wall,
           sum(times.values()), errors))
    return times, wall


# ---------------------------------------------------------------------------
def run_case(op, T, h, kernel, flush, gen, dev, l2, log):
    """Checks and times one shape; returns a list of result dicts (one per
    implementation) and the correctness records."""
    spec = OPS[op]
    fn_c = compiled_fn(op)
    nbytes = min_bytes(op, T, h)
    checks = []
    # 1. Correctness on fresh random inputs, kgen outputs poisoned.
    base = make_tensors(op, T, h, 1, gen, dev)[0]
    ref = as_list(spec["fn"](*eager_args(op, base)))
    kt = {n: t.clone() for n, t in base.items()}
    for name, _, role, _ in spec["tensors"]:
        if role == "out":
            kt[name].fill_(float("nan"))
    kernel(*kgen_args(kernel, op, kt))
    t0 = time.perf_counter()
    got_c = as_list(fn_c(*eager_args(op, base)))
    torch.cuda.synchronize()
    first_call_s = time.perf_counter() - t0
    got_k = [kt[n] for n in spec["compare"]]
    for impl, got in (("kgen", got_k), ("compile", got_c)):
        for i, (a, b) in enumerate(zip(got, ref)):
            ok, max_abs, worst, rel = compare(a, b)
            checks.append(dict(op=op, T=T, h=h, impl=impl,
                               output=spec["compare"][i], ok=ok,
                               max_abs=max_abs, worst=worst, rel=rel))
    variant = kernel.variant_name(*kgen_args(kernel, op, kt))
    del ref, got_c, got_k, kt, base

    # 2. Cold: one set of tensors, flushed before each call.
    ts = make_tensors(op, T, h, 1, gen, dev)[0]
    kl = kernel.bind(*kgen_args(kernel, op, ts))
    ea = eager_args(op, ts)
    calls = {
        "kgen": lambda: kl(),
        "eager": lambda: spec["fn"](*ea),
        "compile": lambda: fn_c(*ea),
    }
    cold = {}
    for impl in IMPLS:
        cold[impl] = time_cold(calls[impl], flush)
    del calls, kl, ea, ts

    # 3. Steady state: rotated copies in one graph.
    copies = max(2, math.ceil(1.2 * l2 / nbytes))
    fastest = max(0.5, min(c[0] for c in cold.values()))
    K = copies * max(1, math.ceil(math.ceil(1000.0 / fastest) / copies))
    # Outputs of eager/compile stay alive in the graph: keep K x bytes small.
    while K > copies and K * nbytes > 4e9:
        K -= copies
    sets = make_tensors(op, T, h, copies, gen, dev)
    launches = [kernel.bind(*kgen_args(kernel, op, s)) for s in sets]
    eas = [eager_args(op, s) for s in sets]
    fn_e = spec["fn"]
    steady_calls = {
        "kgen": [(lambda l=l: l()) for l in launches],
        "eager": [(lambda a=a: fn_e(*a)) for a in eas],
        "compile": [(lambda a=a: fn_c(*a)) for a in eas],
    }
    steady = {}
    for impl in IMPLS:
        for c in steady_calls[impl][:2]:  # warm (nothing left to compile)
            c()
        steady[impl] = time_steady(steady_calls[impl], K,
                                   replays=7 if K <= 1000 else 5)
    del steady_calls, launches, eas, sets
    rows = []
    for impl in IMPLS:
        rows.append(dict(
            op=op, T=T, h=h, impl=impl, bytes=nbytes,
            cold_us=cold[impl][0], cold_p10=_pct(cold[impl][1], 10),
            cold_p90=_pct(cold[impl][1], 90), cold_n=len(cold[impl][1]),
            steady_us=steady[impl][0], steady_min=min(steady[impl][1]),
            steady_max=max(steady[impl][1]), K=K, copies=copies,
            variant=variant if impl == "kgen" else "",
            first_call_s=first_call_s if impl == "compile" else ""))
    return rows, checks


def _pct(v, p):
    s = sorted(v)
    return s[min(len(s) - 1, len(s) * p // 100)]


# ---------------------------------------------------------------------------
# Output.
CSV_COLS = ["op", "T", "h", "impl", "bytes", "cold_us", "cold_p10",
            "cold_p90", "cold_n", "steady_us", "steady_min", "steady_max",
            "K", "copies", "cold_gbps", "steady_gbps", "cold_pct_memcpy",
            "steady_pct_memcpy", "cold_speedup_vs_eager",
            "steady_speedup_vs_eager", "cold_speedup_vs_compile",
            "steady_speedup_vs_compile", "variant", "compile_worker_s",
            "first_call_s"]


def finish_rows(rows, copy_gbps):
    by = {(r["op"], r["T"], r["h"], r["impl"]): r for r in rows}
    for r in rows:
        for mode in ("cold", "steady"):
            gbps = r["bytes"] / (r[mode + "_us"] * 1e-6) / 1e9
            r[mode + "_gbps"] = gbps
            r[mode + "_pct_memcpy"] = 100.0 * gbps / copy_gbps
            for other in ("eager", "compile"):
                o = by.get((r["op"], r["T"], r["h"], other))
                r["%s_speedup_vs_%s" % (mode, other)] = (
                    o[mode + "_us"] / r[mode + "_us"] if o else "")
    return rows


def fmt(v, f):
    return f % v if isinstance(v, (int, float)) else str(v)


def write_csv(path, rows):
    with open(path, "w") as f:
        f.write(",".join(CSV_COLS) + "\n")
        for r in rows:
            f.write(",".join(_csv_cell(r.get(c, "")) for c in CSV_COLS) + "\n")


def _csv_cell(v):
    if isinstance(v, float):
        return "%.6g" % v
    s = str(v)
    return '"%s"' % s if "," in s else s


def read_csv(path):
    import csv
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k, v in list(r.items()):
                try:
                    r[k] = int(v)
                except ValueError:
                    try:
                        r[k] = float(v)
                    except ValueError:
                        pass
            rows.append(r)
    return rows


TABLE_LEGEND = (
    "us per call; st = steady state (CUDA graph, rotated copies), cold = "
    "after an L2 flush; xE/xC = kgen's speedup over eager/compile "
    "(>1: kgen faster); %cp = kgen steady GB/s as % of memcpy")


def compact_table(rows):
    """One line per op x shape: steady and cold us of kgen/eager/compile and
    kgen's speedups."""
    by = {}
    for r in rows:
        by.setdefault((r["op"], r["h"], r["T"]), {})[r["impl"]] = r
    lines = ["%-18s %6s %5s | %8s %8s %8s %6s %6s %5s | %8s %8s %8s %6s %6s"
             % ("op", "T", "h", "st kgen", "eager", "compile", "xE", "xC",
                "%cp", "cold kg", "eager", "compile", "xE", "xC")]
    ops_order = NORM_OPS + ACT_OPS
    for key in sorted(by, key=lambda k: (ops_order.index(k[0])
                                         if k[0] in ops_order else 99,
                                         k[1], k[2])):
        d = by[key]
        k, e, c = d.get("kgen"), d.get("eager"), d.get("compile")
        if not (k and e and c):
            continue
        lines.append(
            "%-18s %6d %5d | %8.1f %8.1f %8.1f %6.2f %6.2f %5.0f | "
            "%8.1f %8.1f %8.1f %6.2f %6.2f"
            % (key[0], key[2], key[1], k["steady_us"], e["steady_us"],
               c["steady_us"], e["steady_us"] / k["steady_us"],
               c["steady_us"] / k["steady_us"], k["steady_pct_memcpy"],
               k["cold_us"], e["cold_us"], c["cold_us"],
               e["cold_us"] / k["cold_us"], c["cold_us"] / k["cold_us"]))
    return "\n".join(lines)


def write_md(path, rows, checks, header_lines, losses):
    with open(path, "w") as f:
        f.write("# kgen vs PyTorch eager vs torch.compile (bf16)\n\n")
        for line in header_lines:
            f.write(line + "  \n")
        f.write("\n| op | T | hidden | impl | MB | steady us | steady GB/s "
                "| steady % memcpy | cold us | cold GB/s | cold % memcpy "
                "| kgen x eager (steady/cold) | kgen x compile (steady/cold) "
                "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            sp = ""
            spc = ""
            if r["impl"] == "kgen":
                sp = "%.2f / %.2f" % (r["steady_speedup_vs_eager"],
                                      r["cold_speedup_vs_eager"])
                spc = "%.2f / %.2f" % (r["steady_speedup_vs_compile"],
                                       r["cold_speedup_vs_compile"])
            f.write("| %s | %d | %d | %s | %.2f | %.2f | %.0f | %.1f | %.2f "
                    "| %.0f | %.1f | %s | %s |\n"
                    % (r["op"], r["T"], r["h"], r["impl"], r["bytes"] / 1e6,
                       r["steady_us"], r["steady_gbps"],
                       r["steady_pct_memcpy"], r["cold_us"], r["cold_gbps"],
                       r["cold_pct_memcpy"], sp, spc))
        f.write("\n## Correctness (against eager)\n\n")
        bad = [c for c in checks if not c["ok"]]
        f.write("%d comparisons, %d mismatches.\n\n" % (len(checks), len(bad)))
        f.write("| op | T | hidden | impl | output | ok | max abs | worst "
                "err/tol | rel norm |\n|---|---|---|---|---|---|---|---|---|\n")
        for c in checks:
            f.write("| %s | %d | %d | %s | %s | %s | %.3g | %.3g | %.3g |\n"
                    % (c["op"], c["T"], c["h"], c["impl"], c["output"],
                       "yes" if c["ok"] else "NO", c["max_abs"], c["worst"],
                       c["rel"]))
        f.write("\n## Where kgen is slower than torch.compile\n\n")
        f.write("\n".join(losses) if losses else "nowhere")
        f.write("\n")


def kgen_losses(rows):
    out = []
    for r in rows:
        if r["impl"] != "kgen":
            continue
        for mode in ("steady", "cold"):
            s = r["%s_speedup_vs_compile" % mode]
            if isinstance(s, float) and s < 1.0:
                out.append("%s T=%d h=%d %s: kgen %.2f us, compile %.2f us "
                           "(kgen %.0f%% slower)"
                           % (r["op"], r["T"], r["h"], mode, r[mode + "_us"],
                              r[mode + "_us"] * s, 100.0 * (1.0 / s - 1.0)))
    return out


def plot(rows, copy_gbps, out_dir, title_extra=""):
    """One PNG per op: GB/s against T, steady (left) and cold (right), a line
    per implementation and hidden, memcpy as a horizontal line. Returns the
    paths written ([] without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # reported by the caller
        print("torch_bench: no plots: %s" % e)
        return []
    paths = []
    colors = {2048: "tab:blue", 4096: "tab:orange", 8192: "tab:green",
              16384: "tab:red"}
    styles = {"kgen": ("-", "o"), "eager": (":", "x"), "compile": ("--", "s")}
    ops = [op for op in NORM_OPS + ACT_OPS if any(r["op"] == op for r in rows)]
    for op in ops:
        fig, axes = plt.subplots(1, 2, figsize=(14, 5.5), sharey=True)
        for ax, mode in zip(axes, ("steady", "cold")):
            for h in HIDDENS:
                for impl in IMPLS:
                    pts = sorted((r["T"], r[mode + "_gbps"]) for r in rows
                                 if r["op"] == op and r["h"] == h
                                 and r["impl"] == impl)
                    if not pts:
                        continue
                    ls, mk = styles[impl]
                    ax.plot([p[0] for p in pts], [p[1] for p in pts],
                            linestyle=ls, marker=mk, color=colors.get(h),
                            label="%s h=%d" % (impl, h), markersize=4)
            ax.axhline(copy_gbps, color="black", linewidth=1)
            ax.text(1, copy_gbps * 1.01, "memcpy %.0f GB/s" % copy_gbps,
                    fontsize=8)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ts = sorted({r["T"] for r in rows if r["op"] == op})
            ax.set_xticks(ts)
            ax.set_xticklabels([str(t) for t in ts])
            ax.set_xlabel("T (rows)")
            ax.set_title("%s bf16, %s%s" % (op, mode, title_extra))
            ax.grid(True, alpha=0.3)
        axes[0].set_ylabel("GB/s (fewest bytes)")
        axes[1].legend(fontsize=7, ncol=2, loc="lower right")
        fig.tight_layout()
        p = os.path.join(out_dir, "torch_bench_%s.png" % op)
        fig.savefig(p, dpi=90)
        plt.close(fig)
        paths.append(p)
    return paths


# ---------------------------------------------------------------------------
def main():
    global TOKENS, HIDDENS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", help="the bundle's kernels/ folder")
    ap.add_argument("--lib", help="libkgen_runtime.so (default: "
                    "$KGEN_RUNTIME_LIB or next to kgen_ctypes.py)")
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--ops", default=",".join(NORM_OPS + ACT_OPS))
    ap.add_argument("--tokens", default=",".join(map(str, TOKENS)))
    ap.add_argument("--hiddens", default=",".join(map(str, HIDDENS)))
    ap.add_argument("--deadline-s", type=float, default=330.0,
                    help="start no new shape after this many seconds")
    ap.add_argument("--workers", type=int, default=-1,
                    help="compile worker processes (-1: cores - 2, at most "
                    "10; 0: none)")
    ap.add_argument("--prewarm-s", type=float, default=150.0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-threads", type=int, default=1,
                    help=argparse.SUPPRESS)
    ap.add_argument("--plot-only", metavar="CSV")
    ap.add_argument("--table-only", metavar="CSV",
                    help="print the compact table of a CSV (e.g. a partial "
                    "one) and exit")
    ap.add_argument("--memcpy-gbps", type=float, default=0.0,
                    help="with --plot-only")
    args = ap.parse_args()

    TOKENS = [int(t) for t in args.tokens.split(",")]
    HIDDENS = [int(h) for h in args.hiddens.split(",")]
    if args.worker:
        return worker_main(args)
    if args.table_only:
        print(TABLE_LEGEND)
        print(compact_table(read_csv(args.table_only)))
        return 0
    if args.plot_only:
        rows = read_csv(args.plot_only)
        paths = plot(rows, args.memcpy_gbps, args.out)
        print("\n".join(paths))
        return 0

    t_start = time.perf_counter()
    os.makedirs(args.out, exist_ok=True)
    log_lines = []

    def log(msg):
        line = "[%6.1f s] %s" % (time.perf_counter() - t_start, msg)
        print(line, flush=True)
        log_lines.append(line)

    kg.load(args.lib)
    ops = [o for o in args.ops.split(",") if o]
    for o in ops:
        if o not in OPS:
            raise SystemExit("torch_bench: unknown op %s (known: %s)"
                             % (o, ", ".join(OPS)))
    manifest = kg.read_manifest(args.kernels)
    setup_torch()
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("torch_bench: skipped: torch sees no CUDA device")
        return 0
    dev = torch.device(DEVICE)
    torch.cuda.init()
    torch.empty(1, device=dev)  # the primary context, current here
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = "none"
    header = [
        "device: %s, %d SMs, L2 %.0f MB, %.0f GiB; torch %s, triton %s, "
        "cuda %s; %s" % (props.name, props.multi_processor_count, l2 / 1e6,
                         props.total_memory / 2 ** 30, torch.__version__,
                         triton_version, torch.version.cuda,
                         time.strftime("%Y-%m-%d %H:%M:%S %Z")),
        "kgen: %s, kernels %s" % (kg._lib_path, args.kernels),
    ]
    for line in header:
        log(line)
    copy_gbps, copy_us = memcpy_gbps(dev)
    header.append("memcpy DtoD 1 GiB (torch copy_): median %.1f us, %.1f GB/s "
                  "(read + write)" % (copy_us, copy_gbps))
    log(header[-1])

    # The cases, in order; those over MAX_BYTES are skipped.
    cases, skipped = [], []
    for group in (NORM_OPS, ACT_OPS):  # activations last: dropped first
        for op in [o for o in group if o in ops]:
            for h in HIDDENS:
                for T in TOKENS:
                    if min_bytes(op, T, h) > MAX_BYTES:
                        skipped.append((op, T, h))
                    else:
                        cases.append((op, T, h))
    log("%d cases, %d skipped for moving more than %.1f GB: %s"
        % (len(cases), len(skipped), MAX_BYTES / 1e9,
           ", ".join("%s T=%d h=%d" % s for s in skipped)))

    workers = args.workers
    if workers < 0:
        workers = max(1, min(10, (os.cpu_count() or 4) - 2))
    worker_times, prewarm_wall = prewarm(cases, workers, args.worker_threads,
                                         args.prewarm_s, log)

    flush = torch.empty(max(FLUSH_BYTES, 4 * l2), dtype=torch.uint8,
                        device=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    kernels = {}
    rows, checks, not_run, failed = [], [], [], []
    for op, T, h in cases:
        if time.perf_counter() - t_start > args.deadline_s:
            not_run.append((op, T, h))
            continue
        try:
            if (op, h) not in kernels:
                e = next((m for m in manifest if m["op"] == op and
                          m["dtype"] == DTYPE and m["length"] == h), None)
                if e is None:
                    raise RuntimeError("no %s %s kernel of length %d in the "
                                       "manifest" % (op, DTYPE, h))
                kernels[(op, h)] = kg.Kernel(e["ptx"], e["spec"])
            t0 = time.perf_counter()
            r, c = run_case(op, T, h, kernels[(op, h)], flush, gen, dev, l2,
                            log)
            for x in r:
                x["compile_worker_s"] = worker_times.get((op, T, h), "")
            rows.extend(r)
            checks.extend(c)
            if min_bytes(op, T, h) > (256 << 20):
                torch.cuda.empty_cache()
            bad = [x for x in c if not x["ok"]]
            k = r[0]
            log("%-18s T=%-6d h=%-5d kgen %8.1f/%8.1f eager %8.1f/%8.1f "
                "compile %8.1f/%8.1f us (steady/cold) first call %.2f s, "
                "%.1f s%s" % (op, T, h, k["steady_us"], k["cold_us"],
                              r[1]["steady_us"], r[1]["cold_us"],
                              r[2]["steady_us"], r[2]["cold_us"],
                              r[2]["first_call_s"],
                              time.perf_counter() - t0,
                              "" if not bad else "  MISMATCH: " + "; ".join(
                                  "%s %s max|d| %.3g worst %.3g rel %.3g"
                                  % (x["impl"], x["output"], x["max_abs"],
                                     x["worst"], x["rel"]) for x in bad)))
        except Exception as ex:  # keep going: report it
            msg = "%s T=%d h=%d: %s: %s" % (op, T, h, type(ex).__name__,
                                            str(ex).strip()[:400])
            failed.append(msg)
            log("FAILED " + msg)
            torch.cuda.synchronize()
        # Partial results survive a kill.
        if rows:
            finish_rows(rows, copy_gbps)
            write_csv(os.path.join(args.out, "torch_bench.csv"), rows)

    finish_rows(rows, copy_gbps)
    write_csv(os.path.join(args.out, "torch_bench.csv"), rows)
    first_calls = [r["first_call_s"] for r in rows
                   if r["impl"] == "compile"]
    mism = [c for c in checks if not c["ok"]]
    summary = [
        "compile: prewarm %.1f s wall in %d workers (per shape: median %.2f "
        "s, max %.2f s); in the timed process the first call per shape took "
        "median %.2f s, max %.2f s, total %.1f s"
        % (prewarm_wall, workers,
           statistics.median(worker_times.values()) if worker_times else 0,
           max(worker_times.values()) if worker_times else 0,
           statistics.median(first_calls) if first_calls else 0,
           max(first_calls) if first_calls else 0, sum(first_calls)),
        "cases: %d run, %d skipped (> %.1f GB), %d not run (deadline %.0f "
        "s), %d failed" % (len(rows) // 3, len(skipped), MAX_BYTES / 1e9,
                          len(not_run), args.deadline_s, len(failed)),
        "correctness: %d comparisons against eager, %d mismatches%s"
        % (len(checks), len(mism), "" if not mism else ": " + "; ".join(
            "%s %s T=%d h=%d %s max|d| %.3g worst %.3g rel %.3g"
            % (c["impl"], c["op"], c["T"], c["h"], c["output"], c["max_abs"],
               c["worst"], c["rel"]) for c in mism)),
    ]
    if not_run:
        summary.append("not run (deadline): " + ", ".join(
            "%s T=%d h=%d" % c for c in not_run))
    for f in failed:
        summary.append("FAILED: " + f)
    summary.append("total %.1f s" % (time.perf_counter() - t_start))
    losses = kgen_losses(rows)
    method = [
        "cold: median of 30 single calls, each after writing a %d MiB "
        "buffer, CUDA events around the call; steady: K calls over rotated "
        "copies (> 1.2 x L2) in one CUDA graph, median of 7 replays / K; "
        "GB/s of the fewest bytes; bf16" % (flush.numel() >> 20)]
    write_md(os.path.join(args.out, "torch_bench.md"), rows, checks,
             header + method + summary, losses)
    with open(os.path.join(args.out, "torch_bench_log.txt"), "w") as f:
        f.write("\n".join(log_lines + summary) + "\n")
    pngs = plot(rows, copy_gbps, args.out)
    if pngs:
        with tarfile.open(os.path.join(args.out, "torch_bench_plots.tar.gz"),
                          "w:gz") as tf:
            for p in pngs:
                tf.add(p, arcname=os.path.basename(p))
        for p in pngs:
            os.remove(p)
        log("plots: %d PNGs in torch_bench_plots.tar.gz" % len(pngs))
    print()
    for line in header + summary:
        print(line)
    print("where kgen is slower than torch.compile: %s"
          % ("nowhere" if not losses else ""))
    for line in losses:
        print("  " + line)
    table = compact_table(rows)
    with open(os.path.join(args.out, "torch_bench_table.txt"), "w") as f:
        f.write("\n".join(header) + "\n" + TABLE_LEGEND + "\n" + table + "\n")
    print()
    print(TABLE_LEGEND)
    print(table)
    return 3 if (mism or failed) else 0


if __name__ == "__main__":
    sys.exit(main())
