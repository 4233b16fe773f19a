#!/usr/bin/env bash
# kgen-fuzz and compute-sanitizer on a GPU machine, from the repository root:
#   bash bench/fuzz_check.sh build-gpu/gpu
# (the folder scripts/prepare-gpu.sh fills). Logs go to $OUT (a temporary
# folder when unset). Prints a table per op last; exits 1 on a failure.
# Env: KGEN_FUZZ_SECONDS  seconds per op, all ops at once (default 30; 0: no
#                         fuzzing)
#      KGEN_FUZZ_SEED     the run's seed (default: the time, printed)
#      KGEN_FUZZ_OPS      the ops to fuzz, comma separated (default: all)
#      KGEN_FUZZ_PROCS    processes per op, seeds SEED, SEED+1, ... (default 1)
#      KGEN_SANITIZE      memcheck,racecheck,initcheck,synccheck (default);
#                         "" : none. Each runs kgen-gpu-tests on the small
#                         bundle (kernels-small: every op at lengths 0 and
#                         4096) over short rows, and kgen-fuzz's small cases.
set -uo pipefail
dir="${1:-build-gpu/gpu}"
out="${OUT:-$(mktemp -d -t kgen-fuzz-check.XXXXXX)}"
mkdir -p "$out"
secs="${KGEN_FUZZ_SECONDS:-30}"
seed="${KGEN_FUZZ_SEED:-$(date +%s)}"
tools="${KGEN_SANITIZE-memcheck,racecheck,initcheck,synccheck}"
fuzz="$dir/kgen-fuzz"
rc=0

if [ "$secs" != 0 ]; then
  echo "== kgen-fuzz: every op for $secs s at once (seed $seed)"
  ops=$(awk -F'\t' '!/^#/ {print $2}' "$dir/kernels/manifest.tsv" | sort -u)
  [ -n "${KGEN_FUZZ_OPS:-}" ] && ops="${KGEN_FUZZ_OPS//,/ }"
  procs="${KGEN_FUZZ_PROCS:-1}"
  for op in $ops; do
    for ((i = 0; i < procs; ++i)); do
      "$fuzz" run "$dir/kernels" --ops "$op" --seconds "$secs" \
        --seed "$((seed + i))" --threads 1 > "$out/fuzz-$op-$i.txt" 2>&1 &
    done
  done
  wait
  for op in $ops; do
    for f in "$out/fuzz-$op"-*.txt; do
      grep -q "more than one dim" "$f" && continue
      grep -E '^FAIL|^  case' "$f" | head -n 4
      grep -qE '^\[kgen-fuzz\] [0-9]+ cases, 0 failed' "$f" || rc=1
    done
  done
fi

if [ -n "$tools" ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  echo "== compute-sanitizer ($tools) over kernels-small"
  for tool in ${tools//,/ }; do
    (
      KGEN_KERNEL_DIR="$dir/kernels-small" KGEN_GPU_TEST_ROWS=1,7 \
        KGEN_GPU_TEST_LENGTHS=1,7,100,4095,4096 KGEN_GPU_TEST_SEED=1 \
        timeout -k 10 "${KGEN_SANITIZE_TIMEOUT:-420}" "$cs" --tool "$tool" \
        --error-exitcode 9 --print-limit 20 "$dir/kgen-gpu-tests" \
        > "$out/sanitize-$tool-tests.txt" 2>&1
      echo $? > "$out/sanitize-$tool-tests.rc"
      timeout -k 10 120 "$cs" --tool "$tool" --error-exitcode 9 \
        --print-limit 20 "$fuzz" run "$dir/kernels-small" --cases 15 \
        --max-bytes 262144 --seed "$seed" > "$out/sanitize-$tool-fuzz.txt" 2>&1
      echo $? > "$out/sanitize-$tool-fuzz.rc"
    ) &
  done
  wait
  for tool in ${tools//,/ }; do
    for part in tests fuzz; do
      f="$out/sanitize-$tool-$part.txt"
      r=$(cat "$out/sanitize-$tool-$part.rc")
      summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -n 1)
      launches=$(grep -cE '^\[kgen-gpu\]|^\[kgen-fuzz\]' "$f")
      echo "$tool $part: exit $r, $summary ($launches result lines)"
      # kgen-fuzz's own failures (exit 1) are the fuzz table's; the
      # sanitizer's findings exit 9, a crash or timeout otherwise.
      if [ "$r" != 0 ] && { [ "$part" = tests ] || [ "$r" != 1 ]; }; then
        rc=1
        grep -E '=========  (Invalid|Uninit|Race|Barrier|Error)|^\[  FAILED|^FAIL' "$f" | head -n 5
      fi
    done
  done
fi

if [ "$secs" != 0 ]; then
  echo "== kgen-fuzz table (seeds $seed.., $procs x $secs s per op)"
  printf '%-22s %10s %7s %10s %9s\n' op cases failed worst cases/s
  for op in $ops; do
    if grep -q "more than one dim" "$out/fuzz-$op-0.txt"; then
      printf '%-22s %s\n' "$op" "not fuzzed (a dim no row map uses)"
      continue
    fi
    # Summed over the op's processes: cases, failures, cases/s; the worst.
    cat "$out/fuzz-$op"-*.txt | awk -v op="$op" '
      /^\[kgen-fuzz\] / && $3 ~ /^[0-9]+$/ && $4 == "cases," {
        n += $3; f += $5; sub(/,$/, "", $11); if ($11 + 0 > w) w = $11 + 0
        r += $12 }
      END { printf "%-22s %10d %7d %10.3f %9.0f\n", op, n, f, w, r }'
  done
fi
exit $rc
