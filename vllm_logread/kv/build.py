"""config.json dict -> the model's layer specs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, LogReadError
from .specs import (
    ATTENTION_KINDS,
    CHUNKED,
    FP8_DS_MLA_BYTES_PER_TOKEN,
    FULL,
    FULL_ATTENTION_KINDS,
    LINEAR,
    MAMBA,
    MLA,
    NONE,
    SLIDING,
    STATE_KINDS,
    KVSpec,
)

MAX_LAYERS = 10_000


MAX_DIM = 1 << 24


# vLLM's ModelConfig.is_deepseek_mla: these model types use MLA when
# kv_lora_rank is set (kimi_linear mixes MLA with KDA layers: not modelled).
_MLA_MODEL_TYPES = frozenset(
    {
        "deepseek_v2",
        "deepseek_v3",
        "deepseek_v32",
        "deepseek_mtp",
        "kimi_k2",
        "longcat_flash",
        "pangu_ultra_moe",
        "glm_moe_dsa",
    }
)


_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


_DTYPE_ALIASES = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}


# vLLM's --kv-cache-dtype values and their bytes per element ("auto" follows
# the model dtype). The fp8 kinds are stored as torch.uint8: 1 byte.
_KV_CACHE_DTYPES = {
    "auto": 0,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_inc": 1,
    "fp8_ds_mla": 1,
}


class _Cfg:
    """Typed access to one (text) config dict, with ConfigError on bad values."""

    def __init__(self, data: Mapping[str, Any], name: str) -> None:
        self.data = data
        self.name = name

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str) -> Any:
        return self.data.get(key)

    def int_(self, *keys: str, minimum: int = 1, maximum: int = MAX_DIM) -> int | None:
        """The first of ``keys`` that is set (not null), as a bounded int."""
        for key in keys:
            value = self.data.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{self.name}: {key} must be an integer, got {_short(value)}")
            if not minimum <= value <= maximum:
                raise ConfigError(f"{self.name}: {key}={value} is outside [{minimum}, {maximum:,}]")
            return value
        return None

    def need_int(self, *keys: str, minimum: int = 1, maximum: int = MAX_DIM) -> int:
        value = self.int_(*keys, minimum=minimum, maximum=maximum)
        if value is None:
            raise ConfigError(f"{self.name}: no {' / '.join(keys)} in the config")
        return value

    def str_(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{self.name}: {key} must be a string, got {_short(value)}")
        return value

    def list_(self, key: str, length: int) -> list[Any] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise ConfigError(f"{self.name}: {key} must be a list, got {_short(value)}")
        if len(value) < length:
            raise ConfigError(f"{self.name}: {key} has {len(value)} entries for {length} layers")
        return value[:length]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _text_config(config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """vLLM's hf_text_config: the nested language-model config if there is one."""
    for key in ("text_config", "llm_config", "language_config"):
        nested = config.get(key)
        if nested is None:
            continue
        if not isinstance(nested, dict):
            raise ConfigError(f"{name}: {key} must be an object, got {_short(nested)}")
        return nested
    thinker = config.get("thinker_config")
    if isinstance(thinker, dict) and isinstance(thinker.get("text_config"), dict):
        text: Mapping[str, Any] = thinker["text_config"]
        return text
    return config


def _norm_dtype(value: str, what: str) -> str:
    """'torch.bfloat16' / 'half' / 'fp16' -> a canonical dtype name."""
    key = value.strip().lower().removeprefix("torch.")
    if key not in _DTYPE_ALIASES:
        raise ConfigError(f"unknown {what} {value!r} (bfloat16, float16, float32 or auto)")
    return _DTYPE_ALIASES[key]


def _model_dtype(
    config: Mapping[str, Any], text: Mapping[str, Any], dtype: str | None, notes: list[str]
) -> str:
    """The dtype vLLM runs the model in (its ``--dtype``, default "auto").

    "auto" takes the config's torch_dtype (top level first, then the text
    config, as vLLM's _find_dtype does). A float32 or missing dtype is served
    in 16 bits: vLLM downcasts float32 to the platform's first supported
    dtype, bfloat16 on GPUs with compute capability >= 8.0 (float16 on older
    ones and in vLLM before 0.7, except Gemma 2/3); 2 bytes either way.
    """
    if dtype is not None and dtype.strip().lower() != "auto":
        return _norm_dtype(dtype, "dtype")
    found: str | None = None
    for source in (config, text):
        for key in ("torch_dtype", "dtype"):
            value = source.get(key)
            if isinstance(value, str):
                found = value
                break
        if found:
            break
    if found is None:
        notes.append(
            "the config names no torch_dtype; vLLM then reads the weights' dtype "
            "(or assumes float32 and serves it in 16 bits): assumed bfloat16"
        )
        return "bfloat16"
    canon = _norm_dtype(found, "torch_dtype")
    if canon == "float32":
        notes.append(
            "config dtype float32 is served in 16 bits by vLLM (bfloat16 on compute "
            "capability >= 8.0, float16 on older GPUs): 2 bytes either way"
        )
        return "bfloat16"
    return canon


def _total_kv_heads(cfg: _Cfg, model_type: str, num_heads: int) -> int:
    """vLLM's ModelConfig.get_total_num_kv_heads, for a plain config dict."""
    if model_type in ("falcon", "RefinedWeb", "RefinedWebModel"):
        new_arch = cfg.raw("new_decoder_architecture") is True
    else:
        new_arch = False
    if not new_arch and cfg.raw("multi_query") is True:
        # Falcon-7B: multi_query true, new_decoder_architecture false -> 1 KV head.
        return 1
    if model_type in ("mpt", "dbrx"):
        attn = cfg.raw("attn_config")
        if isinstance(attn, dict) and attn.get("kv_n_heads") is not None:
            return _Cfg(attn, cfg.name + ".attn_config").need_int("kv_n_heads")
        return num_heads
    value = cfg.int_("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num")
    return num_heads if value is None else value


def _head_size(cfg: _Cfg, model_type: str, num_heads: int) -> int:
    """vLLM's ModelConfig.get_head_size for non-MLA models."""
    keys = ["head_dim", "hidden_size_per_head"]
    if model_type in ("nemotron_h", "zamba2"):
        keys.insert(0, "attention_head_dim")
    if model_type in ("chatglm", "glm"):
        keys.append("kv_channels")
    value = cfg.int_(*keys)
    if value is not None:
        return value
    hidden = cfg.need_int("hidden_size", "n_embd", "d_model")
    if hidden < num_heads:
        raise ConfigError(f"{cfg.name}: hidden_size {hidden} < {num_heads} attention heads")
    # Llama-3.1-8B has no head_dim: 4096 // 32 = 128.
    return hidden // num_heads


def _check_tp(num_heads: int, total_kv_heads: int, tp: int, name: str, is_mla: bool) -> None:
    """vLLM's TP rule: query heads divide by TP; KV heads divide TP or by TP.

    ModelConfig.verify_with_parallel_config rejects ``heads % tp != 0``; the
    attention layers then either split the KV heads (``kv % tp == 0``) or
    replicate them (``tp % kv == 0``). Falcon-7B's 71 heads allow only TP 1.
    """
    if num_heads % tp:
        raise ConfigError(
            f"{name}: tensor parallel size {tp} does not divide the {num_heads} attention "
            "heads; vLLM refuses this TP size"
        )
    if not is_mla and total_kv_heads % tp and tp % total_kv_heads:
        raise ConfigError(
            f"{name}: the {total_kv_heads} KV heads can neither be split across nor "
            f"replicated over {tp} GPUs; vLLM refuses this TP size"
        )


def _layer_kinds(
    cfg: _Cfg, model_type: str, num_layers: int, notes: list[str]
) -> tuple[list[str], list[int | None]]:
    """Per layer: its kind and its window (sliding window or chunk size)."""
    kinds: list[str] = [FULL] * num_layers
    windows: list[int | None] = [None] * num_layers
    window_val = cfg.raw("sliding_window")
    if window_val is None:
        window_val = cfg.raw("interleaved_sliding_window")
    if cfg.raw("use_sliding_window") is False:
        # Qwen2/2.5/3 ship sliding_window=32768/131072 with use_sliding_window
        # false: vLLM's get_sliding_window returns None, every layer is full.
        window_val = None
    window: int | None = None
    window_list: list[int | None] | None = None
    if isinstance(window_val, list):
        window_list = []
        for w in window_val[:MAX_LAYERS]:
            if w is not None and (isinstance(w, bool) or not isinstance(w, int) or w < 1):
                raise ConfigError(f"{cfg.name}: sliding_window entries must be integers")
            window_list.append(w)
        if not window_list:
            window_list = None
    elif window_val is not None:
        key = "sliding_window" if cfg.has("sliding_window") else "interleaved_sliding_window"
        window = cfg.need_int(key, maximum=1 << 40)

    layer_types = cfg.list_("layer_types", num_layers)
    if layer_types is not None:
        for i, lt in enumerate(layer_types):
            if not isinstance(lt, str):
                raise ConfigError(f"{cfg.name}: layer_types[{i}] must be a string")
            kind = _LAYER_TYPE_KINDS.get(lt)
            if kind is None:
                raise ConfigError(f"{cfg.name}: layer type {lt!r} is not modelled")
            kinds[i] = kind
        if SLIDING in kinds and window is None and window_list is None:
            raise ConfigError(f"{cfg.name}: sliding_attention layers but no sliding_window")
        if CHUNKED in kinds:
            chunk = cfg.need_int("attention_chunk_size", maximum=1 << 40)
            windows = [chunk if k == CHUNKED else None for k in kinds]
        for i, k in enumerate(kinds):
            if k == SLIDING:
                windows[i] = window if window_list is None else window_list[i % len(window_list)]
        return kinds, windows

    if model_type in ("llama4", "llama4_text") or cfg.has("attention_chunk_size"):
        chunk_size = cfg.int_("attention_chunk_size", maximum=1 << 40)
        if chunk_size is not None:
            nope = cfg.list_("no_rope_layers", num_layers)
            if nope is None:
                interval = cfg.int_("no_rope_layer_interval") or 4
                # Llama4TextConfig default: layer i uses RoPE (chunked local
                # attention) unless (i + 1) % 4 == 0, a global NoPE layer.
                nope = [int((i + 1) % interval != 0) for i in range(num_layers)]
            for i, flag in enumerate(nope):
                if flag not in (0, 1) or isinstance(flag, bool):
                    raise ConfigError(f"{cfg.name}: no_rope_layers entries must be 0 or 1")
                if flag == 1:
                    kinds[i], windows[i] = CHUNKED, chunk_size
            return kinds, windows

    if window_list is not None:
        for i in range(num_layers):
            w = window_list[i % len(window_list)]
            if w is not None:
                kinds[i], windows[i] = SLIDING, w
        return kinds, windows
    if window is None:
        return kinds, windows

    pattern = cfg.int_("sliding_window_pattern", maximum=MAX_LAYERS)
    if pattern is None and model_type in ("gemma3", "gemma3_text"):
        pattern = 6  # Gemma3TextConfig default: 5 sliding layers, then 1 full.
    if pattern is None and model_type == "cohere2":
        pattern = 4
    if model_type == "gemma2":
        # Gemma 2 alternates, starting with a sliding layer (even indices).
        for i in range(0, num_layers, 2):
            kinds[i], windows[i] = SLIDING, window
    elif model_type == "gpt_oss":
        for i in range(0, num_layers, 2):
            kinds[i], windows[i] = SLIDING, window
    elif pattern is not None:
        # (i + 1) % pattern != 0 -> sliding: Gemma 3 27B's 62 layers have full
        # attention at 5, 11, ..., 59 (10 layers) and 52 sliding layers.
        for i in range(num_layers):
            if (i + 1) % pattern:
                kinds[i], windows[i] = SLIDING, window
    elif model_type.startswith("qwen2") or model_type.startswith("qwen3"):
        # use_sliding_window true: layers from max_window_layers on slide.
        start = cfg.int_("max_window_layers", minimum=0, maximum=MAX_LAYERS)
        start = num_layers if start is None else start
        for i in range(min(start, num_layers), num_layers):
            kinds[i], windows[i] = SLIDING, window
        notes.append("Qwen2-style use_sliding_window: layers >= max_window_layers slide")
    else:
        # Not interleaved (Mistral-7B-v0.1, Phi-3): vLLM puts the window in
        # CacheConfig and every layer becomes SlidingWindowSpec(window).
        kinds = [SLIDING] * num_layers
        windows = [window] * num_layers
    return kinds, windows


_LAYER_TYPE_KINDS = {
    "full_attention": FULL,
    "attention": FULL,
    "global": FULL,
    "sliding_attention": SLIDING,
    "sliding": SLIDING,
    "local": SLIDING,
    "chunked_attention": CHUNKED,
    "linear_attention": LINEAR,
    "mamba": MAMBA,
    "mamba2": MAMBA,
}


@dataclass(frozen=True, slots=True)
class _StateShape:
    kind: str
    bytes_per_layer: int


def _hybrid_layers(
    cfg: _Cfg, model_type: str, num_layers: int
) -> tuple[list[str], list[int | None]] | None:
    """Layer kinds of Mamba / linear-attention hybrids, or None if not one."""
    if model_type in ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"):
        if cfg.has("layer_types"):
            return None  # the generic layer_types path reads them
        interval = cfg.int_("full_attention_interval", maximum=MAX_LAYERS) or 4
        # Qwen3-Next-80B: interval 4 -> layers 3, 7, ..., 47 full (12), 36 linear.
        kinds = [FULL if (i + 1) % interval == 0 else LINEAR for i in range(num_layers)]
        return kinds, [None] * num_layers
    if model_type in ("nemotron_h", "nemotron_3"):
        pattern = cfg.str_("hybrid_override_pattern")
        if pattern is None:
            raise ConfigError(f"{cfg.name}: nemotron_h without hybrid_override_pattern")
        if len(pattern) != num_layers:
            raise ConfigError(
                f"{cfg.name}: hybrid_override_pattern has {len(pattern)} layers, "
                f"num_hidden_layers is {num_layers}"
            )
        table = {"M": MAMBA, "*": FULL, "-": NONE, "E": NONE}
        kinds = []
        for ch in pattern:
            if ch not in table:
                raise ConfigError(f"{cfg.name}: unknown layer {ch!r} in hybrid_override_pattern")
            kinds.append(table[ch])
        return kinds, [None] * num_layers
    if model_type == "jamba":
        period = cfg.need_int("attn_layer_period", maximum=MAX_LAYERS)
        offset = cfg.need_int("attn_layer_offset", minimum=0, maximum=MAX_LAYERS)
        kinds = [FULL if i % period == offset else MAMBA for i in range(num_layers)]
        return kinds, [None] * num_layers
    if model_type in ("bamba", "granitemoehybrid", "falcon_h1") or cfg.has("attn_layer_indices"):
        if model_type == "falcon_h1":
            raise ConfigError(f"{cfg.name}: Falcon-H1 (parallel hybrid) is not modelled")
        if cfg.has("layer_types") and not cfg.has("attn_layer_indices"):
            return None
        idx = cfg.raw("attn_layer_indices")
        if not isinstance(idx, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < num_layers for i in idx
        ):
            raise ConfigError(f"{cfg.name}: attn_layer_indices must list layer numbers")
        kinds = [FULL if i in set(idx) else MAMBA for i in range(num_layers)]
        return kinds, [None] * num_layers
    return None


def _divide(a: int, b: int, what: str, name: str) -> int:
    if a % b:
        raise ConfigError(f"{name}: {what} ({a}) does not divide by tensor parallel size {b}")
    return a // b


def _state_shape(
    cfg: _Cfg, model_type: str, kinds: list[str], tp: int, dtype_bytes: int, ssm_bytes: int
) -> _StateShape | None:
    """Bytes of one state layer for one request on one GPU (vLLM's MambaSpec page).

    Mirrors vLLM's MambaStateShapeCalculator: Mamba2 conv state
    ``(conv_dim / tp) x (d_conv - 1)`` plus SSM ``(heads / tp) x head_dim x
    d_state``; Gated DeltaNet conv ``(2 x k_heads x k_dim + v_heads x v_dim) / tp
    x (kernel - 1)`` plus ``(v_heads / tp) x k_dim x v_dim``. Qwen3-Next-80B at
    TP 1: 3 x 8,192 x 2 B + 32 x 128 x 128 x 2 B = 1,097,728 B per layer.
    """
    name = cfg.name
    if LINEAR in kinds:
        k_heads = cfg.need_int("linear_num_key_heads")
        v_heads = cfg.need_int("linear_num_value_heads")
        k_dim = cfg.need_int("linear_key_head_dim")
        v_dim = cfg.need_int("linear_value_head_dim")
        kernel = cfg.need_int("linear_conv_kernel_dim")
        conv_dim = k_dim * k_heads * 2 + v_dim * v_heads
        _divide(k_heads, tp, "linear_num_key_heads", name)
        conv = _divide(conv_dim, tp, "the linear-attention conv width", name) * (kernel - 1)
        ssm = _divide(v_heads, tp, "linear_num_value_heads", name) * k_dim * v_dim
        return _StateShape(LINEAR, conv * dtype_bytes + ssm * ssm_bytes)
    if MAMBA not in kinds:
        return None
    hidden = cfg.int_("hidden_size", "d_model")
    if model_type in ("nemotron_h", "nemotron_3"):
        heads = cfg.need_int("mamba_num_heads")
        head_dim = cfg.need_int("mamba_head_dim")
        groups = cfg.need_int("n_groups")
        d_state = cfg.need_int("ssm_state_size")
        d_conv = cfg.need_int("conv_kernel")
        intermediate = heads * head_dim
    elif model_type == "jamba":
        d_state = cfg.need_int("mamba_d_state")
        d_conv = cfg.need_int("mamba_d_conv")
        expand = cfg.need_int("mamba_expand")
        if hidden is None:
            raise ConfigError(f"{name}: no hidden_size in the config")
        inner = _divide(expand * hidden, tp, "the Mamba inner width", name)
        # Mamba1: conv (inner/tp) x (d_conv-1), SSM (inner/tp) x d_state.
        return _StateShape(MAMBA, inner * (d_conv - 1) * dtype_bytes + inner * d_state * ssm_bytes)
    else:
        heads = cfg.need_int("mamba_n_heads")
        head_dim = cfg.need_int("mamba_d_head")
        groups = cfg.need_int("mamba_n_groups")
        d_state = cfg.need_int("mamba_d_state")
        d_conv = cfg.need_int("mamba_d_conv")
        intermediate = heads * head_dim
    # A single group is replicated to every rank (extra_groups_for_head_shards).
    if groups % tp and groups != 1:
        raise ConfigError(f"{name}: {groups} Mamba groups cannot be split over TP {tp}")
    groups_total = groups if groups % tp == 0 else tp
    conv_dim = intermediate + 2 * groups_total * d_state
    conv = _divide(conv_dim, tp, "the Mamba conv width", name) * (d_conv - 1)
    ssm = _divide(heads, tp, "the Mamba heads", name) * head_dim * d_state
    return _StateShape(MAMBA, conv * dtype_bytes + ssm * ssm_bytes)


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


def spec_from_config(
    config: Mapping[str, Any],
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
        raise ConfigError(f"model config must be a JSON object, got {_short(config)}")
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


def _spec_from_config(
    config: Mapping[str, Any],
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
    for label, value in (("tensor parallel size", tp), ("pipeline parallel size", pp)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4096:
            raise ConfigError(f"{label} must be an integer from 1 to 4096, got {_short(value)}")
    if not isinstance(kv_cache_dtype, str):
        raise ConfigError(f"kv_cache_dtype must be a string, got {_short(kv_cache_dtype)}")
    if dtype is not None and not isinstance(dtype, str):
        raise ConfigError(f"dtype must be a string, got {_short(dtype)}")
    notes: list[str] = []
    text_dict = _text_config(config, name)
    cfg = _Cfg(text_dict, name)
    model_type = cfg.str_("model_type") or ""
    if model_type in ("mamba", "mamba2", "falcon_mamba"):
        raise ConfigError(f"{name}: {model_type} is attention-free: it keeps no per-token KV cache")
    if model_type == "kimi_linear":
        raise ConfigError(f"{name}: Kimi-Linear (MLA + KDA layers) is not modelled")
    num_layers = cfg.need_int(
        "num_hidden_layers", "n_layer", "num_layers", "n_layers", maximum=MAX_LAYERS
    )
    num_heads = cfg.need_int("num_attention_heads", "n_head", "n_heads", "num_heads")
    if pp > num_layers:
        raise ConfigError(f"{name}: pipeline parallel size {pp} exceeds the {num_layers} layers")

    # Dtypes: the model's, then the cache's.
    model_dtype = _model_dtype(config, text_dict, dtype, notes)
    kv_key = kv_cache_dtype.strip().lower()
    if kv_key not in _KV_CACHE_DTYPES:
        raise ConfigError(
            f"unknown kv_cache_dtype {kv_cache_dtype!r} "
            f"({', '.join(k for k in _KV_CACHE_DTYPES if k != 'half')})"
        )
    quant = config.get("quantization_config")
    if isinstance(quant, dict) and quant.get("kv_cache_scheme") is not None and kv_key == "auto":
        notes.append(
            "the checkpoint carries a kv_cache_scheme; if the log shows an fp8 "
            "kv_cache_dtype, pass it: 'auto' assumed the model dtype"
        )

    # MLA or plain attention.
    kv_lora = cfg.int_("kv_lora_rank")
    is_mla = model_type in _MLA_MODEL_TYPES and kv_lora is not None
    rope_dim: int | None = None
    indexer_bytes = 0
    if is_mla:
        assert kv_lora is not None
        rope_dim = cfg.int_("qk_rope_head_dim", minimum=0) or 0
        head_size = kv_lora + rope_dim
        total_kv = num_heads
        kv_per_gpu = 1
        factor = 1
        is_sparse = cfg.has("index_topk") or model_type == "deepseek_v32"
        if kv_key == "fp8_ds_mla" or (is_sparse and kv_key in ("auto", "fp8", "fp8_e4m3")):
            kv_dtype, dtype_bytes = "fp8_ds_mla", 1
            page_per_layer = FP8_DS_MLA_BYTES_PER_TOKEN
            notes.append(
                "fp8_ds_mla: 656 bytes per token per layer (512 fp8 latent + 16 scale + "
                "128 bf16 rope); vLLM uses it for DeepSeek-V3.2's sparse attention"
            )
        else:
            kv_dtype = model_dtype if kv_key == "auto" else _canon_kv(kv_key)
            dtype_bytes = (
                _DTYPE_BYTES[model_dtype] if kv_key == "auto" else _KV_CACHE_DTYPES[kv_key]
            )
            page_per_layer = head_size * dtype_bytes
        if is_sparse:
            index_dim = cfg.int_("index_head_dim") or 128
            # DeepseekV32IndexerCache: fp8 keys + one fp32 scale per 128 values.
            indexer_bytes = index_dim + index_dim // 128 * 4
            page_per_layer += indexer_bytes
            notes.append(
                f"DeepSeek-V3.2 indexer: {indexer_bytes} more bytes per token per layer "
                "(uint8 keys + fp32 scales) in the same pool"
            )
        if cfg.int_("num_nextn_predict_layers", minimum=0):
            notes.append(
                "the MTP draft layer is counted only when speculative decoding runs it "
                "(then 1 more MLA layer)"
            )
        _check_tp(num_heads, total_kv, tp, name, True)
    else:
        if kv_key == "fp8_ds_mla":
            raise ConfigError(f"{name}: kv_cache_dtype fp8_ds_mla applies to MLA models only")
        if kv_lora is not None:
            notes.append(
                f"kv_lora_rank is set but vLLM uses MLA only for {sorted(_MLA_MODEL_TYPES)}: "
                "modelled as standard attention"
            )
        head_size = _head_size(cfg, model_type, num_heads)
        total_kv = _total_kv_heads(cfg, model_type, num_heads)
        _check_tp(num_heads, total_kv, tp, name, False)
        kv_per_gpu = max(1, total_kv // tp)
        factor = 2
        if kv_key == "auto":
            kv_dtype, dtype_bytes = model_dtype, _DTYPE_BYTES[model_dtype]
        else:
            kv_dtype, dtype_bytes = _canon_kv(kv_key), _KV_CACHE_DTYPES[kv_key]
        page_per_layer = factor * kv_per_gpu * head_size * dtype_bytes
        if tp > total_kv:
            notes.append(f"TP {tp} > {total_kv} KV heads: vLLM replicates them, 1 KV head per GPU")

    # Layer kinds.
    hybrid = _hybrid_layers(cfg, model_type, num_layers)
    if hybrid is not None:
        kinds, windows = hybrid
    else:
        kinds, windows = _layer_kinds(cfg, model_type, num_layers, notes)
    if is_mla:
        kinds = [MLA if k == FULL else k for k in kinds]
        if any(k in (SLIDING, CHUNKED) for k in kinds):
            raise ConfigError(f"{name}: MLA with sliding windows is not modelled")

    # State layers (Mamba / linear attention).
    state_per_layer = 0
    if any(k in STATE_KINDS for k in kinds):
        ssm_name = mamba_ssm_cache_dtype or cfg.str_("mamba_ssm_cache_dtype")
        if ssm_name is None or ssm_name.lower() == "auto":
            ssm_bytes = _DTYPE_BYTES[model_dtype]
        else:
            ssm_bytes = _DTYPE_BYTES[_norm_dtype(ssm_name, "mamba_ssm_cache_dtype")]
        shape = _state_shape(cfg, model_type, kinds, tp, _DTYPE_BYTES[model_dtype], ssm_bytes)
        if shape is None:
            raise ConfigError(f"{name}: Mamba layers of model type {model_type!r} not modelled")
        state_per_layer = shape.bytes_per_layer
        notes.append(
            "state dtype: conv and SSM state in the model dtype unless "
            "mamba_ssm_cache_dtype says otherwise; vLLM pads the state page to the "
            "attention page (see the KV cache groups)"
        )

    # The stage with the most KV bytes per token is the one that limits the pool.
    ranges = _pp_ranges(num_layers, pp)

    def stage_bytes(r: tuple[int, int]) -> tuple[int, int]:
        stage = kinds[r[0] : r[1]]
        n_attn = sum(k in ATTENTION_KINDS for k in stage)
        n_state = sum(k in STATE_KINDS for k in stage)
        return n_attn * page_per_layer, n_state * state_per_layer

    stage = max(ranges, key=stage_bytes)
    stage_kinds = kinds[stage[0] : stage[1]]
    n_attn = sum(k in ATTENTION_KINDS for k in stage_kinds)
    n_full = sum(k in FULL_ATTENTION_KINDS for k in stage_kinds)
    n_state = sum(k in STATE_KINDS for k in stage_kinds)
    if not any(k in ATTENTION_KINDS for k in kinds):
        raise ConfigError(f"{name}: no attention layers: no per-token KV cache to model")
    kv_kinds = {k for k in kinds if k != NONE}
    is_uniform = len(kv_kinds) == 1 and kv_kinds <= FULL_ATTENTION_KINDS
    if CHUNKED in kinds:
        notes.append(
            "chunked local attention: vLLM turns the hybrid KV cache manager off for it "
            "unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1 (default off from "
            "vLLM ~0.10.1 until a later release turned it on); a 'Hybrid KV cache manager "
            "is disabled' warning in the log tells which applies"
        )
    return KVSpec(
        model=model,
        source=source,
        source_kind=source_kind,
        model_type=model_type or None,
        layer_kinds=tuple(kinds),
        layer_windows=tuple(windows),
        num_attention_heads=num_heads,
        total_num_kv_heads=total_kv,
        num_kv_heads=kv_per_gpu,
        head_size=head_size,
        kv_factor=factor,
        is_mla=is_mla,
        model_dtype=model_dtype,
        kv_cache_dtype=kv_key,
        kv_dtype=kv_dtype,
        dtype_bytes=dtype_bytes,
        page_bytes_per_token_per_layer=page_per_layer,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        stage_layer_range=stage,
        kv_bytes_per_token=n_attn * page_per_layer,
        kv_bytes_per_token_full_attention=n_full * page_per_layer,
        state_bytes_per_layer=state_per_layer,
        state_bytes_per_request=n_state * state_per_layer,
        is_uniform=is_uniform,
        kv_lora_rank=kv_lora if is_mla else None,
        qk_rope_head_dim=rope_dim,
        indexer_bytes_per_token_per_layer=indexer_bytes,
        notes=tuple(dict.fromkeys(notes)),
    )


def _canon_kv(kv_key: str) -> str:
    return "float16" if kv_key == "half" else kv_key
