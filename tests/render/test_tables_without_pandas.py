"""The tables and CSV files written without pandas are pandas' own, byte for byte.

pandas (and numpy under it: 157 of the 169 MB a plain install took) wrote the
CSV outputs and the aligned text table; it is now the ``[table]`` extra and the
standard library writes them (render/tables.py). Here every table the CLI
writes for the shipped samples, and every sample's ``--stats-csv`` file, is
written again by pandas as the tool wrote it before (the reference below,
pandas' calls as they were) and compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.render import tables
from vllm_logread.render.tables import STATS_COLUMNS, StatsCsv, _cell, _yes_no

pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_logs").glob("*.log"))
SEED = str(ROOT / "sample_logs" / "seed_qwen3-8b_l4.log")


def pandas_rows(rows: Sequence[Mapping[str, object]], columns: tuple[str, ...], fmt: str) -> str:
    """format_rows' csv and text as pandas wrote them (the code it replaced)."""
    if fmt == "csv":
        rows = [{k: _yes_no(v) for k, v in row.items()} for row in rows]
    frame = pd.DataFrame(rows, columns=list(columns))
    if fmt == "csv":
        text: str = frame.convert_dtypes().to_csv(index=False, lineterminator="\n")
        return text.rstrip("\n")
    # One difference, on purpose: a column with an unknown figure (None) became
    # floats in pandas' frame, and the text table printed "nan" beside "62.00"
    # users; the table now says "" and "62", as its CSV and Markdown do. So the
    # reference frame keeps each cell as it is (dtype object).
    frame = pd.DataFrame(rows, columns=list(columns), dtype=object)
    return str(frame.apply(lambda col: col.map(_cell)).to_string(index=False))


def pandas_stats(rows: list[tuple[Any, ...]], path: Path) -> str:
    """The stats CSV as pandas wrote it: a frame of the rows, one batch."""
    frame = pd.DataFrame(rows, columns=list(STATS_COLUMNS))
    frame.to_csv(path, index=False)
    return path.read_text(encoding="utf-8")


def _tables_of(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every (rows, columns, fmt, text) format_rows gave while the CLI ran ``argv``."""
    calls: list[tuple[Any, ...]] = []
    real = tables.format_rows

    def spy(rows: Sequence[Mapping[str, object]], columns: tuple[str, ...], fmt: str) -> str:
        text = real(rows, columns, fmt)
        calls.append((list(rows), columns, fmt, text))
        return text

    monkeypatch.setattr(tables, "format_rows", spy)
    # Where a module imported the name itself (the others import it when they write).
    for module in ("vllm_logread.render.ci", "vllm_logread.render.fleet"):
        monkeypatch.setattr(f"{module}.format_rows", spy)
    CliRunner().invoke(main, argv)
    return calls


COMMANDS = [
    [*map(str, SAMPLES), "--format", "csv"],
    [*map(str, SAMPLES), "--prompt", "256,512", "--output", "128:256:128"],
    [*map(str, SAMPLES), "--prompt", "256,512", "--format", "csv"],
    ["kv", "--list-models", "--format", "csv"],
    ["kv", "--list-gpus", "--format", "csv"],
    ["diff", SEED, str(ROOT / "sample_logs" / "era_0_32_0.log"), "--format", "csv"],
    [
        "diff",
        SEED,
        str(ROOT / "sample_logs" / "real_vllm_0.32_qwen3-8b_fp8.log"),
        "--format",
        "csv",
    ],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a[-4:]) for a in COMMANDS])
def test_every_table_is_pandas_own(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [c for c in _tables_of(argv, monkeypatch) if c[2] in ("csv", "text")]
    assert calls, "no table written"
    for rows, columns, fmt, text in calls:
        assert text == pandas_rows(rows, columns, fmt)


@pytest.mark.parametrize("log", SAMPLES, ids=[p.name for p in SAMPLES])
def test_the_stats_csv_is_pandas_own(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows: list[tuple[Any, ...]] = []
    real_add = StatsCsv.add

    def spy(self: StatsCsv, *row: Any) -> None:
        rows.append(row)
        real_add(self, *row)

    monkeypatch.setattr(StatsCsv, "add", spy)
    out = tmp_path / "stats.csv"
    CliRunner().invoke(main, [str(log), "--no-echo", "--stats-csv", str(out)])
    assert out.read_text(encoding="utf-8") == pandas_stats(rows, tmp_path / "pandas.csv")


def test_the_installed_tool_needs_no_pandas() -> None:
    """pandas is the [table] extra (read_stats_csv), not a dependency."""
    from importlib.metadata import requires

    needs = requires("vllm-logread") or []
    plain = [r for r in needs if "extra ==" not in r]
    assert not [r for r in plain if r.startswith(("pandas", "numpy"))], plain
    assert [r for r in needs if r.startswith("pandas") and 'extra == "table"' in r], needs
