"""vLLM's get_kv_cache_groups: the KV cache groups and block geometry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UsageError
from ..versions import (
    CHUNKED_HYBRID_OFF_FROM,
    GROUP_SIZE_MAX_HEURISTIC_FROM,
    HYBRID_MANAGER_FROM,
    V1_DEFAULT_FROM,
    _at_least,
    cdiv,
    parse_version,
)
from .specs import KVSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class KVCacheGroup:
    """One KV cache group: layers of one kind sharing a block table.

    Attributes:
        kind: ``"full"`` (full attention and MLA), ``"sliding"``, ``"chunked"``
            or ``"mamba"`` (Mamba and linear-attention state).
        num_layers: real layers in the group.
        num_padding_layers: ``group_size - num_layers``: memory reserved for
            layers that do not exist (vLLM's "Add N padding layers").
        block_size: tokens per block of this group.
        window_tokens: sliding window or chunk size, else None.
        layer_indices: the model's layer numbers in this group (vLLM assigns
            ``layers[i::num_groups]`` to the i-th group of a kind).
    """

    kind: str
    num_layers: int
    num_padding_layers: int
    block_size: int
    window_tokens: int | None = None
    layer_indices: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class KVCacheLayout:
    """The KV cache groups vLLM forms for a spec, and the block geometry.

    Attributes:
        groups: the KV cache groups, all drawing from one block pool.
        group_size: layers per group (vLLM's ``group_size``), whole model.
        block_size: tokens per attention block.
        page_size_bytes: one block of one layer on one GPU (Mamba pages are
            padded to it).
        layers_per_block_on_gpu: layers a block id spans on the GPU the spec
            is for (the stage's share of ``group_size``): bytes per block id =
            ``page_size_bytes x layers_per_block_on_gpu``.
        is_hybrid_manager: vLLM's hybrid KV cache manager is in use.
        has_null_block: V1 keeps one block as its null block.
        is_exact: False when a rule could not be pinned (see notes).
        vllm_version: the version the layout was formed for (None: newest).
        notes: assumptions and caveats.
    """

    groups: tuple[KVCacheGroup, ...]
    group_size: int
    block_size: int
    page_size_bytes: int
    layers_per_block_on_gpu: int
    is_hybrid_manager: bool
    has_null_block: bool = True
    is_exact: bool = True
    vllm_version: tuple[int, ...] | None = None
    notes: tuple[str, ...] = ()

    @property
    def num_groups(self) -> int:
        """Number of KV cache groups."""
        return len(self.groups)

    @property
    def min_block_size(self) -> int:
        """vLLM's ``min_block_size`` over the groups (the pool line uses it)."""
        return min(g.block_size for g in self.groups)

    @property
    def bytes_per_block(self) -> int:
        """Bytes of one block id on one GPU, across the layers that share it."""
        return self.page_size_bytes * self.layers_per_block_on_gpu

    @property
    def is_single_full_group(self) -> bool:
        """One full-attention group: the plain ``tokens / block_size`` arithmetic."""
        return self.num_groups == 1 and self.groups[0].kind == "full"


def mamba_attention_block_size(spec: KVSpec, *, kernel_block_alignment: int = 16) -> int:
    """The attention block size vLLM picks so a block's page holds a Mamba state.

    vLLM (HybridAttentionMambaModelConfig) raises the attention block size to
    ``alignment x cdiv(mamba_page, alignment x attention_page_per_token)``.
    Qwen3-Next-80B at TP 1: mamba page 1,097,728 B, attention 2 x 2 x 256 x 2 =
    2,048 B per token -> 16 x cdiv(1,097,728, 32,768) = 16 x 34 = 544 tokens.
    With prefix caching it is instead rounded to the Mamba chunk size; the
    log's "Setting attention block size to N tokens" line is authoritative.
    """
    if spec.state_bytes_per_layer <= 0:
        return 16
    per_token = spec.page_bytes_per_token_per_layer
    return kernel_block_alignment * cdiv(
        spec.state_bytes_per_layer, kernel_block_alignment * per_token
    )


def _bucket_key(kind: str, window: int | None) -> tuple[str, int | None]:
    if kind in ("full", "mla"):
        return ("full", None)
    if kind in ("mamba", "linear"):
        return ("mamba", None)
    return (kind, window)


def kv_cache_layout(
    spec: KVSpec,
    *,
    block_size: int | None = None,
    vllm_version: str | Sequence[int] | None = None,
    is_v1: bool | None = None,
    hybrid_kv_cache_manager: bool | None = None,
) -> KVCacheLayout:
    """The KV cache groups vLLM forms for ``spec`` (``get_kv_cache_groups``).

    Args:
        spec: the model's KV spec (per GPU).
        block_size: tokens per attention block; None -> 16, or for Mamba
            hybrids the block size vLLM computes (:func:`mamba_attention_block_size`).
            MLA backends often use 64 (FlashMLA): pass the log's value.
        vllm_version: the log's vLLM version; None means the newest.
        is_v1: the V1 engine; None -> V1 from 0.8.0 on.
        hybrid_kv_cache_manager: force the hybrid manager on/off (the log's
            "Hybrid KV cache manager is disabled" warning means off); None ->
            on from 0.9.1 in V1, off for chunked local attention from 0.10.1.

    Gemma 3 27B (52 sliding + 10 full layers): group_size = min(52, 10) = 10;
    the sliding layers need cdiv(52, 10) = 6 groups with 60 - 52 = 8 padding
    layers, plus 1 full group: 7 groups.
    """
    version = parse_version(vllm_version)
    v1 = is_v1 if is_v1 is not None else _at_least(version, V1_DEFAULT_FROM)
    notes: list[str] = []
    is_exact = True
    kinds = spec.layer_kinds
    has_state = any(k in ("mamba", "linear") for k in kinds)
    has_chunked = "chunked" in kinds
    kv_kinds = {k for k in kinds if k != "none"}
    is_hybrid_model = (
        len(
            {
                _bucket_key(k, w)
                for k, w in zip(kinds, spec.layer_windows, strict=True)
                if k != "none"
            }
        )
        > 1
    )

    if hybrid_kv_cache_manager is not None:
        hma = hybrid_kv_cache_manager and v1 and _at_least(version, HYBRID_MANAGER_FROM)
    elif not v1 or not _at_least(version, HYBRID_MANAGER_FROM):
        hma = False
    elif has_chunked and _at_least(version, CHUNKED_HYBRID_OFF_FROM):
        hma = False
        is_exact = False
        notes.append(
            "chunked local attention: assumed the hybrid KV cache manager is off (vLLM's "
            "default from 0.10.1, which warns 'There is a latency regression when using "
            "chunked local attention with the hybrid KV cache manager. Disabling it, by "
            "default.'; VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1, the default "
            "in some later releases, keeps it on): every layer reserves full context"
        )
    else:
        hma = True
        if has_chunked:
            is_exact = False
            notes.append(
                "chunked local attention with the hybrid KV cache manager (vLLM 0.9.x-0.10.0 "
                "or forced on): its rules are modelled but not checked against a log"
            )

    if block_size is None:
        block_size = mamba_attention_block_size(spec) if (has_state and hma) else 16
        if spec.is_mla:
            notes.append(
                "block size 16 assumed; vLLM's MLA backends often use 64 (FlashMLA) or "
                "128 (CUTLASS MLA): pass the log's block size"
            )
    if block_size <= 0:
        raise UsageError(f"block size must be positive, got {block_size}")
    page = block_size * spec.page_bytes_per_token_per_layer
    start, end = spec.stage_layer_range

    if not hma:
        attn = tuple(i for i, k in enumerate(kinds) if k in ("full", "mla", "sliding", "chunked"))
        if is_hybrid_model and (kv_kinds & {"sliding", "chunked"}):
            notes.append(
                "without the hybrid KV cache manager every sliding-window / chunked layer "
                "keeps full context (one group)"
            )
        if has_state:
            if v1:
                is_exact = False
                notes.append(
                    "vLLM V1 needs the hybrid KV cache manager for Mamba hybrids; "
                    "modelled the attention layers only"
                )
            else:
                notes.append("V0 keeps Mamba state in a separate cache outside the KV pool")
        if kv_kinds == {"sliding"}:
            is_exact = False
            notes.append(
                "a model whose every layer slides: before vLLM 0.9.1 (and in V0) its block "
                "manager's window handling is not modelled; charged full context"
            )
        group = KVCacheGroup(
            kind="full",
            num_layers=len(attn),
            num_padding_layers=0,
            block_size=block_size,
            layer_indices=attn,
        )
        on_gpu = sum(1 for i in attn if start <= i < end)
        return KVCacheLayout(
            groups=(group,),
            group_size=len(attn),
            block_size=block_size,
            page_size_bytes=page,
            layers_per_block_on_gpu=on_gpu,
            is_hybrid_manager=False,
            has_null_block=v1,
            is_exact=is_exact,
            vllm_version=version,
            notes=tuple(notes),
        )

    # Bucket the layers by spec, in layer order (vLLM: same_type_layers).
    buckets: dict[tuple[str, int | None], list[int]] = {}
    for i, (k, w) in enumerate(zip(kinds, spec.layer_windows, strict=True)):
        if k == "none":
            continue
        buckets.setdefault(_bucket_key(k, w), []).append(i)
    if has_state:
        if spec.state_bytes_per_layer > page:
            is_exact = False
            notes.append(
                f"a Mamba state ({spec.state_bytes_per_layer:,} B) exceeds the attention "
                f"page at block size {block_size} ({page:,} B); vLLM would have raised "
                "the block size"
            )
            page = spec.state_bytes_per_layer
        else:
            notes.append(
                f"Mamba state page padded from {spec.state_bytes_per_layer:,} B to the "
                f"attention page of {page:,} B ({block_size} tokens)"
            )
    counts = [len(v) for v in buckets.values()]
    group_size = min(counts)
    if _at_least(version, GROUP_SIZE_MAX_HEURISTIC_FROM) and max(counts) < group_size * 1.5:
        group_size = max(counts)
    groups: list[KVCacheGroup] = []
    for (kind, window), layers in buckets.items():
        num_groups = cdiv(len(layers), group_size)
        for g in range(num_groups):
            members = tuple(layers[g::num_groups])
            groups.append(
                KVCacheGroup(
                    kind=kind,
                    num_layers=len(members),
                    num_padding_layers=group_size - len(members),
                    block_size=block_size,
                    window_tokens=window,
                    layer_indices=members,
                )
            )
    if len(groups) == 1:
        group_size = groups[0].num_layers
    on_gpu = max(sum(1 for i in g.layer_indices if start <= i < end) for g in groups)
    if spec.pipeline_parallel_size > 1 and len(groups) > 1:
        notes.append("pipeline parallel: each stage keeps its share of every group")
    return KVCacheLayout(
        groups=tuple(groups),
        group_size=group_size,
        block_size=block_size,
        page_size_bytes=page,
        layers_per_block_on_gpu=on_gpu,
        is_hybrid_manager=True,
        has_null_block=True,
        is_exact=is_exact,
        vllm_version=version,
        notes=tuple(notes),
    )
