"""Does the log agree with the model (CI gates)."""

from __future__ import annotations

from typing import Any

from ..boots import Boot, _mnbt_tried
from ..capacity import max_concurrency, num_blocks_for_memory
from ..errors import LogReadError
from ..read.facts import Fact
from ..rules import concurrency_counts_tokens, max_num_batched_tokens_source
from ..versions import cdiv
from .model import Check

GIB = 1 << 30


def range_check(
    name: str,
    *,
    low: float,
    high: float,
    value: float,
    how: str,
    unit: str,
    stated: str,
    mismatch: str,
    line: int | None,
    value_high: float | None = None,
) -> Check:
    """A check that a stated value lies in what a printed figure allows; a
    value known only as a range (``value``..``value_high``) passes when the
    two ranges meet.

    >>> range_check("x", low=1504, high=1508, value=1506, how="3.31 GiB / 2,359,296 B",
    ...             unit="blocks", stated="the log says", mismatch="no", line=3).status
    'pass'
    >>> range_check("x", low=13021, high=13029, value=13020, value_high=13026, how="15.9 GiB",
    ...             unit="blocks", stated="the pool is", mismatch="no", line=3).detail
    '15.9 GiB = 13,021..13,029 blocks within the printed precision; the pool is 13,020..13,026'
    """
    top = value if value_high is None else value_high
    ok = low <= top and value <= high
    said = f"{value:,}" if value_high is None else f"{value:,}..{value_high:,}"
    return Check(
        name=name,
        status="pass" if ok else "fail",
        detail=f"{how} = {low:,.0f}..{high:,.0f} {unit} within the printed precision; "
        f"{stated} {said}" + ("" if ok else f": {mismatch}"),
        line=line,
    )


def _checks(
    boot: Boot,
    spec: Any,
    num_blocks: int | None,
    block_size: int | None,
    max_model_len: int | None,
    conc_f: Fact | None,
    avail_f: Fact | None,
    pool_tokens: int | None,
    vt: tuple[int, ...] | None,
    gen: str | None,
) -> list[Check]:
    """The uniform layout's checks: vLLM's concurrency recomputed, the pool against
    the KV memory, and blocks against tokens when both are stated."""
    uniform = spec is None or bool(getattr(spec, "is_uniform", True))
    out: list[Check] = []
    if conc_f is not None and num_blocks is not None and block_size and max_model_len:
        out.append(
            _concurrency_check(conc_f, num_blocks, block_size, max_model_len, vt, gen, uniform)
        )
    if spec is not None and avail_f is not None and num_blocks is not None and block_size:
        out.append(_memory_check(spec, avail_f, num_blocks, block_size, uniform))
    blocks_f = boot.first("gpu_blocks")
    if (
        blocks_f is not None
        and pool_tokens is not None
        and boot.first("pool_tokens")
        and block_size
    ):
        ok = int(blocks_f.value) * block_size == pool_tokens
        out.append(
            Check(
                name="blocks_vs_tokens",
                status="pass" if ok else "unknown",
                detail=f"{int(blocks_f.value):,} blocks x {block_size} = "
                f"{int(blocks_f.value) * block_size:,}; the pool line says {pool_tokens:,} tokens",
                line=blocks_f.line,
            )
        )
    return out


def _concurrency_check(
    conc_f: Fact,
    num_blocks: int,
    block_size: int,
    max_model_len: int,
    vt: tuple[int, ...] | None,
    gen: str | None,
    uniform: bool,
) -> Check:
    """vLLM's own max concurrency, recomputed from the pool."""
    printed = float(conc_f.value)
    if not uniform:
        return Check(
            name="max_concurrency",
            status="unknown",
            detail="hybrid layout: vLLM charges each KV cache group separately; "
            "not recomputed here",
            line=conc_f.line,
        )
    per_req = cdiv(max_model_len, block_size)
    old = concurrency_counts_tokens(vt, is_v0=gen == "V0")
    # V0 and V1 before 0.9.1: blocks x block_size / max_model_len;
    # 0.9.1+: blocks / cdiv(max_model_len, block_size).
    ours = num_blocks * block_size / max_model_len if old else num_blocks / per_req
    formula = (
        f"{num_blocks:,} x {block_size} / {max_model_len:,}"
        if old
        else f"{num_blocks:,} blocks / {per_req:,} blocks per {max_model_len:,}-token request"
    )
    alt = num_blocks * block_size / max_model_len
    ok = abs(round(ours, 2) - printed) <= 0.0051 or abs(round(alt, 2) - printed) <= 0.0051
    return Check(
        name="max_concurrency",
        status="pass" if ok else "fail",
        detail=f"{formula} = {ours:.2f}x; the log says {printed:.2f}x"
        + ("" if ok else " (the pool, block size or max model len is not what we think)"),
        line=conc_f.line,
    )


def _memory_check(
    spec: Any, avail_f: Fact, num_blocks: int, block_size: int, uniform: bool
) -> Check:
    """The pool against the KV memory and the model's bytes per token."""
    avail = float(avail_f.value)
    if not uniform:
        return Check(
            name="pool_vs_memory",
            status="unknown",
            detail="hybrid layout: blocks are shared by several KV cache groups; not checked",
            line=avail_f.line,
        )
    if avail <= 0:
        return Check(
            name="pool_vs_memory",
            status="fail",
            detail=f"available KV cache memory is {avail} GiB: no pool can be allocated",
            line=avail_f.line,
        )
    per_block = int(spec.kv_bytes_per_token) * block_size
    return range_check(
        "pool_vs_memory",
        low=int(max(avail - avail_f.half_ulp, 0) * GIB) // per_block,
        high=int((avail + avail_f.half_ulp) * GIB) // per_block,
        value=num_blocks,
        how=f"{avail} GiB / ({int(spec.kv_bytes_per_token):,} B x {block_size} tokens)",
        unit="blocks",
        stated="the log says",
        mismatch="the log does not match this model's KV shape",
        line=avail_f.line,
    )


def _hybrid_checks(
    layout: Any,
    boot: Boot,
    num_blocks: int | None,
    max_model_len: int | None,
    conc_f: Fact | None,
    avail_f: Fact | None,
    version: Any,
    *,
    num_blocks_high: int | None = None,
) -> list[Check]:
    out: list[Check] = []
    if conc_f is not None and num_blocks is not None and max_model_len:
        printed = float(conc_f.value)
        try:
            tried = [
                (
                    max_concurrency(
                        layout,
                        num_blocks=num_blocks,
                        max_model_len=max_model_len,
                        vllm_version=str(version) if version else None,
                        max_num_batched_tokens=mnbt,
                    ),
                    mnbt,
                )
                for mnbt in _mnbt_tried(boot)
            ]
        except LogReadError as err:
            out.append(Check(name="max_concurrency", status="unknown", detail=str(err)))
        else:
            matching = [t for t in tried if abs(round(t[0], 2) - printed) <= 0.0051]
            ours, mnbt = (matching or tried)[0]
            ok = bool(matching)
            windowed = any(g.window_tokens is not None for g in layout.groups)
            assumed = (
                f" (max_num_batched_tokens {mnbt:,}, not stated in the log: "
                f"{max_num_batched_tokens_source(mnbt, is_proven=ok)})"
                if windowed and boot.last("max_num_batched_tokens") is None
                else ""
            )
            out.append(
                Check(
                    name="max_concurrency",
                    status="pass" if ok else "fail",
                    detail=f"{num_blocks:,} blocks over {layout.num_groups} KV cache groups at "
                    f"{max_model_len:,} tokens per request = {ours:.2f}x{assumed}; "
                    f"the log says {printed:.2f}x"
                    + ("" if ok else ": this model's KV layout is not understood for this log"),
                    line=conc_f.line,
                )
            )
    if avail_f is not None and num_blocks is not None and float(avail_f.value) > 0:
        avail = float(avail_f.value)
        out.append(
            range_check(
                "pool_vs_memory",
                low=num_blocks_for_memory(layout, int(max(avail - avail_f.half_ulp, 0) * GIB)),
                high=num_blocks_for_memory(layout, int((avail + avail_f.half_ulp) * GIB)),
                value=num_blocks,
                value_high=num_blocks_high,
                how=f"{avail} GiB / {layout.bytes_per_block:,} B per block",
                unit="blocks",
                stated="the pool is",
                mismatch="the log does not match this model's KV layout",
                line=avail_f.line,
            )
        )
    groups_f = boot.last("kv_group_block_sizes")
    if groups_f is not None:
        out.append(_group_sizes_check(layout, str(groups_f.value), groups_f.line))
    return out


def _group_sizes_check(layout: Any, stated: str, line: int | None) -> Check:
    """vLLM 0.31+'s "kv cache group sizes (...)": the block size of every group."""
    ours = sorted(g.block_size for g in layout.groups)
    theirs = sorted(int(p) for p in stated.split(",") if p.strip())
    ok = ours == theirs
    return Check(
        name="kv_cache_groups",
        status="pass" if ok else "fail",
        detail=f"{layout.num_groups} KV cache groups with block sizes "
        f"{', '.join(map(str, ours))}; the log says {stated}"
        + ("" if ok else ": this model's KV layout is not understood for this log"),
        line=line,
    )
