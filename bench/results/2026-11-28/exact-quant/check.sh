#!/usr/bin/env bash
# Call 1: the int8 conversion in one cvt (kgen-saturating-convert) and the
# fp8 group division as a corrected reciprocal (kgen-fast-math). Every bf16
# value through the fp8 and int8 static kernels, bit for bit (sm_90, and
# sm_80 PTX JIT-compiled); kgen-fuzz of the 12 changed ops against the
# interpreter; vLLM's fused quant layernorm test (ported) through the
# Python ops.
set -uo pipefail
d=build/gpu-eq
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
for k in kernels-sm90 kernels-sm80; do
  KGEN_KERNEL_DIR=$d/new/$k timeout -k 5 60 $d/kgen-gpu-tests \
    --gtest_filter='KgenGpuConvert*' > "$out/convert-$k.txt" 2>&1
  echo "$k: rc $? $(grep -cE '^\[       OK' "$out/convert-$k.txt") ok"
  grep -E '^\[kgen-gpu\] .* to (fp8|int8)|FAILED|differ:' "$out/convert-$k.txt" | head -8
done
ops=rmsnorm_quant_int8_static,rmsnorm_quant_int8_dynamic,fused_add_rmsnorm_quant_int8_static,fused_add_rmsnorm_quant_int8_dynamic,quant_int8_static,quant_int8_dynamic,per_token_group_quant_int8,rmsnorm_quant_int8_group,fused_add_rmsnorm_quant_int8_group,per_token_group_quant_fp8,rmsnorm_quant_group,fused_add_rmsnorm_quant_group
for op in ${ops//,/ }; do
  stdbuf -oL timeout -k 5 14 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op --seconds 7 \
    --seed 6201 >> "$out/fuzz.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -30
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 150 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_vllm_fused_quant_layernorm.py > "$out/test_vllm_fused_quant_layernorm.txt" 2>&1
echo "vLLM fused quant layernorm test: $(tail -n 1 "$out/test_vllm_fused_quant_layernorm.txt")"
grep -E "^FAILED" "$out/test_vllm_fused_quant_layernorm.txt" | head -5
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 150 python3 python/tests/gpu_check.py \
  > "$out/gpu_check.txt" 2>&1
echo "python gpu_check: $(tail -n 1 "$out/gpu_check.txt")"
