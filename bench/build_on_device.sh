#!/usr/bin/env bash
# Fallback for bench/gpu_check.sh: rebuilds kgen-gpu-tests and kgen-bench on
# the GPU machine with its own g++ (C++20), from the source snapshot that
# scripts/prepare-gpu.sh put in DIR/src (with fmt headers and GoogleTest's
# sources in DIR/deps), for when the prebuilt programs do not run there (an
# older glibc). Usage: bash bench/build_on_device.sh DIR OUTDIR
set -euo pipefail
dir="$(cd "$1" && pwd)"
mkdir -p "$2/obj"
outdir="$(cd "$2" && pwd)"
src="$dir/src"
deps="$dir/deps"
cuda_inc="${CUDA_HOME:-/usr/local/cuda}/include"
export KGEN_FLAGS="-std=c++20 -O2 -DNDEBUG -DFMT_HEADER_ONLY -DKGEN_VERSION=\"device-build\" -pthread -I$src -I$src/test/gpu -I$deps/fmt -I$deps/googletest/include -I$deps/googletest -I$cuda_inc"
export KGEN_OBJ="$outdir/obj"
ls "$src"/dsl/*.cpp "$src"/ops/*.cpp "$src"/runtime/*.cpp \
  "$src"/test/gpu/GpuCommon.cpp "$src"/test/gpu/*Test.cpp \
  "$src"/bench/Bench.cpp "$deps"/googletest/src/gtest-all.cc |
  xargs -P "$(nproc)" -n 1 bash -c \
    'g++ $KGEN_FLAGS -c "$1" -o "$KGEN_OBJ/$(basename "$(dirname "$1")")_$(basename "$1").o"' _
obj="$outdir/obj"
common=$(ls "$obj"/*.o | grep -vE '(Test|Bench|gtest-all)\.(cpp|cc)\.o$')
g++ -pthread -o "$outdir/kgen-gpu-tests" "$obj"/gpu_*Test.cpp.o $common \
  "$obj"/src_gtest-all.cc.o -ldl
g++ -pthread -o "$outdir/kgen-bench" "$obj"/bench_Bench.cpp.o $common -ldl
echo "built $outdir/kgen-gpu-tests and $outdir/kgen-bench with $(g++ --version | head -1)"
