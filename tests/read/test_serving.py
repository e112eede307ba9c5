"""Serving mode's fast reading of the stats lines (ServingReader.serve and
LoadWatch.add_batch) against the patterns table, and the load's span."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from strategies import STATS_MESSAGES

from vllm_logread.read import serving, simd
from vllm_logread.read.serving import ServingReader, hand_back
from vllm_logread.read.stats import header_seconds
from vllm_logread.render.text import summary_text
from vllm_logread.report.model import Options
from vllm_logread.session.session import Session
from vllm_logread.session.watch import Estimate, LoadSummary, LoadWatch, Point

ROOT = Path(__file__).resolve().parents[2]
RISING = (ROOT / "sample_logs" / "load_rising_qwen3-8b_l4.log").read_bytes()
# The rising sample's boot (Qwen3-8B on an L4, 0.32: 37 to 41 users of 512+128).
BOOT = RISING[: RISING.index(b"\n", RISING.index(b"Starting vLLM server")) + 1]
API = b"(APIServer pid=1) INFO "


@pytest.fixture(
    autouse=True,
    params=[
        pytest.param(True, id="simd", marks=pytest.mark.skipif(not simd.SIMD, reason="no wheel")),
        pytest.param(False, id="pure-python"),
    ],
)
def splitter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Every test here runs with StringZilla's search and with CPython's (read/simd.py)."""
    monkeypatch.setattr(simd, "SIMD", request.param)
    return bool(request.param)


def stamp(s: int) -> bytes:
    """A header time ``s`` seconds after 11-29 10:00:00."""
    return b"11-29 %02d:%02d:%02d" % (10 + s // 3600, s // 60 % 60, s % 60)


def stats(
    time: bytes | None,
    running: int,
    waiting: int,
    kv: float,
    *,
    head: bytes = API,
    label: bytes = b"Engine 000: ",
    source: bytes = b"[loggers.py:257] ",
) -> bytes:
    when = b"" if time is None else time + b" "
    return (
        head
        + when
        + source
        + label
        + b"Avg prompt throughput: 12.5 tokens/s, Avg generation throughput: 345.6 tokens/s, "
        + b"Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, "
        % (running, waiting, kv)
        + b"Prefix cache hit rate: 10.0%\n"
    )


def busy_log(lines: int, seed: int = 3) -> bytes:
    """BOOT, then access lines and a stats line in twenty, KV usage walking
    between empty and full (alerts, falls at a full pool)."""
    rnd = random.Random(seed)
    out, running = [BOOT], 0
    for i in range(lines):
        if rnd.random() < 0.05:
            running = max(0, min(40, running + rnd.randint(-4, 5)))
            kv = min(99.9, running * 2.5 + rnd.random() * 2)
            out.append(stats(stamp(60 + i // 20), running, rnd.randint(0, 3) if kv > 95 else 0, kv))
        else:
            out.append(
                b'(APIServer pid=1) INFO:     10.0.0.1:4000 - "POST /v1/completions" 200 OK\n'
            )
    return b"".join(out)


Shown = list[tuple[str, "int | None", str]]


def read(
    data: bytes, *, keep_all_facts: bool, chunk: int, csv: list[tuple[Any, ...]] | None = None
) -> tuple[Shown, LoadSummary | None, int, int]:
    """(alerts and summaries, the load, lines read, chunks read at once)."""
    s = Session(
        "-",
        Options(),
        keep_all_facts=keep_all_facts,
        on_stats=None if csv is None else (lambda *row: csv.append(row)),
    )
    at_once = 0
    serve_chunk, serve_split = ServingReader._serve_chunk, ServingReader._serve_split

    def counting(self: ServingReader[Any], buf: bytes, start: int, stop: int) -> Any:
        nonlocal at_once
        out = serve_chunk(self, buf, start, stop)
        at_once += out is not None and stop - start > 1000
        return out

    def counting_split(
        self: ServingReader[Any], buf: bytes, start: int, stop: int, layout: Any
    ) -> Any:
        nonlocal at_once
        out = serve_split(self, buf, start, stop, layout)
        at_once += out is not None and stop - start > 1000
        return out

    ServingReader._serve_chunk = counting  # type: ignore[method-assign]
    ServingReader._serve_split = counting_split  # type: ignore[method-assign]
    try:
        outs = []
        for a in range(0, len(data), chunk):
            outs += s.feed(data[a : a + chunk])
        outs += s.finish()
    finally:
        ServingReader._serve_chunk = serve_chunk  # type: ignore[method-assign]
        ServingReader._serve_split = serve_split  # type: ignore[method-assign]
    shown = [(o.kind, o.line, o.text) for o in outs if o.kind in ("alert", "summary", "warning")]
    return shown, s.load_of(s.last_boot), s.lines_read, at_once


def test_a_busy_log_read_a_chunk_at_once_gives_what_the_patterns_table_gives() -> None:
    data = busy_log(6000)
    fast = read(data, keep_all_facts=False, chunk=16384)
    slow = read(data, keep_all_facts=True, chunk=16384)
    assert fast[3] >= 20  # most chunks were read at once (the whole log: 40 chunks)
    assert slow[3] == 0
    assert fast[:3] == slow[:3]
    shown, load = fast[0], fast[1]
    assert load is not None and load.num_stats_lines == data.count(b"Avg prompt throughput")
    assert sum(kind == "alert" for kind, _, _ in shown) >= 5
    # Every alert names the line it came from: its time and its figures.
    lines = data.split(b"\n")
    for kind, number, text in shown:
        if kind == "alert":
            assert number is not None and f"line {number}]" in text
            line = lines[number - 1]
            time = text[text.index("[") + 1 : text.index(",")]
            assert line.startswith(API + time.encode() + b" [loggers.py:257]")
            if "crossed" in text:
                kv, running = text.split(": ")[-1].split("% with ")
                assert b"usage: %s%%" % kv.encode() in line
                assert b"Running: %s reqs" % running.split()[0].encode() in line


# Stats lines of every head serving mode may meet: another process,
# data-parallel labels (read in place and by the regex), an aggregated line, a
# four-digit label, no time, fractional seconds, colour codes, a month 13, a
# header before the usual one, a line the fast regex does not read (0.32's
# "KV fetch"), V0's wording and V0's preemption warning.
ODD_LINES = [
    stats(stamp(0), 1, 0, 10.0, label=b"Engine 001: "),
    stats(stamp(1), 2, 0, 91.0, head=b"(APIServer pid=7) INFO "),
    stats(stamp(2), 3, 1, 96.0, label=b"2 Engines Aggregated: "),
    stats(stamp(3), 4, 0, 20.0, label=b"Engine 1000: "),
    stats(None, 5, 2, 97.0),
    stats(stamp(4) + b",123", 6, 0, 30.0),
    b"\x1b[32m" + stats(stamp(5), 7, 0, 40.0),
    stats(stamp(6), 8, 0, 50.0, label=b""),
    stats(b"13-01 10:00:06", 8, 0, 96.0),  # not a date: a time, but no seconds
    b"INFO 11-29 09:59:59 [x.py:1] " + stats(stamp(6), 8, 0, 60.0),  # its header comes first
    API
    + stamp(7)
    + b" [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation "
    b"throughput: 1.0 tokens/s, Running: 9 reqs, Waiting: 0 reqs, KV fetch: 1 waiting to start, "
    b"0 in progress, 0 completed waiting, Preemptions: 4, GPU KV cache usage: 99.0%\n",
    API
    + stamp(8)
    + b" [metrics.py:345] Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 "
    b"tokens/s, Running: 10 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 98.5%, "
    b"CPU KV cache usage: 0.0%.\n",
    b"WARNING "
    + stamp(9)
    + b" scheduler.py:1560] Sequence group cmpl-1-0 is preempted by PreemptionMode.RECOMPUTE "
    b"mode because there is not enough KV cache space. total_num_cumulative_preemption=51\n",
]


@pytest.mark.parametrize("chunk", [7, 997, 16384])
def test_odd_heads_and_wordings_between_busy_chunks(chunk: int) -> None:
    """Odd lines among runs of usual ones: the chunk regex gives way to the
    line-by-line reading and comes back; both agree with the patterns table."""
    rnd = random.Random(5)
    body = []
    for i in range(400):
        body.append(stats(stamp(100 + i), rnd.randint(30, 40), rnd.randint(0, 2), 90 + i % 10))
        body.append(stats(stamp(100 + i), rnd.randint(30, 40), 0, 93.0, label=b"Engine 001: "))
        if i % 33 == 0 and i // 33 < len(ODD_LINES):
            body.append(ODD_LINES[i // 33])
    data = BOOT + b"".join(body) + b"".join(ODD_LINES)
    fast = read(data, keep_all_facts=False, chunk=chunk)
    slow = read(data, keep_all_facts=True, chunk=chunk)
    assert fast[:3] == slow[:3]
    load = fast[1]
    assert load is not None
    assert {e.label for e in load.engines} == {"000", "001", "1000", "2 engines", None}
    # Each odd line comes twice: the KV fetch line counts 4 preemptions. V0's
    # warning (51, cumulative) is a pasted line in this V1 boot: V1 never
    # prints it, and neither reading counts it.
    assert load.preemptions == 2 * 4


V0_LOG = (ROOT / "sample_logs" / "era_0_7_2_v0.log").read_bytes()


def v0_stats(s: int, running: int, pending: int, kv: float) -> bytes:
    return (
        b"INFO 02-10 14:%02d:%02d metrics.py:455] Avg prompt throughput: 0.0 tokens/s, Avg "
        b"generation throughput: 6621.4 tokens/s, Running: %d reqs, Swapped: 0 reqs, Pending: "
        b"%d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: 0.0%%.\n"
        % (32 + s // 60, s % 60, running, pending, kv)
    )


def v0_warning(s: int, total: int) -> bytes:
    return (
        b"WARNING 02-10 14:%02d:%02d scheduler.py:1560] Sequence group chatcmpl-%d is preempted "
        b"by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can "
        b"affect the end-to-end performance. Increase gpu_memory_utilization or "
        b"tensor_parallel_size to provide more KV cache memory. "
        b"total_num_cumulative_preemption=%d\n" % (32 + s // 60, s % 60, total, total)
    )


@pytest.mark.parametrize("chunk", [7, 997, 16384])
def test_a_v0_boot_reads_its_preemption_warnings_in_serving_mode(chunk: int) -> None:
    """V0 prints a warning per preemption (the cumulative total every 50th):
    serving mode looks for it in a V0 boot, in line order with the stats
    lines, and agrees with the patterns table."""
    rnd = random.Random(7)
    body, total = [], 1
    for i in range(6000):
        if i % 10 == 0:
            body.append(v0_stats(i // 10, rnd.randint(200, 256), rnd.randint(0, 9), 95 + i % 5))
        elif i % 997 == 0:
            total += 50
            body.append(v0_warning(i // 10, total))
        else:
            body.append(b'INFO:     10.0.0.1:4000 - "POST /v1/completions HTTP/1.1" 200 OK\n')
    data = V0_LOG + b"".join(body)
    fast = read(data, keep_all_facts=False, chunk=chunk)
    slow = read(data, keep_all_facts=True, chunk=chunk)
    assert fast[:3] == slow[:3]
    if chunk == 16384:
        assert fast[3] >= 10  # chunks without a warning were read at once
    load = fast[1]
    assert load is not None and total == 301
    assert load.preemptions == total  # the last cumulative total V0 printed
    # The sample's own first warning (its line 23, after the pool line).
    first = [(n, t) for kind, n, t in fast[0] if "first preemption" in t]
    assert len(first) == 1 and first[0][0] == 23
    assert first[0][1].endswith("first preemption: vLLM warned of a preemption (total 1)")


def test_csv_rows_are_the_same_read_either_way() -> None:
    data = busy_log(2000) + b"".join(ODD_LINES)
    fast_rows: list[tuple[Any, ...]] = []
    slow_rows: list[tuple[Any, ...]] = []
    fast = read(data, keep_all_facts=False, chunk=4096, csv=fast_rows)
    slow = read(data, keep_all_facts=True, chunk=4096, csv=slow_rows)
    assert fast[:3] == slow[:3]
    assert fast_rows == slow_rows
    assert len(fast_rows) == data.count(b"Avg prompt throughput")
    time, engine, running, waiting, kv, prompt_tps, generation_tps, preemptions, line = fast_rows[0]
    first = data.split(b"\n")[line - 1]
    assert first.startswith(API + time.encode() + b" [loggers.py:257] Engine 000: Avg prompt")
    assert (
        b"Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%"
        % (
            running,
            waiting,
            kv,
        )
        in first
    )
    assert (engine, prompt_tps, generation_tps, preemptions) == ("000", 12.5, 345.6, 0)


def test_the_span_skips_a_clock_that_went_back() -> None:
    """genlog's clock wraps from 23:59 to 10:00: the span, like the time above
    95%, sums the steps forward only (10 s + 10 s here, the wrap skipped)."""
    lines = [
        stats(b"11-29 23:59:40", 40, 1, 99.0),
        stats(b"11-29 23:59:50", 40, 1, 99.0),
        stats(b"11-29 10:00:00", 40, 1, 99.0),
        stats(b"11-29 10:00:10", 40, 1, 99.0),
    ]
    for keep in (False, True):
        _, load, _, _ = read(BOOT + b"".join(lines), keep_all_facts=keep, chunk=1 << 20)
        assert load is not None
        assert (load.seconds_spanned, load.seconds_above_95pct) == (20, 20)
        assert (load.first_time, load.last_time) == ("11-29 23:59:40", "11-29 10:00:10")
        text = summary_text(load)
        assert "4 stats lines over 20s, 11-29 23:59:40 to 11-29 10:00:10" in text
        assert "above 95% for 20s" in text
        assert load.to_json()["seconds_spanned"] == 20


def test_the_span_is_none_without_times_and_counts_new_year() -> None:
    w = LoadWatch()
    w.add(1, None, None, 1, 0, 10.0)
    s = w.summary()
    assert s is not None and s.seconds_spanned is None
    assert summary_text(s).startswith("== vllm-logread load summary: 1 stats line\n")
    w = LoadWatch()
    for i, t in enumerate(("12-31 23:59:50", "01-01 00:00:10", "01-01 00:00:40")):
        w.add(i + 1, t, None, 1, 0, 10.0)
    s = w.summary()
    assert s is not None and s.seconds_spanned == 50


def test_header_seconds_reads_bytes_and_wants_the_shape() -> None:
    assert (
        header_seconds(b"11-29 10:00:55")
        == header_seconds("11-29 10:00:55")
        == ((304 + 28) * 86_400 + 10 * 3600 + 55)
    )
    assert header_seconds("11-29 10:00:55,123") == header_seconds("11-29 10:00:55")
    assert header_seconds(b"11-29 10:0a:55") is None
    assert header_seconds("1-29 10:00:55x") is None


def clock(i: int, kind: str) -> str | None:
    """Line ``i``'s header time: "gaps" (one line in fifty without a time), "forward"
    (ten lines a second, as a busy log: add_batch's span is then the batch's last time
    minus its first), "back" (the clock goes back an hour every 700 lines: a restart)."""
    if kind == "gaps":
        return None if (i * 7919) % 50 == 0 else f"11-29 10:{i // 60 % 60:02d}:{i % 60:02d}"
    s = i // 10 if kind == "forward" else i - 3600 * (i // 700)
    s += 4 * 3600
    return f"11-29 {10 + s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


@pytest.mark.parametrize("alerting", [True, False])
@pytest.mark.parametrize("times", ["gaps", "forward", "back"])
def test_a_batch_is_the_lines_one_by_one(times: str, alerting: bool) -> None:
    """add_batch over any cut of a run of lines of several engines gives the
    alerts (in order, same texts) and summary of one line at a time, with alerts
    and without."""
    rnd = random.Random(11)
    rows = []
    for i in range(3000):
        engine = rnd.choice(["000", "000", "000", "001", None])
        running = rnd.randint(20, 45)
        kv = rnd.choice([rnd.uniform(0, 100), rnd.uniform(88, 100)])
        kv = round(kv, 1)
        t = clock(i, times)
        rows.append((t, engine, running, rnd.randint(0, 3), kv, rnd.choice([0] * 30 + [2])))
    estimate = Estimate(
        users=74,
        users_mid_answer=82,
        prompt_tokens=512,
        output_tokens=128,
        engines=(("DP0", 37, 41), ("DP1", 37, 41)),
    )
    one = LoadWatch()
    if alerting:
        one.start_alerts(estimate)
    expected = []
    for i, (t, engine, running, waiting, kv, pre) in enumerate(rows):
        expected += [(i, a.time, a.text) for a in one.add(i, t, engine, running, waiting, kv, pre)]
    batched = LoadWatch()
    if alerting:
        batched.start_alerts(estimate)
    got = []
    i = 0
    while i < len(rows):
        part = rows[i : i + rnd.randint(1, 400)]
        alerts = batched.add_batch(
            [r[1] for r in part],
            [None if r[0] is None else r[0].encode() for r in part],
            [None if r[0] is None else header_seconds(r[0]) for r in part],
            [r[2] for r in part],
            [r[3] for r in part],
            [r[4] for r in part],
            [r[5] for r in part],
        )
        got += [(i + a.line, a.time, a.text) for a in alerts]
        i += len(part)
    assert got == expected
    assert len(expected) > 10 if alerting else expected == []
    assert batched.summary() == one.summary()
    # every figure the fold keeps, the peaks' lines and the previous line's included
    assert batched._engines == one._engines
    summary = one.summary()
    assert summary is not None and summary.seconds_above_95pct and summary.num_running_falls


@pytest.mark.parametrize("alerting", [True, False])
def test_the_peaks_are_their_first_lines_above_and_below_a_full_pool(alerting: bool) -> None:
    """The most running at a full pool and below it, each kept with its first line's
    waiting and KV usage, batched, with alerts and without."""
    w = LoadWatch()
    if alerting:
        w.start_alerts(None)
    rows = [(30, 1, 99.0), (30, 0, 50.0), (30, 2, 60.0), (30, 3, 97.0), (12, 0, 10.0)]
    seconds = [header_seconds(f"11-29 10:00:0{i}") for i in range(5)]
    w.add_batch(
        [None] * 5,
        [b"11-29 10:00:0%d" % i for i in range(5)],
        seconds,
        *(list(col) for col in zip(*rows, strict=True)),
        [0] * 5,
    )
    e = w._engines[None]
    # lines 1 (99.0%, full) and 2 (50.0%, below) are the first with 30 running
    assert e.peak_full == Point(running=30, waiting=1, kv_usage_pct=99.0)
    assert e.peak_not_full == Point(running=30, waiting=0, kv_usage_pct=50.0)
    # full at 10:00:00 (to 10:00:01) and 10:00:03 (to 10:00:04): 2 s; no fall (30, 30)
    assert (e.seconds_above_full, e.num_running_falls, e.last_full_running) == (2, 0, 30)


def test_serving_seconds_are_header_seconds() -> None:
    """Serving mode reads a time's seconds from its hour's, read once
    (serving._seconds_at, for the split path and the chunk regex): header_seconds of
    every time of the shape, dates or not (month 00 or 13: None), the hours kept."""
    hours: dict[bytes, int | None] = {}
    rnd = random.Random(13)
    times = [b"%02d-%02d %02d:%02d:%02d" % tuple(rnd.randint(0, 99) for _ in range(5))]
    times += [b"12-31 23:59:%02d" % s for s in range(0, 100, 7)] + [b"01-01 00:00:00"]
    times += [b"%02d-01 00:00:59" % m for m in range(14)]
    times += [b"11-29 10:%02d:%02d" % (rnd.randint(0, 99), rnd.randint(0, 99)) for _ in range(300)]
    for t in times + times:
        assert serving._seconds_at(hours, t) == header_seconds(t), t
    # 11-29 is day 333 (304 + 28 + 1): 10:00:55 is 332 days, 10 hours and 55 s in.
    assert serving._seconds_at(hours, b"11-29 10:00:55") == 332 * 86_400 + 10 * 3600 + 55
    assert serving._seconds_at(hours, b"13-01 10:00:55") is None


@pytest.mark.parametrize("max_tails", [4, 4096])
def test_the_split_path_starts_its_times_again_and_reads_the_same(
    monkeypatch: pytest.MonkeyPatch, max_tails: int
) -> None:
    """Past serving._MAX_TAILS distinct heads the split path's tables of seconds (the
    heads' and their hours') start again: the same load as the patterns table."""
    monkeypatch.setattr(serving, "_MAX_TAILS", max_tails)
    data = busy_log(6000, seed=17)
    fast = read(data, keep_all_facts=False, chunk=16384)
    slow = read(data, keep_all_facts=True, chunk=16384)
    assert fast[3] >= 20
    assert fast[:3] == slow[:3]


@pytest.mark.parametrize("message", sorted(STATS_MESSAGES))
def test_serving_mode_reads_every_stats_wording_as_the_patterns_table(message: str) -> None:
    """Serving mode's chunk regex (made from stats.STATS_PARTS) folds every
    wording as the row does, or leaves the line to it: the same load."""
    lines = b"".join(
        API + stamp(60 + i) + b" [loggers.py:257] " + STATS_MESSAGES[message].encode() + b"\n"
        for i in range(40)
    )
    data = BOOT + lines + lines
    fast = read(data, keep_all_facts=False, chunk=len(BOOT) + 4096)
    slow = read(data, keep_all_facts=True, chunk=len(BOOT) + 4096)
    assert fast[:3] == slow[:3]


HEADS = [
    b"(APIServer pid=1) INFO 11-29 10:00:01 [api_server.py:1839] vLLM API server version 0.11.0",
    b"INFO 02-10 14:20:01 llm_engine.py:232] Initializing an LLM engine (v0.7.2) with config:",
    "(APIServer pid=1) INFO 11-29 10:00:01 [utils.py:1] ▀▄▀ vLLM".encode(),
    b"(EngineCore pid=200) INFO 11-29 10:00:40 [kv_cache_utils.py:1087] GPU KV cache size: 1",
    b"INFO 02-10 14:20:33 executor_base.py:110] # CUDA blocks: 27927, # CPU blocks: 2048",
]
# Lines dense in the heads' rare bytes ("L", "z", "#", the logo's first byte) that are
# no head: a markdown prompt, upper-case text, a size.
NEAR_HEADS = [
    b"# LLM LLM engin zz ## Lz# size: \xe2\x96\x80 LLM server",
    b"LLLLLLLLLL zzzzzzzzz ########## KV cache sizes",
    b'INFO:     10.0.0.1:4000 - "POST /v1/completions HTTP/1.1" 200 OK',
]


def test_hand_back_finds_the_first_head_with_either_search(splitter: bool) -> None:
    """serving.hand_back's one byte-set pass (StringZilla) and its find of each head's
    byte give the same first line, among lines dense in those bytes (300 of them: past
    the dense-chunk switch) and from any start."""
    rnd = random.Random(11)
    for _ in range(60):
        lines = [rnd.choice(NEAR_HEADS) for _ in range(rnd.randint(0, 300))]
        at = None
        if rnd.random() < 0.8:
            at = rnd.randint(0, len(lines))
            lines.insert(at, rnd.choice(HEADS))
        buf = b"\n".join(lines) + b"\n"
        start = buf.find(b"\n", rnd.randint(0, len(buf) // 4)) + 1
        got = hand_back(buf, start, len(buf))
        # by hand: the first head line starting at or after start
        offsets, pos = [], 0
        for line in lines:
            offsets.append(pos)
            pos += len(line) + 1
        want = len(buf)
        if at is not None and offsets[at] >= start:
            want = offsets[at]
        assert got == want


def test_a_busy_log_is_read_by_the_split_path_either_way(splitter: bool) -> None:
    """With StringZilla or without, the chunks are split on the stats marker
    (ServingReader._serve_split);
    a NUL in the bytes after a stats line's marker (the split path joins them with NUL)
    sends that chunk the chunk regex's way, with the same results as the patterns table."""
    data = busy_log(6000)
    cut = data.index(b"\n", data.index(b"Avg prompt throughput", len(data) // 2)) + 1
    data = data[:cut] + b"binary \x00 garbage\n" + data[cut:]
    calls = []
    serve_split = ServingReader._serve_split

    def recording(self: ServingReader[Any], buf: bytes, start: int, stop: int, layout: Any) -> Any:
        out = serve_split(self, buf, start, stop, layout)
        calls.append(out is not None)
        return out

    ServingReader._serve_split = recording  # type: ignore[method-assign]
    try:
        fast = read(data, keep_all_facts=False, chunk=16384)
    finally:
        ServingReader._serve_split = serve_split  # type: ignore[method-assign]
    slow = read(data, keep_all_facts=True, chunk=16384)
    assert fast[:3] == slow[:3]
    assert calls.count(True) >= 20 and False in calls  # (the NUL's chunk)


def at_head(message: bytes, s: int) -> bytes:
    """A stats line's message after the busy log's own head (its time ``s``)."""
    return API + stamp(s) + b" [loggers.py:257] " + message + b"\n"


V1_VALUES = b"Running: 40 reqs, Waiting: 2 reqs, GPU KV cache usage: 99.9%"
RATES = b"Avg prompt throughput: 12.5 tokens/s, Avg generation throughput: 345.6 tokens/s"
# Values of the split path's hand-made heads: what vLLM's versions print (newer parts
# after the usage, 0.11.1+'s preemptions, V0's CPU usage after a GPU's 0.0%) and
# damaged or foreign lines (a field missing, another engine's label, throughputs of
# another shape, a spec-decode line, an unfinished usage, a NUL).
SPLIT_MESSAGES = [
    b"Engine 000: " + RATES + b", " + V1_VALUES + b", Prefix cache hit rate: 10.0%",
    b"Engine 000: " + RATES + b", " + V1_VALUES + b", Prefix cache hit rate: 10.0%, "
    b"External prefix cache hit rate: 3.0%",
    b"Engine 000: " + RATES + b", Running: 40 reqs, Waiting: 2 reqs, Preemptions: 3, "
    b"GPU KV cache usage: 99.9%, Prefix cache hit rate: 1.0%, Corrupted: 0 reqs, "
    b"External prefix cache hit rate: 2.0%, MM cache hit rate: 3.0%",
    b"Engine 000: " + RATES + b", Running: 3 reqs, Swapped: 0 reqs, Pending: 1 reqs, "
    b"GPU KV cache usage: 0.0%, CPU KV cache usage: 94.1%.",
    b"Engine 000: " + RATES + b", Running: 3 reqs, Swapped: 0 reqs, Pending: 1 reqs, "
    b"GPU KV cache usage: 7.3%, CPU KV cache usage: 0.0%.",
    b"Engine 000: " + RATES + b", Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 0.0%",
    b"Engine 000: " + RATES + b", Running: 1 reqs, Waiting: 0 reqs, XPU KV cache usage: 3.0%",
    b"Engine 000: " + RATES + b", Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 100.0%",
    b"Engine 000: Avg prompt throughput: 12345678901234567890.1 tokens/s, Avg generation "
    b"throughput: 1.5 tokens/s, Running: 123456789 reqs, Waiting: 123456789 reqs, "
    b"Preemptions: 123456789, GPU KV cache usage: 1.0%",
    b"Engine 000: " + RATES + b", Running: 40 reqs, Waiting: 2 reqs",
    b"Engine 000: " + RATES + b", Running: 40 reqs, GPU KV cache usage: 99.9%",
    b"Engine 000: " + RATES + b", Waiting: 2 reqs, GPU KV cache usage: 99.9%",
    b"Engine 000: Avg prompt throughput: 12.5 tokens/s, " + V1_VALUES,
    b"Engine 000: Avg prompt throughput: 12.55 tokens/s, Avg generation throughput: 1.0 "
    b"tokens/s, " + V1_VALUES,
    b"Engine 000: Avg prompt throughput: 12 tokens/s, Avg generation throughput: 1.0 "
    b"tokens/s, " + V1_VALUES,
    b"Engine 000: Avg prompt throughput: nan tokens/s, Avg generation throughput: 1.0 "
    b"tokens/s, " + V1_VALUES,
    b"Engine 000: " + RATES + b", Running: 40 reqs, Waiting: 2 reqs GPU KV cache usage: 99.9%.",
    b"Engine 000: " + RATES + b", Running: 40 reqs, Waiting: 2 reqs, GPU KV cache usage: 9",
    b"Engine 000: " + RATES + b", Running: -1 reqs, Waiting: 2 reqs, GPU KV cache usage: 9.0%",
    b"Engine 000: " + RATES + b", " + V1_VALUES + b" [repeated 3x across cluster]",
    b"Engine 000: " + RATES + b", Running: 5 reqs, Waiting: 0 reqs, KV fetch: 1 waiting to "
    b"start, 0 in progress, 0 completed waiting, GPU KV cache usage: 3.0%",
    b"Engine 001: " + RATES + b", " + V1_VALUES,
    b"2 Engines Aggregated: " + RATES + b", " + V1_VALUES,
    RATES + b", " + V1_VALUES,
    b"Engine 000: SpecDecoding metrics: Mean acceptance length: 2.31, Accepted throughput: "
    b"40.12 tokens/s, Drafted throughput: 70.00 tokens/s, Accepted: 401 tokens, Drafted: "
    b"700 tokens, Per-position acceptance rate: 0.750, 0.431, Avg Draft acceptance rate: 57.3%",
]
# Lines serving mode reads otherwise than the patterns table (boot mode), as it did
# before the split path: a CPU usage past 3 digits after a GPU's 0.0% (the fast
# grammar backtracks to the GPU's 0.0%, the row reads 1234.5), a NUL inside the
# values, the marker twice in a line. The split path reads them as the chunk regex.
FAST_ONLY_MESSAGES = [
    b"Engine 000: " + RATES + b", " + V1_VALUES + b", Avg prompt throughput: 1.0 tokens/s",
    b"Engine 000: " + RATES + b", Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 0.0%, "
    b"CPU KV cache usage: 1234.5%",
    b"Engine 000: " + RATES + b", Running: 1\x00 reqs, Waiting: 2 reqs, GPU KV cache usage: 9.0%",
]


def odd_log(message: bytes, seed: int) -> bytes:
    """A busy log with ``message`` three times two thirds in, after its own head."""
    data = busy_log(3000, seed=seed)
    lines = data.split(b"\n")
    at = len(lines) * 2 // 3
    odd = at_head(message, 60 + at // 20)
    return b"\n".join(lines[:at]) + b"\n" + odd * 3 + b"\n".join(lines[at:])


def read_without_split(data: bytes) -> tuple[Shown, LoadSummary | None, int, int]:
    """``read`` with the split path off: the chunk regex reads the chunks, as before it."""
    serve_split = ServingReader._serve_split
    ServingReader._serve_split = lambda *_: None  # type: ignore[method-assign,assignment]
    try:
        return read(data, keep_all_facts=False, chunk=8192)
    finally:
        ServingReader._serve_split = serve_split  # type: ignore[method-assign]


@pytest.mark.parametrize("message", SPLIT_MESSAGES, ids=range(len(SPLIT_MESSAGES)))
def test_the_split_path_reads_hand_made_values_as_the_patterns_table(message: bytes) -> None:
    """A hand-made stats line among a busy log's: the split path
    (ServingReader._serve_split) reads its values or leaves its chunk to the other
    ways; the load is the patterns table's and the chunk regex's."""
    data = odd_log(message, 23)
    fast = read(data, keep_all_facts=False, chunk=8192)
    slow = read(data, keep_all_facts=True, chunk=8192)
    assert fast[3] >= 5  # most chunks split
    assert fast[:3] == slow[:3]
    assert fast[:3] == read_without_split(data)[:3]


@pytest.mark.parametrize("message", FAST_ONLY_MESSAGES, ids=range(len(FAST_ONLY_MESSAGES)))
def test_the_split_path_reads_what_the_chunk_regex_reads(message: bytes) -> None:
    data = odd_log(message, 23)
    fast = read(data, keep_all_facts=False, chunk=8192)
    assert fast[3] >= 5
    assert fast[:3] == read_without_split(data)[:3]


def test_the_split_path_reads_a_key_past_its_first_heads_bytes() -> None:
    """A key that ends past the 160 bytes the split path reads first (20-digit
    throughputs): that chunk and the next are read with 256, the same load."""
    long_rates = (
        b"Avg prompt throughput: 12345678901234567890.1 tokens/s, Avg generation "
        b"throughput: 12345678901234567890.1 tokens/s"
    )
    message = b"Engine 000: " + long_rates + b", Running: 3 reqs, Swapped: 0 reqs, "
    message += b"Pending: 1 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: 94.1%"
    assert len(message) - message.index(b"12345") > 160  # the key ends past 160 bytes
    data = odd_log(message, 29)
    fast = read(data, keep_all_facts=False, chunk=8192)
    slow = read(data, keep_all_facts=True, chunk=8192)
    assert fast[3] >= 20
    assert fast[:3] == slow[:3]
