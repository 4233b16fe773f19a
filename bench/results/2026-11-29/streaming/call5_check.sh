#!/usr/bin/env bash
# The many-rows variant of one-view kernels without reductions (two chunks
# a thread from launches of 229376 threads; sm_90 profile's
# streaming-rows-loads): GPU tests and kgen-fuzz of the 7 changed ops
# (r2 bundle), the Python ops' GPU check, then torch_bench against the
# kernels before (final = eaca3b5's) beside eager and torch.compile.
set -uo pipefail
d=build/gpu-st; out=${OUT:-/tmp/out}; r=/tmp/res; mkdir -p "$out" $r
nvidia-smi -L
ops="gelu gelu_fast gelu_new gelu_quick gelu_tanh quant_int8_static silu"
filter=$(for o in $ops; do printf 'KgenGpu.%s_*:' $o; done)
KGEN_KERNEL_DIR=$d/r2/kernels timeout -k 5 150 $d/kgen-gpu-tests \
  --gtest_filter="$filter" > $r/gpu-tests.txt 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' $r/gpu-tests.txt | tr '\n' ' ')"
grep -E '^\[  FAILED' $r/gpu-tests.txt | head -5
for op in $ops; do
  stdbuf -oL timeout -k 5 8 $d/kgen-fuzz run $d/r2/kernels --ops $op \
    --seconds 4 --seed 2918 >> $r/fuzz.txt 2>&1
done
grep -E '^\[kgen-fuzz\] [0-9]|FAIL' $r/fuzz.txt | head -10
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 200 \
  python3 python/tests/gpu_check.py > $r/gpu_check.txt 2>&1
echo "gpu_check: rc $?"; grep -E "^FAIL|passed" $r/gpu_check.txt | head -5
OUT=$r/a KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=150 KGEN_TORCH_DEADLINE_S=130 \
  KGEN_TORCH_ARGS="--ops silu,gelu,gelu_tanh,gelu_quick,gelu_new,gelu_fast,quant_int8_static --tokens 1,512,896,4096,16384 --hiddens 4096,14336 --ab $d/final" \
  bash bench/torch_check.sh $d/r2 > $r/bench-a.log 2>&1
echo "== bench"; grep -E "^(memcpy|correctness|A/B|where)" $r/bench-a.log | cut -c1-1500
sed -n '/^where kgen is slower/,/^$/p' $r/bench-a.log
tar czf $out/results.tgz -C $r .
grep -E "^[a-z_0-9]+ +[0-9]+ +[0-9]+ \|" $r/bench-a.log
