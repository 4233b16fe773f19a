#!/usr/bin/env bash
# One call: the fp8 group-scale norms dividing by the scale, as vLLM's
# kernel does (the int8 forms' PTX is unchanged). kgen-fuzz of the four,
# vLLM's per-block fused quant layernorm test and the package's GPU check
# through the Python ops, then the library bench against eager, compile and
# call 2's kernels (multiplying by the reciprocal; --ab old) in one run.
set -uo pipefail
d=build/gpu-gq
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
ops=rmsnorm_quant_group,rmsnorm_quant_int8_group,fused_add_rmsnorm_quant_group,fused_add_rmsnorm_quant_int8_group
for op in ${ops//,/ }; do
  stdbuf -oL timeout -k 5 20 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op --seconds 12 \
    --seed 6123 >> "$out/fuzz-gq.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz-gq.txt" | head -20
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 200 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_vllm_fused_quant_layernorm.py > "$out/test_vllm_fused_quant_layernorm.txt" 2>&1
echo "vLLM fused quant layernorm test (cpu and cuda): $(tail -n 1 "$out/test_vllm_fused_quant_layernorm.txt")"
grep -E "^FAILED" "$out/test_vllm_fused_quant_layernorm.txt" | head -5
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 180 python3 python/tests/gpu_check.py \
  > "$out/gpu_check.txt" 2>&1
echo "python gpu_check: $(tail -n 1 "$out/gpu_check.txt")"
OUT=$out/library KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=330 KGEN_TORCH_DEADLINE_S=280 \
  KGEN_TORCH_ARGS="--ops $ops --tokens 1,512,4096,16384 --hiddens 4096,7168 --ab $d/old" \
  bash bench/torch_check.sh $d/new > "$out/library.log" 2>&1
grep -E "^(cases|correctness|memcpy|where)" "$out/library.log"; tail -n 36 "$out/library.log"
