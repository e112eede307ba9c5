"""Mamba / linear-attention state of one layer: vLLM's MambaStateShapeCalculator.

Shapes per GPU (``tp`` = tensor parallel size), in vLLM's default "SD" conv
layout (the bytes are the same in "DS"):

* Mamba1 (Jamba): conv ``(d_conv - 1, inner / tp)``, SSM ``(inner / tp, d_state)``;
* Mamba2 (Nemotron-H, Bamba, Granite 4): conv ``(d_conv - 1, (inner + 2 x groups
  x d_state) / tp)``, SSM ``(heads / tp, head_dim, d_state)``; one group is
  replicated to every rank;
* gated delta net (Qwen3-Next, Qwen3.5): conv ``(kernel - 1, (2 x k_heads x
  k_dim + v_heads x v_dim) / tp)``, SSM ``(v_heads / tp, v_dim, k_dim)``.
  Qwen3-Next-80B at TP 1, bf16: 3 x 8,192 x 2 + 32 x 128 x 128 x 2 = 1,097,728 B;
* KDA (Kimi-Linear): conv ``(kernel - 1, 3 x heads x head_dim / tp)`` in the model
  dtype, recurrent ``(heads / tp, head_dim, head_dim)`` in float32;
* short conv (LFM2): conv ``(conv_L_cache - 1, conv_dim / tp)`` only.

Each kind is its own spec class (specs.py: Mamba1Spec ... KDASpec), all vLLM's
``MambaSpec`` (one KV cache group kind).

The conv state takes the model dtype (``mamba_cache_dtype`` "auto"); the SSM
state ``mamba_ssm_cache_dtype``, else the conv dtype.
"""

from __future__ import annotations

from ..errors import ConfigError
from .cfgread import Cfg
from .specs import (
    LINEAR,
    MAMBA,
    GatedDeltaNetSpec,
    KDASpec,
    LinearAttentionSpec,
    Mamba1Spec,
    Mamba2Spec,
    MambaSpec,
    ShortConvSpec,
)


def _divide(a: int, b: int, what: str, name: str) -> int:
    if a % b:
        raise ConfigError(f"{name}: {what} ({a}) does not divide by tensor parallel size {b}")
    return a // b


def state_spec(
    cfg: Cfg, model_type: str, kinds: list[str], tp: int, dtype_bytes: int, ssm_bytes: int
) -> MambaSpec | None:
    """The state spec of this model's state layers on one GPU, or None if not modelled."""
    if LINEAR in kinds:
        if model_type == "kimi_linear":
            return _kda(cfg, tp, dtype_bytes)
        if model_type == "bailing_hybrid":
            return _linear_attention(cfg, tp, dtype_bytes)
        return _gated_delta_net(cfg, tp, dtype_bytes, ssm_bytes)
    if MAMBA not in kinds:
        return None
    if model_type == "jamba":
        return _mamba1(cfg, tp, dtype_bytes, ssm_bytes)
    if model_type in ("lfm2", "lfm2_moe"):
        return _short_conv(cfg, tp, dtype_bytes)
    return _mamba2(cfg, model_type, tp, dtype_bytes, ssm_bytes)


def _kda(cfg: Cfg, tp: int, dtype_bytes: int) -> KDASpec:
    """Kimi-Linear's KDA layers (KimiGatedDeltaNetAttention, vLLM 0.33 source only).

    The recurrent state is float32 whatever mamba_ssm_cache_dtype says: Kimi-Linear
    calls kda_state_dtype without it, so it is "auto" -> float32.
    """
    name = cfg.name
    raw = cfg.raw("linear_attn_config")
    if not isinstance(raw, dict):
        raise ConfigError(f"{name}: Kimi-Linear without a linear_attn_config object")
    if raw.get("use_full_rank_gate"):
        raise ConfigError(f"{name}: KDA with use_full_rank_gate (Kimi-K3's KDA) is not modelled")
    lin = Cfg(raw, name + ".linear_attn_config")
    heads = lin.need_int("num_heads")
    head_dim = lin.need_int("head_dim")
    kernel = lin.int_("short_conv_kernel_size") or 4
    conv_dim = heads * head_dim + 2 * heads * head_dim
    conv = (kernel - 1, _divide(conv_dim, tp, "the KDA conv width", name))
    recurrent = (_divide(heads, tp, "the KDA heads", name), head_dim, head_dim)
    return KDASpec(shapes=(conv, recurrent), dtypes_bytes=(dtype_bytes, 4))


def _linear_attention(cfg: Cfg, tp: int, dtype_bytes: int) -> LinearAttentionSpec:
    """Lightning linear attention (BailingMoeV2.5): one state (heads / tp, head_dim,
    head_dim) in the model dtype (linear_attention_state_dtype, 0.33 source)."""
    name = cfg.name
    heads = cfg.need_int("num_attention_heads")
    head_dim = cfg.int_("head_dim") or cfg.need_int("hidden_size") // heads
    return LinearAttentionSpec(
        shapes=((_divide(heads, tp, "the linear-attention heads", name), head_dim, head_dim),),
        dtypes_bytes=(dtype_bytes,),
    )


def _short_conv(cfg: Cfg, tp: int, dtype_bytes: int) -> ShortConvSpec:
    """LFM2's short convolution: (conv_L_cache - 1, conv_dim / tp) in the model dtype."""
    name = cfg.name
    conv_dim = cfg.need_int("conv_dim")
    kernel = cfg.need_int("conv_L_cache")
    return ShortConvSpec(
        shapes=((kernel - 1, _divide(conv_dim, tp, "conv_dim", name)),),
        dtypes_bytes=(dtype_bytes,),
    )


def _gated_delta_net(cfg: Cfg, tp: int, dtype_bytes: int, ssm_bytes: int) -> MambaSpec:
    name = cfg.name
    k_heads = cfg.need_int("linear_num_key_heads")
    v_heads = cfg.need_int("linear_num_value_heads")
    k_dim = cfg.need_int("linear_key_head_dim")
    v_dim = cfg.need_int("linear_value_head_dim")
    kernel = cfg.need_int("linear_conv_kernel_dim")
    conv_dim = k_dim * k_heads * 2 + v_dim * v_heads
    _divide(k_heads, tp, "linear_num_key_heads", name)
    conv = (kernel - 1, _divide(conv_dim, tp, "the linear-attention conv width", name))
    ssm = (_divide(v_heads, tp, "linear_num_value_heads", name), v_dim, k_dim)
    return GatedDeltaNetSpec(shapes=(conv, ssm), dtypes_bytes=(dtype_bytes, ssm_bytes))


def _mamba1(cfg: Cfg, tp: int, dtype_bytes: int, ssm_bytes: int) -> MambaSpec:
    name = cfg.name
    d_state = cfg.need_int("mamba_d_state")
    d_conv = cfg.need_int("mamba_d_conv")
    expand = cfg.need_int("mamba_expand")
    hidden = cfg.int_("hidden_size", "d_model")
    if hidden is None:
        raise ConfigError(f"{name}: no hidden_size in the config")
    inner = _divide(expand * hidden, tp, "the Mamba inner width", name)
    # Jamba-v0.1 at TP 1, bf16: inner 2 x 4,096 = 8,192; conv 3 x 8,192 x 2 B
    # = 49,152 + SSM 8,192 x 16 x 2 B = 262,144 -> 311,296 B per layer.
    return Mamba1Spec(
        shapes=((d_conv - 1, inner), (inner, d_state)), dtypes_bytes=(dtype_bytes, ssm_bytes)
    )


def _mamba2(cfg: Cfg, model_type: str, tp: int, dtype_bytes: int, ssm_bytes: int) -> MambaSpec:
    name = cfg.name
    if model_type in ("nemotron_h", "nemotron_3"):
        heads = cfg.need_int("mamba_num_heads")
        head_dim = cfg.need_int("mamba_head_dim")
        groups = cfg.need_int("n_groups")
        d_state = cfg.need_int("ssm_state_size")
        d_conv = cfg.need_int("conv_kernel")
    else:
        heads = cfg.need_int("mamba_n_heads")
        head_dim = cfg.need_int("mamba_d_head")
        groups = cfg.need_int("mamba_n_groups")
        d_state = cfg.need_int("mamba_d_state")
        d_conv = cfg.need_int("mamba_d_conv")
    intermediate = heads * head_dim
    expand = cfg.int_("mamba_expand")
    hidden = cfg.int_("hidden_size")
    if model_type == "granitemoehybrid" and expand is not None and hidden is not None:
        # GraniteMoeHybrid's get_mamba_state_shape_from_config (0.33 source): the conv
        # width is mamba_expand x hidden_size (Granite-4.0-H: 2 x 4,096 = 8,192 =
        # 128 heads x 64, the same in the released configs).
        intermediate = expand * hidden
    # A single group is replicated to every rank (extra_groups_for_head_shards).
    if groups % tp and groups != 1:
        raise ConfigError(f"{name}: {groups} Mamba groups cannot be split over TP {tp}")
    groups_total = groups if groups % tp == 0 else tp
    conv_dim = intermediate + 2 * groups_total * d_state
    conv = (d_conv - 1, _divide(conv_dim, tp, "the Mamba conv width", name))
    ssm = (_divide(heads, tp, "the Mamba heads", name), head_dim, d_state)
    return Mamba2Spec(shapes=(conv, ssm), dtypes_bytes=(dtype_bytes, ssm_bytes))
