"""No catastrophic backtracking: every pattern runs in linear time on adversarial lines.

A log line is untrusted text up to 64 KiB (stream.MAX_LINE_BYTES) and a capture
can hold anything: a run of 60,000 spaces, a marker repeated a thousand times.
Every regex the tool runs on a line (each Row.regex of patterns.ROWS, the stats
and config sub-patterns, the wrappers of lines.py, the byte-level marker scan
of stream.py) is timed here on 1 MB adversarial lines, far past what a line
can be. Two bounds:

* against a plain ``in`` scan of the same line: at most IN_SCAN_RATIO times
  slower (the regex engine steps per character are ~100x a memchr; a
  quadratic pattern on 1 MB is ~10^11 steps, tens of seconds);
* growth: from 200 KB to 1 MB (5x) the time may grow at most MAX_GROWTH
  times (linear: ~5; quadratic: ~25).

Times are this process's CPU time (``time.process_time``), so other work on a
shared machine does not count against a pattern.

Before the fix of lines._TRAILERS, "x" + 100,000 spaces + "y" took 420 s.
"""

from __future__ import annotations

import functools
import re as stdre
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import regex
from strategies import PREFIXES, ROW_EXAMPLES

from vllm_logread.read import grammar, lines, patterns, scanner, stats

SMALL_CHARS = 200_000
BIG_CHARS = 1_000_000
IN_SCAN_RATIO = 2_000
MAX_GROWTH = 14.0
# Below this a timing is noise on a shared machine; the growth bound applies above it.
NOISE_S = 0.02
TIMEOUT_S = 10.0

Pattern = Any  # regex.Pattern or re.Pattern, str or bytes


def _collect() -> list[tuple[str, Pattern, tuple[str, ...]]]:
    """Every compiled pattern the reading path uses, found by walking the modules,
    so a pattern added later is timed too."""
    out: list[tuple[str, Pattern, tuple[str, ...]]] = []
    for mod in (patterns, lines, scanner, stats, grammar):
        short = mod.__name__.rsplit(".", 1)[1]
        for name, value in vars(mod).items():
            if isinstance(value, (regex.Pattern, stdre.Pattern)):
                out.append((f"{short}.{name}", value, ()))
            elif isinstance(value, tuple):
                for item in value:
                    if isinstance(item, patterns.Row):
                        out.append((f"row:{item.name}", item.regex, item.markers))
                    elif (
                        isinstance(item, tuple)
                        and len(item) == 2
                        and isinstance(item[1], (regex.Pattern, stdre.Pattern))
                    ):
                        out.append((f"{short}.{name}:{item[0]}", item[1], ()))
    seen: set[int] = set()  # a module that imports ROWS or a pattern lists it again
    return [p for p in out if not (id(p[1]) in seen or seen.add(id(p[1])))]


PATTERNS = _collect()


def test_every_row_is_timed() -> None:
    ids = {i for i, _, _ in PATTERNS}
    assert {f"row:{r.name}" for r in patterns.ROWS} <= ids
    assert {"lines._TRAILERS", "lines._WRAPPERS", "lines._HEADER", "lines._GLUE"} <= ids
    assert len(PATTERNS) >= len(patterns.ROWS) + 8


def test_row_examples_read() -> None:
    """The examples in strategies.ROW_EXAMPLES (used below and by the fuzz run)
    stay in step with the table. A row without an example is still timed, on
    its markers."""
    rows = {r.name: r for r in patterns.ROWS}
    assert set(ROW_EXAMPLES) <= set(rows)
    for name, example in ROW_EXAMPLES.items():
        assert rows[name].regex.search(example), name


def _sample_match(rx: Pattern) -> str | None:
    """A real text the pattern matches, to repeat and to cut short."""
    texts = list(ROW_EXAMPLES.values()) + [p + m for p in PREFIXES for m in ROW_EXAMPLES.values()]
    for text in texts:
        subject: Any = text.encode() if isinstance(rx.pattern, bytes) else text
        m = rx.search(subject)
        if m and len(m.group(0)) >= 3:
            g = m.group(0)
            return g.decode("utf-8", "replace") if isinstance(g, bytes) else g
    return None


def _rep(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


# Lines that are adversarial for any pattern, built once (str and bytes).
_GENERIC: dict[str, Callable[[int], str]] = {
    "digits": lambda n: _rep("1", n),
    "spaces_then_x": lambda n: " " * (n - 1) + "x",
    "x_spaces_y": lambda n: "x" + " " * (n - 2) + "y",
    "tabs_spaces": lambda n: _rep("\t ", n - 1) + "z",
    "commas": lambda n: _rep("1,", n),
    "thousands": lambda n: _rep("999,", n),
    "dots": lambda n: _rep("1.", n),
    "every_marker": lambda n: _rep(" ".join(patterns.MARKERS) + " ", n),
    "header": lambda n: _rep("INFO 01-01 00:00:00 ", n),
    "process_tag": lambda n: _rep("(EngineCore pid=1 ", n),
    "parens": lambda n: _rep("(", n),
    "esc": lambda n: _rep("\x1b[", n),
    "caret": lambda n: _rep("^[[0;", n),
    "dict": lambda n: _rep("{'a': ", n),
    "box": lambda n: _rep("│ ", n),
}


_IN_SCAN_S: dict[tuple[str, bool], float] = {}  # the generic lines' `in` scan times


@pytest.fixture(scope="module", autouse=True)
def _free_lines() -> Iterator[None]:
    """The cached 1 MB lines (some 40 MB) go when this module's tests end: a
    later test that measures a child's peak memory counts the parent's too."""
    yield
    _generic.cache_clear()
    _IN_SCAN_S.clear()


@functools.cache
def _generic(name: str, n: int, as_bytes: bool) -> Any:
    text = _GENERIC[name](n)
    return text.encode() if as_bytes else text


def _families(markers: tuple[str, ...], sample: str | None) -> dict[str, Callable[[int], str]]:
    """Adversarial lines of n characters made from this pattern's own text."""
    fam: dict[str, Callable[[int], str]] = {}
    for i, mk in enumerate(markers[:2]):
        fam[f"marker{i}"] = lambda n, mk=mk: _rep(mk, n)
        fam[f"marker{i}_space"] = lambda n, mk=mk: _rep(mk + " ", n)
        fam[f"marker{i}_digits"] = lambda n, mk=mk: mk + " " + "9" * (n - len(mk) - 1)
        fam[f"marker{i}_spaces_x"] = lambda n, mk=mk: mk + " 1" + " " * (n - len(mk) - 3) + "x"
        fam[f"marker{i}_brace"] = lambda n, mk=mk: _rep(mk + " {", n)
    if sample:
        # The match cut short, repeated: every attempt gets far and fails.
        fam["sample_cut"] = lambda n: _rep(sample[:-1], n)
        fam["sample_spaces_x"] = lambda n: sample + " " * (n - len(sample) - 1) + "x"
    return fam


def _time_all(rx: Pattern, subject: Any) -> float:
    """Seconds to find every match in the line (covers search, sub and split as
    the code uses them)."""
    start = time.process_time()
    if isinstance(rx, regex.Pattern):
        it: Iterator[Any] = rx.finditer(subject, timeout=TIMEOUT_S)
    else:
        it = rx.finditer(subject)
    for _ in it:
        pass
    return time.process_time() - start


def _time_in(needle: Any, subject: Any) -> float:
    """Seconds for a plain ``in`` scan of the whole line (the needle is absent)."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        _ = needle in subject
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize(("rx", "markers"), [p[1:] for p in PATTERNS], ids=[p[0] for p in PATTERNS])
def test_pattern_is_linear(rx: Pattern, markers: tuple[str, ...]) -> None:
    is_bytes = isinstance(rx.pattern, bytes)
    absent: Any = b"\x01\x02" if is_bytes else "\x01\x02"

    def line(make: Callable[[int], str], n: int) -> Any:
        return make(n).encode() if is_bytes else make(n)

    cases: list[tuple[str, Callable[[int], Any]]] = [
        (name, lambda n, name=name: _generic(name, n, is_bytes)) for name in _GENERIC
    ]
    cases += [
        (name, lambda n, make=make: line(make, n))
        for name, make in _families(markers, _sample_match(rx)).items()
    ]
    for name, make_line in cases:
        big = make_line(BIG_CHARS)
        key = (name, is_bytes) if name in _GENERIC else None
        t_in = _IN_SCAN_S.get(key) if key else None
        if t_in is None:
            t_in = _time_in(absent, big)
            if key:
                _IN_SCAN_S[key] = t_in
        for _attempt in range(3):  # a stalled timing is retried before it fails
            try:
                t_big = _time_all(rx, big)
            except TimeoutError:
                pytest.fail(f"{name}: over {TIMEOUT_S} s on a 1 MB line: catastrophic backtracking")
            within_scan = t_big <= IN_SCAN_RATIO * t_in + NOISE_S
            growth = 1.0
            if t_big > NOISE_S:
                growth = t_big / max(_time_all(rx, make_line(SMALL_CHARS)), 1e-6)
            if within_scan and growth <= MAX_GROWTH:
                break
        assert within_scan, (
            f"{name}: {t_big * 1e3:.1f} ms on 1 MB, over {IN_SCAN_RATIO}x a plain `in` scan "
            f"({t_in * 1e3:.3f} ms)"
        )
        assert growth <= MAX_GROWTH, (
            f"{name}: 200 KB -> 1 MB grew the time {growth:.1f}x (linear is ~5x): "
            "super-linear backtracking"
        )
