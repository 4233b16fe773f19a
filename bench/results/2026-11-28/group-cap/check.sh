#!/usr/bin/env bash
# kgen-occupancy's group-resident-threads (1024): held rows of at most 4
# chunks quantized per group take a cap of 64 registers. GPU tests of every
# per-group kernel (poisoned outputs), kgen-fuzz against the interpreter,
# then the four rmsnorm group ops against the kernels with the option at
# 512 (the previous caps, --ab) beside eager and compile, bf16, groups of 128.
set -uo pipefail
d=build/gpu-gcap
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
ops=rmsnorm_quant_group,rmsnorm_quant_int8_group,fused_add_rmsnorm_quant_group,fused_add_rmsnorm_quant_int8_group
KGEN_KERNEL_DIR=$d/new/kernels timeout -k 5 150 $d/kgen-gpu-tests \
  --gtest_filter='*_group*' > "$out/gpu-tests.txt" 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/gpu-tests.txt" | head -5
for op in ${ops//,/ }; do
  stdbuf -oL timeout -k 5 15 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op --seconds 8 \
    --seed 6303 >> "$out/fuzz.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -10
OUT=$out/lib KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=330 KGEN_TORCH_DEADLINE_S=280 \
  KGEN_TORCH_ARGS="--ops $ops --tokens ${TOKENS:-1024,4096,16384} --hiddens ${HIDDENS:-1024,2048,4096,7168,8192} --ab $d/old" \
  bash bench/torch_check.sh $d/new > "$out/lib.log" 2>&1
grep -E "^(memcpy|correctness|where|A/B|cases)" "$out/lib.log"
