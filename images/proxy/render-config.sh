#!/bin/sh
# Render squid.conf from the template ($1) to stdout, from the environment (and stdin, for the upstream login).
# Every value is checked against a strict character set before it reaches the config: nothing in a host list, a port
# or a login can end a line, start a directive or add an option. A refusal is one "MCPEGRESS-ERROR …" line, exit 64.
#   MCP_EGRESS_ALLOW_DOMAINS   space-separated host names (".example.org" also allows its subdomains)
#   MCP_EGRESS_ALLOW_PORTS     space-separated ports (default 443); with 80 among them, plain GET/HEAD to port 80
#   MCP_EGRESS_LOG_MARKER      random marker for the access log (16-64 letters and digits, required): only log lines
#                              carrying it are read as requests
#   MCP_EGRESS_UPSTREAM_HOST   the upstream (corporate) proxy to chain to, a host name or IPv4 address (optional)
#   MCP_EGRESS_UPSTREAM_PORT   its port
#   MCP_EGRESS_DIRECT_DOMAINS  allowlisted hosts that bypass the upstream (from the host's NO_PROXY; optional)
#   MCP_EGRESS_UPSTREAM_LOGIN  "stdin": read the upstream's percent-encoded user:password as one line from stdin
#                              (stdin, because the environment is visible in `docker inspect`)
set -eu
fail() { echo "MCPEGRESS-ERROR $1" >&2; exit 64; }
template="$1"
domains="${MCP_EGRESS_ALLOW_DOMAINS:-}"
ports="${MCP_EGRESS_ALLOW_PORTS:-443}"
upstream_host="${MCP_EGRESS_UPSTREAM_HOST:-}"
upstream_port="${MCP_EGRESS_UPSTREAM_PORT:-}"
direct="${MCP_EGRESS_DIRECT_DOMAINS:-}"
marker="${MCP_EGRESS_LOG_MARKER:-}"
login=""
[ -n "$domains" ] || fail "no allowlisted hosts given"
# Only host-name and port characters may reach the config file.
case "$domains$ports" in
  *[!A-Za-z0-9.\ -]*) fail "bad characters in the allowlist" ;;
esac
case "$ports" in
  *[!0-9\ ]*) fail "bad characters in the allowlist" ;;
esac
# The marker becomes one word of the log format: letters and digits only, and long enough not to be guessed.
case "$marker" in
  ""|*[!A-Za-z0-9]*) fail "the log marker is missing or not letters and digits" ;;
esac
[ "${#marker}" -ge 16 ] && [ "${#marker}" -le 64 ] || fail "the log marker must be 16 to 64 characters"
set -- -e "s/@ALLOW_DOMAINS@/$domains/" -e "s/@ALLOW_PORTS@/$ports/" -e "s/@LOG_MARKER@/$marker/" "$template"
case " $ports " in
  *" 80 "*) set -- -e "s/^#plain //" "$@" ;;
esac
if [ -n "$upstream_host" ]; then
  case "$upstream_host" in
    *[!A-Za-z0-9.-]*|-*) fail "bad characters in the upstream host" ;;
  esac
  case "$upstream_port" in
    ""|*[!0-9]*) fail "the upstream port is not a number" ;;
  esac
  case "$direct" in
    *[!A-Za-z0-9.\ -]*) fail "bad characters in the direct hosts" ;;
  esac
  if [ "${MCP_EGRESS_UPSTREAM_LOGIN:-}" = stdin ]; then
    IFS= read -r login || true
    # Percent-encoded user ":" password: unreserved characters and "%" only, never echoed.
    case "$login" in
      *[!A-Za-z0-9._~%:-]*|"") fail "the upstream login on stdin is missing or not percent-encoded" ;;
      [!:]*:*) login=" login=$login" ;;
      *) fail "the upstream login on stdin is not user:password" ;;
    esac
  fi
  set -- -e "s/@UPSTREAM_HOST@/$upstream_host/" -e "s/@UPSTREAM_PORT@/$upstream_port/" \
         -e "s/@UPSTREAM_LOGIN@/$login/" -e "s/^#upstream //" "$@"
  if [ -n "$direct" ]; then
    set -- -e "s/@DIRECT_DOMAINS@/$direct/" -e "s/^#direct //" "$@"
  fi
elif [ -n "$upstream_port$direct${MCP_EGRESS_UPSTREAM_LOGIN:-}" ]; then
  fail "upstream settings given without MCP_EGRESS_UPSTREAM_HOST"
fi
exec sed "$@"
