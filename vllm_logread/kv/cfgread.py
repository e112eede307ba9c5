"""Typed reads of a config.json dict: the fields vLLM's ModelConfig reads."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigError
from ..findings import DtypeAssumedBfloat16, Finding, Float32ServedIn16Bits
from ..jsontypes import JSONValue, as_object

MAX_LAYERS = 10_000


MAX_DIM = 1 << 24


DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


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


class Cfg:
    """Typed access to one (text) config dict, with ConfigError on bad values."""

    def __init__(self, data: Mapping[str, JSONValue], name: str) -> None:
        self.data = data
        self.name = name

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str) -> JSONValue:
        return self.data.get(key)

    def int_(self, *keys: str, minimum: int = 1, maximum: int = MAX_DIM) -> int | None:
        """The first of ``keys`` that is set (not null), as a bounded int."""
        for key in keys:
            value = self.data.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{self.name}: {key} must be an integer, got {short(value)}")
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
            raise ConfigError(f"{self.name}: {key} must be a string, got {short(value)}")
        return value

    def list_(self, key: str, length: int) -> list[JSONValue] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise ConfigError(f"{self.name}: {key} must be a list, got {short(value)}")
        if len(value) < length:
            raise ConfigError(f"{self.name}: {key} has {len(value)} entries for {length} layers")
        return value[:length]


def short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def text_config(config: Mapping[str, JSONValue], name: str) -> Mapping[str, JSONValue]:
    """vLLM's hf_text_config: the nested language-model config if there is one."""
    for key in ("text_config", "llm_config", "language_config"):
        nested = config.get(key)
        if nested is None:
            continue
        if not isinstance(nested, dict):
            raise ConfigError(f"{name}: {key} must be an object, got {short(nested)}")
        return nested
    thinker = config.get("thinker_config")
    if isinstance(thinker, dict):
        text = as_object(thinker.get("text_config"))
        if isinstance(text, dict):
            return text
    return config


def norm_dtype(value: str, what: str) -> str:
    """'torch.bfloat16' / 'half' / 'fp16' -> a canonical dtype name."""
    key = value.strip().lower().removeprefix("torch.")
    if key not in _DTYPE_ALIASES:
        raise ConfigError(f"unknown {what} {value!r} (bfloat16, float16, float32 or auto)")
    return _DTYPE_ALIASES[key]


def model_dtype(
    config: Mapping[str, JSONValue],
    text: Mapping[str, JSONValue],
    dtype: str | None,
) -> tuple[str, tuple[Finding, ...]]:
    """The dtype vLLM runs the model in (its ``--dtype``, default "auto"), and
    what was assumed to get it.

    "auto" takes the config's torch_dtype (top level first, then the text
    config, as vLLM's _find_dtype does). A float32 or missing dtype is served
    in 16 bits: vLLM downcasts float32 to the platform's first supported
    dtype, bfloat16 on GPUs with compute capability >= 8.0 (float16 on older
    ones and in vLLM before 0.7, except Gemma 2/3); 2 bytes either way.
    """
    if dtype is not None and dtype.strip().lower() != "auto":
        return norm_dtype(dtype, "dtype"), ()
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
        return "bfloat16", (DtypeAssumedBfloat16(),)
    canon = norm_dtype(found, "torch_dtype")
    if canon == "float32":
        return "bfloat16", (Float32ServedIn16Bits(),)
    return canon, ()


def total_kv_heads(cfg: Cfg, model_type: str, num_heads: int) -> int:
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
            return Cfg(attn, cfg.name + ".attn_config").need_int("kv_n_heads")
        return num_heads
    value = cfg.int_("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num")
    return num_heads if value is None else value


def head_size(cfg: Cfg, model_type: str, num_heads: int) -> int:
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


def check_tp(num_heads: int, total_kv_heads: int, tp: int, name: str, is_mla: bool) -> None:
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
