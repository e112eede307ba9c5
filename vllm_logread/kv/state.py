"""Mamba / linear-attention state of one layer: vLLM's MambaStateShapeCalculator.

Shapes per GPU (``tp`` = tensor parallel size), in vLLM's default "SD" conv
layout (the bytes are the same in "DS"):

* Mamba1 (Jamba): conv ``(d_conv - 1, inner / tp)``, SSM ``(inner / tp, d_state)``;
* Mamba2 (Nemotron-H, Bamba, Granite 4): conv ``(d_conv - 1, (inner + 2 x groups
  x d_state) / tp)``, SSM ``(heads / tp, head_dim, d_state)``; one group is
  replicated to every rank;
* gated delta net (Qwen3-Next, Qwen3.5): conv ``(kernel - 1, (2 x k_heads x
  k_dim + v_heads x v_dim) / tp)``, SSM ``(v_heads / tp, v_dim, k_dim)``.
  Qwen3-Next-80B at TP 1, bf16: 3 x 8,192 x 2 + 32 x 128 x 128 x 2 = 1,097,728 B.

The conv state takes the model dtype (``mamba_cache_dtype`` "auto"); the SSM
state ``mamba_ssm_cache_dtype``, else the conv dtype.
"""

from __future__ import annotations

from ..errors import ConfigError
from .cfgread import Cfg
from .specs import LINEAR, MAMBA, MambaSpec


def _divide(a: int, b: int, what: str, name: str) -> int:
    if a % b:
        raise ConfigError(f"{name}: {what} ({a}) does not divide by tensor parallel size {b}")
    return a // b


def state_spec(
    cfg: Cfg, model_type: str, kinds: list[str], tp: int, dtype_bytes: int, ssm_bytes: int
) -> MambaSpec | None:
    """The state spec of this model's state layers on one GPU, or None if not modelled."""
    if LINEAR in kinds:
        return _gated_delta_net(cfg, tp, dtype_bytes, ssm_bytes)
    if MAMBA not in kinds:
        return None
    if model_type == "jamba":
        return _mamba1(cfg, tp, dtype_bytes, ssm_bytes)
    return _mamba2(cfg, model_type, tp, dtype_bytes, ssm_bytes)


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
    return MambaSpec(
        shapes=(conv, ssm), dtypes_bytes=(dtype_bytes, ssm_bytes), mamba_type="gated_delta_net"
    )


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
    return MambaSpec(
        shapes=((d_conv - 1, inner), (inner, d_state)),
        dtypes_bytes=(dtype_bytes, ssm_bytes),
        mamba_type="mamba1",
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
    # A single group is replicated to every rank (extra_groups_for_head_shards).
    if groups % tp and groups != 1:
        raise ConfigError(f"{name}: {groups} Mamba groups cannot be split over TP {tp}")
    groups_total = groups if groups % tp == 0 else tp
    conv_dim = intermediate + 2 * groups_total * d_state
    conv = (d_conv - 1, _divide(conv_dim, tp, "the Mamba conv width", name))
    ssm = (_divide(heads, tp, "the Mamba heads", name), head_dim, d_state)
    return MambaSpec(shapes=(conv, ssm), dtypes_bytes=(dtype_bytes, ssm_bytes), mamba_type="mamba2")
