"""Serving mode: a chunk's stats lines read at memchr speed, and where boot mode must take over.

Once a boot is reported, what can still matter is the stats line, V0's
preemption warning (in a boot not known to be V1, which never prints it) and
the start of a new boot. A busy log is gigabytes of access lines, so serving
mode looks for just those markers and reads the stats lines a chunk at once
(``ServingReader.serve``: the chunk split on the stats marker, one regex over the
pieces' heads, else one regex over the chunk, stats.STATS_FAST): about 800 MB/s
(a stats line in twenty) instead of the Scanner's 20 MB/s, so a live server is
never held back. A new boot's first line (``hand_back``) hands the rest of the input back
to boot mode.

The reader knows nothing of reports or of the load watch: it hands each batch
of stats lines (``StatsBatch``) and each line it leaves to the patterns table
(scanner events) to a ``ServingSink``, the session, and numbers what the sink
gives back.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate, chain, islice
from operator import itemgetter
from typing import Final, Generic, Literal, Protocol, TypeAlias, TypeVar, cast, overload

from . import simd
from .facts import Event, Fact
from .framing import Framing, LineCounter
from .lines import header_time_at
from .patterns import (
    REQUEST_DETAILS_IDS_FAST,
    REQUEST_MARKERS,
    REQUEST_MAX_TOKENS_FAST,
    REQUEST_PROMPT_IDS_FAST,
)
from .scanner import scan_bytes
from .stats import (
    GPU_ZERO_USAGE,
    HAND_BACK_HEADS,
    STATS_ENGINE_FAST,
    STATS_FAST,
    STATS_FAST_COLUMNS,
    STATS_LINE,
    STATS_MARKER,
    STATS_SPLIT_KEYS,
    STATS_SPLIT_KEYS_CPU,
    TIME_SHAPE_BYTES,
    KeyValues,
    StatsBatch,
    header_seconds,
    ints_of,
    kv_pcts_of,
    stats_key_values,
    stats_line_facts,
)

_HAND_BACK_DENSE = 256  # anchor hits in a chunk before searching the heads


# V0's preemption warning (patterns.py row "preemption_warning").
_PREEMPT_MARKER = b"is preempted by"


class _Miss(enum.Enum):
    MISS = 0


# An engine label not known yet (read from the line), or a head of no known layout.
_MISS: Final = _Miss.MISS


_Label: TypeAlias = "str | None | Literal[_Miss.MISS]"


# A stats line read in serving mode: its regex groups, marker offset, engine
# label, header time and its seconds.
_Row = tuple[tuple[bytes | None, ...], int, str | None, bytes | None, int | None]


# Bounds on the line layouts serving mode learns (a log whose heads vary, e.g.
# a capture's own timestamps, falls back to the regexes line by line).
_MAX_LAYOUTS = 64


# Chunks in a row that did not fit the chunk regex before serving mode stops
# building it (stats lines of several layouts in every chunk: each chunk would
# be read twice).
_MAX_CHUNK_MISSES = 8


# Header times kept with their seconds: a chunk's (a busy log prints ten stats
# lines a second); a few thousand cost 0.4 MB (65,536 grew the peak RSS by 7 MB).
_MAX_CACHED_SECONDS = 4096


# Keys (stats.STATS_SPLIT_KEYS's group) kept with their values, and stats line
# heads with their seconds (the split path): the benchmark's log has 970 keys and
# ten heads a second; past these, the caches start again, so memory stays flat
# (8,192 keys of about 70 bytes, with their tuples: under 2 MB).
_MAX_KEYS = 8192


_MAX_TAILS = 4096


# A stats line's values are its piece's first bytes: at most 220 as STATS_FAST
# reads them (two rates of 20 digits, four counts of 9, a 5-letter device word), so
# 256 hold them (a longer text would not match, and the chunk goes the other ways).
# The split path reads the first 160 (the benchmark's lines' keys end 116 to 121
# bytes in) and 256 from the first chunk where a key does not end within them: the
# regex scans a head's bytes past its key for the next NUL, 0.21M instructions fewer
# a 1 MiB chunk of the benchmark's log with 160 (callgrind: docs/performance.md).
_HEADS_OF = (itemgetter(slice(0, 160)), itemgetter(slice(0, 256)))


_EMPTY = (b"",)  # (a NUL before the first head)


# ServingReader._chunk_rx's groups: time, engine digits, then STATS_FAST's.
_C_TIME, _C_ENGINE, _C_VALUES = 0, 1, 2


# STATS_FAST's groups of the values folded (and written to a CSV).
_PROMPT, _GEN, _RUNNING, _KV = (
    STATS_FAST_COLUMNS[k][0]
    for k in ("prompt_tps", "generation_tps", "running_reqs", "kv_usage_pct")
)
_WAITING = STATS_FAST_COLUMNS["waiting_reqs"]  # V0's "Pending", V1's "Waiting"
(_PREEMPTIONS,) = STATS_FAST_COLUMNS["preemptions"]


# ``on_stats`` (--stats-csv): called for every stats line with ``time, engine,
# running, waiting, kv_usage_pct, prompt_tps, generation_tps, preemptions, line``
# (None: a value the line did not print).
StatsSink = Callable[
    [
        str | None,
        str | None,
        int | None,
        int | None,
        float | None,
        float | None,
        float | None,
        int,
        int,
    ],
    None,
]


T = TypeVar("T")


class ServingSink(Protocol[T]):
    """What serving mode hands on (the session), and what it gives back."""

    def fold_stats(self, batch: StatsBatch) -> Sequence[tuple[int, Callable[[int], T]]]:
        """Consecutive stats lines folded; for each alert, the index of its line
        in the batch and what to say, given that line's number."""
        ...

    def read_events(self, events: list[Event], base: int) -> list[T]:
        """A line read by the patterns table (numbered from ``base`` + 1)."""
        ...

    def fold_requests(self, values: list[tuple[str, int]], line: int | None = None) -> None:
        """Request lines' values (patterns.request_values: kind, tokens), unnumbered."""
        ...


def hand_back(buf: bytes, start: int, end: int) -> int:
    """Offset of the first line in ``buf[start:end]`` that boot mode must read
    (a boot's first lines, a pool line: stats.HAND_BACK_HEADS), else end.

    With StringZilla (read/simd.py), one pass finds any of the heads' rare bytes
    (0.05 s on the 1.6 GB log against 0.10 s for a ``find`` of each); a chunk dense
    in them (upper-case or markdown prompts) is searched a head at a time."""
    if not simd.SIMD:
        return _hand_back_heads(buf, start, end)
    p = simd.find_first_of(buf, _HAND_BACK_BYTES, start, end)
    misses = 0
    while p >= 0:
        byte = buf[p]
        for anchor, off, head in HAND_BACK_HEADS:
            if byte == anchor[0] and p - off >= start and head.match(buf, p - off) is not None:
                return buf.rfind(b"\n", start, p) + 1 or start
        misses += 1
        if misses > _HAND_BACK_DENSE:
            return _hand_back_heads(buf, buf.rfind(b"\n", start, p) + 1 or start, end)
        p = simd.find_first_of(buf, _HAND_BACK_BYTES, p + 1, end)
    return end


_HAND_BACK_BYTES = bytes(anchor[0] for anchor, _, _ in HAND_BACK_HEADS)


def _hand_back_heads(buf: bytes, start: int, end: int) -> int:
    """``hand_back`` by a ``find`` of each head's rare byte."""
    cut = end
    find = buf.find
    for anchor, off, head in HAND_BACK_HEADS:
        p = find(anchor, start + off, cut)
        n = 0
        while p >= 0 and head.match(buf, p - off) is None:
            n += 1
            if n > _HAND_BACK_DENSE:
                m = head.search(buf, p - off, cut)
                p = -1 if m is None else m.start()
                break
            p = find(anchor, p + 1, cut)
        if p >= 0:
            cut = buf.rfind(b"\n", start, p) + 1 or start
    return cut


@dataclasses.dataclass(frozen=True, slots=True)
class _SplitLayout:
    """The head of a chunk's stats lines, as the split path reads them: STATS_MARKER
    splits the chunk, and the piece before each stats line ends with its ``tail_len``
    bytes: a newline, ``before`` (the bytes before the time), the time and ``after``
    (the bytes after the time, engine label included)."""

    before: bytes
    after: bytes
    engine: str | None

    @property
    def tail_len(self) -> int:
        return 1 + len(self.before) + 14 + len(self.after)


class _Times(Sequence[bytes | None]):
    """The header times of a split chunk's stats lines, cut from their heads only
    where the fold asks (its first and last line, an alert): bytes, never a
    StringZilla view, which would keep the chunk alive."""

    __slots__ = ("_tails", "_at")

    def __init__(self, tails: Sequence[bytes], at: int) -> None:
        self._tails = tails
        self._at = slice(at, at + 14)  # the time's bytes in a tail

    def __len__(self) -> int:
        return len(self._tails)

    @overload
    def __getitem__(self, i: int) -> bytes | None: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes | None]: ...

    def __getitem__(self, i: int | slice) -> bytes | None | Sequence[bytes | None]:
        if isinstance(i, slice):
            return [bytes(t[self._at]) for t in self._tails[i]]
        return bytes(self._tails[i][self._at])

    def __iter__(self) -> Iterator[bytes | None]:
        return (bytes(t[self._at]) for t in self._tails)


class _Heads:
    """What serving mode learned of the stats lines' heads: their layouts
    (read in place), the chunk regex for one, the engine labels and the
    header times' seconds seen."""

    def __init__(self) -> None:
        # Stats line heads seen, by length: (bytes before the time, the
        # time's offset, {bytes after the time: engine label}).
        self.layouts: dict[int, tuple[bytes, int, dict[bytes, str | None]]] = {}
        # The regex for a chunk's stats lines of one layout, its engine label
        # (_MISS: read from the line) and the chunks in a row that did not fit it.
        self.chunk_rx: re.Pattern[bytes] | None = None
        self.chunk_engine: _Label = None
        self.chunk_misses = 0
        # The split path's head (one engine label), and the chunks in a row it missed.
        self.split: _SplitLayout | None = None
        self.split_misses = 0
        self.engine_names: dict[bytes, str] = {}
        self.seconds_cache: dict[bytes, int] = {}
        self.hour_seconds: dict[bytes, int | None] = {}

    def read_head(self, buf: bytes, ls: int, p: int) -> tuple[str | None, bytes | None, int | None]:
        """The engine label, header time and its seconds of the stats line whose
        marker is at ``p`` (line start ``ls``), by the regexes. Learns the
        line's layout, so that the next lines like it are read in place.

        A layout is the head's length, the bytes before the time and the
        bytes after it (with the engine label: ``" [loggers.py:123] Engine
        000: "``). Learned only from an ASCII head without colour codes (byte
        offsets are text offsets) where the label cannot reach into the time
        (STATS_ENGINE_FAST reads at most 25 bytes before the marker).
        """
        engine = None
        if buf[p - 2 : p] == b": ":
            e = STATS_ENGINE_FAST.search(buf, max(p - 32, 0), p)
            if e is not None:
                engine = (e[1] or e[2] + b" engines").decode()
        head = buf[ls:p]
        time, off = header_time_at(head.decode("utf-8", "replace"))
        if time is None:
            return engine, None, None
        after = head[off + 14 :]
        if off >= 0 and head.isascii() and (len(after) >= 25 or not after.endswith(b": ")):
            layout = self.layouts.get(len(head))
            if layout is None or layout[0] != head[:off]:
                if len(self.layouts) >= _MAX_LAYOUTS:
                    self.layouts.clear()
                layout = self.layouts[len(head)] = (head[:off], off, {})
            if len(layout[2]) < _MAX_LAYOUTS:
                layout[2][after] = engine
        return engine, time.encode(), header_seconds(time)

    def learn_chunk_rx(self, head: bytes) -> None:
        """``chunk_rx`` for stats lines whose head has the layout of ``head``
        (a layout ``read_head`` learned): STATS_FAST with a look-behind
        for the line's start, the bytes before the time, the time, and the
        bytes after it, with an ``Engine 000`` label's digits read as digits
        of the same count (``STATS_ENGINE_FAST`` reads them so, and the
        header regex treats every digit alike).
        """
        layout = self.layouts.get(len(head))
        if layout is None or not head.startswith(layout[0]):
            return
        before, off = layout[0], layout[1]
        after = head[off + 14 :]
        engine = layout[2].get(after, _MISS)
        if engine is _MISS:
            return
        if self.split_misses < _MAX_CHUNK_MISSES:
            self.split = _SplitLayout(before, after, engine)
        digits = engine.encode() if engine is not None and engine.isdigit() else b""
        if digits and after.endswith(b"Engine " + digits + b": "):
            label = re.escape(after[: -len(digits) - 2]) + rb"(\d{%d}): " % len(digits)
            self.chunk_engine = _MISS
        else:
            label = re.escape(after) + rb"()"
            self.chunk_engine = engine
        if not STATS_FAST.pattern.startswith(STATS_MARKER):
            return  # (patterns.py changed its shape: the lines path reads it)
        marker = re.escape(STATS_MARKER)
        try:
            self.chunk_rx = re.compile(
                marker
                + rb"(?:(?<=(?<![^\n])"  # at a line's start
                + re.escape(before)
                + rb"(\d\d-\d\d \d\d:\d\d:\d\d)"
                + label
                + marker
                + rb")|)"
                + STATS_FAST.pattern[len(STATS_MARKER) :]
            )
        except re.error:  # STATS_FAST uses syntax of the regex module only
            self.chunk_misses = _MAX_CHUNK_MISSES

    def engines_of(self, digits: Sequence[bytes]) -> Sequence[str | None]:
        """The engine label of each line ``chunk_rx`` read (``digits``: an
        ``Engine 000`` label's, read by the regex)."""
        engine = self.chunk_engine
        if engine is not _MISS:
            return [engine] * len(digits)
        names = self.engine_names
        if digits and digits.count(digits[0]) == len(digits):  # one engine: the common chunk
            name = names.get(digits[0])
            if name is None:
                name = names[digits[0]] = digits[0].decode()
            return [name] * len(digits)
        engines = list(map(names.get, digits))
        if None in engines:
            for d in set(digits):
                names[d] = d.decode()
            engines = list(map(names.get, digits))
        return engines

    def seconds_of(self, times: Sequence[bytes]) -> list[int | None]:
        """``header_seconds`` of each time ``chunk_rx`` read (its shape is
        checked), cached: a busy log prints ten stats lines a second, and
        the new seconds are worked out from their hour's."""
        cache, hours = self.seconds_cache, self.hour_seconds
        out = list(map(cache.get, times))
        if None in out:
            if len(cache) > _MAX_CACHED_SECONDS:
                cache.clear()
                hours.clear()
            for t in set(times).difference(cache):
                seconds = _seconds_at(hours, t)
                if seconds is not None:  # else not a date (month 13): None, not cached
                    cache[t] = seconds
            out = list(map(cache.get, times))
        return out


def _seconds_at(hours: dict[bytes, int | None], time: bytes) -> int | None:
    """``header_seconds`` of a time of TIME_SHAPE_BYTES's shape, from its hour's (read
    once and kept in ``hours``: a busy log brings about 40 new times a 1 MiB chunk,
    each otherwise a regex match and five ``int``)."""
    hour = time[:8]  # "11-29 10"
    if hour not in hours:
        hours[hour] = header_seconds(hour + b":00:00")
    at_hour = hours[hour]
    return None if at_hour is None else at_hour + int(time[9:11]) * 60 + int(time[12:14])


def _request_values(buf: bytes, start: int, stop: int) -> list[tuple[str, int]]:
    """The values of the request lines of ``buf[start:stop]`` (--enable-log-requests), read a chunk
    at once (patterns.REQUEST_*_FAST). The chunk's first "Received request" line says
    which regexes can match (one boot, one wording: a new boot is handed back before
    it): with no ``ignore_eos=`` no max_tokens, with no ``prompt_token_ids: [`` no
    ids in the INFO lines, and only 0.32's wording (no prompt before the params) has
    the DEBUG details lines. So a log without request lines costs one find a chunk,
    and one whose lines cannot be read one find and a line (the benchmark's: 0.05 s
    on 400 MB where three finds over every chunk cost 0.4 s)."""
    find = buf.find
    p = find(REQUEST_MARKERS[0], start, stop)
    if p < 0:
        return []
    end = find(b"\n", p, stop)
    first = buf[p : stop if end < 0 else end]
    values: list[tuple[str, int]] = []
    if b"ignore_eos=" in first:
        values += [
            ("request_max_tokens", int(v))
            for v in REQUEST_MAX_TOKENS_FAST.findall(buf, start, stop)
            if v  # (b"": a request line without the value)
        ]
    rxs = [REQUEST_PROMPT_IDS_FAST] if b"prompt_token_ids: [" in first else []
    if b": params: SamplingParams(" in first and find(REQUEST_MARKERS[1], start, stop) >= 0:
        rxs.append(REQUEST_DETAILS_IDS_FAST)  # 0.32's wording: the ids at DEBUG
    for rx in rxs:
        for m in rx.finditer(buf, start, stop):
            ids = m.group(1)
            if ids is not None:  # (None: a line without the list)
                n = ids.count(b",") + 1 if ids.strip() else 0
                values.append(("request_prompt_tokens", n))
    return values


def _stats_batch(
    engines: Sequence[str | None],
    times: Sequence[bytes | None],
    seconds: Sequence[int | None],
    values: Sequence[Sequence[bytes | None]],
    absent: bytes | None = None,
) -> StatsBatch:
    """Consecutive stats lines as the sink folds them, their values as
    STATS_FAST's groups (``absent``: none, as ``finditer`` or ``findall``
    give it) a column each."""
    # (a line's required values are there whenever its values matched)
    running = cast("Sequence[bytes]", values[_RUNNING])
    pre, kv = values[_PREEMPTIONS], cast("Sequence[bytes]", values[_KV])
    n = len(running)
    waiting = values[_WAITING[0]]
    for other in _WAITING[1:]:  # one of them in each line
        if absent in waiting:
            # A chunk of one wording (V1's "Waiting" or V0's "Pending") takes the
            # other column whole; lines of both are merged line by line.
            q = values[other]
            if waiting.count(absent) == n:
                waiting = q
            else:
                waiting = [w or x for w, x in zip(waiting, q, strict=True)]
    preemptions = [0] * n if pre.count(absent) == n else [int(x) if x else 0 for x in pre]
    return StatsBatch(
        engines=engines,
        times=times,
        seconds=seconds,
        running=ints_of(running),
        waiting=ints_of(cast("Sequence[bytes]", waiting)),
        kv_usage_pct=kv_pcts_of(kv),
        preemptions=preemptions,
    )


class _SplitCaches:
    """What the split path (ServingReader._serve_split) keeps across chunks: each
    distinct tail's seconds, checked for one layout; each distinct key's values,
    read once; and how many of a line's first bytes hold its key (_HEADS_OF)."""

    def __init__(self) -> None:
        self.keys: dict[bytes, KeyValues] = {}  # the keys, read
        self.tail_seconds: dict[bytes, int | None] = {}  # the heads' seconds
        self.tail_layout: _SplitLayout | None = None  # the layout they were checked for
        self.long_heads = 0  # the heads read (_HEADS_OF)

    def seconds_of(
        self, tails: list[bytes], layout: _SplitLayout, hour_seconds: dict[bytes, int | None]
    ) -> dict[bytes, int | None] | None:
        """Each distinct tail's seconds, or None when one is not a stats line's head
        of ``layout``.

        Each distinct tail (a time) is checked and its seconds read once: its bytes
        before the time, the time's shape, and the bytes after it (the engine label
        just before the marker: a marker after another head or inside another line
        sends the chunk the other ways). With StringZilla the tails are views into
        the chunk: they hash otherwise than bytes, so the chunk's own table is keyed
        by them, the cache across chunks by their bytes (a view kept would keep the
        chunk alive); a tail checked for one layout is not for another.
        """
        cache = self.tail_seconds
        if len(cache) > _MAX_TAILS or self.tail_layout is not layout:
            cache.clear()  # (a tail is checked against its layout once)
            hour_seconds.clear()
            self.tail_layout = layout
        size, after = layout.tail_len, layout.after
        head = b"\n" + layout.before
        at = len(head)
        seconds_of: dict[bytes, int | None] = {}
        for t in set(tails):
            tb = bytes(t)
            if tb not in cache:
                time = tb[at : at + 14]
                if (
                    len(tb) != size
                    or not tb.startswith(head)
                    or not tb.endswith(after)
                    or not TIME_SHAPE_BYTES.fullmatch(time)
                ):
                    return None
                cache[tb] = _seconds_at(hour_seconds, time)
            seconds_of[t] = cache[tb]
        return seconds_of

    def values(self, pieces: list[bytes], n: int) -> list[KeyValues] | None:
        """The values of the ``n`` stats lines whose heads end ``pieces[1:]``, or
        None (another wording, or a key past 256 bytes).

        One regex pass over the pieces' heads joined with NUL (no Match object per
        line) reads each line's throughputs and cuts its key (stats.STATS_SPLIT_KEYS);
        each distinct key is read once. The pass starts at a NUL: a NUL in a head (no
        log line holds one) sends the chunk the other ways.
        """
        for k in range(self.long_heads, len(_HEADS_OF)):
            joined = b"\0".join(chain(_EMPTY, map(_HEADS_OF[k], islice(pieces, 1, None))))
            keys = STATS_SPLIT_KEYS.findall(joined)
            if len(keys) == n:
                self.long_heads = k
                break
        else:
            return None
        if simd.count(joined, b"\0", 0, len(joined)) != n:
            return None
        try:
            return list(map(self.keys.__getitem__, keys))
        except KeyError:
            return self._new_keys(keys, joined)

    def _new_keys(self, keys: list[bytes], joined: bytes) -> list[KeyValues] | None:
        """The values of a split chunk's keys, some not read yet (None: a key not of
        the fast grammar). A key that ends with a GPU's 0.0% may be V0's before its CPU's
        usage: that chunk's keys are cut again with the CPU's (STATS_SPLIT_KEYS_CPU),
        and such a key is never kept, as it reads otherwise with the CPU's after it."""
        known = self.keys
        if len(known) > _MAX_KEYS:
            known.clear()
        new = set(keys).difference(known)
        if any(k.endswith(GPU_ZERO_USAGE) for k in new):
            n = len(keys)
            keys = STATS_SPLIT_KEYS_CPU.findall(joined)
            if len(keys) != n:
                return None
            new = set(keys)
        table: dict[bytes, KeyValues] = {}
        for k in new:
            kv = known.get(k) or stats_key_values(k)
            if kv is None:
                return None
            table[k] = kv
            if not k.endswith(GPU_ZERO_USAGE):
                known[k] = kv
        return [table.get(k) or known[k] for k in keys]


class ServingReader(Generic[T]):
    """Serving mode's reading of one input (its learned layouts kept across
    hand-backs): stats lines and V0 preemption warnings, in line order.

    Attributes:
        v0_warnings: whether V0's preemption warning is looked for: not in a
            V1 boot, which never prints it (a real vLLM 0.32 preempted 13
            requests and logged none, tests/real_vllm); the search costs
            0.42 s on a 1.6 GB log. Set by the session on entering serving mode.
    """

    def __init__(
        self,
        source: str,
        framing: Framing,
        sink: ServingSink[T],
        on_stats: StatsSink | None = None,
        on_facts: Callable[[list[Fact]], None] | None = None,
    ) -> None:
        self.source = source
        self.framing = framing
        self.sink = sink
        self.on_stats = on_stats
        self.on_facts = on_facts  # each stats line's facts (--stats-jsonl)
        self.v0_warnings = True
        self._heads = _Heads()
        self._split = _SplitCaches()

    def serve(self, buf: bytes, start: int, stop: int) -> list[T]:
        """The complete lines ``buf[start:stop]``: stats lines and V0
        preemption warnings (``v0_warnings``), in line order. Counts the
        lines too (or leaves them: ``Framing``).

        A busy log has a stats line every twenty lines (the generated 1.6 GB
        log: 600,736), so this is where a full report spends its time. Three
        ways, the same result:

        * the chunk split on the stats marker (``_serve_split``, with or without
          StringZilla: read/simd.py), once the stats lines' head layout is known:
          taken when every stats line of the chunk has that head and one engine
          label, the usual wording, no V0 preemption warning is in it and no CSV
          is written; otherwise
        * the chunk at once (``_serve_chunk``): one regex reads every stats line's
          time, engine label and values, the matches listed in C, and the columns
          are converted and folded at once, on the same conditions but several
          labels; otherwise
        * line by line (``_serve_lines``), which learns the layouts.
        """
        requests = _request_values(buf, start, stop)
        if requests:
            self.sink.fold_requests(requests)
        p_pre = simd.find(buf, _PREEMPT_MARKER, start, stop) if self.v0_warnings else -1
        if p_pre < 0 and self.on_stats is None and self.on_facts is None:
            heads = self._heads
            if heads.split is not None:
                out = self._serve_split(buf, start, stop, heads.split)
                if out is not None:
                    heads.split_misses = 0
                    return out
                heads.split_misses += 1
                if heads.split_misses >= _MAX_CHUNK_MISSES:
                    heads.split = None
            if heads.chunk_rx is not None:
                out = self._serve_chunk(buf, start, stop)
                if out is not None:
                    return out
        return self._serve_lines(buf, start, stop, p_pre)

    def _serve_split(
        self, buf: bytes, start: int, stop: int, layout: _SplitLayout
    ) -> list[T] | None:
        """The stats lines of ``buf[start:stop]``, the chunk split on STATS_MARKER
        (read/simd.py), or None (nothing done) when a stats line has another head or
        wording, or the marker sits inside another line (the chunk regex or the lines
        then read it).

        No Python runs per line: each piece ends with the next stats line's head (its
        tail: ``itemgetter``) and starts with its values; the heads' first bytes are
        joined and read by one ``findall`` (stats.STATS_SPLIT_KEYS: the throughputs
        read, the text from "Running" to the KV usage, the key, cut unread), and each
        distinct tail (a time) and key is checked and read once, the lines' seconds
        and values then looked up by ``map``; the fold (watch.LoadWatch) takes the
        columns as the other paths give them. Without StringZilla the pieces are
        copies, and the same steps read them.
        """
        pieces = list(simd.split(buf, STATS_MARKER, start, stop))
        n = len(pieces) - 1
        lines = self.framing.counter(buf, start)
        if n == 0:
            self.framing.close(lines, stop)
            return []
        size = layout.tail_len
        end0 = start + len(pieces[0])
        nl = buf.rfind(b"\n", start, end0)
        tails: list[bytes] = [b"\n" + buf[start if nl < 0 else nl + 1 : end0]]
        tails += map(itemgetter(slice(-size, None)), islice(pieces, 1, n))
        seconds_of = self._split.seconds_of(tails, layout, self._heads.hour_seconds)
        if seconds_of is None:
            return None  # a stats line of another head, or a marker inside a line
        values = self._split.values(pieces, n)
        if values is None:
            return None  # another wording (or a key past 256 bytes): the row reads it
        running, waiting, kv_pct, preemptions = zip(*values, strict=True)
        alerts = self.sink.fold_stats(
            StatsBatch(
                engines=[layout.engine] * n,
                times=_Times(tails, len(layout.before) + 1),
                seconds=list(map(seconds_of.__getitem__, tails)),
                running=running,
                waiting=waiting,
                kv_usage_pct=kv_pct,
                preemptions=preemptions,
            )
        )
        out: list[T] = []
        if alerts:  # a few per boot (watch.MAX_CROSSING_ALERTS, firsts)
            # piece i + 1 starts just past line i's marker
            ends = list(accumulate(len(p) + len(STATS_MARKER) for p in pieces))
            for i, say in alerts:
                p = start + ends[i] - len(STATS_MARKER)
                out.append(say(lines.line_at(buf.rfind(b"\n", 0, p) + 1)))
        self.framing.close(lines, stop)
        return out

    def _serve_chunk(self, buf: bytes, start: int, stop: int) -> list[T] | None:
        """The stats lines of ``buf[start:stop]`` through ``_Heads.chunk_rx``; None
        (nothing done) when a stats line has another layout or wording."""
        heads = self._heads
        chunk_rx = heads.chunk_rx
        assert chunk_rx is not None
        lines = self.framing.counter(buf, start)
        # The groups of every match, listed in C (b"": a group that did not
        # take part); an alert's line is found by finding the matches again.
        rows = chunk_rx.findall(buf, start, stop)
        out: list[T] = []
        if rows:
            cols = tuple(zip(*rows, strict=True))
            if b"" in cols[_C_TIME] or b"" in cols[_C_VALUES]:
                heads.chunk_rx = None  # rebuilt by _serve_lines from the lines it reads
                heads.chunk_misses += 1
                return None
            times = cols[_C_TIME]
            batch = _stats_batch(
                heads.engines_of(cols[_C_ENGINE]),
                times,
                heads.seconds_of(times),
                cols[_C_VALUES:],
                absent=b"",
            )
            alerts = self.sink.fold_stats(batch)
            if alerts:  # a few per boot (watch.MAX_CROSSING_ALERTS, firsts)
                starts = [m.start() for m in chunk_rx.finditer(buf, start, stop)]
                for i, say in alerts:
                    ls = buf.rfind(b"\n", 0, starts[i]) + 1
                    out.append(say(lines.line_at(ls)))
        heads.chunk_misses = 0
        self.framing.close(lines, stop)
        return out

    def _serve_lines(self, buf: bytes, start: int, stop: int, p_pre: int) -> list[T]:
        """``serve`` a line at a time: the loop cuts each stats line's values,
        engine label and header time out of ``buf``; the lines are then
        converted and folded together (``_stats_batch``). The label and time
        are read in place for a line whose head has a layout already seen
        (``_Heads.read_head``): the same bytes before the time and after it, and
        the time's 14 bytes of the same shape. Line numbers are counted only
        where they are used (an alert, a CSV row, a slow line), and on from
        there to ``stop``, so that no byte is counted twice.
        """
        out: list[T] = []
        lines = self.framing.counter(buf, start)
        layouts = self._heads.layouts
        rows: list[_Row] = []
        rfind, startswith = buf.rfind, buf.startswith
        is_time = TIME_SHAPE_BYTES.fullmatch
        last_time, last_s = b"", None  # the last time read in place, and its seconds
        time: bytes | None
        seconds: int | None
        p = -1
        for m in STATS_FAST.finditer(buf, start, stop):
            p = m.start()
            g = m.groups()
            if g[0] is None or 0 <= p_pre < p:
                # A V0 preemption warning before this line, or a wording the
                # fast regex does not read: the patterns table, in line order.
                if rows:
                    out += self._fold_rows(buf, rows, lines)
                    rows = []
                while 0 <= p_pre < p:
                    out += self._slow_line_at(buf, p_pre, lines)
                    p_pre = buf.find(_PREEMPT_MARKER, buf.find(b"\n", p_pre), stop)
                if g[0] is None:
                    out += self._slow_line_at(buf, p, lines)
                    continue
            ls = rfind(b"\n", 0, p) + 1
            layout = layouts.get(p - ls)
            engine: _Label = _MISS
            if layout is not None and startswith(layout[0], ls):
                t0 = ls + layout[1]
                engine = layout[2].get(buf[t0 + 14 : p], _MISS)
                if engine is not _MISS:
                    time = buf[t0 : t0 + 14]
                    if time != last_time:
                        if is_time(time) is None:
                            engine = _MISS
                        else:
                            last_time, last_s = time, header_seconds(time)
                    seconds = last_s
            if engine is _MISS:
                engine, time, seconds = self._heads.read_head(buf, ls, p)
            rows.append((g, p, engine, time, seconds))
        if rows:
            out += self._fold_rows(buf, rows, lines)
        while p_pre >= 0:
            out += self._slow_line_at(buf, p_pre, lines)
            p_pre = buf.find(_PREEMPT_MARKER, buf.find(b"\n", p_pre), stop)
        self.framing.close(lines, stop)
        heads = self._heads
        if heads.chunk_rx is None and p >= 0 and heads.chunk_misses < _MAX_CHUNK_MISSES:
            heads.learn_chunk_rx(buf[rfind(b"\n", 0, p) + 1 : p])
        return out

    def _fold_rows(self, buf: bytes, rows: list[_Row], lines: LineCounter) -> list[T]:
        """``_stats_batch`` for rows cut line by line; outputs with their line
        numbers, and the CSV rows."""
        groups, offsets, engines, times, seconds = zip(*rows, strict=True)
        values = tuple(zip(*groups, strict=True))
        alerts = self.sink.fold_stats(_stats_batch(engines, times, seconds, values))
        out: list[T] = []
        on_stats, on_facts = self.on_stats, self.on_facts
        if on_stats is None and on_facts is None:
            for i, say in alerts:
                out.append(say(lines.line_at(buf.rfind(b"\n", 0, offsets[i]) + 1)))
            return out
        k = 0
        for i, p in enumerate(offsets):
            ls = buf.rfind(b"\n", 0, p) + 1
            number = lines.line_at(ls)
            while k < len(alerts) and alerts[k][0] == i:
                out.append(alerts[k][1](number))
                k += 1
            if on_facts is not None:
                on_facts(self._line_facts(buf[ls : buf.find(b"\n", p)], number))
            if on_stats is None:
                continue
            g, t = groups[i], times[i]
            on_stats(
                None if t is None else t.decode(),
                engines[i],
                int(g[_RUNNING]),
                int(next(w for j in _WAITING if (w := g[j]))),
                float(g[_KV]),
                float(g[_PROMPT]),
                float(g[_GEN]),
                int(g[_PREEMPTIONS] or 0),
                number,
            )
        return out

    def _line_facts(self, line: bytes, number: int) -> list[Fact]:
        """A stats line's facts, as boot mode gives them (stats.STATS_LINE, else
        the patterns table): for ``on_facts``."""
        m = STATS_LINE.fullmatch(line)
        if m is not None:
            events = stats_line_facts(m, number, self.source)
        else:
            events = list(scan_bytes(line + b"\n", self.source))
            events = [dataclasses.replace(e, line=number) for e in events]
        return [e for e in events if isinstance(e, Fact)]

    def _slow_line_at(self, buf: bytes, p: int, lines: LineCounter) -> list[T]:
        """The line of ``buf`` holding offset ``p``, through the patterns table."""
        ls = buf.rfind(b"\n", 0, p) + 1
        return self._slow_line(buf[ls : buf.find(b"\n", p)], lines.line_at(ls))

    def _slow_line(self, line: bytes, number: int) -> list[T]:
        """One line through the patterns table (a stats wording the fast regex
        does not read, a preemption warning), handed to the sink."""
        return self.sink.read_events(list(scan_bytes(line + b"\n", self.source)), number - 1)
