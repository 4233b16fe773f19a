#!/usr/bin/env bash
# The Python package on a GPU machine in one call: installs dist/'s wheels as
# a user would (pip, else unzip when the machine has no pip) into a fresh
# folder, runs gpu_check.py from outside the source tree (unless
# KGEN_SKIP_CHECK=1), then the model bench for each family in
# KGEN_MODEL_BENCH (e.g. llama,qwen3; each at most KGEN_BENCH_TIMEOUT s).
# Logs go to $OUT (default /tmp/kgen-gpu); the tables are printed.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/kgen-gpu}
mkdir -p "$out"
site=$(mktemp -d)
wheels=("$repo"/dist/*.whl)
if python3 -m pip --version >/dev/null 2>&1; then
  python3 -m pip install -q --no-deps --target "$site" "${wheels[@]}"
  echo "installed with pip into $site"
else
  for w in "${wheels[@]}"; do python3 -m zipfile -e "$w" "$site"; done
  echo "no pip here: unpacked the wheels into $site"
fi
rc=0
# The Hugging Face `kernels` layout, loaded in a process of its own (one
# kgen library per process), where dist/ carries the kernels wheel.
if [ -d "$site/kernels" ] && [ "${KGEN_SKIP_CHECK:-0}" != 1 ]; then
  hub_site=$(mktemp -d) hub=$(mktemp -d)
  cp -r "$site/kernels" "$site"/kernels-*.dist-info "$hub_site/"
  bash "$repo/scripts/hub-layout.sh" "$repo"/dist/kgen-*.whl "$hub" >/dev/null
  (cd /tmp && PYTHONPATH=$hub_site python3 "$repo/python/tests/hub_check.py" \
     "$hub") > "$out/hub_check.log" 2>&1 || rc=1
  tail -1 "$out/hub_check.log"
fi
export PYTHONPATH=$site
cd /tmp
if [ "${KGEN_SKIP_CHECK:-0}" != 1 ]; then
  python3 "$repo/python/tests/gpu_check.py" > "$out/gpu_check.log" 2>&1 || rc=1
  sed -n '/^| check/,$p' "$out/gpu_check.log"
fi
for fam in ${KGEN_MODEL_BENCH:+${KGEN_MODEL_BENCH//,/ }}; do
  timeout "${KGEN_BENCH_TIMEOUT:-1200}" python3 "$repo/bench/python/model_bench.py" "$fam" \
    --out "$out/bench_$fam.json" > "$out/bench_$fam.log" 2>&1 || rc=1
  sed -n '/^| /,$p' "$out/bench_$fam.log"
done
exit $rc
