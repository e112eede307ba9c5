"""One boot resolved once, and its one answer: the users at a workload.

A boot's values (block size, pool, layout, the scheduler's limits, the max model
length) are decided here once, each with where it came from (stated on a line
of the log, given as an option, a default of vLLM's rule, or derived), and
every command reads them from the :class:`ResolvedBoot`: ``read`` and its
what-ifs (report/whatif.basis_for_report), a sweep, the ``--min-users`` gate,
``simulate`` (its pool and scheduler limits) and ``diff`` (the reports' answers).

:func:`answer` is the users at a workload: the pool's users on each
data-parallel engine capped by the requests its scheduler admits at once
(``max_num_seqs``), with the limit that binds named and the pool's own figure
beside it. The L4 gpt-oss-20b sample: 13,708 blocks hold 279 users of 512 +
128, but ``max_num_seqs`` 256 admits 256: the answer is 256, limit
``max_num_seqs``, pool 279.

The stage order holds: this module imports the lower stages (boots, capacity,
kv, read, rules) and report/gpus.py, never report/build.py, report/model.py or
report/whatif.py (which read it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..boot.boots import Boot
from ..boot.fingerprint import VersionRange, version_range
from ..boot.resolve import cpu_max_num_seqs_candidates
from ..boot.state import Sourced, SourceKind
from ..errors import LogReadError
from ..jsontypes import JSONObject
from ..kv.groups import KVCacheLayout
from ..kv.specs import KVSpec
from ..read.facts import Fact
from ..vllm.rules import (
    A100_MAX_GIB,
    BIG_GPU_GIB,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    DEFAULT_MAX_NUM_SEQS_BIG_GPU,
    GPU_MAX_NUM_SEQS_CANDIDATES,
    SMALL_GPU_MAX_NUM_BATCHED_TOKENS,
    BatchDefaults,
    Feature,
    cpu_batch_defaults,
    cpu_mla_max_num_batched_tokens,
    default_max_num_seqs,
    supports,
)
from .budget import MemoryBudget
from .capacity import max_concurrency
from .gpus import Gpu, find_gpu

#: The limit that binds the users at a workload.
Limit = Literal["pool", "max_num_seqs"]


# vLLM's defaults used here are rules.py's: the CPU backend's by release
# (rules.cpu_batch_defaults: 0.9.2's 32 sequences, later 128 per rank, and
# 2,048 batched tokens), a GPU's 256 / 2,048 or, on 70 GiB or more but A100s,
# 1,024 / 8,192.


@dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerLimits:
    """The scheduler's limits for one boot (one data-parallel engine's).

    Attributes:
        max_num_seqs: requests running at once.
        max_num_seqs_candidates: the values vLLM's rule allows for this boot,
            smallest first: one when stated or settled; (256, 1024) when the
            card's memory or name is not known (--gpu NAME settles it).
        max_num_batched_tokens: tokens computed in one step.
        enable_chunked_prefill: whether a prompt is computed in chunks (vLLM on
            CPU turns it off for MLA models, and then takes
            ``max(max_model_len, max_num_batched_tokens)``).
    """

    max_num_seqs: Sourced[int]
    max_num_batched_tokens: Sourced[int]
    enable_chunked_prefill: Sourced[bool]
    max_num_seqs_candidates: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Platform:
    """What vLLM's scheduler defaults depend on, for one boot."""

    boot: Boot
    version: str | None
    generation: str | None
    world_size: int  # tensor x pipeline parallel ranks
    cpu_defaults: BatchDefaults | None  # vLLM's own CPU defaults (rules.cpu_batch_defaults)
    is_cpu: bool  # the pool is in a CPU's memory
    versions: VersionRange | None  # the releases the log can be (fingerprint.version_range)
    gpu: str | Gpu | None
    available_kv: Fact | None
    layout: KVCacheLayout | None
    num_blocks: int | None
    max_model_len: int | None

    def gpu_default(self) -> tuple[int, str, bool]:
        """vLLM's GPU default max_num_seqs, its source, and whether it is settled."""
        return _gpu_max_num_seqs(
            self.boot,
            self.generation,
            self.gpu,
            self.available_kv,
            self.layout,
            self.num_blocks,
            self.max_model_len,
            self.version,
        )

    def is_big_gpu(self, max_num_seqs: int) -> bool:
        """A GPU of 70 GiB or more (not an A100), V1: its default max_num_seqs says so."""
        return max_num_seqs == DEFAULT_MAX_NUM_SEQS_BIG_GPU and self.generation != "V0"


def scheduler_limits(
    boot: Boot,
    *,
    device: str | None,
    generation: str | None,
    tensor_parallel_size: int,
    gpu: str | Gpu | None,
    available_kv: Fact | None,
    layout: KVCacheLayout | None,
    num_blocks: int | None,
    max_model_len: int | None,
    is_mla: bool,
) -> SchedulerLimits:
    """``max_num_seqs`` and ``max_num_batched_tokens`` as vLLM set them for this boot.

    Stated in the log (non-default args, the config line) wins; else vLLM's
    default for ``vllm serve`` on this platform: CPU (0.20+) 128 and 2,048 per
    rank; a GPU by its memory (report/whatif.default_max_num_seqs: 1,024 and
    8,192 on 70 GiB or more but A100s, else 256 and 2,048), the memory from
    the log, ``--gpu``, or the weights + KV cache the log states.
    """
    version = boot.value("vllm_version")
    version_s = str(version) if version else None
    pp_v = boot.value("pipeline_parallel_size")
    world = max(tensor_parallel_size, 1) * (int(pp_v) if isinstance(pp_v, int) and pp_v > 0 else 1)
    is_cpu = (device or "").upper() == "CPU"
    platform = _Platform(
        boot=boot,
        version=version_s,
        generation=generation,
        world_size=world,
        cpu_defaults=cpu_batch_defaults(version_s, generation, world_size=world)
        if is_cpu
        else None,
        is_cpu=is_cpu,
        versions=version_range(boot),
        gpu=gpu,
        available_kv=available_kv,
        layout=layout,
        num_blocks=num_blocks,
        max_model_len=max_model_len,
    )
    seqs, candidates, big = _max_num_seqs(platform)
    mnbt = _max_num_batched_tokens(platform, big)
    chunked = not (is_cpu and is_mla)
    if not chunked and boot.last("max_num_batched_tokens") is None and max_model_len:
        # vLLM 0.32 platforms/cpu.py turns chunked prefill off for MLA models;
        # then a whole prompt must fit one step: max(max_model_len, the default).
        mnbt = Sourced(
            value=max(cpu_mla_max_num_batched_tokens(max_model_len), mnbt.value),
            kind="derived",
            source=f"max(max_model_len {max_model_len:,}, {mnbt.value:,}): vLLM on CPU turns "
            "chunked prefill off for MLA models",
        )
    return SchedulerLimits(
        max_num_seqs=seqs,
        max_num_batched_tokens=mnbt,
        enable_chunked_prefill=Sourced(
            value=chunked,
            kind="default",
            source="vLLM's default"
            if chunked
            else "off: vLLM on CPU turns chunked prefill off for MLA models",
        ),
        max_num_seqs_candidates=candidates or (seqs.value,),
    )


def _max_num_seqs(p: _Platform) -> tuple[Sourced[int], tuple[int, ...], bool | None]:
    """max_num_seqs stated, else vLLM's default on CPU or on this GPU; the values
    vLLM's rule allows when the card is not settled; and whether the card is big
    (None: not looked at)."""
    seqs_f = p.boot.last("max_num_seqs")
    if seqs_f is not None:
        return (
            Sourced(value=int(seqs_f.value), kind="stated", source=f"line {seqs_f.line}"),
            (),
            None,
        )
    if p.cpu_defaults is not None:
        seqs = Sourced(
            value=p.cpu_defaults.max_num_seqs,
            kind="default",
            source=_cpu_source(p, p.cpu_defaults.max_num_seqs),
        )
        return seqs, (), None
    if p.is_cpu and p.generation != "V0" and _is_ranged(p.versions):
        return _cpu_candidates(p)
    value, source, settled = p.gpu_default()
    big = p.is_big_gpu(value)
    candidates: tuple[int, ...] = ()
    if not settled:
        candidates = GPU_MAX_NUM_SEQS_CANDIDATES
        if value != min(candidates):
            # Weights + KV cache of 70 to 80 GiB: an A100-80GB (256) or not (1,024).
            source = f"{min(candidates)} on an A100, else {value:,}: {source}"
            value = min(candidates)
    return Sourced(value=value, kind="default", source=source), candidates, big


def _is_ranged(versions: VersionRange | None) -> bool:
    """The log states no version but its releases are known to several."""
    return versions is not None and len(versions.releases) > 1


def _cpu_candidates(p: _Platform) -> tuple[Sourced[int], tuple[int, ...], bool | None]:
    """A CPU log whose version is a range of releases: vLLM's default on CPU for
    each release it can be (boot/resolve.cpu_max_num_seqs_candidates), the least
    first."""
    candidates = cpu_max_num_seqs_candidates(p.versions, p.generation, p.world_size)
    said = " or ".join(f"{c:,}" for c in candidates)
    which = "the releases this log can be" if len(candidates) > 1 else "this release"
    seqs = Sourced(
        value=candidates[0],
        kind="default" if len(candidates) == 1 else "candidates",
        source=f"vLLM's default for vllm serve on CPU in {which}: {said}; not in the log",
    )
    return seqs, candidates if len(candidates) > 1 else (), False


def _cpu_source(p: _Platform, value: int, *, tokens: bool = False) -> str:
    """Where a CPU default came from: vLLM's default for ``vllm serve`` on CPU in
    this release, per rank where the release scales it by the TP x PP ranks."""
    head = f"vLLM {p.version}'s default for vllm serve on CPU: "
    if not supports(p.version, Feature.CPU_BATCH_DEFAULTS_128):
        return f"{head}{value:,}; not in the log"
    world = p.world_size
    if tokens:
        return f"{head}{value // world:,} x {world}; not in the log"
    return f"{head}{value // world} x {world} rank{'s' if world > 1 else ''}; not in the log"


def _max_num_batched_tokens(p: _Platform, big: bool | None) -> Sourced[int]:
    """max_num_batched_tokens stated, else vLLM's default on CPU or on a GPU of this size."""
    mnbt_f = p.boot.last("max_num_batched_tokens")
    if mnbt_f is not None:
        return Sourced(value=int(mnbt_f.value), kind="stated", source=f"line {mnbt_f.line}")
    if p.cpu_defaults is not None:
        return Sourced(
            value=p.cpu_defaults.max_num_batched_tokens,
            kind="default",
            source=_cpu_source(p, p.cpu_defaults.max_num_batched_tokens, tokens=True),
        )
    if big is None:
        big = p.is_big_gpu(p.gpu_default()[0])
    return Sourced(
        value=DEFAULT_MAX_NUM_BATCHED_TOKENS if big else SMALL_GPU_MAX_NUM_BATCHED_TOKENS,
        kind="default",
        source=f"vLLM serve's default {'on GPUs of 70 GiB or more' if big else 'below 70 GiB'}"
        " (the same rule as max_num_seqs); not in the log",
    )


def _gpu_max_num_seqs(
    boot: Boot,
    generation: str | None,
    gpu: str | Gpu | None,
    available_kv: Fact | None,
    layout: KVCacheLayout | None,
    num_blocks: int | None,
    max_model_len: int | None,
    version: str | None,
) -> tuple[int, str, bool]:
    """vLLM's GPU default by the card's memory, its source, and whether the log
    (or --gpu) settles it: V0's one default; a card of known memory (and, at 70
    to 80 GiB, a known name: an A100-80GB takes 256, an H100-80GB 1,024); a
    batch budget vLLM's printed concurrency proves; weights + KV cache past 80
    GiB (no A100)."""
    total_f = boot.first("total_gpu_gib")
    total: float | None = None
    total_src = ""
    if total_f is not None:
        total, total_src = float(total_f.value), f"the log (line {total_f.line})"
    elif gpu is not None:
        g = gpu if isinstance(gpu, Gpu) else find_gpu(str(gpu))
        total, total_src = g.total_gib, f"--gpu {g.name} ({g.source})"
    name = gpu.name if isinstance(gpu, Gpu) else gpu
    w_f = boot.first("weights_gib")
    # Weights and the KV cache both sit in the GPU: it has at least their sum, and at
    # least the KV cache where the log states no weights (real log 052: 100.43 GiB of
    # KV cache is past every A100's 80 GiB).
    low = MemoryBudget(
        weights_gib=_stated_gib(w_f), kv_cache_gib=_stated_gib(available_kv)
    ).min_gpu_gib
    proven = None
    if num_blocks is not None:
        proven = _batched_tokens_proven(boot, layout, num_blocks, max_model_len, version)
    value, source = default_max_num_seqs(
        generation,
        total,
        name,
        min_gpu_gib=low,
        total_source=total_src,
        batched_tokens_proven=proven,
    )
    if generation == "V0" or proven in (2048, 16384):
        settled = True
    elif total is not None:
        settled = total < BIG_GPU_GIB or total > A100_MAX_GIB or name is not None
    else:
        settled = low is not None and low > A100_MAX_GIB
    return value, source, settled


def _stated_gib(f: Fact | None) -> Sourced[float] | None:
    return (
        None if f is None else Sourced(value=float(f.value), kind="stated", source=f"line {f.line}")
    )


def _batched_tokens_proven(
    boot: Boot,
    layout: KVCacheLayout | None,
    num_blocks: int,
    max_model_len: int | None,
    version: str | None,
) -> int | None:
    """The one vLLM default max_num_batched_tokens (2,048, 8,192 or 16,384)
    that gives the log's printed max concurrency, when the log does not state
    it and the figure depends on it (sliding-window or chunked groups); None
    when none or several do."""
    conc = boot.first("max_concurrency")
    if (
        conc is None
        or layout is None
        or not max_model_len
        or boot.last("max_num_batched_tokens") is not None
        or not any(g.kind in ("sliding", "chunked") for g in layout.groups)
    ):
        return None
    printed = float(conc.value)
    matching = []
    for mnbt in (8192, 2048, 16384):
        try:
            ours = max_concurrency(
                layout,
                num_blocks=num_blocks,
                max_model_len=max_model_len,
                vllm_version=version,
                max_num_batched_tokens=mnbt,
            )
        except LogReadError:
            return None
        if abs(round(ours, 2) - printed) <= 0.0051:
            matching.append(mnbt)
    return matching[0] if len(matching) == 1 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedBoot:
    """One boot's values, decided once, each with its source.

    Attributes:
        source: the input (file name, ``-``).
        vllm_version, generation, device: what vLLM's rules are read for.
        block_size: tokens per block (for a hybrid layout: the groups' size).
        layout: the KV cache groups of a hybrid model (None: one full group).
        spec: the model's KV spec (kv/specs), None when unknown.
        engine_num_blocks: each data-parallel engine's pool in blocks (None: unknown).
        has_null_block: V1 keeps one block of the pool as its null block.
        max_model_len: the longest request vLLM admits.
        scheduler: max_num_seqs, max_num_batched_tokens, chunked prefill.
        tensor_parallel_size: GPUs per engine.
    """

    source: str
    vllm_version: str | None
    generation: str | None
    device: str | None
    block_size: Sourced[int | None]
    layout: KVCacheLayout | None
    spec: KVSpec | None
    engine_num_blocks: tuple[int | None, ...]
    has_null_block: bool
    max_model_len: Sourced[int | None]
    scheduler: SchedulerLimits
    tensor_parallel_size: int


def block_size_kind(source: str) -> SourceKind:
    """The kind of a block size's source text (report/build.py's words).

    >>> block_size_kind("--block-size"), block_size_kind("the log (line 8)")
    ('given', 'stated')
    """
    if source.startswith("unknown"):
        return "unknown"
    if source.startswith("--block-size"):
        return "given"
    if "line " in source or source.startswith("the log"):
        return "stated"
    if "default" in source:
        return "default"
    return "derived"


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """The users at a workload: what runs at once at the end of the answers.

    Attributes:
        users, users_mid_answer: the pool's users capped by max_num_seqs on
            each engine, summed over the engines (None: unknown).
        pool_users, pool_users_mid_answer: what the pool alone holds.
        limit: what binds at the end of the answers ("pool" or
            "max_num_seqs"; None when the users are unknown).
        max_num_seqs: one engine's max_num_seqs and where it came from.
        users_high: the users at the largest max_num_seqs vLLM's rule allows
            for this boot; above ``users`` when the log does not settle it
            (then ``users`` is a lower bound: at least that many run).
    """

    users: int | None
    users_mid_answer: int | None
    pool_users: int | None
    pool_users_mid_answer: int | None
    limit: Limit | None
    max_num_seqs: Sourced[int] | None
    users_high: int | None = None
    max_num_seqs_candidates: tuple[int, ...] = ()

    @property
    def is_lower_bound(self) -> bool:
        """max_num_seqs is not settled and binds: ``users`` is the least that run."""
        return (
            self.users is not None
            and self.users_high is not None
            and (self.users_high > self.users)
        )

    @property
    def is_capped(self) -> bool:
        """max_num_seqs, not the pool, sets the users at the end of the answers."""
        return self.limit == "max_num_seqs"

    def to_json(self) -> JSONObject:
        m = self.max_num_seqs
        return {
            "users": self.users,
            "users_mid_answer": self.users_mid_answer,
            "pool_users": self.pool_users,
            "pool_users_mid_answer": self.pool_users_mid_answer,
            "limit": self.limit,
            "users_is_lower_bound": self.is_lower_bound,
            "users_high": self.users_high,
            "max_num_seqs": None if m is None else m.value,
            "max_num_seqs_source": None if m is None else m.source,
        }


def capped(users: int | None, max_num_seqs: int | None) -> int | None:
    """One engine's users: the pool's, at most max_num_seqs.

    >>> capped(279, 256), capped(37, 128), capped(None, 256), capped(37, None)
    (256, 37, None, 37)
    """
    if users is None or max_num_seqs is None:
        return users
    return min(users, max_num_seqs)


def answer(
    engine_users: Sequence[tuple[int | None, int | None]],
    max_num_seqs: Sourced[int] | None,
    candidates: Sequence[int] = (),
) -> Answer:
    """The answer from each engine's pool users (end, mid-answer) and max_num_seqs.

    Each data-parallel engine has its own scheduler, so each is capped on its
    own, then summed. gpt-oss-20b on an L4: pool 279 (304 mid-answer),
    max_num_seqs 256 -> 256 (256), limit max_num_seqs. ``candidates``: the
    max_num_seqs values vLLM's rule allows when the log does not settle it
    (256 or 1,024): the users are capped by the smallest (a lower bound) and
    ``users_high`` by the largest.

    >>> a = answer([(3070, 3343)], Sourced(value=256, kind="default", source="rule"), (256, 1024))
    >>> a.users, a.users_high, a.is_lower_bound
    (256, 1024, True)

    >>> a = answer([(279, 304)], Sourced(value=256, kind="default", source="rule"))
    >>> a.users, a.users_mid_answer, a.pool_users, a.limit
    (256, 256, 279, 'max_num_seqs')
    >>> answer([(37, 41), (35, 39)], None).users
    72
    """
    ends = [e for e, _ in engine_users]
    mids = [m for _, m in engine_users]
    m = None if max_num_seqs is None else max_num_seqs.value
    if m is not None and len(candidates) > 1:
        m = min(candidates)
    high = None if max_num_seqs is None else max((*candidates, max_num_seqs.value))
    known = bool(ends) and all(e is not None for e in ends)
    known_mid = bool(mids) and all(x is not None for x in mids)
    pool = sum(e for e in ends if e is not None) if known else None
    pool_mid = sum(x for x in mids if x is not None) if known_mid else None
    users = sum(capped(e, m) or 0 for e in ends) if known else None
    users_mid = sum(capped(x, m) or 0 for x in mids) if known_mid else None
    limit: Limit | None = None
    if known:
        limit = "max_num_seqs" if m is not None and any((e or 0) > m for e in ends) else "pool"
    users_high = sum(capped(e, high) or 0 for e in ends) if known else None
    return Answer(
        users=users,
        users_mid_answer=users_mid,
        pool_users=pool,
        pool_users_mid_answer=pool_mid,
        limit=limit,
        max_num_seqs=max_num_seqs,
        users_high=users_high,
        max_num_seqs_candidates=tuple(candidates),
    )


__all__ = [
    "Answer",
    "Limit",
    "ResolvedBoot",
    "SchedulerLimits",
    "SourceKind",
    "Sourced",
    "answer",
    "block_size_kind",
    "capped",
    "scheduler_limits",
]
