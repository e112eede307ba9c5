"""Bytes -> facts, in chunks, touching only lines that can matter.

A day of serving log is gigabytes of access and request lines; the lines we
read (boot lines, stats lines) are a few percent of it. So we never split the
input into Python strings line by line: we search each chunk of bytes for the
literal markers of the patterns table, and only around a hit do we find the
line's bounds, decode it and run the regexes. Line numbers come from counting
newlines between hits (``bytes.count``, in C).

The same code serves a file and a live pipe: ``feed`` takes whatever bytes
arrived, handles every complete line in them at once, and keeps the unfinished
tail for the next call, so a fact is known the moment its line ends.
"""

from __future__ import annotations

import re as _re
from collections.abc import Iterator
from dataclasses import dataclass

from .facts import Fact
from .lines import has_header, parse_line, split_records
from .patterns import MARKERS, NearMiss, facts_from_message

# A line longer than this is cut: its head is kept (markers and values sit at
# the start of vLLM's lines) and the rest skipped, so a 2 GB line of JSON
# costs neither memory nor time.
MAX_LINE_BYTES = 64 * 1024
# A hard-wrapped record is rejoined from at most this many physical lines.
MAX_WRAP_LINES = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class ParseWarning:
    """A line that carries a known marker but could not be read (a near miss)."""

    line: int
    text: str
    source: str = "-"

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.text}"


Event = Fact | ParseWarning


def _marker_regex(markers: tuple[str, ...]) -> _re.Pattern[bytes]:
    # Longest first so that alternation prefers the specific marker. The
    # stdlib engine is used on bytes: its literal-prefix scan is fast here.
    alts = sorted({m.encode() for m in markers}, key=len, reverse=True)
    return _re.compile(b"|".join(_re.escape(a) for a in alts))


_MARKER_RX = _marker_regex(MARKERS)
_BOM_UTF16 = (b"\xff\xfe", b"\xfe\xff")


class Scanner:
    """Incremental scanner: ``feed(bytes)`` -> events for completed lines.

    >>> s = Scanner()
    >>> [f.kind for f in s.feed(b"INFO 01-01 00:00:00 [x.py:1] GPU KV cache size: 24,096 tokens\\n")]
    ['device', 'pool_tokens']
    """

    def __init__(self, source: str = "-") -> None:
        self.source = source
        self._rest = b""
        self._lines_done = 0  # physical lines fully consumed before _rest
        self._skipping_long = False  # inside an over-long line: drop until newline
        self._first = True
        self._utf16: str | None = None
        self._decoder: object | None = None

    @property
    def lines_read(self) -> int:
        """Physical lines consumed so far."""
        return self._lines_done

    def feed(self, data: bytes) -> list[Event]:
        """Take the next bytes of the input; return events for completed lines."""
        if self._first and data:
            self._first = False
            data = self._sniff(data)
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
            consumed = self._scan(buf, end, events, final=False)
            self._rest = buf[consumed:]
        else:
            self._rest = buf
        if len(self._rest) > MAX_LINE_BYTES and b"\n" not in self._rest:
            # An over-long line still open: read its head now, skip the rest.
            events.extend(self._line_events(self._rest[:MAX_LINE_BYTES], self._lines_done + 1))
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
            self._scan(buf, len(buf), events, final=True)
        return events

    # -- internals -----------------------------------------------------------

    def _sniff(self, data: bytes) -> bytes:
        """Undo a UTF-16 BOM (a Windows-saved log); UTF-8's BOM is dropped."""
        if data[:3] == b"\xef\xbb\xbf":
            return data[3:]
        if data[:2] in _BOM_UTF16:
            import codecs

            self._utf16 = "utf-16-le" if data[:2] == b"\xff\xfe" else "utf-16-be"
            self._decoder = codecs.getincrementaldecoder(self._utf16)(errors="replace")
            return self._recode(data[2:])
        return data

    def _recode(self, data: bytes) -> bytes:
        text: str = self._decoder.decode(data)  # type: ignore[attr-defined]
        return text.encode("utf-8", errors="replace")

    def _scan(self, buf: bytes, end: int, events: list[Event], *, final: bool) -> int:
        """Handle complete lines in ``buf[:end]``; return bytes consumed."""
        pos = 0  # start of the first line not yet counted
        search = _MARKER_RX.search
        while True:
            m = search(buf, pos, end)
            if m is None:
                break
            start = buf.rfind(b"\n", pos, m.start())
            start = pos if start < 0 else start + 1
            stop = buf.find(b"\n", m.end(), end)
            number = self._lines_done + buf.count(b"\n", pos, start) + 1
            line = buf[start:stop]
            nxt = stop + 1
            line_events = self._line_events(line, number)
            num_follow = 0
            if any(isinstance(e, ParseWarning) for e in line_events):
                # A near miss may be a record the terminal hard-wrapped: take
                # the following physical lines that do not start a record.
                more, complete = self._following(buf, nxt, end)
                if not complete and not final:
                    # Wait for more input before deciding.
                    self._lines_done = number - 1
                    return start
                joined = self._joined_events(line, more, number) if more else None
                if joined is not None:
                    line_events, num_follow = joined
                    nxt += sum(len(f) + 1 for f in more[:num_follow])
            events.extend(line_events)
            self._lines_done = number + num_follow
            pos = nxt
        self._lines_done += buf.count(b"\n", pos, end)
        return end

    @staticmethod
    def _following(buf: bytes, at: int, end: int) -> tuple[list[bytes], bool]:
        """Up to MAX_WRAP_LINES - 1 continuation lines after ``at``."""
        out: list[bytes] = []
        while len(out) < MAX_WRAP_LINES - 1:
            if at >= end:
                return out, False
            stop = buf.find(b"\n", at, end)
            if stop < 0:
                return out, False
            nxt = buf[at:stop]
            text = nxt.decode("utf-8", errors="replace")
            if not text.strip() or has_header(text) or _MARKER_RX.search(nxt):
                break
            out.append(nxt)
            at = stop + 1
        return out, True

    def _line_events(self, line: bytes, number: int) -> list[Event]:
        text = line.decode("utf-8", errors="replace").rstrip("\r")
        return self._record_events(text, number)

    def _joined_events(
        self, line: bytes, follow: list[bytes], number: int
    ) -> tuple[list[Event], int] | None:
        """Events of a line rejoined with its first continuations, if that reads
        cleanly, and how many continuation lines it took."""
        parts = [line, *follow]
        for n in range(2, len(parts) + 1):
            text = "".join(p.decode("utf-8", errors="replace").rstrip("\r") for p in parts[:n])
            events = self._record_events(text, number)
            if not any(isinstance(e, ParseWarning) for e in events):
                return events, n - 1
        return None

    def _record_events(self, text: str, number: int) -> list[Event]:
        events: list[Event] = []
        for rec in split_records(text):
            ll = parse_line(rec, number)
            for e in facts_from_message(
                ll.message, line=number, process=ll.process, source=self.source
            ):
                if isinstance(e, NearMiss):
                    events.append(ParseWarning(line=number, text=str(e), source=self.source))
                else:
                    events.append(e)
        return events


def scan_bytes(data: bytes, source: str = "-") -> Iterator[Event]:
    """All events of a whole input held in memory (tests, small logs)."""
    s = Scanner(source)
    yield from s.feed(data)
    yield from s.finish()
