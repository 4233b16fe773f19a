#!/usr/bin/env bash
# kgen-fuzz against the emulator (no GPU): a clean bundle passes, a planted
# tail bug (KGEN_EMU_CORRUPT=tail: rows longer than 8, not a multiple of 8,
# get their last element wrong) is found, and minimize shrinks it to one row
# of 9 elements.
#   fuzz-emu.sh KGEN KGEN_FUZZ LIBEMU WORKDIR
set -euo pipefail
kgen="$1" fuzz="$2" emu="$3" work="$4"
rm -rf "$work" && mkdir -p "$work"
"$kgen" bundle -o "$work/k" --archs sm_90 --lengths 0,4096 \
  --ops rmsnorm,silu_and_mul,fused_add_rmsnorm,rmsnorm_quant_dynamic,rope_neox \
  > /dev/null
export KGEN_GPU_TEST_FAKE_CUDA="$emu"
"$fuzz" run "$work/k" --cases 60 --max-bytes 1048576 | tee "$work/clean.txt"
grep -q "rope_neox: not fuzzed (tensor 'cos_sin_cache' has a row map" "$work/clean.txt"
grep -q "240 cases, 0 failed" "$work/clean.txt"

if KGEN_EMU_CORRUPT=tail "$fuzz" run "$work/k" --ops rmsnorm --cases 60 \
     --max-bytes 1048576 > "$work/tail.txt"; then
  echo "FAIL: the planted tail bug was not found"; exit 1
fi
shrink=$(grep -m1 "shrink it" "$work/tail.txt" | sed "s/.*minimize [^ ]* rmsnorm //")
seed=${shrink%% *}
KGEN_EMU_CORRUPT=tail "$fuzz" minimize "$work/k" rmsnorm $shrink \
  | tee "$work/min.txt"
grep -qE "^smallest after [0-9]+ runs: op=rmsnorm dtype=[a-z0-9]+ length=9 rows=1 kernel=dyn misalign=0 pad=0 values=normal" "$work/min.txt"
grep -q "^TEST(FuzzRepro, rmsnorm_$seed)" "$work/min.txt"
# The printed command line reproduces the failure, and passes unplanted.
case=$(grep -m1 "^reproduce:" "$work/min.txt" | sed 's/.*--case "\(.*\)"/\1/')
if KGEN_EMU_CORRUPT=tail "$fuzz" run "$work/k" --case "$case"; then
  echo "FAIL: the minimized case does not reproduce"; exit 1
fi
"$fuzz" run "$work/k" --case "$case"

# Mistakes get a clear error.
for bad in "run" "run $work/k --cases 0" "run $work/k --ops nosuch" \
           "run $work/k --case op=rmsnorm+rows=x" "minimize $work/k rmsnorm" \
           "run $work/nodir" "frobnicate"; do
  if "$fuzz" $bad > "$work/bad.txt" 2>&1; then
    echo "FAIL: 'kgen-fuzz $bad' succeeded"; exit 1
  fi
  grep -q "kgen-fuzz: error: \|bad case\|no .*manifest\|cannot" "$work/bad.txt" || {
    echo "FAIL: 'kgen-fuzz $bad' gave no clear error:"; cat "$work/bad.txt"; exit 1; }
done
echo "fuzz-emu: OK"
