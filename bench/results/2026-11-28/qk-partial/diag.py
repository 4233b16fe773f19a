# Repeat vLLM's qk-norm-rope case on the GPU: mismatching runs, which heads.
import sys
import torch
sys.path.insert(0, "python/tests")
import kgen
import test_vllm_qk_norm_rope as t

def once(dt, neox, eps, ratio, sync, seed=13):
    torch.manual_seed(seed)
    qkv = torch.randn(4, 24 * 128, dtype=dt, device="cuda")
    pos = torch.arange(4, device="cuda")
    wq = torch.empty(128, dtype=dt, device="cuda").normal_(1.0, 0.1)
    wk = torch.empty(128, dtype=dt, device="cuda").normal_(1.0, 0.1)
    c = t.cos_sin_cache(int(128 * ratio), dt, "cuda")
    q, k, v = t.views(qkv)
    wantq = t.rope(pos, t.rms_norm(q, wq, eps), c, neox)
    wantk = t.rope(pos, t.rms_norm(k, wk, eps), c, neox)
    if sync:
        torch.cuda.synchronize()
    (kgen.qk_norm_rope_neox if neox else kgen.qk_norm_rope_gptj)(pos, q, k, wq, wk, c, eps)
    torch.cuda.synchronize()
    tol = 2e-3 if dt == torch.float16 else 1e-2
    bad_q = ~torch.isclose(q.float(), wantq.float(), atol=tol, rtol=tol)
    bad_k = ~torch.isclose(k.float(), wantk.float(), atol=tol, rtol=tol)
    return bad_q, bad_k

for sync in (False, True):
    for dt in (torch.float16, torch.bfloat16):
        for neox in (False, True):
            for eps in (1e-5, 1e-6):
                fails = 0
                for i in range(40):
                    bq, bk = once(dt, neox, eps, 1.0, sync, seed=13 if i % 2 == 0 else i)
                    if bq.any() or bk.any():
                        fails += 1
                        if fails <= 2:
                            heads_q = bq.any(-1).nonzero().tolist()
                            print("  bad", dt, neox, eps, "run", i, "q (tok, head):", heads_q[:12], "k:", bk.any(-1).nonzero().tolist()[:8])
                print(f"sync={sync} {dt} neox={neox} eps={eps}: {fails}/40 runs mismatch", flush=True)
