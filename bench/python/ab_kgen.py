"""kgen alone, several bundles side by side: steady-state time per call
(the torch bench's graph of K calls over rotated copies larger than L2),
bundles interleaved on the same tensors, best of 3 rounds. For A/B of
schedules; the torch bench gives the comparison with PyTorch.

  python3 bench/python/ab_kgen.py LIB OPS TOKENS HIDDENS KERNELS_DIR...

OPS, TOKENS and HIDDENS are comma lists (the norms suite's ops, rope_neox,
the activations, adaln); a token BxN (adaln) is B batch items of N rows.
The ops run in bf16, or in f32 with KGEN_AB_DTYPE=f32 (tensors of a fixed
dtype, as an fp8 output, keep it).
A bundle without a kernel specialized for a hidden size runs its dynamic one.
A KERNELS_DIR that holds libkgen_runtime.so (a folder scripts/prepare-gpu.sh
makes, at any commit) runs its kernels/ through its own runtime and binding
(torch_bench.load_ab): bundles of two commits, each with its runtime.
Prints the same-run memcpy bandwidth, then CSV: op, T, h, then per bundle
its us, its % of memcpy (minimum bytes over time) and the variant
launched."""
import math
import os
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import kgen_ctypes as kg  # noqa: E402
import torch_bench as tb  # noqa: E402


def main():
    if len(sys.argv) < 6:
        raise SystemExit(__doc__)
    lib, ops, toks, hids = sys.argv[1:5]
    dirs = sys.argv[5:]
    if os.environ.get("KGEN_AB_DTYPE", "bf16") == "f32":
        tb.DTYPE = "f32"
        fixed = tb.dtype_of
        tb.dtype_of = lambda op, name: (
            "float32" if fixed(op, name) == "bfloat16" else fixed(op, name))
    kg.load(lib)
    tb.setup_torch()
    dev = torch.device("cuda")
    torch.empty(1, device=dev)
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)
    bundles = [tb.load_ab(d)
               if os.path.isfile(os.path.join(d, "libkgen_runtime.so"))
               else (kg, kg.read_manifest(d)) for d in dirs]
    copy_gbps, _ = tb.memcpy_gbps(dev)
    print("# memcpy %.1f GB/s" % copy_gbps)
    print("op,T,h," + ",".join("us_%d,pct_%d,variant_%d" % (i, i, i)
                               for i in range(len(dirs))))
    for op in ops.split(","):
        for h in map(int, hids.split(",")):
            kernels = [tb.find_kernel(m, op, h, allow_dyn=True, binding=b)
                       for b, m in bundles]
            for tok in toks.split(","):
                B, _, N = tok.rpartition("x")
                B = int(B or 0)
                T = int(N) * max(B, 1)
                copies = max(2, math.ceil(1.2 * l2 /
                                          tb.footprint(op, T, h, B)))
                K = copies * max(1, math.ceil(400 / copies))
                sets = tb.make_tensors(op, T, h, copies, gen, dev, B)
                kw = tb.kgen_launch_kw(op, T, h, B)
                best = [math.inf] * len(kernels)
                for _ in range(3):
                    for i, k in enumerate(kernels):
                        calls = [k.bind(*tb.kgen_args(k, op, s, T, h, B),
                                        **kw)
                                 for s in sets]
                        for c in calls[:2]:
                            c()
                        us, _ = tb.time_steady(calls, K, replays=5)
                        best[i] = min(best[i], us)
                names = [k.variant_name(*tb.kgen_args(k, op, sets[0], T, h, B),
                                        **kw) for k in kernels]
                gbps = [tb.min_bytes(op, T, h, B) / (us * 1e3) for us in best]
                print("%s,%s,%d,%s" % (op, tok, h, ",".join(
                    "%.3f,%.1f,%s" % (us, 100 * g / copy_gbps, n)
                    for us, g, n in zip(best, gbps, names))), flush=True)
                del sets


if __name__ == "__main__":
    main()
