#!/usr/bin/env bash
# Start JupyterLab on the project's notebooks folder with the project's kernel (.venv).
# Extra arguments go to `jupyter lab` (e.g. --port=8899, --ServerApp.token=...).
# LAB_IP / LAB_PORT choose the address (default 127.0.0.1:8888; loopback only by default);
# LAB_ROOT the folder shown (default notebooks/).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/jupyter" ]; then
  echo "lab: $VENV/bin/jupyter not found; run 'make setup' first" >&2
  exit 1
fi
# The kernelspec `python3` of the venv runs the venv's interpreter, which imports `analysis`
# (installed editable); DLPERF_PROJECT_DIR keeps data/ and reports/ paths on this checkout.
export DLPERF_PROJECT_DIR="$PWD"
export FONTCONFIG_FILE="${FONTCONFIG_FILE:-$PWD/analysis/report/fonts.conf}"
exec "$VENV/bin/jupyter" lab --no-browser \
  --ip="${LAB_IP:-127.0.0.1}" --port="${LAB_PORT:-8888}" \
  --ServerApp.root_dir="${LAB_ROOT:-$PWD/notebooks}" --LabApp.default_url=/lab/tree/10_analyse.ipynb "$@"
