"""Reading one input end to end: bytes -> facts -> boots -> reports.

The same ``Session`` serves a file and a live pipe. ``feed`` takes whatever
bytes arrived and returns what is worth saying now: a report the moment a
boot's pool is known (not at end of input, which a live server never sends),
and warnings for near misses. ``finish`` says the rest at end of input.

Memory stays flat on a multi-GB log: facts of stats lines are folded into a
running summary and kept one by one only when asked (``keep_all_facts``, for
``--json``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .boot import STATS_KINDS, Boot, BootTracker
from .facts import Fact
from .report import Options, Report, build_report
from .stream import ParseWarning, Scanner

READ_CHUNK_BYTES = 1 << 20


@dataclass(slots=True)
class LoadSummary:
    """What the stats lines said, folded as they come."""

    num_stats_lines: int = 0
    peak_running: int | None = None
    peak_waiting: int | None = None
    peak_kv_usage_pct: float | None = None
    preemptions: int = 0
    first_line: int | None = None
    last_line: int | None = None

    def add(self, f: Fact) -> None:
        if f.kind == "running_reqs":
            self.num_stats_lines += 1
            self.first_line = self.first_line or f.line
            self.last_line = f.line
            self.peak_running = max(self.peak_running or 0, int(f.value))
        elif f.kind == "waiting_reqs":
            self.peak_waiting = max(self.peak_waiting or 0, int(f.value))
        elif f.kind == "kv_usage_pct":
            self.peak_kv_usage_pct = max(self.peak_kv_usage_pct or 0.0, float(f.value))


@dataclass(slots=True)
class Output:
    """One thing to tell the user: a report, or a warning line."""

    kind: str  # "report" | "warning"
    report: Report | None = None
    text: str = ""


@dataclass(slots=True)
class Session:
    """Reads one input incrementally; see the module docstring."""

    source: str
    options: Options
    spec_resolver: Callable[..., Any] | None = None
    keep_all_facts: bool = True
    facts: list[Fact] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)
    tracker: BootTracker = field(default_factory=BootTracker)
    loads: dict[int, LoadSummary] = field(default_factory=dict)
    reported: set[int] = field(default_factory=set)
    _scanner: Scanner | None = None

    def __post_init__(self) -> None:
        self._scanner = Scanner(self.source)

    @property
    def lines_read(self) -> int:
        assert self._scanner is not None
        return self._scanner.lines_read

    def feed(self, data: bytes) -> list[Output]:
        assert self._scanner is not None
        return self._take(self._scanner.feed(data), final=False)

    def finish(self) -> list[Output]:
        assert self._scanner is not None
        out = self._take(self._scanner.finish(), final=True)
        boot = self.tracker.current
        if boot.index not in self.reported and boot.has_pool:
            out.append(self._report(boot))
        return out

    def report_for(self, boot: Boot) -> Report:
        """The report for a boot (also for one without a pool)."""
        return build_report(
            boot, self.options, source=self.source, spec_resolver=self.spec_resolver
        )

    @property
    def last_boot(self) -> Boot:
        """The last boot that stated a pool, else the last boot."""
        for boot in reversed(self.tracker.boots):
            if boot.has_pool:
                return boot
        return self.tracker.current

    def load_of(self, boot: Boot) -> LoadSummary:
        return self.loads.setdefault(boot.index, LoadSummary())

    # -- internals -----------------------------------------------------------

    def _report(self, boot: Boot) -> Output:
        self.reported.add(boot.index)
        return Output(kind="report", report=self.report_for(boot))

    def _take(self, events: list[Fact | ParseWarning], *, final: bool) -> list[Output]:
        out: list[Output] = []
        line: list[Fact] = []
        for e in events:
            if isinstance(e, ParseWarning):
                self.warnings.append(e)
                out.append(Output(kind="warning", text=f"warning: {e} (near miss)"))
                continue
            if line and e.line != line[0].line:
                out.extend(self._add_line(line))
                line = []
            line.append(e)
        if line:
            out.extend(self._add_line(line))
        return out

    def _add_line(self, line: list[Fact]) -> list[Output]:
        out: list[Output] = []
        if self.keep_all_facts:
            self.facts.extend(line)
        if line[0].kind in STATS_KINDS or line[0].kind == "stats_engine":
            load = self.load_of(self.tracker.current)
            for f in line:
                load.add(f)
            if not self.keep_all_facts:
                return out
        prev = self.tracker.current
        started = self.tracker.add_line(line)
        if started and prev.index not in self.reported and prev.has_pool:
            out.append(self._report(prev))
        boot = self.tracker.current
        if boot.index not in self.reported and _boot_complete(boot, line):
            out.append(self._report(boot))
        return out


def _boot_complete(boot: Boot, line: list[Fact]) -> bool:
    """Whether the boot has said what it will say about its pool.

    V1 prints the pool and then the max concurrency (one line from 0.28); V0
    prints "# GPU blocks" then "Maximum concurrency" (0.6.3+). A line of
    another kind after the pool (graph capture, stats) also closes it, for
    versions that print no concurrency.
    """
    if not boot.has_pool:
        return False
    kinds = {f.kind for f in line}
    if "max_concurrency" in kinds:
        return True
    if kinds & {"pool_tokens", "gpu_blocks", "cpu_blocks", "device"}:
        return False
    return True


def open_input(name: str) -> Any:
    """Open a log file for binary reading, with a clear error when it cannot be.

    A FIFO is fine (it is read like a pipe); a directory is not a log.
    """
    import os
    import stat

    from .facts import InputError

    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except OSError as err:
        raise InputError(f"{name}: cannot read it ({err.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{name}: is a directory, not a log file (name the .log file inside it)")
    try:
        return open(name, "rb", buffering=0)  # noqa: SIM115 - closed at process end
    except OSError as err:
        raise InputError(f"{name}: cannot read it ({err.strerror})") from None


def read_chunks(stream: Any) -> Any:
    """Yield byte chunks as they arrive: a pipe's data is handled at once.

    ``read1``/raw ``read`` return what is available (up to a megabyte)
    instead of waiting for a full buffer, so a live pipe is never held back.
    """
    read = getattr(stream, "read1", None) or stream.read
    while True:
        chunk = read(READ_CHUNK_BYTES)
        if not chunk:
            return
        yield chunk


def run(session: Session, stream: Any, *, echo: Any = None) -> Any:
    """Read ``stream`` to its end through ``session``, yielding outputs as they
    arise. With ``echo`` (a binary stream), every input byte is passed through
    first; if that stream closes (``| head``), echoing stops and the input is
    still drained, so the writer upstream is never stalled or killed.
    """
    for chunk in read_chunks(stream):
        if echo is not None:
            try:
                echo.write(chunk)
                echo.flush()
            except (BrokenPipeError, OSError, ValueError):
                echo = None
        yield from session.feed(chunk)
    yield from session.finish()


@dataclass(frozen=True, slots=True)
class ExitStatus:
    code: int
    message: str = ""


def reports_of(session: Session, *, all_boots: bool) -> list[Report]:
    """The reports to give: the last boot with a pool, or every boot."""
    boots = session.tracker.boots if all_boots else [session.last_boot]
    return [session.report_for(b) for b in boots if b.facts or not all_boots]


def exit_status(
    sessions: list[Session], *, min_users: int | None, strict: bool, all_boots: bool
) -> ExitStatus:
    """The documented exit code for what was read."""
    reports = [r for s in sessions for r in reports_of(s, all_boots=all_boots)]
    if strict and any(s.warnings for s in sessions):
        return ExitStatus(
            3, "--strict: a line carried a known marker but did not match its pattern"
        )
    if not reports or not all(r.has_pool for r in reports):
        return ExitStatus(3, missing_pool_message(sessions))
    if any(r.contradicts for r in reports):
        bad = [c.detail for r in reports for c in r.checks if c.status == "fail"]
        return ExitStatus(4, "the log contradicts the model config: " + "; ".join(bad))
    if min_users is not None:
        for r in reports:
            if r.users is None:
                return ExitStatus(1, f"--min-users {min_users}: the users that fit are unknown")
            if r.users < min_users:
                return ExitStatus(1, f"--min-users {min_users}: only {r.users} users fit")
    return ExitStatus(0)


def missing_pool_message(sessions: list[Session]) -> str:
    """Exit 3's message: what was seen, and why the pool may be missing."""
    parts = []
    for s in sessions:
        kinds = sorted({f.kind for b in s.tracker.boots for f in b.facts})
        if s.loads:
            kinds.append("stats lines")
        seen = ", ".join(kinds) if kinds else "no vLLM lines at all"
        parts.append(
            f"{s.source}: no KV cache pool line (seen: {seen}; {s.lines_read:,} lines read). "
            "Was the log cut before the KV cache was allocated, did the boot fail, "
            "or is it not a vLLM log?"
        )
    return "\n".join(parts)


def json_text(sessions: list[Session], *, all_boots: bool) -> str:
    from .render import dumps, report_json

    objs = []
    for s in sessions:
        warns = [str(w) for w in s.warnings]
        if all_boots:
            for r in reports_of(s, all_boots=True):
                objs.append(report_json(r, [f for f in s.facts if _in_boot(f, r.boot)], warns))
        else:
            boot = s.last_boot
            rep = s.report_for(boot)
            objs.append(report_json(rep, s.facts, warns))
    if len(objs) == 1:
        return dumps(objs[0])
    return dumps({"servers": objs})


def _in_boot(f: Fact, boot: Boot) -> bool:
    return any(f is g for g in boot.facts)


def report_block(report: Report) -> str:
    from .render import report_text

    return report_text(report).rstrip("\n")
