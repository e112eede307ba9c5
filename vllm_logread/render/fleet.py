"""The fleet table (``read --prometheus``): text, markdown, csv, json, github.

One row per server (the ``--by`` labels, then its model, status, pool, users
at the workload and the window's load), then one total row per model over
the servers that answer. The formats are those of many logs (tables.py's
``format_rows``; ci.py's annotations). Nothing here prints.
"""

from __future__ import annotations

import json

from ..session.fleet import Fleet, FleetRow, ModelTotal
from .ci import annotation
from .tables import _cell, format_rows
from .text import model_label
from .words import word

#: One row of the table, column -> value (str, int, float or None: what json and csv write).
FleetCells = dict[str, object]

# After the --by labels (model_name is the model column).
FLEET_COLUMNS = (
    "model",
    "status",
    "num_blocks",
    "block_size",
    "pool_tokens",
    "users",
    "users_mid_answer",
    "peak_running",
    "peak_waiting",
    "peak_kv_usage_pct",
    "preemptions",
    "num_requests",
    "mean_prompt_tokens",
    "mean_output_tokens",
    "note",
)


def label_columns(fleet: Fleet) -> tuple[str, ...]:
    return tuple(name for name in fleet.read.by if name != "model_name")


def columns(fleet: Fleet) -> tuple[str, ...]:
    return (*label_columns(fleet), *FLEET_COLUMNS)


def _note(row: FleetRow) -> str:
    s = row.server
    parts = [s.status_note] if s.status_note else []
    parts += [word(n) for n in s.notes]
    if not row.reports:
        parts.append("no KV pool in its samples: users unknown")
    return "; ".join(parts)


def server_row(fleet: Fleet, row: FleetRow) -> FleetCells:
    s = row.server
    return {
        **{name: s.label(name) for name in label_columns(fleet)},
        "model": row.model,
        "status": s.status,
        "num_blocks": row.same("num_blocks"),
        "block_size": row.same("block_size"),
        "pool_tokens": row.same("pool_tokens"),
        "users": row.users,
        "users_mid_answer": row.users_mid_answer,
        "peak_running": s.peak_running,
        "peak_waiting": s.peak_waiting,
        "peak_kv_usage_pct": None if s.peak_kv_usage_pct is None else round(s.peak_kv_usage_pct, 2),
        "preemptions": s.preemptions,
        "num_requests": s.num_requests,
        "mean_prompt_tokens": _round(s.mean_prompt_tokens),
        "mean_output_tokens": _round(s.mean_output_tokens),
        "note": _note(row),
    }


def total_row(fleet: Fleet, t: ModelTotal) -> FleetCells:
    labels = label_columns(fleet)
    return {
        **dict.fromkeys(columns(fleet)),
        **({labels[0]: "total"} if labels else {}),
        "model": t.model,
        "status": f"{t.num_answering} of {t.num_servers} up",
        "users": t.users,
        "users_mid_answer": t.users_mid_answer,
        "preemptions": t.preemptions,
        "num_requests": t.num_requests,
        "mean_prompt_tokens": _round(t.mean_prompt_tokens),
        "mean_output_tokens": _round(t.mean_output_tokens),
        "note": "" if t.num_answering == t.num_servers else "down or stale servers not counted",
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def rows(fleet: Fleet) -> list[FleetCells]:
    """The servers in Prometheus' label order, then the totals."""
    return [server_row(fleet, r) for r in fleet.rows] + [total_row(fleet, t) for t in fleet.totals]


def _title(fleet: Fleet) -> str:
    w = fleet.options.workload
    n, up = len(fleet.rows), len(fleet.answering)
    return (
        f"{n} vLLM server{'s' if n != 1 else ''} ({up} up) at {fleet.read.url} over the last "
        f"{fleet.read.since}; users at {w.prompt_tokens:,}+{w.output_tokens:,} tokens"
    )


def fleet_text(fleet: Fleet, fmt: str, *, gate: str | None = None) -> str:
    """The whole output of ``--prometheus`` in ``fmt``."""
    cols = columns(fleet)
    table = rows(fleet)
    if fmt == "json":
        w = fleet.options.workload
        from .json import SCHEMA_VERSION

        return json.dumps(
            {
                "schema_version": SCHEMA_VERSION,
                "command": "read --prometheus",
                "prometheus": fleet.read.url,
                "since": fleet.read.since,
                "window_s": fleet.read.window_s,
                "by": list(fleet.read.by),
                "workload": {"prompt_tokens": w.prompt_tokens, "output_tokens": w.output_tokens},
                "servers": table[: len(fleet.rows)],
                "totals": table[len(fleet.rows) :],
                "min_users_failed": gate,
            },
            indent=2,
            ensure_ascii=False,
            allow_nan=False,
        )
    if fmt == "csv":
        return format_rows(table, cols, "csv")
    # For a person, a local snapshot path is its repo id (csv and json keep vLLM's name).
    table = [{**row, "model": model_label(_model_of(row), "")} for row in table]
    if fmt in ("markdown", "github-summary"):
        return f"## vllm-logread: the fleet\n\n{_title(fleet)}\n\n" + format_rows(
            table, _shown(table, cols), "markdown"
        )
    if fmt == "github":
        return "\n".join(fleet_annotations(fleet, gate=gate))
    return f"== vllm-logread fleet: {_title(fleet)}\n" + _aligned(table, _shown(table, cols))


def _model_of(row: FleetCells) -> str | None:
    """The row's model column as the name it is (a str, or None when not named)."""
    model = row.get("model")
    return model if isinstance(model, str) else None


def _shown(table: list[FleetCells], cols: tuple[str, ...]) -> tuple[str, ...]:
    """The columns with a value somewhere (text and markdown; csv and json keep all)."""
    return tuple(c for c in cols if any(row.get(c) not in (None, "") for row in table))


def _aligned(table: list[FleetCells], cols: tuple[str, ...]) -> str:
    """Columns padded to their widest cell, numbers to the right."""
    cells = [[_cell(row.get(c)) for c in cols] for row in table]
    numeric = [
        all(isinstance(row.get(c), int | float) or row.get(c) is None for row in table)
        for c in cols
    ]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(cols)]

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]) for i, v in enumerate(values)
        ).rstrip()

    return "\n".join([line(list(cols)), *(line(r) for r in cells)])


def fleet_annotations(fleet: Fleet, *, gate: str | None = None) -> list[str]:
    """A warning per server down or stale, a notice per model's total, the
    gate as an error (no file: Prometheus is not one)."""
    out: list[str] = []
    for r in fleet.rows:
        if r.server.status != "up":
            out.append(
                annotation(
                    "warning",
                    f"{r.server.name}: {r.server.status} ({r.server.status_note})",
                    title="vllm-logread fleet",
                )
            )
        for text in r.warnings:
            out.append(annotation("warning", text, title="vllm-logread fleet"))
    w = fleet.options.workload
    for t in fleet.totals:
        users = "unknown" if t.users is None else f"{t.users:,}"
        out.append(
            annotation(
                "notice",
                f"{users} users fit at {w.prompt_tokens:,}+{w.output_tokens:,} tokens over "
                f"{t.num_answering} of {t.num_servers} servers",
                title=f"vllm-logread fleet: {t.model or 'model not named'}",
            )
        )
    if gate:
        out.append(annotation("error", gate, title="vllm-logread --min-users"))
    return out


__all__ = ["FLEET_COLUMNS", "fleet_text", "rows"]
