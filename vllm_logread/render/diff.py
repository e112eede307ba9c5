"""A Diff (report/diff.py) as text for a person (at most 100 columns) and as
the ``diff --json`` object (schema: vllm_logread/data/report.schema.json,
definition ``diff``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..jsontypes import JSONObject
from ..report.diff import Diff, Figure, Row
from ..session.events import ExitStatus
from .json import SCHEMA_VERSION, report_json
from .text import WIDTH, wrap_line

_LABEL_W = 16
_VALUE_W = 28


def _value_text(row: Row, fig: Figure) -> str:
    """One side's value as the table shows it; ``*`` marks an assumed one.

    >>> from vllm_logread.report.diff import Figure, Row
    >>> r = Row(name="pool_tokens", label="pool", unit="tokens", old=Figure(value=24096),
    ...         new=Figure(value=None))
    >>> _value_text(r, r.old), _value_text(r, r.new)
    ('24,096 tokens', '-')
    """
    v = fig.value
    if v is None:
        return fig.note if row.name == "users" and fig.note else "-"
    if fig.shown:
        text = fig.shown
    elif isinstance(v, bool) or isinstance(v, str):
        text = str(v)
    elif isinstance(v, int):
        text = f"{v:,}"
    elif fig.note and row.unit == "GiB":
        text = f"{v:.2f}"  # worked out (total x utilization), not printed as such
    else:
        text = f"{v:g}"
    if row.unit:
        text += " engine" if row.unit == "engines" and v == 1 else f" {row.unit}"
    if fig.note.startswith(("assumed", "note")):
        text += "*"
    return text


def _change_text(row: Row) -> str:
    """``same``, ``changed``, ``+24,096 (+100%)``, ``-1.87 (-56%)`` or ``?``.

    >>> from vllm_logread.report.diff import Figure, Row
    >>> r = Row(name="available_kv_gib", label="KV memory", unit="GiB",
    ...         old=Figure(value=3.31, half_ulp=0.005), new=Figure(value=1.44, half_ulp=0.005))
    >>> _change_text(r)
    '-1.87 (-56%)'
    """
    changed = row.is_changed
    if changed is None:
        return "?"
    if not changed:
        return "same"
    d = row.change
    if d is None:
        return "changed"
    pct = row.change_pct
    text = f"{d:+,}" if isinstance(d, int) else f"{d:+.2f}"
    if pct is not None:
        text += f" ({pct:+.0f}%)" if abs(pct) >= 10 else f" ({pct:+.1f}%)"
    return text


def _note(note: str) -> str:
    return note.removeprefix("assumed: ").removeprefix("note: ")


def _cut(text: str, width: int, *, keep_tail: bool = False) -> str:
    """At most ``width`` columns; a model name keeps its tail.

    >>> _cut("meta-llama/Llama-3.1-8B-Instruct", 20, keep_tail=True)
    '~ama-3.1-8B-Instruct'
    """
    if len(text) <= width:
        return text
    return "~" + text[-(width - 1) :] if keep_tail else text[: width - 1] + "~"


def _users_head(diff: Diff) -> str:
    """ "users 37 -> 75 (+38, +102.7%) at 512 prompt + 128 output tokens"."""
    users = diff.row("users")
    w = diff.new.workload
    workload = f"{w.prompt_tokens:,} prompt + {w.output_tokens:,} output tokens"
    head = f"users {_value_text(users, users.old)} -> {_value_text(users, users.new)}"
    if users.change is not None:
        head += f" ({_change_text(users).replace(' (', ', ').rstrip(')')})"
    return f"{head} at {workload}"


def diff_text(diff: Diff) -> str:
    """The comparison: the users, the sentence, OLD and NEW, then the table."""
    users = diff.row("users")
    head = f"== vllm-logread diff: {_users_head(diff)}"
    lines = [wrap_line(head, WIDTH), wrap_line(diff.explanation.sentence, WIDTH)]
    budget = _budget_line(diff)
    if budget:
        lines.append(wrap_line(budget, WIDTH))
    lines.append(f"  OLD: {diff.old.source}")
    lines.append(f"  NEW: {diff.new.source}")
    lines.append(f"  {'':<{_LABEL_W}} {'OLD':<{_VALUE_W}} {'NEW':<{_VALUE_W}} change".rstrip())
    neither: list[str] = []
    notes: list[str] = []
    for row in diff.rows:
        if not row.old.is_known and not row.new.is_known and row.name != "users":
            neither.append(row.label)
            continue
        tail = row.name == "model"
        a = _cut(_value_text(row, row.old), _VALUE_W, keep_tail=tail)
        b = _cut(_value_text(row, row.new), _VALUE_W, keep_tail=tail)
        change = _change_text(row) if row.name != "users" or users.change is not None else "?"
        line = f"  {row.label:<{_LABEL_W}} {a:<{_VALUE_W}} {b:<{_VALUE_W}} {change}"
        lines.append(_cut(line.rstrip(), WIDTH))
        said = [f.note for f in (row.old, row.new) if f.note.startswith(("assumed", "note"))]
        if len(said) == 2 and said[0] == said[1]:
            notes.append(f"  * {row.label}: {_note(said[0])}")
        else:
            for side, fig in (("OLD", row.old), ("NEW", row.new)):
                if fig.note.startswith(("assumed", "note")):
                    notes.append(f"  * {side} {row.label}: {_note(fig.note)}")
    if neither:
        lines.append(wrap_line("  not stated in either: " + ", ".join(neither), WIDTH))
    lines.extend(wrap_line(n, WIDTH) for n in notes)
    return "\n".join(lines)


def diff_github(diff: Diff, *, statuses: Sequence[ExitStatus], gate: ExitStatus) -> list[str]:
    """``diff --format github``: GitHub Actions annotations, as ``read``'s.

    An input that cannot give its pool, an error on its file (a boot that serves
    nobody: the cause on its line, and the fix, render/text.failure_summary); the
    ``--max-drop`` gate, when it fails, an error on NEW's pool line; the users'
    change and the sentence that explains it, a notice on NEW's pool line.
    """
    from ..report.model import Report
    from .ci import annotation
    from .text import failure_summary

    def pool_line(r: Report) -> int | None:
        return r.engines[0].line if r.engines else None

    out: list[str] = []
    for label, report, status in zip(("OLD", "NEW"), (diff.old, diff.new), statuses, strict=True):
        if report.failure is not None:
            out.append(
                annotation(
                    "error",
                    f"{label}: {failure_summary(report)}",
                    file=report.source,
                    line=report.failure.line,
                    title=f"vllm-logread diff: {label} serves nobody",
                )
            )
        elif status.code:
            out.append(
                annotation(
                    "error", status.message, file=report.source, title=f"vllm-logread diff: {label}"
                )
            )
    line = pool_line(diff.new)
    if gate.code:
        out.append(
            annotation(
                "error",
                gate.message,
                file=diff.new.source,
                line=line,
                title="vllm-logread --max-drop",
            )
        )
    out.append(
        annotation(
            "notice",
            f"{_users_head(diff)}: {diff.explanation.sentence}",
            file=diff.new.source,
            line=line,
            title="vllm-logread diff",
        )
    )
    return out


def diff_summary(diff: Diff) -> str:
    """The Markdown for ``$GITHUB_STEP_SUMMARY``: the users, the sentence, the table."""
    return (
        f"## vllm-logread diff: {_users_head(diff)}\n\n{diff.explanation.sentence}\n\n"
        f"OLD: `{diff.old.source}`, NEW: `{diff.new.source}`\n\n{diff_table(diff, 'markdown')}\n"
    )


def diff_table(diff: Diff, fmt: str) -> str:
    """The side-by-side table, one row per figure (those neither log states
    left out, as in the text): ``markdown`` words each value as the text report
    does (``*``: assumed); ``csv`` gives the plain values, their unit and the
    change, for a program (no thousands separators, no units in a cell)."""
    from .tables import format_rows

    users = diff.row("users")
    shown = [
        row for row in diff.rows if row.old.is_known or row.new.is_known or row.name == "users"
    ]
    if fmt == "csv":
        rows = [
            {
                "figure": row.name,
                "unit": row.unit,
                "old": row.old.value,
                "new": row.new.value,
                "change": row.change,
                "change_pct": None if row.change_pct is None else round(row.change_pct, 2),
            }
            for row in shown
        ]
        return format_rows(rows, ("figure", "unit", "old", "new", "change", "change_pct"), fmt)
    rows = [
        {
            "figure": row.label,
            "old": _value_text(row, row.old),
            "new": _value_text(row, row.new),
            "change": _change_text(row) if row.name != "users" or users.change is not None else "?",
        }
        for row in shown
    ]
    return format_rows(rows, ("figure", "old", "new", "change"), fmt)


def _budget_line(diff: Diff) -> str:
    """Each stated budget line's effect on the KV memory, and what is not stated:
    ``  KV memory -1.87 GiB: CUDA graph memory -1.87, weights +0.00; not stated: ...``."""
    ex = diff.explanation
    if not ex.effects:
        return ""
    kv = diff.row("available_kv_gib")
    d = kv.change
    # round(-0.001, 2) is -0.0, which "or 0.0" makes +0.00.
    parts = [
        f"{e.label} {round(e.effect_gib, 2) or 0.0:+.2f}"
        for e in ex.effects
        if e.name != "kv_cache_memory_bytes"
    ]
    if not parts:
        return ""
    text = "  KV memory" + (f" {d:+.2f} GiB" if d is not None else "") + ": " + ", ".join(parts)
    if ex.unexplained_gib is not None and abs(ex.unexplained_gib) >= 0.005:
        text += f", unexplained {ex.unexplained_gib:+.2f}"
    if ex.unstated:
        text += "; not stated: " + ", ".join(ex.unstated)
    return text


def diff_json(
    diff: Diff,
    *,
    statuses: Sequence[ExitStatus],
    max_drop: float | None,
    gate: ExitStatus,
    warnings: Sequence[Sequence[str]] = ((), ()),
) -> JSONObject:
    """The ``diff --json`` object: both reports, the rows, the explanation, the gate."""
    sides = []
    for report, status, warns in zip((diff.old, diff.new), statuses, warnings, strict=True):
        obj = report_json(report, list(report.boot.facts), list(warns))
        obj["exit_code"] = int(status.code)
        obj["error"] = status.message or None
        sides.append(obj)
    users = diff.row("users")
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "diff",
        "old": sides[0],
        "new": sides[1],
        "rows": [_row_json(r) for r in diff.rows],
        "explanation": diff.explanation.to_json(),
        "users": {
            "old": users.old.value,
            "new": users.new.value,
            "change": users.change,
            "change_pct": users.change_pct,
        },
        "gate": {
            "max_drop_pct": max_drop,
            "passed": None if max_drop is None else gate.code == 0,
            "message": gate.message or None,
        },
    }


def _row_json(row: Row) -> JSONObject:
    def fig(f: Figure) -> float | int | str | None:
        return f.value

    return {
        "name": row.name,
        "unit": row.unit,
        "old": fig(row.old),
        "new": fig(row.new),
        "old_note": row.old.note or None,
        "new_note": row.new.note or None,
        "change": row.change,
        "change_pct": row.change_pct,
        "is_changed": row.is_changed,
    }
