#!/usr/bin/env bash
# per_token_group_quant_fp8_ue8m0 (scales rounded up to powers of two, DSL
# ceilPow2): its GPU tests (poisoned outputs), kgen-fuzz against the
# interpreter, the Python package's GPU check (use_ue8m0 samples), then eager,
# torch.compile and per_token_group_quant_fp8 beside it in one run per group
# size: bf16, T 1 to 16384, hidden 4096 and 7168.
set -uo pipefail
d=build/gpu-ue
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
KGEN_KERNEL_DIR=$d/new/kernels timeout -k 5 150 $d/kgen-gpu-tests \
  --gtest_filter='*per_token_group*' > "$out/gpu-tests.txt" 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/gpu-tests.txt" | head -5
stdbuf -oL timeout -k 5 25 "$d/kgen-fuzz" run "$d/new/kernels" \
  --ops per_token_group_quant_fp8_ue8m0 --seconds 20 --seed 6304 > "$out/fuzz.txt" 2>&1
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -10
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 200 python3 python/tests/gpu_check.py \
  > "$out/gpu_check.txt" 2>&1
echo "python gpu_check: rc $? $(tail -n 1 "$out/gpu_check.txt" | cut -c1-100)"
grep -E "^FAIL" "$out/gpu_check.txt" | head -5
for g in 128 64; do
  OUT=$out/lib$g KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=160 \
    KGEN_TORCH_ARGS="--ops per_token_group_quant_fp8_ue8m0,per_token_group_quant_fp8 --tokens 1,512,4096,16384 --hiddens 4096,7168 --group-size $g" \
    bash bench/torch_check.sh $d/new > "$out/lib$g.log" 2>&1
  echo "== group $g"; grep -E "^(memcpy|correctness|where)" "$out/lib$g.log"
done
