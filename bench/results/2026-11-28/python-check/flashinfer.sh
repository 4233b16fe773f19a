#!/usr/bin/env bash
# FlashInfer's rope tests ported (python/tests/test_flashinfer_rope.py), on
# the CPU interpreter and on the GPU's kernels.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
gunzip -c build/gpu-py/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python
timeout 400 python3 -m pytest -q -p no:cacheprovider -rs python/tests/test_flashinfer_rope.py > "$out/test_flashinfer_rope.txt" 2>&1
echo "FlashInfer rope tests (cpu and cuda): exit $?, $(tail -n 1 "$out/test_flashinfer_rope.txt")"
grep -E "^FAILED|Error" "$out/test_flashinfer_rope.txt" | head -5
