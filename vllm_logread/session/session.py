"""Reading one input end to end: bytes -> facts -> boots -> reports -> load.

The same ``Session`` serves a file and a live pipe. ``feed`` takes whatever
bytes arrived and returns what is worth saying now: a report the moment a
boot has said what it will say about its pool (never at end of input, which a
live server does not send), compact load alerts after it, warnings for near
misses. ``finish`` says the rest at end of input, ``quiet`` when a pipe went
silent, ``interrupted`` on Ctrl-C.

Two reading modes, and the bytes beneath them:

* ``read.framing.Framing``: bytes -> whole lines (the unfinished tail, an
  over-long line's head, UTF-16), and the count of the lines taken, left
  uncounted in serving mode where nothing is numbered (``recount``).
* Boot mode (``read.scanner.Scanner``): every line that carries a marker of
  the patterns table becomes facts. Used until the current boot is reported,
  and throughout with ``keep_all_facts`` (``--json``).
* Serving mode (``read.serving.ServingReader``): once the boot is reported,
  only the stats lines, V0's preemption warning and the start of a new boot,
  at memchr speed; a new boot's first line hands the rest of the input back
  to boot mode. The reader hands its stats lines to the session
  (``fold_stats``), which routes them to the boot's load watch.

Either mode's facts are routed by ``BootRouter`` (Session's base): to the
boots, their load watches and their reports. Beneath it ``BootReporter`` says
when each boot is reported and what is said beside it, and ``BootRecords``
holds what the input told of each boot and builds its report.

Memory stays flat: stats lines are folded into a LoadWatch per boot, and facts
are kept one by one only when asked (``keep_all_facts``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..boot.boots import (
    _POOL_LINE_KINDS,
    STATS_KINDS,
    Boot,
    BootTracker,
    _all_engines_spoke,
    _boot_complete,
    engine_generation,
)
from ..errors import InputError
from ..kv.specs import KVSpec
from ..read.facts import Event, Fact, ParseWarning
from ..read.framing import Framing
from ..read.scanner import Scanner
from ..read.serving import ServingReader, StatsSink, hand_back
from ..read.sniff import MAX_METRICS_BYTES, looks_like_metrics
from ..read.stats import StatsBatch, StatsFacts
from ..report import build_report
from ..report.capacity import Workload
from ..report.failure import start_up_end, stopped_warning
from ..report.model import Options, Report
from .events import Output
from .watch import Alert, Estimate, LoadSummary, LoadWatch

if TYPE_CHECKING:  # observed.py is imported where a log's requests or /metrics are read
    from ..read.metrics import Server
    from ..report.observed import ObservedWorkload, RequestTally, TokenSummary

# The magic bytes of gzip, xz and zstd: a compressed log or scrape, not a text.
_COMPRESSED = (b"\x1f\x8b", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")


__all__ = ["QUIET_MISSING_ENGINE_S", "QUIET_S", "Session", "StatsSink", "feed_session"]


def feed_session(session: Session, data: bytes) -> list[Output]:
    """A whole /metrics text read by ``session``: each server becomes a boot of
    the session (so the report, ``--json`` and the exit code are a log's),
    reported at once, then its load now held against the report."""

    if len(data) > MAX_METRICS_BYTES:
        raise InputError(
            f"{session.source}: over {MAX_METRICS_BYTES >> 20} MiB: not a /metrics text"
        )
    from ..read.metrics import read_metrics  # only for a /metrics text (read/sniff.py)

    read = read_metrics(data.decode("utf-8", "replace"), source=session.source)
    out = [Output(kind="warning", text=f"warning: {w}") for w in read.warnings]
    for server in read.servers:
        if session.tracker.current.facts:
            session.tracker.boots.append(Boot(index=len(session.tracker.boots)))
        boot = session.tracker.current
        load_facts = [f for load in server.loads for f in load.facts]
        for f in server.config_facts:
            boot.add(f)
        if session.keep_all_facts or session.list_boot_facts:
            # A /metrics text (5 MiB at most) lists its load's gauges too, one
            # snapshot per engine, and keeps them in the boot.
            for f in load_facts:
                boot.add(f)
            session.facts.extend(sorted([*server.config_facts, *load_facts], key=lambda f: f.line))
        watch = session.watch_of(boot)
        observed = observed_from_metrics(server)
        if observed is not None:
            session.observed[boot.index] = observed
        if boot.has_pool:
            session.reported.add(boot.index)
            report = session.report_for(boot)
            watch.start_alerts(Estimate.from_report(report))
            out.append(Output(kind="report", report=report))
        watch.is_snapshot = True
        for load in server.loads:
            for reason, n in load.waiting_by_reason:
                watch.waiting_by_reason[reason] = watch.waiting_by_reason.get(reason, 0) + n
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


def observed_from_metrics(server: Server) -> ObservedWorkload | None:
    """A /metrics server's request histograms -> the workload it saw (its engines' summed
    bucket by bucket; each engine's own under ``engines`` when there are several); None
    when it publishes none."""
    from ..report.observed import ObservedWorkload, from_histogram, merged_histograms

    names = ("prompt_tokens", "generation_tokens", "max_tokens")
    merged: dict[str, TokenSummary | None] = {}
    said: list[str] = []
    for name in names:
        parts = [h for load in server.loads for h in load.histograms if h.name == name]
        if not parts:
            merged[name] = None
            continue
        if len(parts) != len(server.loads):
            # One engine's requests are not the server's: unknown, not an undercount.
            merged[name] = None
            said.append(
                f"{name}: {len(parts)} of {len(server.loads)} data-parallel engines publish "
                "it, so the server's is not known"
            )
            continue
        buckets = merged_histograms(h.buckets for h in parts)
        if not buckets:
            said.append(
                f"{name}: the data-parallel engines' bucket bounds differ, so their buckets "
                "are not summed"
            )
        merged[name] = from_histogram(
            name,
            buckets,
            count=sum(h.count for h in parts),
            sum_tokens=sum(h.sum for h in parts),
            line=min(h.line for h in parts),
        )
    if merged["prompt_tokens"] is None and merged["generation_tokens"] is None:
        return None
    engines: list[tuple[str, tuple[TokenSummary, ...]]] = []
    if len(server.loads) > 1:
        for load in server.loads:
            sums = tuple(
                s
                for h in load.histograms
                if (s := from_histogram(h.name, h.buckets, count=h.count, sum_tokens=h.sum))
            )
            engines.append((str(load.engine), sums))
    return ObservedWorkload(
        source="metrics",
        prompt=merged["prompt_tokens"],
        generation=merged["generation_tokens"],
        max_tokens=merged["max_tokens"],
        engines=tuple(engines),
        notes=(
            "from /metrics' histograms (cumulative since the server started): the mean is "
            "exact, each quantile only its bucket (lower, upper]; prompt and generation are "
            "marginals, not the pair of each request, so a request at both p90s at once is a "
            "pessimistic reading",
            *said,
        ),
    )


# Boot mode reads this many lines past a boot's report (or up to its first
# stats line, when it serves) before serving mode (stats lines only, at memchr
# speed) may start: the lines that refine a boot come within a few hundred
# lines of its pool, before it serves (Gemma 3 on 0.11: the API
# server's exact "num_gpu_blocks is: 13025" 40 lines after the pool line; a
# TP worker's traceback in CUDA-graph capture; a paste's config lines).
SETTLE_LINES = 5_000


# --json lists each stats line's facts (and V0's preemption warnings') for the
# first this many stats lines of an input, then folds the rest into the load
# alone: a bug report's capture (a few dozen) is listed whole, and a day of a
# busy server's log (600,736 stats lines in the 1.6 GB benchmark log) keeps its
# memory flat (1,000 lines x 8 facts).
MAX_LISTED_STATS_LINES = 1_000


# A boot whose pool is known but whose last pool line may still come (another
# TP rank's repeat, a concurrency line) is reported after this much silence
# on a live pipe; vLLM prints those lines within milliseconds of each other.
QUIET_S = 0.05


# The same, while a data-parallel engine the config announced has not stated
# its pool yet (engines boot in parallel, seconds apart).
QUIET_MISSING_ENGINE_S = 5.0


@dataclass(slots=True)
class BootRecords:
    """What one input told of each boot: the boots themselves (``tracker``), their
    load watches, the workload each saw (/metrics' histograms, a log's request
    lines) and each boot's report, built from them on demand.

    ``spec_resolver`` finds a model's KV layout (``build_report``'s).
    """

    source: str
    options: Options
    spec_resolver: Callable[..., KVSpec | None] | None = None
    tracker: BootTracker = field(default_factory=BootTracker)
    watches: dict[int, LoadWatch] = field(default_factory=dict)
    # The workload seen, per boot: /metrics' histograms, a log's request lines.
    observed: dict[int, ObservedWorkload] = field(default_factory=dict)
    tallies: dict[int, RequestTally] = field(default_factory=dict)
    # Each boot's report once the input has ended (``finish``): its boots, their
    # request tallies and the options no longer change, and a file's boot is
    # otherwise built again for its printed report, the exit code and the JSON
    # (the seed report built its one boot 4 times: 16, 7, 3 and 9 ms, one process).
    _final_reports: dict[int, Report] | None = None

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
        """The report for a boot (also for one without a pool), with the workload it
        saw and the users at it (``observed``) when /metrics or its request lines said."""
        final = self._final_reports
        if final is None:
            return self._build_report_for(boot)
        if boot.index not in final:
            final[boot.index] = self._build_report_for(boot)
        return final[boot.index]

    def _build_report_for(self, boot: Boot) -> Report:
        report = build_report(
            boot, self.options, source=self.source, spec_resolver=self.spec_resolver
        )
        observed = self.observed_of(boot)
        if observed is None:
            return report
        if not report.has_pool or observed.count == 0:
            return dataclasses.replace(report, observed=observed)
        users: dict[Workload, tuple[int | None, str]] = {
            report.workload: (report.users, "; ".join(report.arithmetic))
        }

        def users_at(w: Workload) -> tuple[int | None, str]:
            # The report's own arithmetic at that workload (every group charged).
            if w not in users:
                opts = dataclasses.replace(self.options, workload=w, what_ifs=(), target_users=None)
                r = build_report(boot, opts, source=self.source, spec_resolver=self.spec_resolver)
                users[w] = (r.users, "; ".join(r.arithmetic))
            return users[w]

        from ..report.observed import with_users

        observed = with_users(observed, report.workload, users_at)
        return dataclasses.replace(report, observed=observed)

    def observed_of(self, boot: Boot) -> ObservedWorkload | None:
        """The workload ``boot`` saw: /metrics' histograms, else its request lines."""
        observed = self.observed.get(boot.index)
        if observed is not None:
            return observed
        tally = self.tallies.get(boot.index)
        if tally is None:
            return None
        cut = boot.value("max_log_len")
        from ..report.observed import observed_from_log

        return observed_from_log(tally, max_log_len=cut if isinstance(cut, int) else None)

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

    def fold_requests(self, values: list[tuple[str, int]], line: int | None = None) -> None:
        """Request lines' values (kind, tokens) into the current boot's tally."""
        from ..report.observed import RequestTally

        tally = self.tallies.setdefault(self.tracker.current.index, RequestTally())
        for kind, value in values:
            tally.add(kind, value, line)


@dataclass(slots=True)
class BootReporter(BootRecords):
    """When each boot is reported and what is said beside it: on a live pipe a
    report the moment a boot said what it will say about its pool, again (an
    update) when its answer changes, its load summary when it ends; for a file
    each boot's outputs held (``_say``) and given once after its last line
    (``_release``).
    """

    # A live pipe (True) reports a boot the moment its pool is known, then again only
    # when the answer changes, marked as an update. A file (False) reports each boot
    # once, after its last line: every fact of the boot is in (a pool line's later
    # refinement, config lines pasted after the pool, an engine that died in warm-up).
    is_live: bool = True
    # A file: every boot's report (True), or only the one that says what runs now.
    all_boots: bool = False
    reported: set[int] = field(default_factory=set)
    # The figures of each boot's last printed report (_figures).
    _printed: dict[int, _Figures] = field(default_factory=dict)
    summarized: set[int] = field(default_factory=set)
    workloads: set[int] = field(default_factory=set)  # boots whose workload was said
    # A file: each boot's outputs held until the end of input (``_release``).
    _held: dict[int, list[Output]] = field(default_factory=dict)
    # Boot mode goes on this many lines past a report before serving mode may start
    # (``settled``), so the lines that refine a boot just after its pool are read.
    _settle_at: int = 0

    def _lines_taken(self) -> int:
        """Lines read so far (a Session counts them; the reporter alone does not)."""
        return 0

    def _say(self, boot: Boot, items: list[Output]) -> list[Output]:
        """What a boot has to say now: said at once on a live pipe; held until the end
        of input for a file (``_release``), where each boot is reported once."""
        if self.is_live or not items:
            return items
        self._held.setdefault(boot.index, []).extend(items)
        return []

    def _report(
        self, boot: Boot, line: int | None, report: Report | None = None, *, is_update: bool = False
    ) -> list[Output]:
        """A boot has said what it will say about its pool: its report (a live pipe's,
        now; a file's is made again after its last line), and its load held against it."""
        self.reported.add(boot.index)
        self._settle_at = self._lines_taken() + SETTLE_LINES
        report = report or self.report_for(boot)
        self._printed[boot.index] = _figures(report)
        self.watch_of(boot).start_alerts(Estimate.from_report(report))
        if not self.is_live:
            return []
        title = f"boot {boot.index + 1}" if boot.index > 0 else ""
        return [Output(kind="report", report=report, line=line, is_update=is_update, title=title)]

    def _report_again(self, boot: Boot, line: list[Fact]) -> list[Output]:
        """A line with facts of a boot already reported (a late data-parallel engine, a
        worker's repeat, a pool stated anew, the API server's exact block count, config
        lines pasted after the pool, an engine that died in warm-up): on a live pipe the
        report again, marked as an update, when its answer changed; else nothing."""
        if not self.is_live and not any(f.kind in _POOL_LINE_KINDS for f in line):
            return []  # a file is reported after its last line, with every fact
        report = self.report_for(boot)
        if _figures(report) == self._printed.get(boot.index):
            return []
        at = line[0].line
        out: list[Output] = []
        said = {f.kind for f in line}
        before = self._printed.get(boot.index)
        pool_moved = before is None or _figures(report)[:2] != before[:2]
        if not self.is_live:
            self._printed[boot.index] = _figures(report)
            self.watch_of(boot).start_alerts(Estimate.from_report(report))
            if pool_moved and not said & {"num_kv_cache_groups", "kv_lcm_block_size"}:
                out.append(
                    Output(
                        kind="warning",
                        text=f"warning: {self.source}:{at}: the pool was stated again, with "
                        "other figures: the report takes the boot's last word",
                        line=at,
                    )
                )
            return out
        if said & set(_POOL_LINE_KINDS) and pool_moved:
            what = (
                "the KV cache groups were stated after the report above and change its figures"
                if said & {"num_kv_cache_groups", "kv_lcm_block_size"}
                else "the pool was stated again after the report above, with other figures"
            )
            out.append(
                Output(
                    kind="warning",
                    text=f"warning: {self.source}:{at}: {what}: reported again",
                    line=at,
                )
            )
        elif said & {"engine_failed", "boot_error"} and report.failure is not None:
            out.append(
                Output(
                    kind="warning",
                    text=f"warning: {self.source}:{at}: the engine failed to start after the "
                    "report above: that pool never served",
                    line=at,
                )
            )
        return out + self._report(boot, at, report, is_update=True)

    def _stopped(self, boot: Boot, line: list[Fact]) -> list[Output]:
        """On a live pipe, the line that stopped a reported boot before it served (a
        signal, a shutdown the operator asked for): said once beside the report, whose
        answer stands (a file's report carries it among its warnings)."""
        if not self.is_live or not any(f.kind == "stop_requested" for f in line):
            return []
        end = start_up_end(boot)
        stopped = stopped_warning(end)
        if stopped is None or end.stop is None or end.stop.line != line[0].line:
            return []
        at = line[0].line
        return [Output(kind="warning", text=f"warning: {self.source}:{at}: {stopped}", line=at)]

    def _end_of_boot(self, boot: Boot, line: int | None) -> list[Output]:
        """A boot ended (another began, or the input did): a live pipe's report if
        still due, and its load summary; a file's are said after its last line."""
        if not self.is_live:
            if boot.index not in self.reported and boot.has_pool:
                self._report(boot, line)
            return []
        out: list[Output] = []
        if boot.index not in self.reported and boot.has_pool:
            out += self._report(boot, line)
        return out + self._summary(boot, line)

    def _release(self) -> list[Output]:
        """A file read to its end: each boot to give (the one that says what runs now, or
        every boot with ``all_boots``), reported once with every fact in, then its
        alerts, its load summary and the workload it saw; labelled when there are
        several."""
        with_facts = [b for b in self.tracker.boots if b.facts]
        boots = with_facts if self.all_boots else [self.last_boot]
        out: list[Output] = []
        for boot in boots:
            label = ""
            if len(with_facts) > 1 and boot in with_facts:
                k = with_facts.index(boot) + 1
                label = f"boot {k} of {len(with_facts)}"
                if not self.all_boots:
                    out.append(
                        Output(
                            kind="note",
                            text=f"note: {self.source} holds {len(with_facts)} boots: the report "
                            f"is of boot {k}, the one that says what runs at the end; "
                            "--all-boots reports each",
                        )
                    )
            if boot.has_pool:
                report = self.report_for(boot)
                self._printed[boot.index] = _figures(report)
                out.append(Output(kind="report", report=report, title=label))
            out += self._held.pop(boot.index, [])
            out += self._summary(boot, None, label=label)
        self._held.clear()
        return out

    def _summary(self, boot: Boot, line: int | None, *, label: str = "") -> list[Output]:
        """The load summary of a boot that ran under load, once; then the workload its
        request lines showed, once."""
        summary = self.load_of(boot)
        out: list[Output] = []
        if summary is not None and boot.index not in self.summarized:
            self.summarized.add(boot.index)
            model = boot.value("model")
            title = str(model) if model else ""
            if label or len(self.tracker.boots) > 1:
                label = label.split(";")[0] or f"boot {boot.index + 1}"
                title = label + (f", {title}" if title else "")
            out.append(Output(kind="summary", summary=summary, title=title, line=line))
        return out + self._workload(boot, line)

    def _workload(self, boot: Boot, line: int | None) -> list[Output]:
        """The workload a log's request lines showed, at the end of its boot, once."""
        if boot.index not in self.tallies or not boot.has_pool or boot.index in self.workloads:
            return []
        self.workloads.add(boot.index)
        return [Output(kind="workload", report=self.report_for(boot), line=line)]


@dataclass(slots=True)
class BootRouter(BootReporter):
    """One input's facts routed, a line at a time: to its boots (a new boot
    when a line starts one), to their load watches (stats lines, V0's
    preemption warnings), and to their reports (``BootReporter``: once a boot
    said what it will say about its pool; again when a pool is stated anew with
    other figures). ``Session`` reads the input into it.

    ``on_stats`` (optional) is called for every stats line (``StatsSink``:
    ``--stats-csv``). With ``read_stats=False`` stats lines and V0 preemption
    warnings are not looked for (``--no-stats``: the boot report alone, found
    through the boot lines' markers only).

    ``keep_all_facts``: every line in boot mode, every fact listed in ``facts``
    (the reference reading: tests, ``diff``). ``list_boot_facts`` (``--json``):
    the boot lines' facts listed, up to the boot's serving (``SETTLE_LINES``,
    ``Session._is_settled``); the stats lines' and request lines' are folded
    into the load and the workload seen, never listed, so memory stays flat.
    ``on_stats_facts`` (``--stats-jsonl``) is handed each stats line's facts (and
    V0 preemption warnings') as they are read.
    """

    keep_all_facts: bool = True
    on_stats: StatsSink | None = None
    read_stats: bool = True
    list_boot_facts: bool = False
    on_stats_facts: Callable[[list[Fact]], None] | None = None
    _num_listed_stats: int = 0  # stats lines listed in --json's facts (list_boot_facts)
    facts: list[Fact] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)

    def _events(self, events: list[Event], base: int) -> list[Output]:
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
        first = line[0].kind
        is_request = first in _REQUEST_KINDS
        # A stats line (printed by the API server) or V0's preemption warning
        # is the load of the current boot, never one of a boot's own facts.
        is_v0_warning = first == "preemptions" and len(line) == 1
        is_load = first in STATS_KINDS or is_v0_warning
        if self.keep_all_facts or (self.list_boot_facts and not is_request and not is_load):
            self.facts.extend(line)
        if is_load:
            self.stats_facts(line)
        if is_request:
            # A request line (--enable-log-requests): the workload seen, folded per boot.
            self.fold_requests([(f.kind, int(f.value)) for f in line], line[0].line)
            return out
        if not is_load or self.keep_all_facts:
            prev = self.tracker.current
            # A version line after the boot was reported is a restart.
            forced = prev.index in self.reported and prev.restates_version(line)
            if forced:
                self.tracker.boots.append(Boot(index=len(self.tracker.boots)))
            if self.tracker.add_line(line) or forced:
                out += self._end_of_boot(prev, line[0].line)
        boot = self.tracker.current
        if boot.index not in self.reported and _boot_complete(boot, line):
            out += self._report(boot, line[0].line)
        elif boot.index in self.reported and not is_load:
            out += self._report_again(boot, line)
            out += self._stopped(boot, line)
        if is_v0_warning and engine_generation(boot) == "V1":
            # Not V1's (see ServingReader.v0_warnings): a pasted line, counted by neither
            # reading mode; the reference reading (keep_all_facts) still lists its fact.
            is_load = False
        if is_load:
            boot.has_load = True
            alerts = [
                Output(kind="alert", text=str(a), line=a.line)
                for a in self.watch_of(boot).add_facts(line)
            ]
            out += self._say(boot, alerts)
            if self.on_stats is not None and first != "preemptions":
                self._stats_row(line)
        return out

    def stats_facts(self, line: list[Fact]) -> None:
        """A stats line's (or V0 preemption warning's) facts: to ``--stats-jsonl``, and
        listed in ``--json``'s facts up to ``MAX_LISTED_STATS_LINES`` (a bug report's
        log is listed whole; a day's log keeps the first ones and folds the rest)."""
        if self.list_boot_facts and not self.keep_all_facts:
            if self._num_listed_stats < MAX_LISTED_STATS_LINES:
                self._num_listed_stats += 1
                self.facts.extend(line)
        if self.on_stats_facts is not None:
            self.on_stats_facts(line)

    def wants_stats_facts(self) -> bool:
        """Whether serving mode must still make each stats line's facts (its fast path,
        column by column, does not): ``--stats-jsonl``, or ``--json`` under its cap."""
        return self.on_stats_facts is not None or (
            self.list_boot_facts
            and not self.keep_all_facts
            and self._num_listed_stats < MAX_LISTED_STATS_LINES
        )

    def _stats_row(self, line: list[Fact]) -> None:
        assert self.on_stats is not None
        v = StatsFacts.of(line)
        self.on_stats(
            v.time,
            v.engine,
            v.running,
            v.waiting,
            v.kv_usage_pct,
            v.prompt_tps,
            v.generation_tps,
            v.preemptions or 0,
            v.line,
        )


@dataclass(slots=True)
class Session(BootRouter):
    """Reads one input incrementally (see the module docstring): its bytes
    framed into lines, read in boot mode or serving mode, the facts routed
    (``BootRouter``).
    """

    _framing: Framing = field(default_factory=Framing)  # bytes -> lines, and their count
    _scanner: Scanner = field(init=False)  # boot mode
    _serving_reader: ServingReader[Output] = field(init=False)  # serving mode
    _line_base: int = 0  # lines before the current Scanner's first line
    _is_serving: bool = False
    _metrics: bytearray | None = None  # a Prometheus /metrics text, read whole (read/metrics.py)

    def __post_init__(self) -> None:
        self._scanner = Scanner(self.source, read_stats=self.read_stats)
        self._serving_reader = ServingReader(
            self.source,
            self._framing,
            self,
            on_stats=self.on_stats,
            on_facts=self._serving_stats_facts if self.wants_stats_facts() else None,
        )

    def _serving_stats_facts(self, line: list[Fact]) -> None:
        """Serving mode's stats facts: listed and streamed; once ``--json`` has listed
        its ``MAX_LISTED_STATS_LINES`` and nothing streams, serving mode's fast path
        (no facts made) takes over again."""
        self.stats_facts(line)
        if not self.wants_stats_facts():
            self._serving_reader.on_facts = None

    @property
    def recount(self) -> Callable[[int, int], int] | None:
        """Newlines of the input's bytes [a, b) counted again from their source
        (a regular file: ``inputs.file_recount``; None: a pipe): see ``Framing``."""
        return self._framing.recount

    @recount.setter
    def recount(self, recount: Callable[[int, int], int] | None) -> None:
        self._framing.recount = recount

    @property
    def lines_read(self) -> int:
        return self._framing.lines_read

    @property
    def is_metrics(self) -> bool:
        """The input is a /metrics text (its first lines said so), not a log."""
        return self._metrics is not None

    # -- feeding ---------------------------------------------------------------

    def feed(self, data: bytes) -> list[Output]:
        """The next bytes of the input; what to tell now."""
        if not data:
            return []
        framing = self._framing
        if framing.fed == 0 and data.startswith(_COMPRESSED):
            # Read as text it is "no vLLM lines at all": say what it is instead.
            raise InputError(
                f"{self.source}: a compressed file (gzip, xz or zstd): decompress it first "
                "(gunzip, unxz or unzstd), then read the text"
            )
        if framing.fed == 0 and looks_like_metrics(data):
            self._metrics = bytearray()
        if self._metrics is not None:
            self._metrics += data
            framing.pass_through(data)
            return []
        out: list[Output] = []
        for buf, start, end, at in framing.frames(data):
            out += self._take_lines(buf, start, end, at=at)
        return out

    def finish(self) -> list[Output]:
        """End of input: the last line, the pending report, the load summary."""
        if self._metrics is not None:
            return feed_session(self, bytes(self._metrics))
        out: list[Output] = []
        for buf, start, end, at in self._framing.finish():
            out += self._take_lines(buf, start, end, at=at)
        if not self._is_serving:
            out += self._events(self._scanner.finish(), self._line_base)
        self.tracker.end_of_input()
        self._final_reports = {}
        out += self._end_of_boot(self.tracker.current, None)
        if not self.is_live:
            out += self._release()
        return out

    def quiet(self) -> list[Output]:
        """The input went silent for ``quiet_timeout()``: report a pending boot."""
        boot = self.tracker.current
        if boot.index in self.reported or not boot.has_pool:
            return []
        return self._report(boot, None)

    def quiet_timeout(self) -> float | None:
        """How long silence must last before ``quiet`` (None: nothing pending)."""
        boot = self.tracker.current
        if boot.index in self.reported or not boot.has_pool:
            return None
        return QUIET_S if _all_engines_spoke(boot) else QUIET_MISSING_ENGINE_S

    def interrupted(self) -> list[Output]:
        """Ctrl-C or SIGTERM: the pending report and the load so far."""
        if not self.is_live:
            self._end_of_boot(self.tracker.current, None)
            return self._release()
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
        framing = self._framing
        while True:
            if self._is_serving:
                lazy = framing.read_lazily(at)
                cut = hand_back(buf, start, end)
                if self.read_stats:
                    # (counts the lines too, or leaves them uncounted)
                    out += self._say(
                        self.tracker.current, self._serving_reader.serve(buf, start, cut)
                    )
                elif at is not None and lazy:
                    framing.leave(at + start)
                else:
                    framing.lines += buf.count(b"\n", start, cut)
                if cut == end:
                    return out
                if at is not None and lazy:
                    framing.settle(at + cut)
                # A new boot (or a pool line) may start here: boot mode from this line on.
                self._is_serving = False
                self._scanner = Scanner(self.source, read_stats=self.read_stats)
                self._line_base = framing.lines
                start = cut
            # Boot mode a slice at a time, so that serving mode takes over within
            # _BOOT_SLICE_BYTES of the report, not at the end of a megabyte chunk:
            # the generated log's first megabyte holds 1,800 request lines, which
            # cost the Scanner 0.1 s when it read them all.
            stop = end
            if not self.keep_all_facts and not framing.is_utf16 and end - start > _BOOT_SLICE_BYTES:
                stop = buf.find(b"\n", start + _BOOT_SLICE_BYTES, end) + 1 or end
            part = buf if start == 0 and stop == len(buf) else buf[start:stop]
            sample = buf[start:end] if stop != end and self._scanner.is_first else None
            out += self._events(self._scanner.feed(part, sample=sample), self._line_base)
            framing.lines += part.count(b"\n")
            self._enter_serving()
            if stop == end:
                return out
            start = stop

    def _enter_serving(self) -> None:
        """Serving mode once the current boot is reported and the Scanner is
        not holding lines back (a near miss waiting for a wrapped rest)."""
        if (
            not self._is_serving
            and not self.keep_all_facts
            and not self._framing.is_utf16
            # a hard-wrapped capture needs its records rejoined (read/scanner.py)
            and not self._scanner.is_hard_wrapped
            and self.tracker.current.index in self.reported
            and self._is_settled()
            and self._scanner.lines_read + self._line_base == self._framing.lines
            # SGLang's decode stats lines are read by the Scanner only.
            and self.tracker.current.value("engine_kind") != "sglang"
        ):
            self._is_serving = True
            # V1 never prints V0's preemption warning (ServingReader.v0_warnings).
            self._serving_reader.v0_warnings = engine_generation(self.tracker.current) != "V1"

    def _lines_taken(self) -> int:
        return self._framing.lines

    def _is_settled(self) -> bool:
        """The current boot serves (a stats line was read) or ``SETTLE_LINES`` lines
        went by since its report: the lines that refine a boot are behind us."""
        watch = self.watches.get(self.tracker.current.index)
        served = watch is not None and watch.num_stats_lines > 0
        return served or self._framing.lines >= self._settle_at

    # -- what serving mode hands on (read.serving.ServingSink) ------------------------

    def fold_stats(self, batch: StatsBatch) -> list[tuple[int, Callable[[int], Output]]]:
        """Stats lines serving mode read, into the current boot's load watch;
        each alert with the index of its line and how to say it, numbered."""
        self.tracker.current.has_load = True
        alerts = self.watch_of(self.tracker.current).add_stats(batch)
        return [(a.line, functools.partial(_alert_output, a)) for a in alerts]

    def read_events(self, events: list[Event], base: int) -> list[Output]:
        """A line serving mode left to the patterns table."""
        return self._events(events, base)


#: Boot mode reads this much at a time (see Session._take_lines).
_BOOT_SLICE_BYTES = 64 * 1024


#: The facts of a request line (read/patterns.py rows request_received, request_details).
_REQUEST_KINDS = frozenset({"request_max_tokens", "request_prompt_tokens"})


#: Facts that say a boot did not start (report.failure words them).
_FAILURE_KINDS = ("kv_too_small", "engine_failed")


# (pool tokens, vLLM's max concurrency, users, users mid-answer, contradicts, engines,
# serves nobody, the what-ifs' users)
_Figures = tuple[
    int | None, float | None, int | None, int | None, bool, int, bool, tuple[int | None, ...]
]


def _figures(report: Report) -> _Figures:
    """What the gate holds of a report and the pool figures it prints from
    the log: a reprint is due when these change. Not when only a derived
    figure is refined (Gemma 3 on 0.11: the API server states the exact
    13,025 blocks after the report derived 13,020 from 29,760 tokens; 46
    users either way) or a cited line moves; but when a what-if's users do
    (the same refinement: fp8 doubles 13,024 usable blocks to 93 users, not
    13,019 to 92)."""
    return (
        report.pool_tokens,
        report.vllm_max_concurrency,
        report.users,
        report.users_mid_answer,
        report.contradicts,
        len(report.engines),
        report.failure is not None,
        tuple(w.users for w in report.what_if),
    )


def _alert_output(alert: Alert, line: int) -> Output:
    text = str(Alert(line=line, time=alert.time, text=alert.text))
    return Output(kind="alert", text=text, line=line)
