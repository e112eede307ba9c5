"""kv/dtypes.py: vLLM 0.31-0.33's --kv-cache-dtype values, with hand-worked bytes."""

from __future__ import annotations

import pytest

from vllm_logread.errors import ConfigError
from vllm_logread.findings import SkipLayersKeepModelDtype
from vllm_logread.kv.build import spec_from_config
from vllm_logread.kv.dtypes import (
    KV_CACHE_DTYPES,
    attention_content_bytes,
    kv_dtype,
    mla_content_bytes,
)
from vllm_logread.vllm.rules import Feature
from vllm_logread.vllm.versions import Version

# A Llama-3.1-8B shape: 32 layers, 8 KV heads, head size 128.
LLAMA = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_size": 4096,
    "torch_dtype": "bfloat16",
}


def test_the_0_31_list_has_18_values_then_0_32_and_0_33_add() -> None:
    v031 = [d for d in KV_CACHE_DTYPES.values() if d.first_version is Feature.KV_DTYPES]
    assert len(v031) == 18
    assert kv_dtype("ultraquant_4bit").first_version.value.since == Version((0, 32, 0))
    with pytest.raises(ConfigError, match="exists from vLLM 0.32"):
        kv_dtype("ultraquant_4bit", vllm_version=Version((0, 31, 0)))


@pytest.mark.parametrize(
    ("name", "per_head"),
    [
        # bytes of one token and one KV head, K and V, head size 128:
        ("auto", 512),  # (128 + 128) x 2 B (bfloat16)
        ("bfloat16", 512),
        ("float16", 512),
        ("fp8", 256),  # (128 + 128) x 1 B
        ("fp8_e4m3", 256),
        ("fp8_e5m2", 256),
        ("fp8_inc", 256),
        ("int8_per_token_head", 264),  # 256 + 8 B (two fp32 scales)
        ("fp8_per_token_head", 264),
        ("int4_per_token_head", 136),  # 64 + 64 + 8
        ("nvfp4", 144),  # per side 64 fp4 bytes + 8 fp8 block scales
        ("nvfp4_4over6", 144),
        ("turboquant_k8v4", 196),  # key 128 + value 64 + 4
        ("turboquant_4bit_nc", 134),  # key 64 + 2, value 64 + 4
        ("turboquant_k3v4_nc", 118),  # key 48 + 2, value 64 + 4
        ("turboquant_3bit_nc", 102),  # key 48 + 2, value 48 + 4
        ("ultraquant_4bit", 136),  # per side 64 + 4
    ],
)
def test_llama_bytes_per_token_by_kv_dtype(name: str, per_head: int) -> None:
    # 32 layers x 8 KV heads x per_head bytes; with turboquant / ultraquant vLLM
    # keeps layers 0, 1, 30, 31 in bf16 (kv_cache_dtype_skip_layers): 28 x 8 x
    # per_head + 4 x 8 x 512.
    spec = spec_from_config(LLAMA, kv_cache_dtype=name)
    if name.startswith(("turboquant_", "ultraquant_")):
        assert spec.kv_bytes_per_token == 28 * 8 * per_head + 4 * 8 * 512
        skipped = SkipLayersKeepModelDtype(kv_cache_dtype=name, skipped_layers=(0, 1, 30, 31))
        assert skipped in spec.notes
    else:
        assert spec.kv_bytes_per_token == 32 * 8 * per_head


def test_content_bytes_value_head_differs() -> None:
    # nvfp4 with K 192 and V 128: 96 + 12 + 64 + 8 = 180 B a head.
    kv = kv_dtype("nvfp4")
    assert attention_content_bytes(kv, head_size=192, head_size_v=128, model_dtype_bytes=2) == 180


@pytest.mark.parametrize("name", ["octave_k3v4", "octave_k3v3", "octave_k3v3_compact"])
def test_octave_is_unknown(name: str) -> None:
    with pytest.raises(ConfigError, match=f"{name}.*unknown"):
        spec_from_config(LLAMA, kv_cache_dtype=name)


def test_a_dtype_vllm_does_not_list_is_named() -> None:
    with pytest.raises(ConfigError, match="unknown kv_cache_dtype 'fp6'"):
        spec_from_config(LLAMA, kv_cache_dtype="fp6")


def test_mla_packed_latents() -> None:
    # DeepSeek latent 576: fp8_ds_mla 656 B, nvfp4_ds_mla 352, per-token-head
    # int8 576 + 8 = 584, int4 288 + 8 = 296; nvfp4 on a latent: unknown.
    assert mla_content_bytes(kv_dtype("fp8_ds_mla"), latent_size=576) == 656
    assert mla_content_bytes(kv_dtype("nvfp4_ds_mla"), latent_size=576) == 352
    assert mla_content_bytes(kv_dtype("fp8_per_token_head"), latent_size=576) == 584
    assert mla_content_bytes(kv_dtype("int4_per_token_head"), latent_size=576) == 296
    assert mla_content_bytes(kv_dtype("fp8"), latent_size=576) is None
    with pytest.raises(ConfigError, match="unknown"):
        mla_content_bytes(kv_dtype("nvfp4"), latent_size=576)
    with pytest.raises(ConfigError, match="MLA models only"):
        spec_from_config(LLAMA, kv_cache_dtype="nvfp4_ds_mla")


def test_turboquant_skip_layers_llama_3_1_8b() -> None:
    # turboquant_k8v4: 28 layers x 8 x 196 B + 4 layers x 8 x 512 B = 43,904 + 16,384
    # = 60,288 B a token; the layout says its block geometry is approximate.
    from vllm_logread.kv.groups import kv_cache_layout

    spec = spec_from_config(LLAMA, kv_cache_dtype="turboquant_k8v4")
    assert spec.kv_bytes_per_token == 60288
    assert not kv_cache_layout(spec, vllm_version="0.33.0").is_exact
