#!/usr/bin/env bash
# Builds the kgen wheel (python/) into dist/ against the torch of $PYTHON
# (default: .venv/bin/python where scripts/setup.sh made it, else python3).
# The kernels it embeds are python/pyproject.toml's; these override them:
#   KGEN_WHEEL_ARCHS   e.g. "sm_90;sm_100"
#   KGEN_WHEEL_CUBIN   auto|on|off (off: PTX only, half the library; the
#                      driver then JITs each module's PTX on first use)
# Needs what scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-}
if [ -z "$py" ]; then
  py=python3
  [ -x .venv/bin/python ] && py=.venv/bin/python
fi
args=(-C "cmake.define.KGEN_CUDA_PATH=${KGEN_CUDA_PATH:-/usr/local/cuda}")
[ -n "${KGEN_WHEEL_ARCHS:-}" ] &&
  args+=(-C "cmake.define.KGEN_TORCH_ARCHS=$KGEN_WHEEL_ARCHS")
[ -n "${KGEN_WHEEL_CUBIN:-}" ] &&
  args+=(-C "cmake.define.KGEN_TORCH_CUBIN=$KGEN_WHEEL_CUBIN")
"$py" -m pip wheel ./python --no-build-isolation --no-deps -w dist "${args[@]}"
ls -la dist/kgen-*.whl
