#!/usr/bin/env bash
# Installs what kgen builds with (idempotent): LLVM/MLIR 22, lit/FileCheck,
# fmt, GoogleTest, Google Benchmark, CMake, Ninja and pkg-config from Debian
# (the examples test reads the runtime's .pc file). The CUDA
# toolkit (headers, ptxas, libdevice) is expected at /usr/local/cuda.
set -euo pipefail

packages=(cmake ninja-build g++ llvm-22-dev libmlir-22-dev mlir-22-tools
          llvm-22-tools libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
          pkg-config)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cuda=${KGEN_CUDA_PATH:-/usr/local/cuda}
for f in include/cuda.h bin/ptxas nvvm/libdevice/libdevice.10.bc; do
  if [ ! -e "$cuda/$f" ]; then
    echo "setup: error: $cuda/$f is missing; install the CUDA toolkit there" \
         "or set KGEN_CUDA_PATH" >&2
    exit 1
  fi
done
