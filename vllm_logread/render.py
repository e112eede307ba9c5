"""Report -> text for a person, and the JSON object of the contract.

The text is short: what vLLM's figure assumes, the users that really fit, the
arithmetic, the checks and what to change. The JSON carries the same numbers
plus every fact (FACTS.md), and is printed even for an incomplete log.
"""

from __future__ import annotations

import json
from typing import Any

from .facts import Fact
from .report import Report

SCHEMA_VERSION = 1


def _n(v: int | float | None) -> str:
    if v is None:
        return "unknown"
    if isinstance(v, float):
        return f"{v:,.2f}"
    return f"{v:,}"


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
    return out


def dumps(obj: dict[str, Any]) -> str:
    """JSON text; never NaN (not JSON) - facts are finite by construction."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)


def report_text(report: Report) -> str:
    """The report for a person: the answer first, then how it was reached."""
    r = report
    lines: list[str] = []
    bits = [
        b
        for b in (
            f"vLLM {r.vllm_version}" if r.vllm_version else "",
            r.engine_generation or "",
            r.device or "",
            f"TP={r.tensor_parallel_size}" if r.tensor_parallel_size > 1 else "",
            f"max model len {r.max_model_len:,}" if r.max_model_len else "",
        )
        if b
    ]
    head = r.model or "model not named in the log"
    lines.append(f"== vllm-logread: {head}" + (f" ({', '.join(bits)})" if bits else ""))
    if not r.has_pool:
        lines.append("KV pool:       not in the log")
        return "\n".join(lines) + "\n"
    w, c = r.workload, r.capacity
    pool = f"{_n(r.pool_tokens)} tokens"
    if r.num_blocks is not None and r.block_size and r.block_size > 1:
        # (SGLang's default page is one token: "N blocks of 1 token" says nothing)
        high = r.engines[0].num_blocks_high if r.engines else None
        # A pool decoded from its tokens may be one of several block counts
        # (Gemma 3 on 0.11: 29,760 tokens = 13,020 to 13,026 blocks; it was 13,025).
        blocks = f"{r.num_blocks:,}" if high is None else f"{r.num_blocks:,} to {high:,}"
        pool += f" = {blocks} blocks of {r.block_size} tokens"
    if r.engines and r.engines[0].line:
        pool += f" (line {r.engines[0].line})"
    lines.append(f"KV pool:       {pool}")
    if r.block_size:
        lines.append(f"               block size {r.block_size}: {r.block_size_source}")
    if r.available_kv_gib is not None:
        lines.append(f"               {r.available_kv_gib} GiB of memory for the KV cache")
    if r.vllm_max_concurrency is not None:
        length = r.concurrency_tokens or r.max_model_len
        lines.append(
            f"vLLM says:     {r.vllm_max_concurrency:.2f}x concurrency for {_n(length)} tokens per "
            f"request: users who each fill the whole max model length"
        )
    if r.users is not None and c is not None:
        approx = "" if r.is_exact else " (approximate: this model's layout is not modelled exactly)"
        lines.append(
            f"Users that fit: {r.users} users at {w.prompt_tokens:,} prompt + {w.output_tokens:,} output "
            f"tokens, at the end of their answers{approx}"
        )
        lines.append(
            f"                {r.users_mid_answer} users mid-answer (each holding "
            f"{w.prompt_tokens:,} + {w.output_tokens // 2:,} tokens)"
        )
        if len(r.engines) > 1:
            for e in r.engines:
                lines.append(
                    f"                engine {e.engine}: {_n(e.users)} (pool line {e.line})"
                )
    else:
        lines.append("Users that fit: unknown (see the warnings)")
    for a in r.arithmetic:
        lines.append(f"  how: {a}")
    if r.kv_bytes_per_token is None:
        lines.append(
            "KV per token:  unknown (model shape not found; pass --config PATH/config.json)"
        )
    else:
        lines.append(f"KV per token:  {r.kv_shape}")
        lines.append(f"               from {r.kv_bytes_per_token_source}")
    if r.checks:
        lines.append("Checks:")
        for ch in r.checks:
            lines.append(f"  {ch.status:<7} {ch.name}: {ch.detail}")
    if r.what_if:
        lines.append("What to change:")
        for wi in r.what_if:
            users = "" if wi.users is None else f": {wi.users} users"
            tag = "" if wi.is_exact or wi.users is None else " [estimate]"
            lines.append(f"  {wi.change}{users}{tag} - {wi.note}")
            if wi.arithmetic:
                lines.append(f"      how: {wi.arithmetic}")
    if r.target is not None:
        from .whatif import target_text

        lines.extend(target_text(r.target))
    for warn in r.warnings:
        lines.append(f"warning: {warn}")
    return "\n".join(lines) + "\n"
