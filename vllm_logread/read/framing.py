"""Bytes -> whole lines: the unfinished tail, over-long lines, UTF-16, lazy line numbers.

An input arrives in chunks that end anywhere: ``Framing.frames`` hands on the
complete lines of each (as offsets into the chunk, never a copy of it) and
keeps the unfinished last line for the next; a line longer than
``MAX_LINE_BYTES`` is handed on by its head (markers and values sit at the
start of vLLM's lines) and the rest skipped.

Line numbers: boot mode counts every newline it takes. Serving mode numbers
only what it says (an alert, a slow line); from a regular file it leaves the
other lines uncounted and counts them from the file again when a later number
is asked for (``recount``): on the generated 1.6 GB log the alerts end in its
first megabyte, and counting the rest would be a quarter of the run. A pipe's
bytes are gone once read, so a pipe's lines are counted as they pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .scanner import _BOM_UTF16, MAX_LINE_BYTES

# count_newlines: ranges shorter than this are counted by ``bytes.count``
# (the edges of a chunk, one line), and so are lines shorter than
# _MEMCHR_MIN_LINE_BYTES on average (see count_newlines).
_MEMCHR_MIN_RANGE_BYTES = 1 << 16


_MEMCHR_MIN_LINE_BYTES = 48


_SAMPLE_BYTES = 4096


def count_newlines(buf: bytes, start: int = 0, end: int | None = None) -> int:
    """``buf.count(b"\\n", start, end)``, faster on a log's chunk.

    ``bytes.count`` of one byte compares every byte in a loop (about 2 GB/s
    here: 0.08 s per 160 MB, which a pipe pays on every byte, as it cannot be
    counted again later). ``bytes.replace`` deleting a byte finds it with
    ``memchr`` (CPython 3.11), so the length it takes off is the
    count, at 0.05 s per 160 MB on the benchmark's log (lines of 133 bytes)
    with the 1 MiB copy it makes; on lines of 11 bytes it is slower (0.17 s
    against 0.13 s), so a 4 KiB sample decides. The whole buffer is counted
    this way and its edges outside ``[start, end)`` taken off by
    ``bytes.count``, so the figure is the same count, never an estimate
    (tests/read/test_line_count.py compares the two on every edge).
    """
    n = len(buf)
    if end is None or end > n:
        end = n
    if end - start < max(_MEMCHR_MIN_RANGE_BYTES, n >> 1):
        return buf.count(b"\n", start, end)
    sample = buf.count(b"\n", start, start + _SAMPLE_BYTES)
    if sample * _MEMCHR_MIN_LINE_BYTES > _SAMPLE_BYTES:
        return buf.count(b"\n", start, end)
    whole = n - len(buf.replace(b"\n", b""))
    return whole - buf.count(b"\n", 0, start) - buf.count(b"\n", end, n)


# Complete lines ``buf[start:end]`` (``end`` just past a newline), and the
# input offset of ``buf[0]`` when ``buf`` is the input's own bytes (None: a
# joined line, a cut head, the last line given its newline).
Frame = tuple[bytes, int, int, "int | None"]


class LineCounter:
    """Line numbers in one buffer, counted forward only as far as asked."""

    __slots__ = ("buf", "lines", "pos", "settle", "used")

    def __init__(
        self, buf: bytes, pos: int, lines: int, settle: Callable[[], int] | None = None
    ) -> None:
        # ``lines`` before ``pos``; with ``settle``, those are counted by it
        # when a number is first asked for (lines left uncounted before ``pos``).
        self.buf, self.pos, self.lines, self.settle = buf, pos, lines, settle
        self.used = False  # a number was asked for

    def line_at(self, ls: int) -> int:
        """The 1-based number of the line starting at ``ls`` (never before the last asked)."""
        self.used = True
        if self.settle is not None:
            self.lines, self.settle = self.settle(), None
        self.lines += count_newlines(self.buf, self.pos, ls)
        self.pos = ls
        return self.lines + 1


class Framing:
    """One input's bytes as whole lines, and the count of the lines taken.

    Attributes:
        recount: newlines of the input's bytes [a, b) counted again from their
            source (a regular file: ``inputs.file_recount``); None: a pipe,
            whose bytes are gone. With it, serving mode leaves the lines it
            does not number uncounted and counts them when a number is asked
            for (a later alert, a new boot, ``lines_read``).
        lines: complete physical lines taken so far (before ``gap_from``, if set).
        fed: input bytes fed so far.
        is_utf16: the input opened with a UTF-16 byte order mark (None: no bytes yet).
    """

    __slots__ = (
        "_skipping_long",
        "_tail",
        "buf_at",
        "fed",
        "gap_from",
        "is_utf16",
        "lines",
        "recount",
    )

    def __init__(self) -> None:
        self.recount: Callable[[int, int], int] | None = None
        self.lines = 0
        self.fed = 0
        self.gap_from: int | None = None  # input offset from which lines are not counted yet
        self.buf_at: int | None = None  # input offset of the buffer serving mode reads lazily
        self.is_utf16: bool | None = None
        self._tail = b""  # the unfinished last line
        self._skipping_long = False

    @property
    def lines_read(self) -> int:
        """Every complete line so far, counted now if some were left."""
        if self.gap_from is not None:  # (never while an over-long line is skipped)
            self.settle(self.fed - len(self._tail))
        return self.lines

    def pass_through(self, data: bytes) -> None:
        """Bytes read whole elsewhere (a /metrics text): counted, not framed."""
        self.fed += len(data)
        self.lines += count_newlines(data)

    def frames(self, data: bytes) -> Iterator[Frame]:
        """The complete lines of the next bytes of the input, in order.

        Works on offsets into ``data``, never on a copy of it: a megabyte
        chunk copied twice costs more than reading its stats lines. The
        consumer takes each frame before the next is made (a frame's lines
        may change how the next are counted).
        """
        at = self.fed  # the input offset of data[0]
        self.fed += len(data)
        if self.is_utf16 is None:
            # The Scanner recodes UTF-16 (a Windows-saved log); serving mode
            # reads UTF-8 bytes only, so such an input stays in boot mode.
            self.is_utf16 = data[:2] in _BOM_UTF16
        start = 0
        if self._skipping_long:
            nl = data.find(b"\n")
            if nl < 0:
                return
            self._skipping_long = False
            start = nl + 1
        if self._tail:
            nl = data.find(b"\n", start)
            if nl < 0:
                yield from self._hold(data[start:])
                return
            # The input's own bytes (the tail came just before data): left
            # uncounted only behind lines already left so (one line is
            # cheaper to count than to read again).
            line_at = None if self.gap_from is None else at - len(self._tail)
            line, self._tail = self._tail + data[start : nl + 1], b""
            yield line, 0, len(line), line_at
            start = nl + 1
        end = data.rfind(b"\n", start) + 1
        if end <= start:
            yield from self._hold(data[start:])
            return
        yield data, start, end, at
        self._tail = data[end:] if end < len(data) else b""

    def _hold(self, part: bytes) -> Iterator[Frame]:
        """Keep an unfinished line; an over-long one is handed on by its head,
        the rest skipped."""
        self._tail += part
        if len(self._tail) <= MAX_LINE_BYTES:
            return
        self.settle(self.fed - len(self._tail))
        head = self._tail[:MAX_LINE_BYTES] + b"\n"
        self._tail = b""
        self._skipping_long = True
        yield head, 0, len(head), None

    def finish(self) -> Iterator[Frame]:
        """End of input: the last line, if it had no newline, given one."""
        if self._tail and not self._skipping_long:
            self.settle(self.fed - len(self._tail))
            tail, self._tail = self._tail + b"\n", b""
            yield tail, 0, len(tail), None

    # -- line numbers in serving mode ------------------------------------------------

    def read_lazily(self, at: int | None) -> bool:
        """Serving mode takes a buffer at input offset ``at``: whether its
        lines may be left uncounted (the input's own bytes, and a recount)."""
        lazy = at is not None and self.recount is not None
        self.buf_at = at if lazy else None
        return lazy

    def leave(self, at: int) -> None:
        """The lines from input offset ``at`` on are left uncounted."""
        if self.gap_from is None:
            self.gap_from = at

    def settle(self, to: int) -> int:
        """Count the lines left uncounted up to input offset ``to``; the lines
        before it."""
        if self.gap_from is not None:
            assert self.recount is not None
            self.lines += self.recount(self.gap_from, to)
            self.gap_from = None
        return self.lines

    def counter(self, buf: bytes, start: int) -> LineCounter:
        """Line numbers for ``buf`` from ``start`` on (counted when asked)."""
        if self.gap_from is None:
            return LineCounter(buf, start, self.lines)
        assert self.buf_at is not None
        at = self.buf_at + start
        return LineCounter(buf, start, self.lines, settle=lambda: self.settle(at))

    def close(self, lines: LineCounter, stop: int) -> None:
        """The lines of the buffer up to ``stop`` are taken: counted now (a
        pipe; a buffer where a line was numbered, as its next may be: V0's
        warnings, --stats-csv), or when a later number is asked for (a file:
        ``recount``)."""
        if self.buf_at is None or lines.used:
            self.lines = lines.line_at(stop) - 1
        elif self.gap_from is None:
            self.gap_from = self.buf_at + lines.pos
