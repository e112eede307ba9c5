"""serving mode: a chunk's stats lines read at memchr speed, and where boot mode must take over."""

from __future__ import annotations

from typing import Any

from .stats import HAND_BACK_HEADS

_HAND_BACK_DENSE = 256  # anchor hits in a chunk before searching the heads


# V0's preemption warning (patterns.py row "preemption_warning").
_PREEMPT_MARKER = b"is preempted by"


# A stats line read in serving mode: its regex groups, marker offset, engine
# label, header time and its seconds (pipeline.Session._serve).
_Row = tuple[tuple[bytes | None, ...], int, str | None, bytes | None, int | None]


_MISS: Any = object()


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


# Session._chunk_rx's groups: time, engine digits, then STATS_FAST's.
_C_TIME, _C_ENGINE, _C_VALUES = 0, 1, 2


def _hand_back(buf: bytes, start: int, end: int) -> int:
    """Offset of the first line in ``buf[start:end]`` that boot mode must read
    (a boot's first lines, a pool line: patterns.HAND_BACK_HEADS), else end."""
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
