#!/usr/bin/env bash
# Profiles kgen and torch.compile on given op x shapes with Nsight Compute,
# on a GPU machine with PyTorch, from the repository root:
#   bash bench/ncu.sh build/gpu "softmax 16384 4096" "silu_and_mul 1 4096"
# Each case is "op T hidden" (bench/python/profile_case.py). Writes per case
# ncu_<op>_<T>_<h>.txt (the sections below, both implementations) under
# $OUT (a temporary folder when unset) and prints a short summary last:
# duration, DRAM throughput, registers, achieved occupancy per kernel.
set -uo pipefail
dir="${1:?usage: bench/ncu.sh GPU_DIR CASE...}"
shift
out="${OUT:-$(mktemp -d -t kgen-ncu.XXXXXX)}"
mkdir -p "$out"
here="$(cd "$(dirname "$0")" && pwd)"
export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-$(mktemp -d -t kgen-inductor.XXXXXX)}"
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
summary="$out/ncu_summary.txt"
: > "$summary"
for c in "$@"; do
  read -r op T h <<< "$c"
  f="$out/ncu_${op}_${T}_${h}"
  "$ncu" --profile-from-start off --target-processes all --clock-control none \
    --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section MemoryWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats --section SourceCounters \
    --csv --page raw \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,smsp__inst_executed.sum \
    python3 "$here/python/profile_case.py" --kernels "$dir/kernels" \
      --lib "$dir/libkgen_runtime.so" --op "$op" --tokens "$T" --hidden "$h" \
    > "$f.csv" 2> "$f.err"
  python3 - "$f.csv" "$c" >> "$summary" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    print(sys.argv[2], ": no ncu rows"); sys.exit()
head = rows[0]; data = rows[2:]
want = ["Kernel Name", "gpu__time_duration.sum",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "launch__registers_per_thread",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "launch__grid_size", "launch__block_size", "smsp__inst_executed.sum"]
idx = [head.index(w) if w in head else None for w in want]
print("==", sys.argv[2], "(duration ns, dram %peak, regs, occupancy %, grid, block, warp insts)")
for r in data:
    print("  " + "  ".join((r[i][:40] if i is not None else "-") for i in idx))
PY
done
cat "$summary"
