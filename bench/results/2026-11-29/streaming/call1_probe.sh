#!/usr/bin/env bash
# Probe: SASS mixes of the compute-heavy activation and int8 kernels, and
# Nsight Compute pipe utilisation for them and compile's.
set -uo pipefail
d=build/gpu-probe; out=${OUT:-/tmp/out}; mkdir -p "$out/sass" "$out/ncu"
nvidia-smi -L
for p in $d/ptx/*.ptx; do
  n=$(basename $p .ptx)
  ptxas -arch=sm_90 $p -o /tmp/$n.cubin && cuobjdump -sass /tmp/$n.cubin > $out/sass/$n.sass
  echo "== $n"; awk '/Function :/{f=$3} /^ +\/\*[0-9a-f]{4}\*\//{split($0,a,"*/"); s=a[2]; gsub(/^ +/,"",s); sub(/^@!?U?P[0-9T]+ +/,"",s); split(s,b," "); op=b[1]; sub(/\..*/,"",op); c[f" "op]++; t[f]++} END{for(k in t) print "  total", k, t[k]; for(k in c) print "  ", k, c[k]}' $out/sass/$n.sass | sort -k2,2 -k4,4nr | head -60
done
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind
for c in "gelu_new 16384 14336" "gelu_tanh 16384 14336" "silu_and_mul_quant_int8_group 16384 7168" "silu_and_mul_quant_group 16384 7168"; do
  read -r op T h <<< "$c"
  timeout 150 ncu --profile-from-start off --target-processes all --clock-control none \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats \
    --section WarpStateStats --section Occupancy --section LaunchStats --csv --page raw \
    python3 bench/python/profile_case.py --kernels $d/kernels --lib $d/libkgen_runtime.so \
      --op $op --tokens $T --hidden $h --calls 1 > $out/ncu/$op.csv 2> $out/ncu/$op.err
  echo "ncu $op rc $?"
done
python3 - $out/ncu <<'PY'
import csv, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/*.csv")):
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    if not rows: print(f, "no rows"); continue
    head = rows[0]
    for r in rows[2:]:
        d = dict(zip(head, r))
        keys = ["gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                "smsp__issue_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
                "launch__registers_per_thread", "sm__warps_active.avg.pct_of_peak_sustained_active"]
        print("==", f.split("/")[-1], d.get("Kernel Name", "?")[:60])
        print("  ", "  ".join(k.split("__")[1][:22] + "=" + d.get(k, "-") for k in keys))
        pipes = sorted(((float(v), k) for k, v in d.items() if "pipe_" in k and "pct_of_peak_sustained_active" in k and v.replace('.', '', 1).isdigit()), reverse=True)[:8]
        print("   pipes:", ", ".join(f"{k.split('__')[1]}={v:.1f}" for v, k in pipes))
PY
