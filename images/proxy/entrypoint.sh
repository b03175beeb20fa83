#!/bin/sh
# Start dnsmasq (DNS: log every query, answer none) and squid (HTTP/HTTPS: allow only the registry hosts).
# MCP_EGRESS_ALLOW_DOMAINS: space-separated host names (".example.org" also allows its subdomains)
# MCP_EGRESS_ALLOW_PORTS: space-separated ports (default 443)
set -eu
domains="${MCP_EGRESS_ALLOW_DOMAINS:?no allowlisted hosts given}"
ports="${MCP_EGRESS_ALLOW_PORTS:-443}"
# Only host-name and port characters may reach the config file.
case "$domains$ports" in
  *[!A-Za-z0-9.\ -]*) echo "MCPEGRESS-ERROR bad characters in the allowlist" >&2; exit 64 ;;
esac
sed -e "s/@ALLOW_DOMAINS@/$domains/" -e "s/@ALLOW_PORTS@/$ports/" \
    /usr/local/lib/mcp-sandbox/squid.conf.template > /tmp/squid.conf
if ! squid -k parse -f /tmp/squid.conf 2>/tmp/parse.log; then
  echo "MCPEGRESS-ERROR squid config:" >&2; cat /tmp/parse.log >&2; exit 65
fi
# No upstream servers, no /etc/hosts: every name is NXDOMAIN, and every query is logged ("query[A] NAME from IP").
# Binding port 53 as a non-root user needs net.ipv4.ip_unprivileged_port_start=0 (set on the container).
dnsmasq --keep-in-foreground --no-resolv --no-hosts --no-poll --local-service --bogus-priv \
        --address=/#/ --log-queries --log-facility=- --user=proxy --group=proxy --pid-file=/tmp/dnsmasq.pid \
        --cache-size=0 --port=53 &
exec squid -N -f /tmp/squid.conf
