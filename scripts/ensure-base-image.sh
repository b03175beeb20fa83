#!/usr/bin/env bash
# Make sure the runtime images' base (Debian 13 "trixie" slim) exists locally. Try the engine's store, then a pull;
# when no registry is reachable, build it with debootstrap from Debian's mirror and `docker import` it under the same
# tag, with the -updates and -security suites added to its apt sources.
set -euo pipefail
. "$(dirname "$0")/debian-packages.sh"
tag=${MCP_SANDBOX_BASE_IMAGE:-debian:trixie-slim}
mirror=${MCP_SANDBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}

if docker image inspect "$tag" >/dev/null 2>&1; then
  exit 0
fi
if timeout 60 docker pull -q "$tag" >/dev/null 2>&1; then
  exit 0
fi
require_root_apt "base image $tag is missing and cannot be pulled; pull or load it, then retry"
install_for debootstrap debootstrap debootstrap
root=$(mktemp -d /var/tmp/mcp-sandbox-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "==> building $tag with debootstrap (about 40 s)" >&2
debootstrap --variant=minbase trixie "$root" "$mirror" >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; exit 1; }
rm -f "$root.log"
cat >"$root/etc/apt/sources.list" <<SRC
deb $mirror trixie main
deb $mirror trixie-updates main
deb http://deb.debian.org/debian-security trixie-security main
SRC
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'CMD ["bash"]' - "$tag" >/dev/null
echo "==> imported $tag" >&2
