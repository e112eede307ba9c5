"""What a what-if starts from: one engine's pool and what the log measured
(``Basis``), and a setting to change (``Change``).

Their own module, so that ``report/whatif.py`` and ``report/batched_tokens.py``
both read them without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..boot.state import Sourced, SourceKind
from ..kv.groups import KVCacheLayout
from ..kv.specs import KVSpec
from ..vllm.rules import default_max_num_seqs
from .budget import MemoryBudget
from .capacity import Capacity, Workload, users_for_layout, users_that_fit
from .gpus import Gpu

#: kv.config.resolve_spec or a test's own: (model, config=, tensor_parallel_size=,
#: kv_cache_dtype=, dtype=) -> the model's KV spec, or None when nothing knows it.
SpecResolver = Callable[..., KVSpec | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """A setting to change; None / False leaves it as the log has it."""

    kv_cache_dtype: str | None = None
    weights_fp8: bool = False
    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    tensor_parallel_size: int | None = None
    gpu: Gpu | None = None
    gpu_memory_gib: float | None = None
    max_num_batched_tokens: int | None = None

    @property
    def text(self) -> str:
        """``kv_cache_dtype=fp8 + weights=fp8``."""
        parts = []
        if self.gpu is not None:
            parts.append(f"gpu={self.gpu.name}")
        if self.gpu_memory_gib is not None:
            parts.append(f"gpu_memory_gib={self.gpu_memory_gib:g}")
        if self.tensor_parallel_size is not None:
            parts.append(f"tensor_parallel_size={self.tensor_parallel_size}")
        if self.gpu_memory_utilization is not None:
            parts.append(f"gpu_memory_utilization={self.gpu_memory_utilization:g}")
        if self.weights_fp8:
            parts.append("weights=fp8")
        if self.kv_cache_dtype is not None:
            parts.append(f"kv_cache_dtype={self.kv_cache_dtype}")
        if self.max_model_len is not None:
            parts.append(f"max_model_len={self.max_model_len}")
        if self.max_num_batched_tokens is not None:
            parts.append(f"max_num_batched_tokens={self.max_num_batched_tokens}")
        return " + ".join(parts)

    @property
    def num_changes(self) -> int:
        return len(self.text.split(" + ")) if self.text else 0

    @property
    def new_total_gib(self) -> float | None:
        if self.gpu_memory_gib is not None:
            return self.gpu_memory_gib
        return None if self.gpu is None else self.gpu.total_gib


@dataclass(frozen=True, slots=True, kw_only=True)
class Basis:
    """What a what-if starts from: one engine's pool and what the log measured.

    Attributes:
        num_blocks: the engine's pool in blocks.
        block_size: tokens per block.
        has_null_block: V1 keeps one block as its null block.
        workload: the users' tokens.
        num_engines: data-parallel engines (users are summed over them).
        engine_num_blocks: each engine's pool in blocks, when they differ.
        bytes_per_block: one block id on one GPU (None: unknown).
        bytes_per_block_source: how it is known.
        spec: the model's KV spec at the log's settings (kv.specs.KVSpec) or None.
        layout: the KV cache groups of a hybrid model, or None.
        model, config: how to look the model up again at other settings.
        dtype: the model dtype the log states.
        kv_cache_dtype: the log's ``--kv-cache-dtype`` (None: auto).
        tensor_parallel_size, pipeline_parallel_size: the parallel layout.
        vllm_version, is_v1: for vLLM's rules.
        stated_block_size: the block size the log states (hybrid layouts).
        hybrid_kv_cache_manager: False when the log says it is disabled.
        enable_prefix_caching, mamba_cache_mode, num_speculative_tokens: what
            the log states (None: vLLM's default), for the Mamba pages a request
            holds (0.31+).
        max_model_len: the log's max model len.
        available_kv_gib: the KV memory line.
        weights_gib: the weights per GPU the log states.
        quantization: the log's quantization, or one the model name says.
        total_gpu_gib, total_gpu_source: the GPU's total memory and where it
            comes from (the log, or ``--gpu``).
        utilization, utilization_source, is_utilization_logged: vLLM's
            ``gpu_memory_utilization`` and where it comes from.
        max_num_seqs, max_num_seqs_source: the scheduler's limit.
        spec_resolver: ``kv.config.resolve_spec``-like lookup (None: no lookups).
    """

    num_blocks: int
    block_size: int
    has_null_block: bool
    workload: Workload
    # The top of the pool's range when the log leaves it (a hybrid pool decoded
    # from its token line: Gemma 3 on 0.11, 13,020 to 13,026 blocks); None: exact.
    num_blocks_high: int | None = None
    num_engines: int = 1
    # Each data-parallel engine's pool in blocks (empty: one engine, or all alike).
    engine_num_blocks: tuple[int, ...] = ()
    bytes_per_block: int | None = None
    bytes_per_block_source: str = ""
    spec: KVSpec | None = None
    layout: KVCacheLayout | None = None
    model: str | None = None
    config: str | None = None
    dtype: str | None = None
    kv_cache_dtype: str | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    vllm_version: str | None = None
    is_v1: bool | None = None
    stated_block_size: int | None = None
    hybrid_kv_cache_manager: bool | None = None
    enable_prefix_caching: bool | None = None
    mamba_cache_mode: str | None = None
    num_speculative_tokens: int | None = None
    max_model_len: int | None = None
    available_kv_gib: float | None = None
    weights_gib: float | None = None
    quantization: str | None = None
    total_gpu_gib: float | None = None
    total_gpu_source: str = ""
    utilization: float = 0.9
    utilization_source: str = ""
    is_utilization_logged: bool = False
    max_num_seqs: int | None = None
    max_num_seqs_source: str = ""
    # The values vLLM's rule allows when the log does not settle max_num_seqs
    # (256 or 1,024 by the card); one or none when settled.
    max_num_seqs_candidates: tuple[int, ...] = ()
    spec_resolver: SpecResolver | None = field(default=None, repr=False)
    # For the knob ranking (report/knobs.py): the platform, the scheduler's
    # token budget and the activation peak the profile measured (None: unknown).
    device: str | None = None
    max_num_batched_tokens: int | None = None
    activation_peak_gib: float | None = None
    # --kv-cache-memory-bytes as the log states it: vLLM then takes the KV
    # memory from it, and no profile moves the pool (report/batched_tokens.py).
    kv_cache_memory_bytes: int | None = None
    kv_cache_memory_bytes_source: str = ""

    @property
    def kv_is_fp8(self) -> bool:
        return bool(self.kv_cache_dtype) and str(self.kv_cache_dtype).startswith("fp8")

    @property
    def memory_budget(self) -> MemoryBudget:
        """vLLM's memory budget on one GPU, as far as the log (or --gpu) gives it."""
        util_kind: SourceKind = "stated" if self.is_utilization_logged else "default"
        total_kind: SourceKind = (
            "stated" if self.total_gpu_source.startswith("the log") else "given"
        )
        return MemoryBudget(
            total_gib=None
            if self.total_gpu_gib is None
            else Sourced(value=self.total_gpu_gib, kind=total_kind, source=self.total_gpu_source),
            gpu_memory_utilization=Sourced(
                value=self.utilization, kind=util_kind, source=self.utilization_source
            ),
            weights_gib=_stated(self.weights_gib),
            activation_peak_gib=_stated(self.activation_peak_gib),
            kv_cache_gib=_stated(self.available_kv_gib),
        )

    @property
    def mem_bytes(self) -> int | None:
        """The KV memory the pool takes on one GPU: blocks x bytes per block."""
        if self.bytes_per_block is None:
            return None
        return self.num_blocks * self.bytes_per_block

    @property
    def num_gpus(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size * self.num_engines

    @property
    def is_cpu(self) -> bool:
        """The boot ran on vLLM's CPU backend (the resolved boot's platform)."""
        return (self.device or "").upper() == "CPU"

    @property
    def rank_word(self) -> str:
        """What one tensor-parallel rank runs on: a GPU, or on the CPU backend a
        worker process (a "CPU rank")."""
        return "CPU rank" if self.is_cpu else "GPU"

    def capped(self, users_per_engine: int, max_num_seqs: int | None = None) -> int:
        """The deployment's users from one engine's pool users: each engine runs
        at most max_num_seqs at once (report/resolved.answer), times the engines.

        >>> Basis(num_blocks=1, block_size=16, has_null_block=True, workload=Workload(),
        ...       max_num_seqs=256, num_engines=2).capped(279)
        512
        """
        m = self.max_num_seqs if max_num_seqs is None else max_num_seqs
        return (users_per_engine if m is None else min(users_per_engine, m)) * self.num_engines

    @property
    def is_max_num_seqs_stated(self) -> bool:
        return self.max_num_seqs_source.startswith("line ")

    def max_num_seqs_on(self, change: Change) -> int | None:
        """max_num_seqs after ``change``: the log's when it states it; on another
        card vLLM's default for that card (1,024 on an H100, 256 on an L4)."""
        if self.max_num_seqs is None or self.is_max_num_seqs_stated:
            return self.max_num_seqs
        total = change.new_total_gib
        if total is None:
            return self.max_num_seqs
        name = change.gpu.name if change.gpu is not None else None
        generation = None if self.is_v1 is None else ("V1" if self.is_v1 else "V0")
        return default_max_num_seqs(generation, total, name)[0]

    def cap_note(self, users_per_engine: int, max_num_seqs: int | None = None) -> str:
        """ "" or "; max_num_seqs M caps them (the pool holds N)" when the cap binds."""
        m = self.max_num_seqs if max_num_seqs is None else max_num_seqs
        if m is None or users_per_engine <= m:
            return ""
        per = " per engine" if self.num_engines > 1 else ""
        return f" (max_num_seqs {m:,}{per} caps them; the pool holds {users_per_engine:,}{per})"

    def fit(self, num_blocks: int, layout: KVCacheLayout | None = None) -> Capacity:
        """Users of the workload in ``num_blocks`` blocks (one engine)."""
        layout = layout if layout is not None else self.layout
        if layout is not None and not layout.is_single_full_group:
            return users_for_layout(layout, num_blocks=num_blocks, workload=self.workload)
        return users_that_fit(
            num_blocks=num_blocks,
            block_size=self.block_size,
            workload=self.workload,
            has_null_block=self.has_null_block,
        )


def _stated(gib: float | None) -> Sourced[float] | None:
    """A figure the log states (the Basis keeps the value, not its line)."""
    return None if gib is None else Sourced(value=gib, kind="stated", source="the log")
