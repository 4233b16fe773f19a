#!/usr/bin/env bash
# After the kernel cache fix: vLLM's test (with forms alternating), the
# diagnosis loops, and the Python ops' GPU check.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
gunzip -c build/gpu-qk2/libkgen_torch.so.gz > /tmp/libkgen_torch.so
export KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python
timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_vllm_qk_norm_rope.py > "$out/test_vllm_qk_norm_rope.txt" 2>&1
echo "vLLM qk-norm-rope test (cpu and cuda): $(tail -n 1 "$out/test_vllm_qk_norm_rope.txt")"
grep -E "^FAILED" "$out/test_vllm_qk_norm_rope.txt" | head -5
OPS=qk_norm_rope_neox,qk_rmsnorm,qk_norm_rope_gptj,qk_norm_rope_neox RUNS=40 timeout 90 python3 build/gpu-qk2/diag2.py 2>&1 | grep runs | tee "$out/diag2.txt"
timeout 300 python3 build/gpu-qk2/diag.py > "$out/diag.txt" 2>&1; grep -c " 0/40" "$out/diag.txt"; grep -v " 0/40" "$out/diag.txt" | head -5
timeout 400 python3 python/tests/gpu_check.py > "$out/gpu_check_py.txt" 2>&1; echo "python gpu_check: exit $?, $(grep -c '^ok' "$out/gpu_check_py.txt") ok, $(grep -c '^FAIL' "$out/gpu_check_py.txt") FAIL"
