#!/usr/bin/env bash
# The generated launchers on a GPU (bench/gpu_check.sh runs it; alone:
# bash bench/aot_check.sh build/gpu). From the folder scripts/prepare-gpu.sh
# fills: kgen-gpu-tests built with KGEN_GPU_TEST_AOT launches every kernel
# of the `kgen aot` library of all bundled ops through its launcher (rows 1
# and 7, the library's lengths); kgen-aot-bench times the first launch of a
# cubin and of PTX (JIT cache off, then on) and the host cost per launch
# against a bare cuLaunchKernel; examples/ (a user's op against the
# interpreter, C, C++ and Rust programs) must pass. Logs in $OUT.
set -uo pipefail
dir="${1:-build-gpu/gpu}"
out="${OUT:-$(mktemp -d -t kgen-aot-check.XXXXXX)}"
mkdir -p "$out"
rc=0
echo "== generated launchers"
KGEN_KERNEL_DIR="$dir/kernels" KGEN_GPU_TEST_ROWS=1,7 KGEN_GPU_TEST_AOT_ALL=1 \
  KGEN_GPU_TEST_LENGTHS=4096 timeout -k 10 300 "$dir/kgen-gpu-tests" \
  > "$out/aot-tests.txt" 2>&1 || rc=1
grep -E '^\[kgen-gpu\] generated launchers|^\[  PASSED  \]|^\[  FAILED  \] [0-9]' \
  "$out/aot-tests.txt"
[ "$rc" -ne 0 ] && grep -E '^\[  FAILED  \] ' "$out/aot-tests.txt" | head -n 10
for ex in "$dir"/examples/*; do
  name="$(basename "$ex")"
  if LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$ex" \
       > "$out/example-$name.txt" 2>&1; then
    echo "example $name: passed"
    grep -E 'ok|ulp' "$out/example-$name.txt" | sed 's/^/  /'
  else
    echo "example $name: FAILED"
    tail -n 5 "$out/example-$name.txt"
    rc=1
  fi
done
CUDA_CACHE_DISABLE=1 "$dir/kgen-aot-bench" > "$out/aot-bench-cold.txt" 2>&1 || rc=1
"$dir/kgen-aot-bench" > "$out/aot-bench.txt" 2>&1 || rc=1
grep -h "first launch" "$out/aot-bench-cold.txt" | sed 's/^/cold JIT cache: /'
cat "$out/aot-bench.txt"
exit "$rc"
