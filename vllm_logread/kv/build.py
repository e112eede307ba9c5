"""config.json dict -> the model's layer specs (one :mod:`~vllm_logread.kv.specs` class each).

Nothing here touches the network or imports or runs code a config names
(``auto_map`` and ``trust_remote_code`` are ignored). A config that cannot be
read or modelled raises :class:`~vllm_logread.errors.ConfigError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypedDict

from ..errors import ConfigError, LogReadError
from ..findings import (
    ArchSSMDtype,
    AttentionKEqualsV,
    CheckpointKVCacheScheme,
    ChunkedLocalManagerByVersion,
    DeciLMHeadsPerLayer,
    Finding,
    Fp8DsMLABytes,
    IndexerBytes,
    KDAStateDtype,
    KVHeadsReplicated,
    KVLoraRankNotMLA,
    MTPDraftLayerNotCounted,
    SharedKVLayers,
    SkipLayersKeepModelDtype,
    SlidingShapeFromSwa,
    SparseMLAAutoLatent,
    SparseMLAFp8StoredAsDsMLA,
    StateInModelDtype,
)
from ..jsontypes import JSONValue
from .architectures import ArchitectureStatus, architecture_status
from .cfgread import (
    DTYPE_BYTES,
    MAX_LAYERS,
    Cfg,
    check_tp,
    head_size,
    model_dtype,
    norm_dtype,
    short,
    text_config,
    total_kv_heads,
)
from .dtypes import KVDType, attention_content_bytes, kv_dtype, mla_content_bytes
from .layer_kinds import decilm_attention, layer_kinds
from .specs import (
    CHUNKED,
    NONE,
    SLIDING,
    STATE_KINDS,
    AttentionSpec,
    ChunkedLocalAttentionSpec,
    FullAttentionSpec,
    KVCacheSpec,
    KVSpec,
    MambaSpec,
    MLAAttentionSpec,
    SlidingWindowSpec,
)
from .state import state_spec

__all__ = ["MAX_LAYERS", "MLA_MODEL_TYPES", "spec_from_config"]


# vLLM's ModelArchConfigConvertorBase.is_deepseek_mla, the same 24 types in
# 0.31, 0.32 and 0.33: these model types use MLA when kv_lora_rank is set.
MLA_MODEL_TYPES = frozenset(
    {
        "axk1",
        "deepseek_v2",
        "deepseek_v3",
        "deepseek_v32",
        "deepseek_v4",
        "deepseek_v41",
        "dots3_note",
        "deepseek_mtp",
        "k3_dspark",
        "glm5_next",
        "glm5_next_text",
        "glm_moe_dsa",
        "glm4_moe_lite",
        "glm4_moe_lite_mtp",
        "kimi_k2",
        "kimi_linear",
        "longcat_flash",
        "pangu_ultra_moe",
        "pangu_ultra_moe_mtp",
        "bailing_hybrid",
        "bailing_hybrid_mtp",
        "bailing_hybrid_v3_mtp",
        "hy_v4",
        "hy_v4_mtp",
    }
)


# MLA types whose layouts are not modelled: DeepSeek-V4's compressed states,
# the MLA + linear-attention hybrids. Refused by name ("unknown", never a guess).
_MLA_TYPES_NOT_MODELLED = frozenset(
    {
        "deepseek_v4",
        "deepseek_v41",
        "bailing_hybrid_mtp",
        "bailing_hybrid_v3_mtp",
        "glm5_next",
        "glm5_next_text",
        "k3_dspark",
        "dots3_note",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class _AttnShape:
    """The full-attention layers' shape on one GPU, before per-layer overrides."""

    is_mla: bool
    head_size: int
    head_size_v: int
    total_kv: int
    kv_per_gpu: int
    kv_dtype: str
    dtype_bytes: int
    content_bytes: int | None = None
    indexer_bytes: int = 0
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    findings: tuple[Finding, ...] = ()

    def full_spec(self) -> FullAttentionSpec:
        """This shape as a full-attention layer (the base per-layer overrides start from)."""
        return FullAttentionSpec(
            num_kv_heads=self.kv_per_gpu,
            head_size=self.head_size,
            head_size_v=self.head_size_v,
            dtype=self.kv_dtype,
            dtype_bytes=self.dtype_bytes,
            state_content_bytes=self.content_bytes,
        )


def spec_from_config(
    config: Mapping[str, JSONValue],
    *,
    model: str | None = None,
    source: str = "config.json",
    source_kind: str = "config",
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    kv_cache_dtype: str = "auto",
    dtype: str | None = None,
    mamba_ssm_cache_dtype: str | None = None,
) -> KVSpec:
    """The KV spec of a parsed config.json, as vLLM would allocate it.

    Args:
        config: the config.json object (nested text_config/llm_config handled).
        model: the model name, for the report.
        source, source_kind: where the config came from.
        tensor_parallel_size: GPUs a layer is split over.
        pipeline_parallel_size: stages the layers are split into.
        kv_cache_dtype: vLLM's ``--kv-cache-dtype`` ("auto", "fp8", ...).
        dtype: vLLM's ``--dtype`` ("auto", "bfloat16", "torch.float16", ...).
        mamba_ssm_cache_dtype: vLLM's ``--mamba-ssm-cache-dtype`` (default:
            the config's ``mamba_ssm_cache_dtype``, else the model dtype).

    Raises:
        ConfigError: the config is malformed, of an unmodelled kind, or the
            parallel sizes are ones vLLM refuses.

    >>> spec_from_config({"num_hidden_layers": 32, "num_attention_heads": 32,
    ...     "num_key_value_heads": 8, "hidden_size": 4096}).kv_bytes_per_token
    131072
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"model config must be a JSON object, got {short(config)}")
    name = model or source
    try:
        return _spec_from_config(
            config,
            model=model,
            name=name,
            source=source,
            source_kind=source_kind,
            tp=tensor_parallel_size,
            pp=pipeline_parallel_size,
            kv_cache_dtype=kv_cache_dtype,
            dtype=dtype,
            mamba_ssm_cache_dtype=mamba_ssm_cache_dtype,
        )
    except LogReadError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError) as err:
        raise ConfigError(
            f"{name}: cannot model this config ({type(err).__name__}: {err})"
        ) from err
    except RecursionError as err:
        raise ConfigError(f"{name}: config nested too deeply") from err


def _check_args(tp: int, pp: int, kv_cache_dtype: str, dtype: str | None) -> None:
    for label, value in (("tensor parallel size", tp), ("pipeline parallel size", pp)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4096:
            raise ConfigError(f"{label} must be an integer from 1 to 4096, got {short(value)}")
    if not isinstance(kv_cache_dtype, str):
        raise ConfigError(f"kv_cache_dtype must be a string, got {short(kv_cache_dtype)}")
    if dtype is not None and not isinstance(dtype, str):
        raise ConfigError(f"dtype must be a string, got {short(dtype)}")


def _refuse_unmodelled(name: str, model_type: str, cfg: Cfg) -> None:
    if model_type in ("mamba", "mamba2", "falcon_mamba"):
        raise ConfigError(f"{name}: {model_type} is attention-free: it keeps no per-token KV cache")
    if model_type in _MLA_TYPES_NOT_MODELLED and cfg.has("kv_lora_rank"):
        raise ConfigError(
            f"{name}: model type {model_type!r} is MLA in vLLM 0.31-0.33 but its cache "
            "layout (compressed or hybrid MLA states) is not modelled: unknown"
        )


def _spec_from_config(
    config: Mapping[str, JSONValue],
    *,
    model: str | None,
    name: str,
    source: str,
    source_kind: str,
    tp: int,
    pp: int,
    kv_cache_dtype: str,
    dtype: str | None,
    mamba_ssm_cache_dtype: str | None,
) -> KVSpec:
    _check_args(tp, pp, kv_cache_dtype, dtype)
    text_dict = text_config(config, name)
    cfg = Cfg(text_dict, name)
    model_type = cfg.str_("model_type") or ""
    _refuse_unmodelled(name, model_type, cfg)
    num_layers = cfg.need_int(
        "num_hidden_layers", "n_layer", "num_layers", "n_layers", maximum=MAX_LAYERS
    )
    num_heads = cfg.need_int("num_attention_heads", "n_head", "n_heads", "num_heads")
    if pp > num_layers:
        raise ConfigError(f"{name}: pipeline parallel size {pp} exceeds the {num_layers} layers")
    mdtype, dtype_found = model_dtype(config, text_dict, dtype)
    kvd = kv_dtype(kv_cache_dtype)
    attn = _attention_shape(cfg, model_type, num_heads, tp, kvd, mdtype)
    (kinds, windows), kinds_found = layer_kinds(cfg, model_type, num_layers)
    if attn.is_mla and any(k in (SLIDING, CHUNKED) for k in kinds):
        raise ConfigError(f"{name}: MLA with sliding windows is not modelled")
    state, state_found = _state(cfg, model_type, kinds, tp, mdtype, mamba_ssm_cache_dtype)
    shared = _shared_kv_layers(cfg, num_layers)
    layer_specs, specs_found = _layer_specs(
        cfg, kinds, windows, attn, state, shared, tp, kvd, mdtype
    )
    if not any(isinstance(s, AttentionSpec) for s in layer_specs):
        raise ConfigError(f"{name}: no attention layers: no per-token KV cache to model")
    # In the order each stage of the reading raised them, each once.
    notes = (
        *dtype_found,
        *_quant_notes(config, kvd),
        *attn.findings,
        *kinds_found,
        *state_found,
        *([SharedKVLayers(num_kv_shared_layers=len(shared))] if shared else []),
        *specs_found,
        *_config_notes(cfg, kinds),
    )
    arch = _architecture(config, text_dict, cfg, attn, model_type)
    return KVSpec(
        architecture=arch.architecture,
        architecture_status=arch.status,
        architecture_note=arch.reason,
        model=model,
        source=source,
        source_kind=source_kind,
        model_type=model_type or None,
        layer_specs=tuple(layer_specs),
        num_attention_heads=num_heads,
        total_num_kv_heads=attn.total_kv,
        num_kv_heads=attn.kv_per_gpu,
        head_size=attn.head_size,
        head_size_v=attn.head_size_v,
        kv_factor=1 if attn.is_mla else 2,
        is_mla=attn.is_mla,
        model_dtype=mdtype,
        kv_cache_dtype=kvd.name if kv_cache_dtype.strip().lower() != "half" else "half",
        kv_dtype=attn.kv_dtype,
        dtype_bytes=attn.dtype_bytes,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        stage_layer_range=_largest_stage(layer_specs, pp),
        kv_lora_rank=attn.kv_lora_rank,
        qk_rope_head_dim=attn.qk_rope_head_dim,
        shared_kv_layers=shared,
        notes=tuple(dict.fromkeys(notes)),
    )


def _architecture(
    config: Mapping[str, JSONValue],
    text_dict: Mapping[str, JSONValue],
    cfg: Cfg,
    attn: _AttnShape,
    model_type: str,
) -> ArchitectureStatus:
    """The architecture's status in vLLM's registry, not verified for a latent rank
    read as standard attention."""
    arch = architecture_status(config, text_dict)
    if cfg.has("kv_lora_rank") and not attn.is_mla:
        # A latent rank on a type vLLM does not list as MLA: read as standard
        # attention here, but vLLM's config adapters may convert it (Mistral 4 /
        # Mistral Large 3 map to DeepSeek's MLA): never a verified reading.
        arch = replace(
            arch,
            status="not verified",
            reason=f"kv_lora_rank on model type {model_type!r}, which vLLM 0.33 does not list "
            "as MLA: read as standard attention, not verified",
        )
    return arch


def _quant_notes(config: Mapping[str, JSONValue], kvd: KVDType) -> tuple[Finding, ...]:
    quant = config.get("quantization_config")
    if isinstance(quant, dict) and quant.get("kv_cache_scheme") is not None and kvd.name == "auto":
        return (CheckpointKVCacheScheme(),)
    return ()


def _config_notes(cfg: Cfg, kinds: list[str]) -> tuple[Finding, ...]:
    """Caveats the config raises that no figure can settle."""
    k_eq_v = (AttentionKEqualsV(),) if cfg.raw("attention_k_eq_v") is True else ()
    chunked = (ChunkedLocalManagerByVersion(),) if CHUNKED in kinds else ()
    return (*k_eq_v, *chunked)


def _attention_shape(
    cfg: Cfg,
    model_type: str,
    num_heads: int,
    tp: int,
    kvd: KVDType,
    mdtype: str,
) -> _AttnShape:
    kv_lora = cfg.int_("kv_lora_rank")
    if model_type in MLA_MODEL_TYPES and kv_lora is not None:
        return _mla_shape(cfg, model_type, num_heads, tp, kvd, mdtype, kv_lora)
    found: list[Finding] = [KVLoraRankNotMLA()] if kv_lora is not None else []
    hsize = head_size(cfg, model_type, num_heads)
    # A value head size of its own (vLLM's head_size_v, 0.31+): the page holds
    # head_size + head_size_v per head (MiMo-V2-Flash: 192 + 128).
    hsize_v = (cfg.int_("v_head_dim") if kv_lora is None else None) or hsize
    total_kv = total_kv_heads(cfg, model_type, num_heads)
    check_tp(num_heads, total_kv, tp, cfg.name, False)
    if tp > total_kv:
        found.append(KVHeadsReplicated(tensor_parallel_size=tp, total_num_kv_heads=total_kv))
    elem = DTYPE_BYTES[mdtype] if kvd.name == "auto" else kvd.element_bytes
    content = attention_content_bytes(
        kvd, head_size=hsize, head_size_v=hsize_v, model_dtype_bytes=DTYPE_BYTES[mdtype]
    )
    return _AttnShape(
        is_mla=False,
        head_size=hsize,
        head_size_v=hsize_v,
        total_kv=total_kv,
        kv_per_gpu=max(1, total_kv // tp),
        kv_dtype=mdtype if kvd.name == "auto" else kvd.name,
        dtype_bytes=elem,
        content_bytes=content,
        findings=tuple(found),
    )


def _mla_shape(
    cfg: Cfg,
    model_type: str,
    num_heads: int,
    tp: int,
    kvd: KVDType,
    mdtype: str,
    kv_lora: int,
) -> _AttnShape:
    """MLAAttention.get_kv_cache_spec: one latent of kv_lora_rank + qk_rope_head_dim."""
    rope_dim = cfg.int_("qk_rope_head_dim", minimum=0) or 0
    latent = kv_lora + rope_dim
    is_sparse = cfg.has("index_topk") or model_type == "deepseek_v32"
    name = kvd.name
    found: list[Finding] = []
    if is_sparse and name in ("fp8", "fp8_e4m3"):
        # FlashMLA-sparse stores any fp8 request as fp8_ds_mla ("fp8" is its alias).
        name = "fp8_ds_mla"
        found.append(SparseMLAFp8StoredAsDsMLA())
    elif name == "fp8_ds_mla":
        found.append(Fp8DsMLABytes())
    if is_sparse and kvd.name == "auto":
        found.append(SparseMLAAutoLatent())
    packed = mla_content_bytes(kv_dtype(name), latent_size=latent)
    elem = DTYPE_BYTES[mdtype] if name == "auto" else kv_dtype(name).element_bytes
    indexer = 0
    if is_sparse:
        index_dim = cfg.int_("index_head_dim") or 128
        # DeepseekV32IndexerCache: fp8 keys + one fp32 scale per 128 values.
        indexer = index_dim + index_dim // 128 * 4
        found.append(IndexerBytes(indexer_bytes_per_token_per_layer=indexer))
    if cfg.int_("num_nextn_predict_layers", minimum=0):
        found.append(MTPDraftLayerNotCounted())
    check_tp(num_heads, num_heads, tp, cfg.name, True)
    return _AttnShape(
        is_mla=True,
        head_size=latent,
        head_size_v=0,
        total_kv=num_heads,
        kv_per_gpu=1,
        kv_dtype=mdtype if name == "auto" else name,
        dtype_bytes=elem,
        content_bytes=packed,
        indexer_bytes=indexer,
        kv_lora_rank=kv_lora,
        qk_rope_head_dim=rope_dim,
        findings=tuple(found),
    )


def _state(
    cfg: Cfg,
    model_type: str,
    kinds: list[str],
    tp: int,
    mdtype: str,
    mamba_ssm_cache_dtype: str | None,
) -> tuple[MambaSpec | None, tuple[Finding, ...]]:
    """The state layers' spec, and what it assumed of their dtypes."""
    if not any(k in STATE_KINDS for k in kinds):
        return None, ()
    ssm_name = mamba_ssm_cache_dtype or cfg.str_("mamba_ssm_cache_dtype")
    is_default = ssm_name is None or ssm_name.lower() == "auto"
    if model_type == "kimi_linear":
        ssm_bytes = 4  # KDA's recurrent state: float32 whatever is asked (state.py)
    elif ssm_name is None or ssm_name.lower() == "auto":
        ssm_bytes = DTYPE_BYTES[mdtype]
    else:
        ssm_bytes = DTYPE_BYTES[norm_dtype(ssm_name, "mamba_ssm_cache_dtype")]
    spec = state_spec(cfg, model_type, kinds, tp, DTYPE_BYTES[mdtype], ssm_bytes)
    if spec is None:
        raise ConfigError(f"{cfg.name}: Mamba layers of model type {model_type!r} not modelled")
    arch = _arch_ssm_dtype_bytes(cfg, model_type) if is_default else None
    arch_found: tuple[Finding, ...] = ()
    if arch is not None and arch != ssm_bytes:
        spec = replace(spec, arch_ssm_dtype_bytes=arch)
        arch_found = (ArchSSMDtype(ssm_dtype_bytes=arch),)
    if model_type == "kimi_linear":
        return spec, (*arch_found, KDAStateDtype())
    return spec, (*arch_found, StateInModelDtype())


def _arch_ssm_dtype_bytes(cfg: Cfg, model_type: str) -> int | None:
    """vLLM's per-architecture SSM dtype (MODELS_CONFIG_MAP, 0.31-0.33).

    NemotronH (and its Nano VL): the config's mamba_ssm_cache_dtype, else
    float32. Qwen3.5 (and its MoE): the config's mamba_ssm_dtype when set.
    """
    if model_type in ("nemotron_h", "nemotron_3"):
        return 4
    if model_type.startswith("qwen3_5"):
        name = cfg.str_("mamba_ssm_dtype")
        return None if name is None else DTYPE_BYTES[norm_dtype(name, "mamba_ssm_dtype")]
    return None


def _shared_kv_layers(cfg: Cfg, num_layers: int) -> tuple[int, ...]:
    """Layers that reuse an earlier layer's cache (Gemma-3n / Gemma 4's last N)."""
    n = cfg.int_("num_kv_shared_layers", minimum=0, maximum=MAX_LAYERS) or 0
    if n == 0:
        return ()
    if n >= num_layers:
        raise ConfigError(f"{cfg.name}: num_kv_shared_layers {n} leaves no layer its own cache")
    return tuple(range(num_layers - n, num_layers))


def _layer_specs(
    cfg: Cfg,
    kinds: list[str],
    windows: list[int | None],
    attn: _AttnShape,
    state: MambaSpec | None,
    shared: tuple[int, ...],
    tp: int,
    kvd: KVDType,
    mdtype: str,
) -> tuple[list[KVCacheSpec | None], tuple[Finding, ...]]:
    """Each layer's spec (None: no cache of its own), and the shapes' caveats."""
    full = _full_spec(cfg, attn, tp, kvd, mdtype)
    swa = _sliding_base(cfg, attn, tp, kvd, mdtype)
    sliding_base = attn.full_spec() if swa is None else swa
    found: tuple[Finding, ...] = () if swa is None else (SlidingShapeFromSwa(),)
    out: list[KVCacheSpec | None] = []
    shared_set = set(shared)
    for i, (kind, window) in enumerate(zip(kinds, windows, strict=True)):
        if i in shared_set or kind == NONE:
            out.append(None)
        elif kind in STATE_KINDS:
            out.append(state)
        elif kind == SLIDING:
            assert window is not None
            out.append(SlidingWindowSpec(sliding_window=window, **_attn_fields(sliding_base)))
        elif kind == CHUNKED:
            assert window is not None
            out.append(ChunkedLocalAttentionSpec(attention_chunk_size=window, **_attn_fields(full)))
        else:
            out.append(full)
    if cfg.str_("model_type") == "nemotron-nas":
        out = _decilm_heads(cfg, out, tp)
        found = (*found, DeciLMHeadsPerLayer())
    out, skipped = _skip_layers(out, kinds, kvd, mdtype)
    if skipped:
        found = (*found, SkipLayersKeepModelDtype(kv_cache_dtype=kvd.name, skipped_layers=skipped))
    return out, found


def _decilm_heads(cfg: Cfg, specs: list[KVCacheSpec | None], tp: int) -> list[KVCacheSpec | None]:
    """DeciLM's per-layer KV heads: num_attention_heads // block_configs[i].attention.
    n_heads_in_group (nemotron_nas.py, 0.33 source). Llama-3.3-Nemotron-Super-49B: 64
    heads // 8 = 8 KV heads on its attention layers, none on its no_op layers."""
    num_heads = cfg.need_int("num_attention_heads")
    attns = decilm_attention(cfg, len(specs))
    out: list[KVCacheSpec | None] = []
    for i, (s, attn) in enumerate(zip(specs, attns, strict=True)):
        if not isinstance(s, AttentionSpec):
            out.append(s)
            continue
        group = attn.get("n_heads_in_group")
        if isinstance(group, bool) or not isinstance(group, int) or group < 1:
            raise ConfigError(f"{cfg.name}: block_configs[{i}].attention.n_heads_in_group")
        total = num_heads // group
        if total % tp and tp % total:
            raise ConfigError(
                f"{cfg.name}: layer {i}'s {total} KV heads can neither be split across nor "
                f"replicated over {tp} GPUs; vLLM refuses this TP size"
            )
        out.append(replace(s, num_kv_heads=max(1, total // tp)))
    return out


# Cache dtypes for which vLLM's arg_utils adds the first and last 2 layers to
# kv_cache_dtype_skip_layers (they keep the model dtype), except in hybrids.
_AUTO_SKIP_DTYPE_PREFIXES = ("turboquant_", "ultraquant_")


def _skip_layers(
    specs: list[KVCacheSpec | None],
    kinds: list[str],
    kvd: KVDType,
    mdtype: str,
) -> tuple[list[KVCacheSpec | None], tuple[int, ...]]:
    """turboquant_* / ultraquant_4bit: layers 0, 1, L-2, L-1 stay in the model dtype.
    Returns the specs and the layers kept in the model dtype (none: no such dtype).

    Llama-3.1-8B turboquant_k8v4: 28 layers x 8 x 196 B + 4 layers x 8 x 512 B =
    43,904 + 16,384 = 60,288 B a token (not 32 x 8 x 196 = 50,176).
    """
    if not kvd.name.startswith(_AUTO_SKIP_DTYPE_PREFIXES) or any(k in STATE_KINDS for k in kinds):
        return specs, ()
    n = min(2, len(specs) // 2)
    skip = sorted(set(range(n)) | set(range(len(specs) - n, len(specs))))
    out = list(specs)
    for i in skip:
        s = out[i]
        if isinstance(s, AttentionSpec):
            out[i] = replace(
                s, dtype=mdtype, dtype_bytes=DTYPE_BYTES[mdtype], state_content_bytes=None
            )
    return out, tuple(skip)


class _AttnFields(TypedDict):
    """An AttentionSpec's own fields, to build another attention kind from it."""

    num_kv_heads: int
    head_size: int
    head_size_v: int
    dtype: str
    dtype_bytes: int
    state_content_bytes: int | None


def _attn_fields(spec: AttentionSpec) -> _AttnFields:
    return {
        "num_kv_heads": spec.num_kv_heads,
        "head_size": spec.head_size,
        "head_size_v": spec.head_size_v,
        "dtype": spec.dtype,
        "dtype_bytes": spec.dtype_bytes,
        "state_content_bytes": spec.state_content_bytes,
    }


def _full_spec(cfg: Cfg, attn: _AttnShape, tp: int, kvd: KVDType, mdtype: str) -> FullAttentionSpec:
    if attn.is_mla:
        return MLAAttentionSpec(
            num_kv_heads=1,
            head_size=attn.head_size,
            head_size_v=0,
            dtype=attn.kv_dtype,
            dtype_bytes=attn.dtype_bytes,
            state_content_bytes=attn.content_bytes,
            kv_lora_rank=attn.kv_lora_rank or 0,
            qk_rope_head_dim=attn.qk_rope_head_dim or 0,
            indexer_bytes_per_token=attn.indexer_bytes,
        )
    base = attn.full_spec()
    # Gemma 4: the full ("global") layers have their own head size and KV heads.
    g_heads = cfg.int_("num_global_key_value_heads")
    g_size = cfg.int_("global_head_dim")
    if g_heads is None and g_size is None:
        return base
    return _reshaped(base, cfg, g_heads, g_size, None, tp, kvd, mdtype)


def _sliding_base(
    cfg: Cfg,
    attn: _AttnShape,
    tp: int,
    kvd: KVDType,
    mdtype: str,
) -> AttentionSpec | None:
    """The sliding layers' shape from the config's swa_* fields (None: none set, the
    base shape)."""
    heads = cfg.int_("swa_num_key_value_heads")
    size = cfg.int_("swa_head_dim")
    size_v = cfg.int_("swa_v_head_dim")
    base = attn.full_spec()
    if heads is None and size is None and size_v is None:
        return None
    return _reshaped(base, cfg, heads, size, size_v, tp, kvd, mdtype)


def _reshaped(
    base: FullAttentionSpec,
    cfg: Cfg,
    heads: int | None,
    size: int | None,
    size_v: int | None,
    tp: int,
    kvd: KVDType,
    mdtype: str,
) -> FullAttentionSpec:
    total = heads if heads is not None else None
    per_gpu = base.num_kv_heads if total is None else max(1, total // tp)
    if total is not None and total % tp and tp % total:
        raise ConfigError(
            f"{cfg.name}: the {total} KV heads of some layers can neither be split across nor "
            f"replicated over {tp} GPUs; vLLM refuses this TP size"
        )
    k = size if size is not None else base.head_size
    v = size_v if size_v is not None else (size if size is not None else base.head_size_v)
    content = attention_content_bytes(
        kvd, head_size=k, head_size_v=v, model_dtype_bytes=DTYPE_BYTES[mdtype]
    )
    return replace(
        base, num_kv_heads=per_gpu, head_size=k, head_size_v=v, state_content_bytes=content
    )


def _pp_ranges(num_layers: int, pp: int) -> list[tuple[int, int]]:
    """vLLM's get_pp_indices: even split, the remainder to the stages before the last.

    >>> _pp_ranges(61, 4)
    [(0, 15), (15, 30), (30, 46), (46, 61)]
    """
    per = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        per[-i] += 1
    out, start = [], 0
    for n in per:
        out.append((start, start + n))
        start += n
    return out


def pp_stage_ranges(num_layers: int, pp: int) -> list[tuple[int, int]]:
    """Each pipeline stage's ``[start, end)`` layers as vLLM splits them (get_pp_indices).

    >>> pp_stage_ranges(61, 2)
    [(0, 31), (31, 61)]
    """
    return _pp_ranges(num_layers, pp)


def _largest_stage(layer_specs: list[KVCacheSpec | None], pp: int) -> tuple[int, int]:
    """The stage with the most KV bytes per token is the one that limits the pool."""

    def stage_bytes(r: tuple[int, int]) -> tuple[int, int]:
        stage = layer_specs[r[0] : r[1]]
        per_token = sum(s.page_bytes_per_token for s in stage if isinstance(s, AttentionSpec))
        state = sum(s.state_bytes for s in stage if isinstance(s, MambaSpec))
        return per_token, state

    return max(_pp_ranges(len(layer_specs), pp), key=stage_bytes)
