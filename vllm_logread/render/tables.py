"""Tables: aligned text, Markdown, CSV and JSON, with the standard library.

The CSV is the csv module's and the text table a plain right-aligned layout;
both write what pandas wrote before it became an extra (``[table]``):
tests/render/test_tables_without_pandas.py holds them against pandas' own output on
every sample. pandas is imported only by :func:`read_stats_csv` (the stats CSV
back as a DataFrame, for a notebook), inside the function.

The stats time series (``--stats-csv FILE``): one row per stats line with the
time vLLM printed (``MM-DD HH:MM:SS``, no year), the engine label (``000``,
``2 engines``, empty for none), requests running and waiting, KV cache usage,
the two throughputs, the preemptions the line counts and the input line
number. Rows are written in batches as they come, so a day of serving log
costs a few megabytes of memory at most.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from ..errors import UsageError

if TYPE_CHECKING:
    from pandas import DataFrame
    from typing_extensions import Unpack

    from ..report.model import Report
    from ..report.sweep import SweepRow
    from .plot import StatsRow

#: One cell of a table: what the text, Markdown, CSV and JSON tables write.
Cell: TypeAlias = str | int | float | bool | None
#: One row of a table, column -> cell.
TableRow: TypeAlias = dict[str, Cell]

STATS_COLUMNS = (
    "time",
    "engine",
    "running",
    "waiting",
    "kv_usage_pct",
    "prompt_tps",
    "generation_tps",
    "preemptions",
    "line",
)


#: The extra that brings pandas, for :func:`read_stats_csv` alone.
PANDAS_HINT = "pip install 'vllm-logread[table]'"


def _csv_value(value: object) -> str | int | float:
    """A stats cell as the CSV writes it: None empty, numbers as Python prints
    them (a float keeps its ``.0``: 73.0), text as it is."""
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return str(value)


class StatsCsv:
    """The stats time series as CSV, appended in batches of ``batch_rows``.

    The file is created (emptied) at once, so a bad path fails before any
    reading. Each column keeps its type (StatsRow): counts as integers, rates
    and percentages as floats (``73.0``), an absent value empty. (pandas, which
    wrote this file before, turned a batch's count column with an absent value
    into floats, ``3.0``; no sample log has one.)
    """

    def __init__(self, path: str, *, batch_rows: int = 10_000) -> None:
        try:
            with open(path, "w", encoding="utf-8"):
                pass
        except OSError as err:
            raise UsageError(f"--stats-csv {path}: cannot write it ({err.strerror})") from None
        self.path = path
        self.batch_rows = batch_rows
        self.num_rows = 0
        self._rows: list[StatsRow] = []
        self._has_header = False

    def add(self, *row: Unpack[StatsRow]) -> None:
        """One stats line, values in STATS_COLUMNS order."""
        self._rows.append(row)
        if len(self._rows) >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        if not self._rows and self._has_header:
            return
        with open(self.path, "a", encoding="utf-8", newline="") as fh:
            out = csv.writer(fh, lineterminator="\n")
            if not self._has_header:
                out.writerow(STATS_COLUMNS)
            out.writerows([_csv_value(v) for v in row] for row in self._rows)
        self.num_rows += len(self._rows)
        self._has_header = True
        self._rows = []

    def close(self) -> None:
        """Write what is left (and the header, for a log without stats lines)."""
        self.flush()


def read_stats_csv(path: str) -> DataFrame:
    """The CSV back as a DataFrame (tests, notebooks); needs pandas (``[table]``).

    Raises:
        UsageError: pandas is not installed: exit 2 with the command that
            brings it, never a traceback.
    """
    try:
        import pandas as pd
    except ImportError:
        raise UsageError(f"reading the stats CSV as a table needs pandas: {PANDAS_HINT}") from None
    frame: DataFrame = pd.read_csv(path, dtype={"time": str, "engine": str})
    return frame


MAX_SWEEP_VALUES = 1000


SWEEP_COLUMNS = (
    "source",
    "prompt_tokens",
    "output_tokens",
    "tokens_per_user",
    "users",
    "users_mid_answer",
    "exact",
)


SERVER_COLUMNS = (
    "source",
    "model",
    "gpu_gib",
    "tp",
    "dp",
    "num_gpus",
    "kv_cache_dtype",
    "dtype",
    "pool_tokens",
    "num_blocks",
    "max_model_len",
    "vllm_max_concurrency",
    "users",
    "users_mid_answer",
    "checks",
)


def parse_int_list(text: str, *, minimum: int = 1, maximum: int = 10_000_000) -> tuple[int, ...]:
    """``"512"``, ``"256,512,2048"`` or a range ``"256:2048:256"`` (start:stop:step,
    stop included) -> the values, in order, without repeats.

    Raises:
        UsageError: not a number, out of range, or a range of more than
            MAX_SWEEP_VALUES values.

    >>> parse_int_list("512"), parse_int_list("256,512,2048"), parse_int_list("256:1024:256")
    ((512,), (256, 512, 2048), (256, 512, 768, 1024))
    """
    out: list[int] = []
    for part in text.split(","):
        part = part.strip().replace("_", "")
        try:
            if ":" in part:
                bits = [int(b) for b in part.split(":")]
                if len(bits) not in (2, 3) or (len(bits) == 3 and bits[2] <= 0):
                    raise ValueError
                start, stop = bits[0], bits[1]
                step = bits[2] if len(bits) == 3 else 1
                if stop < start:
                    raise UsageError(f"the range {_short(part)} runs backwards")
                if (stop - start) // step + 1 > MAX_SWEEP_VALUES:
                    raise UsageError(f"{_short(part)}: more than {MAX_SWEEP_VALUES} values")
                values = list(range(start, stop + 1, step))
            else:
                values = [int(part)]
        except ValueError as err:
            if isinstance(err, UsageError):
                raise
            raise UsageError(
                f"{_short(part)} is not a valid integer (nor a list 256,512 or a range "
                "256:2048:256)"
            ) from None
        for v in values:
            if not minimum <= v <= maximum:
                # click.IntRange's wording, as before lists were accepted.
                raise UsageError(f"{v} is not in the range {minimum}<=x<={maximum}")
            if v not in out:
                out.append(v)
    if len(out) > MAX_SWEEP_VALUES:
        raise UsageError(f"more than {MAX_SWEEP_VALUES} values")
    return tuple(out)


def _short(text: str, limit: int = 40) -> str:
    """A value quoted for a message, cut when long (a 10,000-digit argument)."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def sweep_rows(rows: Sequence[SweepRow]) -> list[TableRow]:
    """The report stage's sweep rows (report/sweep.py) as table rows, one per
    report x workload: each the figure a single ``--prompt P --output O`` run gives."""
    return [
        {
            "source": row.source,
            "prompt_tokens": row.workload.prompt_tokens,
            "output_tokens": row.workload.output_tokens,
            "tokens_per_user": row.workload.tokens_per_user,
            "users": row.users,
            "users_mid_answer": row.users_mid_answer,
            "exact": row.is_exact,
        }
        for row in rows
    ]


def _checks_cell(report: Report) -> str:
    if not report.checks:
        return "none"
    bad = [c.name for c in report.checks if c.status == "fail"]
    if bad:
        return "FAIL: " + " ".join(bad)
    unknown = [c.name for c in report.checks if c.status == "unknown"]
    return "pass" + (f" (unknown: {' '.join(unknown)})" if unknown else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelTotal:
    """The users of one model's servers together: the deployment if they are
    replicas behind one load balancer. Never across models: a Qwen3-8B
    server's users are not a Gemma 3 server's."""

    model: str | None
    sources: tuple[str, ...]
    num_gpus: int | None  # None: some server does not state its TP
    users: int | None  # None: some server's users are unknown
    users_mid_answer: int | None


def model_totals(reports: Sequence[Report]) -> list[ModelTotal]:
    """One total per model, in the order the models first appear. A server
    whose model is not named is its own total (two unnamed models may differ).

    >>> from types import SimpleNamespace as R
    >>> rs = [R(source="a", model="Q", users=37, users_mid_answer=41, num_gpus=1),
    ...       R(source="b", model="G", users=90, users_mid_answer=92, num_gpus=1),
    ...       R(source="c", model="Q", users=37, users_mid_answer=41, num_gpus=1)]
    >>> [(t.model, t.users, len(t.sources)) for t in model_totals(rs)]
    [('Q', 74, 2), ('G', 90, 1)]
    """
    groups: dict[str | tuple[str, str], list[Report]] = {}
    for r in reports:
        key = r.model if r.model else ("", r.source)
        groups.setdefault(key, []).append(r)
    totals = []
    for rs in groups.values():
        users = [r.users for r in rs if r.users is not None]
        mids = [r.users_mid_answer for r in rs if r.users_mid_answer is not None]
        gpus = [_num_gpus(r) for r in rs]
        totals.append(
            ModelTotal(
                model=rs[0].model or None,
                sources=tuple(r.source for r in rs),
                num_gpus=None if None in gpus else sum(g for g in gpus if g is not None),
                users=None if len(users) < len(rs) else sum(users),
                users_mid_answer=None if len(mids) < len(rs) else sum(mids),
            )
        )
    return totals


def _num_gpus(r: Report) -> int | None:
    num = getattr(r, "num_gpus", None)
    if isinstance(num, int):
        return num
    if not getattr(r, "is_tensor_parallel_stated", True):
        return None  # TP not stated: the GPUs are not known
    pp_v = r.boot.value("pipeline_parallel_size")
    pp = int(pp_v) if isinstance(pp_v, int) and pp_v > 0 else 1
    return int(r.tensor_parallel_size) * pp * max(len(r.engines), 1)


def server_rows(reports: Sequence[Report], *, sort: str | None = None) -> list[TableRow]:
    """One row per server (report), in input order (``sort="users"``: most
    users first), then a total row per model that has several servers (the
    deployment if they are replicas behind one load balancer; never a sum
    across models). A data-parallel log's row already sums its engines."""
    ordered = list(reports)
    if sort == "users":
        ordered.sort(key=lambda r: (r.users is None, -(r.users or 0)))
    rows = [_server_row(r) for r in ordered]
    if len(rows) > 1:
        for t in model_totals(reports):
            if len(t.sources) < 2:
                continue
            mine = [row for row in rows if row["source"] in t.sources]
            rows.append(
                {
                    **dict.fromkeys(SERVER_COLUMNS),
                    "source": "total",
                    "model": t.model,
                    "num_gpus": t.num_gpus,
                    "users": t.users,
                    "users_mid_answer": t.users_mid_answer,
                    "checks": "FAIL"
                    if any(str(row["checks"]).startswith("FAIL") for row in mine)
                    else "",
                }
            )
    return rows


def _server_row(r: Report) -> TableRow:
    total = r.boot.first("total_gpu_gib")
    dtype = r.boot.value("dtype")
    # Empty when the log does not state TP: the 1 the arithmetic assumes is no fact.
    tp = r.tensor_parallel_size if getattr(r, "is_tensor_parallel_stated", True) else None
    pp_v = r.boot.value("pipeline_parallel_size")
    pp = int(pp_v) if isinstance(pp_v, int) and pp_v > 0 else 1
    dp = max(len(r.engines), 1)
    return {
        "source": r.source,
        "model": r.model,
        "gpu_gib": None if total is None else float(total.value),
        "tp": tp,
        "dp": dp,
        "num_gpus": None if tp is None else tp * pp * dp,
        "kv_cache_dtype": r.kv_cache_dtype or "auto",
        "dtype": None if dtype is None else str(dtype).replace("torch.", ""),
        "pool_tokens": r.pool_tokens,
        "num_blocks": r.num_blocks,
        "max_model_len": r.max_model_len,
        "vllm_max_concurrency": r.vllm_max_concurrency,
        "users": r.users,
        "users_mid_answer": r.users_mid_answer,
        "checks": _checks_cell(r),
    }


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def format_rows(rows: Sequence[Mapping[str, object]], columns: tuple[str, ...], fmt: str) -> str:
    """Rows as ``text`` (aligned), ``markdown``, ``csv`` or ``json``."""
    import json

    if fmt == "json":
        return json.dumps(rows, indent=2, ensure_ascii=False, allow_nan=False)
    if fmt == "markdown":
        head = "| " + " | ".join(columns) + " |"
        rule = "|" + "|".join("---:" if _is_numeric(rows, c) else "---" for c in columns) + "|"
        body = [
            "| " + " | ".join(_cell(row.get(c)).replace("|", "\\|") for c in columns) + " |"
            for row in rows
        ]
        return "\n".join([head, rule, *body])
    if fmt == "csv":
        return _csv_text(rows, columns)
    return _text_table(rows, columns)


def _csv_text(rows: Sequence[Mapping[str, object]], columns: tuple[str, ...]) -> str:
    """The rows as CSV: a yes/no as the text says it (never True), an absent
    value empty, and each column's numbers one way (:func:`_column_cells`).

    >>> print(_csv_text([{"a": 1, "b": 2.5, "c": True}, {"a": None, "b": 1}], ("a", "b", "c")))
    a,b,c
    1,2.5,yes
    ,1.0,
    """
    cells = [_column_cells([_yes_no(row.get(c)) for row in rows]) for c in columns]
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(columns)
    out.writerows(zip(*cells, strict=True) if cells else [])
    return buf.getvalue().rstrip("\n")


def _column_cells(values: list[object]) -> list[str]:
    """One CSV column's cells: integers stay integers when the column has gaps
    (the total row); a column of numbers all whole is written as integers
    (80.0 as 80), one with a fraction as floats (1 as 1.0 beside 2.5); text, or
    numbers mixed with text, as Python prints each.

    >>> _column_cells([80.0, None, 40]), _column_cells([2.5, 1]), _column_cells(["x", 4])
    (['80', '', '40'], ['2.5', '1.0'], ['x', '4'])
    """
    nums = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if not nums or len(nums) != sum(v is not None for v in values):
        return ["" if v is None else str(v) for v in values]
    whole = all(float(v).is_integer() for v in nums)
    out: list[str] = []
    for v in values:
        if not isinstance(v, int | float):
            out.append("")
        elif whole:
            out.append(str(int(v)))
        else:
            out.append(repr(float(v)))
    return out


def _text_table(rows: Sequence[Mapping[str, object]], columns: tuple[str, ...]) -> str:
    """The rows as an aligned table: each column as wide as its widest cell or
    name, every cell right-aligned, one space between columns.

    >>> print(_text_table([{"model": "a", "users": 37}, {"model": "bbb", "users": 1234}],
    ...                   ("model", "users")))
    model users
        a    37
      bbb 1,234
    """
    table = [[str(c) for c in columns]] + [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    return "\n".join(
        " ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)) for r in table
    )


def listing_text(rows: Sequence[Mapping[str, object]]) -> str:
    """``kv --list-models`` / ``--list-gpus`` for a person: a model a line, or a
    card a line with its memory, its source wrapped beneath (100 columns).

    >>> print(listing_text([{"gpu": "L4", "total_gib": 22.05, "estimate": True,
    ...                      "source": "estimate: nvidia-smi"}]))
    L4            22.05 GiB  estimate: nvidia-smi
    """
    import textwrap

    out: list[str] = []
    for row in rows:
        if "gpu" not in row:
            out.append(str(row["model"]))
            continue
        head = f"{row['gpu']:<12} {row['total_gib']:>6.2f} GiB  "
        out += textwrap.wrap(
            str(row["source"]),
            width=100,
            initial_indent=head,
            subsequent_indent=" " * len(head),
        )
    return "\n".join(out)


def _yes_no(value: object) -> object:
    """A bool as the text table says it; anything else as it is.

    >>> _yes_no(True), _yes_no(False), _yes_no(1)
    ('yes', 'no', 1)
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


def _is_numeric(rows: Sequence[Mapping[str, object]], column: str) -> bool:
    vals = [row.get(column) for row in rows if row.get(column) is not None]
    return bool(vals) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals)
