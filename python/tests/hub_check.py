"""kgen laid out as a Hugging Face `kernels` repository
(scripts/hub-layout.sh), loaded with kernels.get_local_kernel as the Hub's
users load kernels, its ops on CUDA against the same ops on CPU (the
interpreter). Run without the installed kgen on the path: the layout brings
its own.

    python3 python/tests/hub_check.py HUB_DIR
"""
import sys
from pathlib import Path

import torch
from kernels import get_local_kernel


def main():
    k = get_local_kernel(Path(sys.argv[1]))
    x = torch.randn(33, 4096, dtype=torch.bfloat16)
    w = torch.randn(4096, dtype=torch.bfloat16)
    g = torch.randn(33, 2 * 14336, dtype=torch.bfloat16)
    worst = 0.0
    for name, args in (("rmsnorm", (x, w)), ("silu_and_mul", (g,))):
        fn = getattr(k, name)
        got = fn(*(a.cuda() for a in args)).cpu().double()
        want = fn(*args).double()
        rtol, atol = torch.ops.kgen._tolerance("bf16")
        worst = max(worst, ((got - want).abs() / (atol + rtol * want.abs()))
                    .max().item())
    ok = worst <= 1
    print(f"| kernels.get_local_kernel: {k.__name__} from {sys.argv[1]} | "
          f"{'ok' if ok else 'FAIL'} | rmsnorm and silu_and_mul on CUDA, "
          f"worst {worst:.2f} of the tolerance |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
