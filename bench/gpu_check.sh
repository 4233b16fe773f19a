#!/usr/bin/env bash
# The GPU check, on a GPU machine, from the repository root:
#   bash bench/gpu_check.sh build-gpu/gpu
# (the folder scripts/prepare-gpu.sh fills: kernels/, kgen-gpu-tests,
# kgen-bench). Runs the kernel tests against the interpreter, then the bench.
# Full logs go to $OUT (a temporary folder when OUT is unset): gpu-tests.txt,
# bench.txt, bench.csv, bench.md. Prints a summary, the bench table last.
# Exits non-zero if a test failed (or the bench could not run).
# Env: KGEN_GPU_TEST_SHARDS (default 8: processes the kernel tests share),
# KGEN_GPU_TEST_TIMEOUT (default 480 s a shard), KGEN_BENCH_TIMEOUT,
# KGEN_GPU_CHECK_AOT, KGEN_GPU_CHECK_FUZZ (below).
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

tests="$dir/kgen-gpu-tests"
bench="$dir/kgen-bench"
# Built elsewhere: if they do not start here (an older glibc), build them
# here from the snapshot in $dir/src.
if ! start_err="$("$tests" --gtest_list_tests 2>&1 >/dev/null)"; then
  echo "the prebuilt programs do not run here: ${start_err:0:300}"
  echo "glibc here: $(ldd --version 2>&1 | head -n 1); rebuilding them here"
  rebuilt="$(mktemp -d -t kgen-gpu-build.XXXXXX)"
  if bash "$dir/build_on_device.sh" "$dir" "$rebuilt" > "$out/device-build.txt" 2>&1; then
    tail -n 1 "$out/device-build.txt"
    tests="$rebuilt/kgen-gpu-tests"
    bench="$rebuilt/kgen-bench"
  else
    echo "the build here failed:"
    tail -n 20 "$out/device-build.txt"
    exit 3
  fi
fi

# Runs kgen-gpu-tests with ARGS in KGEN_GPU_TEST_SHARDS processes at once
# (gtest's sharding; the environment is the caller's), each checking its
# outputs against the interpreter on its own cores: in one process the
# bundle's tests outgrew a device call. LOG gets the shards' logs one after
# another. Returns the first failing exit code; 77 (a test skipped for want
# of a second GPU) counts as passed where tests passed and none failed.
shards="${KGEN_GPU_TEST_SHARDS:-8}"
sharded() {
  local log=$1 limit=$2 i rc=0 one
  shift 2
  local pids=()
  for ((i = 0; i < shards; ++i)); do
    GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" \
      timeout -k 10 "$limit" "$tests" "$@" > "$log.shard$i" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    one=$?
    if [ "$one" -eq 77 ] && grep -qE '^\[  PASSED  \] [1-9]' "$log.shard$i" &&
      ! grep -qE '^\[  FAILED  \]' "$log.shard$i"; then
      one=0
    fi
    [ "$rc" -eq 0 ] && rc=$one
  done
  for ((i = 0; i < shards; ++i)); do cat "$log.shard$i"; done > "$log"
  rm -f "$log".shard*
  return "$rc"
}

echo "== kgen-gpu-tests ($(grep -vc '^#' "$dir/kernels/manifest.tsv") kernels, $shards shards)"
t0=$(date +%s)
log="$out/gpu-tests.txt"
KGEN_KERNEL_DIR="$dir/kernels" sharded "$log" "${KGEN_GPU_TEST_TIMEOUT:-480}"
trc=$?
t1=$(date +%s)
# Files over 16 MiB do not come back from the device tool: keep the ends.
if [ "$(stat -c %s "$log")" -gt 12000000 ]; then
  { head -c 10000000 "$log"; echo; echo "[... truncated ...]"; tail -c 2000000 "$log"; } > "$log.cut"
  mv "$log.cut" "$log"
fi
grep -E '^\[kgen-gpu\] (kernels|generated launchers|GPU output checker|output checker)' "$log"
echo "skipped shapes (too many bytes): $(grep -c '^\[kgen-gpu\] skip' "$log")"
grep -E '^\[==========\] .* ran|^\[  PASSED  \]|^\[  SKIPPED \] [0-9]|^\[  FAILED  \] [0-9]' "$log"
nfail=$(grep -oE '^\[  FAILED  \] [0-9]+ tests?' "$log" | grep -oE '[0-9]+' |
  awk '{n += $1} END {print n + 0}')
if [ "$trc" -ne 0 ]; then
  echo "exit code $trc after $((t1 - t0)) s$( [ "$trc" -ge 124 ] && echo ' (timeout or killed)')"
  echo "-- failed tests:"
  grep -E '^\[  FAILED  \] KgenGpu[^ ,]*(,|$)' "$log" | head -n 40
  echo "-- first failure messages:"
  grep -E '\(seed [0-9]+\)|Failure$|GPU checker|context is unusable|kgen_launch|interpret:' "$log" |
    grep -v 'Failure$' | cut -c1-400 | head -n 25
  echo "-- last lines:"
  tail -n 5 "$log" | cut -c1-300
else
  echo "all tests passed in $((t1 - t0)) s"
fi
# The fp8 and int8 conversions of an arch without cvt to fp8 (ExpandFP8's
# integer arithmetic), when scripts/prepare-gpu.sh emitted them: the driver
# JIT-compiles the sm_80 PTX for this GPU.
if [ -f "$dir/kernels-sm80/manifest.tsv" ]; then
  KGEN_KERNEL_DIR="$dir/kernels-sm80" timeout -k 10 120 "$tests" \
    --gtest_filter='KgenGpuConvert*' > "$out/gpu-tests-sm80.txt" 2>&1
  frc=$?
  grep -E '^\[kgen-gpu\] .* to (fp8|int8)' "$out/gpu-tests-sm80.txt"
  if [ "$frc" -ne 0 ]; then
    echo "sm_80 conversion test FAILED (exit $frc):"
    tail -n 15 "$out/gpu-tests-sm80.txt" | cut -c1-300
    trc=$frc
  fi
fi
# Runs the norm tests (KgenGpu.*) of bundle KERNELS on ROWS (and LENGTHS,
# when given) into gpu-tests-NAME.txt, prints the verdict after LABEL and
# adds a failure to the check's.
extra_tests() {
  local name=$1 label=$2 limit=$3 kernels=$4 rows=$5 lengths=${6:-}
  local xlog="$out/gpu-tests-$name.txt" xrc xfail
  (
    export KGEN_KERNEL_DIR="$kernels" KGEN_GPU_TEST_ROWS="$rows"
    [ -n "$lengths" ] && export KGEN_GPU_TEST_LENGTHS="$lengths"
    sharded "$xlog" "$limit" --gtest_filter='KgenGpu.*'
  )
  xrc=$?
  grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]' "$xlog" | sed "s/^/$label: /"
  if [ "$xrc" -ne 0 ]; then
    echo "$label: tests FAILED (exit $xrc):"
    grep -E '^\[  FAILED  \] KgenGpu|\(seed [0-9]+\)' "$xlog" | cut -c1-300 | head -n 10
    xfail=$(grep -cE '^\[  FAILED  \] KgenGpu[^ ,]*(,|$)' "$xlog")
    case "$nfail" in ''|*[!0-9]*) nfail=$xfail ;; *) nfail=$((nfail + xfail)) ;; esac
    trc=$xrc
  fi
}
# The block widths of the dynamic kernels over x threads a row by y rows
# (their aligned rows are multiples of 16 elements): re-read rows past the
# held variants (bf16 over 32768 elements, f32 over 16384) over 1024
# threads a row, 20480 over 512 (fused_add_rmsnorm bf16 holds no 8
# chunks); rows held in one chunk a thread over 2 to 64 threads (bf16 16,
# 128, 240, 496 and 512: x 2, 16, 32, 64 with 2 idle, 64), up to 128 rows
# a block; rows held a warp a row (`_vec_warp`, from 4096 rows: bf16 528,
# 768, 1008 and 1024, f32 272, 496 and 512), 2 to 4 rows a block. Few rows
# keep it short.
extra_tests long "block widths (16 to 65536 elements)" 240 "$dir/kernels" \
  1,7,300,4100 16,128,240,272,496,512,528,768,1008,1024,20480,40000,65536
# The norm ops' kernels specialized for the issue's further hidden sizes
# (64 to 65536: 512 and 1024 threads, re-read rows, clusters), when
# scripts/prepare-gpu.sh emitted them: `_vec_cluster` at 1 and 7 rows,
# `_vec` at 300.
if [ -f "$dir/kernels-hidden/manifest.tsv" ]; then
  extra_tests hidden "specialized hidden 64 to 65536" 120 \
    "$dir/kernels-hidden" 1,7,300
fi
# The worst error per kernel group, relative to the tolerance.
echo "-- worst |err|/tol over all groups:"
grep -hoE '^\[kgen-gpu\] [a-z_0-9]+ [a-z]+=[0-9]+: .*worst \|err\|/tol [0-9.e+-]+' "$log" "$out/gpu-tests-long.txt" \
  "$out"/gpu-tests-hidden.txt 2>/dev/null |
  awk 'BEGIN {best = -1} {if ($NF + 0 > best) {best = $NF + 0; line = $0}} END {print line}'

if [ "$trc" -ne 0 ]; then
  echo "RESULT: GPU tests FAILED (exit $trc, $nfail failed tests; see $log)"
else
  echo "RESULT: GPU tests passed"
fi

# Generated launchers (bench/aot_check.sh), unless KGEN_GPU_CHECK_AOT=0.
if [ "${KGEN_GPU_CHECK_AOT:-1}" != 0 ] && [ -x "$dir/kgen-aot-bench" ]; then
  OUT="$out/aot" bash "$(dirname "$0")/aot_check.sh" "$dir" || trc=1
fi

# kgen-fuzz and compute-sanitizer (bench/fuzz_check.sh), when asked:
# KGEN_GPU_CHECK_FUZZ=1 (with its KGEN_FUZZ_SECONDS, KGEN_SANITIZE).
if [ "${KGEN_GPU_CHECK_FUZZ:-0}" != 0 ] && [ -x "$dir/kgen-fuzz" ]; then
  OUT="$out/fuzz" bash "$(dirname "$0")/fuzz_check.sh" "$dir" || trc=1
fi

echo "== kgen-bench"
timeout -k 10 "${KGEN_BENCH_TIMEOUT:-100}" "$bench" "$dir/kernels" "$out" > "$out/bench.txt" 2>&1
brc=$?
# The bench's own output ends with its table: print it last.
cat "$out/bench.txt"
[ "$brc" -ne 0 ] && echo "kgen-bench: exit code $brc$( [ "$brc" -ge 124 ] && echo ' (timeout or killed)')"
[ "$trc" -ne 0 ] && exit 1
[ "$brc" -ne 0 ] && exit 2
exit 0
