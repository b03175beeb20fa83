#!/bin/sh
# Start dnsmasq (DNS: log every query, answer none) and squid (HTTP/HTTPS: allow only the registry hosts, optionally
# through the user's upstream proxy). The configuration comes from render-config.sh (its header lists the variables).
# stdout carries only squid's access log (marked lines) and the one MCPEGRESS-READY line below; stderr carries
# dnsmasq's query log, squid's start-up messages (before it reads its configuration: no client data exists yet) and
# MCPEGRESS-ERROR lines. squid's diagnostic log is off (cache_log /dev/null): it would quote client requests.
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
squid -N -f /tmp/squid.conf &
squid_pid=$!
trap 'kill "$squid_pid" 2>/dev/null || true' TERM INT
# Ready when squid listens on 3128 (0C38) and dnsmasq on 53 (0035), read from the kernel's socket tables (squid no
# longer says so in a log). If squid exits first, so does this script, with its status.
until grep -qE '^ *[0-9]+: [0-9A-F]+:0C38 [0-9A-F]+:0000 0A ' /proc/net/tcp /proc/net/tcp6 2>/dev/null \
      && grep -qE '^ *[0-9]+: [0-9A-F]+:0035 ' /proc/net/udp /proc/net/udp6 2>/dev/null; do
  if ! kill -0 "$squid_pid" 2>/dev/null; then
    set +e; wait "$squid_pid"; status=$?
    echo "MCPEGRESS-ERROR squid exited with status $status before accepting connections" >&2; exit 66
  fi
  sleep 0.05
done
echo "MCPEGRESS-READY"
set +e
wait "$squid_pid"
