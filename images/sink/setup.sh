#!/bin/sh
# Runs as root with only NET_ADMIN (plus SETUID, SETGID, SETPCAP to drop privileges) in a --network none container.
set -eu
HERE=/usr/local/lib/mcp-sandbox/sink
ip addr add 198.18.0.1/15 dev lo
ip route add default dev lo
if [ "$(cat /proc/sys/net/ipv6/conf/lo/disable_ipv6 2>/dev/null || echo 1)" = 0 ]; then
	ip -6 addr add 2001:db8::1/128 dev lo nodad
	ip -6 route add default dev lo
fi
nft -f "$HERE/sink.nft"
exec setpriv --reuid=10003 --regid=10003 --clear-groups --inh-caps=-all --ambient-caps=-all --bounding-set=-all \
	--no-new-privs -- /usr/bin/python3 -I "$HERE/listener.py"
