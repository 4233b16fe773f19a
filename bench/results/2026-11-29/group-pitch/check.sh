#!/usr/bin/env bash
# Group scales a pitch apart (vLLM's is_scale_transposed: the group-scale
# norms' _transposed forms) and SwiGLU with a scale per group
# (silu_and_mul_per_block_quant). PART=tests: the GPU tests of the eight
# group-scale norms and the two SwiGLU ops (poisoned outputs; row-major,
# misaligned and transposed scales), kgen-fuzz of each against
# the interpreter, every op's samples through the torch ops against the CPU
# interpreter (gpu_check.py), and transposed.py (transposed against
# row-major scales in CUDA graphs). PART=bench: torch_bench of the SwiGLU
# ops beside eager and torch.compile, then of the norms against e155419's
# kernels (--ab, same run; built by kgen with ops/Quant.h's scales
# unpitched, PTX identical to e155419's baseline) beside torch.compile.
set -uo pipefail
d=build/gpu-gp
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
norms=rmsnorm_quant_group,rmsnorm_quant_int8_group,fused_add_rmsnorm_quant_group,fused_add_rmsnorm_quant_int8_group
silu=silu_and_mul_quant_group,silu_and_mul_quant_int8_group
tnorms=${norms//,/_transposed,}_transposed
if [ "${PART:-tests}" = tests ]; then
KGEN_KERNEL_DIR=$d/new/kernels timeout -k 5 200 $d/kgen-gpu-tests \
  --gtest_filter='*quant_group*:*quant_int8_group*' > "$out/gpu-tests.txt" 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/gpu-tests.txt" | head -5
for op in ${tnorms//,/ } ${silu//,/ }; do
  stdbuf -oL timeout -k 5 10 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op \
    --seconds 6 --seed 2916 >> "$out/fuzz.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -12
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so
PYTHONPATH=python timeout 240 python3 python/tests/gpu_check.py > "$out/gpu_check.txt" 2>&1
echo "gpu_check: rc $?"; grep -E "^FAIL" "$out/gpu_check.txt" | head -5
grep -E "quant_group|quant_int8_group" "$out/gpu_check.txt" | head -12
PYTHONPATH=python timeout 120 python3 bench/results/2026-11-29/group-pitch/transposed.py \
  > "$out/transposed.txt" 2>&1
echo "transposed: rc $?"; cat "$out/transposed.txt" | tail -30
exit 0
fi
OUT=$out/silu KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=150 KGEN_TORCH_DEADLINE_S=120 \
  KGEN_TORCH_ARGS="--ops $silu --tokens 1,512,4096,16384 --hiddens 4096,7168" \
  bash bench/torch_check.sh $d/new > "$out/silu.log" 2>&1
grep -E "^(memcpy|cases|correctness|where)" "$out/silu.log" | cut -c1-400
tail -n 18 "$out/silu.log"
OUT=$out/norms KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=300 KGEN_TORCH_DEADLINE_S=270 \
  KGEN_TORCH_ARGS="--ops $norms --tokens 1,512,4096,16384 --hiddens 4096,7168 --ab $d/old" \
  bash bench/torch_check.sh $d/new > "$out/norms.log" 2>&1
grep -E "^(memcpy|cases|correctness|A/B|where)" "$out/norms.log" | cut -c1-400
tail -n 40 "$out/norms.log"
