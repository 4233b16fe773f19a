#!/usr/bin/env bash
# Configures and builds kgen into build/ (after setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKGEN_CUDA_PATH="${KGEN_CUDA_PATH:-/usr/local/cuda}" >/dev/null
ninja -C build -j"$(nproc)"
