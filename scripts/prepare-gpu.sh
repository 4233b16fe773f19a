#!/usr/bin/env bash
# Prepares the GPU check on this machine (LLVM/MLIR needed, no GPU): builds
# kgen, kgen-gpu-tests and kgen-bench into build-gpu, emits the kernel bundle
# and puts everything a GPU machine needs into build-gpu/gpu (< 60 MiB, only
# glibc needed there). Then, on the GPU machine, from the repository root:
#   bash bench/gpu_check.sh build-gpu/gpu
#   bash bench/torch_check.sh build-gpu/gpu   # kgen vs PyTorch (needs torch)
# (with the device tool: carry ["build-gpu/gpu"]). The folder also holds
# libkgen_runtime.so and python/ (bench/python: kgen_ctypes.py, the ctypes
# binding, and torch_bench.py).
#
# Env: JOBS (default 2), KGEN_GPU_BUILD (default <repo>/build-gpu),
#      KGEN_BIN (a kgen binary to emit the bundle with instead of building
#      one, e.g. from a clean checkout of a commit),
#      KGEN_GPU_ARCHS (default sm_90),
#      KGEN_GPU_LENGTHS (default 0,1,7,32,100,1152,2048,3072,3584,4095,4096,
#      8192,11008,14336,16384; ops built for fixed lengths, as rope for its
#      head_dim, get theirs).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KGEN_GPU_BUILD:-$root/build-gpu}"
jobs="${JOBS:-2}"
archs="${KGEN_GPU_ARCHS:-sm_90}"
lengths="${KGEN_GPU_LENGTHS:-0,1,7,32,100,1152,2048,3072,3584,4095,4096,8192,11008,14336,16384}"

# (Without KGEN_BIN, kgen-gpu-tests launches what the `kgen aot` library of
# every bundled op has through its generated launchers.)
aot=ON
[ -n "${KGEN_BIN:-}" ] && aot=OFF
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKGEN_GPU_TEST_AOT="$aot" > /dev/null
if [ -n "${KGEN_BIN:-}" ]; then
  kgen="$KGEN_BIN"
  ninja -C "$build" -j"$jobs" kgen-gpu-tests kgen-bench kgen-fuzz \
    kgen_runtime_shared
else
  kgen="$build/tools/kgen/kgen"
  ninja -C "$build" -j"$jobs" kgen kgen-gpu-tests kgen-bench kgen-aot-bench \
    kgen-fuzz kgen_runtime_shared
fi

out="$build/gpu"
rm -rf "$out"
mkdir -p "$out"
"$kgen" bundle -o "$out/kernels" --archs "$archs" \
  --lengths "$lengths" > "$out/bundle.log"
tail -n 1 "$out/bundle.log"
# The norm issue's further hidden sizes, specialized (the main bundle stops
# at 16384; its dynamic kernels meet them in the block-width tests):
# checked by bench/gpu_check.sh, few rows.
"$kgen" bundle -o "$out/kernels-hidden" --archs "$archs" \
  --ops rmsnorm,gemma_rmsnorm,fused_add_rmsnorm,layernorm,layernorm_nobias,softmax,rmsnorm_quant_static,rmsnorm_quant_dynamic \
  --lengths 64,128,1024,5120,7168,12288,32768,65536 > /dev/null
# Every op at lengths 0 and 4096 (rope: its head dims): compute-sanitizer's
# set (bench/fuzz_check.sh), small enough to instrument.
"$kgen" bundle -o "$out/kernels-small" --archs "$archs" --lengths 0,4096 \
  > /dev/null
# The fp8 conversion without cvt (sm_75 to sm_86), and int8's: checked on
# the GPU too (test/gpu/ConvertTest.cpp, run by bench/gpu_check.sh).
"$kgen" bundle -o "$out/kernels-sm80" --archs sm_80 \
  --ops rmsnorm_quant_static,rmsnorm_quant_int8_static \
  --dtypes bf16 --lengths 0 > /dev/null
# Generated launchers (kgen aot): their bench, and examples/ built against
# the installed package (the programs, with the runtime beside them).
if [ -z "${KGEN_BIN:-}" ]; then
  cp "$build/bench/kgen-aot-bench" "$out/"
  KGEN_EXAMPLES_KEEP="$build/examples-work" bash "$root/scripts/examples.sh" \
    "$build" > "$out/examples-build.log"
  mkdir -p "$out/examples"
  cp "$build/examples-work/examples/rmsnorm_c" \
    "$build/examples-work/examples/softcap_check" "$out/examples/"
  cp "$build/examples-work/rust/release/kgen-rust-example" "$out/examples/" \
    2>/dev/null || true
fi
cp "$build/test/gpu/kgen-gpu-tests" "$build/bench/kgen-bench" \
  "$build/tools/kgen-fuzz/kgen-fuzz" "$root/bench/fuzz_check.sh" \
  "$root/bench/gpu_check.sh" "$root/bench/aot_check.sh" \
  "$root/bench/build_on_device.sh" \
  "$root/bench/torch_check.sh" "$build/runtime/libkgen_runtime.so" "$out/"
# The PyTorch comparison (bench/torch_check.sh): the ctypes binding and bench.
mkdir -p "$out/python"
cp "$root/bench/python/kgen_ctypes.py" "$root/bench/python/torch_bench.py" \
  "$out/python/"

# For bench/build_on_device.sh, should the programs not run on the GPU
# machine (glibc older than 2.35): the sources they were built from, fmt's
# headers and GoogleTest's sources.
mkdir -p "$out/src/test/gpu" "$out/src/bench" "$out/deps/fmt"
for d in dsl ops runtime; do
  mkdir -p "$out/src/$d"
  cp "$root/$d"/*.h "$root/$d"/*.cpp "$out/src/$d/"
  cp "$root/$d"/*.hpp "$out/src/$d/" 2>/dev/null || true
done
cp "$root"/test/gpu/*.h "$root"/test/gpu/*.cpp "$root"/test/gpu/*.cu "$out/src/test/gpu/"
cp "$root/bench/Bench.cpp" "$out/src/bench/"
cp -r /usr/include/fmt "$out/deps/fmt/"
mkdir -p "$out/deps/googletest"
cp -r /usr/src/googletest/googletest/src /usr/src/googletest/googletest/include \
  "$out/deps/googletest/"
strip "$out/kgen-gpu-tests" "$out/kgen-bench"
if [ -f "$out/kgen-aot-bench" ]; then
  strip "$out/kgen-aot-bench" "$out"/examples/*
fi
strip --strip-unneeded "$out/libkgen_runtime.so"
# Programs linked with it (examples/) ask for its SONAME.
soname="$(objdump -p "$out/libkgen_runtime.so" | awk '/SONAME/ {print $2}')"
cp "$out/libkgen_runtime.so" "$out/$soname"

# The GPU machine has glibc and little else: no shared libraries beyond it.
for exe in kgen-gpu-tests kgen-bench libkgen_runtime.so \
  $(cd "$out" && ls kgen-aot-bench 2>/dev/null); do
  extra="$(ldd "$out/$exe" | grep '=>' |
    grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^ ]*)\.so' || true)"
  if [ -n "$extra" ]; then
    echo "error: $exe needs shared libraries the GPU machine lacks:" >&2
    echo "$extra" >&2
    exit 1
  fi
done

# What needs no GPU: every spec loads and matches its PTX; without a GPU the
# kernel tests skip (exit code 77).
KGEN_KERNEL_DIR="$out/kernels" "$out/kgen-gpu-tests" \
  --gtest_filter='KgenGpuManifest.*' --gtest_brief=1
# The same through the shared library and ctypes: every kernel is created.
if command -v python3 > /dev/null; then
  python3 "$out/python/kgen_ctypes.py" "$out/kernels" "$out/libkgen_runtime.so"
fi

echo "size: $(du -sh "$out" | cut -f1)"
echo "carry: ${out#"$root"/}"
