#!/usr/bin/env bash
# The whole test suite: set-up, build, then every GoogleTest and lit test.
# GPU tests skip where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
