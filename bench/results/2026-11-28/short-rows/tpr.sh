#!/usr/bin/env bash
# Rows of a few chunks (a group of 128, a head of 128) with two or four
# chunks a thread instead of one: bundles forced to --threads-per-row T
# (build/gpu-tpr/tT) against the default schedule (t16) as --ab, in one
# run each: per_token_group_quant_int8/_fp8 (library suite) and rope_neox,
# qk_rmsnorm (views suite). TPRS picks T (default "8").
set -uo pipefail
d=build/gpu-tpr
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
for t in ${TPRS:-8}; do
  OUT=$out/lib$t KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=280 KGEN_TORCH_DEADLINE_S=230 \
    KGEN_TORCH_ARGS="--ops per_token_group_quant_int8,per_token_group_quant_fp8 --tokens 1,4096,16384 --hiddens 4096,7168 --ab $d/t16" \
    bash bench/torch_check.sh $d/t$t > "$out/lib$t.log" 2>&1
  grep -E "^(memcpy|correctness)" "$out/lib$t.log"; tail -n 16 "$out/lib$t.log"
  OUT=$out/views$t KGEN_TORCH_SUITE=views KGEN_TORCH_TIMEOUT=250 KGEN_TORCH_DEADLINE_S=200 \
    KGEN_TORCH_ARGS="--ops rope_neox,qk_rmsnorm --tokens 1,4096,16384 --ab $d/t16" \
    bash bench/torch_check.sh $d/t$t > "$out/views$t.log" 2>&1
  tail -n 10 "$out/views$t.log"
done
