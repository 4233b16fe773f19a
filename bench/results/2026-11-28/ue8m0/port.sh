#!/usr/bin/env bash
# vLLM's per_token_group_quant test ported (python/tests/
# test_vllm_per_token_group_quant.py) on the CPU (the interpreter) and CUDA,
# and the Python op tests on CUDA.
set -uo pipefail
d=build/gpu-ue
out=${OUT:-/tmp/out}; mkdir -p "$out"
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python
timeout 300 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_vllm_per_token_group_quant.py > "$out/port.txt" 2>&1
echo "port: rc $? $(tail -n 1 "$out/port.txt")"
grep -E "^FAILED" "$out/port.txt" | head -5
