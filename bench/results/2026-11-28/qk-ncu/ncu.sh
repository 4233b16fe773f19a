#!/usr/bin/env bash
# What holds the partial qk_norm_rope forms under memcpy: Nsight Compute on
# the kernels of 241cfd0 and torch.compile, qk forms at T 16384, head_dim 128.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
OUT=$out timeout 420 bash bench/ncu.sh build/gpu-qk3b/new "qk_norm_rope_gptj_quarter 16384 128" \
  "qk_norm_rope_neox_half 16384 128" "qk_norm_rope_neox 16384 128" "qk_rmsnorm 16384 128"
echo "exit $?"; cat "$out/ncu_summary.txt"
