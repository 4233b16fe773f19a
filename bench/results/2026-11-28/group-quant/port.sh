#!/usr/bin/env bash
# One call: vLLM's per-block fused quant layernorm test through the Python
# ops, on the CPU (the interpreter) and on the H200.
set -uo pipefail
d=build/gpu-gq
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 200 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_vllm_fused_quant_layernorm.py > "$out/test_vllm_fused_quant_layernorm.txt" 2>&1
echo "vLLM fused quant layernorm test (cpu and cuda): $(tail -n 1 "$out/test_vllm_fused_quant_layernorm.txt")"
grep -E "^FAILED|^E  " "$out/test_vllm_fused_quant_layernorm.txt" | head -8
