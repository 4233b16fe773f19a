#!/usr/bin/env bash
# Call 2: the 12 changed ops (int8 forms, fp8 group forms) against eager,
# torch.compile and the kernels of 6901f89 (--ab old) in one run: bf16,
# T 1, 4096, 16384, hidden 4096 and 7168 (groups of 128).
set -uo pipefail
d=build/gpu-eq
out=${OUT:-/tmp/out}; mkdir -p "$out"
ops=${OPS:-rmsnorm_quant_group,fused_add_rmsnorm_quant_group,per_token_group_quant_fp8,rmsnorm_quant_int8_group,fused_add_rmsnorm_quant_int8_group,per_token_group_quant_int8,rmsnorm_quant_int8_dynamic,fused_add_rmsnorm_quant_int8_dynamic,quant_int8_dynamic,rmsnorm_quant_int8_static,fused_add_rmsnorm_quant_int8_static,quant_int8_static}
OUT=$out/library KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=540 KGEN_TORCH_DEADLINE_S=470 \
  KGEN_TORCH_ARGS="--ops $ops --tokens 1,4096,16384 --hiddens 4096,7168 --ab $d/old" \
  bash bench/torch_check.sh $d/new > "$out/library.log" 2>&1
grep -E "^(cases|correctness|memcpy|where)" "$out/library.log"; tail -n 50 "$out/library.log"
