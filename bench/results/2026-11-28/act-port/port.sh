#!/usr/bin/env bash
# vLLM's activation and layernorm tests ported (python/tests/
# test_vllm_activation.py, test_vllm_layernorm.py) on the CPU (the
# interpreter) and CUDA (vLLM's whole grids).
set -uo pipefail
d=build/gpu-ue
out=${OUT:-/tmp/out}; mkdir -p "$out"
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python
timeout 400 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_vllm_activation.py python/tests/test_vllm_layernorm.py \
  > "$out/port.txt" 2>&1
echo "port: rc $? $(tail -n 1 "$out/port.txt")"
grep -E "^FAILED" "$out/port.txt" | head -20
