"""--json and kv --json objects (``kv``'s shape is computed in report/kvshape.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final, Literal, cast

from ..errors import UsageError
from ..findings import Finding
from ..jsontypes import JSONObject, JSONValue
from ..read.facts import Fact
from ..report.kvshape import kv_decisions as kv_decisions  # re-exported: kv --json
from ..report.kvshape import kv_report as kv_report
from ..report.model import Report
from ..session.events import InputResult
from ..vllm.rules import NEWEST_CHECKED, version_past_checked
from .words import said, word


def json_text(
    results: Sequence[InputResult],
    *,
    sweep: Sequence[Mapping[str, JSONValue]] | None = None,
    unread: Sequence[tuple[str, int, str]] = (),
) -> str:
    """The ``--json`` text (also ``--format json``): one object whatever was asked.

    One boot given: its report object. Several (many inputs, ``--all-boots``):
    ``{"schema_version", "servers": [...], "total": {...}}``, each server with
    its own facts and errors, the total over the ones that stated a pool.
    A sweep adds ``"sweep": [rows]`` (users per workload) to either shape.
    Every boot carries the ``load`` its stats lines showed (null: none).
    ``unread``: (name, exit code, error) of inputs that could not be opened,
    listed in the total's ``not_counted``.
    """
    objs: list[tuple[InputResult, JSONObject]] = []
    for res in results:
        warns = [str(w) for w in res.warnings]
        for b in res.json_boots:
            obj = report_json(b.report, b.facts, warns)
            obj["load"] = None if b.load is None else b.load.to_json()
            if b.report.observed is not None:
                obj["observed_workload"] = b.report.observed.to_json()
            # The input's whole exit code (the gate's and --strict's included), and what
            # the gate judged (null: no --min-users).
            obj["exit_code"] = int(res.exit_code)
            obj["error"] = res.error or None
            obj["gate"] = None if res.gate is None else res.gate.to_json()
            if res.crosscheck:
                obj["metrics_crosscheck"] = [a.to_json() for a in res.crosscheck]
            objs.append((res, obj))
    out: JSONObject
    if len(objs) == 1 and not unread:
        out = objs[0][1]
    else:
        from .tables import model_totals

        good = [o for res, o in objs if res.is_good]
        known = [u for o in good if isinstance(u := o["users"], int)]
        mid = [u for o in good if isinstance(u := o["users_mid_answer"], int)]
        # Users add up within a model, never across models (issue 29).
        totals = model_totals(
            [r for res in results if res.is_good for r in res.reports if r.has_pool]
        )
        one_model = len(totals) <= 1
        out = {
            "schema_version": SCHEMA_VERSION,
            "servers": [o for _, o in objs],
            "total": {
                "num_servers": len(good),
                "users": sum(known) if one_model and good and len(known) == len(good) else None,
                "users_mid_answer": sum(mid)
                if one_model and good and len(mid) == len(good)
                else None,
                "models": [
                    {
                        "model": t.model,
                        "sources": list(t.sources),
                        "num_servers": len(t.sources),
                        "users": t.users,
                        "users_mid_answer": t.users_mid_answer,
                    }
                    for t in totals
                ],
                "not_counted": [
                    {"source": o["source"], "exit_code": o["exit_code"], "error": o["error"]}
                    for res, o in objs
                    if not res.is_good
                ]
                + [{"source": n, "exit_code": c, "error": e} for n, c, e in unread],
            },
        }
    if sweep is not None:
        out["sweep"] = [dict(row) for row in sweep]
    return dumps(out)


SCHEMA_VERSION = 1


def report_json(report: Report | None, facts: list[Fact], warnings: list[str]) -> JSONObject:
    """The ``--json`` object of one boot, REPORT_KEYS in their order (schema:
    vllm_logread/data/report.schema.json, generated from them: render/json_schema.py).
    Without a report (no KV pool reached) every "always" key is null or empty."""
    given: JSONObject = {
        "schema_version": SCHEMA_VERSION,
        "warnings": [*warnings, *(() if report is None else map(said, report.warnings))],
        "facts": [f.to_json() for f in facts],
    }
    out: JSONObject = {}
    for key in REPORT_KEYS:
        if key.name in given:
            out[key.name] = given[key.name]
        elif report is None:
            if key.when == "always":
                out[key.name] = [] if key.name in _TUPLES else None
        elif key.when != "caller":
            value = walk(key.value(report))
            if key.when != "known" or value not in (None, []):
                out[key.name] = value
    return out


@dataclass(frozen=True, slots=True)
class ReportKey:
    """One key of a report object: ``attr``, the Report field or property it reads
    (its type hint and ``doc`` metadata give the schema), or ``get``, how its value is
    worked out (its schema declared in render/json_schema.REPORT_PARTS); ``when`` it is
    written: always (null or empty without a report), report (whenever there is one),
    known (only when not null or empty), caller (json_text and diff_json write it)."""

    name: str
    attr: str | None = None
    get: Callable[[Report], object] | None = None
    when: Literal["always", "report", "known", "caller"] = "always"

    def value(self, report: Report) -> object:
        return self.get(report) if self.get else getattr(report, self.attr or self.name)


def walk(value: object) -> JSONValue:
    """A result value as JSON: a report/model.py dataclass field by field (its fields'
    JSON metadata), anything else with a ``to_json`` through it, tuples as lists."""
    if value is None or isinstance(value, str | int | float | dict):
        return cast(JSONValue, value)
    if isinstance(value, tuple | list):
        return [walk(v) for v in value]
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return cast(JSONValue, to_json())
    return {
        f.name: walk(getattr(value, f.name))
        for f in fields(cast(Any, value))
        if f.metadata.get("json") is True
    }


def _version_range(report: Report) -> JSONObject | None:
    """Only for a log that states no version: the releases it can come from."""
    v = report.vllm_versions
    if v is None:
        return None
    return {
        "lowest": v.lowest,
        "highest": v.highest,
        "num_releases": len(v.releases),
        "evidence": [{"line": line, "what": what} for line, what in v.evidence],
    }


def _past_checked(report: Report) -> JSONObject | None:
    """Only then (older reports keep their exact shape): the log's vLLM is newer than
    the newest release this tool was checked against."""
    if version_past_checked(report.vllm_version) is None:
        return None
    return {"vllm_version": report.vllm_version, "newest_checked": str(NEWEST_CHECKED)}


def tokens_held(report: Report) -> tuple[int, int]:
    """KV tokens one user holds at the end of its answer and mid-answer, as the
    text report says them ("yours hold 639 each") and the JSON's workload carries
    them (tokens_held_at_end, tokens_held_mid_answer): the capacity's figure (a
    mix's mean request; P + O where the last token is counted), else vLLM's
    P + O - 1 and P + O // 2 - 1 (512 + 128: 639 and 575). tokens_per_user stays
    the request's length P + O (640), the figure held against max_model_len."""
    w, c = report.workload, report.capacity
    if c is not None and c.tokens_held:
        return c.tokens_held, c.tokens_held_mid
    return w.tokens_held_at_end, w.tokens_mid_answer


def _workload_json(report: Report) -> JSONObject:
    """The workload the users are counted at; mix and shared_prefix only when they say
    something (docs/facts.md: extend, never rename)."""
    w, c = report.workload, report.capacity
    return {
        "prompt_tokens": w.prompt_tokens,
        "output_tokens": w.output_tokens,
        "tokens_per_user": w.tokens_per_user,
        # Added beside tokens_per_user (docs/facts.md: extend, never rename).
        "tokens_held_at_end": tokens_held(report)[0],
        "tokens_held_mid_answer": tokens_held(report)[1],
        "blocks_per_user": None if c is None else c.blocks_per_user,
        **mix_json(report),
    }


#: The report object's keys, in the order written. Adding a key here (and, for a
#: worked-out one, its schema in render/json_schema.REPORT_PARTS) is the whole change:
#: the schema is generated from this table.
REPORT_KEYS: Final = (
    ReportKey("schema_version"),
    ReportKey("source"),
    ReportKey("model"),
    ReportKey("vllm_version"),
    ReportKey("engine", attr="engine_generation"),
    ReportKey("device"),
    ReportKey("pool_tokens"),
    ReportKey("num_blocks"),
    ReportKey("block_size"),
    ReportKey("block_size_source"),
    ReportKey("max_model_len"),
    ReportKey("vllm_max_concurrency"),
    ReportKey("concurrency_tokens"),
    ReportKey("available_kv_gib"),
    ReportKey("kv_cache_dtype"),
    # null when the log does not state it (the 1 the arithmetic assumes is no fact).
    ReportKey(
        "tensor_parallel_size",
        get=lambda r: r.tensor_parallel_size if r.is_tensor_parallel_stated else None,
    ),
    # The worker ranks the log's labels show (Worker_TP0..3: 4); null for one or none.
    ReportKey(
        "num_ranks_seen", get=lambda r: None if r.ranks_seen is None else r.ranks_seen.num_ranks
    ),
    ReportKey("kv_bytes_per_token"),
    ReportKey("kv_bytes_per_token_source"),
    ReportKey("workload", get=_workload_json),
    ReportKey("users"),
    ReportKey("users_mid_answer"),
    ReportKey("is_exact"),
    ReportKey("engines"),
    ReportKey("checks"),
    ReportKey("what_if"),
    ReportKey("arithmetic"),
    ReportKey("warnings"),  # the input's warnings, then the report's
    ReportKey("facts"),
    ReportKey("answer", when="report"),
    ReportKey("target", when="report"),
    ReportKey("knobs", when="known"),
    ReportKey("users_range", when="known"),
    ReportKey("unknowns", when="known"),
    ReportKey("failure", when="known"),
    ReportKey("request_cost", when="known"),
    ReportKey("longest_request", when="known"),
    ReportKey("vllm_version_range", get=_version_range, when="known"),
    ReportKey("vllm_version_past_checked", get=_past_checked, when="known"),
    ReportKey("load", when="caller"),
    ReportKey("observed_workload", when="caller"),
    ReportKey("exit_code", when="caller"),
    ReportKey("error", when="caller"),
    ReportKey("gate", when="caller"),
    ReportKey("metrics_crosscheck", when="caller"),
    ReportKey("sweep", when="caller"),
)
#: The Report fields written as lists (empty without a report).
_TUPLES: Final = frozenset(f.name for f in fields(Report) if str(f.type).startswith("tuple["))


def dumps(obj: JSONValue | Mapping[str, object]) -> str:
    """JSON text; never NaN (not JSON) - facts are finite by construction.

    A Mapping[str, object] too: kv --json's object spreads a TypedDict
    (report/kvshape.KVReport), which mypy reads as Mapping[str, object], never as
    a Mapping[str, JSONValue]. A typed finding (kv --json's notes) is worded here,
    the sentence the text prints (render/words.py)."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False, default=_worded)


def _worded(value: object) -> str:
    """json.dumps' ``default``: a finding's words; anything else is not JSON."""
    if isinstance(value, Finding):
        return word(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


MIX_METHOD = (
    "each request charged its own blocks, group by group (block rounding per request); in a full "
    "pool of users drawn from the mix in its proportions, users = (usable blocks - the shared "
    "prefix's one copy) x requests // the requests' blocks summed, i.e. // the mean of the "
    "per-request block counts (not the blocks of the mean request); mid-answer likewise; "
    "spread: the same room // the mean blocks of the longest 10% of the requests (by blocks), "
    "// the longest request's, // the shortest's"
)


def mix_json(report: Report) -> JSONObject:
    """The workload's ``mix`` and ``shared_prefix`` keys (only when asked for)."""
    out: JSONObject = {}
    w, c, served = report.workload, report.capacity, report.served
    if w.is_mix:
        n = w.num_requests
        m = None if c is None else c.mix
        out["mix"] = {
            "source": w.source,
            "num_requests": n,
            "rejected_requests": 0 if served is None else served.rejected_requests,
            "requests": [
                {
                    "prompt_tokens": r.prompt_tokens,
                    "output_tokens": r.output_tokens,
                    "count": r.count,
                }
                for r in w.requests
            ],
            "mean_prompt_tokens": sum(r.prompt_tokens * r.count for r in w.requests) / n,
            "mean_output_tokens": sum(r.output_tokens * r.count for r in w.requests) / n,
            "method": MIX_METHOD,
            "blocks_total": None if m is None else m.blocks_total,
            "mean_blocks": None if m is None else m.mean_blocks,
            "mean_blocks_mid_answer": None if m is None else m.mean_blocks_mid,
            "spread": None
            if m is None
            else {
                "top_decile_requests": m.top_decile_requests,
                "mean_blocks_top_decile": m.mean_blocks_top_decile,
                "users_top_decile": m.users_top_decile,
                "blocks_longest": m.blocks_longest,
                "users_longest": m.users_longest,
                "blocks_shortest": m.blocks_shortest,
                "users_shortest": m.users_shortest,
            },
        }
    if served is not None and served.notes:
        out["notes"] = [word(n) for n in served.notes]
    if served is not None and served.shared_prefix_tokens_asked:
        out["shared_prefix"] = {
            "tokens": served.shared_prefix_tokens_asked,
            "prefix_caching": None if served is None else served.prefix_caching,
            "applied": bool(served is not None and served.prefix_applied),
            "shared_blocks": 0 if c is None else c.shared_prefix_blocks,
        }
    return out


class StatsJsonl:
    """``--stats-jsonl FILE``: every stats line's facts (and V0's preemption
    warnings'), one JSON object a line, written as the lines are read, so that
    the ``--json`` document can hold the load folded (``load``) and memory stays
    flat however long the log.

    Each object is a fact in docs/facts.md's shape (``kind``, ``value``, ``line``,
    ``process``) with the input it came from (``source``) and the line's header
    time (``time``, ``MM-DD HH:MM:SS``; null: none printed). The file is created
    (emptied) at once, so a bad path fails before any reading.
    """

    def __init__(self, path: str) -> None:
        try:
            self._out = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
        except OSError as err:
            raise UsageError(f"--stats-jsonl {path}: cannot write it ({err.strerror})") from None
        self.path = path
        self.num_facts = 0
        # The JSON of the strings a log repeats (sources, processes, times, engines).
        self._texts: dict[str | None, str] = {None: "null"}

    def add(self, facts: list[Fact]) -> None:
        """One line's facts."""
        texts = self._texts
        lines = []
        for f in facts:
            parts = []
            for text in (f.source, f.time, f.process):
                if text not in texts:
                    if len(texts) > 4096:
                        texts.clear()
                        texts[None] = "null"
                    texts[text] = json.dumps(text, ensure_ascii=False)
                parts.append(texts[text])
            value = f.value
            if isinstance(value, str):
                value_text = json.dumps(value, ensure_ascii=False)
            elif isinstance(value, bool):
                value_text = "true" if value else "false"
            else:
                value_text = json.dumps(value, allow_nan=False)
            lines.append(
                f'{{"source": {parts[0]}, "line": {f.line}, "time": {parts[1]}, '
                f'"process": {parts[2]}, "kind": "{f.kind}", "value": {value_text}}}\n'
            )
        self._out.write("".join(lines))
        self.num_facts += len(lines)

    def close(self) -> None:
        self._out.close()
