"""Reading one input end to end: bytes -> facts -> boots -> reports -> load.

The same ``Session`` serves a file and a live pipe. ``feed`` takes whatever
bytes arrived and returns what is worth saying now: a report the moment a
boot has said what it will say about its pool (never at end of input, which a
live server does not send), compact load alerts after it, warnings for near
misses. ``finish`` says the rest at end of input, ``quiet`` when a pipe went
silent, ``interrupted`` on Ctrl-C.

Two reading modes:

* Boot mode (the Scanner, stream.py): every line that carries a marker of the
  patterns table becomes facts. Used until the current boot is reported, and
  throughout with ``keep_all_facts`` (``--json``).
* Serving mode: once the boot is reported, what can still matter is the stats
  line, V0's preemption warning (in a boot not known to be V1, which never
  prints it) and the start of a new boot. A busy log is
  gigabytes of access lines, so serving mode looks for just those markers with
  ``bytes.find`` and reads the stats lines with one regex (patterns.STATS_FAST),
  a chunk's at once (``Session._serve``): about 800 MB/s in pure Python
  (a stats line in twenty) instead of the Scanner's 20 MB/s, so a live server
  is never held back. A new boot's first line hands the rest of the input back
  to boot mode.

Line numbers: boot mode counts every newline. Serving mode numbers only what
it says (an alert, a slow line); from a regular file it leaves the other
lines uncounted and counts them from the file again when a later number is
asked for (``Session.recount``): on the generated 1.6 GB log the alerts end
in its first megabyte, and counting the rest would be a quarter of the run.
A pipe's bytes are gone once read, so a pipe's lines are counted as they pass.

Memory stays flat: stats lines are folded into a LoadWatch per boot, and facts
are kept one by one only when asked (``keep_all_facts``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .boots import (
    _POOL_LINE_KINDS,
    STATS_KINDS,
    Boot,
    BootTracker,
    _all_engines_spoke,
    _boot_complete,
    engine_generation,
    engine_key,
)
from .errors import InputError
from .events import Output
from .read.facts import Fact, ParseWarning
from .read.framing import _BOM_UTF16, _LineCounter
from .read.lines import header_time_at
from .read.metrics import MAX_METRICS_BYTES, looks_like_metrics, read_metrics
from .read.scanner import MAX_LINE_BYTES, Scanner, scan_bytes
from .read.serving import (
    _C_ENGINE,
    _C_TIME,
    _C_VALUES,
    _MAX_CACHED_SECONDS,
    _MAX_CHUNK_MISSES,
    _MAX_LAYOUTS,
    _MISS,
    _PREEMPT_MARKER,
    _hand_back,
    _Row,
)
from .read.stats import (
    STATS_ENGINE_FAST,
    STATS_FAST,
    STATS_MARKER,
    TIME_SHAPE_BYTES,
    header_seconds,
    ints_of,
    kv_pcts_of,
)
from .report import build_report
from .report.model import Options, Report
from .watch import Alert, Estimate, LoadSummary, LoadWatch


def feed_session(session: Session, data: bytes) -> list[Output]:
    """A whole /metrics text read by ``session``: each server becomes a boot of
    the session (so the report, ``--json`` and the exit code are a log's),
    reported at once, then its load now held against the report."""

    if len(data) > MAX_METRICS_BYTES:
        raise InputError(
            f"{session.source}: over {MAX_METRICS_BYTES >> 20} MiB: not a /metrics text"
        )
    read = read_metrics(data.decode("utf-8", "replace"), source=session.source)
    out = [Output(kind="warning", text=f"warning: {w}") for w in read.warnings]
    for server in read.servers:
        if session.tracker.current.facts:
            session.tracker.boots.append(Boot(index=len(session.tracker.boots)))
        boot = session.tracker.current
        load_facts = [f for load in server.loads for f in load.facts]
        for f in server.config_facts:
            boot.add(f)
        if session.keep_all_facts:
            # As for a log: the load's facts are listed, and kept in the boot.
            for f in load_facts:
                boot.add(f)
            session.facts.extend(sorted([*server.config_facts, *load_facts], key=lambda f: f.line))
        watch = session.watch_of(boot)
        if boot.has_pool:
            session.reported.add(boot.index)
            report = session.report_for(boot)
            watch.start_alerts(Estimate.from_report(report))
            out.append(Output(kind="report", report=report))
        for load in server.loads:
            watch.add(
                load.line,
                None,
                load.engine,
                load.running_reqs,
                load.waiting_reqs,
                load.kv_usage_pct,
                load.preemptions,
            )
        summary = session.load_of(boot)
        if summary is not None and server.loads:
            session.summarized.add(boot.index)
            out.append(Output(kind="summary", summary=summary, server=server))
    return out


# A boot whose pool is known but whose last pool line may still come (another
# TP rank's repeat, a concurrency line) is reported after this much silence
# on a live pipe; vLLM prints those lines within milliseconds of each other.
QUIET_S = 0.05


# The same, while a data-parallel engine the config announced has not stated
# its pool yet (engines boot in parallel, seconds apart).
QUIET_MISSING_ENGINE_S = 5.0


StatsSink = Callable[..., None]


@dataclass(slots=True)
class Session:
    """Reads one input incrementally; see the module docstring.

    ``on_stats`` (optional) is called for every stats line with ``time,
    engine, running, waiting, kv_usage_pct, prompt_tps, generation_tps,
    preemptions, line`` (``--stats-csv``). With ``read_stats=False`` stats
    lines and V0 preemption warnings are not looked for (``--no-stats``: the
    boot report alone, found through the boot lines' markers only).
    """

    source: str
    options: Options
    spec_resolver: Callable[..., Any] | None = None
    keep_all_facts: bool = True
    on_stats: StatsSink | None = None
    read_stats: bool = True
    # Newlines of the input's bytes [a, b) counted again from their source
    # (a regular file: ``file_recount``); None: a pipe, whose bytes are gone.
    # Counting newlines is a fifth of a full report's time on a big log, and
    # serving mode numbers only its few alerts: with ``recount`` it leaves
    # the lines it does not number uncounted and counts them when a number
    # is asked for (a later alert, a new boot, ``lines_read``).
    recount: Callable[[int, int], int] | None = None
    facts: list[Fact] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)
    tracker: BootTracker = field(default_factory=BootTracker)
    watches: dict[int, LoadWatch] = field(default_factory=dict)
    reported: set[int] = field(default_factory=set)
    # The figures of each boot's last printed report (_figures).
    _printed: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    summarized: set[int] = field(default_factory=set)
    _scanner: Scanner = field(init=False)
    _line_base: int = 0  # lines before the current Scanner's first line
    _lines: int = 0  # complete physical lines taken so far (before _gap_from, if set)
    _fed: int = 0  # input bytes fed so far
    _gap_from: int | None = None  # input offset from which lines are not counted yet
    _buf_at: int | None = None  # input offset of the buffer serving mode reads lazily
    _tail: bytes = b""  # the unfinished last line
    _skipping_long: bool = False
    _serving: bool = False
    # Whether serving mode looks for V0's preemption warning: not in a V1
    # boot, which never prints it (a real vLLM 0.32 preempted 13 requests and
    # logged none, tests/real_vllm); the search costs 0.42 s on a 1.6 GB log.
    _v0_warnings: bool = True
    _is_utf16: bool | None = None
    _metrics: bytearray | None = None  # a Prometheus /metrics text, read whole (metrics.py)
    # Stats line heads seen in serving mode, by length: (bytes before the
    # time, the time's offset, {bytes after the time: engine label}).
    _layouts: dict[int, tuple[bytes, int, dict[bytes, str | None]]] = field(default_factory=dict)
    # The regex for a chunk's stats lines of one layout, its engine label
    # (_MISS: read from the line) and the chunks in a row that did not fit it.
    _chunk_rx: re.Pattern[bytes] | None = None
    _chunk_engine: Any = None
    _chunk_misses: int = 0
    _engine_names: dict[bytes, str] = field(default_factory=dict)
    _seconds_cache: dict[bytes, int] = field(default_factory=dict)
    _hour_seconds: dict[bytes, int | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._scanner = Scanner(self.source, read_stats=self.read_stats)

    @property
    def lines_read(self) -> int:
        if self._gap_from is not None:  # (never while an over-long line is skipped)
            self._settle(self._fed - len(self._tail))
        return self._lines

    @property
    def is_metrics(self) -> bool:
        """The input is a /metrics text (its first lines said so), not a log."""
        return self._metrics is not None

    @property
    def last_boot(self) -> Boot:
        """The last boot that stated a pool, else the last boot; but a last boot
        that failed (a paste of a good run, then a run that did not start) is
        the one that says what is running now."""
        current = self.tracker.current
        if any(current.first(k) is not None for k in _FAILURE_KINDS):
            return current
        for boot in reversed(self.tracker.boots):
            if boot.has_pool:
                return boot
        return self.tracker.current

    def report_for(self, boot: Boot) -> Report:
        """The report for a boot (also for one without a pool)."""
        return build_report(
            boot, self.options, source=self.source, spec_resolver=self.spec_resolver
        )

    def watch_of(self, boot: Boot) -> LoadWatch:
        w = self.watches.get(boot.index)
        if w is None:
            server = "SGLang" if boot.value("engine_kind") == "sglang" else "vLLM"
            w = self.watches[boot.index] = LoadWatch(server=server)
        return w

    def load_of(self, boot: Boot) -> LoadSummary | None:
        """What the stats lines said while ``boot`` ran (None: no stats line)."""
        w = self.watches.get(boot.index)
        return None if w is None else w.summary()

    # -- feeding ---------------------------------------------------------------

    def feed(self, data: bytes) -> list[Output]:
        """The next bytes of the input; what to tell now.

        Works on offsets into ``data``, never on a copy of it: a megabyte
        chunk copied twice costs more than reading its stats lines.
        """
        if not data:
            return []
        at = self._fed  # the input offset of data[0]
        self._fed += len(data)
        if self._is_utf16 is None:
            # The Scanner recodes UTF-16 (a Windows-saved log); serving mode
            # reads UTF-8 bytes only, so such an input stays in boot mode.
            self._is_utf16 = data[:2] in _BOM_UTF16
            if looks_like_metrics(data):
                self._metrics = bytearray()
        if self._metrics is not None:
            self._metrics += data
            self._lines += data.count(b"\n")
            return []
        start = 0
        if self._skipping_long:
            nl = data.find(b"\n")
            if nl < 0:
                return []
            self._skipping_long = False
            start = nl + 1
        out: list[Output] = []
        if self._tail:
            nl = data.find(b"\n", start)
            if nl < 0:
                return self._hold(data[start:])
            # The input's own bytes (the tail came just before data): left
            # uncounted only behind lines already left so (one line is
            # cheaper to count than to read again).
            line_at = None if self._gap_from is None else at - len(self._tail)
            line, self._tail = self._tail + data[start : nl + 1], b""
            out += self._take_lines(line, 0, len(line), at=line_at)
            start = nl + 1
        end = data.rfind(b"\n", start) + 1
        if end <= start:
            return out + self._hold(data[start:])
        out += self._take_lines(data, start, end, at=at)
        self._tail = data[end:] if end < len(data) else b""
        return out

    def _hold(self, part: bytes) -> list[Output]:
        """Keep an unfinished line; an over-long one is read from its head
        (markers and values sit at the start of vLLM's lines), the rest skipped."""
        self._tail += part
        if len(self._tail) <= MAX_LINE_BYTES:
            return []
        self._settle(self._fed - len(self._tail))
        head = self._tail[:MAX_LINE_BYTES] + b"\n"
        self._tail = b""
        self._skipping_long = True
        return self._take_lines(head, 0, len(head))

    def finish(self) -> list[Output]:
        """End of input: the last line, the pending report, the load summary."""
        if self._metrics is not None:
            return feed_session(self, bytes(self._metrics))
        out: list[Output] = []
        if self._tail and not self._skipping_long:
            self._settle(self._fed - len(self._tail))
            tail, self._tail = self._tail + b"\n", b""
            out += self._take_lines(tail, 0, len(tail))
        if not self._serving:
            out += self._events(self._scanner.finish(), self._line_base)
        boot = self.tracker.current
        if boot.index not in self.reported and boot.has_pool:
            out.append(self._report(boot, None))
        out += self._summary(boot, None)
        return out

    def quiet(self) -> list[Output]:
        """The input went silent for ``quiet_timeout()``: report a pending boot."""
        boot = self.tracker.current
        if boot.index in self.reported or not boot.has_pool:
            return []
        return [self._report(boot, None)]

    def quiet_timeout(self) -> float | None:
        """How long silence must last before ``quiet`` (None: nothing pending)."""
        boot = self.tracker.current
        if boot.index in self.reported or not boot.has_pool:
            return None
        return QUIET_S if _all_engines_spoke(boot) else QUIET_MISSING_ENGINE_S

    def interrupted(self) -> list[Output]:
        """Ctrl-C or SIGTERM: the pending report and the load so far."""
        out = self.quiet()
        out += self._summary(self.tracker.current, None)
        return out

    # -- internals -------------------------------------------------------------

    def _take_lines(
        self, buf: bytes, start: int, end: int, *, at: int | None = None
    ) -> list[Output]:
        """The complete lines ``buf[start:end]`` (``end`` is just past a newline).

        ``at``: the input offset of ``buf[0]``, when ``buf`` is the input's own
        bytes; serving mode may then leave its lines uncounted (``recount``).
        """
        out: list[Output] = []
        if self._serving:
            lazy = at is not None and self.recount is not None
            self._buf_at = at if lazy else None
            cut = _hand_back(buf, start, end)
            if self.read_stats:
                out += self._serve(buf, start, cut)  # counts (or leaves) the lines too
            elif at is not None and lazy:
                if self._gap_from is None:
                    self._gap_from = at + start
            else:
                self._lines += buf.count(b"\n", start, cut)
            if cut == end:
                return out
            if at is not None and lazy:
                self._settle(at + cut)
            # A new boot (or a pool line) may start here: boot mode from this line on.
            self._serving = False
            self._scanner = Scanner(self.source, read_stats=self.read_stats)
            self._line_base = self._lines
            start = cut
        part = buf if start == 0 and end == len(buf) else buf[start:end]
        out += self._events(self._scanner.feed(part), self._line_base)
        self._lines += part.count(b"\n")
        self._enter_serving()
        return out

    def _enter_serving(self) -> None:
        """Serving mode once the current boot is reported and the Scanner is
        not holding lines back (a near miss waiting for a wrapped rest)."""
        if (
            not self._serving
            and not self.keep_all_facts
            and not self._is_utf16
            # a hard-wrapped capture needs its records rejoined (stream.py)
            and not self._scanner.is_hard_wrapped
            and self.tracker.current.index in self.reported
            and self._scanner.lines_read + self._line_base == self._lines
            # SGLang's decode stats lines are read by the Scanner only.
            and self.tracker.current.value("engine_kind") != "sglang"
        ):
            self._serving = True
            self._v0_warnings = engine_generation(self.tracker.current) != "V1"

    def _serve(self, buf: bytes, start: int, stop: int) -> list[Output]:
        """Serving mode over the complete lines ``buf[start:stop]``: stats lines and
        V0 preemption warnings (``_v0_warnings``), in line order. Counts the
        lines too.

        A busy log has a stats line every twenty lines (the generated 1.6 GB
        log: 600,736), so this is where a full report spends its time. Two
        ways, the same result:

        * the chunk at once (``_serve_chunk``): once the stats lines' head
          layout is known, one regex reads every stats line's time, engine
          label and values, the matches listed in C, and the columns are
          converted and folded at once. Taken when every stats line of the
          chunk has that layout and the usual wording, no V0 preemption
          warning is in it and no CSV is written; otherwise
        * line by line (``_serve_lines``), which learns the layouts.
        """
        p_pre = buf.find(_PREEMPT_MARKER, start, stop) if self._v0_warnings else -1
        if p_pre < 0 and self._chunk_rx is not None and self.on_stats is None:
            out = self._serve_chunk(buf, start, stop)
            if out is not None:
                return out
        return self._serve_lines(buf, start, stop, p_pre)

    def _serve_chunk(self, buf: bytes, start: int, stop: int) -> list[Output] | None:
        """The stats lines of ``buf[start:stop]`` through ``_chunk_rx``; None
        (nothing done) when a stats line has another layout or wording."""
        assert self._chunk_rx is not None
        lines = self._counter(buf, start)
        # The groups of every match, listed in C (b"": a group that did not
        # take part); an alert's line is found by finding the matches again.
        rows = self._chunk_rx.findall(buf, start, stop)
        out: list[Output] = []
        if rows:
            cols = tuple(zip(*rows, strict=True))
            if b"" in cols[_C_TIME] or b"" in cols[_C_VALUES]:
                self._chunk_rx = None  # rebuilt by _serve_lines from the lines it reads
                self._chunk_misses += 1
                return None
            engine = self._chunk_engine
            if engine is _MISS:  # "Engine 000: ", its digits read by the regex
                names = self._engine_names
                engines: Sequence[str | None] = list(map(names.get, cols[_C_ENGINE]))
                if None in engines:
                    for digits in set(cols[_C_ENGINE]):
                        names[digits] = digits.decode()
                    engines = list(map(names.get, cols[_C_ENGINE]))
            else:
                engines = [engine] * len(rows)
            times = cols[_C_TIME]
            alerts = self._fold_columns(
                engines, times, self._seconds_of(times), cols[_C_VALUES:], absent=b""
            )
            if alerts:  # a few per boot (load.MAX_CROSSING_ALERTS, firsts)
                starts = [m.start() for m in self._chunk_rx.finditer(buf, start, stop)]
                for a in alerts:
                    ls = buf.rfind(b"\n", 0, starts[a.line]) + 1
                    out.append(_alert_output(a, lines.line_at(ls)))
        self._chunk_misses = 0
        self._close(lines, stop)
        return out

    def _serve_lines(self, buf: bytes, start: int, stop: int, p_pre: int) -> list[Output]:
        """``_serve`` a line at a time: the loop cuts each stats line's values,
        engine label and header time out of ``buf``; the lines are then
        converted and folded together (``_fold_columns``). The label and time
        are read in place for a line whose head has a layout already seen
        (``_read_head``): the same bytes before the time and after it, and
        the time's 14 bytes of the same shape. Line numbers are counted only
        where they are used (an alert, a CSV row, a slow line), and on from
        there to ``stop``, so that no byte is counted twice.
        """
        out: list[Output] = []
        lines = self._counter(buf, start)
        layouts = self._layouts
        rows: list[_Row] = []
        rfind, startswith = buf.rfind, buf.startswith
        is_time = TIME_SHAPE_BYTES.fullmatch
        last_time, last_s = b"", None  # the last time read in place, and its seconds
        time: bytes | None
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
            engine: Any = _MISS
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
                engine, time, seconds = self._read_head(buf, ls, p)
            rows.append((g, p, engine, time, seconds))
        if rows:
            out += self._fold_rows(buf, rows, lines)
        while p_pre >= 0:
            out += self._slow_line_at(buf, p_pre, lines)
            p_pre = buf.find(_PREEMPT_MARKER, buf.find(b"\n", p_pre), stop)
        self._close(lines, stop)
        if self._chunk_rx is None and p >= 0 and self._chunk_misses < _MAX_CHUNK_MISSES:
            self._learn_chunk_rx(buf[rfind(b"\n", 0, p) + 1 : p])
        return out

    # -- line numbers in serving mode ----------------------------------------------

    def _settle(self, to: int) -> int:
        """Count the lines left uncounted up to input offset ``to``; the lines
        before it."""
        if self._gap_from is not None:
            assert self.recount is not None
            self._lines += self.recount(self._gap_from, to)
            self._gap_from = None
        return self._lines

    def _counter(self, buf: bytes, start: int) -> _LineCounter:
        """Line numbers for ``buf`` from ``start`` on (counted when asked)."""
        if self._gap_from is None:
            return _LineCounter(buf, start, self._lines)
        assert self._buf_at is not None
        at = self._buf_at + start
        return _LineCounter(buf, start, self._lines, settle=lambda: self._settle(at))

    def _close(self, lines: _LineCounter, stop: int) -> None:
        """The lines of the buffer up to ``stop`` are taken: counted now (a
        pipe; a buffer where a line was numbered, as its next may be: V0's
        warnings, --stats-csv), or when a later number is asked for (a file:
        ``recount``)."""
        if self._buf_at is None or lines.used:
            self._lines = lines.line_at(stop) - 1
        elif self._gap_from is None:
            self._gap_from = self._buf_at + lines.pos

    def _read_head(
        self, buf: bytes, ls: int, p: int
    ) -> tuple[str | None, bytes | None, int | None]:
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
            layout = self._layouts.get(len(head))
            if layout is None or layout[0] != head[:off]:
                if len(self._layouts) >= _MAX_LAYOUTS:
                    self._layouts.clear()
                layout = self._layouts[len(head)] = (head[:off], off, {})
            if len(layout[2]) < _MAX_LAYOUTS:
                layout[2][after] = engine
        return engine, time.encode(), header_seconds(time)

    def _learn_chunk_rx(self, head: bytes) -> None:
        """``_chunk_rx`` for stats lines whose head has the layout of ``head``
        (a layout ``_read_head`` learned): STATS_FAST with a look-behind
        for the line's start, the bytes before the time, the time, and the
        bytes after it, with an ``Engine 000`` label's digits read as digits
        of the same count (``STATS_ENGINE_FAST`` reads them so, and the
        header regex treats every digit alike).
        """
        layout = self._layouts.get(len(head))
        if layout is None or not head.startswith(layout[0]):
            return
        before, off = layout[0], layout[1]
        after = head[off + 14 :]
        engine = layout[2].get(after, _MISS)
        if engine is _MISS:
            return
        digits = engine.encode() if engine is not None and engine.isdigit() else b""
        if digits and after.endswith(b"Engine " + digits + b": "):
            label = re.escape(after[: -len(digits) - 2]) + rb"(\d{%d}): " % len(digits)
            self._chunk_engine = _MISS
        else:
            label = re.escape(after) + rb"()"
            self._chunk_engine = engine
        if not STATS_FAST.pattern.startswith(STATS_MARKER):
            return  # (patterns.py changed its shape: the lines path reads it)
        marker = re.escape(STATS_MARKER)
        try:
            self._chunk_rx = re.compile(
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
            self._chunk_misses = _MAX_CHUNK_MISSES

    def _seconds_of(self, times: Sequence[bytes]) -> list[int | None]:
        """``header_seconds`` of each time ``_chunk_rx`` read (its shape is
        checked), cached: a busy log prints ten stats lines a second, and
        the new seconds are worked out from their hour's."""
        cache, hours = self._seconds_cache, self._hour_seconds
        out = list(map(cache.get, times))
        if None in out:
            if len(cache) > _MAX_CACHED_SECONDS:
                cache.clear()
                hours.clear()
            for t in set(times).difference(cache):
                hour = t[:8]  # "11-29 10"
                if hour not in hours:
                    hours[hour] = header_seconds(hour + b":00:00")
                at_hour = hours[hour]
                if at_hour is not None:  # else not a date (month 13): None, not cached
                    cache[t] = at_hour + int(t[9:11]) * 60 + int(t[12:14])
            out = list(map(cache.get, times))
        return out

    def _fold_columns(
        self,
        engines: Sequence[str | None],
        times: Sequence[bytes | None],
        seconds: Sequence[int | None],
        values: Sequence[Sequence[bytes]],
        absent: bytes | None = None,
    ) -> list[Alert]:
        """Consecutive stats lines into the current boot's load watch, their
        values as STATS_FAST's groups (``absent``: none, as ``finditer`` or
        ``findall`` give it) a column each; the alerts, ``line`` = the index
        of theirs."""
        prompt_tps, gen_tps, running, swapped, pending, waiting, pre, kv = values
        n = len(running)
        if absent in waiting:  # V0's "Pending"
            waiting = [w or q for w, q in zip(waiting, pending, strict=True)]
        preemptions = [0] * n if pre.count(absent) == n else [int(x) if x else 0 for x in pre]
        return self.watch_of(self.tracker.current).add_batch(
            engines,
            times,
            seconds,
            ints_of(running),
            ints_of(waiting),
            kv_pcts_of(kv),
            preemptions,
        )

    def _fold_rows(self, buf: bytes, rows: list[_Row], lines: _LineCounter) -> list[Output]:
        """``_fold_columns`` for rows cut line by line; outputs with their line
        numbers, and the CSV rows."""
        groups, offsets, engines, times, seconds = zip(*rows, strict=True)
        values = tuple(zip(*groups, strict=True))
        alerts = self._fold_columns(engines, times, seconds, values)
        out: list[Output] = []
        on_stats = self.on_stats
        if on_stats is None:
            for a in alerts:
                number = lines.line_at(buf.rfind(b"\n", 0, offsets[a.line]) + 1)
                out.append(_alert_output(a, number))
            return out
        k = 0
        for i, p in enumerate(offsets):
            number = lines.line_at(buf.rfind(b"\n", 0, p) + 1)
            while k < len(alerts) and alerts[k].line == i:
                out.append(_alert_output(alerts[k], number))
                k += 1
            g, t = groups[i], times[i]
            on_stats(
                None if t is None else t.decode(),
                engines[i],
                int(g[2]),
                int(g[5] or g[4]),
                float(g[7]),
                float(g[0]),
                float(g[1]),
                int(g[6]) if g[6] else 0,
                number,
            )
        return out

    def _slow_line_at(self, buf: bytes, p: int, lines: _LineCounter) -> list[Output]:
        """The line of ``buf`` holding offset ``p``, through the patterns table."""
        ls = buf.rfind(b"\n", 0, p) + 1
        return self._slow_line(buf[ls : buf.find(b"\n", p)], lines.line_at(ls))

    def _slow_line(self, line: bytes, number: int) -> list[Output]:
        """One line through the patterns table (a stats wording the fast regex
        does not read, a preemption warning)."""
        return self._events(list(scan_bytes(line + b"\n", self.source)), number - 1)

    def _events(self, events: list[Fact | ParseWarning], base: int) -> list[Output]:
        """Scanner events (numbered from ``base`` + 1) -> outputs, a line at a time."""
        out: list[Output] = []
        line: list[Fact] = []
        for e in events:
            if base:
                e = dataclasses.replace(e, line=e.line + base)
            if isinstance(e, ParseWarning):
                self.warnings.append(e)
                out.append(Output(kind="warning", text=f"warning: {e} (near miss)", line=e.line))
                continue
            if line and e.line != line[0].line:
                out += self._add_line(line)
                line = []
            line.append(e)
        if line:
            out += self._add_line(line)
        return out

    def _add_line(self, line: list[Fact]) -> list[Output]:
        out: list[Output] = []
        if self.keep_all_facts:
            self.facts.extend(line)
        first = line[0].kind
        # A stats line (printed by the API server) or V0's preemption warning
        # is the load of the current boot, never one of a boot's own facts.
        is_v0_warning = first == "preemptions" and len(line) == 1
        is_load = first in STATS_KINDS or is_v0_warning
        if not is_load or self.keep_all_facts:
            prev = self.tracker.current
            # A version line after the boot was reported is a restart even
            # from new processes (new pids; boot.py needs the same process):
            # vLLM states its version once per boot, before the pool. Not from
            # an engine that has no pool yet (a late data-parallel engine).
            pool_keys = {e.key for e in prev.pool_engines}
            forced = (
                prev.index in self.reported
                and any(
                    f.kind == "vllm_version" and engine_key(f.process) in pool_keys for f in line
                )
                and not prev.restarts_with(line)
            )
            if forced:
                self.tracker.boots.append(Boot(index=len(self.tracker.boots)))
            if self.tracker.add_line(line) or forced:
                if prev.index not in self.reported and prev.has_pool:
                    out.append(self._report(prev, line[0].line))
                out += self._summary(prev, line[0].line)
        boot = self.tracker.current
        if boot.index not in self.reported and _boot_complete(boot, line):
            out.append(self._report(boot, line[0].line))
        elif boot.index in self.reported and any(f.kind in _POOL_LINE_KINDS for f in line):
            out += self._report_again(boot, line[0].line)
        elif (
            first == "engine_failed"
            and boot.index in self.reported
            and len(boot.all("engine_failed")) == 1
        ):
            out.append(
                Output(
                    kind="warning",
                    text=f"warning: {self.source}:{line[0].line}: the engine failed to start after "
                    "the report above: that pool never served",
                    line=line[0].line,
                )
            )
        if is_v0_warning and engine_generation(boot) == "V1":
            # Not V1's (see _v0_warnings): a pasted line, counted by neither
            # reading mode; --json still lists its fact.
            is_load = False
        if is_load:
            for a in self.watch_of(boot).add_facts(line):
                out.append(Output(kind="alert", text=str(a), line=a.line))
            if self.on_stats is not None and first != "preemptions":
                self._stats_row(line)
        return out

    def _stats_row(self, line: list[Fact]) -> None:
        assert self.on_stats is not None
        v = {f.kind: f.value for f in line}
        self.on_stats(
            line[0].time,
            v.get("stats_engine"),
            v.get("running_reqs"),
            v.get("waiting_reqs"),
            v.get("kv_usage_pct"),
            v.get("prompt_tps"),
            v.get("generation_tps"),
            v.get("preemptions", 0),
            line[0].line,
        )

    def _report(self, boot: Boot, line: int | None, report: Report | None = None) -> Output:
        self.reported.add(boot.index)
        report = report or self.report_for(boot)
        self._printed[boot.index] = _figures(report)
        self.watch_of(boot).start_alerts(Estimate.from_report(report))
        return Output(kind="report", report=report, line=line)

    def _report_again(self, boot: Boot, line: int) -> list[Output]:
        """A pool line of a boot already reported (a late data-parallel
        engine, a worker's repeat, a pool stated anew): the report again, with
        a warning, when its figures changed; else nothing (a repeat)."""
        report = self.report_for(boot)
        if _figures(report) == self._printed.get(boot.index):
            return []
        said = {f.kind for f in boot.facts if f.line == line}
        what = (
            "the KV cache groups were stated after the report above and change its figures"
            if said & {"num_kv_cache_groups", "kv_lcm_block_size"}
            else "the pool was stated again after the report above, with other figures"
        )
        warning = Output(
            kind="warning",
            text=f"warning: {self.source}:{line}: {what}: reported again",
            line=line,
        )
        return [warning, self._report(boot, line, report)]

    def _summary(self, boot: Boot, line: int | None) -> list[Output]:
        """The load summary of a boot that ran under load, once."""
        summary = self.load_of(boot)
        if summary is None or boot.index in self.summarized:
            return []
        self.summarized.add(boot.index)
        model = boot.value("model")
        title = str(model) if model else ""
        if len(self.tracker.boots) > 1:
            title = f"boot {boot.index + 1}" + (f", {title}" if title else "")
        return [Output(kind="summary", summary=summary, title=title, line=line)]


#: Facts that say a boot did not start (report.failure words them).
_FAILURE_KINDS = ("kv_too_small", "engine_failed")


def _figures(report: Report) -> tuple[Any, ...]:
    """What the gate holds of a report and the pool figures it prints from
    the log: a reprint is due when these change. Not when only a derived
    figure is refined (Gemma 3 on 0.11: the API server states the exact
    13,025 blocks after the report derived 13,020 from 29,760 tokens; 46
    users either way) or a cited line moves."""
    return (
        report.pool_tokens,
        report.vllm_max_concurrency,
        report.users,
        report.users_mid_answer,
        report.contradicts,
        len(report.engines),
    )


def _alert_output(alert: Alert, line: int) -> Output:
    text = str(Alert(line=line, time=alert.time, text=alert.text))
    return Output(kind="alert", text=text, line=line)
