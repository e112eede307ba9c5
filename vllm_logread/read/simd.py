"""Serving mode's byte search: StringZilla's SIMD search where its wheel is installed,
CPython's own where it is not; both give the same results.

A busy log is gigabytes of lines serving mode skips, so what it costs is how fast
a chunk is searched. CPython's ``bytes.find``, ``count`` and ``split`` look for a
long needle with a two-way/Horspool search, and its regex engine walks a chunk a
byte at a time; StringZilla (Apache-2.0, wheels for Linux and macOS, no compiler
at install) searches 32 or 64 bytes a step (AVX2/AVX-512/NEON). On the benchmark's
1.6 GB log in 1 MiB chunks: counting the stats marker 0.06 s against 0.39 s for
``bytes.count``; splitting on it 0.10 s against 0.57 s for ``bytes.split``, which
copies every piece; counting the newlines 0.13 s against 0.32 s
(framing.count_newlines' ``bytes.replace``); finding any of four rare bytes
0.05 s against 0.09 s for a ``find`` of each (docs/performance.md, "The SIMD
splitter").

``VLLM_LOGREAD_PURE_PYTHON=1`` (or ``SIMD = False``, as the tests do) takes
CPython's path even with the wheel installed: tests/read/test_serving.py reads every
wording both ways and compares with the patterns table.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from types import ModuleType
from typing import Final


def _stringzilla() -> ModuleType | None:
    if os.environ.get("VLLM_LOGREAD_PURE_PYTHON"):
        return None
    try:
        return importlib.import_module("stringzilla")
    except ImportError:  # no wheel for this platform: CPython's search
        return None


_SZ: Final = _stringzilla()


# Whether StringZilla's search is used (tests set it False to compare the two paths).
SIMD: bool = _SZ is not None


def count(buf: bytes, needle: bytes, start: int, stop: int) -> int:
    """``buf.count(needle, start, stop)``."""
    if SIMD and _SZ is not None:
        return int(_SZ.count(buf, needle, start, stop))
    return buf.count(needle, start, stop)


def find(buf: bytes, needle: bytes, start: int, stop: int) -> int:
    """``buf.find(needle, start, stop)``."""
    if SIMD and _SZ is not None:
        return int(_SZ.find(buf, needle, start, stop))
    return buf.find(needle, start, stop)


def split(buf: bytes, sep: bytes, start: int, stop: int) -> Sequence[bytes]:
    """``buf[start:stop].split(sep)``: with StringZilla (``SIMD``) as views into ``buf``,
    else as CPython's copies. A view is bytes-like (``re`` reads it, it compares equal to
    bytes) but hashes otherwise, and one kept would keep the chunk alive: copy it with
    ``bytes()``. CPython's split copies every piece: 1.55M instructions a 1 MiB chunk of
    the benchmark's log against StringZilla's 0.69M (callgrind; docs/performance.md),
    still less than the chunk regex serving mode read such a chunk with before."""
    if SIMD and _SZ is not None:
        pieces: Sequence[bytes] = _SZ.Str(buf)[start:stop].split(sep)
        return pieces
    return (buf if start == 0 and stop == len(buf) else buf[start:stop]).split(sep)


def find_first_of(buf: bytes, chars: bytes, start: int, stop: int) -> int:
    """The offset of the first byte of ``buf[start:stop]`` that is one of ``chars``
    (-1: none); only with StringZilla (``SIMD``): CPython has no such search."""
    assert _SZ is not None
    return int(_SZ.find_first_of(buf, chars, start, stop))
