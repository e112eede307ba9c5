"""Bytes -> facts, in chunks, touching only lines that can matter.

A day of serving log is gigabytes of access and request lines; the lines we
read (boot lines, stats lines) are a few percent of it. So we never split the
input into Python strings line by line: we search each chunk of bytes for the
literal markers of the patterns table, and only around a hit do we find the
line's bounds, decode it and run the regexes. Line numbers come from counting
newlines between hits (``bytes.count``, in C).

Finding the markers is most of the work, so it is done in as few passes over
a chunk as the markers allow (see ``_BootMarkers``): one ``bytes.find`` loop
(memchr) per rare byte that some markers carry (``z`` of "KV cache size",
``L`` of "vLLM"), and one stdlib-regex pass per common byte for the markers
without a rare one (``y`` of "memory"). A single regex
alternation of all 45 markers would try a match at nearly every byte: 56 s on
a 1.6 GB serving log, against about 4 s this way.

A stats line (one line in twenty of a busy log) that has vLLM's usual shape
is read by one anchored bytes regex (``_STATS_LINE``) straight into the facts
the patterns table would give; any other line with a marker goes through
lines.py and patterns.py as before. tests/read/test_stream.py reads every stats
wording both ways and compares.

The same code serves a file and a live pipe: ``feed`` takes whatever bytes
arrived, handles every complete line in them at once, and keeps the unfinished
tail for the next call, so a fact is known the moment its line ends.
"""

from __future__ import annotations

import bisect
import codecs
import functools
import itertools
import re as _re
from collections.abc import Iterator
from dataclasses import dataclass

from .facts import Event, Fact, ParseWarning
from .grammar import NearMiss
from .lines import has_header, parse_line, split_records, worker_label
from .patterns import MARKERS, ROWS, SENTENCES, facts_from_message
from .stats import STATS_KINDS_IN_ORDER, STATS_LINE, stats_line_facts

# A line longer than this is cut: its head is kept (markers and values sit at
# the start of vLLM's lines) and the rest skipped, so a 2 GB line of JSON
# costs neither memory nor time.
MAX_LINE_BYTES = 64 * 1024


# A hard-wrapped record is rejoined from at most this many physical lines.
MAX_WRAP_LINES = 4


# A message re-wrapped at sentence breaks takes at most this many more lines.
MAX_SENTENCE_LINES = 6


def _marker_regex(markers: tuple[str, ...]) -> _re.Pattern[bytes]:
    # Longest first so that alternation prefers the specific marker. Used on
    # one line at a time (is a wrapped line's continuation a new record?).
    alts = sorted({m.encode() for m in markers}, key=len, reverse=True)
    return _re.compile(b"|".join(_re.escape(a) for a in alts))


@functools.cache
def _any_marker() -> _re.Pattern[bytes]:
    """Every marker of the patterns table, compiled the first time a near miss
    or a hard-wrapped capture asks (2.9 ms: a fiftieth of a short log's report)."""
    return _marker_regex(MARKERS)


# The first lines of the messages a paste may re-wrap at sentence breaks.
_SENTENCE_RX = _marker_regex(tuple(mk for mk, _ in SENTENCES))


_BOM_UTF16 = (b"\xff\xfe", b"\xfe\xff")


# Bytes that are rare in a serving log (access lines, request lines, stats
# lines): a memchr loop over a megabyte finds them in about 0.05 ms. Rarest
# first; V, K, U and G come once per stats line (about 400 times a megabyte),
# still cheap. The second byte of the block characters of vLLM's logo (0x96)
# leads.
_RARE_BYTES = b"\x96\x88ZQJXYzjDBLMCwVKUG"


# For markers with none of those: common bytes, least common first. "y" alone
# covers the "memory" family, "k" the blocks lines, "g" the rest.
_COMMON_BYTES = b"ykgfxbdvpqmhcluwtnoeisarSTEWAPRNIOFH"


# A rare byte seen more often than this in a chunk is searched there with its
# group's regex instead (one pass in C) for the next _DENSE_CHUNKS chunks.
_SPARSE_LIMIT = 512


_DENSE_CHUNKS = 16


@dataclass(frozen=True, slots=True)
class _Group:
    """Markers found through one byte they all carry."""

    anchor: bytes  # one byte
    markers: tuple[tuple[bytes, int], ...]  # (marker, offset of the anchor in it)
    source: bytes  # a regex: the anchor, then each marker around it
    is_common: bool  # searched with the regex from the start

    @property
    def regex(self) -> _re.Pattern[bytes]:
        # Compiled when first needed (re caches it): a rare byte's regex is
        # only used on an input where that byte turns out common.
        return _re.compile(self.source)


def _not_holding_another(markers: tuple[bytes, ...]) -> list[bytes]:
    """The markers that hold no other marker (one that does is found through it).

    Each marker is searched for in all of them joined (by NUL, which no marker
    holds), ``bytes.find`` in C: 0.15 ms for the table's 124 boot markers, where
    testing every pair in Python took 3.5 ms of each report's start-up.

    >>> _not_holding_another((b"KV cache", b"GPU KV cache size", b"blocks"))
    [b'KV cache', b'blocks']
    """
    joined = b"\0".join(markers)
    starts = list(itertools.accumulate((len(m) + 1 for m in markers[:-1]), initial=0))
    holding: set[int] = set()
    for other in set(markers):
        at = joined.find(other)
        while at >= 0:
            k = bisect.bisect_right(starts, at) - 1  # the marker this occurrence is in
            if markers[k] != other:
                holding.add(k)
            at = joined.find(other, at + 1)
    return [m for k, m in enumerate(markers) if k not in holding]


@functools.cache
def _groups(markers: tuple[bytes, ...]) -> tuple[_Group, ...]:
    """Group the markers by the byte each is found through.

    The regex passes are the costly part (about 0.3 ns a byte each), so there
    are as few as the markers without a rare byte need; a marker that carries
    one of those bytes rides along in that pass (a few nanoseconds per hit),
    and the rest get a memchr loop on their rarest byte.
    """
    needed = _not_holding_another(markers)
    order = _COMMON_BYTES + bytes(range(256))  # least common first, then any byte
    passes = sorted(
        {next(b for b in order if b in m) for m in needed if not any(b in m for b in _RARE_BYTES)},
        key=order.index,
    )  # the common bytes that need a regex pass
    by_anchor: dict[int, list[bytes]] = {}
    for m in needed:
        on_pass = [b for b in passes if b in m]
        anchor = on_pass[0] if on_pass else next(b for b in _RARE_BYTES if b in m)
        by_anchor.setdefault(anchor, []).append(m)
    out = []
    for b, ms in by_anchor.items():
        a = bytes([b])
        alts = []
        pairs = []
        for m in sorted(ms):
            k = m.index(a)
            pairs.append((m, k))
            # The regex sits on the anchor. The marker's tail comes first, so
            # that at most anchor bytes the branch fails on one literal byte
            # (sre skips an alternative whose first literal differs); a
            # lookbehind over the whole marker then checks its head.
            look = b"(?<=" + _re.escape(m) + b")" if k else b""
            alts.append(_re.escape(m[k + 1 :]) + look)
        source = _re.escape(a) + b"(?:" + b"|".join(alts) + b")"
        out.append(_Group(a, tuple(pairs), source, b in passes))
    return tuple(out)


class _BootMarkers:
    """Where the markers of every row but the stats row are, in a chunk."""

    def __init__(self, markers: list[bytes]) -> None:
        self.groups = _groups(tuple(markers))
        self._dense_left = {g.anchor: 0 for g in self.groups}

    def hits(self, buf: bytes, end: int) -> list[int]:
        """Sorted offsets in ``buf[:end]`` inside marker occurrences (one per
        occurrence, maybe several per line)."""
        out: list[int] = []
        find = buf.find
        startswith = buf.startswith
        for g in self.groups:
            if g.is_common or self._dense_left[g.anchor]:
                if self._dense_left[g.anchor]:
                    self._dense_left[g.anchor] -= 1
                out.extend(m.start() for m in g.regex.finditer(buf, 0, end))
                continue
            a = g.anchor
            found: list[int] = []
            n = 0
            i = find(a, 0, end)
            while i >= 0:
                n += 1
                if n > _SPARSE_LIMIT:
                    self._dense_left[a] = _DENSE_CHUNKS
                    found = [m.start() for m in g.regex.finditer(buf, 0, end)]
                    break
                for m, k in g.markers:
                    if i >= k and startswith(m, i - k):
                        found.append(i)
                        break
                i = find(a, i + 1, end)
            out.extend(found)
        out.sort()
        return out


_STATS_ROW = next(row for row in ROWS if row.name == "stats")


# The stats row is searched on its own (one line in twenty of a busy log).
# "Avg prompt throughput", not "...: ": bytes.find skips by the needle's last
# byte, and a space there makes the search three times slower.
_STATS_NEEDLE = _STATS_ROW.markers[0].encode()


_BOOT_MARKERS = [m.encode() for m in MARKERS if m.encode() != _STATS_NEEDLE]


_STATS_KINDS = frozenset(STATS_KINDS_IN_ORDER)

# The stats line's fast path (stats.STATS_LINE).
_STATS_LINE = STATS_LINE


def _following(
    buf: bytes, at: int, end: int, *, limit: int = MAX_WRAP_LINES - 1, any_line: bool = False
) -> tuple[list[bytes], bool]:
    """Up to ``limit`` continuation lines after ``at`` (lines without a
    header; unless ``any_line``, without a marker either)."""
    out: list[bytes] = []
    while len(out) < limit:
        if at >= end:
            return out, False
        stop = buf.find(b"\n", at, end)
        if stop < 0:
            return out, False
        nxt = buf[at:stop]
        text = nxt.decode("utf-8", errors="replace")
        if not text.strip() or has_header(text) or (not any_line and _any_marker().search(nxt)):
            break
        out.append(nxt)
        at = stop + 1
    return out, True


class _Records:
    """A line's records to events (patterns.facts_from_message), with the one
    ``worker_rank`` fact each rank label gets on its first line; and the joins
    of a line with its continuations or later sentences."""

    def __init__(self, source: str) -> None:
        self.source = source
        # (rank label, process tag) pairs seen: a worker_rank fact for each first one.
        self._labels_seen: set[tuple[str, str | None]] = set()

    def sentences_joined(
        self, line: bytes, follow: list[bytes], number: int, events: list[Event]
    ) -> tuple[list[Event], int] | None:
        """Events of a line rejoined with the next sentences of its message
        (patterns.SENTENCES), and how many lines they took; None if the next
        line is no later sentence of it, or the join reads worse."""
        text = line.decode("utf-8", errors="replace").rstrip("\r")
        heads = next(h for mk, h in SENTENCES if mk in text)
        parts = [text]
        for nxt in follow:
            msg = parse_line(nxt.decode("utf-8", errors="replace").rstrip("\r"), number).message
            if not msg.startswith(heads):
                break
            parts.append(msg)
        if len(parts) == 1:
            return None
        joined = self.record_events(" ".join(parts), number)

        def misses(evs: list[Event]) -> int:
            return sum(isinstance(e, ParseWarning) for e in evs)

        if misses(joined) > misses(events):
            return None
        return joined, len(parts) - 1

    def line_events(self, line: bytes, number: int) -> list[Event]:
        text = line.decode("utf-8", errors="replace").rstrip("\r")
        return self.record_events(text, number)

    def joined_events(
        self, line: bytes, follow: list[bytes], number: int
    ) -> tuple[list[Event], int] | None:
        """Events of a line rejoined with its first continuations, if that reads
        cleanly, and how many continuation lines it took."""
        parts = [line, *follow]
        for n in range(2, len(parts) + 1):
            text = "".join(p.decode("utf-8", errors="replace").rstrip("\r") for p in parts[:n])
            events = self.record_events(text, number)
            if not any(isinstance(e, ParseWarning) for e in events):
                return events, n - 1
        return None

    def record_events(self, text: str, number: int) -> list[Event]:
        events: list[Event] = []
        for rec in split_records(text):
            ll = parse_line(rec, number)
            found: list[Event] = []
            for e in facts_from_message(
                ll.message,
                line=number,
                process=ll.process,
                source=self.source,
                time=ll.time,
                site=ll.site,
            ):
                if isinstance(e, NearMiss):
                    found.append(ParseWarning(line=number, text=str(e), source=self.source))
                else:
                    found.append(e)
            label = worker_label(ll.process, rec[:40])
            is_stats = any(isinstance(e, Fact) and e.kind in _STATS_KINDS for e in found)
            if label is not None and not is_stats and (label, ll.process) not in self._labels_seen:
                # A worker rank's first line: one ``worker_rank`` fact a label (boots.py
                # counts the ranks a log shows; a TP=4 boot's Worker_TP0..3 are 4). Stats
                # lines are the API server's (their fast path reads no label).
                self._labels_seen.add((label, ll.process))
                events.append(
                    Fact(
                        kind="worker_rank",
                        value=label,
                        line=number,
                        process=ll.process,
                        source=self.source,
                        time=ll.time,
                    )
                )
            events.extend(found)
        return events


class Scanner:
    """Incremental scanner: ``feed(bytes)`` -> events for completed lines.

    With ``read_stats=False`` stats lines are not looked for at all (a boot
    report alone); a stats line that also carries another row's marker is
    still read whole.

    >>> s = Scanner()
    >>> [f.kind for f in s.feed(b"INFO 01-01 00:00:00 [x.py:1] GPU KV cache size: 24,096 tokens\\n")]
    ['device', 'pool_tokens']
    """

    def __init__(self, source: str = "-", *, read_stats: bool = True) -> None:
        self.source = source
        self.read_stats = read_stats
        self._records = _Records(source)
        self._rest = b""
        self._lines_done = 0  # physical lines fully consumed before _rest
        self._skipping_long = False  # inside an over-long line: drop until newline
        self._first = True
        self._utf16: str | None = None
        self._decoder: codecs.IncrementalDecoder | None = None
        self._boot = _BootMarkers(_BOOT_MARKERS)
        self._fast_stats = True  # tests turn it off to compare with the general path
        self._wrap_width: int | None = None  # a hard-wrapped terminal capture's width

    @property
    def lines_read(self) -> int:
        """Physical lines consumed so far."""
        return self._lines_done

    @property
    def is_hard_wrapped(self) -> bool:
        """Whether the input is a terminal capture hard-wrapped at a fixed width."""
        return self._wrap_width is not None

    @property
    def is_first(self) -> bool:
        """No bytes were fed yet."""
        return self._first

    def feed(self, data: bytes, *, sample: bytes | None = None) -> list[Event]:
        """Take the next bytes of the input; return events for completed lines.

        ``sample``: the first bytes the input has, when ``data`` is only their
        head (the session feeds a chunk a slice at a time): a hard-wrapped
        capture is recognised from them (``wrap_width``), as if fed whole.
        """
        if self._first and data:
            self._first = False
            data = self._sniff(data)
            if sample is not None and self._utf16 is None:
                data_sample = sample[3:] if sample[:3] == b"\xef\xbb\xbf" else sample
            else:
                data_sample = data
            self._wrap_width = wrap_width(data_sample)
        elif self._utf16 is not None:
            data = self._recode(data)
        if self._skipping_long:
            nl = data.find(b"\n")
            if nl < 0:
                return []
            self._skipping_long = False
            self._lines_done += 1
            data = data[nl + 1 :]
        buf = self._rest + data if self._rest else data
        end = buf.rfind(b"\n") + 1
        events: list[Event] = []
        if end:
            scan = self._scan_wrapped if self._wrap_width else self._scan
            consumed = scan(buf, end, events, final=False)
            self._rest = buf[consumed:]
        else:
            self._rest = buf
        if len(self._rest) > MAX_LINE_BYTES and b"\n" not in self._rest:
            # An over-long line still open: read its head now, skip the rest.
            events.extend(
                self._records.line_events(self._rest[:MAX_LINE_BYTES], self._lines_done + 1)
            )
            events.append(
                ParseWarning(
                    line=self._lines_done + 1,
                    text=f"line longer than {MAX_LINE_BYTES} bytes: only its start was read",
                    source=self.source,
                )
            )
            self._rest = b""
            self._skipping_long = True
        return events

    def finish(self) -> list[Event]:
        """End of input: handle the last line even without a newline."""
        if self._skipping_long:
            self._skipping_long = False
            self._lines_done += 1
            return []
        buf = self._rest
        self._rest = b""
        events: list[Event] = []
        if buf:
            if not buf.endswith(b"\n"):
                buf += b"\n"
            scan = self._scan_wrapped if self._wrap_width else self._scan
            scan(buf, len(buf), events, final=True)
        return events

    # -- internals -----------------------------------------------------------

    def _sniff(self, data: bytes) -> bytes:
        """Undo a UTF-16 BOM (a Windows-saved log); UTF-8's BOM is dropped."""
        if data[:3] == b"\xef\xbb\xbf":
            return data[3:]
        if data[:2] in _BOM_UTF16:
            self._utf16 = "utf-16-le" if data[:2] == b"\xff\xfe" else "utf-16-be"
            self._decoder = codecs.getincrementaldecoder(self._utf16)(errors="replace")
            return self._recode(data[2:])
        return data

    def _recode(self, data: bytes) -> bytes:
        assert self._decoder is not None
        text: str = self._decoder.decode(data)
        return text.encode("utf-8", errors="replace")

    def _scan(self, buf: bytes, end: int, events: list[Event], *, final: bool) -> int:
        """Handle complete lines in ``buf[:end]``; return bytes consumed.

        Walks the marker hits in order: boot-row hits (found for the whole
        chunk at once) and stats lines (found one after the other).
        """
        find, rfind, count = buf.find, buf.rfind, buf.count
        pos = 0  # start of the first line not yet consumed
        number = self._lines_done  # lines consumed before pos
        hits = self._boot.hits(buf, end)
        num_hits, h = len(hits), 0
        needle = _STATS_NEEDLE
        ns = find(needle, 0, end) if self.read_stats else -1
        if ns < 0:
            ns = end
        fast = self._stats_facts if self._fast_stats else None
        while True:
            while h < num_hits and hits[h] < pos:
                h += 1
            nb = hits[h] if h < num_hits else end
            if ns < pos:
                ns = find(needle, pos, end)
                if ns < 0:
                    ns = end
            at = nb if nb < ns else ns
            if at >= end:
                break
            start = rfind(b"\n", pos, at) + 1 or pos
            stop = find(b"\n", at, end)
            number += count(b"\n", pos, start)
            if at == ns and nb > stop and fast is not None:
                m = _STATS_LINE.fullmatch(buf, start, stop)
                if m is not None:
                    events.extend(fast(m, number + 1))
                    number += 1
                    pos = stop + 1
                    continue
            line = buf[start:stop]
            nxt = stop + 1
            line_events = self._records.line_events(line, number + 1)
            num_follow = 0
            if any(isinstance(e, ParseWarning) for e in line_events):
                # A near miss may be a record the terminal hard-wrapped: take
                # the following physical lines that do not start a record.
                more, complete = _following(buf, nxt, end)
                if not complete and not final:
                    # Wait for more input before deciding.
                    self._lines_done = number
                    return start
                joined = self._records.joined_events(line, more, number + 1) if more else None
                if joined is not None:
                    line_events, num_follow = joined
                    nxt += sum(len(f) + 1 for f in more[:num_follow])
            elif _SENTENCE_RX.search(line):
                # A message re-wrapped at its sentence breaks: its next
                # sentences, each alone on a line without a header.
                more, complete = _following(buf, nxt, end, limit=MAX_SENTENCE_LINES, any_line=True)
                if not complete and not final:
                    self._lines_done = number
                    return start
                joined = self._records.sentences_joined(line, more, number + 1, line_events)
                if joined is not None:
                    line_events, num_follow = joined
                    nxt += sum(len(f) + 1 for f in more[:num_follow])
            events.extend(line_events)
            number += 1 + num_follow
            pos = nxt
        self._lines_done = number + count(b"\n", pos, end)
        return end

    def _scan_wrapped(self, buf: bytes, end: int, events: list[Event], *, final: bool) -> int:
        """A terminal capture hard-wrapped at ``_wrap_width`` columns: every
        physical line exactly that wide continues on the next one (unless the
        next starts a record), so records are rejoined before any marker is
        looked for (a wrap may cut a marker in two). Such captures are pastes
        of a screen or two, so this path goes line by line."""
        width = self._wrap_width or 0
        lines = buf[:end].split(b"\n")[:-1]
        number = self._lines_done
        i = 0
        while i < len(lines):
            parts = [lines[i].rstrip(b"\r")]
            j = i + 1
            while _columns(parts[-1]) == width:
                if j == len(lines):
                    if not final:  # the continuation has not arrived yet
                        self._lines_done = number
                        return sum(len(x) + 1 for x in lines[:i])
                    break
                nxt = lines[j].rstrip(b"\r")
                if not nxt.strip() or has_header(nxt.decode("utf-8", errors="replace")):
                    break
                parts.append(nxt)
                j += 1
            record = b"".join(parts)
            if _any_marker().search(record):
                events.extend(self._records.line_events(record, number + 1))
            number += j - i
            i = j
        self._lines_done = number
        return end

    def _stats_facts(self, m: _re.Match[bytes], number: int) -> list[Event]:
        """The facts of a stats line that _STATS_LINE read (as the row builds them)."""
        return stats_line_facts(m, number, self.source)


def _columns(line: bytes) -> int:
    """Terminal columns of a line (characters; ANSI colours take none)."""
    if line.isascii() and b"\x1b" not in line:
        return len(line)  # (the common line: no decoding; wrap_width asks 4,000 times)
    text = line.decode("utf-8", errors="replace")
    if "\x1b" in text:
        text = _re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    return len(text)


def wrap_width(data: bytes, *, sample_lines: int = 4000) -> int | None:
    r"""The width a terminal capture was hard-wrapped at, or None.

    A capture wrapped at W columns has lines exactly W wide (never wider) that
    continue on a next line without a header of its own. Three such lines, and
    no line wider, make the call; W must be a plausible terminal (40+ columns).

    >>> head = b"INFO 01-01 00:00:00 [a.py:1] GPU KV cache size: 24,0"
    >>> wrap_width((head + b"\n96 tokens\n") * 3), wrap_width(head + b"\n" + head + b"\n")
    (52, None)
    """
    lines = data.split(b"\n", sample_lines)[:sample_lines]
    if len(lines) < 4:
        return None
    widths = [_columns(x.rstrip(b"\r")) for x in lines]
    width = max(widths)
    if width < 40:
        return None
    continued = 0
    for k in range(len(lines) - 1):
        if widths[k] == width and lines[k + 1].strip():
            if not has_header(lines[k + 1].decode("utf-8", errors="replace")):
                continued += 1
    return width if continued >= 3 else None


def scan_bytes(data: bytes, source: str = "-") -> Iterator[Event]:
    """All events of a whole input held in memory (tests, small logs)."""
    s = Scanner(source)
    yield from s.feed(data)
    yield from s.finish()
