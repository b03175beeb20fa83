#!/usr/bin/env bash
# Make sure a Docker engine answers. On a Debian/Ubuntu host with root and no engine, install Debian's docker.io and
# start dockerd in the background. Never start a second daemon while one answers.
set -euo pipefail
. "$(dirname "$0")/debian-packages.sh"
log=${MCP_SANDBOX_DOCKERD_LOG:-/var/log/mcp-sandbox-dockerd.log}

if docker info >/dev/null 2>&1; then
  exit 0
fi
require_root_apt "no Docker engine answers; install and start Docker (https://docs.docker.com/engine/install/), then retry"
install_for dockerd "Debian's docker.io" docker.io iptables
if pgrep -x dockerd >/dev/null 2>&1; then
  echo "==> dockerd is running but not answering yet; waiting" >&2
else
  echo "==> starting dockerd (log: $log)" >&2
  nohup dockerd >"$log" 2>&1 &
fi
for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    exit 0
  fi
  sleep 0.5
done
echo "error: dockerd did not answer within 60 s; see $log" >&2
exit 1
