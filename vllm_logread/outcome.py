"""Finished sessions -> their results, the exit code and its message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .boots import Boot
from .events import BootResult, InputResult
from .read.facts import Fact
from .report.model import Report
from .session import Session
from .watch import Estimate


@dataclass(frozen=True, slots=True)
class ExitStatus:
    code: int
    message: str = ""


def results_of(sessions: Sequence[Session], *, all_boots: bool) -> list[InputResult]:
    """What each input gave, for the output formats and the exit code."""
    return [_result(s, all_boots=all_boots) for s in sessions]


def _result(session: Session, *, all_boots: bool) -> InputResult:
    tracker = session.tracker
    boots = tracker.boots if all_boots or session.is_metrics else [session.last_boot]
    reports = tuple(session.report_for(b) for b in boots if b.facts or not all_boots)
    if all_boots or session.is_metrics:
        json_boots = [
            _boot_result(session, boot, [f for f in session.facts if _in_boot(f, boot)])
            for boot in tracker.boots
            if boot.facts
        ]
    else:
        json_boots = [_boot_result(session, session.last_boot, session.facts)]
    return InputResult(
        source=session.source,
        warnings=tuple(session.warnings),
        reports=reports,
        loads=tuple(session.load_of(r.boot) for r in reports),
        json_boots=tuple(json_boots),
        missing_pool=_missing_pool(session),
        is_reported=bool(session.reported),
        options=session.options,
        spec_resolver=session.spec_resolver,
    )


def _boot_result(session: Session, boot: Boot, facts: list[Fact]) -> BootResult:
    report = session.report_for(boot)
    if boot.index not in session.reported:
        # A file read to its end: hold its stats against the report now.
        watch = session.watches.get(boot.index)
        if watch is not None and watch.estimate is None:
            watch.start_alerts(Estimate.from_report(report))
    return BootResult(report=report, facts=facts, load=session.load_of(boot))


def _in_boot(f: Fact, boot: Boot) -> bool:
    return any(f is g for g in boot.facts)


def exit_status(
    results: Sequence[InputResult], *, min_users: int | None, strict: bool
) -> ExitStatus:
    """The documented exit code for what was read."""
    reports = [r for res in results for r in res.reports]
    if strict and any(res.warnings for res in results):
        return ExitStatus(
            3, "--strict: a line carried a known marker but did not match its pattern"
        )
    failed = [r for r in reports if r.failure is not None]
    if failed:
        return ExitStatus(3, "\n".join(failure_message(r) for r in failed))
    if not reports or not all(r.has_pool for r in reports):
        return ExitStatus(3, missing_pool_message(results))
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


def failure_message(r: Report) -> str:
    """Exit 3's message for a boot that serves nobody: the cause and what would boot."""
    f = r.failure
    assert f is not None
    where = f"{r.source}:{f.line}" if f.line is not None else r.source
    fixes = "".join(f"\n  fix: {x}" for x in f.fix)
    return f"{where}: the boot serves nobody: {f.cause}{fixes}"


def missing_pool_message(results: Sequence[InputResult]) -> str:
    """Exit 3's message: for each input, what was seen and why the pool may be missing."""
    return "\n".join(res.missing_pool for res in results)


def _missing_pool(s: Session) -> str:
    kinds = sorted({f.kind for b in s.tracker.boots for f in b.facts})
    if any(w.num_stats_lines for w in s.watches.values()):
        kinds.append("stats lines")
    seen = ", ".join(kinds) if kinds else "no vLLM lines at all"
    return (
        f"{s.source}: no KV cache pool line (seen: {seen}; {s.lines_read:,} lines read). "
        "Was the log cut before the KV cache was allocated, did the boot fail, "
        "or is it not a vLLM log?"
    )
