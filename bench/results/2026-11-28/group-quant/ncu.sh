#!/usr/bin/env bash
# What holds the group-scale norms under memcpy: Nsight Compute on the
# kernels of 2c8944b (build/gpu-gq/new) and torch.compile, bf16 16384 x 7168,
# groups of 128.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
OUT=$out timeout 500 bash bench/ncu.sh build/gpu-gq/new "rmsnorm_quant_group 16384 7168" \
  "rmsnorm_quant_int8_group 16384 7168" "fused_add_rmsnorm_quant_group 16384 7168"
echo "exit $?"; cat "$out/ncu_summary.txt"
