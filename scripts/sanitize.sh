#!/usr/bin/env bash
# Sanitizer runs of kgen's host code. Exits non-zero on any finding.
#   scripts/sanitize.sh            asan, then tsan
#   scripts/sanitize.sh asan       the whole suite built with ASan + UBSan in
#                                  build-asan, then its ctest (GPU tests skip)
#   scripts/sanitize.sh examples   build-asan, then examples/ built with the
#                                  same flags against its install tree
#   scripts/sanitize.sh tsan       the runtime tests built with TSan in
#                                  build-tsan; runs its multi-thread launch
#                                  tests (the fake driver's) many times
#   scripts/sanitize.sh fuzz N     each libFuzzer target of test/fuzz for N
#                                  runs, built with clang in build-fuzz
# Long and CPU-heavy: on a shared machine run it under `nice -n 10`.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs="$(nproc)"
cuda="${KGEN_CUDA_PATH:-/usr/local/cuda}"
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi

# UB aborts (-fno-sanitize-recover); vptr needs RTTI, which LLVM/MLIR code
# is built without.
asan_flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
asan_flags+=" -fno-sanitize=vptr -fno-omit-frame-pointer"

asan_build() {
  local flags="$asan_flags"
  cmake -S . -B build-asan "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKGEN_CUDA_PATH="$cuda" -DKGEN_PYTHON=OFF \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
    -DCMAKE_MODULE_LINKER_FLAGS="$flags" >/dev/null
  cmake --build build-asan -j"$jobs"
  # allow_user_poisoning=0: LLVM's allocator, inlined into this ASan build,
  # poisons its slabs, and the prebuilt libMLIR never unpoisons what it then
  # hands out (false use-after-poison reports).
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
}

# The examples as a user builds them, against the sanitized install tree
# with the same flags: the generator, the runtime and the programs checked.
asan_examples() {
  KGEN_EXAMPLES_FLAGS="$asan_flags" bash scripts/examples.sh build-asan
}

asan() {
  asan_build
  # Left out of ctest: reference-python loads the ASan-built
  # libkgen_reference.so into a Python that is not (ASan must be the first
  # library loaded), examples (run below with the sanitizer's flags), and
  # the fuzz-* tests, which fuzz with sanitizers of their own (fuzz N).
  ctest --test-dir build-asan --output-on-failure -j"$jobs" \
    -E '^(reference-python|examples|fuzz(-.*)?)$'
  asan_examples
}

tsan() {
  local flags="-fsanitize=thread -fno-omit-frame-pointer"
  cmake -S . -B build-tsan "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKGEN_ENABLE_MLIR=OFF -DKGEN_CUDA_PATH="$cuda" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
    >/dev/null
  cmake --build build-tsan -j"$jobs" --target kgen-runtime-tests \
    kgen-runtime-fake-driver-tests kgen_fake_cuda
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
  # The tests that launch or create kernels from several threads, repeated
  # (a race shows on some runs only), then every runtime test once.
  local threaded='*Concurrent*:*ALoadingModule*:*AtOnce*:*CreateOnce*'
  threaded+=':*NeedsACurrentContext*'
  build-tsan/test/runtime/kgen-runtime-fake-driver-tests \
    --gtest_filter="$threaded" --gtest_repeat=20 --gtest_brief=1
  build-tsan/test/runtime/kgen-runtime-fake-driver-tests --gtest_brief=1
  build-tsan/test/runtime/kgen-runtime-tests --gtest_brief=1
}

fuzz() {
  local runs="${1:?usage: sanitize.sh fuzz N (executions per target)}"
  local clangxx
  clangxx="$(command -v clang++ || command -v clang++-14)" || {
    echo "sanitize.sh: fuzz needs clang++ with libFuzzer" >&2
    return 1
  }
  bash test/fuzz/fuzz.sh build build-fuzz/clang "$clangxx" \
    -DKGEN_CUDA_PATH="$cuda"
  local failed=()
  for target in json spec args dsl; do
    echo "== kgen-libfuzzer-$target: $runs runs"
    bash test/fuzz/fuzz.sh run build-fuzz/clang "$target" \
      "build-fuzz/work/$target" -runs="$runs" -timeout=60 ||
      failed+=("$target")
  done
  if ((${#failed[@]})); then
    echo "sanitize.sh: findings in ${failed[*]}" \
      "(build-fuzz/work/TARGET/artifacts)" >&2
    return 1
  fi
}

case "${1:-}" in
"") asan && tsan ;;
asan) asan ;;
examples) asan_build && asan_examples ;;
tsan) tsan ;;
fuzz) fuzz "${2:-}" ;;
*)
  echo "usage: sanitize.sh [asan|examples|tsan|fuzz N]" >&2
  exit 2
  ;;
esac
