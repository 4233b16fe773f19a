#!/usr/bin/env bash
# Builds and runs kgen's libFuzzer targets (test/fuzz/CMakeLists.txt).
#   fuzz.sh build BUILD_DIR CLANGXX [cmake -D options...]
#       configures (once) and builds the targets with clang into BUILD_DIR.
#   fuzz.sh run BUILD_DIR TARGET WORK_DIR [--fresh] [libFuzzer flags...]
#       fuzzes kgen-libfuzzer-TARGET (json, spec, args or dsl) from its seeds in
#       corpus/. New inputs go to WORK_DIR/corpus, never to the source tree
#       (--fresh empties it first); findings go to WORK_DIR/artifacts. Exits
#       non-zero on any finding.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cmd="${1:?usage: fuzz.sh build|run ...}"
shift

case "$cmd" in
build)
  dir="${1:?build dir}"
  cxx="${2:?clang++}"
  shift 2
  if [[ ! -f "$dir/CMakeCache.txt" ]]; then
    gen=()
    if command -v ninja >/dev/null; then gen=(-G Ninja); fi
    cmake -S "$here" -B "$dir" "${gen[@]}" -DCMAKE_CXX_COMPILER="$cxx" "$@"
  fi
  cmake --build "$dir"
  ;;
run)
  dir="${1:?build dir}"
  target="${2:?target: json, spec, args or dsl}"
  work="${3:?work dir}"
  shift 3
  # Seeds: the JSON reader also starts from the specs; both read the spec
  # keys' dictionary.
  case "$target" in
  json) seeds=("$here/corpus/json" "$here/corpus/spec")
        dict=(-dict="$here/spec.dict") ;;
  spec) seeds=("$here/corpus/spec") dict=(-dict="$here/spec.dict") ;;
  args | dsl) seeds=("$here/corpus/$target") dict=() ;;
  *) echo "fuzz.sh: unknown target '$target'" >&2; exit 2 ;;
  esac
  flags=()
  for a in "$@"; do
    if [[ "$a" == --fresh ]]; then rm -rf "$work/corpus"; else flags+=("$a"); fi
  done
  mkdir -p "$work/corpus" "$work/artifacts"
  # Stack traces for UBSan; leaks are findings too.
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
  exec "$dir/kgen-libfuzzer-$target" -artifact_prefix="$work/artifacts/" \
    -print_final_stats=1 "${dict[@]}" "${flags[@]}" "$work/corpus" \
    "${seeds[@]}"
  ;;
*)
  echo "fuzz.sh: unknown command '$cmd' (build or run)" >&2
  exit 2
  ;;
esac
