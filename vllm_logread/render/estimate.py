"""``vllm-logread kv MODEL --gpu NAME``: the boot estimate as text and as JSON.

Every figure that a boot log will replace is printed with ``~`` and its range;
the lines stay within 100 columns (sources are wrapped beneath their figure).
"""

from __future__ import annotations

import textwrap

from ..jsontypes import JSONObject
from ..report.estimate import BootEstimate, Figure, Outcome
from ..vllm.rules import max_num_batched_tokens_source
from .words import word

WIDTH = 100

_LABELS = {
    "weights": "weights",
    "activation_peak": "activation",
    "non_torch": "non-torch",
    "cuda_graph": "CUDA graphs",
    "kv_margin": "KV margin",
}


def _wrap(text: str, indent: int = 18) -> list[str]:
    return textwrap.wrap(
        text, width=WIDTH, initial_indent=" " * indent, subsequent_indent=" " * indent
    )


def _span(lo: float | None, hi: float | None, fmt: str = ",.0f") -> str:
    if lo is None and hi is None:
        return "unknown"
    if lo is None:
        return f"at most {format(hi, fmt)}"
    if hi is None:
        return f"at least {format(lo, fmt)}"
    if format(lo, fmt) == format(hi, fmt):
        return format(lo, fmt)
    sep = " to " if lo < 0 else "-"  # "-0.25 to 4.41", not "-0.25-4.41"
    return f"{format(lo, fmt)}{sep}{format(hi, fmt)}"


def _figure(f: Figure, explain: bool) -> list[str]:
    mark = "~" if f.is_estimate else ""
    span = _span(f.low_gib, f.high_gib, ".2f")
    head = f"  - {_LABELS.get(f.name, f.name) + ':':14} {mark}{f.gib:.2f} GiB"
    if span != f"{f.gib:.2f}":
        head += f" ({span})"
    if explain or not f.brief:
        return [head, *_wrap(f.source)]
    if len(head) + 2 + len(f.brief) <= WIDTH:
        return [f"{head}: {f.brief}"]
    return [head, *_wrap(f.brief)]


def _ends(e: BootEstimate, attr: str) -> tuple[float | None, float | None]:
    """(worst, best) of an outcome attribute; the worst is None when unbounded."""
    worst = None if e.worst is None else getattr(e.worst, attr)
    best = None if e.best is None else getattr(e.best, attr)
    return worst, best


def estimate_text(e: BootEstimate, *, explain: bool = False) -> str:
    """The estimate for a person: the answer first, then the budget line by line;
    ``explain`` adds each figure's full source (the logs it was fitted to)."""
    lines = _headline(e)
    lines.extend(_budget(e, explain))
    lines.extend(_pool(e))
    lines.extend(_limits(e, explain))
    lines.extend(_replaced_by(e))
    if not explain:
        lines.append("(--explain: where each estimate comes from, the logs it was fitted to)")
    return "\n".join(lines)


def _headline(e: BootEstimate) -> list[str]:
    """The answer first: the users, or why the boot would fail or they are unknown."""
    w = e.workload
    lines: list[str] = []
    c = e.central
    if c is None or e.weights is None:
        lines.append("== estimate before the boot: users unknown")
        lines.extend(_wrap(e.unknown, 3))
    elif e.best is not None and e.best.num_blocks == 0:
        room = (
            "the weights alone exceed the GPU"
            if e.weights.low_gib > e.gpu.total_gib
            else "no room for the KV cache"
        )
        lines.append(
            f"== estimate before the boot: the boot would fail on {e.tensor_parallel_size} x "
            f"{e.gpu.name}: {room}"
        )
    elif e.max_len_fits == "no":
        lines.append(
            f"== estimate before the boot: the boot would fail: max_model_len "
            f"{e.max_model_len:,} does not fit (~{e.estimated_max_model_len or 0:,} does)"
        )
    else:
        lo_u, hi_u = _ends(e, "users")
        lines.append(
            f"== estimate before the boot: ~{c.users:,} users ({_span(lo_u, hi_u)}) at "
            f"{w.prompt_tokens:,} prompt + {w.output_tokens:,} output tokens"
        )
    lines.extend(
        _wrap(
            f"{e.model} on {e.tensor_parallel_size} x {e.gpu.name}, vLLM {e.vllm_version}'s "
            "rules; ~ = an estimate",
            3,
        )
    )
    return lines


def _budget(e: BootEstimate, explain: bool) -> list[str]:
    """The GPU memory and what takes it before the KV cache: weights, then overheads."""
    lines: list[str] = []
    util_why = (
        "--gpu-memory-utilization"
        if e.utilization_source == "--gpu-memory-utilization"
        else f"vLLM {e.vllm_version}'s default"
    )
    lines.append(
        f"  GPU memory:      {e.gpu.total_gib:.2f} GiB x {e.gpu_memory_utilization:.2f} "
        f"({util_why}) = {e.requested_gib:.2f} GiB per GPU"
    )
    if explain:
        lines.extend(_wrap(f"total: {e.gpu.source}; utilization: {e.utilization_source}"))
    if e.weights is not None:
        lines.extend(_figure(e.weights, explain))
    else:
        lines.append("  - weights:        unknown")
        lines.extend(_wrap(e.unknown))
    for f in e.overheads:
        lines.extend(_figure(f, explain))
    return lines


def _pool(e: BootEstimate) -> list[str]:
    """What is left for the KV cache: GiB, blocks, pool tokens, and users by the blocks."""
    c = e.central
    if c is None:
        return []
    lines: list[str] = []
    lo_kv, hi_kv = _ends(e, "available_kv_bytes")
    gib = 1 << 30
    lines.append(
        f"  = KV cache:      ~{c.available_kv_bytes / gib:.2f} GiB per GPU ("
        + _span(
            None if lo_kv is None else lo_kv / gib, None if hi_kv is None else hi_kv / gib, ".2f"
        )
        + ")"
    )
    lo_b, hi_b = _ends(e, "num_blocks")
    lines.append(
        f"  blocks:          ~{c.num_blocks:,} ({_span(lo_b, hi_b)}) of {e.block_size} tokens, "
        f"{e.layout.bytes_per_block:,} B each, {e.layout.num_groups} KV cache group(s)"
    )
    lo_p, hi_p = _ends(e, "pool_tokens")
    pool = "unknown" if c.pool_tokens is None else f"~{c.pool_tokens:,}"
    lines.append(f"  KV pool:         {pool} tokens ({_span(lo_p, hi_p)})")
    if c.capacity is not None:
        cap = c.capacity
        usable = (
            f"({cap.num_blocks:,} - 1 null)"
            if cap.usable_blocks < cap.num_blocks
            else f"{cap.num_blocks:,}"
        )
        lines.append(
            f"  per user:        {cap.tokens_held:,} tokens = "
            f"{cap.blocks_per_user:,} blocks;"
            f" {usable} // {cap.blocks_per_user:,} = {cap.users:,} users"
        )
    return lines


def _limits(e: BootEstimate, explain: bool) -> list[str]:
    """The limits beside the pool (max_num_seqs, max_model_len), then suggestions and notes."""
    lines: list[str] = []
    c = e.central
    capped = c is not None and c.capacity is not None and c.capacity.users > e.max_num_seqs
    lines.append(
        f"  max_num_seqs:    {e.max_num_seqs:,}"
        + (
            f": caps the {c.capacity.users:,} users the blocks hold"
            if capped and c and c.capacity
            else ""
        )
    )
    if explain:
        lines.extend(_wrap(e.max_num_seqs_source))
    if e.max_model_len:
        verdict = {
            "yes": "one request fits at every end of the range",
            "likely": "one request fits unless the profile takes far more (no upper bound here)",
            "maybe": "may not fit (see below)",
            "no": "does not fit (see below)",
            "unknown": "fit unknown",
        }[e.max_len_fits]
        lines.append(f"  max_model_len:   {e.max_model_len:,}: {verdict}")
        if explain:
            lines.extend(_wrap(e.max_model_len_source))
    if e.max_len_message:
        lines.extend(_wrap(e.max_len_message, 2))
    if e.suggestion:
        lines.extend(
            textwrap.wrap(
                f"more GPUs: {e.suggestion}",
                width=WIDTH,
                initial_indent="  ",
                subsequent_indent="    ",
            )
        )
    for note in e.notes:
        lines.extend(_wrap(f"note: {word(note)}", 2))
    return lines


def _replaced_by(e: BootEstimate) -> list[str]:
    """What the boot log will say instead of each estimate, and the pool line to expect."""
    c = e.central
    lines = ["The boot log replaces every estimate:"]
    for f in ((e.weights,) if e.weights else ()) + e.overheads:
        if f.is_estimate:
            lines.extend(
                textwrap.wrap(
                    f"{_LABELS.get(f.name, f.name)}: {f.replaced_by}",
                    width=WIDTH,
                    initial_indent="  ",
                    subsequent_indent="    ",
                )
            )
    if c is not None and e.prints_blocks:
        lo_b, hi_b = _ends(e, "num_blocks")
        lines.append(
            f"  and it will print about: # GPU blocks: {_span(lo_b, hi_b)} (~{c.num_blocks:,}; "
            "vLLM before 0.8)"
        )
    elif c is not None and c.pool_tokens is not None:
        lo_p, hi_p = _ends(e, "pool_tokens")
        lines.append(
            f"  and it will print about: GPU KV cache size: {_span(lo_p, hi_p)} tokens "
            f"(~{c.pool_tokens:,})"
        )
    return lines


def _outcome_json(o: Outcome | None) -> JSONObject | None:
    return None if o is None else o.to_json()


def estimate_json(e: BootEstimate) -> JSONObject:
    """The estimate as the ``boot_estimate`` object of ``kv --json``."""
    return {
        "is_estimate": True,
        "gpu": {"name": e.gpu.name, "total_gib": e.gpu.total_gib, "source": e.gpu.source},
        "vllm_version": e.vllm_version,
        "tensor_parallel_size": e.tensor_parallel_size,
        "gpu_memory_utilization": e.gpu_memory_utilization,
        "gpu_memory_utilization_source": e.utilization_source,
        "requested_gib": round(e.requested_gib, 4),
        "weights": None if e.weights is None else e.weights.to_json(),
        "overheads": [f.to_json() for f in e.overheads],
        "block_size": e.block_size,
        "bytes_per_block": e.layout.bytes_per_block,
        "num_kv_cache_groups": e.layout.num_groups,
        "max_model_len": e.max_model_len or None,
        "max_model_len_source": e.max_model_len_source,
        "max_num_seqs": e.max_num_seqs,
        "max_num_seqs_source": e.max_num_seqs_source,
        "max_num_batched_tokens": e.max_num_batched_tokens,
        "max_num_batched_tokens_source": max_num_batched_tokens_source(
            e.max_num_batched_tokens, is_proven=False
        ),
        "workload": {
            "prompt_tokens": e.workload.prompt_tokens,
            "output_tokens": e.workload.output_tokens,
        },
        "central": None if e.central is None else _outcome_json(e.central),
        "best": None if e.best is None else e.best.to_json(),
        "worst": None if e.worst is None else e.worst.to_json(),
        "users": e.users,
        "max_model_len_blocks": e.max_len_blocks or None,
        "max_model_len_fits": e.max_len_fits,
        "max_model_len_message": e.max_len_message,
        "estimated_max_model_len": e.estimated_max_model_len,
        "unknown": e.unknown or None,
        "notes": [word(n) for n in e.notes],
        "suggestion": e.suggestion or None,
    }


__all__ = ["estimate_json", "estimate_text"]
