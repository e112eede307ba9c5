"""Finished sessions -> their results, the exit code and its message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..boot.boots import Boot
from ..read.facts import Fact
from ..report.capacity import Workload
from ..report.model import Report
from ..session.events import BootResult, ExitCode, ExitStatus, GateResult, InputResult
from ..session.session import Session
from ..session.watch import Estimate


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
    res = InputResult(
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
    status = reading_status(res)
    return replace(res, error_code=status.code, error=status.message)


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


def worst(statuses: Sequence[ExitStatus]) -> ExitStatus:
    """The highest code, with every non-zero status's message in input order.

    >>> s = worst([ExitStatus(ExitCode.OK), ExitStatus(ExitCode.MISSING, "a: no pool"),
    ...            ExitStatus(ExitCode.GATE_FAILED, "b: short")])
    >>> int(s.code), s.message.splitlines()
    (3, ['a: no pool', 'b: short'])
    """
    code = max((s.code for s in statuses), default=ExitCode.OK)
    return ExitStatus(code, "\n".join(s.message for s in statuses if s.code and s.message))


def input_status(
    res: InputResult,
    *,
    min_users: int | None,
    strict: bool,
    workloads: Sequence[Workload] = (),
    margin_pct: float = 0.0,
) -> ExitStatus:
    """One input's exit code and its message: what is wrong with the log
    (``reading_status``), a near miss under ``--strict``, and the gate."""
    parts = [ExitStatus(res.error_code, res.error)]
    if strict and res.warnings:
        parts.append(
            ExitStatus(
                ExitCode.MISSING,
                f"{res.source}: --strict: a line carried a known marker but did not match its "
                "pattern",
            )
        )
    gate = _gate_of(res, min_users, workloads, margin_pct)
    if gate is not None and not gate.passed:
        floor = gate.floor_users
        short = [(w, u) for w, u in _judged_users(res, workloads) if u is None or u < floor]
        said = "; ".join(
            f"{'unknown' if u is None else f'only {u:,}'} users fit "
            + ("of the mix" if w.is_mix else f"at {w.prompt_tokens:,}+{w.output_tokens:,} tokens")
            for w, u in short
        )
        gate_text = f"--min-users {gate.min_users}"
        if margin_pct:
            gate_text += f" --margin {margin_pct:g}% (fails below {floor})"
        parts.append(ExitStatus(ExitCode.GATE_FAILED, f"{res.source}: {gate_text}: {said}"))
    return worst(parts)


def judged(
    res: InputResult,
    *,
    min_users: int | None,
    strict: bool,
    workloads: Sequence[Workload] = (),
    margin_pct: float = 0.0,
) -> tuple[InputResult, ExitStatus]:
    """The input with its whole exit code and what the gate judged set, for every
    output (``--json`` says what the exit code says), and its status."""
    status = input_status(
        res, min_users=min_users, strict=strict, workloads=workloads, margin_pct=margin_pct
    )
    gate = _gate_of(res, min_users, workloads, margin_pct)
    return replace(res, exit_code=status.code, gate=gate), status


def gate_note(res: InputResult) -> str | None:
    """A gate passed only thanks to ``--margin``: the warning that says so."""
    g = res.gate
    if g is None or not g.is_within_margin:
        return None
    return (
        f"warning: {res.source}: {g.users:,} users, below --min-users {g.min_users} but "
        f"within --margin {g.margin_pct:g}% (fails below {g.floor_users:,}): passed"
    )


def _gate_of(
    res: InputResult, min_users: int | None, workloads: Sequence[Workload], margin_pct: float
) -> GateResult | None:
    """What the gate judges of an input with a pool: the lowest users over every report
    and workload (unknown when any is), against ``min_users`` less the margin."""
    if min_users is None or not any(r.has_pool for r in res.reports):
        return None
    figures = [u for _, u in _judged_users(res, workloads)]
    known = [u for u in figures if u is not None]
    lowest = min(known) if known and len(known) == len(figures) else None
    return GateResult(min_users=min_users, users=lowest, margin_pct=margin_pct)


def _judged_users(
    res: InputResult, workloads: Sequence[Workload]
) -> list[tuple[Workload, int | None]]:
    """(workload, users) the gate holds: every report with a pool, every workload."""
    return [
        (w, users)
        for r in res.reports
        if r.has_pool
        for w, users in users_by_workload(res, r, workloads)
    ]


def reading_status(res: InputResult) -> ExitStatus:
    """What is wrong with one input on its own, whatever was asked: 3 a boot
    that serves nobody (its cause and what would boot), no pool, or a boot
    without one; 4 a contradiction with the model config; 0 and "" when
    nothing is."""
    failed = [r for r in res.reports if r.failure is not None]
    if failed:
        return ExitStatus(ExitCode.MISSING, "\n".join(failure_message(r) for r in failed))
    parts: list[ExitStatus] = []
    reports = [r for r in res.reports if r.has_pool]
    if not reports or len(reports) != len(res.reports):
        parts.append(
            ExitStatus(
                ExitCode.MISSING,
                res.missing_pool or f"{res.source}: a boot without a KV cache pool line",
            )
        )
    if not reports:
        return worst(parts)
    if any(r.contradicts for r in reports):
        # A check fails only when stated figures contradict each other, or the config the
        # user gave (report/checks.tool_model_failures): where the tool's own model of the
        # layout fails, the users are unknown instead (exit 0).
        bad = [c.detail for r in reports for c in r.checks if c.status == "fail"]
        given = res.options is not None and res.options.is_config_given
        what = "the model config" if given else "itself"
        parts.append(
            ExitStatus(
                ExitCode.CONTRADICTION,
                f"{res.source}: the log contradicts {what}: " + "; ".join(bad),
            )
        )
    return worst(parts)


def with_sweep(results: Sequence[InputResult], workloads: Sequence[Workload]) -> list[InputResult]:
    """``results`` with each report's answer at every workload of a sweep, computed
    once here (report/sweep.sweep_of); no sweep: the results as they are."""
    if not workloads:
        return list(results)
    from ..report.sweep import sweep_of  # a sweep's rows: imported by a sweep alone

    return [
        replace(
            res,
            sweep=tuple(
                row
                for r in res.reports
                if r.has_pool
                for row in sweep_of(
                    r, workloads, options=res.options, spec_resolver=res.spec_resolver
                )
            ),
        )
        for res in results
    ]


def users_by_workload(
    res: InputResult, report: Report, workloads: Sequence[Workload] = ()
) -> list[tuple[Workload, int | None]]:
    """(workload, users at the end of the answers) for each workload of a sweep,
    read from the input's sweep rows (the figure ``--prompt P --output O`` alone
    gives); the report's own workload when none are given."""
    if not workloads:
        return [(report.workload, report.users)]
    rows = [
        row
        for row in res.sweep
        if row.boot_index == report.boot.index and row.source == report.source
    ]
    if not rows:
        from ..report.sweep import sweep_of

        rows = list(
            sweep_of(report, workloads, options=res.options, spec_resolver=res.spec_resolver)
        )
    return [(row.workload, row.users) for row in rows]


def failure_message(r: Report) -> str:
    """Exit 3's message for a boot that serves nobody: the cause and what would boot."""
    from ..render.text import failure_summary

    f = r.failure
    assert f is not None
    where = f"{r.source}:{f.line}" if f.line is not None else r.source
    return f"{where}: {failure_summary(r)}"


def _missing_pool(s: Session) -> str:
    """Exit 3's message for an input none of whose given boots stated a pool;
    "" for one that did."""
    boots = s.tracker.boots if s.is_metrics else [s.last_boot]
    if any(b.has_pool for b in boots):
        return ""
    kinds = sorted({f.kind for b in s.tracker.boots for f in b.facts})
    if any(w.num_stats_lines for w in s.watches.values()):
        kinds.append("stats lines")
    seen = ", ".join(kinds) if kinds else "no vLLM lines at all"
    return (
        f"{s.source}: no KV cache pool line (seen: {seen}; {s.lines_read:,} lines read). "
        "Was the log cut before the KV cache was allocated, did the boot fail, "
        "or is it not a vLLM log?"
    )
