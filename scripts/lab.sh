#!/usr/bin/env bash
# Start JupyterLab on the project folder with the project's kernel (.venv), opening
# notebooks/10_analyse.ipynb: data/, reports/ and the logs a report links to open in Lab.
# Extra arguments go to `jupyter lab` (e.g. --ServerApp.open_browser=True).
# LAB_IP / LAB_PORT choose the address (default 127.0.0.1:8888; loopback only by default),
# LAB_TOKEN the access token (default: a fresh random one), LAB_ROOT the folder shown
# (default: the project folder). As root (uid 0) it adds --allow-root. Prints the URL to open.
# Lab's defaults are overridden by scripts/lab_settings/overrides.json (no news toast, no
# update check: nothing asks before the notebook shows); a user's own settings still win.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/jupyter" ]; then
  echo "lab: $VENV/bin/jupyter not found; run 'make setup' first" >&2
  exit 1
fi
ip=${LAB_IP:-127.0.0.1}
port=${LAB_PORT:-8888}
case $port in
  ''|*[!0-9]*) echo "lab: LAB_PORT must be a port number, not '$port'" >&2; exit 2 ;;
esac
token=${LAB_TOKEN:-$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(24))')}
root_flag=()
if [ "$(id -u)" = 0 ]; then
  root_flag=(--allow-root)
fi
# The kernelspec `python3` of the venv runs the venv's interpreter, which imports `analysis`
# (installed editable); DLPERF_PROJECT_DIR keeps data/ and reports/ paths on this checkout.
export DLPERF_PROJECT_DIR="$PWD"
export FONTCONFIG_FILE="${FONTCONFIG_FILE:-$PWD/analysis/report/fonts.conf}"
export JUPYTER_TOKEN="$token"  # through the environment: not visible in `ps`
host=$ip
case $ip in 0.0.0.0|'*'|'') host=127.0.0.1 ;; esac
open=lab/tree/notebooks/10_analyse.ipynb
echo "lab: open http://$host:$port/$open?token=$token  (Ctrl-C stops the server)"
# port_retries=0: fail on a busy port instead of moving to another one than printed above.
exec "$VENV/bin/jupyter" lab --no-browser "${root_flag[@]}" \
  --ip="$ip" --port="$port" --ServerApp.port_retries=0 \
  --config="$PWD/scripts/jupyter_server_config.py" \
  --LabApp.app_settings_dir="$PWD/scripts/lab_settings" \
  --ServerApp.root_dir="${LAB_ROOT:-$PWD}" --LabApp.default_url="/$open" "$@"
