#!/usr/bin/env bash
# The GPU check, on a GPU machine, from the repository root:
#   bash bench/gpu_check.sh build-gpu/gpu
# (the folder scripts/prepare-gpu.sh fills: kernels/, kgen-gpu-tests,
# kgen-bench). Runs the kernel tests against the interpreter, then the bench.
# Full logs go to $OUT (a temporary folder when OUT is unset): gpu-tests.txt,
# bench.txt, bench.csv, bench.md. Prints a summary, the bench table last.
# Exits non-zero if a test failed (or the bench could not run).
set -uo pipefail
dir="${1:-build-gpu/gpu}"
out="${OUT:-}"
if [ -z "$out" ]; then
  out="$(mktemp -d -t kgen-gpu-check.XXXXXX)"
fi
mkdir -p "$out"
echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu \
  --format=csv,noheader 2>&1 | head -n 2
echo "host: $(nproc) cores, logs in $out"

echo "== kgen-gpu-tests ($(grep -vc '^#' "$dir/kernels/manifest.tsv") kernels)"
t0=$(date +%s)
KGEN_KERNEL_DIR="$dir/kernels" timeout -k 10 "${KGEN_GPU_TEST_TIMEOUT:-420}" \
  "$dir/kgen-gpu-tests" > "$out/gpu-tests.txt" 2>&1
trc=$?
t1=$(date +%s)
log="$out/gpu-tests.txt"
grep -E '^\[kgen-gpu\] (kernels|WORKAROUND)' "$log"
echo "skipped shapes (too many bytes): $(grep -c '^\[kgen-gpu\] skip' "$log")"
grep -E '^\[==========\] .* ran|^\[  PASSED  \]|^\[  SKIPPED \] [0-9]|^\[  FAILED  \] [0-9]' "$log"
nfail=$(grep -cE '^\[  FAILED  \] KgenGpu' "$log" || true)
if [ "$trc" -ne 0 ]; then
  echo "exit code $trc after $((t1 - t0)) s$( [ "$trc" -ge 124 ] && echo ' (timeout or killed)')"
  echo "-- failed tests:"
  grep -E '^\[  FAILED  \] KgenGpu[^ ]*$' "$log" | head -n 40
  echo "-- first failure messages:"
  grep -E '\(seed [0-9]+\)|Failure$|GPU checker|context is unusable|kgen_launch|interpret:' "$log" |
    grep -v 'Failure$' | cut -c1-400 | head -n 25
  echo "-- last lines:"
  tail -n 5 "$log" | cut -c1-300
else
  echo "all tests passed in $((t1 - t0)) s"
fi
# The worst error per kernel group, relative to the tolerance.
echo "-- worst |err|/tol over all groups:"
grep -oE '^\[kgen-gpu\] [a-z_0-9]+ [a-z]+=[0-9]+: .*worst \|err\|/tol [0-9.e+-]+' "$log" |
  awk '{v=$NF; if (v+0 > best+0) {best=v; line=$0}} END {print line}'

if [ "$trc" -ne 0 ]; then
  echo "RESULT: GPU tests FAILED (exit $trc, $nfail failed tests; see $log)"
else
  echo "RESULT: GPU tests passed"
fi

echo "== kgen-bench"
timeout -k 10 "${KGEN_BENCH_TIMEOUT:-150}" "$dir/kgen-bench" "$dir/kernels" "$out" > "$out/bench.txt" 2>&1
brc=$?
# The bench's own output ends with its table: print it last.
cat "$out/bench.txt"
[ "$trc" -ne 0 ] && exit 1
[ "$brc" -ne 0 ] && exit 2
exit 0
