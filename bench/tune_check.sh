#!/usr/bin/env bash
# The GPU half of `kgen tune`, from the repository root:
#   bash bench/tune_check.sh RUN KGEN_FUZZ
# RUN is a folder of `kgen tune plan`, KGEN_FUZZ the kgen-fuzz binary (with
# libkgen_runtime.so beside it, as scripts/prepare-gpu.sh leaves them).
# Times every case of RUN/cases.txt on each candidate of RUN/timed.txt with
# `kgen-fuzz time` (each case checked against the interpreter first): the
# base first and again last, so that `kgen tune pick RUN` reads the noise
# from its two runs. Where ptxas and cuobjdump are found (CUDA_PATH/bin,
# then PATH), it also writes each timed candidate's sass.tsv: per kernel
# entry, its 128-bit global loads, L2 prefetches and cluster barriers in the
# machine code, which `kgen tune pick` checks against the schedule's claims.
# Exits 1 if a candidate failed a case.
set -uo pipefail
run="${1:?usage: tune_check.sh RUN KGEN_FUZZ}"
fuzz="${2:?usage: tune_check.sh RUN KGEN_FUZZ}"
export LD_LIBRARY_PATH="$(dirname "$fuzz")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rc=0
time_one() { # candidate, output file
  local dir="$run/candidates/$1"
  local start=$SECONDS
  "$fuzz" time "$dir/kernels" --cases "$run/cases.txt" > "$dir/$2" \
    2> "$dir/$2.err" || rc=1
  echo "$1: $(grep -c $'\tpass\t' "$dir/$2") cases passed," \
    "$(grep -c $'\tFAIL' "$dir/$2") failed, $((SECONDS - start)) s"
}
time_one base times.tsv
while read -r c; do
  [ "$c" = base ] || [ -z "$c" ] || time_one "$c" times.tsv
done < "$run/timed.txt"
time_one base times-again.tsv

# SASS: kernel, entry, then counts of LDG.E.128 (128-bit loads), CCTL.E.PF2
# (prefetch.global.L2) and UCGABAR_* (cluster barriers), per entry.
cuda_bin="${CUDA_PATH:-/usr/local/cuda}/bin"
ptxas=$(command -v "$cuda_bin/ptxas" || command -v ptxas)
cuobjdump=$(command -v "$cuda_bin/cuobjdump" || command -v cuobjdump)
sass_one() { # candidate
  local dir="$run/candidates/$1" cubin ptx arch
  cubin=$(mktemp)
  printf '# kernel\tentry\tldg128\tprefetch\tcluster_barrier\n' > "$dir/sass.tsv"
  for ptx in "$dir"/kernels/*.ptx; do
    arch=$(sed -n 's/^\.target \(sm_[0-9a-z]*\).*/\1/p' "$ptx" | head -n 1)
    "$ptxas" -arch="$arch" "$ptx" -o "$cubin" || { rc=1; continue; }
    "$cuobjdump" -sass "$cubin" | awk -v k="$(basename "$ptx" .ptx)" '
      function flush() { if (f != "") printf "%s\t%s\t%d\t%d\t%d\n", k, f, l, p, c }
      /Function : / { flush(); f = $NF; l = p = c = 0 }
      /LDG\.E\.128/ { l++ }
      /CCTL\.E\.PF2/ { p++ }
      /UCGABAR_/ { c++ }
      END { flush() }' >> "$dir/sass.tsv"
  done
  rm -f "$cubin"
  echo "$1: SASS of $(($(wc -l < "$dir/sass.tsv") - 1)) entries"
}
if [ -n "$ptxas" ] && [ -n "$cuobjdump" ]; then
  sass_one base
  while read -r c; do
    [ "$c" = base ] || [ -z "$c" ] || sass_one "$c"
  done < "$run/timed.txt"
else
  echo "no ptxas or cuobjdump here: SASS not checked"
fi
exit $rc
