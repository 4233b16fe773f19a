#!/usr/bin/env bash
# Installs what kgen builds with (idempotent): LLVM/MLIR 22, lit/FileCheck,
# fmt, GoogleTest, Google Benchmark, CMake, Ninja and pkg-config from Debian
# (the examples test reads the runtime's .pc file), and clang with libFuzzer
# (the runtime's C++17 build and test/fuzz's targets). The CUDA
# toolkit (headers, ptxas, libdevice) is expected at /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ llvm-22-dev libmlir-22-dev mlir-22-tools
          llvm-22-tools libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
          pkg-config clang libclang-rt-dev)
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

# The Python package's build and CPU tests: torch (the version the GPU
# machines have), transformers, diffusers and pytest in .venv. Without them
# (no PyPI) the build leaves the package out and its test says why.
want_torch=2.11.0
if [ "${KGEN_SKIP_PYTHON:-0}" != 1 ] && \
   ! .venv/bin/python -c "import torch, transformers, diffusers, pytest, expecttest" \
     2>/dev/null; then
  echo "setup: installing torch $want_torch, transformers, diffusers and" \
       "pytest in .venv"
  if ! { python3 -m venv .venv &&
         .venv/bin/pip install -q "torch==$want_torch" "transformers==5.17.0" \
           pytest expecttest scikit-build-core numpy "diffusers==0.42.1"; }; then
    echo "setup: warning: no .venv with torch; the Python package is not" \
         "built or tested" >&2
  fi
fi
