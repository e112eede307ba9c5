#!/usr/bin/env python3
"""A long fuzz run of the CLI over damaged real vLLM logs (not part of the default tests).

Each input is a real log (sample_logs/, and ../shared/real_logs/ when it is
there) damaged by the seeded mutators of tests/strategies.py: lines spliced,
truncated, glued and hard-wrapped; numbers swapped for 10,000-digit ones,
negatives, nan and inf; ANSI, NUL and CR inserted; UTF-16 with a BOM. One in
twenty inputs is plain garbage bytes. Every input is read by the CLI in-process
(``vllm-logread - --json``, one in five also in text mode) and checked:

* no exception escapes but SystemExit (a LogReadError escaping the CLI is
  counted apart: the library's own error, still not a crash);
* the exit code is one of the README's (0, 1, 3, 4) and stderr has no traceback;
* stdout is one JSON object, and no value in it is unstated: every fact value
  is written in the input (after removing thousands separators and colour
  codes), every summary number is a fact or the documented arithmetic, and
  users x blocks_per_user <= num_blocks (strategies.unstated_values);
* no input takes over --timeout seconds (a watchdog kills a stuck worker).

Usage:
    python tools/fuzz.py                      # 100,000 inputs, 2 workers
    python tools/fuzz.py --inputs 5000 --seed 7 --jobs 4
    python tools/fuzz.py --replay 1234 --seed 7   # one input again, verbosely
    python tools/fuzz.py --save-failures DIR  # write each failing input to DIR

Input i of seed s is the same on every run, so a failure is reproduced with
--replay i --seed s. Exit status: 0 when no input failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import signal
import sys
import time
import traceback
from collections import Counter
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import strategies  # noqa: E402  (tests/strategies.py: mutators and the oracle)

DEFAULT_CORPORA = (REPO / "sample_logs", REPO.parent / "shared" / "real_logs")


def load_corpus(dirs: list[Path]) -> tuple[list[bytes], list[bytes]]:
    """(whole logs, every line) of the .log files in ``dirs``, plus the row examples."""
    logs: list[bytes] = []
    for d in dirs:
        if d.is_dir():
            logs.extend(p.read_bytes() for p in sorted(d.glob("*.log")))
    lines = [ln for log in logs for ln in log.splitlines()]
    lines.extend(strategies.seed_log_lines())
    return logs, lines


def make_input(seed: int, index: int, logs: list[bytes], lines: list[bytes]) -> tuple[bytes, bool]:
    """Input ``index`` of run ``seed`` and whether to also read it in text mode."""
    rng = random.Random(seed * 1_000_003 + index)
    text_mode = rng.random() < 0.2
    if rng.random() < 0.05:
        size = rng.choice((0, 1, 17, 4096, 70_000))
        data = bytes(rng.randrange(256) for _ in range(size))
        if rng.random() < 0.3:
            data = rng.choice((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")) + data
        return data, text_mode
    base = logs[rng.randrange(len(logs))]
    return strategies.mutate_log(rng, base, lines, max_mutations=8), text_mode


def check_input(data: bytes, text_mode: bool) -> tuple[list[tuple[str, str]], float]:
    """Read ``data`` with the CLI; return (category, detail) for each problem, and
    the seconds the CLI took (the checks after it are not counted)."""
    from click.testing import CliRunner

    from vllm_logread.cli.commands import main
    from vllm_logread.errors import LogReadError

    problems: list[tuple[str, str]] = []
    cli_s = 0.0
    runs = [["-", "--json"]] + ([["-", "--no-echo"]] if text_mode else [])
    for args in runs:
        start = time.perf_counter()
        result = CliRunner().invoke(main, args, input=data, catch_exceptions=True)
        cli_s = max(cli_s, time.perf_counter() - start)
        exc = result.exception
        if exc is not None and not isinstance(exc, SystemExit):
            kind = "log_read_error" if isinstance(exc, LogReadError) else "exception"
            assert result.exc_info is not None
            tb = "".join(traceback.format_exception(*result.exc_info))
            problems.append((kind, tb[-3000:]))
            continue
        if result.exit_code not in (0, 1, 3, 4):
            problems.append(
                ("exit_code", f"{args}: exit {result.exit_code}: {result.stderr[-500:]}")
            )
        if "Traceback" in result.stderr or "Traceback" in result.stdout:
            problems.append(("traceback_text", result.stderr[-3000:]))
        if args[-1] != "--json":
            continue
        try:
            obj = json.loads(result.stdout)
        except ValueError as err:
            problems.append(("not_json", f"{err}: {result.stdout[:300]!r}"))
            continue
        if not isinstance(obj, dict):
            problems.append(("not_json", f"not an object: {result.stdout[:300]!r}"))
            continue
        for p in strategies.unstated_values(data, obj):
            problems.append(("unstated_value", p))
    return problems, cli_s


def _worker(conn: Connection, seed: int, corpora: list[str]) -> None:
    logs, lines = load_corpus([Path(c) for c in corpora])
    while True:
        index = conn.recv()
        if index is None:
            return
        data, text_mode = make_input(seed, index, logs, lines)
        try:
            problems, cli_s = check_input(data, text_mode)
        except BaseException as err:  # noqa: BLE001 - the harness itself must survive
            problems, cli_s = [("harness", repr(err))], 0.0
        conn.send((index, cli_s, problems, len(data)))


class Pool:
    """Workers fed one input index at a time; a worker silent past the timeout
    is killed, its input counted as a hang, and a new worker takes its place."""

    def __init__(self, jobs: int, seed: int, corpora: list[str], timeout_s: float) -> None:
        self.ctx = mp.get_context("fork")
        self.seed, self.corpora, self.timeout_s = seed, corpora, timeout_s
        self.workers: list[tuple[Any, Connection]] = [self._start() for _ in range(jobs)]

    def _start(self) -> tuple[Any, Connection]:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child, self.seed, self.corpora), daemon=True)
        proc.start()
        child.close()
        return proc, parent

    def run(self, indices: range, on_result: Any) -> None:
        pending = iter(indices)
        busy: dict[int, tuple[int, float]] = {}  # worker slot -> (input index, start)
        for slot in range(len(self.workers)):
            self._send(slot, pending, busy)
        while busy:
            conns = {self.workers[s][1]: s for s in busy}
            ready = wait(list(conns), timeout=0.2)
            for conn in ready:
                slot = conns[conn]  # type: ignore[index]
                try:
                    result = conn.recv()  # type: ignore[union-attr]
                except EOFError:  # the worker died (killed by the OS?)
                    index, _ = busy.pop(slot)
                    on_result((index, 0.0, [("worker_died", "worker process exited")], 0))
                    self.workers[slot] = self._start()
                else:
                    busy.pop(slot)
                    on_result(result)
                self._send(slot, pending, busy)
            now = time.perf_counter()
            for slot, (index, start) in list(busy.items()):
                # The CLI's own time is measured in the worker; this kill
                # (with room for the checks after it) ends a real hang.
                if now - start > 4 * self.timeout_s + 10:
                    proc, conn = self.workers[slot]
                    proc.kill()
                    proc.join()
                    conn.close()
                    busy.pop(slot)
                    on_result((index, now - start, [("hang", f"over {self.timeout_s} s")], 0))
                    self.workers[slot] = self._start()
                    self._send(slot, pending, busy)

    def _send(self, slot: int, pending: Any, busy: dict[int, tuple[int, float]]) -> None:
        index = next(pending, None)
        if index is None:
            return
        self.workers[slot][1].send(index)
        busy[slot] = (index, time.perf_counter())

    def close(self, *, kill: bool = False) -> None:
        for proc, conn in self.workers:
            if kill:
                proc.kill()
            try:
                conn.send(None)
            except OSError:
                pass
            proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=100_000, help="how many inputs (default 100,000)")
    ap.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds one input may take")
    ap.add_argument(
        "--corpus",
        action="append",
        type=Path,
        help="a folder of .log files (repeatable; default sample_logs and ../shared/real_logs)",
    )
    ap.add_argument("--replay", type=int, default=None, help="rerun one input index and show it")
    ap.add_argument("--save-failures", type=Path, default=None, help="write failing inputs here")
    args = ap.parse_args(argv)
    corpora = [str(c) for c in (args.corpus or DEFAULT_CORPORA) if Path(c).is_dir()]
    logs, lines = load_corpus([Path(c) for c in corpora])
    print(f"corpus: {len(logs)} logs, {len(lines):,} lines from {', '.join(corpora)}")

    if args.replay is not None:
        data, text_mode = make_input(args.seed, args.replay, logs, lines)
        print(f"input {args.replay} ({len(data):,} bytes, text mode {text_mode}):")
        print(repr(data[:4000]))
        problems, cli_s = check_input(data, text_mode)
        print(f"the CLI took {cli_s:.3f} s; problems: {problems or 'none'}")
        return 1 if problems else 0

    counts: Counter[str] = Counter()
    failures: list[tuple[int, list[tuple[str, str]]]] = []
    slowest = [0.0, -1]
    total_bytes = 0
    start = time.perf_counter()

    def on_result(result: tuple[int, float, list[tuple[str, str]], int]) -> None:
        nonlocal total_bytes
        index, seconds, problems, size = result
        counts["inputs"] += 1
        total_bytes += size
        if seconds > args.timeout and not problems:
            problems = [("hang", f"{seconds:.2f} s")]
        if seconds > slowest[0]:
            slowest[:] = [seconds, index]
        if problems:
            counts["failed"] += 1
            for kind, _ in problems:
                counts[kind] += 1
            failures.append((index, problems))
            if len(failures) <= 5:
                print(f"FAIL input {index}: {problems[0][0]}: {problems[0][1][:1500]}")
            if args.save_failures is not None:
                args.save_failures.mkdir(parents=True, exist_ok=True)
                data, _ = make_input(args.seed, index, logs, lines)
                (args.save_failures / f"seed{args.seed}_{index}.log").write_bytes(data)
        if counts["inputs"] % 10_000 == 0:
            rate = counts["inputs"] / (time.perf_counter() - start)
            print(f"  {counts['inputs']:,} inputs, {counts['failed']:,} failed, {rate:.0f}/s")

    # SIGTERM as Ctrl-C: the workers are ended with the run, never left behind.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    pool = Pool(args.jobs, args.seed, corpora, args.timeout)
    try:
        pool.run(range(args.inputs), on_result)
    except BaseException:
        pool.close(kill=True)
        raise
    pool.close()
    elapsed = time.perf_counter() - start
    print(
        f"{counts['inputs']:,} inputs ({total_bytes / 1e6:,.1f} MB) in {elapsed:,.0f} s "
        f"({counts['inputs'] / elapsed:,.0f}/s, {args.jobs} workers); slowest input "
        f"{slowest[1]} took {slowest[0]:.2f} s"
    )
    summary = {k: v for k, v in counts.items() if k not in ("inputs",)}
    print(f"failed inputs: {counts['failed']:,}; by kind: {summary or 'none'}")
    if failures:
        print(
            f"first failing inputs: {[i for i, _ in failures[:20]]} (--replay I --seed {args.seed})"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
