"""A model's parameters and weight bytes from its config.json, before any boot.

``vllm-logread kv MODEL --gpu NAME`` needs the weights each GPU holds to
estimate the KV pool. A boot log prints them (``Model loading took 15.27
GiB``); before the boot they are counted here from the config: every linear
layer, the embeddings and lm_head (once when tied), the norms, for the
families whose layers are written out below (dense Llama-style decoders,
Falcon, Mixtral / Qwen3 / MiniMax-M2 / GLM-4.5-4.7 MoE, DeepSeek-V3-style MLA +
MoE and V3.2's indexer, the gated-delta-net hybrids Qwen3-Next and Qwen3.5, and
Kimi-Linear's KDA + MLA). MTP layers are counted apart (vLLM loads them only as
a drafter). Other families (Mamba hybrids, Llama 4, gpt-oss's MXFP4 experts,
Gemma 3n) get their figure from the shipped table (``weights``: a total from the
model card or from a real boot log, with its source), or are unknown.

The counts match the published totals to the rounding of the model card:
Qwen3-8B 8,190,735,360 (8.19 B), Llama-3.1-8B 8,030,261,248 (8.03 B),
Llama-3.1-70B 70,553,706,496 (70.6 B), Mixtral-8x7B 46,702,792,704 (46.7 B),
DeepSeek-V3 671,026,419,200 (671 B without its MTP layer, which vLLM loads only
for speculative decoding). Tests pin each with the sum written out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..jsontypes import JSONObject, JSONValue

#: Bytes per parameter of the 16-bit dtypes vLLM serves in. A float32 config
#: is served in bfloat16 under ``--dtype auto`` (vLLM's _get_and_verify_dtype
#: downcasts float32 to the 16-bit type), so it counts 2 bytes too.
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 2, "float": 2}

#: model_types whose layers are counted here (the attention and the MLP).
DENSE_TYPES = frozenset(
    {
        "llama",
        "mistral",
        "qwen2",
        "qwen3",
        "gemma",
        "gemma2",
        "gemma3_text",
        "phi3",
        "qwen2_5_vl",
        "qwen2_vl",
        "gemma3",
    }
)
MOE_TYPES = frozenset({"mixtral", "qwen3_moe", "qwen2_moe", "minimax_m2", "glm4_moe"})
MLA_TYPES = frozenset({"deepseek_v3", "deepseek_v2", "kimi_k2", "deepseek_v32"})
#: Hybrids of gated full attention and gated-delta-net (linear attention) layers:
#: Qwen3-Next, Qwen3.5 (dense MLP) and Qwen3.5-MoE; their text configs' names too.
GDN_TYPES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"})
#: Kimi-Linear: Kimi delta attention (KDA) layers beside MLA layers, MoE MLPs.
KDA_TYPES = frozenset({"kimi_linear"})
#: MoE families whose router keeps a score-correction bias (one float an expert)
#: and whose first ``first_k_dense_replace`` layers are dense.
_DEEPSEEK_MOE = MLA_TYPES | {"glm4_moe"} | KDA_TYPES
#: Families that tie lm_head to the embeddings when the config does not say.
_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "falcon"})
#: Families with q/k/v biases (Qwen2's attention).
_QKV_BIAS = frozenset({"qwen2", "qwen2_moe", "qwen2_5_vl", "qwen2_vl"})
#: Families with four norms a layer (pre/post attention and MLP).
_FOUR_NORMS = frozenset({"gemma2", "gemma3", "gemma3_text"})
#: Families whose config describes a vision tower that the text fields leave out.
MULTIMODAL_TYPES = frozenset({"qwen2_5_vl", "qwen2_vl", "gemma3", "gemma3_text", "mllama"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ParamCount:
    """Parameters of the whole model (all GPUs together).

    Attributes:
        num_params: every parameter vLLM loads.
        num_embedding_params: embed_tokens and lm_head (lm_head only when not
            tied); these stay 16-bit under FP8 / INT4 weight quantization.
        how: the sum, for a person.
        num_mtp_params: the MTP layers' parameters, not in num_params (below).
        num_replicated_params: parameters every tensor-parallel rank holds
            whole: MLA's kv_a_proj_with_mqa (a ReplicatedLinear in vLLM's
            DeepSeek-V2/V3 attention). With it the counts meet the logs:
            DeepSeek-V3 FP8 at TP 8 78.54 GiB a GPU (logged 78.6453), R1 at
            TP 16 39.38 (logged 39.66); without it 78.33 and 39.17.
    """

    num_params: int
    num_embedding_params: int
    how: str
    num_replicated_params: int = 0
    # The multi-token-prediction (MTP / nextn) layers the checkpoint holds besides:
    # vLLM loads them only as a speculative drafter, so num_params leaves them out;
    # a model card's total usually counts them (GLM-4.7's 358 B, DeepSeek-V3's 685 B).
    num_mtp_params: int = 0
    # The routed experts' parameters (DeepSeek-style MoE), which an INT4-experts
    # checkpoint (Kimi-K2-Thinking) packs in 4 bits while the rest stays 16-bit.
    num_routed_expert_params: int = 0


#: No config field counted here comes near this (vocabularies are < 2**20,
#: hidden sizes < 2**17); a larger value is malformed, and its products would
#: overflow a float.
_MAX_FIELD = 1 << 40


def _int(cfg: Mapping[str, JSONValue], key: str, default: int | None = None) -> int | None:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > _MAX_FIELD:
        return default
    return value


#: Sub-configs of a wrapper that are not another model's tower.
_NOT_TOWERS = frozenset({"text_config", "quantization_config", "linear_attn_config"})


def other_towers(config: Mapping[str, JSONValue]) -> list[str]:
    """The sub-configs beside the language model (``vision_config``,
    ``audio_config``, ...): towers whose weights the text fields leave out."""
    return sorted(
        key.removesuffix("_config")
        for key, value in config.items()
        if key.endswith("_config") and key not in _NOT_TOWERS and isinstance(value, Mapping)
    )


def _text_fields(config: Mapping[str, JSONValue]) -> JSONObject:
    """The language model's fields: ``text_config`` over the top level."""
    nested = config.get("text_config")
    merged = dict(config)
    if isinstance(nested, Mapping):
        merged.update(nested)
        merged.setdefault("model_type", config.get("model_type"))
    return merged


def _attention_params(cfg: Mapping[str, JSONValue], model_type: str) -> int | None:
    """One layer's attention: q, k, v and o projections (and their biases)."""
    hidden = _int(cfg, "hidden_size")
    heads = _int(cfg, "num_attention_heads")
    if not hidden or not heads:
        return None
    if model_type in MLA_TYPES:
        mla = _mla_params(cfg, hidden, heads)
        return None if mla is None else mla + _indexer_params(cfg, hidden)
    kv_heads = _int(cfg, "num_key_value_heads") or heads
    head_dim = _int(cfg, "head_dim") or hidden // heads
    q, kv = heads * head_dim, kv_heads * head_dim
    # q and o are hidden x q; k and v hidden x kv each.
    params = hidden * q * 2 + hidden * kv * 2
    if model_type in _QKV_BIAS or cfg.get("attention_bias") is True:
        params += q + 2 * kv
    if model_type in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text"):
        params += 2 * head_dim  # q_norm and k_norm (one head_dim vector each)
    if model_type == "minimax_m2":
        params += q + kv  # q_norm and k_norm over every head at once (full width)
    return params


def _indexer_params(cfg: Mapping[str, JSONValue], hidden: int) -> int:
    """DeepSeek-V3.2's sparse-attention indexer, one layer (0 without one): wq_b
    (q_lora_rank -> index_n_heads x index_head_dim), wk (hidden -> index_head_dim),
    k_norm (a LayerNorm: weight and bias) and weights_proj (hidden -> index_n_heads).
    V3.2-Exp: 1,536 x 64 x 128 + 7,168 x 128 + 2 x 128 + 7,168 x 64 = 13,959,424."""
    heads, dim = _int(cfg, "index_n_heads"), _int(cfg, "index_head_dim")
    if not heads or not dim:
        return 0
    q_lora = _int(cfg, "q_lora_rank") or hidden
    return q_lora * heads * dim + hidden * dim + 2 * dim + hidden * heads


def _gated_attention_params(cfg: Mapping[str, JSONValue], hidden: int) -> int | None:
    """Qwen3-Next / Qwen3.5's gated full attention, one layer: q_proj gives each
    head its query and an output gate (2 x heads x head_dim), k and v (kv heads x
    head_dim each), o (heads x head_dim -> hidden), q_norm and k_norm (head_dim
    each). Qwen3.5-27B: 5,120 x 12,288 + 2 x 5,120 x 1,024 + 6,144 x 5,120 + 512
    = 104,858,112."""
    heads = _int(cfg, "num_attention_heads")
    if not heads:
        return None
    kv_heads = _int(cfg, "num_key_value_heads") or heads
    head_dim = _int(cfg, "head_dim") or hidden // heads
    q = heads * head_dim
    return hidden * 2 * q + 2 * hidden * kv_heads * head_dim + q * hidden + 2 * head_dim


def _gdn_params(cfg: Mapping[str, JSONValue], hidden: int) -> int | None:
    """One gated-delta-net layer (vLLM's Qwen3-Next GatedDeltaNet): in_proj_qkvz
    (hidden -> 2 x key_dim + 2 x value_dim), in_proj_ba (hidden -> 2 x value heads),
    the causal conv1d (2 x key_dim + value_dim channels x kernel, no bias), dt_bias
    and A_log (one a value head), the gated RMSNorm (value head dim), out_proj
    (value_dim -> hidden). Qwen3.5-27B (16 key heads, 48 value heads, 128 each,
    kernel 4): 5,120 x 16,384 + 5,120 x 96 + 10,240 x 4 + 96 + 128 + 6,144 x 5,120
    = 115,876,064."""
    nk, nv = _int(cfg, "linear_num_key_heads"), _int(cfg, "linear_num_value_heads")
    dk, dv = _int(cfg, "linear_key_head_dim"), _int(cfg, "linear_value_head_dim")
    kernel = _int(cfg, "linear_conv_kernel_dim", 4) or 4
    if not nk or not nv or not dk or not dv:
        return None
    key_dim, value_dim = nk * dk, nv * dv
    return (
        hidden * (2 * key_dim + 2 * value_dim)
        + hidden * 2 * nv
        + (2 * key_dim + value_dim) * kernel
        + 2 * nv
        + dv
        + value_dim * hidden
    )


def _kda_params(cfg: Mapping[str, JSONValue], hidden: int) -> int | None:
    """One Kimi delta attention layer (vLLM's KimiDeltaAttention): q, k, v
    projections (hidden -> heads x head_dim each) with their short convolutions,
    the forget gate's low-rank pair f_a (hidden -> head_dim), f_b (head_dim ->
    heads x head_dim), b_proj (hidden -> heads), A_log (heads), dt_bias (heads x
    head_dim), the output gate's pair g_a, g_b, the output norm (head_dim) and
    o_proj. Kimi-Linear-48B (32 heads of 128, hidden 2,304, kernel 4):
    3 x 2,304 x 4,096 + 3 x 4,096 x 4 + 2 x (2,304 x 128 + 128 x 4,096) + 2,304 x 32
    + 32 + 4,096 + 128 + 4,096 x 2,304 = 39,514,272."""
    lin = cfg.get("linear_attn_config")
    if not isinstance(lin, Mapping):
        return None
    heads, dim = _int(lin, "num_heads"), _int(lin, "head_dim")
    kernel = _int(lin, "short_conv_kernel_size", 4) or 4
    if not heads or not dim:
        return None
    width = heads * dim
    return (
        3 * hidden * width
        + 3 * width * kernel
        + 2 * (hidden * dim + dim * width)
        + hidden * heads
        + heads
        + width
        + dim
        + width * hidden
    )


def _mla_params(cfg: Mapping[str, JSONValue], hidden: int, heads: int) -> int | None:
    """DeepSeek-V2/V3's multi-head latent attention, one layer.

    q: hidden -> q_lora_rank -> heads x (nope + rope) (or hidden -> heads x
    (nope + rope) without a q LoRA); kv: hidden -> kv_lora_rank + rope, then
    kv_lora_rank -> heads x (nope + v); o: heads x v -> hidden. DeepSeek-V3:
    7,168 x 1,536 + 1,536 + 1,536 x 128 x 192 + 7,168 x 576 + 512
    + 512 x 128 x 256 + 128 x 128 x 7,168 = 187,107,328.
    """
    kv_lora = _int(cfg, "kv_lora_rank")
    rope = _int(cfg, "qk_rope_head_dim")
    nope = _int(cfg, "qk_nope_head_dim")
    v = _int(cfg, "v_head_dim")
    if not kv_lora or not rope or not nope or not v:
        return None
    q_lora = _int(cfg, "q_lora_rank")
    qk = heads * (nope + rope)
    q = hidden * q_lora + q_lora + q_lora * qk if q_lora else hidden * qk
    kv = hidden * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v)
    return q + kv + heads * v * hidden


def _gated_mlp(hidden: int, intermediate: int) -> int:
    """gate, up (hidden x intermediate each) and down (intermediate x hidden)."""
    return 3 * hidden * intermediate


def _mlp_params(cfg: Mapping[str, JSONValue], model_type: str, layer: int) -> int | None:
    """One layer's MLP: dense, or the experts and router of an MoE layer."""
    hidden = _int(cfg, "hidden_size")
    if not hidden:
        return None
    dense = _int(cfg, "intermediate_size")
    if model_type in ("mixtral", "minimax_m2"):
        experts = _int(cfg, "num_local_experts")
        if not experts or not dense:
            return None
        # MiniMax-M2's sigmoid router keeps a score-correction bias, one an expert.
        bias = experts if model_type == "minimax_m2" else 0
        return experts * _gated_mlp(hidden, dense) + hidden * experts + bias
    if model_type in ("qwen3_moe", "qwen2_moe", *GDN_TYPES):
        if model_type in ("qwen3_5", "qwen3_5_text"):  # Qwen3.5's dense models
            return _gated_mlp(hidden, dense) if dense else None
        experts = _int(cfg, "num_experts")
        moe = _int(cfg, "moe_intermediate_size")
        step = _int(cfg, "decoder_sparse_step", 1) or 1
        dense_only = cfg.get("mlp_only_layers") or []
        if not experts or not moe:
            return None
        is_dense = isinstance(dense_only, list) and layer in dense_only
        if is_dense or (layer + 1) % step != 0:
            return _gated_mlp(hidden, dense) if dense else None
        params = experts * _gated_mlp(hidden, moe) + hidden * experts
        shared = _int(cfg, "shared_expert_intermediate_size")
        if shared:
            params += _gated_mlp(hidden, shared) + hidden  # the shared expert and its gate
        return params
    if model_type in _DEEPSEEK_MOE:
        first_dense = _int(cfg, "first_k_dense_replace", 0) or 0
        experts = _int(cfg, "n_routed_experts") or _int(cfg, "num_experts")
        if layer < first_dense or not experts:
            return _gated_mlp(hidden, dense) if dense else None
        moe = _int(cfg, "moe_intermediate_size")
        if not moe:
            return None
        shared = _int(cfg, "n_shared_experts") or _int(cfg, "num_shared_experts", 0) or 0
        # routed + shared experts; the router's weight and its score-correction bias.
        return (experts + shared) * _gated_mlp(hidden, moe) + hidden * experts + experts
    if not dense:
        return None
    return _gated_mlp(hidden, dense)


def _falcon_params(cfg: Mapping[str, JSONValue]) -> ParamCount | None:
    """Falcon-7B: parallel attention with one KV head (multi_query), a 4 x hidden
    MLP without a gate, LayerNorm with bias, tied lm_head. 4,544 hidden, 71
    heads of 64: a layer is 4,544 x (4,544 + 2 x 64) + 4,544^2 + 2 x 4,544 x
    18,176 + 2 x 4,544 = 207,070,080; 32 of them + 65,024 x 4,544 embeddings +
    the final norm (9,088) = 6,921,720,704."""
    hidden, layers = _int(cfg, "hidden_size"), _int(cfg, "num_hidden_layers")
    heads, vocab = _int(cfg, "num_attention_heads"), _int(cfg, "vocab_size")
    if not hidden or not layers or not heads or not vocab or cfg.get("new_decoder_architecture"):
        return None
    head_dim = hidden // heads
    kv_heads = 1 if cfg.get("multi_query", True) else heads
    per_layer = (
        hidden * (hidden + 2 * kv_heads * head_dim)
        + hidden * hidden
        + 2 * hidden * 4 * hidden
        + 2 * hidden
    )
    tied = cfg.get("tie_word_embeddings", True) is not False
    emb = vocab * hidden * (1 if tied else 2)
    total = layers * per_layer + emb + 2 * hidden
    how = (
        f"{layers} layers x {per_layer:,} + embeddings {emb:,} + final norm {2 * hidden:,} "
        f"= {total:,}"
    )
    return ParamCount(num_params=total, num_embedding_params=emb, how=how)


def _layer_attention(cfg: Mapping[str, JSONValue], model_type: str) -> list[int] | None:
    """Each layer's attention parameters: one figure for every layer, or a hybrid's
    full-attention and linear-attention layers each their own."""
    hidden, layers = _int(cfg, "hidden_size"), _int(cfg, "num_hidden_layers")
    if not hidden or not layers:
        return None
    if model_type in GDN_TYPES:
        full, linear = _gated_attention_params(cfg, hidden), _gdn_params(cfg, hidden)
        interval = _int(cfg, "full_attention_interval", 4) or 4
        if full is None or linear is None:
            return None
        types = cfg.get("layer_types")
        if isinstance(types, list) and len(types) == layers:
            return [full if t == "full_attention" else linear for t in types]
        return [full if (i + 1) % interval == 0 else linear for i in range(layers)]
    if model_type in KDA_TYPES:
        heads = _int(cfg, "num_attention_heads")
        lin = cfg.get("linear_attn_config")
        mla = None if not heads else _mla_params(cfg, hidden, heads)
        kda = _kda_params(cfg, hidden)
        if mla is None or kda is None or not isinstance(lin, Mapping):
            return None
        kda_layers = lin.get("kda_layers")  # 1-based
        if not isinstance(kda_layers, list):
            return None
        # MLA's kv_a_layernorm (kv_lora_rank) is in _mla_params' sum already.
        return [kda if i + 1 in kda_layers else mla for i in range(layers)]
    attn = _attention_params(cfg, model_type)
    return None if attn is None else [attn] * layers


def _mtp_params(cfg: Mapping[str, JSONValue], model_type: str, per_layer: int) -> int:
    """The MTP (nextn) layers a checkpoint holds beside the model, 0 when none:
    each one decoder layer (``per_layer``, an MoE one) plus its input projection
    (2 x hidden -> hidden) and three norms; GLM-4.5's and DeepSeek-V3's also keep
    their own embedding and head (vocab x hidden each). GLM-4.7: 3,935,625,376
    (an MoE layer: 136,329,216 attention + 10,240 norms + 3,799,285,920 MLP) +
    52,428,800 + 15,360 + 2 x 775,946,240 = 5,539,962,016 (card: 358 B = 352.80 B
    + 5.54 B)."""
    hidden, vocab = _int(cfg, "hidden_size") or 0, _int(cfg, "vocab_size") or 0
    n = _int(cfg, "num_nextn_predict_layers") or _int(cfg, "mtp_num_hidden_layers") or 0
    if model_type == "minimax_m2":
        n = 0  # its MTP modules are not in the released checkpoint (229 B without them)
    own_head = 2 * vocab * hidden if model_type in MLA_TYPES | {"glm4_moe"} else 0
    return n * (per_layer + 2 * hidden * hidden + 3 * hidden + own_head)


def count_parameters(config: Mapping[str, JSONValue]) -> ParamCount | None:
    """The model's parameters from its config.json, or None for a family not counted here.

    Qwen3-8B (36 layers, hidden 4,096, 32 Q / 8 KV heads of 128, MLP 12,288,
    vocab 151,936, untied): a layer is 41,943,040 attention + 256 q/k norms +
    150,994,944 MLP + 8,192 norms = 192,946,432; 36 x that + 2 x 151,936 x
    4,096 embeddings + 4,096 = 8,190,735,360.

    >>> count_parameters({"model_type": "qwen3", "hidden_size": 4096,
    ...     "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
    ...     "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936,
    ...     "tie_word_embeddings": False}).num_params
    8190735360
    """
    cfg = _text_fields(config)
    model_type = str(cfg.get("model_type") or "")
    if model_type == "falcon":
        return _falcon_params(cfg)
    if model_type not in DENSE_TYPES | MOE_TYPES | MLA_TYPES | GDN_TYPES | KDA_TYPES:
        return None
    hidden, layers, vocab = (
        _int(cfg, "hidden_size"),
        _int(cfg, "num_hidden_layers"),
        _int(cfg, "vocab_size"),
    )
    if not hidden or not layers or not vocab:
        return None
    attns = _layer_attention(cfg, model_type)
    if attns is None:
        return None
    norms = (4 if model_type in _FOUR_NORMS else 2) * hidden
    mlps: list[int] = []
    for layer in range(layers):
        mlp = _mlp_params(cfg, model_type, layer)
        if mlp is None:
            return None
        mlps.append(mlp)
    tied_default = model_type in _TIED_BY_DEFAULT
    tied = bool(cfg.get("tie_word_embeddings", tied_default))
    emb = vocab * hidden * (1 if tied else 2)
    total = sum(attns) + layers * norms + sum(mlps) + emb + hidden
    replicated = 0
    if model_type in MLA_TYPES:
        replicated = (
            layers
            * hidden
            * ((_int(cfg, "kv_lora_rank") or 0) + (_int(cfg, "qk_rope_head_dim") or 0))
        )
    mlp_text = " + ".join(f"{mlps.count(k)} x {k:,}" for k in sorted(set(mlps)))
    attn_text = " + ".join(f"{attns.count(k)} x {k:,}" for k in sorted(set(attns)))
    how = (
        f"{layers} layers: attention {attn_text} + norms {layers} x {norms:,} + MLPs "
        f"{mlp_text} + embeddings {emb:,} ({'tied' if tied else 'and lm_head'}) + final norm "
        f"{hidden:,} = {total:,}"
    )
    routed = 0
    if model_type in _DEEPSEEK_MOE:
        first_dense = _int(cfg, "first_k_dense_replace", 0) or 0
        experts = _int(cfg, "n_routed_experts") or _int(cfg, "num_experts") or 0
        moe = _int(cfg, "moe_intermediate_size") or 0
        routed = max(layers - first_dense, 0) * experts * _gated_mlp(hidden, moe)
    # The MTP layer is the last layer's kind (full attention, the model's MLP).
    mtp = _mtp_params(cfg, model_type, max(attns) + norms + mlps[-1])
    if mtp:
        how += f" (and {mtp:,} in MTP layers vLLM loads only as a drafter, not counted)"
    return ParamCount(
        num_params=total,
        num_embedding_params=emb,
        how=how,
        num_replicated_params=replicated,
        num_mtp_params=mtp,
        num_routed_expert_params=routed,
    )


def model_dtype(config: Mapping[str, JSONValue]) -> str:
    """The weights' dtype as the config states it (``torch_dtype`` or the newer
    ``dtype``); bfloat16 when it states neither (gpt-oss)."""
    cfg = _text_fields(config)
    for key in ("torch_dtype", "dtype"):
        value = cfg.get(key)
        if isinstance(value, str) and value:
            return value.removeprefix("torch.")
    return "bfloat16"


def quantization_of(config: Mapping[str, JSONValue]) -> JSONObject | None:
    """The config's ``quantization_config`` (a dict), or None."""
    q = config.get("quantization_config")
    if not isinstance(q, Mapping):
        nested = config.get("text_config")
        q = nested.get("quantization_config") if isinstance(nested, Mapping) else None
    return dict(q) if isinstance(q, Mapping) else None


__all__ = [
    "DTYPE_BYTES",
    "ParamCount",
    "count_parameters",
    "model_dtype",
    "other_towers",
    "quantization_of",
]
