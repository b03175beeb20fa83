#!/usr/bin/env bash
# Make sure `redis-server` exists for the distributed-batch tests (they start their own on a free loopback port, with
# its own data directory; nothing here starts or enables the system service). Idempotent: nothing to do when present.
set -euo pipefail
. "$(dirname "$0")/debian-packages.sh"

if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
require_root_apt "redis-server is missing; install it (Debian: apt-get install redis-server) for the distributed tests"
install_for redis-server "redis-server (the distributed-batch tests' broker)" redis-server
