#!/usr/bin/env python3
"""Benchmark: vllm-logread against grep and cat on a large generated log, and its memory.

Not part of the test run. It writes a serving log with ``benchmarks/genlog.py``
(12,000,000 lines, about 1.6 GB, by default) and one a tenth of its size into a
temporary folder outside the repository, then times, on the large file and in
one run (the commands' repetitions interleaved):

* ``vllm-logread FILE --no-echo``: the full text report (boots, pool, users,
  and the load summary over every stats line);
* ``vllm-logread FILE --json``: the same as one JSON document (the load folded);
* ``vllm-logread FILE --no-echo --no-stats``: the boot report alone;
* ``grep -E`` for the same line kinds (boot lines and stats lines), and
  ``grep -F`` for the boot lines;
* ``cat FILE > /dev/null``: the floor (reading the bytes);
* ``cat FILE | vllm-logread --no-echo``: the full report through a pipe, as
  from a live server (every line counted as it passes), against
  ``cat FILE | grep -E`` in the same run;
* the floor of any reader written in Python, three few-line programs: reading
  the file in the tool's 1 MiB chunks; that and ``re`` finding the stats
  line's marker in each chunk (the least a regex reader can do: one pass of
  CPython's regex engine over every byte); that and the stats line's values
  (the tool's own regex, ``STATS_FAST``). What the report does beyond the
  last is the fold of the values and everything else.

Each is given as a ratio to ``grep -E`` (the pipe to grep's pipe), ``--json``
also to the text report. Peak RSS is measured for every output mode (text,
``--json``, ``--format csv/markdown/github``, the pipe) on both logs: memory
must not grow with the log. Start-up is timed as ``vllm-logread --help`` and a
report on the seed sample, each as a ratio to ``python -c "import click"``.

grep's output goes to a file, never to /dev/null: GNU grep notices /dev/null
and stops at the first match, which would time nothing. Every command runs with
Python's byte-code cache allowed (PYTHONDONTWRITEBYTECODE unset) after one
warm-up run, as after ``pip install``: compiling the package's source on every
start would add about 0.1 s. Times are the median of the runs, wall clock and
CPU (user + system of the command and its children): on a busy machine the CPU
ratio is the steadier one.

Usage:
    .venv/bin/python benchmarks/bench.py                 # 12M lines, ~1.6 GB
    .venv/bin/python benchmarks/bench.py --lines 1200000 # a quick run
    .venv/bin/python benchmarks/bench.py --markdown out.md
    .venv/bin/python benchmarks/bench.py --only startup  # start-up alone, no large log
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GENLOG = Path(__file__).resolve().with_name("genlog.py")
SEED_SAMPLE = REPO / "sample_logs" / "seed_qwen3-8b_l4.log"
GREP_E = r"KV cache size|Maximum concurrency|blocks:|Running: [0-9]+ reqs"
GREP_F = ("KV cache size", "Maximum concurrency", "blocks:")
TIME_V = "/usr/bin/time"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# Done-when limits of the performance issues (the last: issue 35).
LIMITS = {
    "full_vs_grep_e": 1.2,
    "pipe_vs_grep_e": 1.3,
    "pure_vs_grep_e": 1.6,
    "json_vs_text": 1.2,
    "boot_vs_grep_f": 1.5,
    "json_rss_mib": 50.0,
    "rss_flat_pct": 10.0,
    "help_vs_click": 1.2,
    "seed_vs_click": 3.0,
}


# Output modes whose peak RSS is held flat: (name, arguments after FILE).
MODES = (
    ("text", ["--no-echo"]),
    ("json", ["--json"]),
    ("csv", ["--format", "csv"]),
    ("markdown", ["--format", "markdown"]),
    ("github", ["--format", "github"]),
)


@dataclass
class Run:
    """One command's timings over its repetitions."""

    name: str
    wall_s: list[float]
    cpu_s: list[float]
    peak_rss_kib: int | None

    @property
    def wall(self) -> float:
        return statistics.median(self.wall_s)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_s)


def _rss_wrapper(argv: list[str]) -> list[str]:
    """A command that runs ``argv`` and reports its peak RSS on stderr's last line.

    ``/usr/bin/time -v`` when present; else a small Python parent that reads
    ``getrusage(RUSAGE_CHILDREN)`` after its only child ended.
    """
    if os.access(TIME_V, os.X_OK):
        return [TIME_V, "-v", *argv]
    code = (
        "import resource, subprocess, sys\n"
        "rc = subprocess.call(sys.argv[1:])\n"
        "kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "sys.stderr.write(f'\\n\\tMaximum resident set size (kbytes): {kib}\\n')\n"
        "sys.exit(rc)\n"
    )
    return [sys.executable, "-c", code, *argv]


_RSS_LINE = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def run(
    name: str,
    argv: list[str],
    *,
    reps: int,
    stdout: Path | None = None,
    ok_codes: tuple[int, ...] = (0,),
    rss: bool = False,
) -> Run:
    """Time ``argv`` ``reps`` times (wall clock and the child's CPU time)."""
    walls, cpus = [], []
    peak: int | None = None
    for _ in range(reps):
        cmd = _rss_wrapper(argv) if rss else argv
        out = open(stdout, "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, check=False, env=ENV)
        finally:
            if stdout:
                out.close()  # type: ignore[union-attr]
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if proc.returncode not in ok_codes:
            sys.exit(
                f"{name}: exit {proc.returncode}\n{' '.join(argv)}\n"
                + proc.stderr.decode(errors="replace")[-2000:]
            )
        if rss:
            m = _RSS_LINE.search(proc.stderr.decode(errors="replace"))
            if m:
                peak = max(peak or 0, int(m.group(1)))
    return Run(name, walls, cpus, peak)


# The floor programs (see the module's docstring): the tool's chunk size and its
# regexes, nothing else. They run with the package importable (its venv's python).
_FLOOR_READ = """
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
while os.read(fd, 1 << 20):
    pass
"""
_FLOOR_RX = """
import os, re, sys
from vllm_logread.read.stats import STATS_FAST, STATS_MARKER
rx = {rx}
fd = os.open(sys.argv[1], os.O_RDONLY)
n = 0
while b := os.read(fd, 1 << 20):
    n += len(rx.findall(b))
print(n)
"""


# The reference extractor: the least a faithful reader of the stats values does with
# the SIMD library: 4 MiB reads cut at their last newline, each chunk split on the
# stats marker (StringZilla), the values read by one regex over the pieces' heads,
# each distinct values text counted (no times, no order, no boot lines).
_REFERENCE = """
import os, sys
from collections import Counter
from itertools import islice
from operator import itemgetter
import stringzilla as sz
from vllm_logread.read.stats import STATS_MARKER, STATS_SPLIT_VALUES
head = itemgetter(slice(0, 256))
fd = os.open(sys.argv[1], os.O_RDONLY)
counts, tail = Counter(), b""
while b := os.read(fd, 4 << 20):
    if tail:
        b = tail + b
    cut = b.rfind(b"\\n") + 1
    tail = b[cut:]
    pieces = sz.Str(b)[:cut].split(STATS_MARKER)
    counts.update(STATS_SPLIT_VALUES.findall(b"\\0" + b"\\0".join(map(head, islice(pieces, 1, None)))))
print(sum(counts.values()), len(counts))
"""


def _floor_programs(path: str) -> dict[str, list[str]]:
    """The Python floor's three commands and the reference extractor on ``path``."""
    py = sys.executable
    return {
        "py_read": [py, "-c", _FLOOR_READ, path],
        "py_marker": [py, "-c", _FLOOR_RX.format(rx="re.compile(re.escape(STATS_MARKER))"), path],
        "py_stats": [py, "-c", _FLOOR_RX.format(rx="STATS_FAST"), path],
        "reference": [py, "-c", _REFERENCE, path],
    }


def generate(path: Path, lines: int) -> None:
    print(f"generating {lines:,} lines -> {path} ...", file=sys.stderr, flush=True)
    with open(path, "wb") as out:
        subprocess.run([sys.executable, str(GENLOG), str(lines)], stdout=out, check=True)


def warm(path: Path) -> None:
    """Read the file once so every command starts from the page cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 24):
            pass


def find_tool(explicit: str | None) -> str:
    if explicit:
        return explicit
    beside = Path(sys.executable).with_name("vllm-logread")
    if beside.exists():
        return str(beside)
    found = shutil.which("vllm-logread")
    if not found:
        sys.exit("vllm-logread not found: pip install -e . in this environment, or pass --tool")
    return found


def _x(a: float, b: float) -> str:
    """a / b as a ratio ("-" when b is too small to divide by)."""
    return f"{a / b:.2f}x" if b > 1e-4 else "-"


def _mib(kib: int | None) -> str:
    return "?" if kib is None else f"{kib / 1024:.0f} MiB"


def _pct_apart(a: int | None, b: int | None) -> float | None:
    """How far apart two peaks are, in percent of the smaller."""
    if not a or not b:
        return None
    return 100.0 * abs(a - b) / min(a, b)


def time_startup(tool: str, reps: int) -> tuple[Run, Run, Run]:
    """``import click``, ``--help`` and the seed report, their runs interleaved."""
    print("timing start-up ...", file=sys.stderr, flush=True)
    seed = [tool, str(SEED_SAMPLE), "--no-echo"]
    for warm_up in ([tool, "--help"], seed):
        subprocess.run(warm_up, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    click_run = Run("click", [], [], None)
    help_run = Run("help", [], [], None)
    seed_run = Run("seed", [], [], None)
    # Interleaved, as the large log's commands are: a burst of load on the machine
    # lands on all three, not on one (the seed report exits 3 when a check fails).
    for _ in range(reps):
        for x, cmd in (
            (click_run, [sys.executable, "-c", "import click"]),
            (help_run, [tool, "--help"]),
            (seed_run, seed),
        ):
            one = run(x.name, cmd, reps=1, ok_codes=(0, 3))
            x.wall_s += one.wall_s
            x.cpu_s += one.cpu_s
    return click_run, help_run, seed_run


def startup_lines(click_run: Run, help_run: Run, seed_run: Run) -> tuple[list[str], list[str]]:
    """The start-up table, and its rows of the limits table."""
    reps = len(click_run.cpu_s)
    lines = [
        f"Start-up (median of {reps} runs, interleaved; byte code cached; the paired column "
        "is the median of each round's CPU ratio):",
        "",
        "| command | wall | CPU | wall vs import click | CPU vs import click | CPU, paired |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, x in (
        ("`python -c 'import click'`", click_run),
        ("`vllm-logread --help`", help_run),
        (f"`vllm-logread {SEED_SAMPLE.relative_to(REPO)} --no-echo`", seed_run),
    ):
        paired = statistics.median(
            a / b if b > 1e-4 else float("inf")
            for a, b in zip(x.cpu_s, click_run.cpu_s, strict=True)
        )
        lines.append(
            f"| {label} | {x.wall * 1000:.0f} ms | {x.cpu * 1000:.0f} ms "
            f"| {_x(x.wall, click_run.wall)} | {_x(x.cpu, click_run.cpu)} | {paired:.2f}x |"
        )
    checks = []
    for label, a, key in (
        ("--help / import click", help_run, "help_vs_click"),
        ("seed report / import click", seed_run, "seed_vs_click"),
    ):
        checks.append(
            f"| {label} | {_x(a.wall, click_run.wall)} | {_x(a.cpu, click_run.cpu)} "
            f"| {LIMITS[key]:g}x |"
        )
    return lines, checks


def _machine_line() -> str:
    load = os.getloadavg()
    return (
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"LANG={os.environ.get('LANG', '')}; "
        f"load average at the end {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} (1, 5, 15 min)."
    )


def startup_only(tool: str, reps: int, markdown: Path | None) -> int:
    """``--only startup``: the start-up section alone, no large log."""
    click_run, help_run, seed_run = time_startup(tool, reps)
    table, checks = startup_lines(click_run, help_run, seed_run)
    lines = [_machine_line(), "", *table, ""]
    lines += ["| target | wall | CPU | limit |", "| --- | ---: | ---: | ---: |", *checks]
    text = "\n".join(lines)
    print(text)
    if markdown:
        markdown.write_text(text + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=12_000_000, help="lines of the large log")
    ap.add_argument(
        "--small-lines",
        type=int,
        default=None,
        help="lines of the small log for the flat-memory check (default: a tenth)",
    )
    ap.add_argument("--reps", type=int, default=3, help="runs per command on the large log")
    ap.add_argument("--startup-reps", type=int, default=11, help="runs per start-up command")
    ap.add_argument("--tool", default=None, help="the vllm-logread executable")
    ap.add_argument("--workdir", type=Path, default=None, help="where to write the logs")
    ap.add_argument("--keep", action="store_true", help="keep the generated logs")
    ap.add_argument("--markdown", type=Path, default=None, help="also write the tables here")
    ap.add_argument(
        "--only",
        choices=("startup",),
        default=None,
        help="run one section alone: startup times --help and the seed report (no large log)",
    )
    args = ap.parse_args(argv)

    tool = find_tool(args.tool)
    if args.only == "startup":
        return startup_only(tool, args.startup_reps, args.markdown)
    for exe in ("grep", "cat"):
        if not shutil.which(exe):
            sys.exit(f"{exe}: not found")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vllm-logread-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if workdir.resolve().is_relative_to(REPO):
        sys.exit("--workdir must be outside the repository (generated data stays out of it)")
    big = workdir / f"serving_{args.lines}.log"
    small_lines = args.small_lines or max(args.lines // 10, 1)
    small = workdir / f"serving_{small_lines}.log"
    out = workdir / "out.txt"
    try:
        for path, n in ((big, args.lines), (small, small_lines)):
            if not path.exists():
                generate(path, n)
        size_b = big.stat().st_size
        small_b = small.stat().st_size
        warm(big)
        r = args.reps
        grep_f = ["grep", "-F"] + [a for p in GREP_F for a in ("-e", p)]
        print("timing on the large log ...", file=sys.stderr, flush=True)
        # The same log through a pipe, as from a live server: a pipe's bytes are
        # gone once read, so every line is counted as it passes (a file's are
        # counted again from the file only where numbered). Its CPU includes cat's,
        # as grep's pipe does.
        pipe = ["sh", "-c", 'cat "$1" | "$2" --no-echo', "sh", str(big), tool]
        # Without the SIMD library (read/simd.py): CPython's search, the same results.
        pure = ["env", "VLLM_LOGREAD_PURE_PYTHON=1", tool, str(big), "--no-echo"]
        pure_pipe = ["sh", "-c", 'cat "$1" | VLLM_LOGREAD_PURE_PYTHON=1 "$2" --no-echo']
        pure_pipe += ["sh", str(big), tool]
        grep_pipe = ["sh", "-c", 'cat "$1" | grep -E "$2"', "sh", str(big), GREP_E]
        floor = _floor_programs(str(big))
        cmds = {
            "full": ([tool, str(big), "--no-echo"], True),
            "json": ([tool, str(big), "--json"], True),
            "boot": ([tool, str(big), "--no-echo", "--no-stats"], True),
            "grep_e": (["grep", "-E", GREP_E, str(big)], False),
            "grep_f": ([*grep_f, str(big)], False),
            "cat": (["cat", str(big)], False),
            "pipe": (pipe, True),
            "grep_pipe": (grep_pipe, False),
            "pure": (pure, True),
            "pure_pipe": (pure_pipe, True),
            **{key: (cmd, False) for key, cmd in floor.items()},
        }
        runs: dict[str, Run] = {}
        # Interleave the commands' repetitions so that a burst of load on the
        # machine does not land on one command only.
        for _ in range(r):
            for key, (cmd, rss) in cmds.items():
                # cat's 1.6 GB go to /dev/null, as its row says (to a file, the
                # writing took 1.2 s); grep's and ours go to a file (see above).
                dest = None if key == "cat" else out
                one = run(key, cmd, reps=1, stdout=dest, rss=rss, ok_codes=(0, 1))
                if key in runs:
                    runs[key].wall_s += one.wall_s
                    runs[key].cpu_s += one.cpu_s
                    if one.peak_rss_kib:
                        runs[key].peak_rss_kib = max(runs[key].peak_rss_kib or 0, one.peak_rss_kib)
                else:
                    runs[key] = one
        print("peak memory per output mode, both logs ...", file=sys.stderr, flush=True)
        peaks: dict[str, tuple[int | None, int | None]] = {}
        warm(small)
        for name, extra in MODES:
            on_big = runs["full" if name == "text" else name] if name in ("text", "json") else None
            big_kib = on_big.peak_rss_kib if on_big is not None else None
            if big_kib is None:
                big_kib = run(
                    name, [tool, str(big), *extra], reps=1, stdout=out, rss=True
                ).peak_rss_kib
            small_kib = run(
                name, [tool, str(small), *extra], reps=1, stdout=out, rss=True
            ).peak_rss_kib
            peaks[name] = (small_kib, big_kib)
        small_pipe = ["sh", "-c", 'cat "$1" | "$2" --no-echo', "sh", str(small), tool]
        peaks["pipe"] = (
            run("pipe", small_pipe, reps=1, stdout=out, rss=True).peak_rss_kib,
            runs["pipe"].peak_rss_kib,
        )
        click_run, help_run, seed_run = time_startup(tool, args.startup_reps)
    finally:
        if not args.keep:
            for p in (big, small, out):
                p.unlink(missing_ok=True)
            if args.workdir is None:
                shutil.rmtree(workdir, ignore_errors=True)

    ge, gf, gp = runs["grep_e"], runs["grep_f"], runs["grep_pipe"]
    full, boot, js, pp = runs["full"], runs["boot"], runs["json"], runs["pipe"]
    pure = runs["pure"]
    grep_version = subprocess.run(["grep", "--version"], capture_output=True, text=True)
    load = os.getloadavg()
    lines = [
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{grep_version.stdout.splitlines()[0]}, LANG={os.environ.get('LANG', '')}; "
        f"load average at the end {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} (1, 5, 15 min).",
        f"Input: {args.lines:,} lines, {size_b / 1e9:.2f} GB (benchmarks/genlog.py), page cache "
        f"warm; median of {r} interleaved runs.",
        "",
        "| command | wall | CPU | wall vs grep -E | CPU vs grep -E | peak RSS |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]

    def row(label: str, x: Run, base: Run = ge) -> str:
        rss = _mib(x.peak_rss_kib) if x.peak_rss_kib else ""
        return (
            f"| {label} | {x.wall:.2f} s | {x.cpu:.2f} s | {_x(x.wall, base.wall)} "
            f"| {_x(x.cpu, base.cpu)} | {rss} |"
        )

    lines += [
        row("`vllm-logread FILE --no-echo` (full report)", full),
        row("`vllm-logread FILE --json` (full report, JSON)", js),
        row("`vllm-logread FILE --no-echo --no-stats` (boot report)", boot),
        row(f"`grep -E '{GREP_E}' FILE`".replace("|", "\\|"), ge),
        row("`grep -F -e 'KV cache size' -e 'Maximum concurrency' -e 'blocks:' FILE`", gf),
        row("`cat FILE > /dev/null`", runs["cat"]),
        row("`cat FILE \\| vllm-logread --no-echo` (vs the grep pipe below)", pp, gp),
        row("`cat FILE \\| grep -E '...'`", gp, gp),
        row("`VLLM_LOGREAD_PURE_PYTHON=1 vllm-logread FILE --no-echo` (no SIMD library)", pure),
        row("the same through a pipe (vs the grep pipe)", runs["pure_pipe"], gp),
        row("reference extractor: SIMD split, one regex, values counted", runs["reference"]),
        row("Python floor: read FILE in 1 MiB chunks", runs["py_read"]),
        row("Python floor: read, and `re` finds the stats marker", runs["py_marker"]),
        row("Python floor: read, and `re` reads the stats values (STATS_FAST)", runs["py_stats"]),
        "",
        f"Peak RSS per output mode, on {small_lines:,} lines ({small_b / 1e6:.0f} MB) and "
        f"{args.lines:,} lines ({size_b / 1e9:.2f} GB):",
        "",
        "| mode | small log | large log | apart |",
        "| --- | ---: | ---: | ---: |",
    ]
    worst_flat = 0.0
    for name, (small_kib, big_kib) in peaks.items():
        apart = _pct_apart(small_kib, big_kib)
        worst_flat = max(worst_flat, apart if apart is not None else float("inf"))
        shown = "?" if apart is None else f"{apart:.0f}%"
        lines.append(f"| {name} | {_mib(small_kib)} | {_mib(big_kib)} | {shown} |")
    startup_table, startup_checks = startup_lines(click_run, help_run, seed_run)
    lines += ["", *startup_table]
    checks = [
        ("full report / grep -E", full, ge, "full_vs_grep_e"),
        ("full report through a pipe / grep -E's pipe", pp, gp, "pipe_vs_grep_e"),
        ("full report without the SIMD library / grep -E", pure, ge, "pure_vs_grep_e"),
        ("--json / the text report", js, full, "json_vs_text"),
        ("boot report / grep -F", boot, gf, "boot_vs_grep_f"),
    ]
    lines += ["", "| target | wall | CPU | limit |", "| --- | ---: | ---: | ---: |"]
    for label, a, b, key in checks:
        lines.append(f"| {label} | {_x(a.wall, b.wall)} | {_x(a.cpu, b.cpu)} | {LIMITS[key]:g}x |")
    lines += startup_checks
    lines.append(
        f"| peak RSS of --json, large log | {(js.peak_rss_kib or 0) / 1024:.0f} MiB | | "
        f"{LIMITS['json_rss_mib']:g} MiB |"
    )
    lines.append(
        f"| peak RSS, large vs small log, worst mode | {worst_flat:.0f}% | | "
        f"{LIMITS['rss_flat_pct']:g}% |"
    )
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
