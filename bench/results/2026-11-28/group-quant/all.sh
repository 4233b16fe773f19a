#!/usr/bin/env bash
# One call: RMSNorm with a scale per group (rmsnorm_quant_group and its int8
# and fused-add forms, vLLM's rms_norm_per_block_quant). kgen-fuzz of the
# four ops against the interpreter (poisoned outputs and guards), the Python
# ops' GPU check, then the library bench of the four against eager and
# torch.compile in the same run (groups of 128, hidden 4096 and 7168).
set -uo pipefail
d=build/gpu-gq
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
ops=rmsnorm_quant_group,rmsnorm_quant_int8_group,fused_add_rmsnorm_quant_group,fused_add_rmsnorm_quant_int8_group
for op in ${ops//,/ }; do
  stdbuf -oL timeout -k 5 30 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op --seconds 20 \
    --seed 6121 >> "$out/fuzz-gq.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz-gq.txt" | head -20
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 180 python3 python/tests/gpu_check.py \
  > "$out/gpu_check.txt" 2>&1
echo "python gpu_check: $(tail -n 2 "$out/gpu_check.txt" | tr '\n' ' ')"
grep -iE "fail|error" "$out/gpu_check.txt" | head -5
OUT=$out/library KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=330 KGEN_TORCH_DEADLINE_S=280 \
  KGEN_TORCH_ARGS="--ops $ops --tokens 1,512,4096,16384 --hiddens 4096,7168" \
  bash bench/torch_check.sh $d/new > "$out/library.log" 2>&1
grep -E "^(cases|correctness|memcpy)" "$out/library.log"; tail -n 40 "$out/library.log"
