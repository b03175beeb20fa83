# Sourced by ensure-engine.sh and ensure-base-image.sh: install Debian packages for a missing command, which only root
# on a Debian/Ubuntu host can do.

# require_root_apt MESSAGE: exit 2 with `error: MESSAGE` unless this is root on a host with apt-get.
require_root_apt() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "error: $1" >&2
    exit 2
  fi
}

# install_for COMMAND WHAT PACKAGE...: when COMMAND is missing, install the packages (WHAT names them in the log).
install_for() {
  local command=$1 what=$2
  shift 2
  if ! command -v "$command" >/dev/null 2>&1; then
    echo "==> installing $what" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "$@" >/dev/null
  fi
}
