"""How a printed number is read: NUM/INT, its decimals, lazily compiled parts."""

from __future__ import annotations

import math
from typing import cast

import regex as re

from .facts import KIND_TYPES, Value

# A printed float or int, keeping its sign; nan/inf are recognised so the line
# is not a near miss, and dropped with a warning by `_number`. Every number
# ends where its text ends (_END): 21 nines are no number, never the first 20
# of them (1e20 read from "999999999999999999999"), and "1e-308", "0x10",
# "1_000" or "1,2,3" are not 1, 0, 1 or 1.
_END = r"(?![eE][-+]?\d|[xX][0-9a-fA-F]|_\d)"


NUM = rf"(?:-?\d{{1,20}}(?:\.\d{{1,20}})?(?![,.]?\d){_END}|-?nan|-?inf)"


# An integer that may carry thousands separators ("24,096").
INT_C = rf"(?:\d{{1,3}}(?:,\d{{3}}){{1,6}}|\d{{1,20}})(?![,.]?\d){_END}"


INT = rf"\d{{1,20}}(?![,.]?\d){_END}"


class NearMiss(ValueError):
    """A line carries a known marker but a value in it cannot be read."""


class PartialRead(NearMiss):
    """Part of a line was read and part was not: the facts of the parts that
    were read (``built``) still count, and the rest is a near miss."""

    def __init__(self, message: str, built: list[tuple[str, Value, int | None]]) -> None:
        super().__init__(message)
        self.built = built


Built = list[tuple[str, Value, int | None]]  # (kind, value, decimals)


def _decimals(text: str) -> int | None:
    return len(text) - text.index(".") - 1 if "." in text else None


def _number(kind: str, text: str) -> tuple[Value, int | None]:
    """Convert a captured number to the kind's type.

    >>> _number("pool_tokens", "24,096")
    (24096, None)
    >>> _number("available_kv_gib", "3.31")
    (3.31, 2)
    """
    typ = KIND_TYPES[kind]
    clean = text.replace(",", "")
    if typ is int:
        if "." in clean:
            raise NearMiss(f"{kind}: {text!r} is not a whole number")
        return int(clean), None
    value = float(clean)
    if not math.isfinite(value):
        raise NearMiss(f"{kind}: {text!r} is not a finite number")
    return value, _decimals(clean)


class _LazyPattern:
    """A row's VERBOSE regex (or a part's, ``flags=0``), compiled the first
    time it is used.

    The rows' regexes take about 30 ms to compile, a quarter of a report's
    start-up on a short log, and a log uses a dozen of them: the others are
    never compiled.
    """

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = re.VERBOSE) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    def _get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    # search and match take regex.Pattern's arguments and defaults (types-regex).
    def search(
        self,
        string: str,
        pos: int | None = None,
        endpos: int | None = None,
        concurrent: bool | None = None,
        partial: bool = False,
        timeout: float | None = None,
    ) -> re.Match[str] | None:
        return self._get().search(string, pos, endpos, concurrent, partial, timeout)

    def match(
        self,
        string: str,
        pos: int | None = None,
        endpos: int | None = None,
        concurrent: bool | None = None,
        partial: bool = False,
        timeout: float | None = None,
    ) -> re.Match[str] | None:
        return self._get().match(string, pos, endpos, concurrent, partial, timeout)

    def __getattr__(self, name: str) -> object:  # pattern, finditer, groupindex, ...
        # (object: callers see this class as the re.Pattern[str] it is cast to.)
        return getattr(self._get(), name)

    @property  # type: ignore[misc]
    def __class__(self) -> type[re.Pattern[str]]:  # type: ignore[override]
        # isinstance(row.regex, regex.Pattern) holds, as for the compiled pattern
        # (the override on purpose: this stands in for the pattern's class).
        return type(self._get())


def _c(pattern: str) -> re.Pattern[str]:
    return cast("re.Pattern[str]", _LazyPattern(pattern))


def _part(pattern: str) -> re.Pattern[str]:
    """A part's regex (not VERBOSE), compiled when first used: the stats
    line's parts are read by the row only for odd wordings, SGLang's only in
    SGLang logs (the 20 take 8 ms, 7% of a seed report's start-up)."""
    return lazy_regex(pattern)


def lazy_regex(pattern: str) -> re.Pattern[str]:
    """A regex (no flags) compiled the first time it is used, for those only
    some inputs need: a request line's values, a bare SGR code, a line cut
    short, a quoted paste (each 0.1 to 0.6 ms to compile, at every start)."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, 0))


# The device words of V0's "# GPU blocks: N" line (the CPU backend's apart).
# 0.7.0-0.7.2 print the dispatch key (CUDA, XLA, HPU, XPU, CPU, PrivateUse1 on
# Ascend), 0.7.3-0.11 the lower-case device name (cuda, rocm, tpu, hpu, xpu, npu);
# Tenstorrent's executor "TT" (docs/read.md, "What it reads").
_BLOCK_DEVICES = (
    "GPU|CUDA|cuda|ROCM|rocm|XLA|xla|TPU|tpu|HPU|hpu|XPU|xpu|NPU|npu|gpu|PrivateUse1|TT|tt"
)
