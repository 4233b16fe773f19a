#!/usr/bin/env bash
# Lays out a kgen wheel as a Hugging Face `kernels` repository, which
# `kernels.get_local_kernel(Path(DIR))` loads (and the Hub serves once
# uploaded): DIR/build/torchXY-cxx11-cuNNN-x86_64-linux/{kgen/,metadata.json}
# for the torch and CUDA the wheel was built against.
#   bash scripts/hub-layout.sh dist/kgen-0.1.0-py3-none-linux_x86_64.whl DIR
set -euo pipefail
if [ $# -ne 2 ] || [ ! -f "$1" ]; then
  echo "usage: $0 WHEEL DIR (WHEEL: a kgen wheel from scripts/build-wheel.sh)" >&2
  exit 2
fi
wheel=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m zipfile -e "$wheel" "$tmp"
if [ ! -f "$tmp/kgen/_build_info.py" ]; then
  echo "$0: error: $wheel is not a kgen wheel (no kgen/_build_info.py)" >&2
  exit 1
fi
# "2.11.0+cu130" -> torch211-cxx11-cu130-x86_64-linux
variant=$(python3 - "$tmp/kgen/_build_info.py" <<'PY'
import re, sys
info = {}
exec(open(sys.argv[1]).read(), info)
m = re.match(r"(\d+)\.(\d+)[^+]*\+(cu\d+)$", info["TORCH_VERSION"])
if not m:
    sys.exit(f"torch {info['TORCH_VERSION']} is not a CUDA build")
print(f"torch{m[1]}{m[2]}-cxx11-{m[3]}-x86_64-linux")
PY
)
out="$dir/build/$variant"
rm -rf "$out"
mkdir -p "$out"
cp -r "$tmp/kgen" "$out/"
cat > "$out/metadata.json" <<JSON
{
  "id": "kgen",
  "name": "kgen",
  "version": 1,
  "license": "NOASSERTION",
  "python-depends": [],
  "backend": {"type": "cuda"}
}
JSON
echo "$out"
