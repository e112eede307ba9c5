"""--target-users: the smallest changes that reach a number of users."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from ..errors import LogReadError
from ..jsontypes import JSONObject
from .basis import Basis, Change
from .gpus import Gpu, all_gpus
from .whatif import TARGET_UTILIZATION, WhatIf, evaluate

TARGET_TP_SIZES = (2, 4, 8)


# The cards --target-users proposes (data-centre GPUs of the table), when
# they hold at least this much more than the log's card.
TARGET_GPUS = ("L40S", "A100-40GB", "A100-80GB", "H100-80GB", "H200", "B200")


TARGET_GPU_MIN_EXTRA_GIB = 4.0


MAX_PLAN_ROWS = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetPlan:
    """The smallest changes that reach ``target_users``.

    Attributes:
        target_users: what was asked.
        users: what fits now.
        options: changes that reach it, none a superset of another, cheapest first.
        replicas: copies of this server (data parallel) that reach it.
        note: what was searched, and what was left out.
    """

    target_users: int
    users: int
    options: tuple[WhatIf, ...]
    replicas: int | None
    note: str
    kv_cache_memory: KVMemoryForTarget | None = None
    # What one TP rank runs on: "GPU", or "CPU rank" on vLLM's CPU backend.
    rank_word: str = "GPU"

    def to_json(self) -> JSONObject:
        return {
            "target_users": self.target_users,
            "users": self.users,
            "reached": self.users >= self.target_users,
            "options": [o.to_json() for o in self.options],
            "replicas": self.replicas,
            "note": self.note,
            "kv_cache_memory": None
            if self.kv_cache_memory is None
            else self.kv_cache_memory.to_json(),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class KVMemoryForTarget:
    """Sizing backwards: the ``--kv-cache-memory-bytes`` that holds the target.

    ``num_blocks`` is the smallest pool (per engine, null block included) in which
    ``users_per_engine`` users of the workload fit as vLLM charges them; the bytes
    are those blocks at this log's bytes per block on one GPU. One user's worth of
    blocks fewer holds one user fewer.
    """

    users_per_engine: int
    num_blocks: int
    kv_cache_memory_bytes: int
    available_kv_gib: float | None
    arithmetic: str

    @property
    def exceeds_available(self) -> bool | None:
        """More KV memory than the log's card has for the KV cache (None: unknown).

        The log's figure is printed to 2 decimals (3.31 GiB is [3.305, 3.315)):
        only bytes past its upper end are surely more.
        """
        if self.available_kv_gib is None:
            return None
        return self.kv_cache_memory_bytes >= (self.available_kv_gib + 0.005) * (1 << 30)

    def to_json(self) -> JSONObject:
        return {
            "users_per_engine": self.users_per_engine,
            "num_blocks": self.num_blocks,
            "kv_cache_memory_bytes": self.kv_cache_memory_bytes,
            "max_num_seqs": self.users_per_engine,
            "available_kv_gib": self.available_kv_gib,
            "exceeds_available": self.exceeds_available,
            "arithmetic": self.arithmetic,
        }


def kv_memory_for_target(b: Basis, target: int) -> KVMemoryForTarget | None:
    """The smallest pool that holds ``target`` users over the engines, in bytes.

    Seed (1 null block, 40 blocks a user of 512 + 128 holding 639 tokens,
    2,359,296 B a block): 100
    users = 100 x 40 + 1 = 4,001 blocks = 9,439,543,296 B; 3,999 + 1 = 4,000 blocks
    hold 99.
    """
    if b.bytes_per_block is None or target <= 0:
        return None
    per_engine = math.ceil(target / b.num_engines)
    low, high = 1, 1
    while b.fit(high).users < per_engine:
        high *= 2
        if high > 1 << 40:
            return None
    while low < high:  # users grow with the pool: the smallest pool that holds them
        mid = (low + high) // 2
        if b.fit(mid).users >= per_engine:
            high = mid
        else:
            low = mid + 1
    nbytes = low * b.bytes_per_block
    # On vLLM's CPU backend the KV space is what --kv-cache-memory-bytes (or
    # VLLM_CPU_KVCACHE_SPACE) sets, bounded by the machine's free RAM, which no log
    # states: the log's KV memory is no card's limit there.
    avail = None if b.is_cpu else b.available_kv_gib
    cpu_note = (
        f"; on the CPU backend the machine needs {nbytes / (1 << 30):.2f} GiB of free RAM for it"
        if b.is_cpu
        else ""
    )
    fits = (
        cpu_note
        if avail is None
        else f"; the log's KV memory is {avail} GiB"
        + (
            " (enough)"
            if nbytes <= avail * (1 << 30)
            else f" ({nbytes / (1 << 30):.2f} GiB needed)"
        )
    )
    return KVMemoryForTarget(
        users_per_engine=per_engine,
        num_blocks=low,
        kv_cache_memory_bytes=nbytes,
        available_kv_gib=avail,
        arithmetic=f"{per_engine:,} users per engine need {low:,} blocks (null block included) x "
        f"{b.bytes_per_block:,} B = {nbytes:,} B per {b.rank_word}{fits}",
    )


def _rank(value: object, order: Sequence[object]) -> int:
    return order.index(value)


_R = TypeVar("_R")


def _memoized(resolver: Callable[..., _R]) -> Callable[..., _R]:
    """The resolver, each (model, TP, KV dtype) looked up once: the plan tries
    a few hundred combinations of a handful of shapes."""
    results: dict[Hashable, _R] = {}
    errors: dict[Hashable, LogReadError] = {}

    def call(*args: Hashable, **kwargs: Hashable) -> _R:
        key = (args, tuple(sorted(kwargs.items())))
        if key not in results and key not in errors:
            try:
                results[key] = resolver(*args, **kwargs)
            except LogReadError as err:
                errors[key] = err
        if key in errors:
            raise errors[key]
        return results[key]

    return call


@dataclass(frozen=True, slots=True, kw_only=True)
class _Axes:
    """What each change can be (None / False: as the log ran), in the order tried,
    and the changes left out with why."""

    kv_cache_dtypes: tuple[str | None, ...]
    weights_fp8: tuple[bool, ...]
    utilizations: tuple[float | None, ...]
    gpus: tuple[Gpu | None, ...]
    tensor_parallel_sizes: tuple[int | None, ...]
    left_out: tuple[str, ...]

    def rank(self, ch: Change) -> tuple[int, ...]:
        """Each change's place on its axis: a plan no bigger on every axis beats it."""
        return (
            _rank(ch.kv_cache_dtype, self.kv_cache_dtypes),
            _rank(ch.weights_fp8, self.weights_fp8),
            _rank(ch.gpu_memory_utilization, self.utilizations),
            _rank(ch.gpu, self.gpus),
            _rank(ch.tensor_parallel_size, self.tensor_parallel_sizes),
        )


def _axes(b: Basis) -> _Axes:
    """FP8 KV, FP8 weights, utilization 0.95, bigger GPUs and TP 2/4/8, as this log allows."""
    left_out: list[str] = []
    kv_opts: list[str | None] = [None] if b.kv_is_fp8 else [None, "fp8"]
    w_opts = [False]
    if b.weights_gib is not None and not b.quantization:
        w_opts.append(True)
    elif b.quantization:
        left_out.append(f"FP8 weights (already quantized: {b.quantization})")
    u_opts: list[float | None] = [None]
    g_opts: list[Gpu | None] = [None]
    now_gib = b.total_gpu_gib
    if now_gib is not None:
        if b.utilization < TARGET_UTILIZATION:
            u_opts.append(TARGET_UTILIZATION)
        bigger = [
            g
            for g in all_gpus()
            if g.name in TARGET_GPUS and g.total_gib >= now_gib + TARGET_GPU_MIN_EXTRA_GIB
        ]
        bigger.sort(key=lambda g: g.total_gib)
        g_opts.extend(bigger)
    else:
        left_out.append(
            "utilization and bigger GPUs (the log does not state the GPU's total memory; "
            "pass --gpu NAME)"
        )
    t_opts: list[int | None] = [None]
    if b.spec is not None and b.spec_resolver is not None:
        t_opts += [t for t in TARGET_TP_SIZES if t > b.tensor_parallel_size]
    else:
        left_out.append("tensor parallelism (the model's KV shape is unknown)")
    return _Axes(
        kv_cache_dtypes=tuple(kv_opts),
        weights_fp8=tuple(w_opts),
        utilizations=tuple(u_opts),
        gpus=tuple(g_opts),
        tensor_parallel_sizes=tuple(t_opts),
        left_out=tuple(left_out),
    )


def _reaching(b: Basis, axes: _Axes, target: int) -> list[WhatIf]:
    """Every combination of changes that reaches ``target``, none a superset of
    another, the fewest GPUs (then the least memory, the fewest changes) first."""
    found: list[tuple[tuple[int, ...], Change, WhatIf]] = []
    combos = itertools.product(
        axes.kv_cache_dtypes,
        axes.weights_fp8,
        axes.utilizations,
        axes.gpus,
        axes.tensor_parallel_sizes,
    )
    for kv, wf, u, g, t in combos:
        ch = Change(
            kv_cache_dtype=kv,
            weights_fp8=wf,
            gpu_memory_utilization=u,
            gpu=g,
            tensor_parallel_size=t,
        )
        if ch.num_changes == 0:
            continue
        wi = evaluate(b, ch)
        if wi.users is None or wi.users < target:
            continue
        found.append((axes.rank(ch), ch, wi))
    minimal = [
        (k, ch, wi)
        for k, ch, wi in found
        if not any(o != k and all(a <= c for a, c in zip(o, k, strict=True)) for o, _, _ in found)
    ]

    def cost(item: tuple[tuple[int, ...], Change, WhatIf]) -> tuple[float, ...]:
        _, ch, wi = item
        total = ch.new_total_gib or b.total_gpu_gib or 0.0
        return (wi.num_gpus or b.num_gpus, total, ch.num_changes, -(wi.users or 0))

    minimal.sort(key=cost)
    return [wi for _, _, wi in minimal]


def _note(
    b: Basis, *, now: int, pool_now: int, target: int, left_out: Sequence[str]
) -> tuple[str, int | None]:
    """What was searched and left out, and the copies of this engine that reach
    ``target`` (data parallel), with their number."""
    per_engine = now // b.num_engines
    replicas = math.ceil(target / per_engine) if per_engine > 0 else None
    pool_all = pool_now * b.num_engines
    note_parts = [
        f"searched: FP8 KV cache, FP8 weights, utilization up to 0.95, bigger GPUs "
        f"({', '.join(TARGET_GPUS)}), TP 2/4/8, alone and combined; listed: the ones no "
        "smaller change beats"
    ]
    if now >= target:
        note_parts = [f"{now} users fit already"]
        left_out = []
    elif pool_all >= target:
        per = " per engine" if b.num_engines > 1 else ""
        note_parts = [
            f"the pool holds {pool_all:,} users already: --max-num-seqs "
            f"{math.ceil(target / b.num_engines):,}{per} admits them"
        ]
        left_out = []
    if left_out:
        note_parts.append("left out: " + "; ".join(left_out))
    if replicas is not None and pool_all < target:
        gpus = replicas * b.tensor_parallel_size * b.pipeline_parallel_size
        note_parts.append(
            f"or {replicas} copies of this engine behind a load balancer (data parallel): "
            f"{replicas:,} x {per_engine:,} = {replicas * per_engine:,} users on {gpus:,} "
            f"{b.rank_word}s, exact"
        )
    return "; ".join(note_parts), replicas


def plan_for_target(b: Basis, target: int) -> TargetPlan:
    """Search FP8 KV, FP8 weights, utilization 0.95, bigger GPUs and TP 2/4/8,
    alone and combined, for the smallest changes that reach ``target`` users.

    ``now`` is the answer (the pool's users capped by max_num_seqs); each
    change is searched on the pool alone, since every plan sets
    ``--max-num-seqs`` to its users.
    """
    pool_now = b.fit(b.num_blocks).users
    now = b.capped(pool_now)
    b = replace(b, max_num_seqs=None)
    if b.spec_resolver is not None:
        b = replace(b, spec_resolver=_memoized(b.spec_resolver))
    axes = _axes(b)
    options = _reaching(b, axes, target) if pool_now * b.num_engines < target else []
    note, replicas = _note(b, now=now, pool_now=pool_now, target=target, left_out=axes.left_out)
    return TargetPlan(
        target_users=target,
        users=now,
        options=tuple(options[:MAX_PLAN_ROWS]),
        replicas=replicas,
        note=note,
        kv_cache_memory=kv_memory_for_target(b, target),
        rank_word=b.rank_word,
    )
