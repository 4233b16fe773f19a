#!/usr/bin/env python3
"""Runs torch_bench.py end to end on a machine without a GPU: PyTorch on the
CPU, torch.cuda's events and graphs replaced by host stand-ins, and the kgen
runtime launching through the emulated driver of test/gpu/EmuCuda.cpp (it
runs the interpreter on host memory). It checks the plumbing (the kgen_arg
ABI through ctypes, argument order, the eager formulas against kgen's
semantics, compile workers, CSV/markdown/plots), not the timings.

    selftest_emu.py EMU_SO KERNEL_DIR LIB_SO OUT_DIR [torch_bench args...]

EMU_SO is build/test/gpu/libkgen_emu_cuda.so; it is exposed to the runtime
as libcuda.so.1 through LD_LIBRARY_PATH (the script re-executes itself).
Keep the shapes small (the interpreter runs every row), e.g. the views suite
on a bundle of `kgen bundle --dtypes bf16 --ops rope_neox,rope_gptj,
silu_and_mul,gelu_tanh_and_mul,adaln --lengths 0,64`:
    ... --suite views --tokens 1,3 --hiddens 64,100 --rope-heads 4,2
        --rope-head-dim 64 --rope-max-pos 97 --adaln-shapes 1x3,2x5
        --adaln-c 64,72 --workers 2
"""

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def reexec(emu):
    d = tempfile.mkdtemp(prefix="kgen-emu-")
    os.symlink(os.path.abspath(emu), os.path.join(d, "libcuda.so.1"))
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = d + ":" + env.get("LD_LIBRARY_PATH", "")
    env["KGEN_SELFTEST_EMU_CHILD"] = "1"
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def patch_torch():
    import torch

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self, stream=None):
            self.t = time.perf_counter()

        def elapsed_time(self, end):
            return max(1e-3, (end.t - self.t) * 1e3)

    class Graph:
        def replay(self):
            pass

        def capture_begin(self, *a, **k):
            pass

        def capture_end(self):
            pass

    class Stream:
        def wait_stream(self, other):
            pass

    class stream:
        def __init__(self, s):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    class graph:
        def __init__(self, g, **kw):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    class Props:
        name = "host (emulated driver)"
        multi_processor_count = 1
        L2_cache_size = 1 << 20
        total_memory = 1 << 30

    torch.cuda.init = lambda: None
    torch.cuda.is_initialized = lambda: False
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.get_device_properties = lambda *a: Props()
    torch.cuda.Event = Event
    torch.cuda.CUDAGraph = Graph
    torch.cuda.graph = graph
    torch.cuda.Stream = Stream
    torch.cuda.stream = stream
    torch.cuda.current_stream = lambda *a: Stream()
    torch.cuda.empty_cache = lambda: None
    torch.version.cuda = "none (emulated)"


def main():
    if os.environ.get("KGEN_SELFTEST_EMU_CHILD") != "1":
        if len(sys.argv) < 5:
            print(__doc__)
            return 2
        reexec(sys.argv[1])
    os.environ["KGEN_CTYPES_ALLOW_HOST"] = "1"
    sys.path.insert(0, HERE)
    worker = "--worker" in sys.argv
    if worker:
        emu, kdir, lib, out, rest = None, None, None, None, sys.argv[1:]
    else:
        emu, kdir, lib, out = sys.argv[1:5]
        rest = sys.argv[5:]
    patch_torch()
    import torch_bench as tb
    tb.DEVICE = "cpu"
    tb.WORKER_CMD = [sys.executable, os.path.abspath(__file__)]
    tb.memcpy_gbps = lambda dev: (1000.0, 2000.0)
    tb.FLUSH_BYTES = 1 << 20
    if worker:
        sys.argv = [sys.argv[0]] + rest
    else:
        sys.argv = [sys.argv[0], "--kernels", kdir, "--lib", lib, "--out",
                    out] + rest
    return tb.main()


if __name__ == "__main__":
    sys.exit(main())
