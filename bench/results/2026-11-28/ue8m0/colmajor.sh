#!/usr/bin/env bash
# Column-major scales in the Python package's per_token_group_quant_fp8:
# gpu_check.py's op checks (every op against the interpreter with poisoned
# outputs, the column-major samples among them; opcheck; layouts), then
# colmajor.py's timing of the scale layouts beside torch.compile.
set -uo pipefail
d=build/gpu-ue
out=${OUT:-/tmp/out}; mkdir -p "$out"
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python
KGEN_CHECKS=check_ops,check_opcheck,check_layouts timeout 300 python3 python/tests/gpu_check.py \
  > "$out/gpu_check.txt" 2>&1
echo "python gpu_check: rc $? $(tail -n 1 "$out/gpu_check.txt")"
grep -E "^FAIL" "$out/gpu_check.txt" | head -5
timeout 200 python3 bench/results/2026-11-28/ue8m0/colmajor.py 2>&1 | tee "$out/colmajor.txt" | tail -8
