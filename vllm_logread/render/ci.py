"""Outputs for CI and for tables: ``--format github|markdown|csv|json`` and sweeps.

GitHub Actions reads workflow commands from a step's output; one line each:

    ::error file=logs/boot.log,line=16,title=vllm-logread pool_vs_memory::3.31 GiB ...

In the message, ``%``, ``\\r`` and ``\\n`` are written ``%25``, ``%0D`` and
``%0A``; in a property (file, title) also ``:`` and ``,`` as ``%3A`` and
``%2C`` (GitHub's workflow-command syntax, the escaping its toolkit does). A
Markdown summary for ``$GITHUB_STEP_SUMMARY`` goes with them; the same
Markdown is ``--format markdown`` for any CI.

Nothing here prints: each function returns text for the CLI to write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from ..errors import UsageError
from ..report.capacity import Workload
from ..report.gpus import find_gpu
from ..report.model import Report
from ..report.whatif import parse_changes
from ..session.events import GateResult, InputResult
from ..session.watch import LoadSummary
from .json import json_text
from .plot import StatsRecorder, check_available, fan_out, render
from .tables import (
    SERVER_COLUMNS,
    SWEEP_COLUMNS,
    TableRow,
    format_rows,
    server_rows,
    sweep_rows,
)
from .text import failure_summary, target_text, total_text
from .words import said

if TYPE_CHECKING:
    from ..read.serving import StatsSink

FORMATS = ("text", "markdown", "csv", "json", "github")


def escape_data(text: str) -> str:
    """A workflow command's message.

    >>> escape_data("100% full\\nnext")
    '100%25 full%0Anext'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (file, title).

    >>> escape_property("logs/a,b.log: x")
    'logs/a%2Cb.log%3A x'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


#: A GitHub workflow command's level.
Level = Literal["error", "warning", "notice"]


def annotation(
    level: Level,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> str:
    """``::error file=F,line=N,title=T::message`` (level: error, warning, notice).

    >>> annotation("notice", "37 users", file="seed.log", line=16, title="capacity")
    '::notice file=seed.log,line=16,title=capacity::37 users'
    """
    if level not in ("error", "warning", "notice"):
        raise ValueError(f"annotation level must be error, warning or notice, not {level!r}")
    props = []
    if file is not None and file != "-":
        props.append(f"file={escape_property(file)}")
        if line is not None:
            props.append(f"line={line}")
    if title:
        props.append(f"title={escape_property(title)}")
    head = f"::{level}" + (" " + ",".join(props) if props else "")
    return f"{head}::{escape_data(message)}"


def _pool_line(report: Report) -> int | None:
    return report.engines[0].line if report.engines else None


def _headline(report: Report) -> str:
    r = report
    w = r.workload
    at = (
        f"of the mix (mean {w.prompt_tokens:,}+{w.output_tokens:,} tokens)"
        if w.is_mix
        else f"at {w.prompt_tokens:,}+{w.output_tokens:,} tokens"
    )
    if r.users is None and r.users_range is not None:
        # The text report's range (an assumption the log did not settle).
        low, high = r.users_range
        return f"{low:,} to {high:,} users fit {at} (not known exactly: see the text report)"
    if r.users is None:
        return f"{r.model or 'model not named'}: users unknown"
    text = (
        f"{r.users:,} users fit {at} "
        f"({'unknown' if r.users_mid_answer is None else f'{r.users_mid_answer:,}'} mid-answer)"
    )
    if r.vllm_max_concurrency is not None:
        length = r.concurrency_tokens or r.max_model_len
        text += (
            f"; vLLM's {r.vllm_max_concurrency:.2f}x is for users who each fill {length:,} tokens"
            if length
            else f"; vLLM says {r.vllm_max_concurrency:.2f}x"
        )
    return text


def _first_with_pool(reports: Sequence[Report]) -> Report | None:
    return next((r for r in reports if r.has_pool), None)


def github_annotations(
    results: Sequence[InputResult], *, min_users: int | None = None
) -> list[str]:
    """Annotations for every report: the users as a notice on the pool line, a
    failed check as an error on its line, the --min-users gate as an error on
    the pool line, warnings and preemption advice as warnings."""

    out: list[str] = []
    for s in results:
        for w in s.warnings:
            out.append(
                annotation(
                    "warning",
                    f"a line carries a known marker but does not match its pattern: {w.text}",
                    file=s.source,
                    line=w.line,
                    title="vllm-logread near miss",
                )
            )
        reports = s.reports
        # A boot that serves nobody: the cause on its line and the fix, as exit 3's
        # message words it (the report's Failure), not "no pool line" without a line.
        out.extend(_failure_annotation(r) for r in reports if r.failure is not None)
        if any(r.failure is not None for r in reports) and not any(r.has_pool for r in reports):
            continue
        if not reports or not any(r.has_pool for r in reports):
            out.append(
                annotation("error", s.missing_pool, file=s.source, title="vllm-logread: no KV pool")
            )
            continue
        first = _first_with_pool(reports)
        for r in reports:
            if r.has_pool:
                out.extend(_report_annotations(r, s.gate if r is first else None))
    return out


def _failure_annotation(r: Report) -> str:
    """``::error file=F,line=N,title=...::the boot serves nobody: CAUSE%0A  fix: ...``:
    the failure's line, its cause and every fix (render/text.failure_summary)."""
    assert r.failure is not None
    return annotation(
        "error",
        failure_summary(r),
        file=r.source,
        line=r.failure.line,
        title="vllm-logread: the boot serves nobody",
    )


def _report_annotations(r: Report, gate: GateResult | None) -> list[str]:
    """One report's annotations: its failed checks, the gate when it failed (on
    the first report with a pool: ``gate`` None on the others), the preemption
    advice, its warnings, then the users as a notice."""
    line = _pool_line(r)
    out = [
        annotation(
            "error",
            f"{ch.name}: {ch.detail}",
            file=r.source,
            line=ch.line or line,
            title=f"vllm-logread {ch.name}",
        )
        for ch in r.checks
        if ch.status == "fail"
    ]
    # What the gate judged (outcome.judged): never judged again here.
    if gate is not None and not gate.passed:
        got = "unknown" if gate.users is None else f"only {gate.users:,}"
        margin = f" --margin {gate.margin_pct:g}%" if gate.margin_pct else ""
        w = r.workload
        at = "of the mix" if w.is_mix else f"at {w.prompt_tokens:,}+{w.output_tokens:,} tokens"
        out.append(
            annotation(
                "error",
                f"--min-users {gate.min_users}{margin}: {got} users fit {at}",
                file=r.source,
                line=line,
                title="vllm-logread --min-users",
            )
        )
    for wi in r.what_if:
        if wi.change.startswith("max_num_seqs=") and "preempts" in wi.note:
            out.append(
                annotation(
                    "warning",
                    wi.note,
                    file=r.source,
                    line=line,
                    title="vllm-logread max_num_seqs",
                )
            )
    out.extend(annotation("warning", said(warn), file=r.source, line=line) for warn in r.warnings)
    out.append(
        annotation(
            "notice",
            _headline(r),
            file=r.source,
            line=line,
            title=f"vllm-logread: {r.model or 'KV cache'}",
        )
    )
    return out


def _md(text: object) -> str:
    return str(text).replace("|", "\\|")


def markdown_report(report: Report, load: LoadSummary | None = None) -> str:
    """One report as Markdown: the answer, the numbers, the checks, what to change."""

    r = report
    lines = [f"### {_md(r.model or 'model not named in the log')} ({_md(r.source)})", ""]
    if not r.has_pool:
        lines.append("**No KV cache pool line in the log.**")
        return "\n".join(lines)
    lines.append(f"**{_md(_headline(r))}**")
    lines.append("")
    rows = [
        ("vLLM", r.vllm_version or "unknown"),
        ("KV pool", f"{r.pool_tokens:,} tokens" if r.pool_tokens is not None else "unknown"),
        (
            "blocks",
            f"{r.num_blocks:,} of {r.block_size} tokens"
            if r.num_blocks is not None and r.block_size
            else "unknown",
        ),
        ("max model len", f"{r.max_model_len:,}" if r.max_model_len else "unknown"),
        ("KV bytes per token", f"{r.kv_bytes_per_token:,}" if r.kv_bytes_per_token else "unknown"),
        (
            "tensor parallel",
            str(r.tensor_parallel_size) if r.is_tensor_parallel_stated else "not stated",
        ),
    ]
    lines += ["| | |", "|---|---|"] + [f"| {k} | {_md(v)} |" for k, v in rows]
    if r.checks:
        lines += ["", "| check | status | detail |", "|---|---|---|"]
        icon = {"pass": "pass", "fail": "**FAIL**", "unknown": "unknown"}
        for ch in r.checks:
            lines.append(f"| {ch.name} | {icon.get(ch.status, ch.status)} | {_md(ch.detail)} |")
    if r.what_if:
        lines += ["", "| what to change | users | | note |", "|---|---:|---|---|"]
        for wi in r.what_if:
            users = "" if wi.users is None else f"{wi.users:,}"
            kind = "exact" if wi.is_exact else "estimate"
            lines.append(f"| `{_md(wi.change)}` | {users} | {kind} | {_md(wi.note)} |")
    if r.target is not None:
        lines += ["", "```text", *target_text(r.target), "```"]
    if load is not None:
        lines += [
            "",
            f"Load: {load.num_stats_lines:,} stats lines, peak {load.peak_running} running, "
            f"{load.peak_waiting} waiting, {load.peak_kv_usage_pct:.1f}% KV usage, "
            f"{load.preemptions:,} preemptions printed"
            + (f". {_md(load.verdict)}" if load.verdict else ""),
        ]
    if r.warnings:
        lines += [""] + [f"- warning: {_md(said(w))}" for w in r.warnings]
    return "\n".join(lines)


def _reports(results: Sequence[InputResult]) -> list[tuple[Report, LoadSummary | None]]:
    """(report, load summary) for each boot to give."""
    return [pair for res in results for pair in zip(res.reports, res.loads, strict=True)]


def _good_reports(results: Sequence[InputResult]) -> list[Report]:
    """The reports a table and its total count: inputs with nothing wrong
    (the others are named once, on stderr, by the exit status)."""
    return [r for res in results if res.is_good for r in res.reports if r.has_pool]


def markdown_summary(results: Sequence[InputResult], *, sort: str | None = None) -> str:
    """``--format markdown`` and the GitHub step summary: the servers side by
    side (several inputs), then each report."""
    pairs = _reports(results)
    parts = ["## vllm-logread: KV cache capacity"]
    good = _good_reports(results)
    if len(results) > 1 and good:
        rows = server_rows(good, sort=sort)
        parts.append(format_rows(rows, SERVER_COLUMNS, "markdown"))
    parts += [markdown_report(r, load) for r, load in pairs]
    return "\n\n".join(parts) + "\n"


def is_sweep(prompts: Sequence[int], outputs: Sequence[int]) -> bool:
    """More than one workload asked for."""
    return len(prompts) > 1 or len(outputs) > 1


def final_output(
    results: Sequence[InputResult],
    *,
    fmt: str,
    prompts: Sequence[int],
    outputs: Sequence[int],
    min_users: int | None = None,
    sort: str | None = None,
) -> str:
    """What ``--format`` (or a sweep) prints once the inputs are read; "" when
    the ordinary output already said it (text, no sweep). Servers come in input
    order; ``sort="users"``: most users first."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    if fmt == "github":
        return "\n".join(github_annotations(results, min_users=min_users))
    pairs = _reports(results)
    reports = [r for r, _ in pairs if r.has_pool]
    if is_sweep(prompts, outputs):
        rows = final_rows(results, prompts=prompts, outputs=outputs)
        cols: tuple[str, ...] = SWEEP_COLUMNS
        if fmt in ("text", "markdown") and len({r.source for r in reports}) <= 1:
            cols = cols[1:]  # one log: the source column says it once, in the title
            if reports:
                r = reports[-1]
                title = f"users per workload: {r.model or 'model not named'}, {r.source}"
                if fmt == "text":
                    return f"== vllm-logread {title}\n{format_rows(rows, cols, fmt)}"
                return f"**vllm-logread** {title}\n\n{format_rows(rows, cols, fmt)}"
        return format_rows(rows, cols, fmt)
    if fmt == "csv":
        return format_rows(server_rows(_good_reports(results), sort=sort), SERVER_COLUMNS, "csv")
    if fmt == "markdown":
        return markdown_summary(results, sort=sort).rstrip("\n")
    return ""


def final_rows(
    results: Sequence[InputResult], *, prompts: Sequence[int], outputs: Sequence[int]
) -> list[TableRow]:
    """A sweep's rows: every report with a pool x every workload, as the report
    stage computed them (InputResult.sweep, outcome.with_sweep)."""
    del prompts, outputs  # the rows carry their workloads
    return sweep_rows([row for res in results for row in res.sweep])


def append_step_summary(path: str, results: Sequence[InputResult]) -> None:
    """Append the Markdown summary to ``$GITHUB_STEP_SUMMARY`` (the CLI passes the path)."""

    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(markdown_summary(results))
    except OSError as err:
        raise UsageError(f"GITHUB_STEP_SUMMARY {path}: cannot append ({err.strerror})") from None


class Extras:
    """What ``read`` does beyond the ordinary report: ``--format``, a sweep,
    ``--what-if`` / ``--gpu`` checks and ``--plot``. Built (and validated) before
    any reading, so a bad option fails at once; ``finish`` gives the output
    once the inputs are read."""

    def __init__(
        self,
        *,
        fmt: str = "text",
        prompts: Sequence[int] = (512,),
        outputs: Sequence[int] = (128,),
        plot_path: str | None = None,
        what_ifs: Sequence[str] = (),
        gpu: str | None = None,
        sort: str | None = None,
    ) -> None:

        if fmt not in FORMATS:
            raise UsageError(f"--format {fmt!r}: one of {', '.join(FORMATS)}")
        if not prompts or not outputs:
            raise UsageError("--prompt and --output need at least one value")
        self.fmt = fmt
        self.prompts = tuple(prompts)
        self.outputs = tuple(outputs)
        self.changes = parse_changes(what_ifs)
        self.gpu = None if gpu is None else find_gpu(gpu).name
        self.plot_path = plot_path
        self.sort = sort
        self.recorder = None
        if plot_path is not None:
            check_available(plot_path)
            self.recorder = StatsRecorder()
        if self.is_sweep and fmt == "github":
            raise UsageError("--format github reports one workload; sweep with another format")

    @property
    def is_sweep(self) -> bool:
        return is_sweep(self.prompts, self.outputs)

    @property
    def is_json(self) -> bool:
        """``--format json`` is ``--json``, for one workload or a sweep."""
        return self.fmt == "json"

    @property
    def workloads(self) -> tuple[Workload, ...]:
        """Every workload asked for, prompts outermost (the sweep's row order)."""
        from ..report.sweep import sweep_workloads

        return sweep_workloads(self.prompts, self.outputs)

    @property
    def is_quiet(self) -> bool:
        """No report text while reading: stdout is a table or annotations."""
        return self.fmt != "text" or self.is_sweep

    def on_stats(self, *sinks: StatsSink | None) -> StatsSink | None:
        """The Session's ``on_stats``: the given sinks and the plot's recorder."""

        return fan_out(*sinks, None if self.recorder is None else self.recorder.add)

    def finish(
        self,
        results: Sequence[InputResult],
        *,
        min_users: int | None = None,
        summary_path: str | None = None,
        is_json: bool = False,
        unread: Sequence[tuple[str, int, str]] = (),
    ) -> str:
        """Draw the plot, append the GitHub step summary, and return the text
        to print ("" when the ordinary output said it all): under ``is_json``
        one JSON object (a sweep's rows in it), nothing else."""
        if self.plot_path is not None:
            reports = [r for r, _ in _reports(results)]
            rows = self.recorder.rows if self.recorder is not None else []
            render(self.plot_path, reports, rows if len(results) == 1 else ())
        if self.fmt == "github" and summary_path:
            append_step_summary(summary_path, results)
        if is_json or self.is_json:
            sweep = None
            if self.is_sweep:
                sweep = final_rows(results, prompts=self.prompts, outputs=self.outputs)
            return json_text(results, sweep=sweep, unread=unread)
        if self.fmt == "text" and not self.is_sweep:
            if len(results) + len(unread) > 1:
                return total_text(results, num_unread=len(unread))
            return ""
        return final_output(
            results,
            fmt=self.fmt,
            prompts=self.prompts,
            outputs=self.outputs,
            min_users=min_users,
            sort=self.sort,
        )
