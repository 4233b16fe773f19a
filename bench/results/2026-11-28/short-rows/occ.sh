#!/usr/bin/env bash
# A lead, not landed: rmsnorm_quant_group / _int8_group with their held
# variants capped at 64 registers (kgen-occupancy min-resident-threads 1024,
# profile occ1024.json; bundle build/gpu-occ/occ) against the default
# (build/gpu-occ/base, --ab) beside eager and compile: bf16, groups of 128.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
OUT=$out/occ KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=150 \
  KGEN_TORCH_ARGS="--ops rmsnorm_quant_group,rmsnorm_quant_int8_group --tokens 4096,16384 --hiddens 4096,7168 --ab build/gpu-occ/base" \
  bash bench/torch_check.sh build/gpu-occ/occ > "$out/occ.log" 2>&1
grep -E "^(memcpy|correctness|where)" "$out/occ.log"; grep -E "^rmsnorm" "$out/occ.log" | tail -n 8
