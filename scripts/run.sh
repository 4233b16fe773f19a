#!/usr/bin/env bash
# kgen's main job: set-up, build, emit every bundled op (f32/f16/bf16, the
# dynamic kernel and common row lengths) for the default arch with compile
# times, and where a GPU is present verify them against the interpreter and
# time them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
arch=${KGEN_ARCH:-sm_90}
echo "== kgen bundle: every op for $arch (PTX + spec in build/kernels)"
build/tools/kgen/kgen bundle -o build/kernels --archs "$arch" \
  --lengths 0,1,7,32,100,2048,3584,4095,4096,8192,16384
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "== GPU found: verifying and timing"
  KGEN_KERNEL_DIR=build/kernels bash bench/gpu_check.sh build/gpu-local
else
  echo "== no GPU here: kernels emitted, not run (bench/gpu_check.sh runs them on a GPU)"
fi
