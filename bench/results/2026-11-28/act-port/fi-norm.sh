#!/usr/bin/env bash
# FlashInfer's norm test ported (python/tests/test_flashinfer_norm.py) on
# the CPU (the interpreter) and CUDA (FlashInfer's grid).
set -uo pipefail
d=build/gpu-nw
out=${OUT:-/tmp/out}; mkdir -p "$out"
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python
timeout 150 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_flashinfer_norm.py > "$out/fi-norm.txt" 2>&1
echo "port: rc $? $(tail -n 1 "$out/fi-norm.txt")"
grep -E "^FAILED" "$out/fi-norm.txt" | head -20
