#!/usr/bin/env bash
# Groups of 64 at 4 threads of 2 chunks (bundle forced to --threads-per-row
# 4, build/gpu-tpr/f4) against the previous kernels (t16: 8 threads of one
# chunk) from 2048 tokens, and groups of 128 at 4 x 4 on 1024 x 7168.
set -uo pipefail
d=build/gpu-tpr
out=${OUT:-/tmp/out}; mkdir -p "$out"
ops=per_token_group_quant_int8,per_token_group_quant_fp8
for run in "64 2048,4096,16384 4096,7168" "128 512,1024 7168"; do
  set -- $run
  OUT=$out/f4-$1 KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=160 \
    KGEN_TORCH_ARGS="--ops $ops --tokens $2 --hiddens $3 --group-size $1 --ab $d/t16" \
    bash bench/torch_check.sh $d/f4 > "$out/f4-$1.log" 2>&1
  echo "== group $1"; grep -E "^(memcpy|correctness)" "$out/f4-$1.log"; grep -E "^per_token" "$out/f4-$1.log" | tail -n 12
done
