#!/usr/bin/env bash
# Why per_token_group_quant_int8 trails torch.compile: Nsight Compute on the
# kernels of this stop (build/gpu-eq/new) and compile's, bf16 16384 x 7168,
# groups of 128, next to its fp8 sibling and the whole-row int8 group norm.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
OUT=$out timeout 500 bash bench/ncu.sh build/gpu-eq/new "per_token_group_quant_int8 16384 7168" \
  "per_token_group_quant_fp8 16384 7168" "rmsnorm_quant_int8_group 16384 7168"
echo "exit $?"; cat "$out/ncu_summary.txt"
