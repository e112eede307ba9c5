"""--json and kv --json objects."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import UsageError
from ..events import InputResult
from ..kv.groups import KVCacheLayout, kv_cache_layout
from ..kv.specs import KVSpec
from ..read.facts import Fact
from ..report.model import Report
from ..rules import DEFAULT_MAX_NUM_BATCHED_TOKENS, NEWEST_CHECKED, version_past_checked
from ..versions import cdiv


def kv_report(
    spec: KVSpec,
    *,
    block_size: int | None = None,
    vllm_version: str | None = None,
    num_tokens: int = 640,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
) -> dict[str, Any]:
    """The KV spec as a JSON-ready dict (``vllm-logread kv --json``).

    Includes the KV cache groups vLLM would form (its hybrid KV cache manager,
    vLLM >= 0.9.1 on CUDA/ROCm, unless ``vllm_version`` says otherwise) and
    ``how``: per kind its layers, page, the blocks a request of ``num_tokens``
    holds and the rule behind each number.
    """

    layout = kv_cache_layout(spec, block_size=block_size, vllm_version=vllm_version)
    windows: dict[str, Any] = {}
    if spec.sliding_window_tokens is not None:
        w = spec.sliding_window_tokens
        windows["sliding_window_tokens"] = w
        # Steady decode: a sliding layer holds at most cdiv(W - 1, bs) + 1
        # blocks (gpt-oss, W = 128: 9 blocks = 144 tokens).
        windows["sliding_max_tokens_held_per_layer"] = (
            cdiv(w - 1, layout.block_size) + 1
        ) * layout.block_size
    if spec.attention_chunk_size is not None:
        windows["attention_chunk_size"] = spec.attention_chunk_size
    return {
        "model": spec.model,
        "source": spec.source,
        "architecture": spec.architecture,
        "architecture_status": spec.architecture_status,
        "architecture_note": spec.architecture_note,
        "source_kind": spec.source_kind,
        "model_type": spec.model_type,
        "tensor_parallel_size": spec.tensor_parallel_size,
        "pipeline_parallel_size": spec.pipeline_parallel_size,
        "stage_layers": list(spec.stage_layer_range),
        "kv_cache_dtype": spec.kv_cache_dtype,
        "kv_dtype": spec.kv_dtype,
        "dtype_bytes": spec.dtype_bytes,
        "model_dtype": spec.model_dtype,
        "num_hidden_layers": spec.num_hidden_layers,
        "layer_kinds": spec.layer_kind_counts,
        "num_attention_heads": spec.num_attention_heads,
        "total_num_kv_heads": spec.total_num_kv_heads,
        "num_kv_heads_per_gpu": spec.num_kv_heads,
        "head_size": spec.head_size,
        "kv_factor": spec.kv_factor,
        "is_mla": spec.is_mla,
        "page_bytes_per_token_per_layer": spec.page_bytes_per_token_per_layer,
        "kv_bytes_per_token": spec.kv_bytes_per_token,
        "kv_bytes_per_token_full_attention": spec.kv_bytes_per_token_full_attention,
        "state_bytes_per_layer": spec.state_bytes_per_layer,
        "state_bytes_per_request": spec.state_bytes_per_request,
        "is_uniform": spec.is_uniform,
        "window_caps": windows,
        "kv_cache_groups": [
            {
                "kind": g.kind,
                "num_layers": g.num_layers,
                "num_padding_layers": g.num_padding_layers,
                "block_size": g.block_size,
                "window_tokens": g.window_tokens,
            }
            for g in layout.groups
        ],
        "group_size": layout.group_size,
        "block_size": layout.block_size,
        "page_size_bytes": layout.page_size_bytes,
        "is_hybrid_kv_cache_manager": layout.is_hybrid_manager,
        "describe": spec.describe(),
        "notes": list(spec.notes) + list(layout.notes),
        "how": kv_decisions(
            layout, num_tokens=num_tokens, max_num_batched_tokens=max_num_batched_tokens
        ),
    }


# What each page formula is and the vLLM version it was read from.
_PAGE_RULES = {
    "AttentionSpec": (
        "block_size x num_kv_heads x (head_size + head_size_v) x dtype bytes, or the "
        "dtype's packed bytes per token and head (AttentionSpec.page_size_bytes, 0.31+)"
    ),
    "MLAAttentionSpec": (
        "block_size x one latent (kv_lora_rank + qk_rope_head_dim) per token, never split "
        "by TP, + the sparse indexer's keys (MLAAttention.get_kv_cache_spec, 0.31+)"
    ),
    "MambaSpec": (
        "the state tensors' bytes, padded to the attention page "
        "(MambaSpec.page_size_bytes, _align_hybrid_block_size, 0.31+)"
    ),
}


def _layers_text(indices: Sequence[int]) -> str:
    """Layer numbers for a person: a range, a stride, or the first few.

    >>> _layers_text(range(36)), _layers_text(range(3, 48, 4)), _layers_text([0, 2, 7])
    ('0-35', '3, 7, ..., 47 (every 4th)', '0, 2, 7')
    """
    idx = list(indices)
    if len(idx) > 2:
        step = idx[1] - idx[0]
        if all(b - a == step for a, b in zip(idx, idx[1:], strict=False)):
            if step == 1:
                return f"{idx[0]}-{idx[-1]}"
            return f"{idx[0]}, {idx[1]}, ..., {idx[-1]} (every {_ordinal(step)})"
    if len(idx) > 8:
        return ", ".join(str(i) for i in idx[:6]) + f", ... ({len(idx)} layers)"
    return ", ".join(str(i) for i in idx)


def _ordinal(n: int) -> str:
    return {2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def kv_decisions(
    layout: KVCacheLayout, *, num_tokens: int, max_num_batched_tokens: int
) -> dict[str, Any]:
    """How the layout's numbers were decided: per kind, and the rules.

    One entry per distinct spec (a kind with its window and shape): the
    layers, the page, the blocks a request of ``num_tokens`` tokens holds and
    is budgeted at the max model length, each with its rule.
    """
    by_spec: dict[Any, list[Any]] = {}
    for g in layout.groups:
        by_spec.setdefault(g.spec, []).append(g)
    in_flight = layout.max_concurrent_batches * max_num_batched_tokens
    kinds = []
    for spec, groups in by_spec.items():
        layers = sorted(i for g in groups for i in g.layer_indices)
        kinds.append(
            {
                "kind": spec.kind,
                "spec": type(spec).__name__,
                "num_layers": len(layers),
                "num_groups": len(groups),
                "layers": _layers_text(layers),
                "block_size": spec.block_size,
                "page_size_bytes": spec.page_size_bytes,
                "page": spec.page_text(),
                "page_rule": _PAGE_RULES.get(type(spec).__name__, _PAGE_RULES["AttentionSpec"]),
                "num_tokens": num_tokens,
                "blocks_per_request": spec.blocks_charged(num_tokens),
                "rule": spec.rule(),
            }
        )
    version = (
        "not given: the rules of vLLM 0.30 and before where 0.31+ differ (--vllm-version)"
        if layout.vllm_version is None
        else ".".join(str(p) for p in layout.vllm_version)
    )
    rules = list(layout.rules)
    if layout.max_concurrent_batches > 1 and any(g.window_tokens for g in layout.groups):
        rules.append(
            f"windowed layers' budget at the max model length: {layout.max_concurrent_batches} "
            f"batches in flight x {max_num_batched_tokens:,} batched tokens = {in_flight:,} "
            "(async scheduling, 0.31+)"
        )
    return {
        "vllm_version": version,
        "kinds": kinds,
        "bytes_per_block": layout.bytes_per_block,
        "bytes_per_block_rule": (
            f"page {layout.page_size_bytes:,} B x {layout.layers_per_block_on_gpu} layers a "
            "block id spans on this GPU"
        ),
        "rules": rules,
        "is_exact": layout.is_exact,
    }


def json_text(
    results: Sequence[InputResult],
    *,
    sweep: Sequence[dict[str, Any]] | None = None,
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
    objs: list[tuple[InputResult, dict[str, Any]]] = []
    for res in results:
        warns = [str(w) for w in res.warnings]
        for b in res.json_boots:
            obj = report_json(b.report, b.facts, warns)
            obj["load"] = None if b.load is None else b.load.to_json()
            if b.report.observed is not None:
                obj["observed_workload"] = b.report.observed.to_json()
            # The input's whole exit code (the gate's and --strict's included), and what
            # the gate judged (null: no --min-users).
            obj["exit_code"] = res.exit_code
            obj["error"] = res.error or None
            obj["gate"] = None if res.gate is None else res.gate.to_json()
            if res.crosscheck:
                obj["metrics_crosscheck"] = [a.to_json() for a in res.crosscheck]
            objs.append((res, obj))
    out: dict[str, Any]
    if len(objs) == 1 and not unread:
        out = objs[0][1]
    else:
        from .tables import model_totals

        good = [o for res, o in objs if res.is_good]
        known = [o["users"] for o in good if o["users"] is not None]
        mid = [o["users_mid_answer"] for o in good if o["users_mid_answer"] is not None]
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


def report_json(report: Report | None, facts: list[Fact], warnings: list[str]) -> dict[str, Any]:
    """The ``--json`` object (schema: vllm_logread/data/report.schema.json)."""
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "source": None,
        "model": None,
        "vllm_version": None,
        "engine": None,
        "device": None,
        "pool_tokens": None,
        "num_blocks": None,
        "block_size": None,
        "block_size_source": None,
        "max_model_len": None,
        "vllm_max_concurrency": None,
        "concurrency_tokens": None,
        "available_kv_gib": None,
        "kv_cache_dtype": None,
        "tensor_parallel_size": None,
        "kv_bytes_per_token": None,
        "kv_bytes_per_token_source": None,
        "workload": None,
        "users": None,
        "users_mid_answer": None,
        "is_exact": None,
        "engines": [],
        "checks": [],
        "what_if": [],
        "arithmetic": [],
        "warnings": list(warnings),
        "facts": [f.to_json() for f in facts],
    }
    if report is None:
        return out
    w = report.workload
    c = report.capacity
    out.update(
        {
            "source": report.source,
            "model": report.model,
            "vllm_version": report.vllm_version,
            "engine": report.engine_generation,
            "device": report.device,
            "pool_tokens": report.pool_tokens,
            "num_blocks": report.num_blocks,
            "block_size": report.block_size,
            "block_size_source": report.block_size_source,
            "max_model_len": report.max_model_len,
            "vllm_max_concurrency": report.vllm_max_concurrency,
            "concurrency_tokens": report.concurrency_tokens,
            "available_kv_gib": report.available_kv_gib,
            "kv_cache_dtype": report.kv_cache_dtype,
            "tensor_parallel_size": report.tensor_parallel_size,
            "kv_bytes_per_token": report.kv_bytes_per_token,
            "kv_bytes_per_token_source": report.kv_bytes_per_token_source,
            "workload": {
                "prompt_tokens": w.prompt_tokens,
                "output_tokens": w.output_tokens,
                "tokens_per_user": w.tokens_per_user,
                "blocks_per_user": None if c is None else c.blocks_per_user,
            },
            "users": report.users,
            "users_mid_answer": report.users_mid_answer,
            "is_exact": report.is_exact,
            "engines": [
                {
                    "engine": e.engine,
                    "pool_tokens": e.pool_tokens,
                    "num_blocks": e.num_blocks,
                    "users": e.users,
                    "users_mid_answer": e.users_mid_answer,
                    "line": e.line,
                    "ranks_disagree": e.ranks_disagree,
                }
                for e in report.engines
            ],
            "checks": [ch.to_json() for ch in report.checks],
            "what_if": [wi.to_json() for wi in report.what_if],
            "target": None if report.target is None else report.target.to_json(),
            "arithmetic": list(report.arithmetic),
            "warnings": list(warnings) + list(report.warnings),
        }
    )
    # Present only when they say something (docs/facts.md: extend, never rename).
    out["workload"].update(mix_json(report))
    if report.users_range is not None:
        out["users_range"] = list(report.users_range)
    if report.unknowns:
        out["unknowns"] = [u.to_json() for u in report.unknowns]
    if report.failure is not None:
        out["failure"] = report.failure.to_json()
    if version_past_checked(report.vllm_version) is not None:
        # Only then (older reports keep their exact shape): the log's vLLM is
        # newer than the newest release this tool was checked against.
        out["vllm_version_past_checked"] = {
            "vllm_version": report.vllm_version,
            "newest_checked": str(NEWEST_CHECKED),
        }
    return out


def dumps(obj: dict[str, Any]) -> str:
    """JSON text; never NaN (not JSON) - facts are finite by construction."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)


MIX_METHOD = (
    "each request charged its own blocks, group by group (block rounding per request); in a full "
    "pool of users drawn from the mix in its proportions, users = (usable blocks - the shared "
    "prefix's one copy) x requests // the requests' blocks summed, i.e. // the mean of the "
    "per-request block counts (not the blocks of the mean request); mid-answer likewise; "
    "spread: the same room // the mean blocks of the longest 10% of the requests (by blocks), "
    "// the longest request's, // the shortest's"
)


def mix_json(report: Any) -> dict[str, Any]:
    """The workload's ``mix`` and ``shared_prefix`` keys (only when asked for)."""
    out: dict[str, Any] = {}
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
        out["notes"] = list(served.notes)
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
