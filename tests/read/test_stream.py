"""The byte scanner's fast paths read exactly what the general path reads.

stream.py finds marker lines with a few passes over each chunk (memchr loops on
rare bytes, one regex per common byte) and reads vLLM's usual stats lines with
one anchored bytes regex. Both are shortcuts: these tests hold them to the
general path (every line through lines.py and the patterns table) on every
stats wording vLLM has printed, on hostile variants, and on each marker of the
table placed among noise that makes its anchor byte common.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import SAMPLE_LOGS, STATS_MESSAGES, STATS_SLOW_MESSAGES

from vllm_logread.read.facts import Fact
from vllm_logread.read.patterns import MARKERS
from vllm_logread.read.scanner import (
    _BOOT_MARKERS,
    _STATS_LINE,
    _STATS_NEEDLE,
    Scanner,
    _BootMarkers,
    _not_holding_another,
    scan_bytes,
)

V1 = "(APIServer pid=4123) INFO 11-29 12:34:56 [loggers.py:248] "
PREFIXES = {
    "v1": V1,
    "v0_no_bracket": "INFO 11-29 12:34:56 metrics.py:455] ",
    "colour_0_10": "\x1b[1;36m(APIServer pid=4123)\x1b[0;0m INFO 11-29 12:34:56 [loggers.py:248] ",
    "debug_fraction": "(APIServer pid=1) DEBUG 11-29 12:34:56.789 [loggers.py:1] ",
    "worker_tp": "(VllmWorker TP0 pid=4301) WARNING 11-29 12:34:56 [loggers.py:1] ",
    "no_time": "INFO [loggers.py:1] ",
    # Shapes the fast regex leaves to the general path:
    "ray_ip": "(RayWorkerWrapper pid=7, ip=10.0.0.1) INFO 11-29 12:34:56 [loggers.py:1] ",
    "nested_tags": "(RayWorkerProc pid=1) (Worker_TP1 pid=2) INFO 11-29 12:34:56 [loggers.py:1] ",
    "docker_stamp": "2025-01-01T00:00:00.123456789Z " + V1,
    "caret_colour": "^[[1;36m(APIServer pid=1)^[[0;0m INFO 11-29 12:34:56 [loggers.py:1] ",
    "two_spaces": "(APIServer pid=1)  INFO 11-29 12:34:56 [loggers.py:1]  ",
    "box": "│ " + V1,
    "no_header": "",
}
FAST_PREFIXES = ("v1", "v0_no_bracket", "colour_0_10", "debug_fraction", "worker_tp", "no_time")


def events(data: bytes, *, fast: bool = True, read_stats: bool = True, chunk: int = 0) -> list:
    s = Scanner("x.log", read_stats=read_stats)
    s._fast_stats = fast
    out = []
    if chunk:
        for i in range(0, len(data), chunk):
            out += s.feed(data[i : i + chunk])
    else:
        out += s.feed(data)
    out += s.finish()
    # repr: 24 and 24.0 are equal numbers but not the same fact.
    return [*map(repr, out), ("lines", s.lines_read)]


def _facts(data: bytes) -> list[tuple]:
    s = Scanner("x.log")
    evs = [*s.feed(data), *s.finish()]
    return [
        (e.kind, e.value, e.line, e.process, e.decimals, e.time) for e in evs if isinstance(e, Fact)
    ]


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("prefix", sorted(PREFIXES))
@pytest.mark.parametrize("message", sorted(STATS_MESSAGES))
def test_stats_line_fast_path_reads_as_the_patterns_table(
    message: str, prefix: str, ending: str
) -> None:
    line = PREFIXES[prefix] + STATS_MESSAGES[message]
    data = f"INFO 11-29 12:00:00 [x.py:1] hello\n{line}{ending}tail line\n".encode()
    assert events(data) == events(data, fast=False)
    is_fast = _STATS_LINE.fullmatch((line + ending.rstrip("\n")).encode()) is not None
    assert is_fast == (prefix in FAST_PREFIXES and message not in STATS_SLOW_MESSAGES)


def test_the_fast_path_gives_every_fact_of_the_row() -> None:
    line = V1 + STATS_MESSAGES["v1_0_14_preempt"]
    facts = _facts(f"{line}\n".encode())
    assert facts == [
        ("stats_engine", "000", 1, "APIServer pid=4123", None, "11-29 12:34:56"),
        ("prompt_tps", 1234.5, 1, "APIServer pid=4123", 1, "11-29 12:34:56"),
        ("generation_tps", 456.7, 1, "APIServer pid=4123", 1, "11-29 12:34:56"),
        ("running_reqs", 24, 1, "APIServer pid=4123", None, "11-29 12:34:56"),
        ("waiting_reqs", 3, 1, "APIServer pid=4123", None, "11-29 12:34:56"),
        ("preemptions", 2, 1, "APIServer pid=4123", None, "11-29 12:34:56"),
        ("kv_usage_pct", 97.1, 1, "APIServer pid=4123", 1, "11-29 12:34:56"),
        ("prefix_hit_pct", 43.2, 1, "APIServer pid=4123", 1, "11-29 12:34:56"),
    ]


_NUMS = st.one_of(
    st.integers(0, 10**21).map(str),
    st.tuples(st.integers(0, 10**21), st.integers(0, 10**13)).map(lambda t: f"{t[0]}.{t[1]}"),
    st.sampled_from(["nan", "-1.0", "inf", "1,000", "٣"]),
)
_PARTS = [
    ("Deferred: {} reqs",),
    ("KV fetch: {} waiting to start, {} in progress, {} completed waiting",),
    ("Preemptions: {}",),
    ("{dev} KV cache usage: {}%",),
    ("CPU KV cache usage: {}%",),
    ("Prefix cache hit rate: {}%",),
    ("Corrupted: {} reqs",),
    ("External prefix cache hit rate: {}%",),
    ("MM cache hit rate: {}%",),
]


@st.composite
def stats_lines(draw: st.DrawFn) -> str:
    nums = iter(draw(st.lists(_NUMS, min_size=12, max_size=12)))
    head = draw(st.sampled_from(["", "Engine 000: ", "Engine 7: ", "3 Engines Aggregated: "]))
    msg = (
        f"{head}Avg prompt throughput: {next(nums)} tokens/s, "
        f"Avg generation throughput: {next(nums)} tokens/s, Running: {next(nums)} reqs, "
    )
    msg += draw(st.sampled_from(["Waiting: {} reqs", "Swapped: {} reqs, Pending: {} reqs"]))
    for (part,) in _PARTS:
        if draw(st.booleans()):
            msg += ", " + part
    dev = draw(st.sampled_from(["GPU", "XPU", "CPU", "G", "GPUXYZ"]))
    msg = msg.replace("{dev}", dev)
    while "{}" in msg:
        msg = msg.replace("{}", next(nums, "1"), 1)
    msg += draw(st.sampled_from(["", ".", " ", "\r", "%"]))
    tag = draw(
        st.sampled_from(
            ["", "(APIServer pid=1) ", "(EngineCore_DP1 pid=22) ", "(A rank=1 pid=2) ", "(x pid=1)"]
        )
    )
    level = draw(st.sampled_from(["INFO", "DEBUG", "WARNING", "WARN", "TRACE"]))
    when = draw(st.sampled_from(["11-29 10:00:00 ", "11-29 10:00:00,123 ", "", "1-29 10:00:00 "]))
    src = draw(st.sampled_from(["[loggers.py:123] ", "metrics.py:455] ", "[a b.py:1] "]))
    return f"{tag}{level} {when}{src}{msg}"


@settings(max_examples=300, deadline=None)
@given(stats_lines())
def test_any_stats_line_reads_the_same_both_ways(line: str) -> None:
    data = f"{line}\n".encode()
    assert events(data) == events(data, fast=False)


# -- finding marker lines ------------------------------------------------------


def _marker_lines(data: bytes) -> set[int]:
    """1-based numbers of the lines that carry a marker (a plain search)."""
    out = set()
    for i, line in enumerate(data.split(b"\n"), 1):
        if any(m.encode() in line for m in MARKERS):
            out.add(i)
    return out


def _found_lines(data: bytes) -> set[int]:
    """Lines the scanner's marker search stops at, boot rows and stats alike."""
    bm = _BootMarkers(_BOOT_MARKERS)
    end = data.rfind(b"\n") + 1
    hits = set(bm.hits(data, end))
    p = data.find(_STATS_NEEDLE)
    while p >= 0:
        hits.add(p)
        p = data.find(_STATS_NEEDLE, p + 1)
    return {data.count(b"\n", 0, h) + 1 for h in hits}


def test_every_marker_is_searched() -> None:
    covered = [m for g in _BootMarkers(_BOOT_MARKERS).groups for m, _ in g.markers]
    for mk in MARKERS:
        b = mk.encode()
        assert b == _STATS_NEEDLE or any(c in b for c in covered), mk


@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
def test_each_marker_is_found_among_noise(dense: bool) -> None:
    """Each marker on a line of its own among noise lines; with ``dense`` the
    noise carries every anchor byte a thousand times per chunk, so the memchr
    loops give up and the regex passes take over."""
    anchors = bytes(g.anchor[0] for g in _BootMarkers(_BOOT_MARKERS).groups)
    noise_unit = (anchors * 3 + b" ") if dense else b"access 10.0.0.1 - POST /v1/x 200 OK "
    rnd = random.Random(7)
    lines = []
    for mk in MARKERS:
        for _ in range(rnd.randint(0, 40)):
            lines.append(noise_unit * rnd.randint(1, 20))
        lines.append(noise_unit[: rnd.randint(0, 30)] + mk.encode() + b" 12 GiB")
    data = b"\n".join(lines) + b"\n"
    assert _found_lines(data) == _marker_lines(data)


def test_marker_at_chunk_start_and_end() -> None:
    for mk in MARKERS:
        data = mk.encode() + b"\n" + b"x" * 100 + b"\n" + b"y " + mk.encode() + b"\n"
        assert _found_lines(data) == {1, 3}, mk


@pytest.mark.parametrize("chunk", [0, 1, 7, 4096, 65536])
def test_chunking_does_not_change_what_is_read(chunk: int) -> None:
    """The seed sample between serving lines (stats, access, request lines), fed
    in chunks of any size."""
    seed = (SAMPLE_LOGS / "seed_qwen3-8b_l4.log").read_bytes()
    rnd = random.Random(3)
    serving = []
    for i in range(3000):
        r = rnd.random()
        if r < 0.05:
            serving.append((V1 + STATS_MESSAGES["v1_0_14_preempt"]).encode())
        elif r < 0.3:
            serving.append(
                b"(APIServer pid=1) INFO 11-29 10:00:55 [logger.py:43] Received request "
                b"chatcmpl-%016x: prompt: '', params: SamplingParams(n=1, temperature=0.7)" % i
            )
        else:
            serving.append(
                b'(APIServer pid=1) INFO:     10.0.0.1:5000 - "POST /v1/x HTTP/1.1" 200 OK'
            )
    data = seed + b"\n".join(serving) + b"\n" + seed
    whole = events(data)
    assert events(data, chunk=chunk) == whole
    assert events(data, fast=False) == whole
    assert whole[-1] == ("lines", data.count(b"\n"))


def test_without_stats_the_boot_facts_are_the_same() -> None:
    seed = (SAMPLE_LOGS / "seed_qwen3-8b_l4.log").read_bytes()
    stats = (V1 + STATS_MESSAGES["v1_0_8_3"] + "\n").encode() * 50
    data = seed + stats
    boot_kinds = {f.kind for f in scan_bytes(seed) if isinstance(f, Fact)}
    with_stats = [e for e in scan_bytes(data) if isinstance(e, Fact)]
    s = Scanner("-", read_stats=False)
    without = [e for e in [*s.feed(data), *s.finish()] if isinstance(e, Fact)]
    assert without == [f for f in with_stats if f.kind in boot_kinds]
    assert len(with_stats) - len(without) == 50 * 7
    assert events(data, read_stats=False)[-1] == ("lines", data.count(b"\n"))


def test_scan_bytes_reads_a_sample_log() -> None:
    seed = (SAMPLE_LOGS / "seed_qwen3-8b_l4.log").read_bytes()
    kinds = {e.kind for e in scan_bytes(seed) if isinstance(e, Fact)}
    assert {"pool_tokens", "max_concurrency", "available_kv_gib"} <= kinds


@pytest.mark.parametrize("chunk", [0, 1, 7, 50, 4096])
@pytest.mark.parametrize(
    "name", ["paste_sentences", "wrap_pager_cut", "wrap_backticks", "era_0_6_5_tabular"]
)
def test_pastes_read_the_same_in_any_chunks(name: str, chunk: int) -> None:
    """A message re-wrapped at its sentence breaks waits for its next lines
    when a chunk ends between them; pager cuts and quotes do not depend on
    where a chunk ends either."""
    data = (SAMPLE_LOGS / f"{name}.log").read_bytes()
    whole = events(data)
    assert events(data, chunk=chunk) == whole
    assert whole[-1] == ("lines", data.count(b"\n"))


def test_a_sentence_rewrap_is_one_record_at_its_first_line() -> None:
    data = (SAMPLE_LOGS / "paste_sentences.log").read_bytes()
    facts = [e for e in scan_bytes(data) if isinstance(e, Fact)]
    by_line = {(f.kind, f.line) for f in facts}
    assert ("available_kv_gib", 2) in by_line and ("kv_cache_memory_bytes", 2) in by_line
    assert ("kv_too_small", 7) in by_line
    assert [f.value for f in facts if f.kind == "preemptions"] == [51]
    # A next line that is no later sentence of the message is left alone.
    cut = data.replace(b"Desired GPU memory", b"Something else entirely")
    facts = [e for e in scan_bytes(cut) if isinstance(e, Fact)]
    assert [f.kind for f in facts if f.line == 2] == ["total_gpu_gib"]


def _holding_none_pairwise(markers: tuple[bytes, ...]) -> list[bytes]:
    # The plain definition: no other marker (by value) is inside it.
    return [m for m in markers if not any(o != m and o in m for o in markers)]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_markers_holding_no_other_are_the_pairwise_ones(data: st.DataObject) -> None:
    # scanner._not_holding_another finds them with bytes.find over all the markers
    # joined; any subset of the table, repeats included, gives the pairwise answer.
    table = sorted({m.encode() for m in MARKERS})
    picked = data.draw(st.lists(st.sampled_from(table), min_size=1, max_size=len(table)))
    markers = tuple(picked)
    assert _not_holding_another(markers) == _holding_none_pairwise(markers)


def test_a_marker_inside_another_leaves_only_the_short_one() -> None:
    # "GPU KV cache size" holds "KV cache", so it is found through "KV cache".
    assert _not_holding_another((b"GPU KV cache size", b"KV cache", b"blocks")) == [
        b"KV cache",
        b"blocks",
    ]
