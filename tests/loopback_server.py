"""A test server script started on a free loopback port, waited for until it accepts connections."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.test_remote_scan import _free_port


def start_loopback_server(script: Path, mode: str, log: Path, wait: float = 30) -> tuple[subprocess.Popen[bytes], int]:
    """`python SCRIPT MODE PORT LOG` on a free port; returned once the port accepts (or `wait` seconds passed)."""
    port = _free_port()
    process = subprocess.Popen([sys.executable, str(script), mode, str(port), str(log)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    return process, port
