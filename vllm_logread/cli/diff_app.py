"""The ``diff`` command as one library call: two inputs in, the comparison out.

commands.py parses the options into ``DiffOptions`` and calls ``run_diff``, which
reads OLD and NEW (each a log or a /metrics text; ``-`` is standard input,
for one of them) through their own ``Session``, compares the two last boots
(:mod:`vllm_logread.report.diff`) and says it through the caller's console,
like ``app.run_read``. Each input keeps its own errors: a file that cannot be
opened is named "OLD x.log: ..." or "NEW ...", and so is a log without a pool.

Exit codes: 0 ok; 1 ``--max-drop``: the users fell more than PCT% (or are
unknown on a side); 2 usage error or an input that cannot be read; 3 an input
lacks the KV pool (or serves nobody); 4 an input contradicts its model config.
The highest applies, as with several inputs to ``read``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import LogReadError, UsageError, WrappedError
from ..kv.config import load_config, resolve_spec
from ..render.diff import diff_github, diff_json, diff_summary, diff_table, diff_text
from ..render.json import dumps
from ..report.diff import Diff, diff_reports
from ..report.model import Options, Report
from ..session.events import ExitCode, ExitStatus
from ..session.inputs import open_input, run
from ..session.session import Session
from .options import (
    CommonOptions,
    check_common,
    model_notes,
    one_workload,
    output_format,
    report_options,
)
from .outcome import reading_status, results_of, worst

if TYPE_CHECKING:
    from .terminal import Console


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffOptions(CommonOptions):
    """The ``diff`` command's options, named as its click parameters; the
    shared ones (workload, config, block size, format) are CommonOptions'."""

    old: str = "-"
    new: str = "-"
    max_drop: float | None = None
    # $GITHUB_STEP_SUMMARY for --format github: the side-by-side table is appended.
    summary_path: str | None = None


class _SideError(WrappedError):
    """An input's own error, named OLD or NEW; keeps the original exit code."""

    def __init__(self, label: str, err: LogReadError) -> None:
        super().__init__(f"{label} {err}", err)


def read_side(
    label: str, path: str, options: Options, console: Console
) -> tuple[Report, ExitStatus, Session]:
    """One input's last boot as a report, and what is wrong with it (its exit
    status, the message naming ``label``)."""
    try:
        stream = console.stdin() if path == "-" else open_input(path)
    except LogReadError as err:
        raise _SideError(label, err) from err
    # Every line in boot mode (keep_all_facts): the memory summary of 0.26+
    # ("Free memory on device ...") comes after the pool line.
    session = Session(
        path, options, spec_resolver=resolve_spec, keep_all_facts=True, read_stats=False
    )
    try:
        for item in run(session, stream):
            if item.kind == "warning":
                console.err(f"{label} {item.text}")
    except LogReadError as err:
        raise _SideError(label, err) from err
    finally:
        if path != "-":
            stream.close()
    for note in model_notes(options.model, session.tracker.boots):
        console.err(f"{label} {note}")
    (result,) = results_of([session], all_boots=False)
    status = reading_status(result)
    if status.code:
        status = ExitStatus(
            status.code, "\n".join(f"{label} {m}" for m in status.message.split("\n"))
        )
    return session.report_for(session.last_boot), status, session


def gate_status(diff: Diff, max_drop: float | None) -> ExitStatus:
    """``--max-drop PCT``: exit 1 when the users fell more than PCT% (or are
    unknown on a side, which a gate cannot pass)."""
    if max_drop is None:
        return ExitStatus(ExitCode.OK)
    users = diff.row("users")
    a, b = users.old.value, users.new.value
    if not isinstance(a, int) or not isinstance(b, int):
        side = "OLD" if not isinstance(a, int) else "NEW"
        return ExitStatus(
            ExitCode.GATE_FAILED, f"--max-drop {max_drop:g}: the users are unknown in {side}"
        )
    drop = diff.users_drop_pct
    if drop is not None and drop > max_drop:
        return ExitStatus(
            ExitCode.GATE_FAILED,
            f"--max-drop {max_drop:g}: users fell {drop:.1f}% ({a:,} -> {b:,}) at "
            f"{diff.new.workload.prompt_tokens:,}+{diff.new.workload.output_tokens:,} tokens: "
            f"{diff.explanation.sentence}",
        )
    if a > 0 and b == 0 and drop is None:
        return ExitStatus(ExitCode.GATE_FAILED, f"--max-drop {max_drop:g}: users fell to 0")
    return ExitStatus(ExitCode.OK)


def append_summary(path: str, text: str) -> None:
    """Append ``text`` to ``$GITHUB_STEP_SUMMARY`` (the CLI passes the path)."""
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as err:
        raise UsageError(f"GITHUB_STEP_SUMMARY {path}: cannot append ({err.strerror})") from None


def run_diff(opts: DiffOptions, console: Console) -> int:
    """Read OLD and NEW, compare, tell ``console``; return the exit code.

    Raises:
        LogReadError: an option that cannot be used, or an input that cannot
            be read (exit 2, the message names OLD or NEW).
    """
    check_common(opts, "diff")
    fmt = output_format(opts, "diff")
    if opts.old == "-" and opts.new == "-":
        raise UsageError("OLD and NEW cannot both be standard input ('-')")
    if opts.max_drop is not None and not 0 <= opts.max_drop <= 100:
        raise UsageError(f"--max-drop {opts.max_drop:g}: a percentage from 0 to 100")
    if opts.config is not None:
        load_config(opts.config)
    options = report_options(opts, one_workload(opts))
    old, old_status, old_session = read_side("OLD", opts.old, options, console)
    new, new_status, new_session = read_side("NEW", opts.new, options, console)
    diff = diff_reports(old, new)
    gate = gate_status(diff, opts.max_drop)
    status = worst([old_status, new_status, gate])
    if fmt == "json":
        console.out(
            dumps(
                diff_json(
                    diff,
                    statuses=(old_status, new_status),
                    max_drop=opts.max_drop,
                    gate=gate,
                    warnings=(
                        [str(w) for w in old_session.warnings],
                        [str(w) for w in new_session.warnings],
                    ),
                )
            )
        )
    elif fmt == "github":
        for line in diff_github(diff, statuses=(old_status, new_status), gate=gate):
            console.out(line)
        if opts.summary_path:
            append_summary(opts.summary_path, diff_summary(diff))
    elif fmt in ("markdown", "csv"):
        console.out(diff_table(diff, fmt))
    else:
        console.out(diff_text(diff))
    if status.message:
        console.err(status.message)
    return status.code
