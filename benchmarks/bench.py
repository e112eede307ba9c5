#!/usr/bin/env python3
"""Benchmark: vllm-logread against grep and cat on one large generated log.

Not part of the test run. It writes a serving log with the shared generator
(``shared/tools/genlog.py``, the folder beside this checkout: 12,000,000 lines,
about 1.6 GB, by default) into a temporary folder outside the repository, then
times, on that same file and in one run:

* ``vllm-logread FILE --no-echo``: the full text report (boots, pool, users,
  and the load summary over every stats line);
* ``vllm-logread FILE --no-echo --no-stats``: the boot report alone;
* ``grep -E`` for the same line kinds (boot lines and stats lines);
* ``grep -F`` for the boot lines;
* ``cat FILE > /dev/null``: the floor (reading the bytes);
* ``cat FILE | vllm-logread --no-echo``: the full report through a pipe, as
  from a live server (every line counted as it passes).

Each is given as a ratio to ``grep -E`` (the boot report also to ``grep -F``),
with our peak RSS on this file and on one a tenth of its size (flat memory:
within 20%). Start-up is timed as ``vllm-logread --help`` and a report on the
seed sample, each as a ratio to ``python -c "import click"`` (the median of
several runs).

grep's output goes to a file, never to /dev/null: GNU grep notices /dev/null
and stops at the first match, which would time nothing. Every command runs with
Python's byte-code cache allowed (PYTHONDONTWRITEBYTECODE unset) after one
warm-up run, as after ``pip install``: compiling the package's source on every
start would add about 60 ms. Times are the median of the runs, wall clock and
CPU (user + system of the command): on a busy machine the CPU ratio is the
steadier one.

Usage:
    .venv/bin/python benchmarks/bench.py                 # 12M lines, ~1.6 GB
    .venv/bin/python benchmarks/bench.py --lines 1200000 # a quick run
    .venv/bin/python benchmarks/bench.py --markdown out.md
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
SHARED = REPO.parent / "shared"
SEED_SAMPLE = REPO / "sample_logs" / "seed_qwen3-8b_l4.log"
GREP_E = r"KV cache size|Maximum concurrency|blocks:|Running: [0-9]+ reqs"
GREP_F = ("KV cache size", "Maximum concurrency", "blocks:")
TIME_V = "/usr/bin/time"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# Done-when limits of the performance issue.
LIMITS = {
    "full_vs_grep_e": 2.0,
    "boot_vs_grep_f": 1.5,
    "peak_rss_mib": 100.0,
    "rss_flat_pct": 20.0,
    "help_vs_click": 2.0,
    "seed_vs_click": 3.0,
}


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


def generate(path: Path, lines: int, genlog: Path) -> None:
    print(f"generating {lines:,} lines -> {path} ...", file=sys.stderr, flush=True)
    with open(path, "wb") as out:
        subprocess.run([sys.executable, str(genlog), str(lines)], stdout=out, check=True)


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
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared/ folder")
    ap.add_argument("--tool", default=None, help="the vllm-logread executable")
    ap.add_argument("--workdir", type=Path, default=None, help="where to write the logs")
    ap.add_argument("--keep", action="store_true", help="keep the generated logs")
    ap.add_argument("--markdown", type=Path, default=None, help="also write the table here")
    args = ap.parse_args(argv)

    tool = find_tool(args.tool)
    genlog = args.shared / "tools" / "genlog.py"
    if not genlog.exists():
        sys.exit(f"{genlog}: not found (pass --shared PATH)")
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
                generate(path, n, genlog)
        size_b = big.stat().st_size
        warm(big)
        r = args.reps
        grep_f = ["grep", "-F"] + [a for p in GREP_F for a in ("-e", p)]
        print("timing on the large log ...", file=sys.stderr, flush=True)
        # Interleave the commands' repetitions so that a burst of load on the
        # machine does not land on one command only.
        cmds = {
            "full": ([tool, str(big), "--no-echo"], True),
            "boot": ([tool, str(big), "--no-echo", "--no-stats"], True),
            "grep_e": (["grep", "-E", GREP_E, str(big)], False),
            "grep_f": ([*grep_f, str(big)], False),
            "cat": (["cat", str(big)], False),
            # The same log through a pipe, as from a live server: a pipe's
            # bytes are gone once read, so every line is counted as it passes
            # (a file's are counted again from the file only where numbered).
            # Its CPU includes cat's.
            "pipe": (["sh", "-c", 'cat "$1" | "$2" --no-echo', "sh", str(big), tool], False),
        }
        runs: dict[str, Run] = {}
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
        warm(small)
        small_full = run(
            "full_small", [tool, str(small), "--no-echo"], reps=1, stdout=out, rss=True
        )
        print("timing start-up ...", file=sys.stderr, flush=True)
        s = args.startup_reps
        for warm_up in ([tool, "--help"], [tool, str(SEED_SAMPLE), "--no-echo"]):
            subprocess.run(warm_up, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        click_run = run("click", [sys.executable, "-c", "import click"], reps=s)
        help_run = run("help", [tool, "--help"], reps=s)
        seed_run = run("seed", [tool, str(SEED_SAMPLE), "--no-echo"], reps=s, ok_codes=(0, 3))
    finally:
        if not args.keep:
            for p in (big, small, out):
                p.unlink(missing_ok=True)
            if args.workdir is None:
                shutil.rmtree(workdir, ignore_errors=True)

    ge, gf = runs["grep_e"], runs["grep_f"]
    full, boot = runs["full"], runs["boot"]
    rss_big, rss_small = full.peak_rss_kib, small_full.peak_rss_kib
    flat_pct = (
        None
        if not rss_big or not rss_small
        else 100.0 * abs(rss_big - rss_small) / max(rss_small, 1)
    )
    grep_version = subprocess.run(["grep", "--version"], capture_output=True, text=True)
    lines = [
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{grep_version.stdout.splitlines()[0]}, LANG={os.environ.get('LANG', '')}.",
        f"Input: {args.lines:,} lines, {size_b / 1e9:.2f} GB (genlog.py), page cache warm; "
        f"median of {r} runs.",
        "",
        "| command | wall | CPU | wall vs grep -E | CPU vs grep -E | peak RSS |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]

    def row(label: str, x: Run) -> str:
        rss = _mib(x.peak_rss_kib) if x.peak_rss_kib else ""
        return (
            f"| {label} | {x.wall:.2f} s | {x.cpu:.2f} s | {_x(x.wall, ge.wall)} "
            f"| {_x(x.cpu, ge.cpu)} | {rss} |"
        )

    lines += [
        row("`vllm-logread FILE --no-echo` (full report)", full),
        row("`vllm-logread FILE --no-echo --no-stats` (boot report)", boot),
        row(f"`grep -E '{GREP_E}'`", ge),
        row("`grep -F -e 'KV cache size' -e 'Maximum concurrency' -e 'blocks:'`", gf),
        row("`cat FILE > /dev/null`", runs["cat"]),
        row("`cat FILE | vllm-logread --no-echo` (full report through a pipe)", runs["pipe"]),
        "",
        f"Flat memory: peak RSS {_mib(rss_big)} on {args.lines:,} lines, "
        f"{_mib(rss_small)} on {small_lines:,} lines"
        + ("" if flat_pct is None else f" ({flat_pct:.0f}% apart)."),
        "",
        f"Start-up (median of {s} runs; byte code cached):",
        "",
        "| command | wall | CPU | wall vs import click | CPU vs import click |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for label, x in (
        ("`python -c 'import click'`", click_run),
        ("`vllm-logread --help`", help_run),
        (f"`vllm-logread {SEED_SAMPLE.relative_to(REPO)} --no-echo`", seed_run),
    ):
        lines.append(
            f"| {label} | {x.wall * 1000:.0f} ms | {x.cpu * 1000:.0f} ms "
            f"| {_x(x.wall, click_run.wall)} | {_x(x.cpu, click_run.cpu)} |"
        )
    checks = [
        ("full report / grep -E", full, ge, "full_vs_grep_e"),
        ("boot report / grep -F", boot, gf, "boot_vs_grep_f"),
        ("--help / import click", help_run, click_run, "help_vs_click"),
        ("seed report / import click", seed_run, click_run, "seed_vs_click"),
    ]
    lines += ["", "| target | wall | CPU | limit |", "| --- | ---: | ---: | ---: |"]
    for label, a, b, key in checks:
        lines.append(f"| {label} | {_x(a.wall, b.wall)} | {_x(a.cpu, b.cpu)} | {LIMITS[key]:g}x |")
    lines.append(
        f"| peak RSS, large log | {(rss_big or 0) / 1024:.0f} MiB | | "
        f"{LIMITS['peak_rss_mib']:g} MiB |"
    )
    lines.append(
        f"| peak RSS, large vs small log | {flat_pct or 0.0:.0f}% | | {LIMITS['rss_flat_pct']:g}% |"
    )
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
