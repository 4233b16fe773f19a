#!/usr/bin/env bash
# The GPU half of `kgen tune`, from the repository root:
#   bash bench/tune_check.sh RUN KGEN_FUZZ
# RUN is a folder of `kgen tune plan`, KGEN_FUZZ the kgen-fuzz binary (with
# libkgen_runtime.so beside it, as scripts/prepare-gpu.sh leaves them).
# Times every case of RUN/cases.txt on each candidate of RUN/timed.txt with
# `kgen-fuzz time` (each case checked against the interpreter first): the
# base first and again last, so that `kgen tune pick RUN` reads the noise
# from its two runs. Exits 1 if a candidate failed a case.
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
exit $rc
