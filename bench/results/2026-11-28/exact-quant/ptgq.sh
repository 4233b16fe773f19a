#!/usr/bin/env bash
# Call 4: per_token_group_quant_fp8 / _int8 as whole-row ops (group
# reductions over a token's row, as the group-scale norms). The GPU tests
# of their kernels (poisoned outputs, odd rows, strides, misaligned bases),
# kgen-fuzz against the interpreter, the Python ops' GPU check, then both
# against eager and torch.compile (bf16, T 1/4096/16384, hidden 4096/7168;
# no --ab: the old kernels take another row layout). Run on an uncommitted
# change that was not landed (bench/results/2026-11-28/RESULTS.md).
set -uo pipefail
d=build/gpu-eq
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
ops=per_token_group_quant_int8,per_token_group_quant_fp8
KGEN_KERNEL_DIR=$d/ptgq/kernels timeout -k 5 120 $d/kgen-gpu-tests \
  --gtest_filter='*per_token_group*' > "$out/gpu-tests.txt" 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/gpu-tests.txt" | head -5
for op in ${ops//,/ }; do
  stdbuf -oL timeout -k 5 20 "$d/kgen-fuzz" run "$d/ptgq/kernels" --ops $op --seconds 12 \
    --seed 6301 >> "$out/fuzz.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -10
gunzip -c $d/libkgen_torch_ptgq.so.gz > /tmp/libkgen_torch.so
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 150 python3 python/tests/gpu_check.py \
  > "$out/gpu_check.txt" 2>&1
echo "python gpu_check: $(tail -n 1 "$out/gpu_check.txt" | cut -c1-100)"
grep -iE "per_token_group.*(fail|mismatch)" "$out/gpu_check.txt" | head -5
OUT=$out/library KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=300 KGEN_TORCH_DEADLINE_S=250 \
  KGEN_TORCH_ARGS="--ops $ops --tokens 1,4096,16384 --hiddens 4096,7168" \
  bash bench/torch_check.sh $d/ptgq > "$out/library.log" 2>&1
grep -E "^(cases|correctness|memcpy|where)" -A8 "$out/library.log" | head -30; tail -n 14 "$out/library.log"
