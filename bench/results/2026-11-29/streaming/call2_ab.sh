#!/usr/bin/env bash
# A/B: streaming kernels with a register cap for 1536 threads an SM (new)
# against the sm_90 profile's caps (old), beside eager and torch.compile.
set -uo pipefail
d=build/gpu-st; out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
case "${PART:-a}" in
a) ops=silu,gelu,gelu_tanh,gelu_quick,gelu_new,gelu_fast,quant_int8_static ;;
b) ops=silu_and_mul,mul_and_silu,gelu_and_mul,gelu_tanh_and_mul,fatrelu_and_mul,swigluoai_and_mul,silu_and_mul_quant ;;
esac
OUT=$out/$PART KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=560 KGEN_TORCH_DEADLINE_S=500 \
  KGEN_TORCH_ARGS="--ops $ops --tokens 1,512,4096,16384 --hiddens 4096,14336 --ab $d/old" \
  bash bench/torch_check.sh $d/new > "$out/$PART.log" 2>&1
grep -E "^(memcpy|cases|correctness|A/B|where)" "$out/$PART.log" | cut -c1-600
tail -n 70 "$out/$PART.log"
