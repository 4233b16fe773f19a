#!/usr/bin/env bash
# Column-major group scales written by the kernel (per-head scalars with a
# row stride and a pitch): the three per_token_group_quant ops' GPU tests
# (poisoned outputs; the padded layout's scales column-major, TMA-aligned),
# kgen-fuzz, the Python package's op checks and
# vLLM's ported test on CUDA, colmajor.py's timing of the scale layouts
# beside torch.compile (PART=tests); then torch_bench against the previous
# kernels (row-major scales, --ab) with groups of 128 and 64, after
# kgen-fuzz of each op against the interpreter (PART=bench).
set -uo pipefail
d=build/gpu-cm
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
if [ "${PART:-tests}" = tests ]; then
KGEN_KERNEL_DIR=$d/new/kernels timeout -k 5 150 $d/kgen-gpu-tests \
  --gtest_filter='*per_token_group*' > "$out/gpu-tests.txt" 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/gpu-tests.txt" | head -5
stdbuf -oL timeout -k 5 40 "$d/kgen-fuzz" run "$d/new/kernels" --seconds 30 \
  --seed 2811 > "$out/fuzz.txt" 2>&1
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -10
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so
PYTHONPATH=python KGEN_CHECKS=check_ops,check_opcheck,check_layouts \
  timeout 200 python3 python/tests/gpu_check.py > "$out/gpu_check.txt" 2>&1
echo "python gpu_check: rc $? $(tail -n 1 "$out/gpu_check.txt" | cut -c1-100)"
grep -E "^FAIL" "$out/gpu_check.txt" | head -5
PYTHONPATH=python timeout 200 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_vllm_per_token_group_quant.py > "$out/port.txt" 2>&1
echo "port: rc $? $(tail -n 1 "$out/port.txt")"
grep -E "^FAILED" "$out/port.txt" | head -5
PYTHONPATH=python timeout 150 python3 bench/results/2026-11-28/ue8m0/colmajor.py \
  2>&1 | tee "$out/colmajor.txt" | tail -8
exit 0
fi
# PART=bench: each op's kgen-fuzz (30 s of the whole bundle reached only the
# first op), then the bench.
for op in per_token_group_quant_fp8 per_token_group_quant_fp8_ue8m0 per_token_group_quant_int8; do
  stdbuf -oL timeout -k 5 15 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op \
    --seconds 10 --seed 2812 >> "$out/fuzz.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -10
for g in 128 64; do
  OUT=$out/lib$g KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=170 \
    KGEN_TORCH_ARGS="--ops per_token_group_quant_fp8,per_token_group_quant_fp8_ue8m0,per_token_group_quant_int8 --tokens 1,512,4096,16384 --hiddens 4096,7168 --group-size $g --ab $d/old" \
    bash bench/torch_check.sh $d/new > "$out/lib$g.log" 2>&1
  echo "== group $g"; grep -E "^(memcpy|cases|correctness|A/B|where)" "$out/lib$g.log" | cut -c1-400
done
