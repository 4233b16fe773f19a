#!/usr/bin/env bash
# kgen's main job: set-up, build, emit every bundled op (f32/f16/bf16, the
# dynamic kernel and common row lengths) for the default arch with compile
# times, and where a GPU is present verify them against the interpreter and
# time them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
echo "== kgen bundle: every op for ${KGEN_GPU_ARCHS:-sm_90} (PTX + spec in build/gpu/kernels)"
KGEN_GPU_BUILD="$PWD/build" JOBS="$(nproc)" bash scripts/prepare-gpu.sh
cat build/gpu/bundle.log
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "== GPU found: verifying against the interpreter and timing"
  bash bench/gpu_check.sh build/gpu
else
  echo "== no GPU here: kernels emitted, not run (bash bench/gpu_check.sh build/gpu on a GPU machine)"
fi
