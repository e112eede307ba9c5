"""--prometheus and --metrics-url give up at their deadline whatever the server drips.

A server that sends a header line every 0.2 s never lets a socket read wait 1 s, so a
per-read timeout alone waits as long as the server likes (measured: more than 120 s on
a stand-in, killed by ``timeout``). The whole call must end near its deadline.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from vllm_logread.errors import InputError
from vllm_logread.read.metrics import fetch_metrics
from vllm_logread.read.prometheus import Prometheus


class _Dripper:
    """Answers ``HTTP/1.1 200 OK`` then a header line (or, with ``body``, a body byte)
    every 0.2 s, for a minute."""

    def __init__(self, *, body: bool = False) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                try:
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                    if body:
                        self.wfile.write(b"Content-Type: text/plain\r\n\r\n# HELP vllm:x y\n")
                    for _ in range(300):
                        self.wfile.write(b"#" if body else b"X-Slow: yes\r\n")
                        self.wfile.flush()
                        time.sleep(0.2)
                except OSError:
                    pass  # the client gave up: what is tested

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_prometheus_headers_dripped_end_at_the_deadline() -> None:
    api = _Dripper()
    started = time.monotonic()
    try:
        with pytest.raises(InputError, match="no answer within 1 s"):
            Prometheus(api.url, timeout_s=1.0).query("up")
    finally:
        api.close()
    assert time.monotonic() - started < 3  # the deadline, 1 s, and some slack


@pytest.mark.parametrize("body", [False, True], ids=["headers", "body"])
def test_metrics_url_dripped_ends_at_the_deadline(body: bool) -> None:
    """The body drip is a /metrics text that never ends: a part of it must not be read as
    the whole (a cut scrape), so it is the timeout too."""
    server = _Dripper(body=body)
    started = time.monotonic()
    try:
        with pytest.raises(InputError, match="no answer within 1 s"):
            fetch_metrics(server.url + "/metrics", timeout_s=1.0)
    finally:
        server.close()
    assert time.monotonic() - started < 3
