#!/usr/bin/env bash
# Builds the kgen wheel (python/) into dist/ against the torch of $PYTHON
# (default: .venv/bin/python where scripts/setup.sh made it, else python3),
# with the kernels below embedded. Needs what scripts/setup.sh installs.
#   KGEN_WHEEL_ARCHS   archs (default: sm_80;sm_86;sm_89;sm_90;sm_100)
#   KGEN_WHEEL_CUBIN   auto|on|off: a cubin beside each PTX (default auto:
#                      where ptxas is found; off halves the library, and the
#                      driver then JITs each module's PTX on first use)
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-}
if [ -z "$py" ]; then
  py=python3
  [ -x .venv/bin/python ] && py=.venv/bin/python
fi
# The hidden sizes (norms; 128 and 256: q/k norms over heads) and MLP widths
# (gated activations) of common models get specialized kernels; any other
# size takes the dynamic kernel.
norm_lengths="0;128;256;2048;2560;3072;4096;5120;8192"
act_lengths="0;8192;11008;12288;14336;18944"
"$py" -m pip wheel ./python --no-build-isolation --no-deps -w dist \
  -C "cmake.define.KGEN_TORCH_ARCHS=${KGEN_WHEEL_ARCHS:-sm_80;sm_86;sm_89;sm_90;sm_100}" \
  -C "cmake.define.KGEN_TORCH_CUBIN=${KGEN_WHEEL_CUBIN:-auto}" \
  -C "cmake.define.KGEN_TORCH_NORM_LENGTHS=$norm_lengths" \
  -C "cmake.define.KGEN_TORCH_ACT_LENGTHS=$act_lengths" \
  -C "cmake.define.KGEN_CUDA_PATH=${KGEN_CUDA_PATH:-/usr/local/cuda}"
ls -la dist/kgen-*.whl
