"""The shipped table's families: each checked against arithmetic worked by hand.

Every entry comes from the model's real config.json (its source says where);
these tests pin what vLLM allocates for it, per GPU, with the sum written out.
"""

from __future__ import annotations

from typing import Any

from vllm_logread.kv.config import resolve_spec
from vllm_logread.kv.groups import kv_cache_layout
from vllm_logread.kv.specs import KVSpec


def spec(name: str, **kw: Any) -> KVSpec:
    found = resolve_spec(name, **kw)
    assert found is not None and found.source_kind == "table", name
    return found


def test_llama_2() -> None:
    # 7B: no GQA, head 4,096 / 32 = 128: 32 layers x 2 x 32 KV heads x 128 x 2 B
    # (float16) = 524,288 B (512 KiB) a token.
    s7 = spec("meta-llama/Llama-2-7b-hf")
    assert (s7.model_dtype, s7.head_size, s7.kv_bytes_per_token) == ("float16", 128, 524288)
    assert spec("meta-llama/Llama-2-7b-chat-hf").kv_bytes_per_token == 524288
    # 13B: 40 layers x 2 x 40 x (5,120 / 40 = 128) x 2 B = 819,200 B.
    assert spec("meta-llama/Llama-2-13b-hf").kv_bytes_per_token == 819200
    # 70B: GQA, 80 layers x 2 x 8 x 128 x 2 B = 327,680 B; TP 8: 1 KV head a GPU,
    # 80 x 2 x 1 x 128 x 2 = 40,960 B.
    assert spec("meta-llama/Llama-2-70b-hf").kv_bytes_per_token == 327680
    assert (
        spec("meta-llama/Llama-2-70b-chat-hf", tensor_parallel_size=8).kv_bytes_per_token == 40960
    )


def test_phi_3_mini() -> None:
    # Head 3,072 / 32 = 96: 32 x 2 x 32 x 96 x 2 B = 393,216 B a token, every layer
    # sliding (a 2,047-token window), so none keeps every token.
    s = spec("microsoft/Phi-3-mini-4k-instruct")
    assert (s.head_size, s.kv_bytes_per_token) == (96, 393216)
    assert s.layer_kind_counts == {"sliding": 32} and s.sliding_window_tokens == 2047
    assert s.kv_bytes_per_token_full_attention == 0
    # A user of 4,000 tokens holds at most cdiv(2,046, 16) + 1 = 129 blocks a layer.
    layout = kv_cache_layout(s)
    assert layout.groups[0].spec.blocks_charged(4000) == 129
    # The 128k model: the same bytes, a 262,144-token window.
    long = spec("microsoft/Phi-3-mini-128k-instruct")
    assert (long.kv_bytes_per_token, long.sliding_window_tokens) == (393216, 262144)


def test_llama_4() -> None:
    # Scout: 48 layers x 2 x 8 x 128 x 2 B = 196,608 B a token if every layer kept
    # everything; no_rope_layers [] -> every 4th layer global: 12 full layers keep
    # 12 x 4,096 = 49,152 B a token, 36 see 8,192-token chunks.
    s = spec("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert (s.kv_bytes_per_token, s.kv_bytes_per_token_full_attention) == (196608, 49152)
    assert s.layer_kind_counts == {"chunked": 36, "full": 12}
    assert s.attention_chunk_size == 8192
    # 0.31+: the hybrid manager stays on: 3 chunked groups + 1 full group of 12.
    layout = kv_cache_layout(s, vllm_version="0.32.0")
    assert sorted(g.kind for g in layout.groups) == ["chunked", "chunked", "chunked", "full"]
    assert spec("meta-llama/Llama-4-Scout-17B-16E").kv_bytes_per_token == 196608
    assert spec("meta-llama/Llama-4-Maverick-17B-128E-Instruct").kv_bytes_per_token == 196608


def test_jamba() -> None:
    # Attention every 8th layer from 4: layers 4, 12, 20, 28 -> 4 x 2 x 8 x 128 x 2 B
    # = 16,384 B a token. 28 Mamba1 layers: inner 2 x 4,096 = 8,192; conv 3 x 8,192
    # x 2 B = 49,152 + SSM 8,192 x 16 x 2 B = 262,144 -> 311,296 B a layer,
    # 28 x 311,296 = 8,716,288 B of state a request.
    s = spec("ai21labs/AI21-Jamba-1.5-Mini")
    assert s.layer_kind_counts == {"mamba": 28, "full": 4}
    assert s.kv_bytes_per_token == 16384
    assert (s.state_bytes_per_layer, s.state_bytes_per_request) == (311296, 8716288)
    # Attention block: 16 x cdiv(311,296, 16 x 4,096) = 16 x 5 = 80 tokens, page
    # 80 x 4,096 = 327,680 B; group size 4 -> 7 Mamba groups + 1 full.
    layout = kv_cache_layout(s)
    assert (layout.block_size, layout.page_size_bytes, layout.num_groups) == (80, 327680, 8)
    assert spec("ai21labs/Jamba-v0.1").state_bytes_per_request == 8716288


def test_kimi_k2() -> None:
    # kimi_k2 is one of vLLM's MLA types: 61 layers x (512 + 64) x 2 B = 70,272 B
    # a token on every GPU (as DeepSeek-V3), whatever the TP size.
    for tp in (1, 8):
        s = spec("moonshotai/Kimi-K2-Instruct", tensor_parallel_size=tp)
        assert s.is_mla and s.kv_bytes_per_token == 70272
    assert spec("moonshotai/Kimi-K2-Thinking", kv_cache_dtype="fp8").kv_bytes_per_token == 35136
