#!/usr/bin/env bash
# A/B of schedule candidates for kernels without reductions: each bundle
# (new = streaming cap 1536, s2048, c2 = 2 chunks a thread, c2s1536) against
# the sm_90 profile's kernels (old), beside eager and torch.compile.
set -uo pipefail
d=build/gpu-st; out=${OUT:-/tmp/out}; mkdir -p "$out"
nvidia-smi -L
a=silu,gelu,gelu_tanh,gelu_quick,gelu_new,gelu_fast,quant_int8_static
b=silu_and_mul,mul_and_silu,gelu_and_mul,gelu_tanh_and_mul,fatrelu_and_mul,swigluoai_and_mul,silu_and_mul_quant
for run in ${RUNS:-new:b s2048:a s2048:b c2:a c2:b c2s1536:a c2s1536:b}; do
  v=${run%:*}; p=${run#*:}; ops=${!p}
  OUT=$out/$v-$p KGEN_TORCH_SUITE=library KGEN_TORCH_TIMEOUT=100 KGEN_TORCH_DEADLINE_S=90 \
    KGEN_TORCH_ARGS="--ops $ops --tokens 512,4096,16384 --hiddens 4096,14336 --ab $d/old" \
    bash bench/torch_check.sh $d/$v > "$out/$v-$p.log" 2>&1
  echo "== $v $p"; grep -E "^(A/B|correctness)" "$out/$v-$p.log" | cut -c1-700
done
