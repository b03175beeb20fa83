#!/usr/bin/env bash
# Install step of the GitHub Action (action.yml): a venv with mcp-sandbox installed from the action's own checkout
# (editable: the runtime image definitions are read from images/ there), a Docker engine that answers, and the
# runtime images' base. Writes `bin=<venv>/bin/mcp-sandbox` and `python=<venv>/bin/python` to GITHUB_OUTPUT for the scan step.
# Inputs (environment): ACTION_PATH (the action's checkout), INPUT_PYTHON (interpreter, default python3),
# RUNNER_TEMP (where the venv goes).
set -euo pipefail
action_path=${ACTION_PATH:?ACTION_PATH is not set}
python=${INPUT_PYTHON:-python3}
venv="${RUNNER_TEMP:-/tmp}/mcp-sandbox-venv"

if ! command -v -- "$python" >/dev/null 2>&1; then
  echo "error: input \"python\": interpreter not found: $python" >&2
  exit 2
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "error: input \"python\": mcp-sandbox needs Python >= 3.11 ($python is $("$python" -c 'import platform; print(platform.python_version())'))" >&2
  exit 2
fi

# Installed once per job, even when the action runs several times.
if [ ! -x "$venv/bin/mcp-sandbox" ] || [ "$(cat "$venv/.source" 2>/dev/null)" != "$action_path" ]; then
  "$python" -m venv --clear "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$action_path"
  printf '%s' "$action_path" >"$venv/.source"
fi
"$venv/bin/mcp-sandbox" --version

bash "$action_path/scripts/ensure-engine.sh"
bash "$action_path/scripts/ensure-base-image.sh"

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "bin=$venv/bin/mcp-sandbox" >>"$GITHUB_OUTPUT"
  echo "python=$venv/bin/python" >>"$GITHUB_OUTPUT"
fi
