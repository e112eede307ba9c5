"""Which architectures the tool knows: vLLM 0.34's registry, and the tool's status for each.

The data (``vllm_logread/data/architectures.json``) is generated once per vLLM
release by ``tools/gen_architectures.py`` from vLLM's model registry and model
code, and reviewed: every architecture vLLM serves, the attention kinds its
model code can build, the config fields it reads that shape the KV cache, and
this tool's status:

* ``verified``: the tool models it and a test works its bytes out by hand
  (``verified_by`` names the test);
* ``modelled``: the tool has a layout rule for it, but no hand-worked test;
* ``not verified``: the tool reads it as its generic fields say, unchecked.

Only a verified architecture can give exact users on its own; any other is
exact only where the log's own figures settle the users (README.md, "Exact or
not"). A config whose KV-shaping fields the tool does not read (a per-layer
list it ignores, a window under another name) is "not verified" whatever its
architecture: a wrong exact bytes-per-token is the one answer never given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ..jsontypes import JSONValue

Status = Literal["verified", "modelled", "not verified", "generic"]

VERIFIED: Status = "verified"
MODELLED: Status = "modelled"
NOT_VERIFIED: Status = "not verified"
# No "architectures" and no "model_type": a hand-written config of plain
# decoder fields (the tool's doctests and what-ifs); read as plain attention.
GENERIC: Status = "generic"


# Substrings of config keys that can change a KV page or a layer's kind.
_SHAPE_KEY_RE = re.compile(
    r"key_value_heads|kv_heads|head_dim|head_size|window|layer_types|kv_lora|index_|linear_|"
    r"mamba_|ssm_|conv_kernel|state_size|hybrid_override|attn_layer|attention_interval|"
    r"layers_block_type|kv_shar|kda_|attn_type|attention_type|global_|swa_|chunk|"
    r"block_configs|per_layer|n_groups|rope_layers|nextn|mtp_"
)

# The KV-shaping keys kv/build.py, layer_kinds.py and state.py read (0.33's
# rules for each), plus those that match the pattern but change no byte of the
# cache (a projection bias, an activation, a dt clamp).
UNDERSTOOD_KEYS = frozenset(
    {
        # attention
        "num_key_value_heads",
        "num_kv_heads",
        "n_head_kv",
        "head_dim",
        "hidden_size_per_head",
        "attention_head_dim",
        "v_head_dim",
        "swa_num_key_value_heads",
        "swa_head_dim",
        "swa_v_head_dim",
        "swa_num_attention_heads",
        "add_swa_attention_sink_bias",
        "hybrid_layer_pattern",
        "num_global_key_value_heads",
        "global_head_dim",
        "num_kv_shared_layers",
        # windows, chunks, layer patterns
        "sliding_window",
        "interleaved_sliding_window",
        "use_sliding_window",
        "max_window_layers",
        "sliding_window_pattern",
        "layer_types",
        "attention_chunk_size",
        "no_rope_layers",
        "no_rope_layer_interval",
        "full_attention_interval",
        "layer_group_size",
        "hybrid_override_pattern",
        "attn_layer_period",
        "attn_layer_offset",
        "attn_layer_indices",
        # MLA and the sparse indexer
        "kv_lora_rank",
        "qk_rope_head_dim",
        "qk_nope_head_dim",
        "index_topk",
        "index_head_dim",
        "index_n_heads",
        "num_nextn_predict_layers",
        # state layers
        "linear_num_key_heads",
        "linear_num_value_heads",
        "linear_key_head_dim",
        "linear_value_head_dim",
        "linear_conv_kernel_dim",
        "linear_attn_config",
        "mamba_d_state",
        "mamba_d_conv",
        "mamba_expand",
        "mamba_n_heads",
        "mamba_d_head",
        "mamba_n_groups",
        "mamba_num_heads",
        "mamba_head_dim",
        "ssm_state_size",
        "conv_kernel",
        "n_groups",
        "mamba_ssm_cache_dtype",
        "mamba_ssm_dtype",
        # change no byte of the cache
        "mamba_hidden_act",
        "mamba_proj_bias",
        "mamba_conv_bias",
        "mamba_dt_rank",
        "mamba_chunk_size",
        "chunk_size",
        "use_mamba_kernels",
        "mamba_dt_min",
        "mamba_dt_max",
        "mamba_dt_init_floor",
        "mamba_dt_limit",
        "linear_bias",
        "swa_rope_theta",
        "rope_local_base_freq",
        "hidden_size_per_layer_input",
        "vocab_size_per_layer_input",
        "mtp_num_hidden_layers",
        "mtp_use_dedicated_embeddings",
        "num_mtp_modules",
        "mtp_transformer_layers",
        "use_mtp",
        "conv_dim",
        "conv_L_cache",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchitectureInfo:
    """One architecture of vLLM's registry, as the shipped data has it.

    Attributes:
        name: the architecture (config.json's ``architectures[0]``).
        role: "text-generation", "multimodal" or "drafter".
        attention_kinds: the kinds its model code can build (a static reading).
        kv_config_fields: the KV-shaping config fields its model code reads.
        status: the tool's status ("verified", "modelled", "not verified").
        verified_by: the test that works its bytes out by hand, if verified.
    """

    name: str
    role: str
    attention_kinds: tuple[str, ...]
    kv_config_fields: tuple[str, ...]
    status: Status
    verified_by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchitectureStatus:
    """A config's architecture and whether the tool's reading of it is verified.

    Attributes:
        architecture: the architecture named (or inferred), None if none.
        status: "verified", "modelled", "not verified" or "generic".
        reason: why it is not verified, for a person (None when verified).
    """

    architecture: str | None
    status: Status
    reason: str | None = None

    @property
    def is_verified(self) -> bool:
        """The tool's bytes for it are checked (or it is a generic hand-made config)."""
        return self.status in (VERIFIED, GENERIC)


def _data_path() -> Path:
    return Path(__file__).resolve().parent.parent / "data" / "architectures.json"


@lru_cache(maxsize=1)
def _load() -> tuple[str, dict[str, ArchitectureInfo]]:
    data = json.loads(_data_path().read_text(encoding="utf-8"))
    out: dict[str, ArchitectureInfo] = {}
    for name, e in data["architectures"].items():
        out[name] = ArchitectureInfo(
            name=name,
            role=str(e["role"]),
            attention_kinds=tuple(e["attention_kinds"]),
            kv_config_fields=tuple(e["kv_config_fields"]),
            status=e["status"],
            verified_by=e.get("verified_by"),
        )
    return str(data["vllm_version"]), out


def registry_version() -> str:
    """The vLLM release the data was read from ("0.34.0")."""
    return _load()[0]


def all_architectures() -> list[ArchitectureInfo]:
    """Every architecture of the registry, by name."""
    return [v for _, v in sorted(_load()[1].items())]


def architecture_info(name: str) -> ArchitectureInfo | None:
    """The registry's entry for ``name``, or None if vLLM does not serve it."""
    return _load()[1].get(name)


# model_type -> architecture, for configs that name only a model_type (tests,
# hand-trimmed configs): the verified and modelled families'.
_MODEL_TYPE_ARCH = {
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "mixtral": "MixtralForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "qwen2_moe": "Qwen2MoeForCausalLM",
    "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
    "qwen3": "Qwen3ForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM",
    "qwen3_next": "Qwen3NextForCausalLM",
    "qwen3_5": "Qwen3_5ForConditionalGeneration",
    "qwen3_5_text": "Qwen3_5ForCausalLM",
    "qwen3_5_moe": "Qwen3_5MoeForConditionalGeneration",
    "qwen3_5_moe_text": "Qwen3_5MoeForCausalLM",
    "deepseek_v2": "DeepseekV2ForCausalLM",
    "deepseek_v3": "DeepseekV3ForCausalLM",
    "kimi_k2": "DeepseekV3ForCausalLM",
    "deepseek_v32": "DeepseekV32ForCausalLM",
    "gemma": "GemmaForCausalLM",
    "gemma2": "Gemma2ForCausalLM",
    "gemma3": "Gemma3ForConditionalGeneration",
    "gemma3_text": "Gemma3ForCausalLM",
    "gemma3n": "Gemma3nForConditionalGeneration",
    "gemma3n_text": "Gemma3nForCausalLM",
    "phi3": "Phi3ForCausalLM",
    "falcon": "FalconForCausalLM",
    "jamba": "JambaForCausalLM",
    "nemotron_h": "NemotronHForCausalLM",
    "gpt_oss": "GptOssForCausalLM",
    "llama4": "Llama4ForConditionalGeneration",
    "llama4_text": "Llama4ForCausalLM",
    "kimi_linear": "KimiLinearForCausalLM",
    "minimax_m2": "MiniMaxM2ForCausalLM",
    "glm4_moe": "Glm4MoeForCausalLM",
    "granitemoehybrid": "GraniteMoeHybridForCausalLM",
    "nemotron-nas": "DeciLMForCausalLM",
    "mimo_v2_flash": "MiMoV2FlashForCausalLM",
    "bailing_hybrid": "BailingMoeV2_5ForCausalLM",
    "bamba": "BambaForCausalLM",
    "cohere2": "Cohere2ForCausalLM",
    "ricursive": "RicursiveForCausalLM",
}


def _not_understood(config: Mapping[str, JSONValue], text: Mapping[str, JSONValue]) -> list[str]:
    keys = set(text)
    if text.get("model_type") == "nemotron-nas":
        keys.discard("block_configs")  # DeciLM's per-layer heads, read by build.py
    odd = sorted(k for k in keys if _SHAPE_KEY_RE.search(k) and k not in UNDERSTOOD_KEYS)
    # A window under another name is understood only when it agrees with the
    # one vLLM reads (some Gemma configs carry both, equal).
    if "sliding_window_size" in odd and (
        text.get("sliding_window_size") == text.get("sliding_window")
        or "hybrid_layer_pattern" in text
    ):
        odd.remove("sliding_window_size")
    return odd


def architecture_status(
    config: Mapping[str, JSONValue], text: Mapping[str, JSONValue]
) -> ArchitectureStatus:
    """The config's architecture and the tool's status for it.

    >>> architecture_status({"architectures": ["Qwen3ForCausalLM"]}, {}).status
    'verified'
    >>> s = architecture_status({"architectures": ["ApertusForCausalLM"]}, {})
    >>> s.status, s.reason.split(" (")[0]
    ('not verified', 'ApertusForCausalLM is served by vLLM 0.34.0 but the tool has no hand-worked test for it')
    """
    archs = config.get("architectures")
    name: str | None = None
    if isinstance(archs, list) and archs and isinstance(archs[0], str):
        name = archs[0]
    model_type = text.get("model_type") or config.get("model_type")
    if name is None and isinstance(model_type, str):
        name = _MODEL_TYPE_ARCH.get(model_type)
        if name is None:
            return ArchitectureStatus(
                architecture=None,
                status=NOT_VERIFIED,
                reason=f"model_type {model_type!r} names no architecture the tool has verified",
            )
    if name is None:
        return ArchitectureStatus(architecture=None, status=GENERIC)
    odd = _not_understood(config, text)
    info = architecture_info(name)
    version = registry_version()
    if odd:
        return ArchitectureStatus(
            architecture=name,
            status=NOT_VERIFIED,
            reason=f"the config has KV-shaping fields the tool does not read "
            f"({', '.join(odd[:6])}{', ...' if len(odd) > 6 else ''}): its bytes per token "
            "are not verified",
        )
    if info is None:
        return ArchitectureStatus(
            architecture=name,
            status=NOT_VERIFIED,
            reason=f"{name} is not in vLLM {version}'s model registry (out of tree or "
            "remote code): its KV layout is not verified",
        )
    if info.status == VERIFIED:
        return ArchitectureStatus(architecture=name, status=VERIFIED)
    what = "modelled, " if info.status == MODELLED else ""
    return ArchitectureStatus(
        architecture=name,
        status=info.status,
        reason=f"{name} is served by vLLM {version} but the tool has no hand-worked test "
        f"for it ({what}not verified): its KV layout may differ from the generic reading",
    )


# What a model's name (a repo id, a folder, a served name) says of its family,
# when no config is at hand: (pattern, family, plain). Hybrid families first:
# "qwen3-next" and "qwen3.5" must not fall to the plain "qwen3" row. "plain"
# means every layer keeps every token in one group (full attention or MLA).
# Compiled by family_of_name when first asked (re caches them): 1.2 ms at
# import, and a report asks only when the layout is unknown.
_NAME_FAMILIES: tuple[tuple[str, str, bool], ...] = (
    (r"qwen3[._-]?next", "Qwen3-Next (gated delta net + full attention)", False),
    (r"qwen3[._][5-9](?![0-9])|qwen35|qwen4", "Qwen3.5+ (gated delta net hybrid)", False),
    (r"kimi[._-]?linear|kimi[._-]?k3", "Kimi-Linear (KDA + MLA)", False),
    (r"gemma[._-]?[234]|gemma[._-]?3n", "Gemma 2/3/4 (sliding window)", False),
    (r"gpt[._-]?oss", "gpt-oss (sliding window)", False),
    (r"llama[._-]?4", "Llama 4 (chunked local attention)", False),
    (
        r"nemotron[._-]?(h|nano|3)|granite[._-]?4|bamba|jamba|zamba|falcon[._-]?h1|"
        r"mamba|olmo[._-]?hybrid|lfm2|apriel[._-]?h|hymba",
        "a Mamba / SSM hybrid",
        False,
    ),
    (
        r"minimax[._-]?(m1|text|01|vl)|ring[._-]?linear|ling[._-]?linear|bailing",
        "a linear-attention hybrid",
        False,
    ),
    (
        r"mistral[._-]?7b[._-]?(instruct[._-]?)?v0\.?1|phi[._-]?3|command[._-]?(a|r7b)|"
        r"cohere2|mimo[._-]?v2|step[._-]?3",
        "a sliding-window family",
        False,
    ),
    (r"deepseek[._-]?v4|glm[._-]?5[._-]?next", "a compressed / hybrid MLA family", False),
    (
        r"llama[._-]?[23]|llama[._-]?3\.[0-9]|meta[._-]?llama[._-]?3|codellama|tinyllama|"
        r"vicuna",
        "Llama 2/3 (full attention)",
        True,
    ),
    (r"qwen2|qwq|qwen3", "Qwen2/2.5/3 (full attention)", True),
    (
        r"mixtral|mistral|ministral|devstral|magistral|codestral",
        "Mistral / Mixtral (full attention)",
        True,
    ),
    (
        r"deepseek|kimi[._-]?k2|glm[._-]?4|minimax[._-]?m2",
        "DeepSeek / Kimi-K2 / GLM-4 / MiniMax-M2 (full attention or MLA)",
        True,
    ),
    (
        r"(^|[/_-])opt[._-]|gpt2|gpt[._-]?j|gpt[._-]?neox|pythia|bloom|falcon[._-]?(7|40|180)b|"
        r"phi[._-]?[124](?![0-9])|granite[._-]?3|olmo[._-]?2|(^|[/_-])yi[._-]|internlm|"
        r"baichuan|smollm|stablelm|starcoder",
        "an older full-attention family",
        True,
    ),
)


def family_of_name(name: str) -> tuple[str, bool] | None:
    """The family a model's name says (and whether it is plain), or None.

    >>> family_of_name("/models/my-qwen3-next")
    ('Qwen3-Next (gated delta net + full attention)', False)
    >>> family_of_name("Qwen/Qwen3-8B")
    ('Qwen2/2.5/3 (full attention)', True)
    >>> family_of_name("my-model") is None
    True
    """
    for rx, family, plain in _NAME_FAMILIES:
        if re.search(rx, name, re.I):
            return family, plain
    return None
