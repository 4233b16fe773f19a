#!/usr/bin/env bash
# Schedule sweep, on a GPU machine: times the same ops compiled with several
# --threads-per-row values (bundles made here by `bench/sweep.sh prepare`).
#   here:  bash bench/sweep.sh prepare build/gpu      (needs build/ and kgen)
#   there: bash bench/sweep.sh run build/gpu
# Env: KGEN_BENCH_CONFIGS (op:length,...), KGEN_BENCH_ROWS.
set -euo pipefail
mode=$1
dir=$2
tprs=${KGEN_SWEEP_TPRS:-128,256,512,1024}
if [ "$mode" = prepare ]; then
  mkdir -p "$dir/sweep"
  for t in ${tprs//,/ }; do
    build/tools/kgen/kgen bundle -o "$dir/sweep/tpr$t" --archs sm_90 \
      --lengths "${KGEN_SWEEP_LENGTHS:-4096,8192,16384}" --threads-per-row "$t" \
      --dtypes bf16 --ops "${KGEN_SWEEP_OPS:-rmsnorm,layernorm,softmax,fused_add_rmsnorm,silu_and_mul}" \
      > "$dir/sweep/tpr$t.log"
    tail -n 1 "$dir/sweep/tpr$t.log"
  done
  cp build/bench/kgen-bench "$dir/"
  exit 0
fi
export KGEN_BENCH_KINDS=${KGEN_BENCH_KINDS:-spec}
export KGEN_BENCH_CONFIGS=${KGEN_BENCH_CONFIGS:-rmsnorm:4096,rmsnorm:8192,rmsnorm:16384,layernorm:4096,layernorm:8192,softmax:4096,softmax:8192,fused_add_rmsnorm:4096,silu_and_mul:4096,silu_and_mul:8192}
out=$(mktemp -d)  # per-schedule tables; the summary lines go to stdout
for t in ${tprs//,/ }; do
  echo "== threads per row $t"
  mkdir -p "$out/tpr$t"
  "$dir/kgen-bench" "$dir/sweep/tpr$t" "$out/tpr$t" | grep -E "^(rmsnorm|layernorm|softmax|fused|silu|gelu|gemma)"
done
