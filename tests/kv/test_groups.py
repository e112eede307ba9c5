"""kv/groups.py: vLLM's KV cache groups, with the rules dated 0.31-0.33."""

from __future__ import annotations

from typing import Any

import pytest

from vllm_logread.errors import ConfigError
from vllm_logread.findings import BlockSizeByGPU
from vllm_logread.kv.build import MLA_MODEL_TYPES, spec_from_config
from vllm_logread.kv.config import resolve_spec, table_entry
from vllm_logread.kv.groups import hybrid_block_size_candidates, kv_cache_layout
from vllm_logread.kv.specs import KVSpec, MambaSpec
from vllm_logread.report import capacity as cap


def spec(name: str, **kw: Any) -> KVSpec:
    found = resolve_spec(name, **kw)
    assert found is not None, name
    return found


def test_qwen3_next_block_size_0_31_0_32_0_33() -> None:
    # Qwen3-Next-80B bf16 TP 1: attention 2 x 2 x 256 x 2 = 2,048 B a token, GDN
    # state 1,097,728 B. 0.31/0.32: 16 x cdiv(1,097,728, 16 x 2,048) = 16 x 34 =
    # 544. 0.33 with the FlashInfer GDN prefill: 64 x cdiv(1,097,728, 64 x
    # 2,048) = 64 x 9 = 576: the GPU decides, so two candidates.
    q = spec("Qwen/Qwen3-Next-80B-A3B")
    for version in ("0.31.0", "0.32.0"):
        (only,) = hybrid_block_size_candidates(
            q, vllm_version=(0, int(version.split(".")[1]), 0), mamba_cache_mode="align"
        )
        assert only.block_size == 544
    both = hybrid_block_size_candidates(q, vllm_version=(0, 33, 0), mamba_cache_mode="align")
    assert [(c.block_size, c.gdn_checkpoint_blocks) for c in both] == [(544, 0), (576, 1)]
    # Without prefix caching ("none") 0.33 keeps 544 alone.
    (plain,) = hybrid_block_size_candidates(q, vllm_version=(0, 33, 0), mamba_cache_mode="none")
    assert plain.block_size == 544
    unsure = kv_cache_layout(q, vllm_version="0.33.0")
    assert not unsure.is_exact
    assert BlockSizeByGPU(candidates=((544, both[0].why), (576, both[1].why))) in unsure.notes


def test_qwen3_next_blocks_per_max_len_request_by_version() -> None:
    # L = 262,144. 0.30 rules (mode none): cdiv(L, 544) = 482 + 3 groups x 1 = 485.
    # 0.31/0.32 align: 482 + 3 x 2 = 488. 0.33 at 576 (FlashInfer GDN): cdiv(L,
    # 576) = 456 + 3 x (2 + 1 checkpoint) = 465 (the audit's figures).
    q = spec("Qwen/Qwen3-Next-80B-A3B")
    per = {
        v: cap.blocks_per_max_len_request(
            kv_cache_layout(q, vllm_version=v, block_size=bs), max_model_len=262144
        )
        for v, bs in (("0.30.0", None), ("0.31.0", None), ("0.32.0", None), ("0.33.0", 576))
    }
    assert per == {"0.30.0": 485, "0.31.0": 488, "0.32.0": 488, "0.33.0": 465}
    # The log's prefix caching off: mode none again, 482 + 3 = 485.
    off = kv_cache_layout(q, vllm_version="0.32.0", enable_prefix_caching=False)
    assert cap.blocks_per_max_len_request(off, max_model_len=262144) == 485


def test_mamba2_checkpoint_page_from_0_32() -> None:
    # Nemotron-H: vLLM budgets 0.31 align 2 pages a Mamba group, 0.32 2 + 1 checkpoint = 3.
    n = spec("nvidia/Nemotron-H-56B-Base-8K")
    for version, pages in (("0.31.0", 2), ("0.32.0", 3), ("0.33.0", 3)):
        layout = kv_cache_layout(n, vllm_version=version)
        mamba = [g for g in layout.groups if isinstance(g.spec, MambaSpec)]
        assert {g.spec.blocks_at_max_len(100_000, max_in_flight_tokens=None) for g in mamba} == {
            pages
        }, version
        # A request keeps 1 page whatever its length (100,000 or 640 tokens).
        assert {g.spec.blocks_charged(100_000) for g in mamba} == {1}, version
        assert {g.spec.blocks_charged(640) for g in mamba} == {1}, version


def test_in_flight_budget_doubles_from_0_26() -> None:
    # gpt-oss-20b, L 131,072, 8,192 batched: 0.25 sliding cdiv(127 + 8,192, 16) + 1
    # = 521 -> 8,192 + 521 = 8,713; 0.26 (2 batches in flight: max_in_flight_tokens,
    # absent from the 0.25.1 wheel, present in 0.26.0's) cdiv(127 + 16,384, 16) + 1
    # = 1,033 -> 9,225.
    g = spec("openai/gpt-oss-20b")
    old = kv_cache_layout(g, vllm_version="0.25.1")
    new = kv_cache_layout(g, vllm_version="0.26.0")
    assert (old.max_concurrent_batches, new.max_concurrent_batches) == (1, 2)
    kw: dict[str, Any] = {"max_model_len": 131072, "max_num_batched_tokens": 8192}
    assert cap.blocks_per_max_len_request(old, **kw) == 8713
    assert cap.blocks_per_max_len_request(new, **kw) == 9225


def test_chunked_local_keeps_the_hybrid_manager_from_0_31() -> None:
    # Llama 4: 36 chunked + 12 full -> 3 chunked + 1 full groups when the hybrid
    # manager is on (0.31+), one group of 48 layers in 0.10.1-0.30.
    cfg = {
        "model_type": "llama4_text",
        "num_hidden_layers": 48,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "hidden_size": 5120,
        "attention_chunk_size": 8192,
    }
    llama4 = spec_from_config(cfg)
    assert kv_cache_layout(llama4, vllm_version="0.30.0").num_groups == 1
    on = kv_cache_layout(llama4, vllm_version="0.31.0")
    assert on.is_exact and sorted(g.kind for g in on.groups) == ["chunked"] * 3 + ["full"]


def test_group_size_rule_in_0_31() -> None:
    # 12 sliding + 13 full (gpt-oss + an EAGLE layer): 13 < 1.5 x 12, so the
    # group size is 13 from 0.31 on: 2 groups, the sliding one padded by 1.
    cfg = {
        "model_type": "gpt_oss",
        "num_hidden_layers": 25,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "hidden_size": 2880,
        "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 12 + ["full_attention"],
    }
    layout = kv_cache_layout(spec_from_config(cfg), vllm_version="0.31.0")
    assert [(g.kind, g.num_layers, g.num_padding_layers) for g in layout.groups] == [
        ("sliding", 12, 1),
        ("full", 13, 0),
    ]


def test_page_size_unification_scales_the_smaller_block() -> None:
    # Gemma-4-style: sliding layers 8 KV heads x 256, full layers 2 KV heads x
    # 512 ("global"). Pages at 16: sliding 16 x 8 x 512 x 2 = 131,072 B, full
    # 16 x 2 x 1,024 x 2 = 65,536 B; 131,072 % 65,536 == 0, so the full layers'
    # block becomes 16 x 2 = 32 tokens (unify_kv_cache_spec_page_size).
    cfg = {
        "model_type": "gemma4_text",
        "num_hidden_layers": 12,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 256,
        "global_head_dim": 512,
        "num_global_key_value_heads": 2,
        "hidden_size": 4096,
        "sliding_window": 1024,
        "layer_types": ["sliding_attention"] * 5
        + ["full_attention"]
        + ["sliding_attention"] * 5
        + ["full_attention"],
    }
    s = spec_from_config(cfg)
    # Per token: 10 sliding x 8 x 512 x 2 + 2 full x 2 x 1,024 x 2 = 81,920 + 8,192.
    assert s.kv_bytes_per_token == 90112 and s.has_per_layer_shapes
    layout = kv_cache_layout(s, vllm_version="0.33.0")
    blocks = {g.kind: g.block_size for g in layout.groups}
    assert blocks == {"sliding": 16, "full": 32}
    assert layout.page_size_bytes == 131072
    # A 640-token user: full cdiv(640, 32) = 20; sliding min(40, cdiv(1,023, 16) + 1).
    full = next(g for g in layout.groups if g.kind == "full")
    assert full.spec.blocks_charged(640) == 20


def test_head_size_v_and_swa_shapes() -> None:
    # MiMo-V2-Flash-style: full layers 4 KV heads x (192 + 128), sliding layers
    # 8 KV heads x (192 + 128), bf16: per token 1 x 4 x 320 x 2 + 3 x 8 x 320 x 2
    # = 2,560 + 15,360 = 17,920 B.
    cfg = {
        "model_type": "mimo_v2_flash",
        "num_hidden_layers": 4,
        "num_attention_heads": 64,
        "num_key_value_heads": 4,
        "head_dim": 192,
        "v_head_dim": 128,
        "swa_num_key_value_heads": 8,
        "swa_head_dim": 192,
        "swa_v_head_dim": 128,
        "hidden_size": 4096,
        "sliding_window": 128,
        "layer_types": ["full_attention"] + ["sliding_attention"] * 3,
    }
    s = spec_from_config(cfg)
    assert s.kv_bytes_per_token == 17920
    assert s.kv_bytes_per_token_full_attention == 2560
    assert "value head size 128" in s.describe()


def test_kv_sharing_layers_allocate_nothing() -> None:
    # Gemma-3n-style: 30 layers, the last 10 share earlier layers' caches: only
    # 20 x 2 KV heads x 256 x 2 x 2 B = 40,960 B a token.
    cfg = {
        "model_type": "gemma3n_text",
        "num_hidden_layers": 30,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "hidden_size": 2048,
        "num_kv_shared_layers": 10,
    }
    s = spec_from_config(cfg)
    assert s.kv_bytes_per_token == 40960
    assert s.shared_kv_layers == tuple(range(20, 30))
    assert s.layer_kind_counts == {"full": 20, "none": 10}
    assert kv_cache_layout(s).groups[0].num_layers == 20


def test_mla_model_types_need_kv_lora_rank() -> None:
    # The 24 types of is_deepseek_mla (0.31-0.33): MLA only with kv_lora_rank.
    assert len(MLA_MODEL_TYPES) == 24
    base = {
        "num_hidden_layers": 2,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "hidden_size": 2048,
        "qk_rope_head_dim": 64,
    }
    # glm4_moe_lite with kv_lora_rank 512: one latent (512 + 64) x 2 B x 2 layers.
    lite = spec_from_config({**base, "model_type": "glm4_moe_lite", "kv_lora_rank": 512})
    assert lite.is_mla and lite.kv_bytes_per_token == 2 * 576 * 2
    # Without kv_lora_rank the same type is standard attention: 2 x 16 x 128 x 2 x 2.
    plain = spec_from_config({**base, "model_type": "glm4_moe_lite"})
    assert not plain.is_mla and plain.kv_bytes_per_token == 2 * 2 * 16 * 128 * 2
    with pytest.raises(ConfigError, match="not modelled: unknown"):
        spec_from_config({**base, "model_type": "deepseek_v4", "kv_lora_rank": 512})


def test_nemotron_h_ssm_state_in_float32_from_0_31() -> None:
    # vLLM 0.31+ (NemotronHForCausalLMConfig): mamba_ssm_cache_dtype auto -> the
    # config's, else float32. Nemotron-H-56B TP 1: conv 3 x 20,480 x 2 B = 122,880
    # + SSM 256 x 64 x 256 x 4 B = 16,777,216 -> 16,900,096 B a layer; block
    # 16 x cdiv(16,900,096, 16 x 4,096) = 16 x 258 = 4,128 (bf16 SSM: 2,080).
    n = spec("nvidia/Nemotron-H-56B-Base-8K")
    assert n.state_bytes_per_layer == 8511488  # the config's dtype, no version known
    assert kv_cache_layout(n).block_size == 2080
    layout = kv_cache_layout(n, vllm_version="0.32.0")
    assert layout.block_size == 4128
    mamba = next(g.spec for g in layout.groups if isinstance(g.spec, MambaSpec))
    assert mamba.state_bytes == 16900096
    # An explicit --mamba-ssm-cache-dtype keeps its own dtype.
    entry = table_entry("nvidia/Nemotron-H-56B-Base-8K")
    assert entry is not None
    given = spec_from_config(entry[1], mamba_ssm_cache_dtype="bfloat16")
    assert kv_cache_layout(given, vllm_version="0.32.0").block_size == 2080


def test_mla_block_size_by_version() -> None:
    # 0.31+: sparse MLA runs at the indexer's 64 on CUDA; DeepSeek-V3.2 fp8 at 64:
    # 61 layers x 64 x (656 + 132) = 3,076,352 B a block id (the audit's figure).
    base = {
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "hidden_size": 7168,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "torch_dtype": "bfloat16",
    }
    v32 = spec_from_config(
        {**base, "model_type": "deepseek_v32", "index_topk": 2048}, kv_cache_dtype="fp8"
    )
    layout = kv_cache_layout(v32, vllm_version="0.32.0")
    assert (layout.block_size, layout.bytes_per_block, layout.is_exact) == (64, 3076352, True)
    # Dense MLA: 16 on SM90 (FlashAttention MLA), 32 on SM10x: the GPU decides.
    v3 = spec_from_config({**base, "model_type": "deepseek_v3"})
    dense = kv_cache_layout(v3, vllm_version="0.33.0")
    assert dense.block_size == 16 and not dense.is_exact
    assert kv_cache_layout(v3, vllm_version="0.33.0", block_size=32).is_exact


def test_speculative_tokens_add_mamba_pages_and_conv_rows() -> None:
    # Qwen3-Next TP 1, 2 speculative tokens (0.31+): conv (3 + 2) x 8,192 x 2 B =
    # 81,920 + SSM 32 x 128 x 128 x 2 B = 1,048,576 -> 1,130,496 B a layer; block
    # 16 x cdiv(1,130,496, 32,768) = 16 x 35 = 560; align mode budgets 2 + 2 = 4 pages
    # and a request keeps 1 + 2 = 3.
    q = spec("Qwen/Qwen3-Next-80B-A3B")
    layout = kv_cache_layout(q, vllm_version="0.32.0", num_speculative_tokens=2)
    mamba = next(g.spec for g in layout.groups if isinstance(g.spec, MambaSpec))
    assert (mamba.state_bytes, layout.block_size, mamba.blocks_charged(640)) == (1130496, 560, 3)
    assert mamba.blocks_at_max_len(640, max_in_flight_tokens=None) == 4
    # Not applied without a 0.31+ version (unaudited before).
    assert kv_cache_layout(q, num_speculative_tokens=2).block_size == 544
