#!/usr/bin/env bash
# kgen against PyTorch eager and torch.compile, in one process, on a GPU
# machine with PyTorch (and Triton), from the repository root:
#   bash bench/torch_check.sh build-gpu/gpu
# (the folder scripts/prepare-gpu.sh fills: kernels/, libkgen_runtime.so,
# python/; with the device tool: carry ["build-gpu/gpu"]). Runs
# bench/python/torch_bench.py (the copy next to this script, else the
# folder's python/) and writes to $OUT (a temporary folder when OUT is unset):
# torch_bench.csv, torch_bench.md, torch_bench_table.txt,
# torch_bench_log.txt, torch_bench_plots.tar.gz (PNGs, if matplotlib is
# there), torch_bench_stderr.txt. Prints the compact table last.
# Two suites: the norms (default) and, with KGEN_TORCH_SUITE=views (or
# KGEN_TORCH_ARGS="--suite views"), the ops on views: rope_neox/rope_gptj
# in place on q/k views of a fused qkv (32/8 heads, head_dim 128, cache
# [65536, 128] f32), silu_and_mul and gelu_tanh_and_mul at d 4096, 11008,
# 14336, adaln (B 1/8, N 1024/4096, C 1152/3072); T 1, 512, 4096, 16384.
# KGEN_TORCH_SUITE=library: the other bundled ops (rmsnorm_noweight, the
# plain activations and gelu_and_mul, vLLM's mul_and_silu, fatrelu_and_mul,
# swigluoai_and_mul, gelu_quick/new/fast, the int8 and per-group forms).
# Lengths the bundle has no specialized kernel for take the dynamic one.
# Env: KGEN_TORCH_SUITE (norms, views or library; default norms),
#      KGEN_TORCH_DEADLINE_S (default 330: no new shape after it),
#      KGEN_TORCH_TIMEOUT (default 420: the whole run is killed after it),
#      KGEN_TORCH_ARGS (more torch_bench.py arguments, e.g. "--hiddens 2048").
set -uo pipefail
dir="${1:-build-gpu/gpu}"
out="${OUT:-}"
if [ -z "$out" ]; then
  out="$(mktemp -d -t kgen-torch-check.XXXXXX)"
fi
mkdir -p "$out"
here="$(cd "$(dirname "$0")" && pwd)"
py="$here/python"
[ -f "$py/torch_bench.py" ] || py="$dir/python"
lib="$dir/libkgen_runtime.so"
for f in "$py/torch_bench.py" "$py/kgen_ctypes.py" "$lib" "$dir/kernels/manifest.tsv"; do
  if [ ! -f "$f" ]; then
    echo "torch_check: $f is missing (run scripts/prepare-gpu.sh first)" >&2
    exit 2
  fi
done
echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu \
  --format=csv,noheader 2>&1 | head -n 2
echo "host: $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), logs in $out"
python3 - <<'EOF'
import importlib, sys
print("python", sys.version.split()[0], end="")
for m in ("torch", "triton", "matplotlib"):
    try:
        print(",", m, importlib.import_module(m).__version__, end="")
    except Exception as e:
        print(",", m, "MISSING (%s)" % e, end="")
print()
EOF
# A fresh Inductor/Triton cache: the compile cost measured is a new process's.
export TORCHINDUCTOR_CACHE_DIR="$(mktemp -d -t kgen-inductor.XXXXXX)"
export PYTHONUNBUFFERED=1
echo "== torch_bench"
# shellcheck disable=SC2086
timeout -k 10 "${KGEN_TORCH_TIMEOUT:-420}" python3 "$py/torch_bench.py" \
  --kernels "$dir/kernels" --lib "$lib" --out "$out" \
  --deadline-s "${KGEN_TORCH_DEADLINE_S:-330}" \
  ${KGEN_TORCH_SUITE:+--suite "$KGEN_TORCH_SUITE"} ${KGEN_TORCH_ARGS:-} \
  2> "$out/torch_bench_stderr.txt"
rc=$?
# 3: it ran to the end but found mismatches or failed cases (printed above).
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
  echo "torch_bench: exit code $rc$( [ "$rc" -ge 124 ] && echo ' (timeout or killed)')"
  echo "-- stderr (last lines):"
  grep -v -E '^\s*$' "$out/torch_bench_stderr.txt" | tail -n 15 | cut -c1-300
  if [ -f "$out/torch_bench.csv" ]; then
    echo "partial results: $out/torch_bench.csv ($(($(wc -l < "$out/torch_bench.csv") - 1)) rows)"
    python3 "$py/torch_bench.py" --table-only "$out/torch_bench.csv" | tee "$out/torch_bench_table.txt"
  fi
fi
# Files over 16 MiB do not come back from the device tool.
if [ -f "$out/torch_bench_stderr.txt" ] && [ "$(stat -c %s "$out/torch_bench_stderr.txt")" -gt 4000000 ]; then
  tail -c 4000000 "$out/torch_bench_stderr.txt" > "$out/stderr.cut"
  mv "$out/stderr.cut" "$out/torch_bench_stderr.txt"
fi
exit "$rc"
