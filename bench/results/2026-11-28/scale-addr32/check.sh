#!/usr/bin/env bash
# Per-head scalars addressed in 32 bits (the launch bounds them below 2^32
# elements) and group scales without the subnormal guard (eps >= 1e-30):
# the three per_token_group_quant ops' GPU tests (poisoned outputs, row- and
# column-major scales), kgen-fuzz of each op against the interpreter and
# vLLM's ported test through the Python op (PART=tests); then torch_bench
# against 81b12da's kernels (row-major scale at element r, --ab) with groups
# of 128 and 64, each beside torch.compile (PART=bench). The fp8 dynamic and
# group-scale norms, whose scales have a constant least value (the guard
# stays on the dynamic ones in the end): GPU tests, kgen-fuzz and
# torch_bench against 14d828f's (PART=norms).
set -uo pipefail
d=build/gpu-sa
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
norms=rmsnorm_quant_dynamic,fused_add_rmsnorm_quant_dynamic,rmsnorm_quant_group,fused_add_rmsnorm_quant_group
if [ "${PART:-tests}" = norms ]; then
KGEN_KERNEL_DIR=$d/norm-new/kernels timeout -k 5 200 $d/kgen-gpu-tests \
  --gtest_filter='*rmsnorm_quant_dynamic*:*rmsnorm_quant_group*' > "$out/norm-tests.txt" 2>&1
echo "norm gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/norm-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/norm-tests.txt" | head -5
for op in ${norms//,/ }; do
  stdbuf -oL timeout -k 5 15 "$d/kgen-fuzz" run "$d/norm-new/kernels" --ops $op \
    --seconds 8 --seed 2814 >> "$out/norm-fuzz.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/norm-fuzz.txt" | head -10
OUT=$out/norms KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=240 KGEN_TORCH_DEADLINE_S=210 \
  KGEN_TORCH_ARGS="--ops $norms --tokens 1,512,4096,16384 --hiddens 4096,7168 --ab $d/norm-old" \
  bash bench/torch_check.sh $d/norm-new > "$out/norms.log" 2>&1
grep -E "^(memcpy|cases|correctness|A/B|where)" "$out/norms.log" | cut -c1-400
exit 0
fi
if [ "${PART:-tests}" = tests ]; then
KGEN_KERNEL_DIR=$d/new/kernels timeout -k 5 150 $d/kgen-gpu-tests \
  --gtest_filter='*per_token_group*' > "$out/gpu-tests.txt" 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/gpu-tests.txt" | head -5
for op in per_token_group_quant_fp8 per_token_group_quant_fp8_ue8m0 per_token_group_quant_int8; do
  stdbuf -oL timeout -k 5 15 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op \
    --seconds 10 --seed 2813 >> "$out/fuzz.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -10
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so
PYTHONPATH=python timeout 200 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_vllm_per_token_group_quant.py > "$out/port.txt" 2>&1
echo "port: rc $? $(tail -n 1 "$out/port.txt")"
grep -E "^FAILED" "$out/port.txt" | head -5
exit 0
fi
for g in 128 64; do
  OUT=$out/lib$g KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=170 \
    KGEN_TORCH_ARGS="--ops per_token_group_quant_fp8,per_token_group_quant_fp8_ue8m0,per_token_group_quant_int8 --tokens 1,512,4096,16384 --hiddens 4096,7168 --group-size $g --ab $d/old" \
    bash bench/torch_check.sh $d/new > "$out/lib$g.log" 2>&1
  echo "== group $g"; grep -E "^(memcpy|cases|correctness|A/B|where)" "$out/lib$g.log" | cut -c1-400
done
