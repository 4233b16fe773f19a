#!/usr/bin/env bash
# The out-of-tree user's path: installs the build into a prefix, builds
# examples/ against it (CMake package, kgen_add_library, C, C++ and Rust) and
# runs each program. Without a GPU each must stop at the runtime's clear "no
# GPU" error (exit 77); on a GPU each must pass its check (exit 0). Also
# checks mistakes a user makes: a misspelled arch or op, a pointer of the
# wrong dtype, and the static runtime from C through pkg-config.
#   scripts/examples.sh [BUILD_DIR] (default build/)
# Env: KGEN_EXAMPLES_KEEP=DIR keeps the prefix and programs in DIR.
#      KGEN_EXAMPLES_FLAGS="-fsanitize=..." builds the C and C++ examples
#      with those compile and link flags (a sanitizer build's install tree,
#      scripts/sanitize.sh asan); Rust is skipped then.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
work="${KGEN_EXAMPLES_KEEP:-}"
if [ -z "$work" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
flags="${KGEN_EXAMPLES_FLAGS:-}"
cmake -S "$root/examples" -B "$work/examples" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="$flags" > "$work/configure.log"
cmake --build "$work/examples"

failed=0
run() { # NAME COMMAND...: 0 passes; 77 passes if the runtime said why
  local name="$1" rc=0
  shift
  "$@" > "$work/$name.out" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    echo "examples: $name: passed"
  elif [ "$rc" = 77 ] && grep -q '^no GPU: kgen' "$work/$name.out"; then
    echo "examples: $name: ran to the no-GPU error: $(grep '^no GPU' "$work/$name.out")"
  else
    echo "examples: $name: FAILED (exit $rc):" >&2
    cat "$work/$name.out" >&2
    failed=1
  fi
}
run rmsnorm_c "$work/examples/rmsnorm_c"
run softcap_check "$work/examples/softcap_check"

cargo="$(command -v cargo || echo "$HOME/.cargo/bin/cargo")"
if [ -n "$flags" ]; then
  echo "examples: rust: skipped (KGEN_EXAMPLES_FLAGS: cargo links no sanitizer runtime)"
elif [ -x "$cargo" ]; then
  (cd "$root/examples/rust" && KGEN_PREFIX="$prefix" \
     CARGO_TARGET_DIR="$work/rust" "$cargo" build --release --offline -q)
  run rust "$work/rust/release/kgen-rust-example"
else
  echo "examples: rust: skipped (no cargo)"
fi

# The runtime alone through pkg-config: the static library links from C
# with no C++ flags.
cat > "$work/version.c" <<'C'
#include "runtime/kgen_runtime.h"
#include <stdio.h>
int main(void) { printf("kgen runtime %s\n", kgen_runtime_version()); return 0; }
C
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2086 # flags are words
if cc $flags "$work/version.c" -o "$work/version" \
     $(pkg-config --cflags kgen-runtime) \
     "$prefix/lib/libkgen_runtime.a" $(pkg-config --libs-only-other \
     --static kgen-runtime) && "$work/version" | grep -q "kgen runtime"; then
  echo "examples: C with pkg-config and the static runtime: linked and ran"
else
  echo "examples: the static runtime did not link from C" >&2
  failed=1
fi

# A generated launcher takes pointers of its dtype only: C++ refuses a
# float* for a bf16 tensor at compile time.
cat > "$work/wrong_dtype.cpp" <<'CXX'
#include "example_kernels.hpp"
int main() {
  float *x = nullptr;
  return example_kernels_rmsnorm_bf16(x, 0, x, x, 0, 1e-6f, 4096, 1, nullptr);
}
CXX
if ! LC_ALL=C c++ -std=c++17 -fsyntax-only -I"$work/examples/example_kernels" \
     $(pkg-config --cflags kgen-runtime) "$work/wrong_dtype.cpp" \
     > "$work/wrong_dtype.log" 2>&1 &&
   grep "error" "$work/wrong_dtype.log" | grep -q "kgen_bf16"; then
  echo "examples: a float* for a bf16 tensor: refused at compile time"
else
  echo "examples: a float* was not refused as a bf16 tensor:" >&2
  cat "$work/wrong_dtype.log" >&2
  failed=1
fi

# A misspelled arch or bundled op in kgen_add_library is refused when the
# project is configured, with the names kgen knows.
refused() { # NAME LOG PATTERN SOURCE [CMAKE ARGS...]
  local name="$1" log="$2" pattern="$3" src="$4"
  shift 4
  if cmake -S "$src" -B "$work/$name" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
       "$@" > "$log" 2>&1; then
    echo "examples: $name: configured" >&2
    failed=1
  elif grep -q "$pattern" "$log"; then
    echo "examples: $name: refused at configure time"
  else
    echo "examples: $name: failed without the expected message:" >&2
    cat "$log" >&2
    failed=1
  fi
}
refused bad-arch "$work/bad-arch.log" \
  "unknown ARCHS 'sm_9'" "$root/examples" \
  -DKGEN_EXAMPLE_ARCHS=sm_9
mkdir -p "$work/bad-op-src"
cp -r "$root/examples/ops" "$root/examples/c" "$root/examples/cpp" \
  "$work/bad-op-src/"
sed 's/BUNDLED rmsnorm silu_and_mul/BUNDLED rmsnrom/' \
  "$root/examples/CMakeLists.txt" > "$work/bad-op-src/CMakeLists.txt"
refused bad-op "$work/bad-op.log" \
  "unknown BUNDLED 'rmsnrom'" \
  "$work/bad-op-src"
exit "$failed"
