"""Report, EngineReport, Check, Options: the result types."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

from ..boot.boots import Boot, Engine, RanksSeen
from ..findings import Finding
from ..kv.specs import KVSpec
from .basis import Basis, Change
from .capacity import Capacity, Workload
from .gpus import Gpu
from .knobs import KnobRanking
from .mix import BootWorkload
from .request_cost import LongestRequest, RequestCost
from .resolved import Answer, ResolvedBoot
from .whatif import WhatIf

if TYPE_CHECKING:  # observed.py and plan.py: imported where a log's requests or a target need them
    from ..boot.fingerprint import VersionRange
    from .observed import ObservedWorkload
    from .plan import TargetPlan

#: ``kv.config.resolve_spec`` or a test's own: (model, config=..., tensor_parallel_size=...,
#: kv_cache_dtype=..., dtype=...) -> the model's KV spec, or None when no source knows it.
SpecResolver: TypeAlias = Callable[..., KVSpec | None]

#: A check passes, fails (the log contradicts the model), or cannot be made.
CheckStatus = Literal["pass", "fail", "unknown"]

#: What a check holds against what: vLLM's printed concurrency recomputed, the pool
#: against the KV memory, blocks against tokens, the groups' block sizes, V0's
#: served lines, SGLang's KV Cache line, a nameless log's layout confirmed.
CheckName = Literal[
    "max_concurrency",
    "pool_vs_memory",
    "blocks_vs_tokens",
    "kv_cache_groups",
    "v0_served",
    "kv_bytes_per_token",
    "pool_tokens",
    "attention_layout",
]

#: The assumption a users figure rests on that the log's figures did not settle.
UnknownName = Literal[
    "architecture",
    "attention_layout",
    "block_size",
    "kv_layout",
    "speculative_decoding",
    "swa_pool",
]


#: Field metadata for the JSON walker (render/json.py) and the schema generated from
#: the same fields (render/json_schema.py): JSON is written under the field's name
#: ("json": "key" names the key a field's value reaches instead; "doc" describes it in
#: the schema); NOT_JSON is never written. tests/render/test_schemas.py fails on a
#: result field without either.
JSON: Final = MappingProxyType({"json": True})
NOT_JSON: Final = MappingProxyType({"json": None})


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    """What the user asked for."""

    workload: Workload = field(default_factory=Workload)
    config: str | None = None
    # --model NAME: the model's name when the log does not name it (or over the
    # log's name): its config as kv.config.resolve_spec finds a name.
    model: str | None = None
    block_size: int | None = None
    tensor_parallel_size: int | None = None
    # --what-if changes (whatif.Change or their text), --target-users, and
    # --gpu: the card the log came from when it does not state its memory.
    what_ifs: tuple[Change | str, ...] = ()
    target_users: int | None = None
    gpu: Gpu | str | None = None  # options.gpu_card: --gpu or --gpu-memory-gib, or a name
    # --shared-prefix N: system-prompt tokens every request starts with (held
    # once when the log's prefix caching is on; report/mix.py).
    shared_prefix_tokens: int = 0

    @property
    def is_config_given(self) -> bool:
        """The user named the model's config: --config PATH or --model NAME."""
        return self.config is not None or self.model is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One cross-check of the log against itself or the model config."""

    name: CheckName = field(metadata=JSON)
    status: CheckStatus = field(metadata=JSON)
    detail: str = field(metadata=JSON)
    line: int | None = field(default=None, metadata=NOT_JSON)


@dataclass(frozen=True, slots=True, kw_only=True)
class Unknown:
    """A value the report had to assume and the log's figures did not settle.

    ``candidates`` are the values that survived every stated figure (each with
    the users it gives, when it gives any); ``settle`` says what would decide.
    """

    name: UnknownName = field(metadata=JSON)
    candidates: tuple[str, ...] = field(metadata=JSON)
    why: str = field(metadata=JSON)
    settle: str = field(metadata={"json": True, "doc": "what would decide it (an option to pass)"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """Why a boot serves nobody, the line that says so, and what would boot."""

    cause: str = field(metadata=JSON)
    line: int | None = field(metadata=JSON)
    fix: tuple[str, ...] = field(default=(), metadata=JSON)
    serve_args: tuple[str, ...] = field(
        default=(),
        metadata={
            "json": True,
            "doc": "the first fix as vllm serve arguments (['--max-model-len', '24096']), "
            "paste-ready; empty when it is not one",
        },
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineReport:
    """Users for one data-parallel engine."""

    engine: str = field(metadata=JSON)
    pool_tokens: int | None = field(metadata=JSON)
    num_blocks: int | None = field(metadata=JSON)
    users: int | None = field(metadata=JSON)
    users_mid_answer: int | None = field(metadata=JSON)
    line: int | None = field(metadata=JSON)
    ranks_disagree: bool = field(metadata=JSON)
    # The pool line allows up to this many blocks (decoded from its tokens,
    # when several block counts print the same line); None: num_blocks exactly.
    num_blocks_high: int | None = field(default=None, metadata=NOT_JSON)
    # What the pool alone holds; ``users`` above is that capped by the
    # engine's max_num_seqs (report/resolved.answer). None: not capped yet.
    pool_users: int | None = field(default=None, metadata=NOT_JSON)
    pool_users_mid_answer: int | None = field(default=None, metadata=NOT_JSON)

    @classmethod
    def of(
        cls,
        eng: Engine,
        *,
        pool_tokens: int | None,
        num_blocks: int | None,
        c: Capacity | None,
        num_blocks_high: int | None = None,
    ) -> EngineReport:
        """One engine's row from its pool and its capacity (None: unknown)."""
        return cls(
            engine=eng.key,
            pool_tokens=pool_tokens,
            num_blocks=num_blocks,
            users=None if c is None else c.users,
            users_mid_answer=None if c is None else c.users_mid_answer,
            line=eng.pool_line,
            ranks_disagree=eng.ranks_disagree,
            num_blocks_high=num_blocks_high,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """Everything the tool says about one boot."""

    source: str = field(metadata=JSON)
    boot: Boot = field(metadata={"json": "facts"})  # the caller passes its facts
    model: str | None = field(metadata=JSON)
    vllm_version: str | None = field(metadata=JSON)
    engine_generation: str | None = field(
        metadata={"json": "engine", "schema": {"enum": ["V0", "V1", None]}}
    )
    device: str | None = field(metadata=JSON)
    pool_tokens: int | None = field(metadata=JSON)
    num_blocks: int | None = field(metadata=JSON)
    block_size: int | None = field(metadata=JSON)
    block_size_source: str = field(metadata=JSON)
    max_model_len: int | None = field(metadata=JSON)
    vllm_max_concurrency: float | None = field(metadata=JSON)
    concurrency_tokens: int | None = field(metadata=JSON)
    available_kv_gib: float | None = field(metadata=JSON)
    kv_cache_dtype: str | None = field(metadata=JSON)
    # null in the JSON when not stated (the 1 the arithmetic assumes is no fact).
    tensor_parallel_size: int = field(
        metadata={
            "json": True,
            "doc": "as the log (or an option) states it; null when not stated",
        }
    )
    kv_bytes_per_token: int | None = field(
        metadata={"json": True, "doc": "per GPU; null when the model is unknown"}
    )
    kv_bytes_per_token_source: str | None = field(metadata=JSON)
    kv_shape: str | None = field(metadata=NOT_JSON)  # said in the text report
    is_exact: bool = field(metadata=JSON)
    workload: Workload = field(metadata=JSON)
    capacity: Capacity | None = field(metadata={"json": "workload"})
    engines: tuple[EngineReport, ...] = field(metadata=JSON)
    checks: tuple[Check, ...] = field(metadata=JSON)
    what_if: tuple[WhatIf, ...] = field(metadata=JSON)
    # Findings (render/words.py words them); a string is an error's or a rule's own
    # message not yet made a finding (report/build.py says which).
    warnings: tuple[Finding | str, ...] = field(metadata=JSON)
    arithmetic: tuple[str, ...] = field(metadata=JSON)
    target: TargetPlan | None = field(default=None, metadata=JSON)  # --target-users
    # What the what-ifs start from (sweeps and plots use it).
    basis: Basis | None = field(default=None, metadata=NOT_JSON)
    # Users known only as a range (an assumption the log did not settle) and
    # what was assumed; a boot that serves nobody says why.
    users_range: tuple[int, int] | None = field(
        default=None,
        metadata={
            "json": True,
            "doc": "Present when the users are known only as a range: [low, high] over the "
            "candidates the log did not rule out (users is then null).",
        },
    )
    unknowns: tuple[Unknown, ...] = field(
        default=(),
        metadata={
            "json": True,
            "doc": "Present when the report had to assume a value the log's figures did not "
            "settle.",
        },
    )
    failure: Failure | None = field(
        default=None,
        metadata={
            "json": True,
            "doc": "Present when the boot serves nobody: the cause the log gives, its line, "
            "and what would boot.",
        },
    )
    # The workload the server saw (/metrics histograms, a log's request lines) and the
    # users at it (observed.with_users); None: neither said anything.
    observed: ObservedWorkload | None = field(default=None, metadata={"json": "observed_workload"})
    # The workload as this boot serves it (--workload's accepted requests,
    # --shared-prefix), with what the report says about it.
    served: BootWorkload | None = field(default=None, metadata={"json": "workload"})
    # What one request costs, split group by group, and the longest request
    # that can ever run (report/request_cost.py).
    request_cost: RequestCost | None = field(default=None, metadata=JSON)
    longest_request: LongestRequest | None = field(default=None, metadata=JSON)
    # The boot's values decided once (report/resolved.py) and the answer at
    # the workload: the pool's users capped by max_num_seqs, the limit named.
    resolved: ResolvedBoot | None = field(default=None, metadata=NOT_JSON)
    answer: Answer | None = field(default=None, metadata=JSON)
    # The knobs ranked by the users they add at the workload (report/knobs.py).
    knobs: KnobRanking | None = field(default=None, metadata=JSON)
    # Topology from evidence: whether the log (or an option) states the tensor
    # parallel size (else tensor_parallel_size is the 1 assumed for the arithmetic,
    # said "not stated", null in the JSON), and the ranks its worker labels show.
    is_tensor_parallel_stated: bool = field(default=True, metadata={"json": "tensor_parallel_size"})
    ranks_seen: RanksSeen | None = field(default=None, metadata={"json": "num_ranks_seen"})
    # The releases a log that states no version can come from, from its call
    # sites and process labels (fingerprint.py, docs/fingerprint.md); None when
    # the log states its version or says nothing of it.
    vllm_versions: VersionRange | None = field(
        default=None, metadata={"json": "vllm_version_range"}
    )

    @property
    def is_pipeline_parallel_stated(self) -> bool:
        return self.boot.first("pipeline_parallel_size") is not None

    @property
    def is_data_parallel_stated(self) -> bool:
        return self.boot.first("data_parallel_size") is not None or len(self.engines) > 1

    @property
    def users(self) -> int | None:
        """Users at the end of their answers, summed over data-parallel engines."""
        vals = [e.users for e in self.engines if e.users is not None]
        return sum(vals) if vals and len(vals) == len(self.engines) else None

    @property
    def users_mid_answer(self) -> int | None:
        vals = [e.users_mid_answer for e in self.engines if e.users_mid_answer is not None]
        return sum(vals) if vals and len(vals) == len(self.engines) else None

    @property
    def has_pool(self) -> bool:
        return self.pool_tokens is not None or self.num_blocks is not None

    @property
    def contradicts(self) -> bool:
        return any(c.status == "fail" for c in self.checks)
