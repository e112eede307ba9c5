#!/usr/bin/env python3
"""Benchmark: the live pipe, ``vllm serve ... 2>&1 | vllm-logread``, with real processes.

Not part of the test run (tests/cli/test_live.py holds the behaviour; this measures the
speed). ``benchmarks/live_writer.py`` plays the server: it writes the seed boot up to its
pool line, then, when told, the pool line and the rest of the boot, and says on its stderr
when (the monotonic clock, shared by every process on the machine). Two figures:

* **the report's delay**: from the writer writing the pool line to the report's first
  line reaching the reader of the tool's stdout, the writer holding the pipe open and
  writing nothing more (a fresh tool process each run; median and worst of ``--runs``);
* **the drain**: the writer's time to write ``--mb`` megabytes of serving lines through
  the tool (echo on, every stats line counted) against the same writes through
  ``grep -E``, paired and interleaved, median of ``--runs``.

Usage:
    .venv/bin/python benchmarks/live.py            # 11 runs, 20 MB
    .venv/bin/python benchmarks/live.py --runs 21 --mb 200
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"
WRITER = ROOT / "benchmarks" / "live_writer.py"
REPORT = b"== vllm-logread:"


class Drain(threading.Thread):
    """Reads a pipe to its end at full speed; notes when ``REPORT`` first appears."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.first_at: float | None = None
        self.report_at: float | None = None

    def run(self) -> None:
        window = b""
        while chunk := os.read(self.fd, 1 << 20):
            if self.first_at is None:
                self.first_at = time.monotonic()
            if self.report_at is None:
                window = window[-64:] + chunk
                if REPORT in window:
                    self.report_at = time.monotonic()


def _pipeline(
    reader_args: list[str],
) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    """The writer piped into ``reader_args``; (writer, reader)."""
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(SEED), "--controlled"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert writer.stdout is not None
    reader = subprocess.Popen(reader_args, stdin=writer.stdout, stdout=subprocess.PIPE)
    writer.stdout.close()
    return writer, reader


def _say(writer: subprocess.Popen[bytes], command: str) -> list[str]:
    assert writer.stdin is not None and writer.stderr is not None
    writer.stdin.write(command.encode() + b"\n")
    writer.stdin.flush()
    return writer.stderr.readline().decode().split()


def _end(writer: subprocess.Popen[bytes], reader: subprocess.Popen[bytes]) -> None:
    assert writer.stdin is not None
    writer.stdin.close()
    writer.wait(timeout=120)
    reader.wait(timeout=120)


def one_run(tool: list[str], grep: str, mb: float) -> tuple[float, float, float]:
    """(report delay s, writer's s through the tool, writer's s through grep)."""
    writer, reader = _pipeline(tool)
    assert reader.stdout is not None
    drain = Drain(reader.stdout.fileno())
    drain.start()
    # Echo on: the tool is up and reading once the boot's first lines come back (its
    # start-up is timed by bench.py, not here).
    deadline = time.monotonic() + 60
    while drain.first_at is None and time.monotonic() < deadline:
        time.sleep(0.001)
    t0 = float(_say(writer, "pool")[1])
    deadline = time.monotonic() + 60
    while drain.report_at is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    if drain.report_at is None:
        raise SystemExit("no report within 60 s of the pool line")
    delay_s = drain.report_at - t0
    ours_s = float(_say(writer, f"bulk {mb}")[1])
    _end(writer, reader)
    g_writer, g_reader = _pipeline([grep, "-E", "Running: [0-9]+ reqs"])
    assert g_reader.stdout is not None
    Drain(g_reader.stdout.fileno()).start()
    _say(g_writer, "pool")
    grep_s = float(_say(g_writer, f"bulk {mb}")[1])
    _end(g_writer, g_reader)
    return delay_s, ours_s, grep_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--mb", type=float, default=20.0, help="megabytes of serving lines per run")
    args = ap.parse_args()
    exe = shutil.which("vllm-logread", path=str(Path(sys.executable).parent))
    tool = [exe] if exe else [sys.executable, "-m", "vllm_logread"]
    tool += ["--prompt", "512", "--output", "128"]
    grep = shutil.which("grep") or "grep"
    runs = [one_run(tool, grep, args.mb) for _ in range(args.runs)]
    delays_ms = [r[0] * 1000 for r in runs]
    ratios = [r[1] / r[2] for r in runs]
    load = os.getloadavg()[0]
    print(
        f"Live pipe ({args.runs} runs, {args.mb:g} MB of serving lines each; "
        f"load average {load:.1f} on {os.cpu_count()} cores):"
    )
    print()
    print("| figure | median | best | worst |")
    print("|---|---|---|---|")
    print(
        f"| report after the pool line | {statistics.median(delays_ms):.1f} ms "
        f"| {min(delays_ms):.1f} ms | {max(delays_ms):.1f} ms |"
    )
    print(
        f"| writer's time through the tool vs grep -E | {statistics.median(ratios):.2f}x "
        f"| {min(ratios):.2f}x | {max(ratios):.2f}x |"
    )


if __name__ == "__main__":
    main()
