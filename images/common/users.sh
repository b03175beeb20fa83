#!/bin/sh
# Users of the sandbox images (node and python; images/common/ is in every build context as common/): mcp-install
# (uid 10001) owns the installed code; mcp-run (uid 10002) runs the server.
set -eu
groupadd -g 10001 mcp-install
useradd -u 10001 -g 10001 -M -d /home/mcp-install -s /usr/sbin/nologin mcp-install
groupadd -g 10002 mcp-run
useradd -u 10002 -g 10002 -M -d /home/mcp -s /usr/sbin/nologin mcp-run
install -d -o 10001 -g 10001 -m 0755 /opt/server /opt/src
install -d -m 0755 /workspace /home/mcp /home/mcp-install /etc/mcp-sandbox
