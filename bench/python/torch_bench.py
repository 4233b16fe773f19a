#!/usr/bin/env python3
"""kgen kernels against PyTorch eager and torch.compile, in one process.

    python3 torch_bench.py --kernels KERNEL_DIR [--lib libkgen_runtime.so]
                           [--out OUT_DIR] [--suite norms|views]
                           [--ab BUNDLE_FOLDER]

--ab runs a second bundle folder (as scripts/prepare-gpu.sh makes it, at
any commit: its own runtime and binding) as a fourth implementation on the
same tensors, for an A/B of two commits' kernels against PyTorch in one run.

Suites (--suite):
  norms   (default) rmsnorm, gemma_rmsnorm, fused_add_rmsnorm, add_rmsnorm,
          layernorm,
          softmax, silu_and_mul, gelu_tanh_and_mul; T (rows) in --tokens x
          hidden in --hiddens.
  views   the ops on views of their tensors:
          rope_neox, rope_gptj: in place on q [T, Hq*D] and k [T, Hk*D],
            views of a fused qkv [T, (Hq + 2 Hk) * D] (vLLM's split),
            positions [T] i64 random in [0, max_pos), cos_sin_cache
            [max_pos, D] f32 (cos | sin); Hq, Hk = --rope-heads (32, 8),
            D = --rope-head-dim (128), max_pos = --rope-max-pos (65536),
            T in --tokens (1, 512, 4096, 16384). One launch of T * (Hq + Hk)
            row programs. Eager: vLLM's forward_native on [T, H, D] views in
            f32, rounded once and written back into q and k (with the
            _cache16 forms' bf16 cache: in bf16, each op rounded).
          rope_neox_rotary, rope_gptj_rotary: the same rotating the first
            rotary_dim = --rope-rotary-factor (0.25) x D of each head;
            rope_neox_rotary_q, rope_gptj_rotary_q: those on q alone;
          rope_neox_padded: rope_neox with each head of the fused qkv
            followed by 64 elements of padding (heads D + 64 apart, vLLM's
            padded test case);
          rope_hf: Hugging Face's apply_rotary_pos_emb out of place on
            token-major q [T, Hq*D] and k [T, Hk*D] with cos and sin [T, D],
            all bf16, each op rounded (as HF's eager module).
          silu_and_mul, gelu_tanh_and_mul: d in --hiddens (4096, 11008,
            14336) x T in --tokens;
          adaln (DiT): x [B*N, C], scale and shift [B, C], eps 1e-6;
            B x N in --adaln-shapes (1x1024, 8x1024, 1x4096, 8x4096), C in
            --adaln-c (1152, 3072). Eager: F.layer_norm(x, (C,), eps=1e-6)
            * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1) on [B, N, C];
            kgen and compile are checked against that formula in f32,
            rounded once (the op's semantics: eager's op-by-op rounding
            loses ulps where + shift cancels).
  library rmsnorm_noweight and fused_add_rmsnorm_noweight (vLLM's
          weight None), fused_add_rmsnorm_quant_static and _dynamic
          (vLLM's fused residual add, RMSNorm and fp8 quantization; scale_ub
          2), and vLLM's mul_and_silu, fatrelu_and_mul
          (threshold 0.25), swigluoai_and_mul (alpha 1.702, limit 7),
          gelu_quick, gelu_new, gelu_fast, on the norms grid; eager is
          vLLM's forward_native (op by op in bf16). Also
          gemma_fused_add_rmsnorm (eager: HF's Gemma layer) and the f32-weight
          norms rmsnorm_f32w, layernorm_f32w, fused_add_rmsnorm_f32w
          (eager: the HF module cast back to bf16; layer_norm on x.float()),
          and FlashInfer's rounding of rmsnorm, fused_add_rmsnorm and
          gemma_fused_add_rmsnorm (`_flashinfer`; eager: FlashInfer's tests'
          references). vLLM's int8 quantizations (rmsnorm_quant_int8_static
          and _dynamic, their fused adds, quant_int8_static and _dynamic)
          and per_token_group_quant_fp8 / _fp8_ue8m0 / _int8 (groups of
          --group-size elements of the hidden, default 128); eager: the
          kernels' arithmetic in torch ops.
          A length the bundle has no specialized kernel for runs on the
          op's dynamic kernel (name ..._dyn_...; the CSV's variant column).

For bf16 and each op x shape, three implementations of the same formula:
  kgen     the bundle's kernel specialized for that hidden (views suite:
           else the dynamic one), launched through kgen_ctypes
           (libkgen_runtime.so) on PyTorch's current stream;
  eager    the formula written with torch ops as the op file / Hugging Face
           write it (torch_formulas below);
  compile  torch.compile(dynamic=False) of that same function (default mode).
Each shape is first checked: kgen and compile against eager (outputs of kgen
poisoned with NaN first; in-place ops (rope) run each on an identical copy;
elementwise |a - b| <= 1e-2 + 2^-6 |b|, the bf16 tolerance of
docs/design.md (fp8 outputs: 2^-9 + 2^-3 |b|, one e4m3 ulp), and
||a - b|| / ||b|| <= 1e-2; no NaN).
Then each is timed two ways:
  cold    one call after an L2 flush (a 256 MiB buffer written), median of
          30 calls (after 3 warm-ups), CUDA events around the call only; the
          host waits for each call before the next flush, so every call is
          queued behind its own flush alone (a queue of many flushes made
          the launch after the flush 0.4-0.9 us slower, by how far the GPU
          ran behind, which depends on each caller's launch cost on the host);
  steady  K back-to-back calls over rotated copies of all the call's tensors
          (inputs, weights and outputs; together more than 1.2 x L2, at least
          2 copies) captured in one CUDA graph; median over 7 replays (after
          one) of replay time / K. K is a multiple of the copies, large enough
          for about 1 ms of work per replay.
GB/s counts the fewest bytes: inputs read once, outputs written once, weights
once (rope: q and k read and written, positions read, and the cache rows
used, T * D * 4 bytes at most the cache's size; the cache is shared by the
rotated copies, as a model's is). A 1 GiB device-to-device copy (bytes read
+ written, torch's copy_, median of 20) in the same run gives "% of memcpy".

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
import gc
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
NORM_OPS = ["rmsnorm", "gemma_rmsnorm", "fused_add_rmsnorm", "add_rmsnorm",
            "layernorm", "softmax", "rmsnorm_quant_static",
            "rmsnorm_quant_dynamic"]
ACT_OPS = ["silu_and_mul", "gelu_tanh_and_mul", "silu_and_mul_quant"]
TOKENS = [1, 32, 512, 4096, 16384, 65536]
HIDDENS = [2048, 4096, 8192, 16384]
# The views suite (issue 4): rope on views of a fused qkv, the activations at
# LLM sizes, DiT's adaLN.
VIEW_OPS = ["rope_neox", "silu_and_mul", "gelu_tanh_and_mul", "adaln",
            "rope_gptj", "rope_neox_cache16", "rope_gptj_cache16",
            "rope_neox_padded", "rope_hf", "qk_rmsnorm", "qk_norm_rope_neox"]
VIEW_TOKENS = [1, 512, 4096, 16384]
VIEW_HIDDENS = [4096, 11008, 14336]
ROPE_HEADS = (32, 8)  # q heads, k heads (GQA)
ROPE_HEAD_DIM = 128
ROPE_MAX_POS = 65536
ROPE_PAD = 64  # rope_neox_padded: elements after each head (vLLM's test)
ROPE_ROTARY_FACTOR = 0.25  # rope_*_rotary: rotary_dim / head_dim
ADALN_SHAPES = [(1, 1024), (8, 1024), (1, 4096), (8, 4096)]  # (B, N)
ADALN_CS = [1152, 3072]
# Issue 38's forms: vLLM's other activations and the weightless RMSNorm, on
# the norms suite's grid (--tokens, --hiddens).
LIB_OPS = ["rmsnorm_noweight", "fused_add_rmsnorm_noweight",
           "fused_add_rmsnorm_quant_static",
           "fused_add_rmsnorm_quant_dynamic", "mul_and_silu", "fatrelu_and_mul",
           "swigluoai_and_mul", "silu", "gelu", "gelu_tanh", "gelu_and_mul",
           "gelu_quick", "gelu_new", "gelu_fast",
           "gemma_fused_add_rmsnorm", "rmsnorm_f32w", "layernorm_f32w",
           "fused_add_rmsnorm_f32w", "rmsnorm_flashinfer",
           "fused_add_rmsnorm_flashinfer",
           "gemma_fused_add_rmsnorm_flashinfer", "rmsnorm_quant_int8_static",
           "rmsnorm_quant_int8_dynamic", "fused_add_rmsnorm_quant_int8_static",
           "fused_add_rmsnorm_quant_int8_dynamic", "quant_int8_static",
           "quant_int8_dynamic", "per_token_group_quant_fp8",
           "per_token_group_quant_fp8_ue8m0",
           "per_token_group_quant_int8", "rmsnorm_quant_group",
           "rmsnorm_quant_int8_group", "fused_add_rmsnorm_quant_group",
           "fused_add_rmsnorm_quant_int8_group", "silu_and_mul_quant_group",
           "silu_and_mul_quant_int8_group"]
SUITES = {"norms": NORM_OPS + ACT_OPS, "views": VIEW_OPS, "library": LIB_OPS}
MAX_BYTES = 4.3e9
IMPLS = ["kgen", "eager", "compile"]
# Overridden by selftest_emu.py only (a CPU run against the emulated driver).
DEVICE = "cuda"
WORKER_CMD = None  # default: [python, this file]
FLUSH_BYTES = 256 << 20
ATOL, RTOL, REL_NORM_TOL = 1e-2, 2.0 ** -6, 1e-2
# fp8 e4m3 outputs: one ulp (3 mantissa bits), the subnormal step near 0;
# a one-ulp flip costs ~9% of an element, so the norm allows 2^-4.
FP8_TOL = (2.0 ** -9, 2.0 ** -3, 2.0 ** -4)
# int8 outputs: one step (a tie, or a scale an ulp apart).
INT8_TOL = (1.0, 0.0, 2.0 ** -4)

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


def f_gemma_fused_add_rmsnorm(x, residual, weight):
    # transformers' Gemma decoder layer: the sum in the dtype, then
    # GemmaRMSNorm of it. kgen does it in place (FlashInfer's form).
    r = x + residual
    return f_gemma_rmsnorm(r, weight), r


def f_rmsnorm_flashinfer(x, weight):
    # FlashInfer's tests' llama_rms_norm: in f32, the weight too, rounded once.
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    return (xf * weight.float()).to(x.dtype)


def _fused_add_flashinfer(x, residual, weight, bias):
    # FlashInfer's tests' fused_add_rms_norm: the sum in f32 for the norm,
    # rounded for the residual; (bias + w) in f32, one rounding.
    xf = x.float() + residual.float()
    r = xf.to(x.dtype)
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    return (xf * (bias + weight.float())).to(x.dtype), r


def f_fused_add_rmsnorm_flashinfer(x, residual, weight):
    return _fused_add_flashinfer(x, residual, weight, 0.0)


def f_gemma_fused_add_rmsnorm_flashinfer(x, residual, weight):
    return _fused_add_flashinfer(x, residual, weight, 1.0)


def f_rmsnorm_f32w(x, weight):
    # LlamaRMSNorm with an f32 weight gives f32; the next layer takes x's
    # dtype.
    return rmsnorm_ref(x, weight, 1e-6).to(x.dtype)


def f_layernorm_f32w(x, weight, bias):
    # Eager CUDA layer_norm refuses bf16 rows with f32 weights: upcast, as
    # models that keep LayerNorm in f32 do.
    return F.layer_norm(x.float(), (x.shape[-1],), weight, bias,
                        1e-5).to(x.dtype)


def f_fused_add_rmsnorm_f32w(x, residual, weight):
    r = x + residual
    return f_rmsnorm_f32w(r, weight), r


def f_softmax(x):
    return torch.softmax(x, dim=-1)


QUANT_SCALE = 0.05  # the static quantizations' scale: |y| up to 22.4
FP8_MAX = 448.0


def f_rmsnorm_quant_static(x, weight):
    # vLLM's rms_norm_static_fp8_quant reference: LlamaRMSNorm, then divided
    # by the scale and saturated to e4m3's range.
    y = rmsnorm_ref(x, weight, 1e-6).float() / QUANT_SCALE
    return y.clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


def f_rmsnorm_quant_dynamic(x, weight):
    # vLLM's rms_norm_dynamic_per_token_quant reference: each row's scale is
    # amax(|y|) / 448, at least 1 / (448 * 512).
    y = rmsnorm_ref(x, weight, 1e-6).float()
    scale = (y.abs().amax(-1, keepdim=True) / FP8_MAX).clamp(
        min=1.0 / (FP8_MAX * 512.0))
    q = (y / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale.squeeze(-1)


def f_silu_and_mul(x):
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


def f_silu_and_mul_quant(x):
    # vLLM's silu_and_mul, then its static fp8 quantization.
    y = f_silu_and_mul(x).float() / QUANT_SCALE
    return y.clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


def f_gelu_tanh_and_mul(x):
    d = x.shape[-1] // 2
    return F.gelu(x[..., :d], approximate="tanh") * x[..., d:]


FATRELU_THRESHOLD = 0.25
SWIGLUOAI_ALPHA, SWIGLUOAI_LIMIT = 1.702, 7.0


def f_rmsnorm_noweight(x):
    # vLLM's RMSNorm(has_weight=False).forward_native
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(
        x.dtype)


def f_fused_add_rmsnorm_noweight(x, residual):
    # vLLM's fused_add_rms_norm with weight None, out of place: r = x +
    # residual in the dtype, y = its norm; returns (y, r).
    r = x + residual
    return f_rmsnorm_noweight(r), r


SCALE_UB = 2.0  # fused_add_rmsnorm_quant_dynamic's bound: clamps most rows


def f_fused_add_rmsnorm_quant_static(x, residual, weight):
    # vLLM's reference: fused_add_rms_norm (the sum rounded), then the
    # static fp8 quantization.
    r = x + residual
    y = rmsnorm_ref(r, weight, 1e-6).float() / QUANT_SCALE
    return y.clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), r


def f_fused_add_rmsnorm_quant_dynamic(x, residual, weight):
    # vLLM's rms_norm_dynamic_per_token_quant with a residual: the f32 sum
    # normalised, the rounded sum kept; scales bounded by SCALE_UB.
    s = x.float() + residual.float()
    n = (weight * (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6))
         .to(x.dtype)).float()
    scale = (n.abs().amax(-1, keepdim=True).clamp(max=SCALE_UB) / FP8_MAX
             ).clamp(min=1.0 / (FP8_MAX * 512.0))
    q = (n / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale.squeeze(-1), s.to(x.dtype)


def _int8_rn(y):
    # vLLM's float_to_int8_rn: to nearest, ties to even, saturating.
    return y.round().clamp(-128, 127).to(torch.int8)


def _int8_per_row(y):
    # vLLM's int8 per-token scale (at least FLT_EPSILON) and its reciprocal.
    scale = (y.abs().amax(-1, keepdim=True) / 127.0).clamp(
        min=torch.finfo(torch.float32).eps)
    return _int8_rn(y * (1.0 / scale)), scale.squeeze(-1)


def f_rmsnorm_quant_int8_static(x, weight):
    return _int8_rn(rmsnorm_ref(x, weight, 1e-6).float() / QUANT_SCALE)


def f_rmsnorm_quant_int8_dynamic(x, weight):
    return _int8_per_row(rmsnorm_ref(x, weight, 1e-6).float())


def f_fused_add_rmsnorm_quant_int8_static(x, residual, weight):
    r = x + residual
    return _int8_rn(rmsnorm_ref(r, weight, 1e-6).float() / QUANT_SCALE), r


def f_fused_add_rmsnorm_quant_int8_dynamic(x, residual, weight):
    s = x.float() + residual.float()
    n = (weight * (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6))
         .to(x.dtype)).float()
    q, scale = _int8_per_row(n)
    return q, scale, s.to(x.dtype)


def f_quant_int8_static(x):
    # vLLM's static_scaled_int8_quant.
    return _int8_rn(x.float() / QUANT_SCALE)


def f_quant_int8_dynamic(x):
    # vLLM's dynamic_scaled_int8_quant: x * (127 / amax), 0 for a zero row.
    amax = x.float().abs().amax(-1, keepdim=True)
    inv = torch.where(amax == 0, 0.0, torch.full_like(amax, 127.0) / amax)
    return _int8_rn(x.float() * inv), (amax / 127.0).squeeze(-1)


GROUP_SIZE = 128  # per_token_group_quant's groups (DeepSeek's block size)
GROUP_EPS = 1e-10


def _group_quant(x, lo, hi, dtype, ue8m0=False):
    # vLLM's per_token_group_quant: max(amax, eps) / qmax per group; x / s
    # clamped, then cast (fp8 rounds to nearest, int8 truncates). UE8M0: s
    # rounded up to a power of two, as vLLM's Triton kernel writes it.
    g = x.float().unflatten(-1, (-1, GROUP_SIZE))
    s = g.abs().amax(-1, keepdim=True).clamp(min=GROUP_EPS) / hi
    if ue8m0:
        s = torch.exp2(torch.ceil(torch.log2(s.clamp(min=1e-10))))
    return (g / s).clamp(lo, hi).to(dtype).flatten(-2), s.flatten()


def f_per_token_group_quant_fp8(x):
    return _group_quant(x, -FP8_MAX, FP8_MAX, torch.float8_e4m3fn)


def f_per_token_group_quant_fp8_ue8m0(x):
    return _group_quant(x, -FP8_MAX, FP8_MAX, torch.float8_e4m3fn, True)


def f_per_token_group_quant_int8(x):
    return _group_quant(x, -128.0, 127.0, torch.int8)


def _norm_group_quant(n, int8, scale_ub=None):
    # vLLM's rms_norm_per_block_quant: per group of GROUP_SIZE, s =
    # max(min(amax, scale_ub) / qmax, the least scale); n / s (int8:
    # n * (1 / s)), converted.
    g = n.unflatten(-1, (-1, GROUP_SIZE))
    top = g.abs().amax(-1, keepdim=True)
    if scale_ub is not None:
        top = top.clamp(max=scale_ub)
    s = (top / (127.0 if int8 else FP8_MAX)).clamp(
        min=torch.finfo(torch.float32).eps if int8 else 1.0 / (FP8_MAX * 512.0))
    q = (_int8_rn(g * (1.0 / s)) if int8 else
         (g / s).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn))
    return q.flatten(-2), s.squeeze(-1)


def f_rmsnorm_quant_group(x, weight):
    return _norm_group_quant(rmsnorm_ref(x, weight, 1e-6).float(), False,
                             SCALE_UB)


def f_rmsnorm_quant_int8_group(x, weight):
    return _norm_group_quant(rmsnorm_ref(x, weight, 1e-6).float(), True)


def _added_norm(x, residual, weight):
    # vLLM's kernels with a residual: the f32 sum normalised, the sum kept.
    s = x.float() + residual.float()
    n = (weight * (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6))
         .to(x.dtype)).float()
    return n, s.to(x.dtype)


def f_fused_add_rmsnorm_quant_group(x, residual, weight):
    n, r = _added_norm(x, residual, weight)
    return _norm_group_quant(n, False, SCALE_UB) + (r,)


def f_fused_add_rmsnorm_quant_int8_group(x, residual, weight):
    n, r = _added_norm(x, residual, weight)
    return _norm_group_quant(n, True) + (r,)


def _silu_group_quant(x, int8, scale_ub=None):
    # vLLM's silu_and_mul_per_block_quant: silu(a) * b in f32, per group of
    # GROUP_SIZE s = max(min(amax / qmax, scale_ub), the least scale), y / s.
    d = x.shape[-1] // 2
    a, b = x[..., :d].float(), x[..., d:].float()
    g = (a * (1.0 / (1.0 + torch.exp(-a))) * b).unflatten(-1, (-1, GROUP_SIZE))
    s = g.abs().amax(-1, keepdim=True) / (127.0 if int8 else FP8_MAX)
    if scale_ub is not None:
        s = s.clamp(max=scale_ub)
    s = s.clamp(min=torch.finfo(torch.float32).eps if int8
                else 1.0 / (FP8_MAX * 512.0))
    q = (_int8_rn(g / s) if int8 else
         (g / s).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn))
    return q.flatten(-2), s.flatten()


def f_silu_and_mul_quant_group(x):
    return _silu_group_quant(x, False, SCALE_UB)


def f_silu_and_mul_quant_int8_group(x):
    return _silu_group_quant(x, True)


# vLLM's forward_native of each activation (model dtype, op by op).
def f_mul_and_silu(x):
    d = x.shape[-1] // 2
    return x[..., :d] * F.silu(x[..., d:])


def f_fatrelu_and_mul(x):
    d = x.shape[-1] // 2
    return F.threshold(x[..., :d], FATRELU_THRESHOLD, 0.0) * x[..., d:]


def f_swigluoai_and_mul(x):
    gate, up = x[..., ::2], x[..., 1::2]
    gate = gate.clamp(min=None, max=SWIGLUOAI_LIMIT)
    up = up.clamp(min=-SWIGLUOAI_LIMIT, max=SWIGLUOAI_LIMIT)
    return (up + 1) * (gate * torch.sigmoid(gate * SWIGLUOAI_ALPHA))


def f_silu(x):
    return F.silu(x)


def f_gelu(x):
    return F.gelu(x)


def f_gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


def f_gelu_and_mul(x):
    d = x.shape[-1] // 2
    return F.gelu(x[..., :d]) * x[..., d:]


def f_gelu_quick(x):
    return x * torch.sigmoid(1.702 * x)


def f_gelu_new(x):
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3.0))))


def f_gelu_fast(x):
    return 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 *
                                       (1.0 + 0.044715 * x * x)))


def _rope(positions, qkv, cos_sin_cache, neox, key=True):
    # vLLM's RotaryEmbedding.forward_native on q and k, views of the fused
    # qkv (as vLLM's qkv.split gives them): index_select the cache by
    # position, chunk it into cos and sin, rotate [T, H, D] views in f32 and
    # write the result, rounded once, back into q and k.
    # A cache narrower than a head rotates its first rotary_dim elements;
    # key False: q alone (vLLM's key None). A cache in q's dtype (vLLM's
    # own call) rounds each op to that dtype, as forward_native does.
    hq, hk = ROPE_HEADS
    T = qkv.shape[0]
    d = qkv.shape[1] // (hq + 2 * hk)
    rot = cos_sin_cache.shape[-1]
    half = rot // 2
    cos, sin = cos_sin_cache.index_select(0, positions).chunk(2, dim=-1)
    work = cos.dtype
    cos = cos.unsqueeze(-2)
    sin = sin.unsqueeze(-2)
    for start, heads in ((0, hq), (hq * d, hk))[:2 if key else 1]:
        x = qkv[:, start:start + heads * d].view(T, heads, d)[..., :rot]
        if neox:
            x1 = x[..., :half].to(work)
            x2 = x[..., half:].to(work)
        else:
            x1 = x[..., 0::2].to(work)
            x2 = x[..., 1::2].to(work)
        o1 = x1 * cos - x2 * sin
        o2 = x2 * cos + x1 * sin
        if neox:
            x.copy_(torch.cat((o1, o2), dim=-1))
        else:
            x.copy_(torch.stack((o1, o2), dim=-1).flatten(-2))


def f_rope_neox(positions, qkv, cos_sin_cache):
    _rope(positions, qkv, cos_sin_cache, True)


def f_rope_gptj(positions, qkv, cos_sin_cache):
    _rope(positions, qkv, cos_sin_cache, False)


def f_rope_neox_q(positions, qkv, cos_sin_cache):
    _rope(positions, qkv, cos_sin_cache, True, key=False)


def f_rope_gptj_q(positions, qkv, cos_sin_cache):
    _rope(positions, qkv, cos_sin_cache, False, key=False)


def f_qk_rmsnorm(qkv, q_weight, k_weight):
    # Qwen3's q_norm and k_norm (LlamaRMSNorm over each head) on q and k,
    # views of the fused qkv, written back in place.
    hq, hk = ROPE_HEADS
    T = qkv.shape[0]
    d = qkv.shape[1] // (hq + 2 * hk)
    for start, heads, w in ((0, hq, q_weight), (hq * d, hk, k_weight)):
        x = qkv[:, start:start + heads * d].view(T, heads, d)
        x.copy_(rmsnorm_ref(x, w, 1e-6))


def f_qk_norm_rope_neox(positions, qkv, q_weight, k_weight, cos_sin_cache):
    # vLLM's unfused path: RMSNorm per head, then forward_native's rope with
    # the cache in the model's dtype.
    f_qk_rmsnorm(qkv, q_weight, k_weight)
    _rope(positions, qkv, cos_sin_cache, True)


def f_qk_norm_rope_gptj(positions, qkv, q_weight, k_weight, cos_sin_cache):
    f_qk_rmsnorm(qkv, q_weight, k_weight)
    _rope(positions, qkv, cos_sin_cache, False)


def f_rope_hf(q, k, cos, sin):
    # Hugging Face's apply_rotary_pos_emb on token-major q and k (kgen's
    # rope_hf layout), cos and sin in their dtype: each op rounded.
    d = cos.shape[-1]
    c, s = cos[:, None], sin[:, None]

    def apply(x):
        x = x.view(x.shape[0], -1, d)
        rot = torch.cat((-x[..., d // 2:], x[..., :d // 2]), -1)
        return (x * c + rot * s).flatten(1)
    return apply(q), apply(k)


def f_adaln(x, scale, shift):
    # DiT: modulate(norm_final(x), shift, scale) with an affine-free
    # LayerNorm, on x seen as [B, N, C].
    b, c = scale.shape
    normed = F.layer_norm(x.view(b, -1, c), (c,), eps=1e-6)
    return normed * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def ref_adaln(x, scale, shift):
    # The reference adaln is checked against: f_adaln in f32, rounded once.
    b, c = scale.shape
    normed = F.layer_norm(x.float().view(b, -1, c), (c,), eps=1e-6)
    return (normed * (1 + scale.float().unsqueeze(1))
            + shift.float().unsqueeze(1)).to(x.dtype)


# Per op: the tensors of the kgen kernel (name, layout, role, init), the
# eager function's inputs, the kgen outputs compared with the eager results
# (in order), the scalars. Layout: row = [T, h], row2 = [T, 2h], vec = [h],
# batch = [B, h]. Role: in, out, inout (kgen writes it in place).
# Optional: dims (the kernel's dim params, from the shape (T, h, B); the
# norms' row length is set below the table), rows (the launch's row count; default the first row tensor's),
# groups (kgen_ctypes' row maps), make (a tensor maker instead of `tensors`),
# bytes (the fewest bytes), footprint (bytes of one rotated copy), kernel
# (the kgen op it runs, when not the entry's name), ab (False: the --ab
# bundle's kernels cannot take the layout), inplace
# (the eager function writes its inputs; compare names tensors of the set),
# ref (the reference kgen and compile are checked against; default fn).
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
    # The same formula out of place: y and residual_out are new tensors.
    "add_rmsnorm": dict(
        fn=f_fused_add_rmsnorm, tensors=[("x", "row", "in", "randn"),
                                         ("residual", "row", "in", "randn"),
                                         ("weight", "vec", "in", "w1"),
                                         ("y", "row", "out", None),
                                         ("residual_out", "row", "out", None)],
        eager_in=["x", "residual", "weight"], compare=["y", "residual_out"],
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
    "rmsnorm_quant_static": dict(
        fn=f_rmsnorm_quant_static, tensors=[("x", "row", "in", "randn"),
                                            ("weight", "vec", "in", "w1"),
                                            ("y", "row", "out", None)],
        dtypes={"y": "float8_e4m3fn"},
        eager_in=["x", "weight"], compare=["y"],
        scalars={"eps": 1e-6, "scale": QUANT_SCALE}),
    "rmsnorm_quant_dynamic": dict(
        fn=f_rmsnorm_quant_dynamic, tensors=[("x", "row", "in", "randn"),
                                             ("weight", "vec", "in", "w1"),
                                             ("y", "row", "out", None),
                                             ("scale", "tok", "out", None)],
        dtypes={"y": "float8_e4m3fn", "scale": "float32"},
        eager_in=["x", "weight"], compare=["y", "scale"],
        scalars={"eps": 1e-6}),
    "silu_and_mul": dict(
        fn=f_silu_and_mul, tensors=[("x", "row2", "in", "randn"),
                                    ("y", "row", "out", None)],
        eager_in=["x"], compare=["y"], scalars={},
        dims=lambda T, h, b: {"d": h}),
    "silu_and_mul_quant": dict(
        fn=f_silu_and_mul_quant, tensors=[("x", "row2", "in", "randn"),
                                          ("y", "row", "out", None)],
        dtypes={"y": "float8_e4m3fn"},
        eager_in=["x"], compare=["y"], scalars={"scale": QUANT_SCALE},
        dims=lambda T, h, b: {"d": h}),
    "gelu_tanh_and_mul": dict(
        fn=f_gelu_tanh_and_mul, tensors=[("x", "row2", "in", "randn"),
                                         ("y", "row", "out", None)],
        eager_in=["x"], compare=["y"], scalars={},
        dims=lambda T, h, b: {"d": h}),
    "rmsnorm_noweight": dict(
        fn=f_rmsnorm_noweight, tensors=[("x", "row", "in", "randn"),
                                        ("y", "row", "out", None)],
        eager_in=["x"], compare=["y"], scalars={"eps": 1e-6}),
    "fused_add_rmsnorm_noweight": dict(
        fn=f_fused_add_rmsnorm_noweight,
        tensors=[("x", "row", "inout", "randn"),
                 ("residual", "row", "inout", "randn")],
        eager_in=["x", "residual"], compare=["x", "residual"],
        scalars={"eps": 1e-6}),
    "fused_add_rmsnorm_quant_static": dict(
        fn=f_fused_add_rmsnorm_quant_static,
        tensors=[("x", "row", "in", "randn"),
                 ("residual", "row", "inout", "randn"),
                 ("weight", "vec", "in", "w1"), ("y", "row", "out", None)],
        dtypes={"y": "float8_e4m3fn"},
        eager_in=["x", "residual", "weight"], compare=["y", "residual"],
        scalars={"eps": 1e-6, "scale": QUANT_SCALE}),
    "fused_add_rmsnorm_quant_dynamic": dict(
        fn=f_fused_add_rmsnorm_quant_dynamic,
        tensors=[("x", "row", "in", "randn"),
                 ("residual", "row", "inout", "randn"),
                 ("weight", "vec", "in", "w1"), ("y", "row", "out", None),
                 ("scale", "tok", "out", None)],
        dtypes={"y": "float8_e4m3fn", "scale": "float32"},
        eager_in=["x", "residual", "weight"],
        compare=["y", "scale", "residual"],
        scalars={"eps": 1e-6, "scale_ub": SCALE_UB}),
    "fatrelu_and_mul": dict(
        fn=f_fatrelu_and_mul, tensors=[("x", "row2", "in", "randn"),
                                       ("y", "row", "out", None)],
        eager_in=["x"], compare=["y"],
        scalars={"threshold": FATRELU_THRESHOLD},
        dims=lambda T, h, b: {"d": h}),
    "swigluoai_and_mul": dict(
        fn=f_swigluoai_and_mul, tensors=[("x", "row2", "in", "randn"),
                                         ("y", "row", "out", None)],
        eager_in=["x"], compare=["y"],
        scalars={"alpha": SWIGLUOAI_ALPHA, "limit": SWIGLUOAI_LIMIT},
        dims=lambda T, h, b: {"d": h}),
    "gemma_fused_add_rmsnorm": dict(
        fn=f_gemma_fused_add_rmsnorm,
        tensors=[("x", "row", "inout", "randn"),
                 ("residual", "row", "inout", "randn"),
                 ("weight", "vec", "in", "w0")],
        eager_in=["x", "residual", "weight"], compare=["x", "residual"],
        scalars={"eps": 1e-6}),
    # The norms with f32 weights (and bias) by bf16 rows.
    "rmsnorm_f32w": dict(
        fn=f_rmsnorm_f32w, tensors=[("x", "row", "in", "randn"),
                                    ("weight", "vec", "in", "w1"),
                                    ("y", "row", "out", None)],
        dtypes={"weight": "float32"},
        eager_in=["x", "weight"], compare=["y"], scalars={"eps": 1e-6}),
    "layernorm_f32w": dict(
        fn=f_layernorm_f32w, tensors=[("x", "row", "in", "randn"),
                                 ("weight", "vec", "in", "w1"),
                                 ("bias", "vec", "in", "b"),
                                 ("y", "row", "out", None)],
        dtypes={"weight": "float32", "bias": "float32"},
        eager_in=["x", "weight", "bias"], compare=["y"],
        scalars={"eps": 1e-5}),
    "fused_add_rmsnorm_f32w": dict(
        fn=f_fused_add_rmsnorm_f32w,
        tensors=[("x", "row", "inout", "randn"),
                 ("residual", "row", "inout", "randn"),
                 ("weight", "vec", "in", "w1")],
        dtypes={"weight": "float32"},
        eager_in=["x", "residual", "weight"], compare=["x", "residual"],
        scalars={"eps": 1e-6}),
    "adaln": dict(
        fn=f_adaln, ref=ref_adaln, tensors=[("x", "row", "in", "randn"),
                             ("scale", "batch", "in", "w0"),
                             ("shift", "batch", "in", "b"),
                             ("y", "row", "out", None)],
        eager_in=["x", "scale", "shift"], compare=["y"],
        scalars={"eps": 1e-6},
        dims=lambda T, h, b: {"hidden": h, "tokens_per_batch": T // b},
        groups=lambda T, h, b: {"scale": T // b, "shift": T // b}),
}


def _row_dim(name):
    return lambda T, h, b: {name: h}


# The int8 forms of the fp8 quantizations: the same tensors, int8 y.
for _op in ["rmsnorm_quant", "fused_add_rmsnorm_quant"]:
    for _kind in ["static", "dynamic"]:
        _spec = dict(OPS["%s_%s" % (_op, _kind)],
                     fn=globals()["f_%s_int8_%s" % (_op, _kind)])
        _spec["dtypes"] = dict(_spec["dtypes"], y="int8")
        _spec["scalars"] = {k: v for k, v in _spec["scalars"].items()
                            if k != "scale_ub"}
        OPS["%s_int8_%s" % (_op, _kind)] = _spec
OPS["quant_int8_static"] = dict(
    fn=f_quant_int8_static, tensors=[("x", "row", "in", "randn"),
                                     ("y", "row", "out", None)],
    dtypes={"y": "int8"}, eager_in=["x"], compare=["y"],
    scalars={"scale": QUANT_SCALE})
OPS["quant_int8_dynamic"] = dict(
    fn=f_quant_int8_dynamic, tensors=[("x", "row", "in", "randn"),
                                      ("y", "row", "out", None),
                                      ("scale", "tok", "out", None)],
    dtypes={"y": "int8", "scale": "float32"}, eager_in=["x"],
    compare=["y", "scale"], scalars={})
for _op, _out in (("per_token_group_quant_fp8", "float8_e4m3fn"),
                  ("per_token_group_quant_fp8_ue8m0", "float8_e4m3fn"),
                  ("per_token_group_quant_int8", "int8")):
    OPS[_op] = dict(
        fn=globals()["f_" + _op], tensors=[("x", "row", "in", "randn"),
                                           ("y", "row", "out", None),
                                           ("scale", "group", "out", None)],
        dtypes={"y": _out, "scale": "float32"}, eager_in=["x"],
        compare=["y", "scale"], scalars={"eps": GROUP_EPS},
        length=lambda h: GROUP_SIZE,
        # Row-major scales (a kernel without the dim leaves it unused).
        dims=lambda T, h, b: {"groups": h // GROUP_SIZE,
                              "scale_group_stride": 1},
        rows=lambda T, h, b: T * (h // GROUP_SIZE))


# RMSNorm with a scale per group (vLLM's rms_norm_per_block_quant).
for _op in ("rmsnorm_quant_group", "rmsnorm_quant_int8_group",
            "fused_add_rmsnorm_quant_group",
            "fused_add_rmsnorm_quant_int8_group"):
    _res = _op.startswith("fused_add")
    OPS[_op] = dict(
        fn=globals()["f_" + _op],
        tensors=[("x", "row", "in", "randn")]
        + ([("residual", "row", "inout", "randn")] if _res else [])
        + [("weight", "vec", "in", "w1"), ("y", "row", "out", None),
           ("scale", "groups", "out", None)],
        dtypes={"y": "int8" if "int8" in _op else "float8_e4m3fn",
                "scale": "float32"},
        eager_in=["x", "residual", "weight"] if _res else ["x", "weight"],
        compare=["y", "scale"] + (["residual"] if _res else []),
        scalars=dict({"eps": 1e-6},
                     **({} if "int8" in _op else {"scale_ub": SCALE_UB})),
        length=lambda h: GROUP_SIZE,
        dims=lambda T, h, b: {"groups": h // GROUP_SIZE})


def _gated_group_make(out_dtype):
    # The kernel's "gate" and "up" are the halves of one x [T, 2h] row (a
    # group a row program, as per_token_group_quant); y [T, h], the scales
    # row-major [T * h / GROUP_SIZE].
    def make(T, h, b, copies, gen, dev):
        sets = []
        for _ in range(copies):
            x = torch.empty((T, 2 * h), dtype=torch.bfloat16, device=dev)
            x.normal_(0.0, 1.0, generator=gen)
            y = torch.empty((T, h), dtype=getattr(torch, out_dtype),
                            device=dev)
            s = torch.empty(T * (h // GROUP_SIZE), dtype=torch.float32,
                            device=dev)
            poison(y)
            poison(s)
            sets.append({"x": x, "gate": x[:, :h], "up": x[:, h:], "y": y,
                         "scale": s})
        return sets
    return make


for _op in ("silu_and_mul_quant_group", "silu_and_mul_quant_int8_group"):
    _out = "int8" if "int8" in _op else "float8_e4m3fn"
    OPS[_op] = dict(
        fn=globals()["f_" + _op], make=_gated_group_make(_out),
        tensors=[("x", "row2", "in", "randn"), ("y", "row", "out", None),
                 ("scale", "group", "out", None)],
        dtypes={"y": _out, "scale": "float32"},
        eager_in=["x"], compare=["y", "scale"],
        scalars={} if "int8" in _op else {"scale_ub": SCALE_UB},
        length=lambda h: GROUP_SIZE,
        dims=lambda T, h, b: {"groups": h // GROUP_SIZE,
                              "scale_group_stride": 1},
        rows=lambda T, h, b: T * (h // GROUP_SIZE))

OPS["mul_and_silu"] = dict(OPS["silu_and_mul"], fn=f_mul_and_silu)
# FlashInfer's rounding of the norms (docs/rounding.md).
OPS["rmsnorm_flashinfer"] = dict(OPS["rmsnorm"], fn=f_rmsnorm_flashinfer)
OPS["fused_add_rmsnorm_flashinfer"] = dict(
    OPS["fused_add_rmsnorm"], fn=f_fused_add_rmsnorm_flashinfer)
OPS["gemma_fused_add_rmsnorm_flashinfer"] = dict(
    OPS["gemma_fused_add_rmsnorm"], fn=f_gemma_fused_add_rmsnorm_flashinfer)
OPS["gelu_and_mul"] = dict(OPS["gelu_tanh_and_mul"], fn=f_gelu_and_mul)
for _op in ["silu", "gelu", "gelu_tanh", "gelu_quick", "gelu_new",
            "gelu_fast"]:
    OPS[_op] = dict(fn=globals()["f_" + _op],
                    tensors=[("x", "row", "in", "randn"),
                             ("y", "row", "out", None)],
                    eager_in=["x"], compare=["y"], scalars={},
                    dims=lambda T, h, b: {"d": h})

# The norms' row length, for their dynamic kernels.
for _op in NORM_OPS + ["rmsnorm_noweight", "fused_add_rmsnorm_noweight",
                       "fused_add_rmsnorm_quant_static",
                       "fused_add_rmsnorm_quant_dynamic",
                       "rmsnorm_quant_int8_static",
                       "rmsnorm_quant_int8_dynamic",
                       "fused_add_rmsnorm_quant_int8_static",
                       "fused_add_rmsnorm_quant_int8_dynamic",
                       "quant_int8_static", "quant_int8_dynamic",
                       "gemma_fused_add_rmsnorm", "rmsnorm_f32w",
                       "layernorm_f32w", "fused_add_rmsnorm_f32w",
                       "rmsnorm_flashinfer", "fused_add_rmsnorm_flashinfer",
                       "gemma_fused_add_rmsnorm_flashinfer"]:
    OPS[_op].setdefault("dims",
                        _row_dim("n" if _op == "softmax" else "hidden"))


def _rope_bytes(T, h, b, cache_bytes=4, rot=None, key=True):
    # q and k's rotated elements read and written, positions, cache rows.
    hq, hk = ROPE_HEADS
    rot = rot or h
    return (2 * 2 * T * (hq + (hk if key else 0)) * rot + 8 * T
            + cache_bytes * rot * min(T, ROPE_MAX_POS))


def _rope_rot(h):
    return 2 * max(1, int(h * ROPE_ROTARY_FACTOR) // 2)


def _rope_footprint(T, h, b):
    # One rotated copy: the fused qkv and the positions (the cache is
    # shared).
    hq, hk = ROPE_HEADS
    return 2 * T * (hq + 2 * hk) * h + 8 * T


_cache_tables = {}


def rope_cache(max_pos, d, dev):
    """cos_sin_cache [max_pos, d] f32 as vLLM builds it (base 10000): cos of
    position x inverse frequency in the first half, sin in the second."""
    key = (max_pos, d, str(dev))
    if key not in _cache_tables:
        inv_freq = 1.0 / (10000.0 ** (torch.arange(
            0, d, 2, dtype=torch.float32, device=dev) / d))
        t = torch.arange(max_pos, dtype=torch.float32, device=dev)
        freqs = torch.outer(t, inv_freq)
        _cache_tables[key] = torch.cat((freqs.cos(), freqs.sin()),
                                       dim=-1).contiguous()
    return _cache_tables[key]


def _rope_make(T, h, b, copies, gen, dev):
    hq, hk = ROPE_HEADS
    width = (hq + 2 * hk) * h
    qkv = torch.empty((copies, T, width), dtype=torch.bfloat16, device=dev)
    qkv.normal_(0.0, 1.0, generator=gen)
    pos = torch.randint(0, ROPE_MAX_POS, (copies, T), generator=gen,
                        device=dev, dtype=torch.int64)
    cache = rope_cache(ROPE_MAX_POS, h, dev)
    sets = []
    for i in range(copies):
        sets.append({"qkv": qkv[i], "q": qkv[i][:, :hq * h],
                     "k": qkv[i][:, hq * h:(hq + hk) * h],
                     "positions": pos[i], "cos_sin_cache": cache})
    return sets


def _rope_make_padded(T, h, b, copies, gen, dev):
    # Each head ROPE_PAD elements longer; the eager formula sees heads of
    # h + ROPE_PAD and rotates their first h (the cache's width).
    sets = _rope_make(T, h + ROPE_PAD, b, copies, gen, dev)
    cache = rope_cache(ROPE_MAX_POS, h, dev)
    for s in sets:
        s["cos_sin_cache"] = cache
    return sets


def _rope_make16(T, h, b, copies, gen, dev):
    # vLLM's own call: the cache in the model's dtype.
    sets = _rope_make(T, h, b, copies, gen, dev)
    cache = sets[0]["cos_sin_cache"].to(torch.bfloat16)
    for s in sets:
        s["cos_sin_cache"] = cache
    return sets


def _rope_make_rotary(T, h, b, copies, gen, dev):
    # rotary_dim = --rope-rotary-factor of head_dim (the _rotary kernels).
    sets = _rope_make(T, h, b, copies, gen, dev)
    cache = rope_cache(ROPE_MAX_POS, _rope_rot(h), dev)
    for s in sets:
        s["cos_sin_cache"] = cache
    return sets


def _rope_op(fn, make, rotary=False, key=True, pad=0):
    """An OPS entry of a rope form: rotary, a cache narrower than a head
    (rotary_pairs); key False, q alone; pad, elements after each head."""
    def heads():
        return ROPE_HEADS[0] + (ROPE_HEADS[1] if key else 0)

    def dims(T, h, b):
        # Heads of the fused qkv row lie head_dim (+ pad) apart.
        d = {"q_heads": ROPE_HEADS[0], "q_head_stride": h + pad,
             "max_pos": ROPE_MAX_POS}
        if key:
            d.update(k_heads=ROPE_HEADS[1], k_head_stride=h + pad)
        if rotary:
            d["rotary_pairs"] = _rope_rot(h) // 2
        return d

    def groups(T, h, b):
        g = {"q": heads(), "positions": heads(), "cos_sin_cache": 0}
        if key:
            g["k"] = heads()
        return g
    return dict(
        fn=fn, make=make, inplace=True,
        eager_in=["positions", "qkv", "cos_sin_cache"],
        compare=["q", "k"] if key else ["q"], scalars={}, dims=dims,
        rows=lambda T, h, b: T * heads(), groups=groups,
        bytes=lambda T, h, b: _rope_bytes(
            T, h, b, cache_bytes=2 if make is _rope_make16 else 4,
            rot=_rope_rot(h) if rotary else None, key=key),
        footprint=lambda T, h, b: _rope_footprint(T, h + pad, b))


for _name, _fn, _make, _rotary, _key in (
        ("rope_neox", f_rope_neox, _rope_make, False, True),
        ("rope_gptj", f_rope_gptj, _rope_make, False, True),
        ("rope_neox_cache16", f_rope_neox, _rope_make16, False, True),
        ("rope_gptj_cache16", f_rope_gptj, _rope_make16, False, True),
        ("rope_neox_rotary", f_rope_neox, _rope_make_rotary, True, True),
        ("rope_gptj_rotary", f_rope_gptj, _rope_make_rotary, True, True),
        ("rope_neox_rotary_q", f_rope_neox_q, _rope_make_rotary, True, False),
        ("rope_gptj_rotary_q", f_rope_gptj_q, _rope_make_rotary, True,
         False)):
    OPS[_name] = _rope_op(_fn, _make, _rotary, _key)
def _rope_hf_make(T, h, b, copies, gen, dev):
    hq, hk = ROPE_HEADS
    sets = []
    for _ in range(copies):
        x = {n: torch.randn((T, w), generator=gen, device=dev,
                            dtype=torch.bfloat16)
             for n, w in (("q", hq * h), ("k", hk * h))}
        # HF's cos and sin: each half of vLLM's cache row, twice.
        pos = torch.randint(0, ROPE_MAX_POS, (T,), generator=gen, device=dev)
        cos, sin = rope_cache(ROPE_MAX_POS, h, dev)[pos].chunk(2, -1)
        x.update(cos=torch.cat([cos] * 2, -1).bfloat16(),
                 sin=torch.cat([sin] * 2, -1).bfloat16(),
                 q_out=torch.empty_like(x["q"]),
                 k_out=torch.empty_like(x["k"]))
        sets.append(x)
    return sets


OPS["rope_hf"] = dict(
    fn=f_rope_hf, make=_rope_hf_make,
    tensors=[("q", None, "in", None), ("k", None, "in", None),
             ("cos", None, "in", None), ("sin", None, "in", None),
             ("q_out", None, "out", None), ("k_out", None, "out", None)],
    eager_in=["q", "k", "cos", "sin"], compare=["q_out", "k_out"],
    scalars={},
    dims=lambda T, h, b: {"q_heads": ROPE_HEADS[0], "k_heads": ROPE_HEADS[1]},
    rows=lambda T, h, b: T * sum(ROPE_HEADS),
    groups=lambda T, h, b: {n: sum(ROPE_HEADS) for n in
                            ("q", "k", "cos", "sin", "q_out", "k_out")},
    # q and k read, q_out and k_out written, cos and sin read.
    bytes=lambda T, h, b: 2 * (2 * T * sum(ROPE_HEADS) * h + 2 * T * h),
    footprint=lambda T, h, b: 2 * (2 * T * sum(ROPE_HEADS) * h + 2 * T * h))
def _qk_maker(divisor):
    """rope's sets with a bf16 cache of head_dim / divisor and Qwen3-like
    weights near 1."""
    def make(T, h, b, copies, gen, dev):
        sets = _rope_make(T, h, b, copies, gen, dev)
        cache = rope_cache(ROPE_MAX_POS, h // divisor, dev).to(torch.bfloat16)
        w = torch.empty((2, h), dtype=torch.bfloat16, device=dev)
        w.normal_(1.0, 0.1, generator=gen)
        for s in sets:
            s.update(q_weight=w[0], k_weight=w[1], cos_sin_cache=cache)
        return sets
    return make


def _qk_op(fn, rope, divisor=1):
    """An OPS entry of qk_rmsnorm (rope False) or a qk_norm_rope form
    rotating head_dim / divisor: the whole of q's and k's heads read and
    written, bf16 weights (and positions, cache rows)."""
    entry = _rope_op(fn, _qk_maker(divisor))
    if not rope:  # (ROPE_HEADS as --rope-heads sets it, at run time)
        entry["groups"] = lambda T, h, b: {"q": sum(ROPE_HEADS),
                                           "k": sum(ROPE_HEADS)}
        entry["dims"] = lambda T, h, b: {
            "q_heads": ROPE_HEADS[0], "q_head_stride": h,
            "k_heads": ROPE_HEADS[1], "k_head_stride": h}

    def nbytes(T, h, b):
        heads = 2 * 2 * T * sum(ROPE_HEADS) * h + 2 * 2 * h
        rot = h // divisor
        return heads + (8 * T + 2 * rot * min(T, ROPE_MAX_POS) if rope else 0)
    entry.update(
        eager_in=(["positions"] if rope else []) +
        ["qkv", "q_weight", "k_weight"] + (["cos_sin_cache"] if rope else []),
        scalars={"eps": 1e-6}, bytes=nbytes)
    return entry


OPS["qk_rmsnorm"] = _qk_op(f_qk_rmsnorm, False)
OPS["qk_norm_rope_neox"] = _qk_op(f_qk_norm_rope_neox, True)
OPS["qk_norm_rope_gptj"] = _qk_op(f_qk_norm_rope_gptj, True)
OPS["qk_norm_rope_neox_half"] = _qk_op(f_qk_norm_rope_neox, True, 2)
OPS["qk_norm_rope_gptj_half"] = _qk_op(f_qk_norm_rope_gptj, True, 2)
OPS["qk_norm_rope_neox_quarter"] = _qk_op(f_qk_norm_rope_neox, True, 4)
OPS["qk_norm_rope_gptj_quarter"] = _qk_op(f_qk_norm_rope_gptj, True, 4)
# Kernels before the head strides cannot take padded heads: no --ab.
OPS["rope_neox_padded"] = dict(
    _rope_op(f_rope_neox, _rope_make_padded, pad=ROPE_PAD), kernel="rope_neox",
    ab=False)


def shape_of(layout, T, h, b=0):
    return {"row": (T, h), "row2": (T, 2 * h), "vec": (h,),
            "batch": (b, h), "tok": (T,),
            "group": (T * (h // GROUP_SIZE),),
            "groups": (T, h // GROUP_SIZE)}[layout]


def dtype_of(op, name):
    """A tensor's torch dtype name (default bf16)."""
    return OPS[op].get("dtypes", {}).get(name, "bfloat16")


ELEM_BYTES = {"bfloat16": 2, "float32": 4, "float8_e4m3fn": 1, "int8": 1}


def min_bytes(op, T, h, b=0):
    """Inputs read once, outputs written once (in place: both), weights once,
    each in its dtype."""
    if "bytes" in OPS[op]:
        return OPS[op]["bytes"](T, h, b)
    n = 0
    for name, layout, role, _ in OPS[op]["tensors"]:
        elems = math.prod(shape_of(layout, T, h, b))
        n += (elems * (2 if role == "inout" else 1)
              * ELEM_BYTES[dtype_of(op, name)])
    return n


def footprint(op, T, h, b=0):
    """Bytes of one rotated copy of the call's tensors (steady state)."""
    if "footprint" in OPS[op]:
        return OPS[op]["footprint"](T, h, b)
    return min_bytes(op, T, h, b)


def t_label(op, T, b):
    """T as the tables print it: B x N for the batched ops."""
    return "%dx%d" % (b, T // b) if b else str(T)


def case_text(op, T, h, b=0):
    return "%s T=%s h=%d" % (op, t_label(op, T, b), h)


def _heads_op(op):
    """Ops over q and k heads, timed at head_dim for each token count."""
    return op.startswith(("rope", "qk_"))


def all_cases(ops, suite="norms"):
    """(op, T, h, B) in run order; B is 0 but for adaln (T = B * N)."""
    cases = []
    for op in ops:
        if suite == "views" and op == "adaln":
            for c in ADALN_CS:
                for b, n in ADALN_SHAPES:
                    cases.append((op, b * n, c, b))
        elif suite == "views" and _heads_op(op):
            for T in TOKENS:
                cases.append((op, T, ROPE_HEAD_DIM, 0))
        else:
            for h in HIDDENS:
                for T in TOKENS:
                    cases.append((op, T, h, 0))
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


def make_tensors(op, T, h, copies, gen, dev, b=0):
    """`copies` independent sets of the kgen kernel's tensors, random (never
    zeros); outputs poisoned with NaN. Returns a list of {name: tensor}."""
    if "make" in OPS[op]:
        return OPS[op]["make"](T, h, b, copies, gen, dev)
    sets = [dict() for _ in range(copies)]
    for name, layout, role, init in OPS[op]["tensors"]:
        shape = shape_of(layout, T, h, b)
        dt = getattr(torch, dtype_of(op, name))
        # Copies at least 256 bytes apart, as separate allocations would be:
        # back-to-back calls writing the same 32-byte sector (a [1] output)
        # would otherwise wait on each other.
        n = math.prod(shape)
        pad = max(n, -(-256 // dt.itemsize))
        buf = torch.empty((copies, pad), dtype=dt, device=dev)
        buf = buf[:, :n].view((copies,) + shape)
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
            poison(buf)
        for i in range(copies):
            sets[i][name] = buf[i]
    return sets


def poison(t):
    """NaN in a float tensor (e4m3's 0x7F); int8 has no NaN: 127."""
    if t.dtype.itemsize == 1:
        t.view(torch.uint8).fill_(0x7F)
    else:
        t.fill_(float("nan"))


def make_same(op, T, h, n, gen, dev, b=0):
    """n sets with the same contents (for in-place ops: one per impl)."""
    state = gen.get_state()
    sets = []
    for _ in range(n):
        gen.set_state(state)
        sets.append(make_tensors(op, T, h, 1, gen, dev, b)[0])
    return sets


def kgen_args(kernel, op, tensors, T=0, h=0, b=0):
    """The kernel's arguments by param name (kernel.params' order)."""
    sc = OPS[op]["scalars"]
    dims = OPS[op]["dims"](T, h, b) if "dims" in OPS[op] else {}
    args = []
    for p in kernel.params:
        name = p["name"]
        if p["kind"] == "tensor":
            args.append(tensors[name])
        elif p["kind"] == "scalar":
            args.append(float(sc[name]))
        elif name in dims:
            args.append(int(dims[name]))
        else:
            raise RuntimeError("%s: unexpected dynamic dim %s" % (kernel.name,
                                                                  name))
    return args


def kgen_launch_kw(op, T, h, b=0):
    """rows and groups for Kernel.bind / __call__."""
    spec = OPS[op]
    return dict(rows=spec["rows"](T, h, b) if "rows" in spec else None,
                groups=spec["groups"](T, h, b) if "groups" in spec else None)


def eager_args(op, tensors):
    return [tensors[n] for n in OPS[op]["eager_in"]]


def compare(a, b):
    """(ok, max_abs, worst err/tol, rel_norm) of a against reference b."""
    if a.shape != b.shape and a.numel() == b.numel():
        a = a.reshape(b.shape)  # adaln: kgen's [B*N, C], eager's [B, N, C]
    a32, b32 = a.float(), b.float()
    diff = (a32 - b32).abs()
    nan = bool(torch.isnan(a32).any().item()) or bool(
        torch.isnan(diff).any().item())
    atol, rtol, rel_tol = (INT8_TOL if a.dtype == torch.int8
                           else FP8_TOL if a.dtype.itemsize == 1
                           else (ATOL, RTOL, REL_NORM_TOL))
    tol = atol + rtol * b32.abs()
    max_abs = float(diff.max().item()) if diff.numel() else 0.0
    worst = float((diff / tol).max().item()) if diff.numel() else 0.0
    den = float(torch.linalg.vector_norm(b32).item())
    rel = float(torch.linalg.vector_norm(a32 - b32).item()) / max(den, 1e-30)
    ok = (not nan) and worst <= 1.0 and rel <= rel_tol
    if nan:
        max_abs = worst = rel = float("nan")
    return ok, max_abs, worst, rel


def as_list(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


# ---------------------------------------------------------------------------
# Timing.
def time_cold(call, flush, n=30, warm=3, wait=True):
    """Median us of n calls, each after a flush. wait=False queues every
    flush and call at once (the GPU then runs far behind the host;
    cold_pacing.py compares the two)."""
    ev = [(torch.cuda.Event(enable_timing=True),
           torch.cuda.Event(enable_timing=True)) for _ in range(n + warm)]
    for i, (s, e) in enumerate(ev):
        flush.fill_(i & 0x7F)
        s.record()
        r = call()
        e.record()
        del r
        if wait:
            torch.cuda.synchronize()
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
    for op, T, h, b in cases:
        t0 = time.perf_counter()
        try:
            ts = make_tensors(op, T, h, 1, gen, dev, b)[0]
            r = compiled_fn(op)(*eager_args(op, ts))
            torch.cuda.synchronize()
            del r, ts
            status = "ok"
        except Exception as e:  # reported, the timed process compiles it
            status = "error: %s" % str(e).splitlines()[0][:200]
        dt = time.perf_counter() - t0
        print(json.dumps({"op": op, "T": T, "h": h, "b": b, "s": dt,
                          "status": status}), flush=True)
    return 0


def prewarm(cases, workers, threads, limit_s, log, extra_args=()):
    """Runs the compile workers; returns {(op, T, h, B): seconds}."""
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
            "--worker", json.dumps(sl), "--worker-threads", str(threads)
        ] + list(extra_args)
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
            times[(d["op"], d["T"], d["h"], d.get("b", 0))] = d["s"]
            if d["status"] != "ok":
                errors += 1
                log("prewarm: %s: %s" % (case_text(d["op"], d["T"], d["h"],
                                                   d.get("b", 0)),
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
def find_kernel(manifest, op, h, allow_dyn=False, binding=None):
    """The bundle's bf16 kernel of `op` specialized for length h, else (with
    allow_dyn) its dynamic kernel (length 0), loaded through `binding` (a
    kgen_ctypes module; default kg). An OPS entry may name another op's
    kernel ("kernel": a layout of it)."""
    op = OPS.get(op, {}).get("kernel", op)
    for length in ([h, 0] if allow_dyn else [h]):
        e = next((m for m in manifest if m["op"] == op and
                  m["dtype"] == DTYPE and m["length"] == length), None)
        if e is not None:
            return (binding or kg).Kernel(e["ptx"], e["spec"])
    raise RuntimeError("no %s %s kernel of length %d%s in the manifest"
                       % (op, DTYPE, h, " nor a dynamic one" if allow_dyn
                          else ""))


def run_case(op, T, h, kernel, flush, gen, dev, l2, log, b=0, kernel_ab=None):
    """Checks and times one shape; returns a list of result dicts (one per
    implementation) and the correctness records. kernel_ab: the --ab
    bundle's kernel (implementation "ab"), checked and timed the same way."""
    spec = OPS[op]
    fn_c = compiled_fn(op)
    nbytes = min_bytes(op, T, h, b)
    kw = kgen_launch_kw(op, T, h, b)
    checks = []
    # 1. Correctness on fresh random inputs, kgen outputs poisoned. Launched
    # through bind(): a call through Kernel.__call__ caches its launch, and
    # that keeps the case's tensors alive as long as the kernel.
    if spec.get("inplace"):
        # Each implementation on its own identical copy; the results are
        # the tensors `compare` names, written in place.
        s_e, kt, s_c, *s_ab = make_same(op, T, h, 4 if kernel_ab else 3,
                                        gen, dev, b)
        spec["fn"](*eager_args(op, s_e))
        ref = [s_e[n] for n in spec["compare"]]
        kernel.bind(*kgen_args(kernel, op, kt, T, h, b), **kw)()
        if kernel_ab:
            ka = s_ab[0]
            kernel_ab.bind(*kgen_args(kernel_ab, op, ka, T, h, b), **kw)()
        t0 = time.perf_counter()
        fn_c(*eager_args(op, s_c))
        torch.cuda.synchronize()
        first_call_s = time.perf_counter() - t0
        got_c = [s_c[n] for n in spec["compare"]]
        base = None
    else:
        base = make_tensors(op, T, h, 1, gen, dev, b)[0]
        ref = as_list(spec.get("ref", spec["fn"])(*eager_args(op, base)))
        kt = {n: t.clone() for n, t in base.items()}
        for name, _, role, _ in spec["tensors"]:
            if role == "out":
                poison(kt[name])
        kernel.bind(*kgen_args(kernel, op, kt, T, h, b), **kw)()
        if kernel_ab:
            ka = {n: t.clone() for n, t in base.items()}
            for name, _, role, _ in spec["tensors"]:
                if role == "out":
                    poison(ka[name])
            kernel_ab.bind(*kgen_args(kernel_ab, op, ka, T, h, b), **kw)()
        t0 = time.perf_counter()
        got_c = as_list(fn_c(*eager_args(op, base)))
        torch.cuda.synchronize()
        first_call_s = time.perf_counter() - t0
    got_k = [kt[n] for n in spec["compare"]]
    results = [("kgen", got_k), ("compile", got_c)]
    if kernel_ab:
        results.append(("ab", [ka[n] for n in spec["compare"]]))
    for impl, got in results:
        for i, (x, y) in enumerate(zip(got, ref)):
            ok, max_abs, worst, rel = compare(x, y)
            checks.append(dict(op=op, T=T, h=h, B=b, impl=impl,
                               output=spec["compare"][i], ok=ok,
                               max_abs=max_abs, worst=worst, rel=rel))
    variant = {"kgen": kernel.variant_name(*kgen_args(kernel, op, kt, T, h, b),
                                           **kw)}
    if kernel_ab:
        variant["ab"] = kernel_ab.variant_name(
            *kgen_args(kernel_ab, op, ka, T, h, b), **kw)
        del ka
    del ref, got_c, got_k, kt, base

    # 2. Cold: one set of tensors, flushed before each call.
    ts = make_tensors(op, T, h, 1, gen, dev, b)[0]
    kl = kernel.bind(*kgen_args(kernel, op, ts, T, h, b), **kw)
    ea = eager_args(op, ts)
    calls = {
        "kgen": lambda: kl(),
        "eager": lambda: spec["fn"](*ea),
        "compile": lambda: fn_c(*ea),
    }
    if kernel_ab:
        calls["ab"] = kernel_ab.bind(*kgen_args(kernel_ab, op, ts, T, h, b),
                                     **kw)
    # ab right after kgen: the two are timed as close together as they can be.
    impls = IMPLS[:1] + (["ab"] if kernel_ab else []) + IMPLS[1:]
    cold = {}
    for impl in impls:
        cold[impl] = time_cold(calls[impl], flush)
    del calls, kl, ea, ts

    # 3. Steady state: rotated copies in one graph.
    copies = max(2, math.ceil(1.2 * l2 / footprint(op, T, h, b)))
    fastest = max(0.5, min(c[0] for c in cold.values()))
    K = copies * max(1, math.ceil(math.ceil(1000.0 / fastest) / copies))
    # Outputs of eager/compile stay alive in the graph: keep K x bytes small.
    while K > copies and K * nbytes > 4e9:
        K -= copies
    sets = make_tensors(op, T, h, copies, gen, dev, b)
    launches = [kernel.bind(*kgen_args(kernel, op, s, T, h, b), **kw)
                for s in sets]
    eas = [eager_args(op, s) for s in sets]
    fn_e = spec["fn"]
    steady_calls = {
        "kgen": [(lambda l=l: l()) for l in launches],
        "eager": [(lambda a=a: fn_e(*a)) for a in eas],
        "compile": [(lambda a=a: fn_c(*a)) for a in eas],
    }
    if kernel_ab:
        steady_calls["ab"] = [
            kernel_ab.bind(*kgen_args(kernel_ab, op, s, T, h, b), **kw)
            for s in sets]
    steady = {}
    for impl in impls:
        for c in steady_calls[impl][:2]:  # warm (nothing left to compile)
            c()
        steady[impl] = time_steady(steady_calls[impl], K,
                                   replays=7 if K <= 1000 else 5)
        if nbytes > (256 << 20):
            # The graph's private pool (eager's f32 intermediates of K
            # calls) stays reserved until emptied: on an 80 GB H100 the
            # pools of one large shape's three graphs ran out of memory.
            torch.cuda.empty_cache()
    del steady_calls, launches, eas, sets
    rows = []
    for impl in impls:
        rows.append(dict(
            op=op, T=T, h=h, B=b, shape=shape_text(op, T, h, b), impl=impl,
            bytes=nbytes,
            cold_us=cold[impl][0], cold_p10=_pct(cold[impl][1], 10),
            cold_p90=_pct(cold[impl][1], 90), cold_n=len(cold[impl][1]),
            steady_us=steady[impl][0], steady_min=min(steady[impl][1]),
            steady_max=max(steady[impl][1]), K=K, copies=copies,
            variant=variant.get(impl, ""),
            kernel={"kgen": kernel.name,
                    "ab": kernel_ab and kernel_ab.name}.get(impl) or "",
            first_call_s=first_call_s if impl == "compile" else ""))
    return rows, checks


def shape_text(op, T, h, b=0):
    """The tensors' shapes, for the CSV."""
    if op == "rope_hf":
        hq, hk = ROPE_HEADS
        return "q [%d, %d] k [%d, %d], cos/sin [%d, %d] bf16" % (
            T, hq * h, T, hk * h, T, h)
    if op == "rope_neox_padded":
        hq, hk = ROPE_HEADS
        return "q, k heads of %d of %d, in qkv [%d, %d]" % (
            h, h + ROPE_PAD, T, (hq + 2 * hk) * (h + ROPE_PAD))
    if op == "qk_rmsnorm":
        hq, hk = ROPE_HEADS
        return "q [%d, %d] k [%d, %d] of qkv [%d, %d]" % (
            T, hq * h, T, hk * h, T, (hq + 2 * hk) * h)
    if _heads_op(op):
        hq, hk = ROPE_HEADS
        rot = (_rope_rot(h) if "_rotary" in op else h // 2 if
               op.endswith("_half") else h // 4 if op.endswith("_quarter")
               else h)
        return ("q [%d, %d] k [%d, %d] of qkv [%d, %d], positions [%d], "
                "cache [%d, %d] %s" % (T, hq * h, T, hk * h, T,
                                       (hq + 2 * hk) * h, T, ROPE_MAX_POS,
                                       rot, "bf16" if op.endswith("cache16")
                                       or op.startswith("qk_") else "f32"))
    if op == "adaln":
        return "x [%d*%d, %d], scale/shift [%d, %d]" % (b, T // b, h, b, h)
    if op in ("silu_and_mul", "gelu_tanh_and_mul"):
        return "x [%d, %d] -> y [%d, %d]" % (T, 2 * h, T, h)
    return "[%d, %d]" % (T, h)


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
            "first_call_s", "B", "shape", "kernel"]


def _key(r):
    return (r["op"], r["T"], r["h"], r.get("B") or 0)


def finish_rows(rows, copy_gbps):
    by = {_key(r) + (r["impl"],): r for r in rows}
    for r in rows:
        for mode in ("cold", "steady"):
            gbps = r["bytes"] / (r[mode + "_us"] * 1e-6) / 1e9
            r[mode + "_gbps"] = gbps
            r[mode + "_pct_memcpy"] = 100.0 * gbps / copy_gbps
            for other in ("eager", "compile"):
                o = by.get(_key(r) + (other,))
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
    "(>1: kgen faster); %cp = kgen steady GB/s as % of memcpy; with --ab, "
    "the last two columns are the ab bundle's time over kgen's, steady and "
    "cold (>1: kgen faster)")


def compact_table(rows):
    """One line per op x shape: steady and cold us of kgen/eager/compile and
    kgen's speedups."""
    by = {}
    for r in rows:
        by.setdefault((r["op"], r["h"], r["T"], r.get("B") or 0),
                      {})[r["impl"]] = r
    lines = ["%-18s %6s %5s | %8s %8s %8s %6s %6s %5s | %8s %8s %8s %6s %6s"
             % ("op", "T", "h", "st kgen", "eager", "compile", "xE", "xC",
                "%cp", "cold kg", "eager", "compile", "xE", "xC")]
    ops_order = NORM_OPS + ACT_OPS + VIEW_OPS
    for key in sorted(by, key=lambda k: (ops_order.index(k[0])
                                         if k[0] in ops_order else 99,
                                         k[1], k[2])):
        d = by[key]
        k, e, c = d.get("kgen"), d.get("eager"), d.get("compile")
        if not (k and e and c):
            continue
        a = d.get("ab")
        lines.append(
            "%-18s %6s %5d | %8.1f %8.1f %8.1f %6.2f %6.2f %5.0f | "
            "%8.1f %8.1f %8.1f %6.2f %6.2f%s"
            % (key[0], t_label(key[0], key[2], key[3]), key[1],
               k["steady_us"], e["steady_us"],
               c["steady_us"], e["steady_us"] / k["steady_us"],
               c["steady_us"] / k["steady_us"], k["steady_pct_memcpy"],
               k["cold_us"], e["cold_us"], c["cold_us"],
               e["cold_us"] / k["cold_us"], c["cold_us"] / k["cold_us"],
               " | %6.3f %6.3f" % (a["steady_us"] / k["steady_us"],
                                   a["cold_us"] / k["cold_us"]) if a else ""))
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
            f.write("| %s | %s | %d | %s | %.2f | %.2f | %.0f | %.1f | %.2f "
                    "| %.0f | %.1f | %s | %s |\n"
                    % (r["op"], t_label(r["op"], r["T"], r.get("B") or 0),
                       r["h"], r["impl"], r["bytes"] / 1e6,
                       r["steady_us"], r["steady_gbps"],
                       r["steady_pct_memcpy"], r["cold_us"], r["cold_gbps"],
                       r["cold_pct_memcpy"], sp, spc))
        f.write("\n## Correctness (against eager)\n\n")
        bad = [c for c in checks if not c["ok"]]
        f.write("%d comparisons, %d mismatches.\n\n" % (len(checks), len(bad)))
        f.write("| op | T | hidden | impl | output | ok | max abs | worst "
                "err/tol | rel norm |\n|---|---|---|---|---|---|---|---|---|\n")
        for c in checks:
            f.write("| %s | %s | %d | %s | %s | %s | %.3g | %.3g | %.3g |\n"
                    % (c["op"], t_label(c["op"], c["T"], c.get("B") or 0),
                       c["h"], c["impl"], c["output"],
                       "yes" if c["ok"] else "NO", c["max_abs"], c["worst"],
                       c["rel"]))
        f.write("\n## Where kgen is slower than torch.compile\n\n")
        f.write("\n".join(losses) if losses else "nowhere")
        f.write("\n")


def load_ab(folder):
    """(binding, manifest) of an A/B bundle folder: its own copy of the
    ctypes binding (the folder's python/kgen_ctypes.py, else this one) bound
    to its own runtime, so that bundles of two commits run in one process."""
    import importlib.util
    src = os.path.join(folder, "python", "kgen_ctypes.py")
    if not os.path.isfile(src):
        src = os.path.join(HERE, "kgen_ctypes.py")
    spec = importlib.util.spec_from_file_location("kgen_ctypes_ab", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.load(os.path.join(folder, "libkgen_runtime.so"))
    return mod, mod.read_manifest(os.path.join(folder, "kernels"))


def find_ab_kernel(ab, op, length, allow_dyn, log):
    """The --ab bundle's kernel for the case, or None (no A/B for it) where
    that bundle has none (an op added since its commit) or the entry says
    older kernels cannot take its layout ("ab": False)."""
    if not ab or not OPS[op].get("ab", True):
        return None
    try:
        return find_kernel(ab[1], op, length, allow_dyn, binding=ab[0])
    except RuntimeError as e:
        log("ab: %s" % e)
        return None


# A/B: a shape where kgen takes more than this over the ab bundle's time is
# listed (issue 40's bar for a schedule change).
AB_SLOWER = 1.02


def ab_summary(rows):
    """Lines on kgen against the --ab bundle: per op the geomean of ab's time
    over kgen's (above 1: kgen faster), then the shapes kgen loses."""
    by = {}
    for r in rows:
        by.setdefault(_key(r), {})[r["impl"]] = r
    pairs = [(d["kgen"], d["ab"]) for d in by.values()
             if "kgen" in d and "ab" in d]
    if not pairs:
        return []
    out = []
    for mode in ("steady", "cold"):
        ratios = {}
        for k, a in pairs:
            ratios.setdefault(k["op"], []).append(a[mode + "_us"] /
                                                  k[mode + "_us"])
        every = [x for v in ratios.values() for x in v]
        out.append("A/B %s, ab time over kgen's, geomean: all %.3f (%d "
                   "shapes); %s" % (mode, _geomean(every), len(every),
                                    ", ".join("%s %.3f" % (op, _geomean(v))
                                              for op, v in ratios.items())))
        slow = [(k, a) for k, a in pairs
                if k[mode + "_us"] > AB_SLOWER * a[mode + "_us"]]
        out.append("A/B %s, kgen more than %.0f%% slower than ab: %s" % (
            mode, 100 * (AB_SLOWER - 1), "nowhere" if not slow else "; ".join(
                "%s %.2f vs %.2f us (%s vs %s)" % (
                    case_text(k["op"], k["T"], k["h"], k.get("B") or 0),
                    k[mode + "_us"], a[mode + "_us"], k["variant"],
                    a["variant"]) for k, a in slow)))
    return out


def _geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


def kgen_losses(rows):
    out = []
    for r in rows:
        if r["impl"] != "kgen":
            continue
        for mode in ("steady", "cold"):
            s = r["%s_speedup_vs_compile" % mode]
            if isinstance(s, float) and s < 1.0:
                out.append("%s %s: kgen %.2f us, compile %.2f us "
                           "(kgen %.0f%% slower)"
                           % (case_text(r["op"], r["T"], r["h"],
                                        r.get("B") or 0), mode,
                              r[mode + "_us"],
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
              16384: "tab:red", 11008: "tab:purple", 14336: "tab:brown",
              128: "tab:blue", 1152: "tab:blue", 3072: "tab:red"}
    styles = {"kgen": ("-", "o"), "eager": (":", "x"), "compile": ("--", "s"),
              "ab": ("-.", "^")}
    known = list(dict.fromkeys(NORM_OPS + ACT_OPS + VIEW_OPS))
    ops = [op for op in known if any(r["op"] == op for r in rows)]
    ops += sorted({r["op"] for r in rows} - set(known))
    for op in ops:
        fig, axes = plt.subplots(1, 2, figsize=(14, 5.5), sharey=True)
        # One line per hidden (and batch size, for adaln) and impl.
        series = sorted({(r["h"], r.get("B") or 0) for r in rows
                         if r["op"] == op})
        for ax, mode in zip(axes, ("steady", "cold")):
            for h, b in series:
                for impl in IMPLS + ["ab"]:
                    pts = sorted((r["T"], r[mode + "_gbps"]) for r in rows
                                 if r["op"] == op and r["h"] == h
                                 and (r.get("B") or 0) == b
                                 and r["impl"] == impl)
                    if not pts:
                        continue
                    ls, mk = styles[impl]
                    ax.plot([p[0] for p in pts], [p[1] for p in pts],
                            linestyle=ls, marker=mk, color=colors.get(h),
                            label="%s h=%d%s" % (impl, h,
                                                 " B=%d" % b if b else ""),
                            markersize=4)
            ts = sorted({r["T"] for r in rows if r["op"] == op})
            ax.axhline(copy_gbps, color="black", linewidth=1)
            ax.text(ts[0], copy_gbps * 1.01, "memcpy %.0f GB/s" % copy_gbps,
                    fontsize=8)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(ts)
            ax.set_xticklabels([str(t) for t in ts])
            ax.set_xlabel("T (tokens)" if _heads_op(op) else
                          "B*N (rows)" if op == "adaln" else "T (rows)")
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
    global TOKENS, HIDDENS, ROPE_HEADS, ROPE_HEAD_DIM, ROPE_MAX_POS
    global ADALN_SHAPES, ADALN_CS, ROPE_ROTARY_FACTOR, GROUP_SIZE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", help="the bundle's kernels/ folder")
    ap.add_argument("--lib", help="libkgen_runtime.so (default: "
                    "$KGEN_RUNTIME_LIB or next to kgen_ctypes.py)")
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--ab", metavar="DIR",
                    help="A/B: a second bundle folder (kernels/, "
                    "libkgen_runtime.so and python/kgen_ctypes.py, as "
                    "scripts/prepare-gpu.sh makes at any commit), run as the "
                    "implementation 'ab' on the same tensors")
    ap.add_argument("--suite", choices=sorted(SUITES), default="norms",
                    help="norms (default) or views (rope, the activations "
                    "at LLM sizes, adaln); see the module's doc")
    ap.add_argument("--ops", help="default: the suite's ops")
    ap.add_argument("--tokens", help="T (default: norms %s; views %s)"
                    % (",".join(map(str, TOKENS)),
                       ",".join(map(str, VIEW_TOKENS))))
    ap.add_argument("--hiddens", help="hidden / d (default: norms %s; views "
                    "(activations) %s)" % (",".join(map(str, HIDDENS)),
                                           ",".join(map(str, VIEW_HIDDENS))))
    ap.add_argument("--rope-heads", default="%d,%d" % ROPE_HEADS,
                    help="views: q heads,k heads")
    ap.add_argument("--rope-head-dim", type=int, default=ROPE_HEAD_DIM,
                    help="views: D (the rope kernel specialized for it)")
    ap.add_argument("--rope-max-pos", type=int, default=ROPE_MAX_POS,
                    help="views: rows of the cos/sin cache")
    ap.add_argument("--rope-rotary-factor", type=float,
                    default=ROPE_ROTARY_FACTOR,
                    help="views: rotary_dim / D of the rope_*_rotary ops")
    ap.add_argument("--group-size", type=int, default=GROUP_SIZE,
                    choices=(64, 128),
                    help="library: the group of the per-group scales")
    ap.add_argument("--adaln-shapes", default=",".join(
        "%dx%d" % bn for bn in ADALN_SHAPES), help="views: BxN,...")
    ap.add_argument("--adaln-c", default=",".join(map(str, ADALN_CS)),
                    help="views: C,...")
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

    views = args.suite == "views"
    TOKENS = [int(t) for t in (args.tokens or ",".join(map(str, (
        VIEW_TOKENS if views else TOKENS)))).split(",")]
    HIDDENS = [int(h) for h in (args.hiddens or ",".join(map(str, (
        VIEW_HIDDENS if views else HIDDENS)))).split(",")]
    ROPE_HEADS = tuple(int(x) for x in args.rope_heads.split(","))
    ROPE_HEAD_DIM = args.rope_head_dim
    ROPE_MAX_POS = args.rope_max_pos
    ROPE_ROTARY_FACTOR = args.rope_rotary_factor
    GROUP_SIZE = args.group_size
    ADALN_SHAPES = [tuple(int(x) for x in bn.split("x"))
                    for bn in args.adaln_shapes.split(",") if bn]
    ADALN_CS = [int(c) for c in args.adaln_c.split(",") if c]
    # What the compile workers need to build the same shapes.
    worker_args = ["--suite", args.suite, "--rope-heads", args.rope_heads,
                   "--rope-head-dim", str(args.rope_head_dim),
                   "--rope-max-pos", str(args.rope_max_pos),
                   "--rope-rotary-factor", str(args.rope_rotary_factor),
                   "--group-size", str(args.group_size)]
    if args.worker:
        return worker_main(args)
    if args.table_only:
        print(TABLE_LEGEND)
        print(compact_table(read_csv(args.table_only)))
        return 0
    if args.plot_only:
        os.makedirs(args.out, exist_ok=True)
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
    ops = [o for o in (args.ops or ",".join(SUITES[args.suite])).split(",")
           if o]
    for o in ops:
        if o not in OPS:
            raise SystemExit("torch_bench: unknown op %s (known: %s)"
                             % (o, ", ".join(OPS)))
    manifest = kg.read_manifest(args.kernels)
    ab = load_ab(args.ab) if args.ab else None
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
    if ab:
        header.append("ab: %s, kernels %s/kernels (A/B: its times over "
                      "kgen's, steady and cold)" % (ab[0]._lib_path, args.ab))
    if views:
        header.append(
            "suite views: rope q/k heads %d/%d, head_dim %d, cos_sin_cache "
            "[%d, %d] f32, random positions, q and k views of a fused qkv, in "
            "place; activations d in %s; adaln BxN in %s, C in %s, eps 1e-6 "
            "(checked against its formula in f32, rounded once); T in %s" % (ROPE_HEADS[0], ROPE_HEADS[1], ROPE_HEAD_DIM,
                         ROPE_MAX_POS, ROPE_HEAD_DIM,
                         ",".join(map(str, HIDDENS)),
                         ",".join("%dx%d" % bn for bn in ADALN_SHAPES),
                         ",".join(map(str, ADALN_CS)),
                         ",".join(map(str, TOKENS))))
    for line in header:
        log(line)
    copy_gbps, copy_us = memcpy_gbps(dev)
    header.append("memcpy DtoD 1 GiB (torch copy_): median %.1f us, %.1f GB/s "
                  "(read + write)" % (copy_us, copy_gbps))
    log(header[-1])

    # The cases, in order; those over MAX_BYTES are skipped.
    if views:
        order = [o for o in VIEW_OPS if o in ops] + [
            o for o in ops if o not in VIEW_OPS]
    else:  # activations last: dropped first
        order = [o for group in (NORM_OPS, ACT_OPS) for o in group
                 if o in ops] + [o for o in ops
                                 if o not in NORM_OPS + ACT_OPS]
    cases, skipped = [], []
    for c in all_cases(order, args.suite):
        if min_bytes(*c) > MAX_BYTES:
            skipped.append(c)
        else:
            cases.append(c)
    log("%d cases, %d skipped for moving more than %.1f GB: %s"
        % (len(cases), len(skipped), MAX_BYTES / 1e9,
           ", ".join(case_text(*c) for c in skipped)))

    workers = args.workers
    if workers < 0:
        workers = max(1, min(10, (os.cpu_count() or 4) - 2))
    worker_times, prewarm_wall = prewarm(cases, workers, args.worker_threads,
                                         args.prewarm_s, log, worker_args)

    flush = torch.empty(max(FLUSH_BYTES, 4 * l2), dtype=torch.uint8,
                        device=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    kernels = {}
    rows, checks, not_run, failed = [], [], [], []
    shape_failed = False
    for op, T, h, b in cases:
        if time.perf_counter() - t_start > args.deadline_s:
            not_run.append((op, T, h, b))
            continue
        try:
            if (op, h) not in kernels:
                length = OPS[op].get("length", lambda h: h)(h)
                dyn = args.suite != "norms"
                kernels[(op, h)] = (
                    find_kernel(manifest, op, length, allow_dyn=dyn),
                    find_ab_kernel(ab, op, length, dyn, log))
            t0 = time.perf_counter()
            kernel, kernel_ab = kernels[(op, h)]
            r, c = run_case(op, T, h, kernel, flush, gen, dev, l2, log, b,
                            kernel_ab)
            for x in r:
                x["compile_worker_s"] = worker_times.get((op, T, h, b), "")
            rows.extend(r)
            checks.extend(c)
            if min_bytes(op, T, h, b) > (256 << 20):
                torch.cuda.empty_cache()
            bad = [x for x in c if not x["ok"]]
            by = {x["impl"]: x for x in r}
            k, e, cc = by["kgen"], by["eager"], by["compile"]
            log("%-18s T=%-6s h=%-5d kgen %8.1f/%8.1f eager %8.1f/%8.1f "
                "compile %8.1f/%8.1f us (steady/cold)%s first call %.2f s, "
                "%.1f s%s" % (op, t_label(op, T, b), h, k["steady_us"],
                              k["cold_us"],
                              e["steady_us"], e["cold_us"],
                              cc["steady_us"], cc["cold_us"],
                              " ab %.1f/%.1f" % (by["ab"]["steady_us"],
                                                 by["ab"]["cold_us"])
                              if "ab" in by else "",
                              cc["first_call_s"],
                              time.perf_counter() - t0,
                              "" if not bad else "  MISMATCH: " + "; ".join(
                                  "%s %s max|d| %.3g worst %.3g rel %.3g"
                                  % (x["impl"], x["output"], x["max_abs"],
                                     x["worst"], x["rel"]) for x in bad)))
        except Exception as ex:  # keep going: report it
            msg = "%s: %s: %s" % (case_text(op, T, h, b), type(ex).__name__,
                                  str(ex).strip()[:400])
            failed.append(msg)
            log("FAILED " + msg)
            shape_failed = True
        if shape_failed:
            # What the failed shape held (its frames, alive while the
            # exception was handled) goes back, so that one out-of-memory
            # shape does not fail the rest of the run.
            shape_failed = False
            gc.collect()
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
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
        "s), %d failed" % (len({_key(r) for r in rows}), len(skipped),
                           MAX_BYTES / 1e9,
                          len(not_run), args.deadline_s, len(failed)),
        "correctness: %d comparisons against eager, %d mismatches%s"
        % (len(checks), len(mism), "" if not mism else ": " + "; ".join(
            "%s %s %s max|d| %.3g worst %.3g rel %.3g"
            % (c["impl"], case_text(c["op"], c["T"], c["h"], c["B"]),
               c["output"], c["max_abs"], c["worst"], c["rel"])
            for c in mism)),
    ]
    if not_run:
        summary.append("not run (deadline): " + ", ".join(
            case_text(*c) for c in not_run))
    for f in failed:
        summary.append("FAILED: " + f)
    summary.extend(ab_summary(rows))
    summary.append("total %.1f s" % (time.perf_counter() - t_start))
    losses = kgen_losses(rows)
    method = [
        "cold: median of 30 single calls, each after writing a %d MiB "
        "buffer, CUDA events around the call, the host waiting for each call; "
        "steady: K calls over rotated "
        "copies (> 1.2 x L2) in one CUDA graph, median of 7 replays / K; "
        "GB/s of the fewest bytes; bf16%s" % (
            flush.numel() >> 20, "; rope's cos/sin cache is shared by the "
            "rotated copies" if views else "")]
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
