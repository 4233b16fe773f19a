#!/usr/bin/env bash
# One call: the register cap counting part vectors and gathered rows
# (qk_norm_rope's _quarter forms). View tests of every qk kernel (8 shards,
# poisoned outputs against the interpreter), kgen-fuzz of the partial forms,
# vLLM's fused_qk_norm_rope test through the Python ops, then the views bench
# of the four partial forms and the full neox one against eager, compile and
# the previous commit's kernels (--ab old) in the same run.
set -uo pipefail
d=build/gpu-qk3
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
t0=$(date +%s); pids=()
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i KGEN_KERNEL_DIR=$d/new/kernels LD_LIBRARY_PATH=$d/new \
    timeout -k 5 240 "$d/kgen-gpu-tests" --gtest_filter='KgenGpuViewOps*' \
    > "$out/gpu-tests-$i.txt" 2>&1 &
  pids+=($!)
done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
cat "$out"/gpu-tests-*.txt > "$out/gpu-tests-qk.txt"; rm "$out"/gpu-tests-[0-9].txt
echo "view tests: $(grep -c '^\[       OK \]' "$out/gpu-tests-qk.txt") passed, $(grep -c '^\[  FAILED  \] KgenGpu' "$out/gpu-tests-qk.txt") failed, exit $rc, $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED  \] KgenGpu' "$out/gpu-tests-qk.txt" | head -5
grep -B2 -A6 'Failure' "$out/gpu-tests-qk.txt" | head -30
for op in qk_norm_rope_neox_half qk_norm_rope_gptj_half qk_norm_rope_neox_quarter qk_norm_rope_gptj_quarter; do
  stdbuf -oL timeout -k 5 15 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op --seconds 7 \
    --seed 6120 >> "$out/fuzz-qk.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]' "$out/fuzz-qk.txt" | awk '{print $2, $3, $4, $5, $6, $NF}'
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 120 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_vllm_qk_norm_rope.py > "$out/test_vllm_qk_norm_rope.txt" 2>&1
echo "vLLM qk-norm-rope test (cpu and cuda): $(tail -n 1 "$out/test_vllm_qk_norm_rope.txt")"
grep -E "^FAILED|Error" "$out/test_vllm_qk_norm_rope.txt" | head -5
OUT=$out/views KGEN_TORCH_SUITE=views KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=160 \
  KGEN_TORCH_ARGS="--ops qk_norm_rope_neox_quarter,qk_norm_rope_gptj_quarter,qk_norm_rope_neox_half,qk_norm_rope_gptj_half,qk_norm_rope_neox --tokens 512,4096,16384 --ab $d/old" \
  bash bench/torch_check.sh $d/new > "$out/views.log" 2>&1
grep -E "^(cases|correctness|memcpy)" "$out/views.log"; tail -n 20 "$out/views.log"
