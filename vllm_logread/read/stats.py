"""the stats line's one grammar: its fields, the row builder and the bytes fast paths made from it."""

from __future__ import annotations

import re as _stdre  # the stdlib engine: the stats fast path on bytes
from collections.abc import Sequence
from dataclasses import dataclass

import regex as re

from .grammar import _BLOCK_DEVICES, INT, NUM, Built, _number, _part

# Day of the year at which each month starts (vLLM's header has no year; a
# non-leap year is assumed, and a log that runs over New Year is handled).
_MONTH_START_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


_DAY_S = 86_400


_YEAR_S = 365 * _DAY_S


# The shape of vLLM's header time (lines.py _HEADER's group 2), as text and bytes.
_TIME_SHAPE = _stdre.compile(r"\d\d-\d\d \d\d:\d\d:\d\d")


TIME_SHAPE_BYTES = _stdre.compile(rb"\d\d-\d\d \d\d:\d\d:\d\d")


# The line values serving mode reads (pipeline.py), as they are printed: a
# dict lookup costs a fifth of float() on bytes (600,736 stats lines: 0.08 s).
_KV_TEXT: dict[bytes, float] = {}


_INT_TEXT: dict[bytes, int] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class StatsBatch:
    """Consecutive stats lines' values, a column each: serving mode reads a
    chunk's lines, the session hands them to the boot's load watch.

    ``times`` are the header times as read (``b"11-29 10:00:55"``, None: no
    time), ``seconds`` the same as ``header_seconds`` (None: no time, or not
    a date).
    """

    engines: Sequence[str | None]
    times: Sequence[bytes | None]
    seconds: Sequence[int | None]
    running: Sequence[int]
    waiting: Sequence[int]
    kv_usage_pct: Sequence[float]
    preemptions: Sequence[int]


def header_seconds(time: str | bytes) -> int | None:
    """Seconds since the start of the year for a header time ``MM-DD HH:MM:SS``
    (text, or bytes as serving mode reads it).

    >>> header_seconds("01-01 00:01:05"), header_seconds(b"11-29 10:00:40") - header_seconds("11-29 10:00:30")
    (65, 10)
    """
    shape = TIME_SHAPE_BYTES if isinstance(time, bytes) else _TIME_SHAPE
    if shape.match(time) is None:  # type: ignore[arg-type]
        return None
    month, day = int(time[0:2]), int(time[3:5])
    hour, minute, second = int(time[6:8]), int(time[9:11]), int(time[12:14])
    if not 1 <= month <= 12:
        return None
    return (_MONTH_START_DAYS[month - 1] + day - 1) * _DAY_S + hour * 3600 + minute * 60 + second


def _forward_s(earlier: int, later: int) -> int:
    """Seconds between two header times; 0 when the clock went back (a
    restart or pasted logs), except over New Year (12-31 -> 01-01).

    >>> _forward_s(header_seconds("12-31 23:59:50"), header_seconds("01-01 00:00:10"))
    20
    """
    dt = later - earlier
    if dt >= 0:
        return dt
    return dt + _YEAR_S if dt < -300 * _DAY_S else 0


def ints_of(texts: Sequence[bytes]) -> list[int]:
    """``int`` of each number as a stats line prints it (decimal digits)."""
    if not _INT_TEXT:
        _INT_TEXT.update((str(i).encode(), i) for i in range(4096))
    out = list(map(_INT_TEXT.get, texts))
    return list(map(int, texts)) if None in out else out  # type: ignore[return-value]


def kv_pcts_of(texts: Sequence[bytes]) -> list[float]:
    """``float`` of each KV usage as a stats line prints it (``99.9``)."""
    if not _KV_TEXT:
        _KV_TEXT.update((t, float(t)) for t in (f"{i / 10:.1f}".encode() for i in range(1001)))
    out = list(map(_KV_TEXT.get, texts))
    return list(map(float, texts)) if None in out else out  # type: ignore[return-value]


def _stats(m: re.Match[str]) -> Built:
    """Every part of a stats line, in any order, as its own fact."""
    line = m.string
    out: Built = []
    eng = m.group("eng")
    if eng is not None:
        out.append(("stats_engine", eng, None))
    elif m.group("neng") is not None:
        out.append(("stats_engine", f"{m.group('neng')} engines", None))
    for kind, rx in _STATS_PARTS:
        part = rx.search(line)
        if part:
            value, dec = _number(kind, part.group(1))
            out.append((kind, value, dec))
    return out


_STATS_PARTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("prompt_tps", _part(rf"Avg prompt throughput: ({NUM}) tokens/s")),
    ("generation_tps", _part(rf"Avg generation throughput: ({NUM}) tokens/s")),
    ("running_reqs", _part(rf"Running: ({INT}) reqs")),
    ("swapped_reqs", _part(rf"Swapped: ({INT}) reqs")),
    ("waiting_reqs", _part(rf"(?:Pending|Waiting): ({INT}) reqs")),
    ("preemptions", _part(rf"Preemptions: ({INT})")),
    # The first device's usage: V0 also prints "CPU KV cache usage" (swap) after GPU.
    ("kv_usage_pct", _part(rf"[A-Z]{{2,5}} KV cache usage: ({NUM})%")),
    ("prefix_hit_pct", _part(rf"(?<!External )(?<!MM )Prefix cache hit rate: ({NUM})%")),
)


# -- lines serving mode hands back to boot mode (serving.hand_back) -----------
# Once a boot is reported, serving mode reads only stats lines, and hands a
# line back to boot mode (the rows above) when it may start a new boot or
# states a pool again (a late data-parallel engine, a worker's repeat, a pool
# allocated anew). Each head is found through a byte that is rare in a
# serving log, by memchr, at its offset in the head, then checked; a search
# for each whole head costs ten times more (1 s against 0.1 s on a 1.6 GB
# log), and a chunk dense in that byte (upper-case or markdown prompts) is
# searched for the head itself. Entries: (byte, its offset in the head, head).
#   "L": the API server's banner (0.4+ "vLLM API server version") and the
#        engine config line ("Initializing an LLM engine" V0, "... a V1 LLM
#        engine" V1);
#   the first byte of 0.32+'s logo;
#   "z": V1's "KV cache size: "; "#": V0's "# GPU blocks: " (any device word).
HAND_BACK_HEADS: tuple[tuple[bytes, int, _stdre.Pattern[bytes]], ...] = (
    (b"L", 0, _stdre.compile(rb"LLM (?:engine|API server version|server version)")),
    (b"\xe2", 0, _stdre.compile(_stdre.escape("▀▄▀".encode()))),
    (b"z", len(b"KV cache si"), _stdre.compile(rb"KV cache size: ")),
    (b"#", 0, _stdre.compile(rb"# (?:%s|CPU|cpu) blocks: " % _BLOCK_DEVICES.encode())),
)


# -- the stats line's fast path (serving phase) -------------------------------
# Once a boot is reported, pipeline.py reads stats lines (one line in twenty of
# a busy log) without the row loop: ``STATS_FAST.finditer`` over a whole chunk
# finds every STATS_MARKER (a literal prefix: the scan runs in C) and reads the
# values in the shapes vLLM prints most (V0 "Swapped/Pending"; V1 "Waiting",
# 0.11.1+ "Preemptions" when > 0). Where the values part does not match, its
# groups are None and the line goes through the "stats" row above (0.7.1's
# missing comma, 0.32's "KV fetch" part), so no stats line is lost;
# tests/test_load.py reads every wording both ways and compares.
STATS_MARKER = b"Avg prompt throughput: "


STATS_FAST = re.compile(
    rb"Avg prompt throughput: (?:(\d{1,20}\.\d) tokens/s, Avg generation throughput: "
    rb"(\d{1,20}\.\d) tokens/s, Running: (\d{1,9}) reqs, (?:Swapped: (\d{1,9}) reqs, "
    rb"Pending: (\d{1,9}) reqs|Waiting: (\d{1,9}) reqs)(?:, Preemptions: (\d{1,9}))?, "
    rb"[A-Z]{2,5} KV cache usage: (\d{1,3}\.\d)%)?"
)


# The engine prefix just before the marker: "Engine 000: " / "2 Engines Aggregated: ".
STATS_ENGINE_FAST = re.compile(rb"(?:Engine (\d{1,4})|(\d{1,4}) Engines Aggregated): \Z")


# -- the stats line's fast path (stream.py), checked against the "stats" row
#    on every wording by tests/test_stream.py
# vLLM's stats line in its usual shapes, as a whole physical line: an optional
# process tag (with 0.10-0.15's colour codes around it), the header, an
# optional engine prefix, then the parts in the order vLLM prints them:
#   V0 (0.4.3-0.10.2): Running, Swapped, Pending, GPU KV usage, CPU KV usage, "."
#   V1 (0.7.3+): Running, Waiting, [Deferred], [KV fetch], [Preemptions],
#       <device> KV usage, [Prefix hit], [Corrupted], [External hit], [MM hit]
# Every piece is one the unwrapping of lines.py leaves as it is (no wrapper,
# one tag, no trailing text), and the message holds no other row's marker, so
# the facts are those the "stats" row gives; any other line (0.7.1's missing
# comma, nan, a Ray tag, a caret colour) takes the general path.
STATS_LINE = _stdre.compile(
    rb"""
    (?:(?:\x1b\[[0-9;]{0,16}m)?                          # 0.10-0.15 colour the tag
       \((?P<proc>[A-Za-z][A-Za-z0-9_]{0,60}(?:\ [A-Za-z0-9_=]{1,20})?\ pid=\d{1,10})\)
       (?:\x1b\[[0-9;]{0,16}m)?\ )?
    (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ ]
    (?:(?P<time>\d\d-\d\d\ \d\d:\d\d:\d\d)(?:[.,]\d{1,6})?\ )?
    \[?[A-Za-z0-9_.\-]{1,100}:\d{1,7}\][ ]
    (?:(?:Engine\ (?P<eng>\d{1,4})|(?P<neng>\d{1,4})\ Engines\ Aggregated):\ )?
    Avg\ prompt\ throughput:\ (?P<prompt>{N})\ tokens/s,
    \ Avg\ generation\ throughput:\ (?P<gen>{N})\ tokens/s,
    \ Running:\ (?P<run>{I})\ reqs,
    (?:\ Swapped:\ (?P<swap>{I})\ reqs,\ Pending|\ Waiting):\ (?P<wait>{I})\ reqs
    (?:,\ Deferred:\ {I}\ reqs)?
    (?:,\ KV\ fetch:\ {I}\ waiting\ to\ start,\ {I}\ in\ progress,\ {I}\ completed\ waiting)?
    (?:,\ Preemptions:\ (?P<pre>{I}))?
    ,\ [A-Z]{2,5}\ KV\ cache\ usage:\ (?P<kv>{N})%
    (?:,\ CPU\ KV\ cache\ usage:\ {N}%)?                # V0: after the GPU's
    (?:,\ Prefix\ cache\ hit\ rate:\ (?P<hit>{N})%)?
    (?:,\ Corrupted:\ {I}\ reqs)?
    (?:,\ External\ prefix\ cache\ hit\ rate:\ {N}%)?
    (?:,\ MM\ cache\ hit\ rate:\ {N}%)?
    \.?\r?
    """.replace(b"{N}", rb"\d{1,20}(?:\.\d{1,12})?").replace(b"{I}", rb"\d{1,20}"),
    _stdre.VERBOSE,
)


# (fact kind, group, is a float), in the order the "stats" row builds them.
STATS_LINE_FIELDS = (
    ("prompt_tps", "prompt", True),
    ("generation_tps", "gen", True),
    ("running_reqs", "run", False),
    ("swapped_reqs", "swap", False),
    ("waiting_reqs", "wait", False),
    ("preemptions", "pre", False),
    ("kv_usage_pct", "kv", True),
    ("prefix_hit_pct", "hit", True),
)
