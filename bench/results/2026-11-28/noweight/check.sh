#!/usr/bin/env bash
# fused_add_rmsnorm_noweight (vLLM's fused_add_rms_norm with weight None):
# its GPU tests (poisoned outputs), kgen-fuzz against the interpreter, the
# ported vLLM layernorm test on CUDA, then eager and torch.compile beside it
# and fused_add_rmsnorm: bf16, T 1 to 16384, hidden 4096 and 8192.
set -uo pipefail
d=build/gpu-nw
out=${OUT:-/tmp/out}; mkdir -p "$out"
KGEN_KERNEL_DIR=$d/new/kernels timeout -k 5 200 $d/kgen-gpu-tests \
  --gtest_filter='*fused_add_rmsnorm_noweight*' > "$out/gpu-tests.txt" 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/gpu-tests.txt" | head -5
stdbuf -oL timeout -k 5 25 "$d/kgen-fuzz" run "$d/new/kernels" \
  --ops fused_add_rmsnorm_noweight --seconds 20 --seed 6305 > "$out/fuzz.txt" 2>&1
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -10
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 200 python3 -m pytest -q \
  -p no:cacheprovider python/tests/test_vllm_layernorm.py > "$out/port.txt" 2>&1
echo "port: rc $? $(tail -n 1 "$out/port.txt")"
OUT=$out/lib KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=160 \
  KGEN_TORCH_ARGS="--ops fused_add_rmsnorm_noweight,rmsnorm_noweight --tokens 1,512,4096,16384 --hiddens 4096,8192" \
  bash bench/torch_check.sh $d/new > "$out/lib.log" 2>&1
grep -E "^(memcpy|correctness|where)" "$out/lib.log"
OUT=$out/norms KGEN_TORCH_SUITE=norms KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=160 \
  KGEN_TORCH_ARGS="--ops fused_add_rmsnorm --tokens 1,512,4096,16384 --hiddens 4096,8192" \
  bash bench/torch_check.sh $d/new > "$out/norms.log" 2>&1
grep -E "^(memcpy|correctness|where)" "$out/norms.log"
