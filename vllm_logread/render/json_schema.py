"""The JSON schema of every command's ``--json`` (vllm_logread/data/report.schema.json),
generated: ``python -m vllm_logread.render.json_schema`` writes it, and
tests/render/test_schemas.py fails when the shipped file differs from ``schema_text()``.

A report object's keys are render/json.py's REPORT_KEYS, in its order; a key read from
a result field (report/model.py) takes its type from the field's type hint and its
description from the field's ``doc`` metadata (``X | None``: null when unknown; a key
present only when known is never null). The keys whose value another module writes
(``to_json`` of report/knobs.py, report/observed.py, ...) and the other commands' objects are
declared below, once.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Final, Literal, get_args, get_origin

from ..findings import Finding
from ..jsontypes import JSONObject, JSONValue
from ..report import model
from .json import REPORT_KEYS, SCHEMA_VERSION, ReportKey

PATH: Final = Path(__file__).resolve().parents[1] / "data" / "report.schema.json"

INT: Final[JSONObject] = {"type": "integer"}
NUM: Final[JSONObject] = {"type": "number"}
STR: Final[JSONObject] = {"type": "string"}
BOOL: Final[JSONObject] = {"type": "boolean"}
NINT: Final[JSONObject] = {"$ref": "#/definitions/nint"}
NNUM: Final[JSONObject] = {"$ref": "#/definitions/nnum"}
NSTR: Final[JSONObject] = {"$ref": "#/definitions/nstr"}
NBOOL: Final[JSONObject] = {"type": ["boolean", "null"]}
_TYPES: Final[dict[type, tuple[JSONObject, JSONObject]]] = {
    int: (INT, NINT),
    float: (NUM, NNUM),
    str: (STR, NSTR),
    bool: (BOOL, NBOOL),
}


def d(schema: JSONObject, doc: str) -> JSONObject:
    """A schema with its description."""
    return {**schema, "description": doc}


def arr(items: JSONObject, *, doc: str | None = None) -> JSONObject:
    out: JSONObject = {"type": "array", "items": items}
    return out if doc is None else d(out, doc)


def obj(
    props: JSONObject,
    *,
    required: list[str] | None = None,
    closed: bool = True,
    nullable: bool = False,
    doc: str | None = None,
) -> JSONObject:
    """An object: every key required unless ``required`` says which; ``closed``: no
    other key; ``nullable``: or null."""
    out: JSONObject = {"type": ["object", "null"] if nullable else "object"}
    if required != []:
        out["required"] = list(props) if required is None else list(required)
    out["properties"] = props
    if closed:
        out["additionalProperties"] = False
    return out if doc is None else d(out, doc)


REPORT_DOC: Final = "One boot's report (one input, one boot)."

#: A knob's row in the report's knobs (report/knobs.py writes it).
KNOB: Final = obj(
    {
        "knob": d(STR, "The setting as passed to vLLM (--kv-cache-dtype fp8)."),
        "change": d(STR, "The same as --what-if text (kv_cache_dtype=fp8)."),
        "effect": {"enum": ["adds", "none", "unknown"]},
        "users": NINT,
        "gain": d(NINT, "Users added over the answer now."),
        "pool_users": NINT,
        "limit": {"enum": ["pool", "max_num_seqs", None]},
        "exact": BOOL,
        "reason": STR,
    }
)
#: The users at one observed request size (report/observed.py writes it).
USERS_AT: Final = obj(
    {
        "label": d(
            STR,
            "mean, pNN (exact), pNN high / pNN low (every request at the pNN buckets' "
            "upper / lower bounds)",
        ),
        "prompt_tokens": NINT,
        "output_tokens": NINT,
        "users": NINT,
        "why": STR,
        "arithmetic": d(STR, "the report's own arithmetic at that workload"),
    },
    required=["label", "prompt_tokens", "output_tokens", "users", "why"],
    closed=False,
)

#: The report keys whose value is worked out (render/json.py) or written by another
#: module's ``to_json``: their schema, declared here once.
REPORT_PARTS: Final[dict[str, JSONObject]] = {
    "sweep": {"$ref": "#/definitions/sweep"},
    "schema_version": {"const": SCHEMA_VERSION},
    "num_ranks_seen": d(
        NINT,
        "the worker ranks the log's process labels show (Worker_TP0..TP3: 4); null for one or none",
    ),
    "workload": obj(
        {
            "prompt_tokens": INT,
            "output_tokens": INT,
            "tokens_per_user": d(
                INT,
                "the request's length, prompt + output tokens (512 + 128 = 640): the figure held against max_model_len; the KV tokens a user holds are tokens_held_at_end",
            ),
            "tokens_held_at_end": d(
                INT,
                "KV tokens one user holds at the end of its answer, as the text report's 'yours hold N': vLLM's prompt + output - 1 (639 for 512 + 128: the last sampled token is never written to the cache); a mix: its mean request's",
            ),
            "tokens_held_mid_answer": d(
                INT,
                "KV tokens one user holds halfway through its answer: prompt + output // 2 - 1 (575 for 512 + 128)",
            ),
            "blocks_per_user": NINT,
            "mix": obj(
                {
                    "source": STR,
                    "num_requests": {"type": "integer", "minimum": 1},
                    "rejected_requests": d(
                        {"type": "integer", "minimum": 0},
                        "requests over max_model_len: vLLM rejects them (HTTP 400); not in the users",
                    ),
                    "requests": arr(
                        obj(
                            {
                                "prompt_tokens": INT,
                                "output_tokens": INT,
                                "count": {"type": "integer", "minimum": 1},
                            },
                            closed=False,
                        )
                    ),
                    "mean_prompt_tokens": NUM,
                    "mean_output_tokens": NUM,
                    "method": STR,
                    "blocks_total": NINT,
                    "mean_blocks": NNUM,
                    "mean_blocks_mid_answer": NNUM,
                    "spread": obj(
                        {
                            "top_decile_requests": INT,
                            "mean_blocks_top_decile": NUM,
                            "users_top_decile": INT,
                            "blocks_longest": INT,
                            "users_longest": INT,
                            "blocks_shortest": INT,
                            "users_shortest": INT,
                        },
                        required=["users_top_decile", "users_longest", "users_shortest"],
                        closed=False,
                        nullable=True,
                    ),
                },
                required=[
                    "source",
                    "num_requests",
                    "rejected_requests",
                    "requests",
                    "mean_prompt_tokens",
                    "mean_output_tokens",
                    "method",
                    "mean_blocks",
                    "spread",
                ],
                closed=False,
                doc="--workload FILE: the mix's requests vLLM accepts here (rows of one size merged, longest first), its mean tokens, the method and the spread",
            ),
            "shared_prefix": obj(
                {"tokens": INT, "prefix_caching": NBOOL, "applied": BOOL, "shared_blocks": INT},
                closed=False,
                doc="--shared-prefix N: whether prefix caching is on (the log, or vLLM's default), whether the prefix is counted as held once, and its full blocks held once",
            ),
            "notes": arr(STR, doc="what the report says about the mix and the shared prefix"),
        },
        required=["prompt_tokens", "output_tokens", "tokens_per_user", "blocks_per_user"],
        closed=False,
        nullable=True,
    ),
    "answer": obj(
        {
            "users": NINT,
            "users_mid_answer": NINT,
            "pool_users": NINT,
            "pool_users_mid_answer": NINT,
            "limit": {"enum": ["pool", "max_num_seqs", None]},
            "users_is_lower_bound": d(
                BOOL,
                "max_num_seqs is not settled by the log (256 or 1,024 by the card) and binds: at least users run",
            ),
            "users_high": NINT,
            "max_num_seqs": NINT,
            "max_num_seqs_source": NSTR,
        },
        required=[],
        nullable=True,
        doc="the users at the workload: the pool's users capped by max_num_seqs on each engine (users), the pool's own figure (pool_users), and the limit that binds",
    ),
    "what_if": arr(
        obj(
            {"change": STR, "pool_tokens": NINT, "users": NINT, "exact": BOOL, "note": STR},
            required=["change", "pool_tokens", "users", "note"],
            closed=False,
        )
    ),
    "target": d(
        {"type": ["object", "null"]}, "--target-users: the smallest changes that reach N users"
    ),
    "knobs": obj(
        {
            "users": INT,
            "ranked": arr(KNOB),
            "no_effect": arr(KNOB),
            "unknown": arr(KNOB),
        },
        doc="The knobs ranked by the users they add at the workload, through the one answer (capped by max_num_seqs, the limit named): ranked (best first), no_effect, unknown (docs/knobs.md).",
    ),
    "request_cost": obj(
        {
            "block_size": INT,
            "usable_blocks": INT,
            "tokens_held": d(INT, "prompt + output - 1: the last sampled token is never written"),
            "groups": arr(
                obj(
                    {
                        "kind": STR,
                        "num_layers": INT,
                        "blocks": INT,
                        "cap_blocks": NINT,
                        "grows": BOOL,
                    }
                )
            ),
            "fixed_blocks": INT,
            "fixed_pool_tokens": INT,
            "growing_groups": INT,
            "pool_tokens_per_token": INT,
            "blocks_per_request": INT,
            "users": INT,
            "peak_blocks_per_request": d(
                NINT,
                "the most a request holds at one step: blocks_per_request plus, in a Mamba align group, the second state page of the step that crosses a state block (vLLM 0.20.2-0.33 MambaManager); null when that depends on the prompt's first chunk and the log states no max_num_batched_tokens",
            ),
            "users_low": d(
                NINT,
                "users when one request at a time meets a full pool at its busiest step: 1 + (usable_blocks - peak) // blocks_per_request, with the largest peak possible when it is unknown; = users when no step holds more than the request keeps",
            ),
            "users_by_length": arr(obj({"tokens": INT, "users": INT})),
            "longest_request": {
                "oneOf": [{"type": "null"}, {"$ref": "#/definitions/longest_request"}]
            },
        },
        required=[
            "block_size",
            "usable_blocks",
            "tokens_held",
            "groups",
            "fixed_blocks",
            "fixed_pool_tokens",
            "growing_groups",
            "pool_tokens_per_token",
            "blocks_per_request",
            "users",
            "users_by_length",
            "longest_request",
        ],
        doc="What one request of the workload costs, split group by group: the groups that do not grow (sliding windows at their cap, state pages) are the fixed part, the full-attention (MLA, drafter) groups take one pool token per token each, rounded up to whole blocks. blocks_per_request = fixed_blocks + growing_groups x cdiv(tokens_held, block_size); users = usable_blocks // blocks_per_request. Present for one request length (not for a --workload mix).",
    ),
    "longest_request": {"$ref": "#/definitions/longest_request"},
    "vllm_version_range": obj(
        {
            "lowest": STR,
            "highest": STR,
            "num_releases": {"type": "integer", "minimum": 1},
            "evidence": arr(obj({"line": INT, "what": STR})),
        },
        doc="present only when the log states no vLLM version but its call sites ([kv_cache_utils.py:716]) and process labels narrow it (docs/fingerprint.md): the oldest and newest release it can come from, how many releases, and the lines that decided it",
    ),
    "vllm_version_past_checked": obj(
        {"vllm_version": STR, "newest_checked": STR},
        doc="present only when the log's vLLM is newer (by minor release) than the newest release this tool was checked against; the warnings then say so",
    ),
    "facts": arr(
        {"$ref": "#/definitions/fact"},
        doc="the boot's own facts (the kinds of docs/facts.md, core and extensions), each with its line: from a log, the boot's lines up to its first stats line or 5,000 lines past its report (session.SETTLE_LINES), and the first 1,000 stats lines' facts (session.MAX_LISTED_STATS_LINES); a /metrics text also lists its gauges (one snapshot per engine). Every stats line is folded into load (--stats-jsonl streams each one's facts) and request lines into observed_workload.",
    ),
    "load": obj(
        {
            "peak_running": NINT,
            "peak_waiting": NINT,
            "peak_kv_usage_pct": NNUM,
            "preemptions": NINT,
            "verdict": NSTR,
        },
        required=[],
        closed=False,
        nullable=True,
        doc="what the stats lines said, folded: num_stats_lines, peak_running, peak_waiting, peak_kv_usage_pct, seconds_above_95pct, seconds_spanned, preemptions, num_running_falls, verdict, phase, engines (the same per engine label); null without stats lines",
    ),
    "observed_workload": obj(
        {
            "source": {"enum": ["metrics", "log"]},
            "prompt_tokens": {"$ref": "#/definitions/token_summary"},
            "generation_tokens": {"$ref": "#/definitions/token_summary"},
            "max_tokens": {"$ref": "#/definitions/token_summary"},
            "at_mean": {"oneOf": [USERS_AT, {"type": "null"}]},
            "users": arr(USERS_AT),
            "engines": arr(obj({"engine": STR}, closed=False)),
            "notes": arr(STR),
        },
        closed=False,
        doc="Present when the server said what it served: source metrics (the histograms vllm:request_prompt_tokens, vllm:request_generation_tokens, vllm:request_params_max_tokens, summed over engines) or log (the request lines of --enable-log-requests: max_tokens and, where printed, the prompt's token ids). Prompt and generation are marginals, not each request's pair. users: the users at the mean request and at each quantile's bounds, by the report's own arithmetic at that workload.",
    ),
    "exit_code": d(
        INT,
        "this input's exit code: 0 nothing wrong, 1 --min-users failed, 3 no pool, a boot that serves nobody or a near miss under --strict, 4 a contradiction (the process's exit code is the highest over the inputs)",
    ),
    "error": d(NSTR, "why exit_code is not 0; null when it is"),
    "gate": obj(
        {
            "min_users": INT,
            "margin_pct": NUM,
            "floor_users": INT,
            "is_within_margin": BOOL,
            "users": NINT,
            "passed": BOOL,
        },
        required=["min_users", "margin_pct", "floor_users", "users", "passed", "is_within_margin"],
        nullable=True,
        doc="what --min-users judged (null: not asked): the lowest users over the workloads (null: unknown, which fails), against min_users less --margin (floor_users, the fewest that pass), whether it passed, and whether only thanks to the margin",
    ),
    "metrics_crosscheck": arr(
        obj(
            {
                "name": STR,
                "log": NSTR,
                "log_line": NINT,
                "metrics": NSTR,
                "status": {"enum": ["same", "differs", "log only", "metrics only"]},
                "why": NSTR,
            }
        ),
        doc="--compare-metrics: each figure the log and the server's /metrics (cache_config_info) state, side by side; present only with that option",
    ),
}
#: The other definitions: the other commands' objects and their parts.
DEFINITIONS: Final[dict[str, JSONObject]] = {
    "fact": obj(
        {
            "kind": d(STR, "a kind listed in docs/facts.md (the core kinds and the extensions)"),
            "value": {"type": ["integer", "number", "string", "boolean"]},
            "line": {"type": "integer", "minimum": 1},
            "process": NSTR,
        }
    ),
    "sweep": arr(
        obj(
            {
                "source": STR,
                "prompt_tokens": {"type": "integer", "minimum": 0},
                "output_tokens": {"type": "integer", "minimum": 0},
                "tokens_per_user": {"type": "integer", "minimum": 0},
                "users": NINT,
                "users_mid_answer": NINT,
                "exact": NBOOL,
            }
        ),
        doc="a sweep (--prompt/--output lists or ranges): one row per server x prompt x output, each the figure a single run at that workload gives",
    ),
    "servers": obj(
        {
            "schema_version": {"const": SCHEMA_VERSION},
            "servers": arr({"$ref": "#/definitions/report"}),
            "total": obj(
                {
                    "num_servers": d(
                        {"type": "integer", "minimum": 0}, "servers counted: exit_code 0"
                    ),
                    "users": d(
                        NINT,
                        "the servers' users together when they all serve one model; null across models (see models) or when some are unknown",
                    ),
                    "users_mid_answer": NINT,
                    "not_counted": arr(
                        obj({"source": NSTR, "exit_code": INT, "error": NSTR}, closed=False)
                    ),
                    "models": arr(
                        obj(
                            {
                                "model": NSTR,
                                "sources": arr(STR),
                                "num_servers": {"type": "integer", "minimum": 1},
                                "users": NINT,
                                "users_mid_answer": NINT,
                            },
                            closed=False,
                        ),
                        doc="one total per model, in the order the models first appear: users add up within a model, never across models",
                    ),
                },
                required=["num_servers", "users", "users_mid_answer", "not_counted"],
                closed=False,
            ),
            "sweep": {"$ref": "#/definitions/sweep"},
        },
        required=["schema_version", "servers", "total"],
        doc="Several inputs (or --all-boots, or a /metrics text of several engines): each boot its own report, with its own facts and errors, and the total over the ones with nothing wrong.",
    ),
    "estimate_figure": obj(
        {
            "name": STR,
            "gib": NUM,
            "low_gib": NUM,
            "high_gib": d(NNUM, "null: no upper bound can be given"),
            "is_estimate": BOOL,
            "source": STR,
            "replaced_by": d(STR, "the boot log line whose figure replaces this estimate"),
            "brief": d(STR, "the source in a few words (the text report's line)"),
        },
        required=["name", "gib", "low_gib", "high_gib", "is_estimate", "source", "replaced_by"],
    ),
    "estimate_outcome": obj(
        {
            "available_kv_gib": NUM,
            "num_blocks": {"type": "integer", "minimum": 0},
            "pool_tokens": NINT,
            "blocks_per_user": NINT,
            "users_by_blocks": NINT,
            "users": NINT,
        },
        nullable=True,
    ),
    "boot_estimate": obj(
        {
            "is_estimate": {"const": True},
            "gpu": {"type": "object", "required": ["name", "total_gib", "source"]},
            "vllm_version": STR,
            "tensor_parallel_size": {"type": "integer", "minimum": 1},
            "gpu_memory_utilization": NUM,
            "gpu_memory_utilization_source": STR,
            "requested_gib": NUM,
            "weights": {"oneOf": [{"$ref": "#/definitions/estimate_figure"}, {"type": "null"}]},
            "overheads": arr({"$ref": "#/definitions/estimate_figure"}),
            "block_size": INT,
            "bytes_per_block": INT,
            "num_kv_cache_groups": INT,
            "max_model_len": NINT,
            "max_model_len_source": STR,
            "max_num_seqs": INT,
            "max_num_seqs_source": STR,
            "max_num_batched_tokens": INT,
            "max_num_batched_tokens_source": STR,
            "workload": {"type": "object", "required": ["prompt_tokens", "output_tokens"]},
            "central": {"$ref": "#/definitions/estimate_outcome"},
            "best": {"$ref": "#/definitions/estimate_outcome"},
            "worst": {"$ref": "#/definitions/estimate_outcome"},
            "users": NINT,
            "max_model_len_blocks": NINT,
            "max_model_len_fits": d(
                {"enum": ["yes", "likely", "maybe", "no", "unknown"]},
                "yes: at every end of the range; likely: at the central and best ends, the worst being unbounded; maybe: at some ends; no: at none",
            ),
            "max_model_len_message": STR,
            "estimated_max_model_len": NINT,
            "unknown": NSTR,
            "notes": arr(STR),
            "suggestion": d(
                NSTR, "when no user fits: the smallest --tp that serves one, by the same estimate"
            ),
        },
        required=[
            "is_estimate",
            "gpu",
            "vllm_version",
            "tensor_parallel_size",
            "gpu_memory_utilization",
            "requested_gib",
            "weights",
            "overheads",
            "block_size",
            "bytes_per_block",
            "max_model_len",
            "max_num_seqs",
            "workload",
            "central",
            "best",
            "worst",
            "users",
            "max_model_len_fits",
            "max_model_len_message",
            "unknown",
        ],
        doc="kv MODEL --gpu NAME: the pool and the users before any boot. Every figure but the GPU's total, the utilization and the page geometry is an estimate (is_estimate) with its range and source; central uses the central estimates, best the low ends of weights and overheads, worst the high ends (null when a high end is unbounded).",
    ),
    "kv": d(
        {
            "type": "object",
            "required": [
                "schema_version",
                "command",
                "model",
                "source",
                "source_kind",
                "kv_bytes_per_token",
                "kv_cache_groups",
                "block_size",
                "page_size_bytes",
                "tensor_parallel_size",
            ],
            "not": {"required": ["facts"]},
            "properties": {
                "schema_version": {"const": SCHEMA_VERSION},
                "command": {"const": "kv"},
                "model": NSTR,
                "source": STR,
                "source_kind": {"enum": ["config", "hf-cache", "table"]},
                "kv_bytes_per_token": INT,
                "kv_cache_groups": {"type": "array"},
                "block_size": INT,
                "page_size_bytes": INT,
                "tensor_parallel_size": INT,
                "boot_estimate": {"$ref": "#/definitions/boot_estimate"},
            },
        },
        "vllm-logread kv MODEL --json: the model's KV spec per GPU (no log); with --gpu, boot_estimate.",
    ),
    "diff": obj(
        {
            "schema_version": {"const": SCHEMA_VERSION},
            "command": {"const": "diff"},
            "old": d(
                {"$ref": "#/definitions/report"},
                "OLD's report, with its exit_code and error (named OLD)",
            ),
            "new": d({"$ref": "#/definitions/report"}, "NEW's report, likewise"),
            "rows": arr(
                obj(
                    {
                        "name": d(
                            STR,
                            "vllm_version, model, dtype, kv_cache_dtype, tensor_parallel_size, num_engines, block_size, kv_cache_groups, kv_bytes_per_token, bytes_per_block, total_gpu_gib, gpu_memory_utilization, requested_gib, kv_cache_memory_bytes (in GiB), weights_gib, activation_peak_gib, cuda_graph_gib, non_torch_gib, available_kv_gib, pool_tokens, num_blocks, users",
                        ),
                        "unit": STR,
                        "old": {"type": ["integer", "number", "string", "boolean", "null"]},
                        "new": {"type": ["integer", "number", "string", "boolean", "null"]},
                        "old_note": d(
                            NSTR, "how a value not stated is known (assumed: ...), or null"
                        ),
                        "new_note": NSTR,
                        "change": d(NNUM, "new - old; null when a side is unknown or not a number"),
                        "change_pct": NNUM,
                        "is_changed": d(
                            NBOOL,
                            "beyond both sides' printed precision; null when a side is unknown",
                        ),
                    }
                )
            ),
            "explanation": obj(
                {
                    "kind": {"enum": ["unchanged", "memory", "bytes_per_block", "both", "unknown"]},
                    "line": d(
                        NSTR,
                        "the row whose change explains the pool's; null when the logs do not state enough",
                    ),
                    "sentence": STR,
                    "effects": arr(
                        obj(
                            {
                                "line": STR,
                                "old_gib": NNUM,
                                "new_gib": NNUM,
                                "effect_gib": d(
                                    NUM, "the line's effect on the KV memory: + gave, - took"
                                ),
                                "why": STR,
                            }
                        )
                    ),
                    "unexplained_gib": d(
                        NNUM, "the KV memory's change the stated lines do not account for"
                    ),
                    "unstated": arr(STR),
                    "boot_to_boot_pct": d(
                        NNUM,
                        "two boots of the same settings whose pools differ: the move in percent (the memory profile's boot-to-boot variance; --margin for a gate); null otherwise",
                    ),
                },
                required=["kind", "line", "sentence", "effects", "unexplained_gib", "unstated"],
            ),
            "users": obj({"old": NINT, "new": NINT, "change": NINT, "change_pct": NNUM}),
            "gate": obj({"max_drop_pct": NNUM, "passed": NBOOL, "message": NSTR}),
        },
        doc="vllm-logread diff OLD NEW --json: the two boots' reports, the rows side by side (each with its change), the sentence that names the change that explains the pool's, and the --max-drop gate.",
    ),
    "token_range": obj(
        {"lower_tokens": NNUM, "upper_tokens": NNUM},
        doc="a quantile from a histogram: a bucket (lower_tokens, upper_tokens]; lower null: the first bucket, upper null: the +Inf bucket",
    ),
    "token_summary": obj(
        {
            "count": {"type": "integer", "minimum": 0},
            "sum": NUM,
            "mean": NNUM,
            "p50": {"oneOf": [INT, {"$ref": "#/definitions/token_range"}, {"type": "null"}]},
            "p90": {"oneOf": [INT, {"$ref": "#/definitions/token_range"}, {"type": "null"}]},
            "p99": {"oneOf": [INT, {"$ref": "#/definitions/token_range"}, {"type": "null"}]},
            "line": INT,
        },
        required=["count", "sum", "mean", "p50", "p90", "p99"],
        closed=False,
        nullable=True,
        doc="one marginal of the requests' token counts: count, sum, the exact mean (sum / count), and the p50, p90, p99 by nearest rank (an integer from a log's request lines, a bucket range from a histogram)",
    ),
    "stats_jsonl_fact": obj(
        {
            "source": STR,
            "line": {"type": "integer", "minimum": 1},
            "time": d({"type": ["string", "null"]}, "MM-DD HH:MM:SS as printed; null: none"),
            "process": {"type": ["string", "null"]},  # inline: read alone by JSON Lines readers
            "kind": d(
                STR,
                "stats_engine, prompt_tps, generation_tps, running_reqs, waiting_reqs, swapped_reqs, kv_usage_pct, prefix_hit_pct or preemptions",
            ),
            "value": {"type": ["integer", "number", "string", "boolean"]},
        },
        doc="one line of --stats-jsonl FILE (JSON Lines, not part of the --json document): a fact of a stats line (or of V0's preemption warning) in docs/facts.md's shape, with the input it came from and the line's header time",
    ),
    "kv_list": obj(
        {
            "schema_version": {"const": SCHEMA_VERSION},
            "command": {"enum": ["kv --list-models", "kv --list-gpus"]},
            "models": arr(obj({"model": STR})),
            "gpus": arr(
                obj(
                    {
                        "gpu": STR,
                        "total_gib": {"type": "number", "exclusiveMinimum": 0},
                        "estimate": BOOL,
                        "source": STR,
                    }
                )
            ),
        },
        required=["schema_version", "command"],
        doc="vllm-logread kv --list-models / --list-gpus --json: the shipped model table's names, or the GPU table (each card's memory in GiB as the driver reports it, whether that figure is an estimate, and its source).",
    ),
    "fleet": obj(
        {
            "schema_version": {"const": SCHEMA_VERSION},
            "command": {"const": "read --prometheus"},
            "prometheus": STR,
            "since": STR,
            "window_s": NUM,
            "by": arr(STR),
            "workload": {"type": "object", "required": ["prompt_tokens", "output_tokens"]},
            "servers": arr({"type": "object"}),
            "totals": arr({"type": "object"}),
            "min_users_failed": NSTR,
        },
        doc="vllm-logread --prometheus URL --json: one row per server Prometheus scrapes (its pool, users, the window's peaks and preemptions) and a total per model.",
    ),
    "simulate": obj(
        {
            "schema_version": {"const": SCHEMA_VERSION},
            "command": {"const": "simulate"},
            "source": STR,
            "pool": obj(
                {
                    "num_blocks": {"type": "integer", "minimum": 1},
                    "usable_blocks": {"type": "integer", "minimum": 0},
                    "block_size": {"type": "integer", "minimum": 1},
                    "groups": arr(
                        obj(
                            {
                                "kind": STR,
                                "block_size": {"type": "integer", "minimum": 1},
                                "window_tokens": NINT,
                            },
                            closed=False,
                        )
                    ),
                },
                closed=False,
            ),
            "scheduler": obj(
                {
                    "max_num_seqs": {"type": "integer", "minimum": 1},
                    "max_num_batched_tokens": {"type": "integer", "minimum": 1},
                    "enable_chunked_prefill": BOOL,
                },
                closed=False,
            ),
            "load": obj(
                {
                    "prompt_tokens": {"type": "integer", "minimum": 1},
                    "output_tokens": {"type": "integer", "minimum": 1},
                    "users": NINT,
                    "requests": NINT,
                    "rounds": NINT,
                    "arrival_interval_steps": NNUM,
                    "sizes": {"type": "array"},
                },
                closed=False,
            ),
            "peak_running": {"type": "integer", "minimum": 0},
            "peak_running_held": {"type": "integer", "minimum": 0},
            "settled_running": NINT,
            "preemptions": {"type": "integer", "minimum": 0},
            "recomputed_tokens": {"type": "integer", "minimum": 0},
            "finished": {"type": "integer", "minimum": 0},
            "plateaus": {"type": "array"},
            "steps": {"type": "array"},
        },
        required=[
            "schema_version",
            "command",
            "source",
            "pool",
            "scheduler",
            "load",
            "peak_running",
            "settled_running",
            "preemptions",
            "finished",
            "steps",
        ],
        closed=False,
        doc="vllm-logread simulate LOG --json: vLLM's scheduler replayed over the log's KV pool (pool, scheduler limits, the load), its peak, settle, preemptions and, per step, running and KV usage.",
    ),
    "longest_request": obj(
        {
            "tokens": d(NINT, "null: no limit from the pool (every group is capped)"),
            "blocks": NINT,
            "usable_blocks": NINT,
            "max_model_len": NINT,
            "below_max_model_len": BOOL,
            "safe_max_model_len": NINT,
            "vllm_estimate_tokens": NINT,
            "max_num_batched_tokens": NINT,
            "is_checked": d(
                NBOOL,
                "vLLM's printed estimate re-derived from the memory and the model's KV cache groups: true it was, false it was not (the tool's assumption is wrong; vLLM's figure stands), null not derivable (the model's shape or the memory unknown); true on a served boot",
            ),
        },
        doc="The longest request (prompt + output tokens) that can ever run alone: the largest length whose blocks vLLM budgets (sliding groups with their in-flight reserve, Mamba groups their align pages) fit the usable blocks. When it is below max_model_len, vLLM accepts longer requests that wait forever; safe_max_model_len is the --max-model-len that avoids it. On a boot refused for a too-small KV cache, tokens is vLLM's printed estimated maximum model length (vllm_estimate_tokens) once the arithmetic agrees with it.",
    ),
}
HEAD: Final[JSONObject] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "vllm-logread/report.schema.json",
    "title": "vllm-logread JSON output (every command)",
    "description": "What --json (= --format json) prints: one object in every mode. One boot: a report; several inputs or boots: {\"servers\": [...], \"total\": {...}}; a sweep adds \"sweep\": [rows] to either. Every number is a fact from a log line (listed under facts, with its line) or the result of the formula in arithmetic. null means unknown. vllm-logread diff OLD NEW --json prints a diff object: both reports, the rows side by side and the explanation of the pool's change. Folded vs streamed: from a log, facts lists the boot's own lines (its start, pool and memory lines, up to its first stats line or 5,000 lines past its report) and the first 1,000 stats lines' facts (a bug report's capture whole); every stats line is folded into load and the request lines into observed_workload, so the document and the memory behind it stop growing after 1,000 stats lines (before issue 28 facts held every stats and request line's facts). Every stats line's facts are streamed instead with --stats-jsonl FILE: one stats_jsonl_fact a line, written as read. vllm-logread kv MODEL --json prints a kv object, kv --list-models/--list-gpus --json a kv_list, simulate LOG --json a simulate object, --prometheus URL --json a fleet object; every one carries schema_version and (but read's report) the command that printed it.",
    "oneOf": [
        {"$ref": "#/definitions/report"},
        {"$ref": "#/definitions/servers"},
        {"$ref": "#/definitions/kv"},
        {"$ref": "#/definitions/diff"},
        {"$ref": "#/definitions/simulate"},
        {"$ref": "#/definitions/kv_list"},
        {"$ref": "#/definitions/fleet"},
    ],
}


def schema_of(hint: object, *, nullable: bool = False) -> JSONObject:
    """The schema of a type hint: int, float, str, bool, a Literal, ``X | None``,
    ``tuple[X, ...]``, ``tuple[X, X]`` or a result dataclass whose fields say their
    JSON (report/model.py's JSON / NOT_JSON metadata)."""
    args = get_args(hint)
    if get_origin(hint) in (types.UnionType, typing.Union) and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return schema_of(inner, nullable=True)
    if isinstance(hint, type) and hint in _TYPES:
        return _TYPES[hint][nullable]
    if _is_words(hint):
        # A finding is written as its words (render/words.py), a string as it is.
        return _TYPES[str][nullable]
    if get_origin(hint) is Literal:
        return {"enum": [*args, None] if nullable else list(args)}
    if get_origin(hint) is tuple:
        if args[-1] is Ellipsis:
            return arr(schema_of(args[0]))
        return {**arr(schema_of(args[0])), "minItems": len(args), "maxItems": len(args)}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _object_of(hint, nullable=nullable)
    raise TypeError(f"no JSON schema for {hint!r}: declare it in render/json_schema.py")


def _is_words(hint: object) -> bool:
    """A Finding, or a union of findings and str: written as a string."""
    if get_origin(hint) in (types.UnionType, typing.Union):
        return all(_is_words(a) for a in get_args(hint))
    return hint is str or (isinstance(hint, type) and issubclass(hint, Finding))


def _fields(cls: type) -> dict[str, dataclasses.Field[object]]:
    return {f.name: f for f in dataclasses.fields(cls)}


def _hint(cls: type, name: str) -> object:
    """The type hint of a field or property of one of report/model.py's classes (their
    hints are strings: ``from __future__ import annotations``)."""
    attr = getattr(cls, name, None)
    if isinstance(attr, property) and attr.fget is not None:
        return typing.get_type_hints(attr.fget)["return"]
    return eval(str(_fields(cls)[name].type), vars(model))


def _with_doc(schema: JSONObject, doc: object) -> JSONObject:
    return schema if doc is None else d(schema, str(doc))


def _object_of(cls: type, *, nullable: bool = False) -> JSONObject:
    """A dataclass written field by field (render/json.py's walker): every JSON field
    present, nothing else."""
    props: JSONObject = {
        f.name: _with_doc(schema_of(_hint(cls, f.name)), f.metadata.get("doc"))
        for f in dataclasses.fields(cls)
        if f.metadata.get("json") is True
    }
    return obj(props, nullable=nullable)


def key_schema(key: ReportKey) -> JSONObject:
    """One report key's schema: declared above, or from its result field's hint."""
    if key.name in REPORT_PARTS:
        return REPORT_PARTS[key.name]
    attr = key.attr or key.name
    field, prop = _fields(model.Report).get(attr), getattr(model.Report, attr, None)
    if field is None and not isinstance(prop, property):
        raise TypeError(f"report key {key.name}: declare its schema in REPORT_PARTS")
    meta = {} if field is None else field.metadata
    doc = prop.__doc__ if field is None else meta.get("doc")
    if "schema" in meta:
        return _with_doc(dict(meta["schema"]), doc)
    hint = _hint(model.Report, attr)
    if key.when == "always" and get_origin(hint) is not tuple:
        # Null without a report (an input that never reached its KV pool).
        return _with_doc(schema_of(hint, nullable=True), doc)
    if get_origin(hint) in (types.UnionType, typing.Union):
        # Present only when known: never null.
        (hint,) = [a for a in get_args(hint) if a is not type(None)]
    return _with_doc(schema_of(hint), doc)


def report_schema() -> JSONObject:
    """The ``report`` definition: REPORT_KEYS' keys in their order, those written
    whether or not the input reached a report required, nothing else allowed."""
    return {
        "type": "object",
        "description": REPORT_DOC,
        "required": [k.name for k in REPORT_KEYS if k.when == "always"],
        "properties": {k.name: key_schema(k) for k in REPORT_KEYS},
        "additionalProperties": False,
    }


def schema() -> JSONObject:
    """The whole schema document."""
    defs: JSONObject = {
        "fact": DEFINITIONS["fact"],
        "nint": {"type": ["integer", "null"]},
        "nnum": {"type": ["number", "null"]},
        "nstr": {"type": ["string", "null"]},
        "report": report_schema(),
    }
    defs.update((k, v) for k, v in DEFINITIONS.items() if k != "fact")
    return {**HEAD, "definitions": defs, "type": "object"}


def _compact(value: JSONValue, indent: str = "", key: str = "") -> str:
    """JSON text with every object or array that fits in 120 columns on one line."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(indent + key + flat) <= 120 or not isinstance(value, dict | list) or not value:
        return key + flat
    inner = indent + "  "
    if isinstance(value, dict):
        rows = [inner + _compact(v, inner, json.dumps(k) + ": ") for k, v in value.items()]
        return key + "{\n" + ",\n".join(rows) + f"\n{indent}}}"
    rows = [inner + _compact(v, inner) for v in value]
    return key + "[\n" + ",\n".join(rows) + f"\n{indent}]"


def schema_text() -> str:
    """The schema file's text, as shipped."""
    return _compact(schema()) + "\n"


def main(argv: list[str]) -> int:
    """``python -m vllm_logread.render.json_schema [--check]``: write the schema
    (or, with --check, exit 1 when the shipped one differs)."""
    text = schema_text()
    if "--check" in argv:
        return 0 if PATH.read_text(encoding="utf-8") == text else 1
    PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
