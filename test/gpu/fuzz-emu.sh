#!/usr/bin/env bash
# kgen-fuzz against the emulator (no GPU): a clean bundle passes, a planted
# tail bug (KGEN_EMU_CORRUPT=tail: rows longer than 8, not a multiple of 8,
# get their last element wrong) is found, and minimize shrinks it to one row
# of 9 elements; its numerics fail `kgen diff` against a clean run's
# baseline. Ops with row maps (rope_neox: heads and a gather, adaln:
# grouped rows, rope_neox_rotary: a bounded dim drawn per length's bound)
# are fuzzed too and their planted bugs found.
#   fuzz-emu.sh KGEN KGEN_FUZZ LIBEMU WORKDIR
set -euo pipefail
kgen="$1" fuzz="$2" emu="$3" work="$4"
rm -rf "$work" && mkdir -p "$work"
"$kgen" bundle -o "$work/k" --archs sm_90 --lengths 0,4096 \
  --ops rmsnorm,silu_and_mul,fused_add_rmsnorm,rmsnorm_quant_dynamic,rope_neox,adaln,rope_neox_rotary \
  > /dev/null
export KGEN_GPU_TEST_FAKE_CUDA="$emu"
"$fuzz" run "$work/k" --cases 60 --max-bytes 1048576 \
  --report "$work/numerics.tsv" | tee "$work/clean.txt"
grep -qE "^\[kgen-fuzz\] rope_neox +60 cases, 0 failed" "$work/clean.txt"
grep -qE "^\[kgen-fuzz\] adaln +60 cases, 0 failed" "$work/clean.txt"
grep -qE "^\[kgen-fuzz\] rope_neox_rotary +60 cases, 0 failed" "$work/clean.txt"
grep -q "420 cases, 0 failed" "$work/clean.txt"

# Row maps: a wrong value in rope's last head and adaln's tail bug are found,
# and a case with heads, positions and a fused qkv row round-trips.
for planted in "value rope_neox" "tail adaln"; do
  if KGEN_EMU_CORRUPT=${planted% *} "$fuzz" run "$work/k" --ops ${planted#* } \
       --cases 30 --max-bytes 1048576 > "$work/maps.txt"; then
    echo "FAIL: the planted bug ($planted) was not found"; exit 1
  fi
done
rope="op=rope_neox dtype=bf16 length=128 rows=5 kernel=specialized misalign=1 \
pad=3 values=normal vseed=9 dim.k_head_stride=136 dim.k_heads=2 \
dim.max_pos=17 dim.q_head_stride=128 dim.q_heads=6 fused=1 positions=mixed"
"$fuzz" run "$work/k" --case "$rope" | grep -qxF "PASS $rope"

if KGEN_EMU_CORRUPT=tail "$fuzz" run "$work/k" --ops rmsnorm --cases 60 \
     --max-bytes 1048576 > "$work/tail.txt"; then
  echo "FAIL: the planted tail bug was not found"; exit 1
fi
# The numerics of a run go into a baseline; the planted bug's are a
# regression against them.
"$kgen" baseline save "$work/base.json" --ops rmsnorm --archs sm_90 \
  --lengths 0,4096 --numerics "$work/numerics.tsv" | grep -q "numerics of"
KGEN_EMU_CORRUPT=tail "$fuzz" run "$work/k" --ops rmsnorm --cases 60 \
  --max-bytes 1048576 --report "$work/tail.tsv" > /dev/null || true
"$kgen" diff "$work/base.json" --numerics "$work/numerics.tsv" \
  --fail-on-regression | grep -q "0 regressions"
if "$kgen" diff "$work/base.json" --numerics "$work/tail.tsv" \
     --fail-on-regression > "$work/diff.txt"; then
  echo "FAIL: kgen diff passed the planted bug's numerics"; exit 1
fi
grep -q "failed cases .* REGRESSION" "$work/diff.txt"
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
           "run $work/k --case dim.tokens_per_batch=0" \
           "run $work/nodir" "frobnicate"; do
  if "$fuzz" $bad > "$work/bad.txt" 2>&1; then
    echo "FAIL: 'kgen-fuzz $bad' succeeded"; exit 1
  fi
  grep -q "kgen-fuzz: error: \|bad case\|no .*manifest\|cannot" "$work/bad.txt" || {
    echo "FAIL: 'kgen-fuzz $bad' gave no clear error:"; cat "$work/bad.txt"; exit 1; }
done
echo "fuzz-emu: OK"
