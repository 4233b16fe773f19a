#!/usr/bin/env bash
# The Python package at this stop's head on a GPU: the whole GPU check (every
# op's samples against the interpreter, int32 positions and the _quarter
# kernels included), and vLLM's rope and qk-norm-rope tests on CUDA.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
gunzip -c build/gpu-py/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python
timeout 150 python3 -m pytest -q -p no:cacheprovider python/tests/test_vllm_qk_norm_rope.py python/tests/test_vllm_rope.py > "$out/test_vllm.txt" 2>&1
echo "vLLM rope + qk-norm-rope tests (cpu and cuda): $(tail -n 1 "$out/test_vllm.txt")"
grep -E "^FAILED" "$out/test_vllm.txt" | head -5
timeout 400 python3 python/tests/gpu_check.py > "$out/gpu_check_py.txt" 2>&1; echo "python gpu_check: exit $?, $(grep -c '^ok' "$out/gpu_check_py.txt") ok, $(grep -c '^FAIL' "$out/gpu_check_py.txt") FAIL"
grep -E "^\| ops " "$out/gpu_check_py.txt"; grep "^FAIL" "$out/gpu_check_py.txt" | head
