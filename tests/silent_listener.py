"""A listening socket that accepts every connection and never answers (an engine or a registry that hangs), for the
tests of what the scan does while it waits on one."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def never_answering(server: socket.socket) -> Iterator[threading.Event]:
    """Accept on `server` (bound, listening) and hold every connection unanswered until the block ends; the event is
    set at the first connection. The connections and `server` are closed on the way out."""
    asked, stop = threading.Event(), threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
                asked.set()
            except TimeoutError:
                continue
            except OSError:
                return
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield asked
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        server.close()
