#!/usr/bin/env bash
# Call 5: the group-scale norms and per_token_group_quant in kgen-gpu-tests
# (ViewOpsTest's new group-norm cases: T 1 to 600, 1 to 56 groups,
# contiguous, misaligned and padded rows, poisoned outputs) on the sm_90
# kernels of the six ops.
set -uo pipefail
d=build/gpu-eq
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
KGEN_KERNEL_DIR=$d/gn/kernels timeout -k 5 300 $d/kgen-gpu-tests \
  --gtest_filter='*quant*group*' > "$out/gpu-tests.txt" 2>&1
echo "rc $?"; grep -E '^\[  (PASSED|FAILED)|^\[kgen-gpu\]' "$out/gpu-tests.txt" | head -30
grep -E 'Failure' -A4 "$out/gpu-tests.txt" | head -20
