#!/usr/bin/env bash
# Install everything DLPerf Suite needs on a fresh Debian machine (root), idempotently:
# Debian packages (Chromium + CJK fonts for reports, poppler for PDF checks, Slurm, munge
# and sshd for the campaign backends' tests) and a virtual environment in .venv with the
# project installed editable with all extras. torch is pinned to the local CPU wheel.
# One line per step; the tools' own output goes to $VENV/setup.log (its tail is shown on failure).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
STAMP="$VENV/.setup-stamp"
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "setup: up to date ($VENV)"; exit 0
fi
mkdir -p "$VENV"
LOG="$(cd "$VENV" && pwd)/setup.log"
: > "$LOG"

# step MESSAGE COMMAND...: one progress line, the command's output into the log.
step() {
  local msg=$1; shift
  echo "setup: $msg"
  if ! "$@" >>"$LOG" 2>&1; then
    echo "setup: failed: $msg (last lines of $LOG follow)" >&2
    tail -n 25 "$LOG" >&2
    exit 1
  fi
}

APT_PACKAGES="chromium fonts-noto-cjk fonts-dejavu-core poppler-utils slurm-wlm munge openssh-server openssh-client procps iproute2 util-linux"
missing=""
for p in $APT_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -z "$missing" ]; then
  echo "setup: apt packages… already installed"
elif [ "$(id -u)" = 0 ]; then
  # noninteractive + apt-utils-free configuration: no debconf prompts; messages go to the log.
  export DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes
  step "apt packages…$missing" apt-get update -qq
  # shellcheck disable=SC2086  # word splitting of the package list is intended
  step "apt packages… installing" apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Use-Pty=0 $missing
else
  echo "setup: missing Debian packages (run as root to install):$missing" >&2
fi
# matplotlib caches its font list: refresh it so the CJK fonts are seen.
rm -rf "${HOME:-/root}/.cache/matplotlib"

PY="$VENV/bin/python"
if [ -x "$PY" ]; then
  echo "setup: venv… $VENV exists"
else
  step "venv… $VENV" python3 -m venv "$VENV"
fi
step "venv… pip" "$PY" -m pip install -q --upgrade pip
# torch first, from the local CPU wheel, with numpy beside it (torch warns "Failed to
# initialize NumPy" when imported without numpy); then everything else under a constraint
# that keeps that torch. Its version is read from the metadata: no import, no warning.
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
torch_version() { "$PY" -c 'from importlib.metadata import version; print(version("torch").split("+")[0])' 2>/dev/null; }
if tv=$(torch_version); then
  echo "setup: torch… $tv installed"
else
  step "torch… $TORCH_VERSION (CPU wheel)" "$PY" -m pip install -q "torch==$TORCH_VERSION" "numpy>=1.26"
  tv=$(torch_version)
fi
echo "torch==$tv" > "$VENV/constraints.txt"
step "project… editable, with extras [all,dev]" \
  "$PY" -m pip install -q -c "$VENV/constraints.txt" -e ".[all,dev]"
step "project… import check" "$PY" -W error::UserWarning -c \
  "import analysis, numpy, torch, pandas, papermill, playwright"
echo "$want" > "$STAMP"
echo "setup: done ($VENV; dlperf is $VENV/bin/dlperf, or 'source $VENV/bin/activate'; tool output in $LOG)"
