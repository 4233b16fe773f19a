#!/usr/bin/env python3
"""One op x shape, kgen and torch.compile, for a profiler (ncu, nsys).

    ncu --profile-from-start off ... python3 profile_case.py \
        --kernels DIR --op softmax --tokens 16384 --hidden 4096 [--calls 3]

Builds the same tensors and kernels as torch_bench.py, warms both up (so
Triton compiles outside the profiled range), then calls each implementation
--calls times between torch.cuda.profiler.start() and stop(). bench/ncu.sh
runs it under ncu.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_bench as tb  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--lib")
    ap.add_argument("--op", required=True)
    ap.add_argument("--tokens", type=int, required=True)
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--b", type=int, default=0, help="adaln: B")
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--impls", default="kgen,compile")
    args = ap.parse_args()
    tb.setup_torch()
    torch = tb.torch
    tb.kg.load(args.lib)
    torch.empty(1, device="cuda")  # the primary context, current here
    manifest = tb.kg.read_manifest(args.kernels)
    # Ops built for fixed lengths (the group-scale ops' group size) name
    # their kernel by that length, as torch_bench does.
    length = tb.OPS[args.op].get("length", lambda h: h)(args.hidden)
    kernel = tb.find_kernel(manifest, args.op, length, allow_dyn=True)
    T, h, b = args.tokens, args.hidden, args.b
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)
    ts = tb.make_tensors(args.op, T, h, 1, gen, dev, b)[0]
    kl = kernel.bind(*tb.kgen_args(kernel, args.op, ts, T, h, b),
                     **tb.kgen_launch_kw(args.op, T, h, b))
    fn_c = tb.compiled_fn(args.op)
    ea = tb.eager_args(args.op, ts)
    calls = {"kgen": kl, "compile": lambda: fn_c(*ea)}
    impls = args.impls.split(",")
    for impl in impls:
        for _ in range(2):
            calls[impl]()
    torch.cuda.synchronize()
    print("kgen kernel:", kernel.name, "variant:",
          kernel.variant_name(*tb.kgen_args(kernel, args.op, ts, T, h, b),
                              **tb.kgen_launch_kw(args.op, T, h, b)))
    torch.cuda.profiler.start()
    for impl in impls:
        for _ in range(args.calls):
            calls[impl]()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
