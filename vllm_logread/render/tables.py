"""Tables through pandas: the only module that imports it, inside functions.

For now the stats time series (``--stats-csv FILE``): one row per stats line
with the time vLLM printed (``MM-DD HH:MM:SS``, no year), the engine label
(``000``, ``2 engines``, empty for none), requests running and waiting, KV
cache usage, the two throughputs, the preemptions the line counts and the
input line number. Rows are written in batches as they come, so a day of
serving log costs a few megabytes of memory at most.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

from ..errors import UsageError
from ..report.sweep import SweepRow

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


PANDAS_HINT = "pip install pandas"  # a plain dependency: missing only from a broken install


def _pandas() -> Any:
    """pandas, imported at its first use (never at start-up).

    Raises:
        UsageError: it is not installed (``pip install --no-deps``): exit 2
            with the command that fixes it, never a traceback.
    """
    try:
        import pandas as pd
    except ImportError:
        raise UsageError(f"tables and CSV need pandas: {PANDAS_HINT}") from None
    return pd


class StatsCsv:
    """The stats time series as CSV, appended in batches of ``batch_rows``.

    The file is created (emptied) at once, so a bad path fails before any
    reading; pandas is imported at the first batch.
    """

    def __init__(self, path: str, *, batch_rows: int = 10_000) -> None:
        if importlib.util.find_spec("pandas") is None:
            raise UsageError(f"--stats-csv needs pandas: {PANDAS_HINT}")
        try:
            with open(path, "w", encoding="utf-8"):
                pass
        except OSError as err:
            raise UsageError(f"--stats-csv {path}: cannot write it ({err.strerror})") from None
        self.path = path
        self.batch_rows = batch_rows
        self.num_rows = 0
        self._rows: list[tuple[Any, ...]] = []
        self._has_header = False

    def add(self, *row: Any) -> None:
        """One stats line, values in STATS_COLUMNS order."""
        self._rows.append(row)
        if len(self._rows) >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        if not self._rows and self._has_header:
            return
        pd = _pandas()

        frame = pd.DataFrame(self._rows, columns=list(STATS_COLUMNS))
        frame.to_csv(self.path, mode="a", header=not self._has_header, index=False)
        self.num_rows += len(self._rows)
        self._has_header = True
        self._rows = []

    def close(self) -> None:
        """Write what is left (and the header, for a log without stats lines)."""
        self.flush()


def read_stats_csv(path: str) -> Any:
    """The CSV back as a DataFrame (tests, notebooks)."""
    pd = _pandas()

    return pd.read_csv(path, dtype={"time": str, "engine": str})


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


def parse_int_list(text: str, *, minimum: int = 0, maximum: int = 10_000_000) -> tuple[int, ...]:
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


def sweep_rows(rows: Sequence[SweepRow]) -> list[dict[str, Any]]:
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


def _checks_cell(report: Any) -> str:
    if not report.checks:
        return "none"
    bad = [c.name for c in report.checks if c.status == "fail"]
    if bad:
        return "FAIL: " + " ".join(bad)
    unknown = [c.name for c in report.checks if c.status == "unknown"]
    return "pass" + (f" (unknown: {' '.join(unknown)})" if unknown else "")


def server_rows(reports: list[Any]) -> list[dict[str, Any]]:
    """One row per server (report), most users first, then a total row when
    there are several: the deployment if they are replicas behind one load
    balancer. A data-parallel log's row already sums its engines."""
    rows: list[dict[str, Any]] = []
    for r in reports:
        total = r.boot.first("total_gpu_gib")
        dtype = r.boot.value("dtype")
        tp = r.tensor_parallel_size
        pp_v = r.boot.value("pipeline_parallel_size")
        pp = int(pp_v) if isinstance(pp_v, int) and pp_v > 0 else 1
        dp = max(len(r.engines), 1)
        rows.append(
            {
                "source": r.source,
                "model": r.model,
                "gpu_gib": None if total is None else float(total.value),
                "tp": tp,
                "dp": dp,
                "num_gpus": tp * pp * dp,
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
        )
    rows.sort(key=lambda row: (row["users"] is None, -(row["users"] or 0), row["source"]))
    if len(rows) > 1:
        known = [row for row in rows if row["users"] is not None]
        rows.append(
            {
                **dict.fromkeys(SERVER_COLUMNS),
                "source": "total",
                "model": f"{len(rows)} servers",
                "num_gpus": sum(row["num_gpus"] for row in rows),
                "users": sum(row["users"] for row in known) if len(known) == len(rows) else None,
                "users_mid_answer": sum(row["users_mid_answer"] for row in known)
                if len(known) == len(rows)
                else None,
                "checks": "FAIL" if any(str(r["checks"]).startswith("FAIL") for r in rows) else "",
            }
        )
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def format_rows(rows: list[dict[str, Any]], columns: tuple[str, ...], fmt: str) -> str:
    """Rows as ``text`` (aligned), ``markdown``, ``csv`` or ``json``; pandas
    builds the frame (csv, text)."""
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
    pd = _pandas()

    frame = pd.DataFrame(rows, columns=list(columns))
    if fmt == "csv":
        # Integers stay integers when a column has gaps (the total row).
        text: str = frame.convert_dtypes().to_csv(index=False, lineterminator="\n")
        return text.rstrip("\n")
    shown = frame.apply(lambda col: col.map(_cell))
    return str(shown.to_string(index=False))


def _is_numeric(rows: list[dict[str, Any]], column: str) -> bool:
    vals = [row.get(column) for row in rows if row.get(column) is not None]
    return bool(vals) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals)
