#!/bin/sh
# Start dnsmasq (DNS: log every query, answer none) and squid (HTTP/HTTPS: allow only the registry hosts, optionally
# through the user's upstream proxy). The configuration comes from render-config.sh (its header lists the variables).
set -eu
lib=/usr/local/lib/mcp-sandbox
sh "$lib/render-config.sh" "$lib/squid.conf.template" > /tmp/squid.conf
if ! squid -k parse -f /tmp/squid.conf 2>/tmp/parse.log; then
  # squid echoes every config line it processes: an upstream login never reaches the log.
  echo "MCPEGRESS-ERROR squid config:" >&2; sed -e 's/login=[^ ]*/login=***/g' /tmp/parse.log >&2; exit 65
fi
rm -f /tmp/parse.log
# No upstream servers, no /etc/hosts: every name is NXDOMAIN, and every query is logged ("query[A] NAME from IP").
# Binding port 53 as a non-root user needs net.ipv4.ip_unprivileged_port_start=0 (set on the container).
dnsmasq --keep-in-foreground --no-resolv --no-hosts --no-poll --local-service --bogus-priv \
        --address=/#/ --log-queries --log-facility=- --user=proxy --group=proxy --pid-file=/tmp/dnsmasq.pid \
        --cache-size=0 --port=53 &
exec squid -N -f /tmp/squid.conf
