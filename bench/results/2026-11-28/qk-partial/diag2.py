# GPU against the interpreter (the same op on CPU copies), row by row.
import sys
import torch
sys.path.insert(0, "python/tests")
import kgen
import test_vllm_qk_norm_rope as t

def run(op, dev, qkv, pos, wq, wk, c):
    qkv = qkv.to(dev).clone(); q, k, v = t.views(qkv)
    if op == "qk_rmsnorm":
        kgen.qk_rmsnorm(q, k, wq.to(dev), wk.to(dev), 1e-6)
    else:
        getattr(kgen, op)(pos.to(dev), q, k, wq.to(dev), wk.to(dev), c.to(dev), 1e-6)
    torch.cuda.synchronize()
    return qkv.cpu()

import os
RUNS = int(os.environ.get("RUNS", "20"))
for op in os.environ.get("OPS", "qk_norm_rope_neox,qk_rmsnorm,qk_norm_rope_gptj").split(","):
    for dt in (torch.bfloat16,):
        torch.manual_seed(13)
        qkv = torch.randn(4, 24 * 128, dtype=dt)
        pos = torch.arange(4)
        wq = torch.empty(128, dtype=dt).normal_(1.0, 0.1)
        wk = torch.empty(128, dtype=dt).normal_(1.0, 0.1)
        c = t.cos_sin_cache(128, dt, "cpu")
        ref = run(op, "cpu", qkv, pos, wq, wk, c)
        nbad = 0
        for i in range(RUNS):
            got = run(op, "cuda", qkv, pos, wq, wk, c)
            d = (got.float() - ref.float()).abs().view(4, 24, 128).amax(-1)
            bad = (d > 0).nonzero().tolist()
            if bad:
                nbad += 1
                if nbad <= 3:
                    print(op, "run", i, "rows (tok, head) differing:", bad[:40], "max", d.max().item())
        print(op, dt, f"{nbad}/{RUNS} runs differ from the interpreter", flush=True)
