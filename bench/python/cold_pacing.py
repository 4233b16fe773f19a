"""How far the GPU runs behind the host changes a cold single call's time.

For a few norm and activation shapes, times kgen, eager and torch.compile
cold (one call after a 256 MiB L2 flush, CUDA events around the call) two
ways, three rounds each, interleaved:
  queue  the host queues every flush and call at once, so the GPU runs far
         behind it (torch_bench's cold timing before it waited per call);
  sync   the host waits for each call before the next flush (torch_bench's
         cold timing now): each call is queued behind its own flush alone.

  python3 bench/python/cold_pacing.py LIB KERNELS_DIR
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kgen_ctypes as kg  # noqa: E402
import torch_bench as tb  # noqa: E402

CASES = [("silu_and_mul", 1, 4096), ("rmsnorm", 1, 4096),
         ("rmsnorm", 32, 8192), ("layernorm", 1, 2048),
         ("gemma_rmsnorm", 32, 4096), ("rmsnorm", 512, 4096),
         ("silu_and_mul", 512, 4096), ("fused_add_rmsnorm", 512, 4096)]


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    lib, kdir = sys.argv[1:3]
    kg.load(lib)
    manifest = kg.read_manifest(kdir)
    tb.setup_torch()
    dev = torch.device("cuda")
    torch.empty(1, device=dev)
    flush = torch.empty(tb.FLUSH_BYTES, dtype=torch.uint8, device=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    for op, T, h in CASES:
        kernel = tb.find_kernel(manifest, op, h)
        fn_c = tb.compiled_fn(op)
        # In-place ops get one identical copy per implementation.
        sets = (tb.make_same(op, T, h, 3, gen, dev) if tb.OPS[op].get("inplace")
                else [tb.make_tensors(op, T, h, 1, gen, dev)[0]] * 3)
        kl = kernel.bind(*tb.kgen_args(kernel, op, sets[0], T, h),
                         **tb.kgen_launch_kw(op, T, h))
        ea, ec = tb.eager_args(op, sets[1]), tb.eager_args(op, sets[2])
        calls = {"kgen": lambda: kl(),
                 "eager": lambda: tb.OPS[op]["fn"](*ea),
                 "compile": lambda: fn_c(*ec)}
        for c in calls.values():
            c()
        torch.cuda.synchronize()
        for mode in ("queue", "sync"):
            got = {k: [] for k in calls}
            for _ in range(3):
                for k, c in calls.items():
                    got[k].append(tb.time_cold(c, flush, n=40,
                                              wait=mode == "sync")[0])
            print("%-18s T=%-4d h=%-5d %-5s " % (op, T, h, mode) + "  ".join(
                "%s %s" % (k, "/".join("%.2f" % v for v in got[k]))
                for k in calls), flush=True)


if __name__ == "__main__":
    main()
