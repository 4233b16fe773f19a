#!/usr/bin/env bash
# Register caps of kernels without reductions (sm_90 profile): the final
# kernels' GPU tests (poisoned outputs, odd lengths, strides, misaligned
# pointers, against the interpreter), kgen-fuzz, the Python ops' GPU check,
# then torch_bench of the 14 changed ops against the sm_90 profile's
# kernels before the change (--ab old), beside eager and torch.compile.
set -uo pipefail
d=build/gpu-st; out=${OUT:-/tmp/out}; r=/tmp/res; mkdir -p "$out" $r
nvidia-smi -L
ops="fatrelu_and_mul gelu gelu_and_mul gelu_fast gelu_new gelu_quick gelu_tanh gelu_tanh_and_mul mul_and_silu quant_int8_static silu silu_and_mul silu_and_mul_quant swigluoai_and_mul"
filter=$(for o in $ops; do printf 'KgenGpu.%s_*:' $o; done)
KGEN_KERNEL_DIR=$d/final/kernels KGEN_GPU_TEST_SHARDS=1 timeout -k 5 200 $d/kgen-gpu-tests \
  --gtest_filter="$filter" > $r/gpu-tests.txt 2>&1
echo "gpu tests: rc $? $(grep -E '^\[  (PASSED|FAILED)' $r/gpu-tests.txt | tr '\n' ' ')"
grep -E '^\[  FAILED' $r/gpu-tests.txt | head -5
for op in $ops; do
  stdbuf -oL timeout -k 5 10 $d/kgen-fuzz run $d/final/kernels --ops $op \
    --seconds 4 --seed 2917 >> $r/fuzz.txt 2>&1
done
grep -E '^\[kgen-fuzz\]|FAIL' $r/fuzz.txt | head -20
gunzip -c $d/libkgen_torch.so.gz > /tmp/libkgen_torch.so
KGEN_TORCH_LIBRARY=/tmp/libkgen_torch.so PYTHONPATH=python timeout 240 \
  python3 python/tests/gpu_check.py > $r/gpu_check.txt 2>&1
echo "gpu_check: rc $?"; grep -E "^FAIL" $r/gpu_check.txt | head -5
a=silu,gelu,gelu_tanh,gelu_quick,gelu_new,gelu_fast,quant_int8_static
b=silu_and_mul,mul_and_silu,gelu_and_mul,gelu_tanh_and_mul,fatrelu_and_mul,swigluoai_and_mul,silu_and_mul_quant
for p in a b; do
  ops=${!p}
  OUT=$r/$p KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=150 KGEN_TORCH_DEADLINE_S=130 \
    KGEN_TORCH_ARGS="--ops $ops --tokens 1,512,4096,16384 --hiddens 4096,14336 --ab $d/old" \
    bash bench/torch_check.sh $d/final > $r/bench-$p.log 2>&1
  echo "== bench $p"; grep -E "^(memcpy|correctness|A/B|where)" $r/bench-$p.log | cut -c1-900
done
tar czf $out/results.tgz -C $r .
tail -n 60 $r/bench-a.log; tail -n 60 $r/bench-b.log | grep -E "^[a-z_]+ +[0-9]+ +[0-9]+ \|" 
