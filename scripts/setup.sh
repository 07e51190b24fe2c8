#!/usr/bin/env bash
# Install everything DLPerf Suite needs on a fresh Debian machine (root), idempotently:
# Debian packages (Chromium + CJK fonts for reports, poppler for PDF checks, Slurm, munge
# and sshd for the campaign backends' tests) and a virtual environment in .venv with the
# project installed editable with all extras. torch is pinned to the local CPU wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
STAMP="$VENV/.setup-stamp"
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "setup: up to date ($VENV)"; exit 0
fi

APT_PACKAGES="chromium fonts-noto-cjk fonts-dejavu-core poppler-utils slurm-wlm munge openssh-server openssh-client procps iproute2 util-linux"
missing=""
for p in $APT_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "setup: missing Debian packages (run as root to install):$missing" >&2
  fi
fi
# matplotlib caches its font list: refresh it so the CJK fonts are seen.
rm -rf "${HOME:-/root}/.cache/matplotlib"

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
# torch first: the local CPU wheel; then everything else under a constraint that keeps it.
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
$VENV/bin/python -c "import torch" 2>/dev/null || $PIP install -q "torch==$TORCH_VERSION" 2>&1 | grep -v '^WARNING: Location' || true
tv=$($VENV/bin/python -c "import torch; print(torch.__version__.split('+')[0])")
echo "torch==$tv" > "$VENV/constraints.txt"
$PIP install -q -c "$VENV/constraints.txt" -e ".[all,dev]" 2>&1 | grep -v '^WARNING: Location' || true
$VENV/bin/python -c "import analysis, pandas, papermill, playwright, fabric, torch" 
echo "$want" > "$STAMP"
echo "setup: done ($VENV)"
