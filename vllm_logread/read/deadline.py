"""One HTTP GET, whole, within a deadline (standard library only).

urllib's ``timeout`` bounds each socket read, not the call: a server that sends a header
line (or a body byte) every 0.2 s never lets a read wait 10 s, and holds the caller as
long as it likes. ``Deadline`` cuts the connection's socket when the time is up (a timer
thread shuts it down; the blocked read then ends), and says whether it did, so that a
body cut by it is not taken for the whole.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import http.client
    import urllib.request
    from collections.abc import Callable


class Deadline:
    """``with Deadline(10.0) as d: d.opener(loopback=...).open(...)``; ``d.expired``
    afterwards: the socket was cut at the deadline (whatever came before is partial)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._timers: list[threading.Timer] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Deadline:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            for t in self._timers:
                t.cancel()

    def _cut(self, sock: socket.socket) -> None:
        with self._lock:
            self.expired = True
        try:
            # socket.socket's own shutdown, also for an SSLSocket: its TLS state is left
            # alone (the reading thread owns it); the read then ends with EOF or an error.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass

    def watch(self, sock: socket.socket) -> None:
        """Cut ``sock`` at the deadline (at once if it has passed)."""
        timer = threading.Timer(max(0.0, self.end - time.monotonic()), self._cut, (sock,))
        timer.daemon = True
        with self._lock:
            self._timers.append(timer)
        timer.start()

    def opener(self, *, loopback: bool) -> urllib.request.OpenerDirector:
        """A urllib opener whose connections are watched (``loopback``: never a proxy)."""
        import urllib.request

        deadline = self

        class _Watched(urllib.request.AbstractHTTPHandler):
            def do_open(
                self,
                http_class: Callable[..., http.client.HTTPConnection],
                req: urllib.request.Request,
                **kw: object,
            ) -> http.client.HTTPResponse:
                class Conn(http_class):  # type: ignore[misc, valid-type]
                    def connect(self) -> None:
                        super().connect()
                        deadline.watch(self.sock)

                return super().do_open(Conn, req, **kw)

        class _HTTP(_Watched, urllib.request.HTTPHandler):
            pass

        class _HTTPS(_Watched, urllib.request.HTTPSHandler):
            pass

        handlers: list[urllib.request.BaseHandler] = [_HTTP(), _HTTPS()]
        if loopback:
            handlers.append(urllib.request.ProxyHandler({}))
        return urllib.request.build_opener(*handlers)
