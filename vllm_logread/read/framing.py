"""bytes to whole lines: the unfinished tail, over-long lines, UTF-16, lazy line numbers."""

from __future__ import annotations

from collections.abc import Callable

_BOM_UTF16 = (b"\xff\xfe", b"\xfe\xff")


class _LineCounter:
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
        self.lines += self.buf.count(b"\n", self.pos, ls)
        self.pos = ls
        return self.lines + 1
