"""A real Prometheus scraping local stand-ins of vLLM servers, for the fleet tests.

Each stand-in is a thread on 127.0.0.1 (a free port) serving a recorded
/metrics text of a real vLLM at ``/metrics``; ``Scraped.texts`` may change
(the next scrape gets the next text) or the server may stop (its target goes
down). Prometheus is any ``prometheus`` binary: ``$PROMETHEUS`` (a path, e.g.
the one of Prometheus' release archive unpacked in your home: no root), else
one on ``PATH`` (Debian's package: ``/usr/bin/prometheus``, 2.42 on
bookworm, which ``.ci/run`` installs on a CI machine where it runs as root).
No PyPI package was found that ships the server's binary (the
Python packages named for Prometheus are clients and exporters), so ``./run
test`` installs none: without one the fleet test skips, saying how to get one. It runs with its own config and a tmp TSDB, on
127.0.0.1, scraping every second.

Run as ``python tests/fleet_harness.py`` for the README's "Many servers":
it starts the stand-ins and Prometheus and prints the URL until Ctrl-C;
``kill -USR1`` it to stop the second stand-in (its row turns down).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PROMETHEUS = "/usr/bin/prometheus"


def prometheus_binary() -> str | None:
    """The Prometheus binary: ``$PROMETHEUS``, else ``prometheus`` on PATH, else
    Debian's; None when there is none."""
    import os

    given = os.environ.get("PROMETHEUS")
    if given:
        return given if Path(given).is_file() else None
    found = shutil.which("prometheus")
    if found:
        return found
    return PROMETHEUS if Path(PROMETHEUS).is_file() else None


class _QuietServer(ThreadingHTTPServer):
    """A scrape Prometheus gave up on (its timeout) is not worth a traceback."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@dataclass
class Scraped:
    """One stand-in vLLM: serves ``texts[min(n, len - 1)]`` at its n-th scrape."""

    texts: list[bytes]
    server: ThreadingHTTPServer | None = None
    scrapes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> Scraped:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                with owner.lock:
                    body = owner.texts[min(owner.scrapes, len(owner.texts) - 1)]
                    owner.scrapes += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningPrometheus:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_prometheus(binary: str, targets: list[str], workdir: Path) -> RunningPrometheus:
    """Prometheus on 127.0.0.1 scraping ``targets`` every second (job vllm)."""
    config = workdir / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: vllm\n    static_configs:\n"
        f"      - targets: {json.dumps(targets)}\n",
        encoding="utf-8",
    )
    port = free_port()
    log = workdir / "prometheus.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=1h",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return RunningPrometheus(url=f"http://127.0.0.1:{port}", process=process, log=log)


def query(url: str, promql: str) -> list[dict[str, Any]]:
    """An instant query's result list ([] while Prometheus is not ready)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    q = urllib.parse.urlencode({"query": promql})
    try:
        with opener.open(f"{url}/api/v1/query?{q}", timeout=2) as r:
            answer = json.loads(r.read())
    except OSError:
        return []
    result: list[dict[str, Any]] = answer.get("data", {}).get("result", [])
    return result


def wait_until(what: str, check: Any, *, timeout_s: float = 30.0) -> None:
    """Poll ``check()`` every 0.2 s until true; AssertionError after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout_s:g} s: {what}")


if __name__ == "__main__":  # the README's demo set-up
    import signal
    import sys
    import tempfile

    root = Path(__file__).resolve().parents[1] / "sample_logs"
    binary = prometheus_binary()
    if binary is None:
        sys.exit("no prometheus binary: apt-get install prometheus")
    real = root / "real_vllm_0.32_qwen3-8b.metrics.txt"
    preempted = root / "real_vllm_0.32_qwen3-8b_preempted.metrics.txt"
    stand_ins = [
        Scraped([real.read_bytes(), real.read_bytes(), preempted.read_bytes()]).start(),
        Scraped([real.read_bytes()]).start(),
        Scraped([(root / "metrics_v1_0_11_dp2_qwen3-8b.txt").read_bytes()]).start(),
        Scraped([(root / "metrics_v0_engine_qwen3-8b.txt").read_bytes()]).start(),
    ]
    signal.signal(signal.SIGUSR1, lambda *_: stand_ins[1].stop())
    with tempfile.TemporaryDirectory() as tmp:
        prom = start_prometheus(binary, [s.target for s in stand_ins], Path(tmp))
        try:
            print(prom.url, " ".join(s.target for s in stand_ins), flush=True)
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
        finally:
            prom.stop()
            for s in stand_ins:
                s.stop()
