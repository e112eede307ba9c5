"""kvspec: config.json -> KV bytes per token, as vLLM allocates them.

Two kinds of tests: the team's reference table (shared/configs/kv_reference.json,
beside the checkout) for every real config at TP 1/2/4/8 in bf16 and fp8, and
small inline configs, one per branch of the reader.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_logread.errors import ConfigError, LogReadError
from vllm_logread.findings import ChunkedLocalManagerByVersion, KVLoraRankNotMLA
from vllm_logread.kv.build import spec_from_config
from vllm_logread.kv.config import (
    MAX_CONFIG_BYTES,
    find_cached_config,
    load_config,
    resolve_spec,
    spec_for_argument,
    table_models,
)
from vllm_logread.kv.groups import kv_cache_layout, mamba_attention_block_size
from vllm_logread.render.json import dumps, kv_report
from vllm_logread.render.text import kv_text

SHARED = Path(__file__).resolve().parents[3] / "shared"
CONFIGS = SHARED / "configs"
REFERENCE = CONFIGS / "kv_reference.json"


def _reference_cases() -> list[Any]:
    """(model, config file, tp, dtype) for every reference row; one skip if absent."""
    if not REFERENCE.is_file():
        return [pytest.param(None, None, 1, "bf16", id="no-shared-folder")]
    data = json.loads(REFERENCE.read_text())
    cases = []
    for m in data["models"]:
        for tp_key in sorted(m["per_tp"], key=lambda k: int(k[2:])):
            for dt in ("bf16", "fp8"):
                model = m["model"].split(" ")[0]
                cases.append(
                    pytest.param(
                        m["model"],
                        m["config_file"],
                        int(tp_key[2:]),
                        dt,
                        id=f"{model}-{tp_key}-{dt}",
                    )
                )
    return cases


@pytest.fixture(scope="module")
def kv_reference() -> dict[str, Any]:
    """shared/configs/kv_reference.json, or skip: it lives beside the checkout."""
    if not REFERENCE.is_file():
        pytest.skip(f"{REFERENCE} is absent (the team's shared/ folder sits beside the checkout)")
    data: dict[str, Any] = json.loads(REFERENCE.read_text())
    return data


def _row(reference: dict[str, Any], model: str, tp: int) -> dict[str, Any]:
    for m in reference["models"]:
        if m["model"] == model:
            row: dict[str, Any] = m["per_tp"][f"tp{tp}"]
            return row
    raise AssertionError(model)


@pytest.mark.parametrize(("model", "config_file", "tp", "dtype"), _reference_cases())
def test_reference_bytes_per_token(
    kv_reference: dict[str, Any], model: str, config_file: str, tp: int, dtype: str
) -> None:
    row = _row(kv_reference, model, tp)
    config = load_config(CONFIGS / config_file)
    kv_cache_dtype = "auto" if dtype == "bf16" else "fp8"
    if not row["tp_valid"]:
        with pytest.raises(ConfigError, match="tensor parallel size"):
            spec_from_config(config, tensor_parallel_size=tp, kv_cache_dtype=kv_cache_dtype)
        return
    spec = spec_from_config(config, tensor_parallel_size=tp, kv_cache_dtype=kv_cache_dtype)
    assert spec.kv_bytes_per_token == row[f"dense_bytes_per_token_{dtype}"]
    assert spec.kv_bytes_per_token_full_attention == row[f"full_only_bytes_per_token_{dtype}"]
    assert spec.num_kv_heads == row["kv_heads_per_gpu"]
    if "state_bytes_per_request_raw_bf16" in row:
        assert spec.state_bytes_per_request == row["state_bytes_per_request_raw_bf16"]
    if "hybrid_attn_block_size_tokens_v0_11" in row and dtype == "bf16":
        # vLLM raises the attention block so a block's page holds a Mamba state.
        block = mamba_attention_block_size(spec)
        assert block == row["hybrid_attn_block_size_tokens_v0_11"]
        layout = kv_cache_layout(spec)
        assert layout.page_size_bytes == row["state_bytes_per_layer_padded_bf16"]


def test_reference_layer_kinds_and_fp8_ds_mla(kv_reference: dict[str, Any]) -> None:
    kind_names = {"full": "full", "mla": "mla", "gdn_linear": "linear", "mamba2": "mamba"}
    for m in kv_reference["models"]:
        spec = spec_from_config(load_config(CONFIGS / m["config_file"]))
        want: dict[str, int] = {}
        for kind, n in m["layer_kind_counts"].items():
            name = "sliding" if kind.startswith("sliding") else kind_names.get(kind, kind)
            want[name] = want.get(name, 0) + n
        assert spec.layer_kind_counts == want, m["model"]
        if "dense_bytes_per_token_fp8_ds_mla" in m["per_tp"]["tp1"]:
            ds = spec_from_config(
                load_config(CONFIGS / m["config_file"]), kv_cache_dtype="fp8_ds_mla"
            )
            assert ds.kv_bytes_per_token == m["per_tp"]["tp1"]["dense_bytes_per_token_fp8_ds_mla"]


def test_shared_configs_are_in_the_table(kv_reference: dict[str, Any]) -> None:
    # Every reference model resolves from the shipped table to the same bytes.
    for m in kv_reference["models"]:
        name = m["model"].split(" ")[0]
        spec = resolve_spec(name)
        assert spec is not None, name
        assert spec.source_kind == "table"
        assert spec.kv_bytes_per_token == m["per_tp"]["tp1"]["dense_bytes_per_token_bf16"], name


# --------------------------------------------------------------------------
# Inline configs, one per branch


def llama(**over: Any) -> dict[str, Any]:
    """A Llama-3.1-8B-shaped config (no head_dim: 4096 // 32 = 128)."""
    cfg: dict[str, Any] = {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "hidden_size": 4096,
        "torch_dtype": "bfloat16",
    }
    cfg.update(over)
    return cfg


def test_gqa() -> None:
    # 32 layers x 2 x 8 KV heads x 128 x 2 B = 131,072 B per token.
    spec = spec_from_config(llama())
    assert (spec.kv_bytes_per_token, spec.num_kv_heads, spec.head_size) == (131072, 8, 128)
    assert spec.is_uniform and spec.kv_bytes_per_token_full_attention == 131072
    assert spec.state_bytes_per_request == 0


def test_mha_when_kv_heads_absent() -> None:
    spec = spec_from_config(llama(num_key_value_heads=None))
    assert spec.total_num_kv_heads == 32
    assert spec.kv_bytes_per_token == 32 * 2 * 32 * 128 * 2


def test_mqa() -> None:
    spec = spec_from_config(llama(num_key_value_heads=1), tensor_parallel_size=4)
    # One KV head, replicated on all 4 GPUs.
    assert spec.num_kv_heads == 1
    assert spec.kv_bytes_per_token == 32 * 2 * 1 * 128 * 2


def test_falcon_multi_query() -> None:
    cfg = {
        "model_type": "falcon",
        "num_hidden_layers": 32,
        "num_attention_heads": 71,
        "hidden_size": 4544,
        "multi_query": True,
        "new_decoder_architecture": False,
    }
    spec = spec_from_config(cfg)
    assert (spec.total_num_kv_heads, spec.head_size, spec.kv_bytes_per_token) == (1, 64, 8192)
    with pytest.raises(ConfigError, match="71 attention heads"):
        spec_from_config(cfg, tensor_parallel_size=2)
    # Falcon-40B's new decoder architecture reads num_kv_heads instead.
    new = dict(cfg, new_decoder_architecture=True, num_kv_heads=8, num_attention_heads=128)
    new["hidden_size"] = 8192
    assert spec_from_config(new).total_num_kv_heads == 8


@pytest.mark.parametrize(
    ("config", "kv_heads", "head_size", "layers"),
    [
        pytest.param(
            {
                "model_type": "RefinedWeb",
                "n_layer": 60,
                "n_head": 128,
                "n_head_kv": 8,
                "hidden_size": 8192,
            },
            8,
            64,
            60,
            id="n_head_kv-n_layer",
        ),
        pytest.param(
            {
                "model_type": "chatglm",
                "num_layers": 28,
                "num_attention_heads": 32,
                "multi_query_group_num": 2,
                "kv_channels": 128,
                "hidden_size": 4096,
            },
            2,
            128,
            28,
            id="chatglm-multi_query_group_num",
        ),
        pytest.param(
            {"model_type": "gpt2", "n_layer": 12, "n_head": 12, "n_embd": 768},
            12,
            64,
            12,
            id="gpt2-n_embd",
        ),
        pytest.param(
            {
                "model_type": "x",
                "num_hidden_layers": 4,
                "num_attention_heads": 8,
                "num_kv_heads": 2,
                "hidden_size": 512,
            },
            2,
            64,
            4,
            id="num_kv_heads",
        ),
    ],
)
def test_other_spellings(
    config: dict[str, Any], kv_heads: int, head_size: int, layers: int
) -> None:
    spec = spec_from_config(config)
    assert (spec.total_num_kv_heads, spec.head_size, spec.num_hidden_layers) == (
        kv_heads,
        head_size,
        layers,
    )
    assert spec.kv_bytes_per_token == layers * 2 * kv_heads * head_size * 2


def test_head_dim_explicit_and_different() -> None:
    # Qwen3-0.6B: hidden 1024 / 16 heads = 64, but head_dim is 128.
    cfg = llama(
        model_type="qwen3",
        num_hidden_layers=28,
        num_attention_heads=16,
        hidden_size=1024,
        head_dim=128,
    )
    spec = spec_from_config(cfg)
    assert spec.head_size == 128
    assert spec.kv_bytes_per_token == 28 * 2 * 8 * 128 * 2
    assert spec_from_config(dict(cfg, head_dim=None)).head_size == 64


def test_nested_text_config() -> None:
    outer = {
        "model_type": "llava",
        "torch_dtype": "float16",
        "vision_config": {"num_hidden_layers": 24, "num_attention_heads": 16, "hidden_size": 1024},
        "text_config": llama(torch_dtype=None),
    }
    spec = spec_from_config(outer)
    assert spec.kv_bytes_per_token == 131072
    assert spec.model_dtype == "float16"  # the top-level torch_dtype, as vLLM reads it
    assert spec_from_config({"llm_config": llama()}).kv_bytes_per_token == 131072
    assert spec_from_config({"language_config": llama()}).kv_bytes_per_token == 131072
    with pytest.raises(ConfigError, match="text_config must be an object"):
        spec_from_config({"text_config": [1, 2]})


def deepseek(**over: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "model_type": "deepseek_v3",
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "hidden_size": 7168,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "torch_dtype": "bfloat16",
    }
    cfg.update(over)
    return cfg


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_mla_one_latent_per_gpu(tp: int) -> None:
    # (512 + 64) x 2 B x 61 layers = 70,272 B per token on every GPU, no factor 2.
    spec = spec_from_config(deepseek(), tensor_parallel_size=tp)
    assert spec.is_mla and spec.kv_factor == 1 and spec.num_kv_heads == 1
    assert (spec.head_size, spec.kv_bytes_per_token) == (576, 70272)
    assert spec_from_config(deepseek(), kv_cache_dtype="fp8").kv_bytes_per_token == 35136


def test_mla_needs_a_listed_model_type() -> None:
    # MiniCPM3-like: kv_lora_rank set, but vLLM's MLA list does not name the type.
    spec = spec_from_config(deepseek(model_type="minicpm3", head_dim=None))
    assert not spec.is_mla and spec.kv_factor == 2
    assert KVLoraRankNotMLA() in spec.notes


def test_deepseek_v32_fp8_ds_mla_and_indexer() -> None:
    cfg = deepseek(model_type="deepseek_v32", index_topk=2048, index_head_dim=128)
    # --kv-cache-dtype auto keeps a 16-bit latent in vLLM 0.32/0.33 (VLLM_LINES.md,
    # Corrections): (576 x 2 = 1,152 B) + 132 B indexer keys (128 fp8 + 4 B scale)
    # per layer: 61 x 1,284 = 78,324 B per token.
    spec = spec_from_config(cfg)
    assert spec.kv_dtype == "bfloat16"
    assert spec.kv_bytes_per_token == 61 * (1152 + 132) == 78324
    bf16 = spec_from_config(cfg, kv_cache_dtype="bfloat16")
    assert bf16.kv_bytes_per_token == 61 * (1152 + 132)
    # An fp8 KV dtype on the sparse FlashMLA backend is stored as fp8_ds_mla:
    # 656 B latent + 132 B indexer per layer: 61 x 788 = 48,068 B.
    for fp8 in ("fp8", "fp8_e4m3", "fp8_ds_mla"):
        ds = spec_from_config(cfg, kv_cache_dtype=fp8)
        assert ds.kv_dtype == "fp8_ds_mla"
        assert ds.kv_bytes_per_token == 61 * (656 + 132) == 48068
    with pytest.raises(ConfigError, match="MLA models only"):
        spec_from_config(llama(), kv_cache_dtype="fp8_ds_mla")


def test_sliding_pattern_gemma3() -> None:
    cfg: dict[str, Any] = {
        "model_type": "gemma3",
        "torch_dtype": "bfloat16",
        "text_config": {
            "model_type": "gemma3_text",
            "num_hidden_layers": 62,
            "num_attention_heads": 32,
            "num_key_value_heads": 16,
            "head_dim": 128,
            "hidden_size": 5376,
            "sliding_window": 1024,
        },
    }
    spec = spec_from_config(cfg)  # default sliding_window_pattern 6
    assert spec.layer_kind_counts == {"sliding": 52, "full": 10}
    assert [i for i, k in enumerate(spec.layer_kinds) if k == "full"][:3] == [5, 11, 17]
    assert spec.kv_bytes_per_token == 62 * 8192
    assert spec.kv_bytes_per_token_full_attention == 10 * 8192
    assert spec.sliding_window_tokens == 1024 and not spec.is_uniform
    explicit = dict(cfg["text_config"], sliding_window_pattern=4)
    assert spec_from_config(explicit).layer_kind_counts == {"sliding": 47, "full": 15}


def test_gemma2_alternates_and_gpt_oss_layer_types() -> None:
    g2 = llama(
        model_type="gemma2",
        num_hidden_layers=42,
        num_attention_heads=16,
        head_dim=256,
        hidden_size=3584,
        sliding_window=4096,
    )
    spec = spec_from_config(g2)
    assert spec.layer_kinds[:3] == ("sliding", "full", "sliding")
    assert spec.layer_kind_counts == {"sliding": 21, "full": 21}
    oss = llama(
        model_type="gpt_oss",
        num_hidden_layers=4,
        num_attention_heads=64,
        head_dim=64,
        sliding_window=128,
        layer_types=["sliding_attention", "full_attention"] * 2,
    )
    spec = spec_from_config(oss)
    assert spec.layer_kinds == ("sliding", "full", "sliding", "full")
    assert spec.layer_windows == (128, None, 128, None)
    # Without layer_types gpt-oss alternates the same way.
    assert spec_from_config(dict(oss, layer_types=None)).layer_kinds == spec.layer_kinds


def test_sliding_on_every_layer() -> None:
    # Mistral-7B-v0.1 and Phi-3: a window and no pattern -> every layer slides.
    spec = spec_from_config(llama(model_type="mistral", sliding_window=4096))
    assert spec.layer_kind_counts == {"sliding": 32}
    assert spec.kv_bytes_per_token == 131072
    assert spec.kv_bytes_per_token_full_attention == 0
    assert not spec.is_uniform
    phi3 = llama(model_type="phi3", sliding_window=2047)
    assert set(spec_from_config(phi3).layer_kinds) == {"sliding"}


def test_use_sliding_window_false_is_ignored() -> None:
    # Qwen2.5 ships sliding_window 131072 with use_sliding_window false.
    spec = spec_from_config(
        llama(model_type="qwen2", sliding_window=131072, use_sliding_window=False)
    )
    assert spec.is_uniform and spec.sliding_window_tokens is None


def test_chunked_local_attention_llama4() -> None:
    cfg: dict[str, Any] = {
        "model_type": "llama4",
        "text_config": llama(
            model_type="llama4_text",
            num_hidden_layers=48,
            num_attention_heads=40,
            head_dim=128,
            hidden_size=5120,
            attention_chunk_size=8192,
        ),
    }
    spec = spec_from_config(cfg)
    # No no_rope_layers: every 4th layer (3, 7, ...) is a global NoPE layer.
    assert spec.layer_kind_counts == {"chunked": 36, "full": 12}
    assert spec.layer_kinds[3] == "full" and spec.attention_chunk_size == 8192
    nope = [1, 1, 0] * 16
    spec = spec_from_config(dict(cfg["text_config"], no_rope_layers=nope))
    assert spec.layer_kind_counts == {"chunked": 32, "full": 16}
    assert ChunkedLocalManagerByVersion() in spec.notes


def test_mamba_hybrid_jamba() -> None:
    cfg = llama(
        model_type="jamba",
        attn_layer_period=8,
        attn_layer_offset=4,
        mamba_d_state=16,
        mamba_d_conv=4,
        mamba_expand=2,
    )
    spec = spec_from_config(cfg)
    assert spec.layer_kind_counts == {"mamba": 28, "full": 4}
    assert spec.kv_bytes_per_token == 4 * 4096
    # Mamba1 state per layer: conv 8,192 x 3 x 2 B + SSM 8,192 x 16 x 2 B.
    assert spec.state_bytes_per_layer == 8192 * 3 * 2 + 8192 * 16 * 2 == 311296
    assert spec.state_bytes_per_request == 28 * 311296
    assert not spec.is_uniform and spec.has_state


def test_linear_attention_hybrid_qwen3_next() -> None:
    cfg = llama(
        model_type="qwen3_next",
        num_hidden_layers=8,
        num_attention_heads=16,
        num_key_value_heads=2,
        head_dim=256,
        full_attention_interval=4,
        linear_num_key_heads=16,
        linear_num_value_heads=32,
        linear_key_head_dim=128,
        linear_value_head_dim=128,
        linear_conv_kernel_dim=4,
    )
    spec = spec_from_config(cfg)
    assert spec.layer_kinds == ("linear",) * 3 + ("full",) + ("linear",) * 3 + ("full",)
    assert spec.state_bytes_per_layer == 3 * 8192 * 2 + 32 * 128 * 128 * 2 == 1097728
    # mamba_ssm_cache_dtype float32 doubles the SSM part only.
    f32 = spec_from_config(cfg, mamba_ssm_cache_dtype="float32")
    assert f32.state_bytes_per_layer == 3 * 8192 * 2 + 32 * 128 * 128 * 4
    with pytest.raises(ConfigError, match="linear_num_key_heads"):
        spec_from_config(dict(cfg, linear_num_key_heads=12), tensor_parallel_size=8)


def test_mamba2_hybrids_nemotron_and_granite() -> None:
    nem = llama(
        model_type="nemotron_h",
        num_hidden_layers=4,
        num_attention_heads=64,
        hidden_size=8192,
        attention_head_dim=128,
        hybrid_override_pattern="M-*M",
        mamba_num_heads=256,
        mamba_head_dim=64,
        n_groups=8,
        ssm_state_size=256,
        conv_kernel=4,
    )
    spec = spec_from_config(nem)
    assert spec.layer_kinds == ("mamba", "none", "full", "mamba")
    assert spec.state_bytes_per_layer == 3 * 20480 * 2 + 256 * 64 * 256 * 2 == 8511488
    with pytest.raises(ConfigError, match="hybrid_override_pattern"):
        spec_from_config(dict(nem, hybrid_override_pattern="M-*"))
    with pytest.raises(ConfigError, match="unknown layer"):
        spec_from_config(dict(nem, hybrid_override_pattern="M-*X"))
    granite = llama(
        model_type="granitemoehybrid",
        num_hidden_layers=4,
        layer_types=["mamba", "mamba", "attention", "mamba"],
        mamba_n_heads=128,
        mamba_d_head=64,
        mamba_n_groups=1,
        mamba_d_state=128,
        mamba_d_conv=4,
        mamba_expand=2,
    )
    spec = spec_from_config(granite, tensor_parallel_size=2)
    assert spec.layer_kind_counts == {"mamba": 3, "full": 1}
    # One group is replicated to both ranks: conv (8,192 + 2 x 2 x 128) / 2 x 3.
    conv = (128 * 64 + 2 * 2 * 128) // 2 * 3
    assert spec.state_bytes_per_layer == conv * 2 + 64 * 64 * 128 * 2


def test_auto_map_is_ignored() -> None:
    cfg = llama(auto_map={"AutoConfig": "vllm_logread_evil.Config"}, trust_remote_code=True)
    spec = spec_from_config(cfg)
    assert spec.kv_bytes_per_token == 131072
    assert not any(name.startswith("vllm_logread_evil") for name in sys.modules)


@pytest.mark.parametrize(
    ("value", "kv_bytes"),
    [
        ("auto", 2),
        ("bfloat16", 2),
        ("torch.bfloat16", 2),
        ("float16", 2),
        ("half", 2),
        ("torch.float16", 2),
        ("float32", 4),
    ],
)
def test_dtype_overrides(value: str, kv_bytes: int) -> None:
    spec = spec_from_config(llama(), dtype=value)
    assert spec.dtype_bytes == kv_bytes


def test_float32_config_is_served_in_16_bits() -> None:
    spec = spec_from_config(llama(torch_dtype="float32"))
    assert (spec.model_dtype, spec.dtype_bytes) == ("bfloat16", 2)
    assert spec_from_config(llama(torch_dtype=None)).dtype_bytes == 2


@pytest.mark.parametrize("kv", ["fp8", "fp8_e4m3", "fp8_e5m2", "FP8"])
def test_fp8_kv_is_one_byte(kv: str) -> None:
    assert spec_from_config(llama(), kv_cache_dtype=kv).kv_bytes_per_token == 65536


def test_tensor_parallel_rules() -> None:
    assert spec_from_config(llama(), tensor_parallel_size=16).num_kv_heads == 1
    # 28 query heads (Qwen2.5-7B) do not split 8 ways.
    with pytest.raises(ConfigError, match="does not divide the 28 attention heads"):
        spec_from_config(
            llama(num_attention_heads=28, num_key_value_heads=4), tensor_parallel_size=8
        )
    # 3 KV heads neither split over nor replicate onto 2 GPUs.
    with pytest.raises(ConfigError, match="3 KV heads"):
        spec_from_config(
            llama(num_attention_heads=6, num_key_value_heads=3), tensor_parallel_size=2
        )


def test_pipeline_parallel_most_loaded_stage() -> None:
    # 32 layers over 3 stages: vLLM splits 11 / 11 / 10 (remainder before the last).
    spec = spec_from_config(llama(), pipeline_parallel_size=3)
    assert spec.stage_layer_range == (0, 11)
    assert spec.kv_bytes_per_token == 11 * 4096
    with pytest.raises(ConfigError, match="exceeds"):
        spec_from_config(llama(num_hidden_layers=2), pipeline_parallel_size=4)


@pytest.mark.parametrize(
    ("config", "match"),
    [
        pytest.param([1, 2], "JSON object", id="not-object"),
        pytest.param({}, "num_hidden_layers", id="empty"),
        pytest.param(llama(num_hidden_layers="32"), "must be an integer", id="string"),
        pytest.param(llama(num_hidden_layers=True), "must be an integer", id="bool"),
        pytest.param(llama(num_hidden_layers=32.0), "must be an integer", id="float"),
        pytest.param(llama(num_hidden_layers=-1), "outside", id="negative"),
        pytest.param(llama(num_hidden_layers=10**9), "outside", id="huge"),
        pytest.param(llama(num_attention_heads=None), "num_attention_heads", id="no-heads"),
        pytest.param(llama(model_type=5), "must be a string", id="type-not-str"),
        pytest.param(llama(layer_types=["full_attention"] * 31), "entries", id="short-types"),
        pytest.param(llama(layer_types=["weird"] * 32), "not modelled", id="weird-type"),
        pytest.param(llama(layer_types="full"), "must be a list", id="types-not-list"),
        pytest.param(llama(sliding_window="big"), "must be an integer", id="window-str"),
        pytest.param(llama(model_type="mamba"), "attention-free", id="attention-free"),
        pytest.param(llama(hidden_size=4), "hidden_size", id="tiny-hidden"),
        pytest.param(llama(model_type="jamba"), "attn_layer_period", id="jamba-no-period"),
    ],
)
def test_bad_configs_raise_config_error(config: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        spec_from_config(config)


def test_bad_options_raise_config_error() -> None:
    with pytest.raises(ConfigError, match="kv_cache_dtype"):
        spec_from_config(llama(), kv_cache_dtype="int3")
    with pytest.raises(ConfigError, match="dtype"):
        spec_from_config(llama(), dtype="float8")
    with pytest.raises(ConfigError, match="tensor parallel size"):
        spec_from_config(llama(), tensor_parallel_size=0)
    assert issubclass(ConfigError, LogReadError) and issubclass(ConfigError, ValueError)


def test_load_config_limits(tmp_path: Path) -> None:
    good = tmp_path / "model"
    good.mkdir()
    (good / "config.json").write_text(json.dumps(llama()))
    assert load_config(good)["num_hidden_layers"] == 32
    assert load_config(good / "config.json")["num_hidden_layers"] == 32
    cases = {
        "missing.json": None,
        "bad.json": b"{not json",
        "latin1.json": b'{"a": "\xe9"}',
        "list.json": b"[1, 2, 3]",
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "nested.json": (b'{"a":' * 40) + b"1" + (b"}" * 40),
        "big.json": b'{"pad": "' + b"x" * (MAX_CONFIG_BYTES + 10) + b'"}',
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(ConfigError):
            load_config(path)


def test_shipped_table_qwen3_8b() -> None:
    spec = resolve_spec("Qwen/Qwen3-8B")
    assert spec is not None
    assert spec.kv_bytes_per_token == 147456
    assert spec.source == "shipped table (vllm_logread/data/models.json)"
    assert spec.source_kind == "table"
    fp8 = resolve_spec("Qwen/Qwen3-8B", kv_cache_dtype="fp8")
    assert fp8 is not None and fp8.kv_bytes_per_token == 73728
    assert spec.describe() == (
        "36 layers x 8 KV heads x head size 128 x 2 (K and V) x 2 bytes (bfloat16) "
        "= 147,456 bytes (144 KiB) per token"
    )


@pytest.mark.parametrize(
    ("name", "bytes_per_token"),
    [
        ("Qwen/Qwen3-0.6B", 28 * 4096),
        ("Qwen/Qwen3-1.7B", 28 * 4096),
        ("Qwen/Qwen3-4B", 36 * 4096),
        ("Qwen/Qwen3-14B", 40 * 4096),
        ("Qwen/Qwen3-32B", 64 * 4096),
        ("Qwen/Qwen3-30B-A3B", 48 * 2048),
        ("Qwen/Qwen3-235B-A22B", 94 * 2048),
        ("meta-llama/Llama-3.2-1B-Instruct", 16 * 2048),
        ("meta-llama/Llama-3.2-3B", 28 * 4096),
        ("meta-llama/Llama-3.1-8B-Instruct", 32 * 4096),
        ("meta-llama/Llama-3.1-70B", 80 * 4096),
        ("meta-llama/Llama-3.3-70B-Instruct", 80 * 4096),
        ("mistralai/Mistral-7B-v0.1", 32 * 4096),
        ("mistralai/Mistral-7B-Instruct-v0.3", 32 * 4096),
        ("Qwen/Qwen2.5-7B-Instruct", 28 * 2048),
        ("Qwen/Qwen2.5-14B", 48 * 4096),
        ("Qwen/Qwen2.5-32B-Instruct", 64 * 4096),
        ("Qwen/Qwen2.5-72B-Instruct", 80 * 4096),
    ],
)
def test_table_entries(name: str, bytes_per_token: int) -> None:
    spec = resolve_spec(name)
    assert spec is not None, name
    assert spec.kv_bytes_per_token == bytes_per_token


def test_table_windows() -> None:
    v01 = resolve_spec("mistralai/Mistral-7B-v0.1")
    v02 = resolve_spec("mistralai/Mistral-7B-Instruct-v0.2")
    assert v01 is not None and v01.sliding_window_tokens == 4096
    assert v02 is not None and v02.is_uniform and v02.sliding_window_tokens is None


def test_every_table_entry_loads_and_names_a_source() -> None:
    import importlib.resources

    raw = importlib.resources.files("vllm_logread").joinpath("data", "models.json").read_text()
    models = json.loads(raw)["models"]
    for name in table_models():
        assert models[name]["source"], name
        spec = resolve_spec(name)
        assert spec is not None and spec.kv_bytes_per_token > 0, name


@pytest.mark.parametrize(
    "name", ["qwen/qwen3-8b", "Qwen3-8B", "/models/Qwen3-8B", "/models/Qwen3-8B/"]
)
def test_table_name_matching(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    spec = resolve_spec(name)
    assert spec is not None and spec.kv_bytes_per_token == 147456
    assert "Qwen/Qwen3-8B" in spec.source


def test_unknown_model_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert resolve_spec("someone/never-heard-of-it") is None
    assert resolve_spec(None) is None
    with pytest.raises(ConfigError, match="no config"):
        spec_for_argument("someone/never-heard-of-it")


def _snapshot(repo: Path, commit: str, config: dict[str, Any]) -> Path:
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(config))
    return snap / "config.json"


def test_hf_cache_prefers_refs_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    repo = tmp_path / "models--acme--tiny"
    main = _snapshot(repo, "a" * 40, llama(num_hidden_layers=2))
    _snapshot(repo, "b" * 40, llama(num_hidden_layers=3))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40 + "\n")
    assert find_cached_config("acme/tiny") == main
    spec = resolve_spec("acme/tiny")
    assert spec is not None and spec.num_hidden_layers == 2
    assert spec.source_kind == "hf-cache"
    assert spec.source == f"Hugging Face cache (offline): {main}"
    # Case-insensitive folder match, and names that are not repo ids.
    assert find_cached_config("ACME/Tiny") == main
    assert find_cached_config("../etc/passwd") is None
    assert find_cached_config("a/b/c") is None


def test_hf_home_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    cfg = _snapshot(tmp_path / "hub" / "models--acme--tiny", "c" * 40, llama())
    assert find_cached_config("acme/tiny") == cfg


def test_config_argument_wins_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(llama(num_hidden_layers=2)))
    spec = resolve_spec("Qwen/Qwen3-8B", config=str(path))
    assert spec is not None and spec.num_hidden_layers == 2
    assert spec.source == f"config.json at {path}" and spec.source_kind == "config"
    with pytest.raises(ConfigError, match="cannot read"):
        resolve_spec("Qwen/Qwen3-8B", config=str(tmp_path / "nope.json"))
    # A local model folder given as the model name is read too.
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(llama(num_hidden_layers=3)))
    spec = resolve_spec(str(folder))
    assert spec is not None and spec.num_hidden_layers == 3


def test_kv_report_and_text() -> None:
    spec = resolve_spec("openai/gpt-oss-20b")
    assert spec is not None
    rep = kv_report(spec)
    for key in (
        "model",
        "source",
        "kv_bytes_per_token",
        "kv_bytes_per_token_full_attention",
        "state_bytes_per_request",
        "layer_kinds",
        "window_caps",
        "kv_cache_groups",
        "tensor_parallel_size",
        "kv_cache_dtype",
    ):
        assert key in rep
    assert rep["layer_kinds"] == {"sliding": 12, "full": 12}
    assert rep["window_caps"] == {
        "sliding_window_tokens": 128,
        "sliding_max_tokens_held_per_layer": 144,
    }
    assert [
        (g["kind"], g["num_layers"], g["num_padding_layers"]) for g in rep["kv_cache_groups"]
    ] == [("sliding", 12, 0), ("full", 12, 0)]
    # The notes are typed findings until render/json.dumps words them.
    assert all(isinstance(n, str) for n in json.loads(dumps(rep))["notes"])
    text = kv_text(spec)
    assert "49,152 bytes" in text and "2 KV cache group(s)" in text


# Keys the reader looks at, so random configs reach its branches.
_KEYS = [
    "model_type",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "hidden_size",
    "sliding_window",
    "use_sliding_window",
    "layer_types",
    "sliding_window_pattern",
    "multi_query",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "attention_chunk_size",
    "no_rope_layers",
    "hybrid_override_pattern",
    "attn_layer_period",
    "attn_layer_offset",
    "torch_dtype",
    "text_config",
    "index_topk",
    "full_attention_interval",
    "linear_num_key_heads",
    "mamba_n_heads",
    "attn_layer_indices",
    "n_head_kv",
]
_MODEL_TYPES = [
    "llama",
    "gemma2",
    "gemma3_text",
    "gpt_oss",
    "deepseek_v3",
    "deepseek_v32",
    "qwen3_next",
    "nemotron_h",
    "jamba",
    "falcon",
    "llama4_text",
    "bamba",
    "x",
]
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=300),
    st.floats(allow_nan=True),
    st.sampled_from(_MODEL_TYPES + ["M-*", "bfloat16", "float32"]),
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=6)
    ),
    max_leaves=30,
)


@settings(max_examples=100, deadline=None)
@given(
    base=st.sampled_from(
        [
            llama(),
            deepseek(),
            {
                "model_type": "gemma2",
                "num_hidden_layers": 4,
                "num_attention_heads": 4,
                "hidden_size": 64,
                "sliding_window": 8,
            },
        ]
    ),
    patch=st.dictionaries(st.sampled_from(_KEYS), _json, max_size=4),
    tp=st.sampled_from([1, 2, 3, 8]),
)
def test_any_config_gives_a_spec_or_config_error(
    base: dict[str, Any], patch: dict[str, Any], tp: int
) -> None:
    config = dict(base, **patch)
    try:
        spec = spec_from_config(config, tensor_parallel_size=tp)
    except ConfigError:
        return
    assert spec.kv_bytes_per_token > 0
    assert spec.kv_bytes_per_token >= spec.kv_bytes_per_token_full_attention >= 0
    spec.describe()
