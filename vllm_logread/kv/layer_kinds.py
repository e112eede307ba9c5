"""Which kind each layer of a config is, and its window: vLLM's per-model rules.

Returns per layer a kind ("full", "sliding", "chunked", "mamba", "linear",
"none") and the sliding window or chunk in tokens, read the way vLLM's model
files read the config (``layer_types``, Gemma's patterns, Llama 4's NoPE
layers, the hybrids' layer patterns).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import ConfigError
from ..findings import Finding, QwenSlidingFromMaxWindowLayers
from ..jsontypes import JSONValue
from .cfgread import MAX_LAYERS, Cfg
from .specs import CHUNKED, FULL, LINEAR, MAMBA, NONE, SLIDING

Kinds = tuple[list[str], list[int | None]]


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


def layer_kinds(cfg: Cfg, model_type: str, num_layers: int) -> tuple[Kinds, tuple[Finding, ...]]:
    """Per layer: its kind and its window (sliding window or chunk size), and
    what the reading assumed."""
    hybrid = _hybrid_layers(cfg, model_type, num_layers)
    if hybrid is not None:
        return hybrid, ()
    window, window_list = _window_setting(cfg)
    layer_types = cfg.list_("layer_types", num_layers)
    if layer_types is not None:
        return _kinds_from_layer_types(cfg, layer_types, window, window_list), ()
    if model_type in ("llama4", "llama4_text") or cfg.has("attention_chunk_size"):
        chunked = _kinds_llama4(cfg, num_layers)
        if chunked is not None:
            return chunked, ()
    kinds: list[str] = [FULL] * num_layers
    windows: list[int | None] = [None] * num_layers
    if window_list is not None:
        for i in range(num_layers):
            w = window_list[i % len(window_list)]
            if w is not None:
                kinds[i], windows[i] = SLIDING, w
        return (kinds, windows), ()
    if window is None:
        return (kinds, windows), ()
    return _kinds_from_pattern(cfg, model_type, num_layers, window)


def _window_setting(cfg: Cfg) -> tuple[int | None, list[int | None] | None]:
    """vLLM's get_sliding_window: one window, a per-layer list, or None."""
    window_val = cfg.raw("sliding_window")
    if window_val is None:
        window_val = cfg.raw("interleaved_sliding_window")
    if cfg.raw("use_sliding_window") is False:
        # Qwen2/2.5/3 ship sliding_window=32768/131072 with use_sliding_window
        # false: vLLM's get_sliding_window returns None, every layer is full.
        return None, None
    if isinstance(window_val, list):
        window_list: list[int | None] = []
        for w in window_val[:MAX_LAYERS]:
            if w is not None and (isinstance(w, bool) or not isinstance(w, int) or w < 1):
                raise ConfigError(f"{cfg.name}: sliding_window entries must be integers")
            window_list.append(w)
        return None, (window_list or None)
    if window_val is None:
        return None, None
    key = "sliding_window" if cfg.has("sliding_window") else "interleaved_sliding_window"
    return cfg.need_int(key, maximum=1 << 40), None


def _kinds_from_layer_types(
    cfg: Cfg,
    layer_types: Sequence[JSONValue],
    window: int | None,
    window_list: list[int | None] | None,
) -> Kinds:
    kinds: list[str] = []
    for i, lt in enumerate(layer_types):
        if not isinstance(lt, str):
            raise ConfigError(f"{cfg.name}: layer_types[{i}] must be a string")
        kind = _LAYER_TYPE_KINDS.get(lt)
        if kind is None:
            raise ConfigError(f"{cfg.name}: layer type {lt!r} is not modelled")
        kinds.append(kind)
    if SLIDING in kinds and window is None and window_list is None:
        raise ConfigError(f"{cfg.name}: sliding_attention layers but no sliding_window")
    windows: list[int | None] = [None] * len(kinds)
    if CHUNKED in kinds:
        chunk = cfg.need_int("attention_chunk_size", maximum=1 << 40)
        windows = [chunk if k == CHUNKED else None for k in kinds]
    for i, k in enumerate(kinds):
        if k == SLIDING:
            windows[i] = window if window_list is None else window_list[i % len(window_list)]
    return kinds, windows


def _kinds_llama4(cfg: Cfg, num_layers: int) -> Kinds | None:
    """Llama 4: chunked local attention except on the NoPE (global) layers."""
    chunk_size = cfg.int_("attention_chunk_size", maximum=1 << 40)
    if chunk_size is None:
        return None
    raw = cfg.raw("no_rope_layers")
    # Llama-4-Scout ships "no_rope_layers": []: Llama4TextConfig then derives it.
    nope = None if raw == [] else cfg.list_("no_rope_layers", num_layers)
    if nope is None:
        interval = cfg.int_("no_rope_layer_interval") or 4
        # Llama4TextConfig default: layer i uses RoPE (chunked local attention)
        # unless (i + 1) % 4 == 0, a global NoPE layer: 36 chunked + 12 full of 48.
        nope = [int((i + 1) % interval != 0) for i in range(num_layers)]
    kinds: list[str] = [FULL] * num_layers
    windows: list[int | None] = [None] * num_layers
    for i, flag in enumerate(nope):
        if flag not in (0, 1) or isinstance(flag, bool):
            raise ConfigError(f"{cfg.name}: no_rope_layers entries must be 0 or 1")
        if flag == 1:
            kinds[i], windows[i] = CHUNKED, chunk_size
    return kinds, windows


def _kinds_from_pattern(
    cfg: Cfg, model_type: str, num_layers: int, window: int
) -> tuple[Kinds, tuple[Finding, ...]]:
    kinds: list[str] = [FULL] * num_layers
    windows: list[int | None] = [None] * num_layers
    pattern = cfg.int_("sliding_window_pattern", maximum=MAX_LAYERS)
    if pattern is None and model_type in ("gemma3", "gemma3_text"):
        pattern = 6  # Gemma3TextConfig default: 5 sliding layers, then 1 full.
    if pattern is None and model_type == "cohere2":
        pattern = 4
    if model_type in ("gemma2", "gpt_oss"):
        # Gemma 2 and gpt-oss alternate, starting with a sliding layer (even indices).
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
        return (kinds, windows), (QwenSlidingFromMaxWindowLayers(),)
    else:
        # Not interleaved (Mistral-7B-v0.1, Phi-3): vLLM puts the window in
        # CacheConfig and every layer becomes SlidingWindowSpec(window).
        kinds = [SLIDING] * num_layers
        windows = [window] * num_layers
    return (kinds, windows), ()


def _hybrid_layers(cfg: Cfg, model_type: str, num_layers: int) -> Kinds | None:
    """Layer kinds of Mamba / linear-attention hybrids, or None if not one."""
    none: list[int | None] = [None] * num_layers
    if model_type in ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"):
        if cfg.has("layer_types"):
            return None  # the generic layer_types path reads them
        interval = cfg.int_("full_attention_interval", maximum=MAX_LAYERS) or 4
        # Qwen3-Next-80B: interval 4 -> layers 3, 7, ..., 47 full (12), 36 linear.
        return [FULL if (i + 1) % interval == 0 else LINEAR for i in range(num_layers)], none
    if model_type in ("nemotron_h", "nemotron_3"):
        return _nemotron_h_layers(cfg, num_layers), none
    if cfg.has("hybrid_layer_pattern"):
        # MiMo-V2-Flash (mimo_v2.py, 0.33 source): hybrid_layer_pattern[i] == 1 is a
        # sliding layer of sliding_window_size tokens (with its own swa_* heads and head
        # sizes, read in build.py); 0 is full attention.
        pattern = cfg.list_("hybrid_layer_pattern", num_layers) or []
        if any(p not in (0, 1) or isinstance(p, bool) for p in pattern):
            raise ConfigError(f"{cfg.name}: hybrid_layer_pattern entries must be 0 or 1")
        window = cfg.need_int("sliding_window_size", "sliding_window", maximum=1 << 40)
        return (
            [SLIDING if p == 1 else FULL for p in pattern],
            [window if p == 1 else None for p in pattern],
        )
    if model_type == "kimi_linear":
        return _kimi_linear_layers(cfg, num_layers), none
    if model_type == "bailing_hybrid":
        # BailingMoeV2.5 (bailing_moe_linear.py, 0.33 source): layer i is linear attention
        # unless (i + 1) % layer_group_size == 0, an MLA layer; group 0: every layer MLA.
        group = cfg.int_("layer_group_size", minimum=0, maximum=MAX_LAYERS)
        group = 1 if group is None else group
        return [LINEAR if group > 0 and (i + 1) % group else FULL for i in range(num_layers)], none
    if model_type == "nemotron-nas":
        # DeciLM (Llama-3.1-Nemotron Super/Ultra): a layer whose attention is a
        # no_op has no attention and keeps nothing (nemotron_nas.py, 0.33).
        return [NONE if a.get("no_op") else FULL for a in decilm_attention(cfg, num_layers)], none
    if model_type in ("lfm2", "lfm2_moe"):
        types = cfg.list_("layer_types", num_layers)
        if types is None:
            raise ConfigError(f"{cfg.name}: LFM2 without layer_types")
        # Lfm2DecoderLayer: "full_attention" attends, every other layer is a short conv.
        return [FULL if t == "full_attention" else MAMBA for t in types], none
    if model_type == "jamba":
        period = cfg.need_int("attn_layer_period", maximum=MAX_LAYERS)
        offset = cfg.need_int("attn_layer_offset", minimum=0, maximum=MAX_LAYERS)
        # Jamba-v0.1: period 8, offset 4 -> layers 4, 12, 20, 28 attend; 28 Mamba.
        return [FULL if i % period == offset else MAMBA for i in range(num_layers)], none
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
        return [FULL if i in set(idx) else MAMBA for i in range(num_layers)], none
    return None


def decilm_attention(cfg: Cfg, num_layers: int) -> list[Mapping[str, JSONValue]]:
    """DeciLM's per-layer ``block_configs[i].attention`` objects, checked."""
    blocks = cfg.list_("block_configs", num_layers)
    if blocks is None:
        raise ConfigError(f"{cfg.name}: nemotron-nas without block_configs")
    out: list[Mapping[str, JSONValue]] = []
    for i, block in enumerate(blocks):
        attn = block.get("attention") if isinstance(block, dict) else None
        if not isinstance(attn, dict):
            raise ConfigError(f"{cfg.name}: block_configs[{i}].attention must be an object")
        if attn.get("replace_with_linear") or attn.get("window_length") or attn.get("sparsify"):
            raise ConfigError(
                f"{cfg.name}: block_configs[{i}].attention (linear replacement, window or "
                "sparsity) is not modelled"
            )
        out.append(attn)
    return out


def _kimi_linear_layers(cfg: Cfg, num_layers: int) -> list[str]:
    """KimiLinearConfig.is_kda_layer: layer i is KDA when i + 1 is in kda_layers (1-based);
    every other layer is MLA. Kimi-Linear-48B: 20 KDA + 7 MLA of 27."""
    raw = cfg.raw("linear_attn_config")
    kda = raw.get("kda_layers") if isinstance(raw, dict) else None
    if kda is None:
        return [FULL] * num_layers
    if not isinstance(kda, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= num_layers for i in kda
    ):
        raise ConfigError(f"{cfg.name}: linear_attn_config.kda_layers must list layers 1..N")
    one_based = set(kda)
    return [LINEAR if i + 1 in one_based else FULL for i in range(num_layers)]


def _nemotron_h_layers(cfg: Cfg, num_layers: int) -> list[str]:
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
    return kinds
