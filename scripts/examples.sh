#!/usr/bin/env bash
# The out-of-tree user's path: installs the build into a prefix, builds
# examples/ against it (CMake package, kgen_add_library, C, C++ and Rust) and
# runs each program. Without a GPU each must stop at the runtime's clear "no
# GPU" error (exit 77); on a GPU each must pass its check (exit 0). Also
# checks that a misspelled arch stops the build with kgen's message.
#   scripts/examples.sh [BUILD_DIR] (default build/)
# Env: KGEN_EXAMPLES_KEEP=DIR keeps the prefix and programs in DIR.
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
cmake -S "$root/examples" -B "$work/examples" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log"
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
if [ -x "$cargo" ]; then
  (cd "$root/examples/rust" && KGEN_PREFIX="$prefix" \
     CARGO_TARGET_DIR="$work/rust" "$cargo" build --release --offline -q)
  run rust "$work/rust/release/kgen-rust-example"
else
  echo "examples: rust: skipped (no cargo)"
fi

# A misspelled arch in kgen_add_library stops the build with kgen's message.
cmake -S "$root/examples" -B "$work/bad" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DKGEN_EXAMPLE_ARCHS=sm_9 > /dev/null
if cmake --build "$work/bad" --target example_kernels > "$work/bad.log" 2>&1; then
  echo "examples: a misspelled arch built" >&2
  failed=1
elif grep -q "kgen: error: unknown arch 'sm_9'; supported:" "$work/bad.log"; then
  echo "examples: misspelled arch: refused with kgen's message"
else
  echo "examples: a misspelled arch failed without kgen's message:" >&2
  cat "$work/bad.log" >&2
  failed=1
fi
exit "$failed"
