#!/usr/bin/env bash
# One call: the four group-scale norms after the variants stop demanding a
# groups count divisible by 16 (hidden 7168 is 56 groups of 128): kgen-fuzz
# of each, then the library bench against eager, compile and the first
# call's kernels (--ab old) in the same run.
set -uo pipefail
d=build/gpu-gq
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
ops=rmsnorm_quant_group,rmsnorm_quant_int8_group,fused_add_rmsnorm_quant_group,fused_add_rmsnorm_quant_int8_group
for op in ${ops//,/ }; do
  stdbuf -oL timeout -k 5 20 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op --seconds 12 \
    --seed 6122 >> "$out/fuzz-gq.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz-gq.txt" | head -20
OUT=$out/library KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=330 KGEN_TORCH_DEADLINE_S=280 \
  KGEN_TORCH_ARGS="--ops $ops --tokens 1,512,4096,16384 --hiddens 4096,7168 --ab $d/old" \
  bash bench/torch_check.sh $d/new > "$out/library.log" 2>&1
grep -E "^(cases|correctness|memcpy)" "$out/library.log"; tail -n 36 "$out/library.log"
