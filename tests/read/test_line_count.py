"""Line numbers in serving mode: counted as the bytes pass (a pipe), or only
up to the lines that get a number, the rest counted again from the file when
a number is asked for later (``Session.recount``, ``file_recount``).
Both ways give the same numbers as the patterns table."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
import strategies
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vllm_logread.cli.commands import main
from vllm_logread.errors import InputError
from vllm_logread.read import simd
from vllm_logread.read.framing import count_newlines
from vllm_logread.read.scanner import MAX_LINE_BYTES
from vllm_logread.render.text import output_text
from vllm_logread.report.model import Options
from vllm_logread.session.inputs import file_recount
from vllm_logread.session.session import Session

ROOT = Path(__file__).resolve().parents[2]
RISING = (ROOT / "sample_logs" / "load_rising_qwen3-8b_l4.log").read_bytes()
ACCESS = b'(APIServer pid=1) INFO:     10.0.0.1:4000 - "POST /v1/completions HTTP/1.1" 200 OK\n'


def composite() -> bytes:
    """A boot under load (alerts), a quiet stretch, an over-long line, a
    restart (new pids: a second report, numbered far from the last alert),
    its load, and a last line without a newline."""
    second = RISING.replace(b"pid=200", b"pid=300").replace(b"pid=1)", b"pid=2)")
    long = b"(APIServer pid=1) INFO 11-29 10:02:50 [x.py:1] " + b"y" * (MAX_LINE_BYTES * 2)
    return (
        RISING
        + ACCESS * 3000
        + long
        + b"\n"
        + ACCESS * 3000
        + second
        + ACCESS * 500
        + b"(APIServer pid=2) INFO 11-29 10:09:00 [x.py:1] the end, no newline"
    )


def read(
    data: bytes,
    *,
    chunk: int,
    lazy: bool,
    keep_all_facts: bool = False,
    read_stats: bool = True,
) -> tuple[list[tuple[str, int | None, str]], int, list[tuple[int, int]]]:
    """(every output with its line and text, lines read, the recounted ranges)."""
    s = Session("-", Options(), keep_all_facts=keep_all_facts, read_stats=read_stats)
    ranges: list[tuple[int, int]] = []
    if lazy:

        def recount(a: int, b: int) -> int:
            ranges.append((a, b))
            return data.count(b"\n", a, b)

        s.recount = recount
    outs = []
    for i in range(0, len(data), chunk):
        outs += s.feed(data[i : i + chunk])
    outs += s.finish()
    shown = [(o.kind, o.line, output_text(o, echo=False)) for o in outs]
    return shown, s.lines_read, ranges


@pytest.mark.parametrize("chunk", [997, 65_536, 1 << 20])
@pytest.mark.parametrize("read_stats", [True, False])
def test_lazy_and_eager_counts_agree_with_the_patterns_table(chunk: int, read_stats: bool) -> None:
    data = composite()
    lazy = read(data, chunk=chunk, lazy=True, read_stats=read_stats)
    eager = read(data, chunk=chunk, lazy=False, read_stats=read_stats)
    table = read(data, chunk=chunk, lazy=False, keep_all_facts=True, read_stats=read_stats)
    assert lazy[:2] == eager[:2] == table[:2]
    shown, lines, _ = lazy
    assert lines == data.count(b"\n") + 1  # the last line has no newline
    # The second boot starts after the first boot's 52 lines, 6,000 access
    # lines and the over-long one; its pool line is the sample's line 16.
    reports = [(line, text) for kind, line, text in shown if kind == "report"]
    assert len(reports) == 2
    second_pool = data.count(b"\n", 0, data.index(b"pid=300) INFO 11-29 10:00:40 [kv_cache")) + 1
    assert second_pool == 52 + 6001 + 16
    assert f"(line {second_pool})" in reports[1][1]
    if read_stats:
        alerts = [line for kind, line, _ in shown if kind == "alert"]
        assert alerts == [37, 37, 40, 40] + [52 + 6001 + n for n in (37, 37, 40, 40)]


def test_the_lines_after_the_last_number_are_counted_only_when_asked() -> None:
    data = RISING + ACCESS * 20_000  # 1.8 MB: alerts in the first lines only
    s = Session("-", Options(), keep_all_facts=False)
    ranges: list[tuple[int, int]] = []

    def recount(a: int, b: int) -> int:
        ranges.append((a, b))
        return data.count(b"\n", a, b)

    s.recount = recount
    outs = []
    for i in range(0, len(data), 1 << 16):
        outs += s.feed(data[i : i + (1 << 16)])
    outs += s.finish()
    assert [o.line for o in outs if o.kind == "alert"] == [37, 37, 40, 40]
    assert ranges == []  # nothing was counted twice, most not at all
    assert s.lines_read == data.count(b"\n")
    assert len(ranges) == 1 and ranges[0][1] == len(data)


def test_file_recount_reads_the_file_again_from_where_reading_started(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"skip me\n" + b"one\ntwo\nthree\n")
    with path.open("rb", buffering=0) as f:
        f.read(8)  # the caller had read a line before handing the stream over
        recount = file_recount(f, "a.log")
        assert recount is not None
        assert recount(0, 14) == 3 and recount(4, 8) == 1 and recount(0, 0) == 0
        os.truncate(path, 10)  # copytruncate: the bytes are gone
        with pytest.raises(InputError, match=r"^a\.log: the file shrank while it was read"):
            recount(0, 14)


def test_a_pipe_has_no_recount() -> None:
    r, w = os.pipe()
    try:
        with os.fdopen(r, "rb", buffering=0) as f:
            assert file_recount(f) is None
    finally:
        os.close(w)


def test_a_file_and_the_same_bytes_through_a_pipe_print_the_same(tmp_path: Path) -> None:
    data = composite()
    path = tmp_path / "day.log"
    path.write_bytes(data)
    runner = CliRunner()
    # A file gives each boot (--all-boots) once, after its last line, labelled "boot k
    # of 2"; a pipe reports each boot when it comes ("boot 2"): the lines each cites
    # and every alert are the same, in the same order.
    from_file = runner.invoke(main, [str(path), "--no-echo", "--all-boots"], catch_exceptions=False)
    from_pipe = runner.invoke(main, ["--no-echo"], input=data, catch_exceptions=False)
    assert from_file.exit_code == from_pipe.exit_code == 0

    def cited(text: str) -> list[str]:
        return [
            line.replace(str(path), "-").replace("<stdin>", "-")
            for line in text.splitlines()
            if "line " in line and not line.startswith("== vllm-logread (boot")
        ]

    assert cited(from_file.stdout) == cited(from_pipe.stdout)
    assert len(cited(from_file.stdout)) >= 10
    assert f"line {52 + 6001 + 40}]" in from_file.stdout  # the second boot's last alert
    assert from_file.stdout.count("== vllm-logread (boot ") == 2
    # Without --all-boots a file gives the boot that runs at the end, and says so.
    last = runner.invoke(main, [str(path), "--no-echo"], catch_exceptions=False)
    assert last.stdout.count("== vllm-logread (boot 2 of 2): 37 users fit") == 1
    assert last.stdout.count("== vllm-logread") - last.stdout.count("== vllm-logread load") == 1
    assert "holds 2 boots: the report is of boot 2" in last.stderr


def test_a_file_whose_last_lines_were_never_counted_is_reported(tmp_path: Path) -> None:
    """The lines after the last alert stay uncounted to the end: the exit code's
    reasons are worded after the file is closed, and never ask for them."""
    path = tmp_path / "day.log"
    path.write_bytes(RISING + ACCESS * 20_000)  # 1.8 MB: more than one read
    result = CliRunner().invoke(main, [str(path), "--no-echo"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""


SAMPLES = sorted((ROOT / "sample_logs").glob("*.log"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=70_000))
def test_damaged_logs_number_their_lines_the_same_either_way(
    rng: random.Random, chunk: int
) -> None:
    """Any sample, damaged (spliced, truncated, glued, wrapped lines, long
    lines, no final newline...), under load and restarted: lazy counting
    from the "file" gives what counting every byte gives."""
    base = SAMPLES[rng.randrange(len(SAMPLES))].read_bytes()
    tail = RISING if rng.random() < 0.5 else b""
    data = strategies.mutate_log(
        rng, base + ACCESS * rng.randrange(2000) + tail, strategies.seed_log_lines()
    )
    lazy = read(data, chunk=chunk, lazy=True)
    eager = read(data, chunk=chunk, lazy=False)
    assert lazy[:2] == eager[:2]


def test_a_buffer_with_a_numbered_line_is_counted_through() -> None:
    """V0 prints a warning per preemption, each numbered: a buffer where a
    line was numbered is counted to its end at once, so a log that numbers a
    line in every buffer is never read twice."""
    v0 = (ROOT / "sample_logs" / "era_0_7_2_v0.log").read_bytes()
    warning = v0.splitlines(keepends=True)[-1]  # "... is preempted by ..." (a V0 warning)
    assert b"is preempted by" in warning
    data = v0 + (ACCESS * 20 + warning) * 400
    chunk = 4096  # a warning every ~1.8 KB: one or more in every buffer
    lazy = read(data, chunk=chunk, lazy=True)
    eager = read(data, chunk=chunk, lazy=False)
    assert lazy[:2] == eager[:2]
    assert sum(b - a for a, b in lazy[2]) <= chunk


# -- count_newlines: bytes.replace's memchr count, the edges by bytes.count -------


SPLITTERS = [
    pytest.param(True, id="simd", marks=pytest.mark.skipif(not simd.SIMD, reason="no wheel")),
    pytest.param(False, id="pure-python"),
]


@pytest.mark.parametrize("use_simd", SPLITTERS)
def test_count_newlines_by_hand(use_simd: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simd, "SIMD", use_simd)  # StringZilla's count, or CPython's
    # 2,000 access lines of 83 bytes each: 166,000 bytes, 2,000 newlines (the memchr
    # path: over 64 KiB, lines over 48 bytes); the first line's 83 bytes left out
    # leave 1,999, and the last line's newline too leaves 1,998.
    buf = ACCESS * 2000
    assert len(ACCESS) == 83 and len(buf) == 166_000
    assert count_newlines(buf) == 2000
    assert count_newlines(buf, 83) == 1999
    assert count_newlines(buf, 83, 166_000 - 1) == 1998
    assert count_newlines(buf, 83, 10**9) == 1999  # (an end past the buffer: its end)
    # 100,000 lines of 3 bytes (the bytes.count path: lines under 48 bytes): 100,000.
    assert count_newlines(b"ab\n" * 100_000) == 100_000
    assert count_newlines(b"") == 0


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.integers(0, 300), min_size=0, max_size=3000),
    cut=st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
def test_count_newlines_is_bytes_count_on_every_range(
    lines: list[int], cut: tuple[float, float]
) -> None:
    """Lines of any lengths (short ones take bytes.count, long ones bytes.replace,
    or StringZilla's count: read/simd.py), any range of them, also mid-line: the
    same count as bytes.count."""
    buf = b"".join(b"x" * n + b"\n" for n in lines) + b"tail"
    a, b = sorted(int(f * len(buf)) for f in cut)
    saved = simd.SIMD
    try:
        for use_simd in {saved, False}:
            simd.SIMD = use_simd
            assert count_newlines(buf, a, b) == buf.count(b"\n", a, b)
            assert count_newlines(buf, a) == buf.count(b"\n", a)
            assert count_newlines(buf) == buf.count(b"\n")
    finally:
        simd.SIMD = saved
