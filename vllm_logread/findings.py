"""Typed findings: what a stage found, as values; render/words.py words them.

As pyflakes' messages are (one class per kind, the values as fields, the words
in one place), a finding names what it says and carries the figures it says it
with; the model stage (kv/, report/capacity.py) holds no sentence. ``KVSpec.notes``,
``KVCacheLayout.notes``, ``Capacity.notes`` and ``BootEstimate.notes`` hold
these; text, ``--json`` and ``kv --json`` word each through
:func:`vllm_logread.render.words.word`, so the JSON strings are the text's.

Frozen and hashable: a note said twice (two layers raising the same caveat) is
kept once, by value.

A finding with no fields is a plain subclass of :class:`Finding` with
``__slots__ = ()``, not a dataclass of its own: it inherits the base's
dataclass methods, which are already right for it (``__init__`` takes nothing,
``__repr__`` prints ``DtypeAssumedBfloat16()`` from the instance's class,
``__eq__`` holds between instances of one class only, ``__hash__`` is
``hash(())``), and without a ``__dict__`` setting any attribute raises, as
on ``Finding`` itself. Every report imports this module, and ``@dataclass`` on
each fieldless class cost about a third of a millisecond apiece: 31 of them,
~10 ms of the seed report's ~175 ms of CPU (docs/performance.md, "The
fieldless findings").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    """The base of every finding (a caveat, an assumption, a rule that applied)."""

    def __str__(self) -> str:
        # Words come from render/words.py only: an f-string or str() of a finding
        # anywhere else would print its repr, so it fails loudly instead.
        raise TypeError(f"{type(self).__name__} is worded by render/words.py's word()")


# --- kv/cfgread.py: the model's dtype ---------------------------------------


class DtypeAssumedBfloat16(Finding):
    """The config names no torch_dtype: bfloat16 assumed (2 bytes, as vLLM serves float32)."""

    __slots__ = ()


class Float32ServedIn16Bits(Finding):
    """A float32 config dtype: vLLM serves it in 16 bits, 2 bytes either way."""

    __slots__ = ()


# --- kv/layer_kinds.py -------------------------------------------------------


class QwenSlidingFromMaxWindowLayers(Finding):
    """Qwen2-style use_sliding_window: layers from max_window_layers on slide."""

    __slots__ = ()


# --- kv/build.py: the config's caveats ---------------------------------------


class CheckpointKVCacheScheme(Finding):
    """The checkpoint's quantization_config carries a kv_cache_scheme, 'auto' was asked."""

    __slots__ = ()


class AttentionKEqualsV(Finding):
    """attention_k_eq_v: the pages still hold K and V, an upper bound."""

    __slots__ = ()


class ChunkedLocalManagerByVersion(Finding):
    """Chunked local attention: whether the hybrid manager stays on depends on the release."""

    __slots__ = ()


class KVLoraRankNotMLA(Finding):
    """kv_lora_rank on a model type vLLM does not list as MLA: standard attention."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class KVHeadsReplicated(Finding):
    """TP above the KV heads: vLLM replicates them, one KV head per GPU."""

    tensor_parallel_size: int
    total_num_kv_heads: int


class SparseMLAFp8StoredAsDsMLA(Finding):
    """fp8 asked on sparse MLA: FlashMLA-sparse stores fp8_ds_mla (656 bytes)."""

    __slots__ = ()


class Fp8DsMLABytes(Finding):
    """fp8_ds_mla asked: 656 bytes per token per layer."""

    __slots__ = ()


class SparseMLAAutoLatent(Finding):
    """Sparse MLA with kv_cache_dtype auto: a 16-bit latent (some GPUs switch to fp8)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexerBytes(Finding):
    """DeepSeek-V3.2's indexer cache: more bytes per token per layer in the same pool."""

    indexer_bytes_per_token_per_layer: int


class MTPDraftLayerNotCounted(Finding):
    """The MTP draft layer counts only when speculative decoding runs it."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchSSMDtype(Finding):
    """vLLM 0.31+ keeps this architecture's SSM state in its own dtype under 'auto'."""

    ssm_dtype_bytes: int


class KDAStateDtype(Finding):
    """Kimi Linear's KDA state: conv in the model dtype, recurrent state in float32."""

    __slots__ = ()


class StateInModelDtype(Finding):
    """Conv and SSM state in the model dtype unless mamba_ssm_cache_dtype says otherwise."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedKVLayers(Finding):
    """The last layers reuse earlier layers' KV cache and allocate nothing."""

    num_kv_shared_layers: int


class DeciLMHeadsPerLayer(Finding):
    """DeciLM: each layer's KV heads from its block config; no_op layers keep nothing."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SkipLayersKeepModelDtype(Finding):
    """turboquant_* / ultraquant_*: the first and last layers keep the model dtype."""

    kv_cache_dtype: str
    skipped_layers: tuple[int, ...]


class SlidingShapeFromSwa(Finding):
    """The sliding layers' KV heads and head sizes come from the config's swa_* fields."""

    __slots__ = ()


# --- kv/groups.py: the KV cache groups ---------------------------------------


class ChunkedKeepsHybridManager(Finding):
    """vLLM 0.31+: chunked local attention keeps the hybrid KV cache manager."""

    __slots__ = ()


class ChunkedHybridManagerOff(Finding):
    """vLLM 0.10.1+: the hybrid manager assumed off for chunked local attention."""

    __slots__ = ()


class ChunkedHybridManagerUnchecked(Finding):
    """Chunked local attention with the hybrid manager on: modelled, never checked."""

    __slots__ = ()


class MixedCacheDtypes(Finding):
    """Layers in two cache dtypes: vLLM raises the block size, the groups here pad."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GivenBlockSizeNoHybridRule(Finding):
    """A given block size that no 0.33 hybrid rule gives: the GDN checkpoint is unknown."""

    block_size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockSizeByGPU(Finding):
    """The attention block size depends on the GPU: each candidate and when it holds."""

    candidates: tuple[tuple[int, str], ...]  # (block size in tokens, when it holds)


@dataclass(frozen=True, slots=True, kw_only=True)
class MLABlockSizeAssumed(Finding):
    """MLA before vLLM 0.31: CacheConfig's default block size assumed."""

    block_size: int


class DenseMLABlockSizeByGPU(Finding):
    """Dense MLA, vLLM 0.31+: the backend the GPU picks sets the block size."""

    __slots__ = ()


class WindowedLayersFullContext(Finding):
    """Without the hybrid manager, sliding and chunked layers keep full context."""

    __slots__ = ()


class V1MambaNeedsHybridManager(Finding):
    """V1 without the hybrid manager: a Mamba hybrid's attention layers only."""

    __slots__ = ()


class V0MambaSeparateCache(Finding):
    """V0 keeps Mamba state outside the KV pool."""

    __slots__ = ()


class EveryLayerSlides(Finding):
    """Every layer slides: the old block manager's windows are not modelled."""

    __slots__ = ()


class MLAPagesNotDividing(Finding):
    """MLA pages that do not divide the largest page: not modelled."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PagePadded(Finding):
    """A kind's page padded up to the largest (unify_kv_cache_spec_page_size)."""

    kind: str
    page_size_bytes: int
    max_page_size_bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MambaStateOverPage(Finding):
    """A Mamba state larger than the attention page: vLLM would raise the block size."""

    state_bytes: int
    block_size: int
    page_size_bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MambaStatePadded(Finding):
    """The Mamba state page padded to the attention page."""

    state_bytes: int
    page_size_bytes: int
    block_size: int


class StageSharesEveryGroup(Finding):
    """Pipeline parallel: each stage keeps its share of every group."""

    __slots__ = ()


# --- report/capacity.py: the users a pool holds -------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StatePeakUsers(Finding):
    """A Mamba align group's busiest step: one more state page, and the users at it."""

    peak_blocks: int  # blocks a request holds at the step that crosses a state block
    kept_blocks: int  # blocks it keeps otherwise
    usable_blocks: int
    users: int  # 1 + (usable_blocks - peak_blocks) // kept_blocks


@dataclass(frozen=True, slots=True, kw_only=True)
class StatePeakUsersRange(Finding):
    """The busiest step unknown (no max_num_batched_tokens stated): a range of users."""

    low_users: int
    high_users: int


# --- report/estimate.py: the boot estimate -----------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowedPoolLineNeedsBatchedTokens(Finding):
    """Windowed layers: the pool line's token count depends on max_num_batched_tokens."""

    max_num_batched_tokens: int  # assumed (vLLM's default), never stated


# --- report/mix.py, report/sglang.py: the workload one boot serves -----------


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestsOverMaxModelLen(Finding):
    """Requests of the mix longer than max_model_len: vLLM rejects them (HTTP 400)."""

    num_rejected_requests: int
    num_requests: int
    max_model_len: int
    longest_request_tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedPrefixCachingOff(Finding):
    """--shared-prefix asked, prefix caching off in the log: nothing changes."""

    shared_prefix_tokens: int
    how_known: str  # where the log's prefix-caching state comes from (mix.prefix_caching_state)
    is_cpu: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedPrefixCachingUnknown(Finding):
    """--shared-prefix asked, prefix caching unknown: not counted."""

    shared_prefix_tokens: int
    how_known: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedPrefixWindowedGroups(Finding):
    """--shared-prefix on a model with sliding / chunked / Mamba groups: not modelled."""

    shared_prefix_tokens: int
    group_kinds: tuple[str, ...]  # the groups other than full attention, sorted


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixCacheCannotHit(Finding):
    """A hybrid's raised attention block is longer than the prefix: it never hits."""

    tokens: int  # the shared prefix's, or the prompts'
    block_size: int
    is_prompts: bool  # the prompts are shorter than a block (else the shared prefix is)


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedPrefixHeldOnce(Finding):
    """Prefix caching on: the shared prefix is held once."""

    how_known: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedPrefixSGLangRadix(Finding):
    """--shared-prefix on an SGLang log: its radix cache is not modelled."""

    shared_prefix_tokens: int


# --- kv/groups.py, report/kvshape.py: how each number of the groups was decided ---


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchSSMStateBytes(Finding):
    """The architecture's SSM dtype applied (vLLM 0.31+): the state a layer holds."""

    ssm_dtype_bytes: int
    state_bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeculativeStatePages(Finding):
    """Speculative tokens: as many more Mamba pages a request and conv-state rows (0.31+)."""

    num_speculative_tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockSizeGiven(Finding):
    """The block size as given (the log's)."""

    block_size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockSizeByRule(Finding):
    """A hybrid's block size by vLLM's rule, and when it holds."""

    block_size: int
    why: str  # the candidate's rule (kv/groups.hybrid_block_size_candidates)


class SparseMLABlock64(Finding):
    """Sparse MLA on CUDA, 0.31+: the indexer's kernel block, 64."""

    __slots__ = ()


class DenseMLABlock16(Finding):
    """Dense MLA, 0.31+: FlashAttention MLA's 16 (SM90 and others)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockSizeDefault(Finding):
    """CacheConfig's default block size (the backend may change it)."""

    block_size: int


class OneGroupEveryLayer(Finding):
    """No hybrid manager: one group of every attention layer, each charged cdiv(N, block)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PageScaled(Finding):
    """A smaller page that divides the largest: its block size scaled (0.31+)."""

    kind: str
    page_size_bytes: int
    max_page_size_bytes: int
    block_size: int
    ratio: int  # max_page_size_bytes // page_size_bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSizeOneSpec(Finding):
    """One spec: every layer in one group."""

    group_size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSizeLargestBucket(Finding):
    """0.31+: the largest bucket, when under 1.5 x the smallest."""

    group_size: int
    smallest_bucket: int


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSizeSmallestBucket(Finding):
    """The smallest bucket of same-spec layers."""

    group_size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowedBudgetInFlight(Finding):
    """Windowed layers are budgeted for every batch in flight (async scheduling, 0.26+)."""

    max_concurrent_batches: int
    max_num_batched_tokens: int


# --- read/prometheus.py: a fleet server's window ------------------------------


class PoolConfigChangedInWindow(Finding):
    """The server's cache_config_info changed in the window: the latest is shown."""

    __slots__ = ()


class RestartedInWindow(Finding):
    """The preemption counter reset in the window: preemptions not counted."""

    __slots__ = ()


# --- boot/state.py, report/build.py, report/sglang.py: a report's warnings ------


@dataclass(frozen=True, slots=True, kw_only=True)
class MaxModelLenNotALength(Finding):
    """The max model len the log states is no length (0 or below): ignored."""

    line: int
    max_model_len: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockSizeNotABlockSize(Finding):
    """The block size the log states is 0 or below: ignored."""

    line: int
    block_size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelConfigUnread(Finding):
    """The model's config could not be had; ``error`` is the error's own message."""

    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class KVCacheGroupsUnbuilt(Finding):
    """The KV cache groups could not be formed; ``error`` is the error's own message."""

    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UsersNotUnderstood(Finding):
    """A shape the tool does not model: users unknown; ``why`` is the Unknown's."""

    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolNotWholeBlocks(Finding):
    """An engine's pool line decodes to no block count; ``why`` says what it is not."""

    engine_key: str
    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolNegative(Finding):
    """An engine's pool is below zero blocks: nothing fits."""

    engine_key: str
    num_blocks: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolLineUndecodable(Finding):
    """A hybrid's pool line could not be decoded; ``error`` is the error's own message."""

    engine_key: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolLineNoBlockCount(Finding):
    """No block count reproduces a hybrid's pool line for its KV cache groups."""

    engine_key: str
    pool_tokens: int
    num_groups: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SGLangRanksDisagree(Finding):
    """SGLang's ranks state different pools: the smallest is used."""

    engine_key: str


class SGLangMixedAttention(Finding):
    """A model of several attention kinds without SGLang's SWA pool line: all full."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SGLangSeveralPools(Finding):
    """Several 'KV Cache is allocated' token pools and no line naming the model's."""

    engine_key: str
    pool_tokens: tuple[int, ...]


class SGLangOnePoolsBytes(Finding):
    """The KV bytes per token are one of SGLang's two pools'."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SGLangRunningCap(Finding):
    """max_running_requests caps the users that fit in an engine's pool."""

    max_running_requests: int
    line: int
    users: int
    engine_key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerDiedWhileServing(Finding):
    """A vLLM worker failed after the boot served: the pool is what vLLM allocated."""

    line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RanksDisagree(Finding):
    """vLLM's ranks state different pools: it schedules from the smallest."""

    engine_key: str


class LayoutNotExact(Finding):
    """The model's KV layout is not modelled exactly for this log: users approximate."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OtherRulesDecodePool(Finding):
    """No version stated, the rules first tried fail on the pool line; these releases'
    rules decode it with no failed check and agree on the users."""

    releases: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class EveryRequestOverMaxModelLen(Finding):
    """Every request of the workload is over max_model_len: vLLM rejects them all.
    ``tokens_per_user`` None: a mix of requests."""

    max_model_len: int
    tokens_per_user: int | None
