#!/usr/bin/env bash
# Configures and builds kgen into build/ (after setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python package's library where .venv has torch (scripts/setup.sh).
python=(-DKGEN_PYTHON=OFF)
if .venv/bin/python -c "import torch" 2>/dev/null; then
  python=(-DKGEN_PYTHON=ON "-DPython3_EXECUTABLE=$PWD/.venv/bin/python")
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKGEN_CUDA_PATH="${KGEN_CUDA_PATH:-/usr/local/cuda}" "${python[@]}" >/dev/null
ninja -C build -j"$(nproc)"
