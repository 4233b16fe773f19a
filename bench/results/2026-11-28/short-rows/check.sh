#!/usr/bin/env bash
# per_token_group_quant's `_vec_rows` (4 threads a group, from 229376
# launched threads): GPU tests of its kernels (poisoned outputs, 56 groups
# of T past the variant's min_rows), kgen-fuzz against the interpreter, the
# Python ops' GPU check, then eager, torch.compile and the previous kernels
# (t16, --ab) in one run per group size: bf16, T 512 to 16384, hidden 4096
# and 7168. (Call 3 ran it with 4 chunks a thread from 8192 rows.)
set -uo pipefail
d=build/gpu-tpr
out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
ops=per_token_group_quant_int8,per_token_group_quant_fp8
KGEN_KERNEL_DIR=$d/new/kernels timeout -k 5 150 $d/kgen-gpu-tests \
  --gtest_filter='*per_token_group*' > "$out/gpu-tests.txt" 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$out/gpu-tests.txt" | head -5
for op in ${ops//,/ }; do
  stdbuf -oL timeout -k 5 20 "$d/kgen-fuzz" run "$d/new/kernels" --ops $op --seconds 12 \
    --seed 6302 >> "$out/fuzz.txt" 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' "$out/fuzz.txt" | head -10
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 150 python3 python/tests/gpu_check.py \
  > "$out/gpu_check.txt" 2>&1
echo "python gpu_check: $(tail -n 1 "$out/gpu_check.txt" | cut -c1-100)"
for g in 128 64; do
  OUT=$out/lib$g KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=200 KGEN_TORCH_DEADLINE_S=160 \
    KGEN_TORCH_ARGS="--ops $ops --tokens ${TOKENS:-512,1024,2048,4096,16384} --hiddens 4096,7168 --group-size $g --ab $d/t16" \
    bash bench/torch_check.sh $d/new > "$out/lib$g.log" 2>&1
  echo "== group $g"; grep -E "^(memcpy|correctness|where)" "$out/lib$g.log"; tail -n 17 "$out/lib$g.log" | grep -E "^per_token"
done
