"""Model-level timing of kgen's transformers patch on one GPU.

For a Llama-style (hidden 4096, MLP 14336) or Qwen3-style (q/k norms, MLP
12288) model of random bf16 weights: prefill 1 x 2048 tokens and one decode
step at batch 1 and 32 over a static cache of 512 tokens, for eager,
kgen-patched eager, torch.compile (default and reduce-overhead) and
kgen-patched + torch.compile (both modes). Times are CUDA-event medians per
step, over rounds that take each variant in turn. For the modes without
CUDA graphs, one profiled step splits GPU time into GEMMs, attention and the
rest (the memory-bound ops kgen replaces, cache copies, embedding).

    python3 bench/python/model_bench.py llama [--layers 4] [--out FILE]
"""
import argparse
import json
import os
import statistics
import sys

import torch

GEMM = ("gemm", "nvjet", "cutlass", "xmma", "cublas", "sm90_", "sm80_",
        "splitk", "matmul")
ATTN = ("flash", "fmha", "attention", "attn", "sdpa", "efficient")


def build(family, layers, vocab):
    import transformers as tf
    common = dict(hidden_size=4096, num_hidden_layers=layers,
                  num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                  vocab_size=vocab, max_position_embeddings=4096)
    if family == "llama":
        cfg = tf.LlamaConfig(**common, intermediate_size=14336)
    else:
        cfg = tf.Qwen3Config(**common, intermediate_size=12288)
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = tf.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    return model.eval()


def scenarios(model, cfg):
    """name -> (kwargs factory): the inputs of one step."""
    import transformers as tf
    out = {}
    ids = torch.randint(0, cfg.vocab_size, (1, 2048), device="cuda")
    out["prefill 1x2048"] = lambda: dict(input_ids=ids, use_cache=False)
    for batch in (1, 32):
        cache = tf.StaticCache(config=cfg, max_cache_len=1024)
        prompt = torch.randint(0, cfg.vocab_size, (batch, 512), device="cuda")
        with torch.no_grad():
            model(input_ids=prompt, past_key_values=cache,
                  cache_position=torch.arange(512, device="cuda"))
        step = torch.randint(0, cfg.vocab_size, (batch, 1), device="cuda")
        pos = torch.tensor([512], device="cuda")
        out[f"decode b{batch} cache 512"] = (
            lambda c=cache, s=step, p=pos: dict(
                input_ids=s, past_key_values=c, cache_position=p,
                position_ids=p.expand(s.shape[0], 1)))
    return out


def time_step(fn, make, graphs, iters=20, warmup=5):
    times = []
    for i in range(warmup + iters):
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        kw = make()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        with torch.no_grad():
            fn(**kw)
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def profile_split(fn, make):
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad():
        fn(**make())
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn(**make())
            torch.cuda.synchronize()
    split = {"gemm": 0.0, "attention": 0.0, "memory-bound": 0.0}
    kernels = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        name = e.name.lower()
        us = e.device_time_total if hasattr(e, "device_time_total") else \
            e.cuda_time_total
        # Inductor's triton kernels are all pointwise or reductions here
        # (their names may mention the sdpa or bmm they feed); attention
        # before GEMMs: flash kernels are built of cutlass GEMMs.
        kind = "memory-bound" if name.startswith("triton_") else \
            "attention" if any(k in name for k in ATTN) else \
            "gemm" if any(k in name for k in GEMM) else "memory-bound"
        split[kind] += us
        key = (kind, e.name[:90])
        kernels[key] = kernels.get(key, 0.0) + us
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:16]
    return ({k: v / 1000 for k, v in split.items()},  # ms
            [[kind, name, round(us, 1)] for (kind, name), us in top])


def gemm_probe(hidden=4096, inter=14336):
    """The merged gate_up GEMM against gate and up apart, per token count."""
    out = {}
    w2 = torch.randn(2 * inter, hidden, device="cuda", dtype=torch.bfloat16)
    wg, wu = w2[:inter].contiguous(), w2[inter:].contiguous()
    for t in (1, 32, 2048):
        x = torch.randn(t, hidden, device="cuda", dtype=torch.bfloat16)
        res = {}
        for label, fn in (
                ("merged", lambda: torch.nn.functional.linear(x, w2)),
                ("apart", lambda: (torch.nn.functional.linear(x, wg),
                                   torch.nn.functional.linear(x, wu)))):
            for _ in range(10):
                fn()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(50):
                fn()
            end.record()
            end.synchronize()
            res[label] = round(start.elapsed_time(end) / 50, 4)
        out[t] = res
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=["llama", "qwen3"])
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    from kgen.integrations.transformers import apply_kgen
    torch._dynamo.config.cache_size_limit = 64
    results = []
    probe = gemm_probe(4096, 14336 if args.family == "llama" else 12288)
    print("gate_up GEMM (ms): " + json.dumps(probe), flush=True)
    print(f"{args.family}: {args.layers} layers, {torch.cuda.get_device_name()}"
          f", torch {torch.__version__}", flush=True)
    # Every variant is built (and compiled) first, then timed in turns, so
    # that a drift of the machine falls on all of them alike.
    variants = {}
    for variant in ("eager", "kgen", "compile", "kgen+compile",
                    "compile ro", "kgen+compile ro"):
        model = build(args.family, args.layers, args.vocab)
        if variant.startswith("kgen"):
            apply_kgen(model)
        fn, graphs = model, variant.endswith(" ro")
        if "compile" in variant:
            fn = torch.compile(model, mode="reduce-overhead" if graphs
                               else None, fullgraph=True, dynamic=False)
        variants[variant] = (fn, graphs, scenarios(model, model.config))
    names = list(next(iter(variants.values()))[2])
    times = {(v, n): [] for v in variants for n in names}
    for n in names:
        for _ in range(args.rounds):
            for v, (fn, graphs, scen) in variants.items():
                times[(v, n)].append(time_step(fn, scen[n], graphs))
    for v, (fn, graphs, scen) in variants.items():
        for n in names:
            rec = {"family": args.family, "variant": v, "scenario": n,
                   "ms": statistics.median(times[(v, n)]),
                   "round_ms": times[(v, n)]}
            if not graphs:
                rec["split_ms"], rec["top_kernels"] = profile_split(
                    fn, scen[n])
            results.append(rec)
            print(json.dumps({k: rec[k] for k in rec if k != "top_kernels"}),
                  flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gemm_probe": probe, "steps": results}, f, indent=1)
    by = {(r["variant"], r["scenario"]): r for r in results}
    print(f"\n| {args.family} | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for variant in dict.fromkeys(r["variant"] for r in results):
        cells = []
        for n in names:
            r = by[(variant, n)]
            cell = f"{r['ms']:.3f} ms"
            if "split_ms" in r:
                cell += f" (mem {r['split_ms']['memory-bound']:.3f})"
            cells.append(cell)
        print(f"| {variant} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
