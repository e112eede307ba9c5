"""A workload file: the prompt and output tokens of each request, as CSV or JSONL.

Real traffic is a mix, not one prompt + output pair. A benchmark's results or
a trace gives, per request, how many prompt tokens it sent and how many
tokens it got back; ``--workload FILE`` reads them so the users arithmetic
(and the scheduler simulation) can charge each request its own blocks.

The columns (CSV header, or the keys of each JSONL object), by the first
name present, case-insensitive:

* prompt tokens: ``prompt_tokens``, ``input_tokens``, ``prompt_len``,
  ``input_len``, ``num_prompt_tokens``
  (vLLM's benchmark ``input_lens``/``output_lens`` lists are per-run, not
  per-request: turn them into rows first);
* output tokens: ``output_tokens``, ``completion_tokens``,
  ``generation_tokens``, ``output_len``, ``max_tokens``, ``num_output_tokens``
  (``max_tokens`` is an upper bound of what a request got back: with
  ``ignore_eos`` it is exact);
* ``count`` (optional): how many requests of that row (default 1).

Token counts are whole numbers >= 0 for prompts and >= 1 for outputs; a row
that is not is an error naming its line, and the file's other rows are not
guessed around: a workload that is half read would give a wrong number.
Blank lines and, in CSV, lines starting with ``#`` are skipped.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

PROMPT_COLUMNS = ("prompt_tokens", "input_tokens", "prompt_len", "input_len", "num_prompt_tokens")
OUTPUT_COLUMNS = (
    "output_tokens",
    "completion_tokens",
    "generation_tokens",
    "output_len",
    "max_tokens",
    "num_output_tokens",
)
COUNT_COLUMN = "count"

# A workload file is a list of requests; one row per request of a day's trace
# is millions of rows. Past this many requests in all the file is refused
# rather than read into memory.
MAX_WORKLOAD_REQUESTS = 10_000_000

#: No model's context comes near 2**40 (1,099,511,627,776) tokens; a cell past
#: it is a malformed file, and its block sums would overflow a float's mean.
MAX_REQUEST_TOKENS = 1 << 40


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestTokens:
    """One kind of request: its prompt and output tokens, how many of it, and its line."""

    prompt_tokens: int
    output_tokens: int
    count: int = 1
    line: int = 0

    @property
    def tokens(self) -> int:
        """Context held at the end of the answer."""
        return self.prompt_tokens + self.output_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadMix:
    """The requests of a workload file, in the file's order.

    Attributes:
        requests: one entry per row (``count`` requests of that size).
        source: the file it came from.
        columns: the two column names read (prompt, output).
    """

    requests: tuple[RequestTokens, ...]
    source: str
    columns: tuple[str, str]

    @property
    def num_requests(self) -> int:
        """Requests in all (rows times their counts).

        >>> WorkloadMix(requests=(RequestTokens(prompt_tokens=5, output_tokens=1, count=3),),
        ...             source="-", columns=("p", "o")).num_requests
        3
        """
        return sum(r.count for r in self.requests)

    def expanded(self) -> Iterable[RequestTokens]:
        """Every request one by one (a row of count 3 three times), in order."""
        for r in self.requests:
            for _ in range(r.count):
                yield r

    @property
    def is_uniform(self) -> bool:
        """Whether every request has the same prompt and output."""
        return len({(r.prompt_tokens, r.output_tokens) for r in self.requests}) <= 1


def _pick(names: Iterable[str], wanted: tuple[str, ...]) -> str | None:
    """The first of ``wanted`` among ``names`` (case-insensitive), as spelled in the file."""
    by_lower = {n.strip().lower(): n for n in names}
    for w in wanted:
        if w in by_lower:
            return by_lower[w]
    return None


def _whole(value: object, *, what: str, where: str, minimum: int) -> int:
    """A token count from a cell: a whole number >= minimum ("512", 512, 512.0)."""
    if isinstance(value, bool):
        raise InputError(f"{where}: {what} must be a whole number, got {value!r}")
    if isinstance(value, str):
        text = value.strip().replace(",", "").replace("_", "")
        if text.lstrip("+-").isdigit() and text.isascii():
            # Digits are read as an int: exact at any length (a float keeps 53 bits).
            value = int(text)
        else:
            try:
                value = float(text) if text else float("nan")
            except ValueError:
                raise InputError(f"{where}: {what} must be a whole number, got {value!r}") from None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < minimum:
            raise InputError(f"{where}: {what} must be a whole number >= {minimum}, got {value!r}")
        if value > MAX_REQUEST_TOKENS:
            shown = f"{value:,}" if value < 10**30 else f"a {len(str(value))}-digit number"
            raise InputError(
                f"{where}: {what} is {shown}: more than {MAX_REQUEST_TOKENS:,}, which no"
                " model holds (a malformed file?)"
            )
        return value
    if not isinstance(value, float):
        raise InputError(f"{where}: {what} must be a whole number, got {value!r}")
    # A float is a count only where it is exact: 1e3 and 512.0 are, 1e30 is not
    # (it is 1,000,000,019,884,624,838,656).
    if not value.is_integer() or value < minimum or abs(value) > 2**53:
        raise InputError(
            f"{where}: {what} must be a whole number >= {minimum} (exact), got {value!r}"
        )
    return _whole(int(value), what=what, where=where, minimum=minimum)


def _row(
    record: Mapping[str, object], columns: tuple[str, str, str | None], where: str, line: int
) -> RequestTokens:
    prompt_col, output_col, count_col = columns
    if record.get(prompt_col) is None or record.get(output_col) is None:
        raise InputError(f"{where}: needs both {prompt_col!r} and {output_col!r}")
    count = 1
    if count_col is not None and record.get(count_col) not in (None, ""):
        count = _whole(record[count_col], what=count_col, where=where, minimum=1)
    return RequestTokens(
        prompt_tokens=_whole(record[prompt_col], what=prompt_col, where=where, minimum=1),
        output_tokens=_whole(record[output_col], what=output_col, where=where, minimum=1),
        count=count,
        line=line,
    )


def _columns(names: Iterable[str], source: str) -> tuple[str, str, str | None]:
    names = list(names)
    prompt_col = _pick(names, PROMPT_COLUMNS)
    output_col = _pick(names, OUTPUT_COLUMNS)
    if prompt_col is None or output_col is None:
        raise InputError(
            f"{source}: a workload needs a prompt column ({', '.join(PROMPT_COLUMNS)}) and an"
            f" output column ({', '.join(OUTPUT_COLUMNS)}); found {', '.join(names) or 'none'}"
        )
    return prompt_col, output_col, _pick(names, (COUNT_COLUMN,))


def _read_jsonl(text: str, source: str) -> tuple[list[RequestTokens], tuple[str, str] | None]:
    out: list[RequestTokens] = []
    columns: tuple[str, str, str | None] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{source} line {number}"
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as err:
            raise InputError(f"{where}: not a JSON object: {err.msg}") from None
        except ValueError as err:  # an integer past Python's 4,300-digit limit
            raise InputError(f"{where}: not a JSON object: {err}") from None
        if not isinstance(record, dict):
            raise InputError(f"{where}: not a JSON object")
        if columns is None:
            columns = _columns(record.keys(), where)
        out.append(_row(record, columns, where, number))
    return out, None if columns is None else columns[:2]


def _read_csv(text: str, source: str) -> tuple[list[RequestTokens], tuple[str, str] | None]:
    lines = [
        (number, raw)
        for number, raw in enumerate(text.splitlines(), 1)
        if raw.strip() and not raw.lstrip().startswith("#")
    ]
    if not lines:
        return [], None
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(lines[0][1], ",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = csv.reader(io.StringIO("\n".join(raw for _, raw in lines)), dialect)
    try:
        header = next(rows)
        columns = _columns(header, f"{source} line {lines[0][0]}")
        out: list[RequestTokens] = []
        for (number, _), cells in zip(lines[1:], rows, strict=False):
            where = f"{source} line {number}"
            if len(cells) != len(header):
                raise InputError(f"{where}: {len(cells)} cells, the header has {len(header)}")
            out.append(_row(dict(zip(header, cells, strict=True)), columns, where, number))
    except csv.Error as err:
        raise InputError(f"{source}: not a readable CSV: {err}") from None
    return out, columns[:2]


def parse_workload(text: str, *, source: str = "-") -> WorkloadMix:
    """A workload from its text: JSONL when the first non-blank character is ``{``, else CSV.

    >>> mix = parse_workload("prompt_tokens,output_tokens\\n512,128\\n1024,64\\n")
    >>> [(r.prompt_tokens, r.output_tokens, r.line) for r in mix.requests]
    [(512, 128, 2), (1024, 64, 3)]
    >>> parse_workload('{"input_len": 100, "output_len": 20, "count": 4}').num_requests
    4

    Raises:
        InputError: no prompt/output columns, a bad cell, or no requests at all.
    """
    is_jsonl = text.lstrip().startswith("{")
    requests, columns = _read_jsonl(text, source) if is_jsonl else _read_csv(text, source)
    if not requests or columns is None:
        raise InputError(f"{source}: the workload has no requests")
    total = sum(r.count for r in requests)
    if total > MAX_WORKLOAD_REQUESTS:
        raise InputError(
            f"{source}: {total:,} requests; more than {MAX_WORKLOAD_REQUESTS:,} is not a workload"
            " this tool reads (give a sample of it, or use count)"
        )
    return WorkloadMix(
        requests=tuple(requests), source=source, columns=(columns[0].strip(), columns[1].strip())
    )


def read_workload(path: str | Path) -> WorkloadMix:
    """A workload file (CSV or JSONL, see the module's docstring) -> its requests.

    Raises:
        InputError: unreadable, or not a workload (the message names the line).
    """
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise InputError(f"{source}: cannot read the workload: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{source}: the workload is not UTF-8 text") from None
    return parse_workload(text, source=source)
