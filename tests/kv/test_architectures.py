"""vLLM 0.34's architectures: the shipped data, the tool's status, and the 2026 families.

Each family test works its bytes out by hand from the config in the shipped
table (vllm_logread/data/models.json, whose source names where it came from).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from vllm_logread.kv.architectures import (
    all_architectures,
    architecture_info,
    architecture_status,
    registry_version,
)
from vllm_logread.kv.build import spec_from_config
from vllm_logread.kv.config import resolve_spec
from vllm_logread.kv.groups import kv_cache_layout
from vllm_logread.kv.specs import (
    GatedDeltaNetSpec,
    KDASpec,
    KVSpec,
    LinearAttentionSpec,
    MLAAttentionSpec,
    ShortConvSpec,
)

ROOT = Path(__file__).resolve().parents[2]


def spec(name: str, **kw: Any) -> KVSpec:
    found = resolve_spec(name, **kw)
    assert found is not None and found.source_kind == "table", name
    return found


def test_the_data_covers_vllm_0_34s_registry() -> None:
    archs = all_architectures()
    assert registry_version() == "0.34.0"
    # 0.34's text-generation, multimodal and drafter tables and the families it serves
    # through the Transformers backend only (Gemma, OLMoE, StableLM moved there):
    # 149 + 134 + 69 = 352 names (tools/gen_architectures.py's count of the registry).
    assert len(archs) == 352
    counts: dict[str, int] = {}
    for a in archs:
        counts[a.status] = counts.get(a.status, 0) + 1
    assert counts == {"verified": 29, "modelled": 21, "not verified": 302}
    gemma = architecture_info("GemmaForCausalLM")
    assert gemma is not None and gemma.status == "modelled"
    roles = {a.role for a in archs}
    assert roles == {"text-generation", "multimodal", "drafter"}
    kimi = architecture_info("KimiLinearForCausalLM")
    assert kimi is not None and {"mla", "kda"} <= set(kimi.attention_kinds)
    nemo = architecture_info("NemotronHForCausalLM")
    assert nemo is not None and "hybrid_override_pattern" in nemo.kv_config_fields


def test_every_verified_architecture_names_a_test_that_exists() -> None:
    for a in all_architectures():
        if a.status != "verified":
            assert a.verified_by is None, a.name
            continue
        assert a.verified_by is not None, a.name
        path, test = a.verified_by.split("::")
        text = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(test)}\(", text, re.M), a.verified_by


def test_status_of_a_config() -> None:
    verified = architecture_status({"architectures": ["Qwen3ForCausalLM"]}, {})
    assert verified.status == "verified" and verified.is_verified
    served = architecture_status({"architectures": ["ApertusForCausalLM"]}, {})
    assert served.status == "not verified" and not served.is_verified
    assert served.reason is not None and "no hand-worked test" in served.reason
    unknown = architecture_status({"architectures": ["MyOwnForCausalLM"]}, {})
    assert unknown.status == "not verified" and "not in vLLM 0.34.0" in str(unknown.reason)
    # A verified architecture with a per-layer field the tool does not read is
    # not verified: its bytes could be wrong.
    odd = architecture_status(
        {"architectures": ["LlamaForCausalLM"]}, {"num_key_value_heads_per_layer": [8, 4]}
    )
    assert odd.status == "not verified" and "num_key_value_heads_per_layer" in str(odd.reason)
    # model_type alone maps to its family; nothing at all is a generic config.
    assert architecture_status({}, {"model_type": "qwen3"}).status == "verified"
    assert architecture_status({}, {"model_type": "apertus"}).status == "not verified"
    assert architecture_status({}, {}).status == "generic"


def test_a_spec_carries_its_status() -> None:
    base = {
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "hidden_size": 256,
    }
    assert spec_from_config(base).is_verified
    apertus = spec_from_config(dict(base, architectures=["ApertusForCausalLM"]))
    assert apertus.architecture == "ApertusForCausalLM" and not apertus.is_verified
    # A per-layer list the tool does not read: its layers would be taken as uniform,
    # so the config is not verified whatever its architecture.
    odd = spec_from_config(
        dict(base, architectures=["LlamaForCausalLM"], kv_heads_per_layer=[2, 1])
    )
    assert odd.architecture_status == "not verified"


def test_kimi_linear() -> None:
    s = spec("moonshotai/Kimi-Linear-48B-A3B-Instruct")
    assert s.architecture_status == "verified"
    # 27 layers: kda_layers lists 20 (1-based), the other 7 (4, 8, ..., 24, 27) are MLA.
    assert s.layer_kind_counts == {"linear": 20, "mla": 7}
    assert s.layer_kinds[3] == "mla" and s.layer_kinds[0] == "linear"
    # MLA: (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B = 1,152 B a token a layer;
    # 7 x 1,152 = 8,064 B a token.
    assert s.kv_bytes_per_token == 8064
    # KDA: conv (4 - 1) x (32 x 128 + 2 x 32 x 128 = 12,288) x 2 B = 73,728; recurrent
    # 32 x 128 x 128 x 4 B (float32) = 2,097,152 -> 2,170,880 B a layer, 20 layers
    # 43,417,600 B a request.
    kda = s.state_specs()[0]
    assert isinstance(kda, KDASpec) and kda.dtypes_bytes == (2, 4)
    assert (s.state_bytes_per_layer, s.state_bytes_per_request) == (2170880, 43417600)
    # TP 2: the latent stays whole; KDA halves: 3 x 6,144 x 2 + 16 x 128 x 128 x 4.
    s2 = spec("moonshotai/Kimi-Linear-48B-A3B-Instruct", tensor_parallel_size=2)
    assert s2.kv_bytes_per_token == 8064
    assert s2.state_bytes_per_layer == 3 * 6144 * 2 + 16 * 128 * 128 * 4 == 1085440
    # Groups (0.33): the MLA block is 128 x cdiv(2,170,880, 128 x 1,152) = 128 x 15 =
    # 1,920 tokens, page 1,920 x 1,152 = 2,211,840 B; the KDA state is padded to it.
    layout = kv_cache_layout(s, vllm_version="0.33.0")
    assert layout.block_size == 1920 and layout.page_size_bytes == 2211840
    kinds = sorted(g.kind for g in layout.groups)
    assert kinds == ["full", "mamba", "mamba", "mamba"]
    mla = next(g for g in layout.groups if g.kind == "full")
    assert isinstance(mla.spec, MLAAttentionSpec) and mla.spec.page_size_bytes == 2211840


def test_qwen3_5() -> None:
    s = spec("Qwen/Qwen3.5-27B")
    assert s.architecture_status == "verified"
    # 64 layers, every 4th full: 16 full x 4 KV heads x (256 + 256) x 2 B = 65,536 B a token.
    assert s.layer_kind_counts == {"linear": 48, "full": 16}
    assert s.kv_bytes_per_token == 65536
    # Gated delta net: conv 3 x (2 x 16 x 128 + 48 x 128 = 10,240) x 2 B = 61,440;
    # SSM 48 x 128 x 128 x 2 B = 1,572,864 -> 1,634,304 B in the model dtype; vLLM
    # 0.33 takes the config's mamba_ssm_dtype float32: 48 x 128 x 128 x 4 = 3,145,728
    # -> 3,207,168 B a layer.
    gdn = s.state_specs()[0]
    assert isinstance(gdn, GatedDeltaNetSpec)
    assert s.state_bytes_per_layer == 1634304 and gdn.arch_ssm_dtype_bytes == 4
    assert 30720 * 2 + 48 * 128 * 128 * 4 == 3207168


def test_qwen3_5_moe() -> None:
    s = spec("Qwen/Qwen3.5-35B-A3B")
    assert s.architecture_status == "verified"
    # 40 layers: 10 full x 2 KV heads x 512 x 2 B = 20,480 B a token.
    assert s.layer_kind_counts == {"linear": 30, "full": 10}
    assert s.kv_bytes_per_token == 20480
    # conv 3 x (4,096 + 4,096) x 2 = 49,152 + SSM 32 x 128 x 128 x 2 = 1,048,576.
    assert s.state_bytes_per_layer == 1097728
    # TP 2: 1 KV head a GPU -> 10,240 B a token.
    assert spec("Qwen/Qwen3.5-35B-A3B", tensor_parallel_size=2).kv_bytes_per_token == 10240


def test_deepseek_v3_2() -> None:
    s = spec("deepseek-ai/DeepSeek-V3.2-Exp")
    assert s.architecture_status == "verified" and s.is_mla
    # bf16 latent (512 + 64) x 2 = 1,152 + indexer 128 + 128 / 128 x 4 = 132 -> 1,284 B
    # a layer, 61 layers: 78,324 B a token.
    assert s.kv_bytes_per_token == 61 * 1284 == 78324
    # fp8 -> fp8_ds_mla: 656 + 132 = 788 B a layer: 48,068 B a token.
    assert spec("deepseek-ai/DeepSeek-V3.2-Exp", kv_cache_dtype="fp8").kv_bytes_per_token == 48068
    # Block 64 (the indexer's kernel): page 64 x 1,284 = 82,176 B, one group.
    layout = kv_cache_layout(s, vllm_version="0.33.0")
    assert (layout.block_size, layout.page_size_bytes, layout.num_groups) == (64, 82176, 1)
    assert spec("deepseek-ai/DeepSeek-V3.2").kv_bytes_per_token == 78324


def test_minimax_m2() -> None:
    s = spec("MiniMaxAI/MiniMax-M2")
    assert s.architecture_status == "verified" and s.is_uniform
    # 62 layers x 8 KV heads x (128 + 128) x 2 B = 253,952 B a token; TP 8: 1 KV head,
    # 31,744 B. Page at block 16: 16 x 8 x 256 x 2 = 65,536 B a layer.
    assert s.kv_bytes_per_token == 253952
    assert spec("MiniMaxAI/MiniMax-M2", tensor_parallel_size=8).kv_bytes_per_token == 31744
    layout = kv_cache_layout(s)
    assert (layout.block_size, layout.page_size_bytes, layout.num_groups) == (16, 65536, 1)


def test_glm_4_6() -> None:
    s = spec("zai-org/GLM-4.6")
    assert s.architecture_status == "verified" and s.is_uniform
    # 92 layers x 8 KV heads x 256 x 2 B = 376,832 B a token; TP 8: 47,104 B.
    assert s.kv_bytes_per_token == 376832
    assert spec("zai-org/GLM-4.7", tensor_parallel_size=8).kv_bytes_per_token == 47104


def test_mixtral() -> None:
    # Mixtral-8x7B: 32 layers x 8 KV heads x (4,096 / 32 = 128) x 2 (K, V) x 2 B = 131,072.
    s = spec("mistralai/Mixtral-8x7B-Instruct-v0.1")
    assert s.architecture_status == "verified" and s.kv_bytes_per_token == 131072


def test_qwen2_5() -> None:
    # Qwen2.5-7B: 28 layers x 4 KV heads x 128 x 2 x 2 B = 57,344; its sliding_window is
    # off (use_sliding_window false), every layer full.
    s = spec("Qwen/Qwen2.5-7B-Instruct")
    assert s.architecture_status == "verified" and s.kv_bytes_per_token == 57344
    assert s.layer_kind_counts == {"full": 28}


def test_short_conv_lfm2() -> None:
    cfg = {
        "architectures": ["Lfm2ForCausalLM"],
        "model_type": "lfm2",
        "num_hidden_layers": 4,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "hidden_size": 2048,
        "conv_dim": 2048,
        "conv_L_cache": 3,
        "layer_types": ["conv", "conv", "full_attention", "conv"],
        "torch_dtype": "bfloat16",
    }
    s = spec_from_config(cfg)
    assert s.layer_kind_counts == {"mamba": 3, "full": 1}
    # One conv state (3 - 1) x 2,048 x 2 B = 8,192 B a layer; attention 8 x 64 x 2 x 2.
    conv = s.state_specs()[0]
    assert isinstance(conv, ShortConvSpec) and s.state_bytes_per_layer == 8192
    assert s.kv_bytes_per_token == 8 * 64 * 2 * 2 == 2048
    assert s.architecture_status == "not verified"


def test_kimi_k3_full_rank_gate_is_refused() -> None:
    table = json.loads((ROOT / "vllm_logread/data/models.json").read_text(encoding="utf-8"))
    cfg = dict(table["models"]["moonshotai/Kimi-Linear-48B-A3B-Instruct"]["config"])
    cfg["linear_attn_config"] = dict(cfg["linear_attn_config"], use_full_rank_gate=True)
    from vllm_logread.errors import ConfigError

    with pytest.raises(ConfigError, match="use_full_rank_gate"):
        spec_from_config(cfg)


def test_cli_lists_the_architectures() -> None:
    from click.testing import CliRunner

    from vllm_logread.cli.commands import main

    result = CliRunner().invoke(main, ["kv", "--list-architectures"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith("vLLM 0.34.0's model registry: 352 architectures; 29 verified")
    row = next(line for line in lines if line.startswith("KimiLinearForCausalLM "))
    assert row.split()[1:3] == ["text-generation", "verified"]
    row = next(line for line in lines if line.startswith("ApertusForCausalLM "))
    assert "not verified" in row
    as_json = CliRunner().invoke(main, ["kv", "--list-architectures", "--json"])
    data = json.loads(as_json.output)
    assert len(data["architectures"]) == 352
    # No model and no listing: a usage error.
    assert CliRunner().invoke(main, ["kv"]).exit_code == 2


def test_decilm_per_layer_kv_heads() -> None:
    # Llama-3.3-Nemotron-Super-style block_configs: 64 query heads; layer 0 groups 8
    # (8 KV heads), layer 1 is a no_op attention (no cache), layer 2 groups 16 (4 KV heads).
    def block(group: int | None, no_op: bool = False) -> dict[str, Any]:
        return {
            "attention": {"n_heads_in_group": group, "no_op": no_op, "window_length": None},
            "ffn": {"ffn_mult": 2.625},
        }

    cfg = {
        "architectures": ["DeciLMForCausalLM"],
        "model_type": "nemotron-nas",
        "num_hidden_layers": 3,
        "num_attention_heads": 64,
        "hidden_size": 8192,
        "torch_dtype": "bfloat16",
        "block_configs": [block(8), block(None, no_op=True), block(16)],
    }
    s = spec_from_config(cfg)
    assert s.layer_kinds == ("full", "none", "full")
    # head 8,192 / 64 = 128: (8 + 4) KV heads x (128 + 128) x 2 B = 6,144 B a token.
    assert s.kv_bytes_per_token == (8 + 4) * 256 * 2 == 6144
    # TP 8: 1 KV head a layer (8 // 8; 4 < 8 replicated): 2 x 256 x 2 = 1,024 B.
    assert spec_from_config(cfg, tensor_parallel_size=8).kv_bytes_per_token == 1024
    assert s.architecture_status == "modelled" and not s.is_verified
    windowed = dict(cfg, block_configs=[block(8), block(8), block(8)])
    windowed["block_configs"][0]["attention"]["window_length"] = 4096
    from vllm_logread.errors import ConfigError

    with pytest.raises(ConfigError, match="not modelled"):
        spec_from_config(windowed)


def test_mimo_v2_flash_per_layer_shapes() -> None:
    # MiMo-V2-Flash's release geometry (48 layers): full layers at 0, 5, 11, ..., 47 (9)
    # with 4 KV heads, K 192 / V 128; 39 sliding layers (hybrid_layer_pattern 1) with
    # their own swa_num_key_value_heads 8, swa_head_dim 192, swa_v_head_dim 128.
    cfg = {
        "architectures": ["MiMoV2FlashForCausalLM"],
        "model_type": "mimo_v2_flash",
        "torch_dtype": "bfloat16",
        "num_hidden_layers": 48,
        "hidden_size": 4096,
        "num_attention_heads": 64,
        "num_key_value_heads": 4,
        "head_dim": 192,
        "v_head_dim": 128,
        "swa_num_attention_heads": 64,
        "swa_num_key_value_heads": 8,
        "swa_head_dim": 192,
        "swa_v_head_dim": 128,
        "add_swa_attention_sink_bias": True,
        "sliding_window_size": 128,
        "hybrid_layer_pattern": [0 if i == 0 or (i - 5) % 6 == 0 else 1 for i in range(48)],
    }
    s = spec_from_config(cfg)
    assert s.layer_kind_counts == {"full": 9, "sliding": 39}
    assert s.sliding_window_tokens == 128
    # Full: 4 x (192 + 128) x 2 B = 2,560 B a layer; sliding: 8 x 320 x 2 = 5,120 B.
    # 9 x 2,560 + 39 x 5,120 = 23,040 + 199,680 = 222,720 B a token if all kept every token;
    # the 9 full layers keep 23,040 B a token.
    assert s.kv_bytes_per_token == 222720
    assert s.kv_bytes_per_token_full_attention == 23040
    # TP 8: 4 KV heads replicated -> 1 a GPU; 8 -> 1: 9 x 640 + 39 x 640 = 30,720 B.
    assert spec_from_config(cfg, tensor_parallel_size=8).kv_bytes_per_token == 48 * 640
    assert s.architecture_status == "modelled" and not s.is_verified


def test_bailing_linear_attention_beside_mla() -> None:
    # BailingMoeV2.5's layout: layer_group_size 4 -> layers 3 and 7 are MLA, the other 6
    # lightning linear attention, one state (16 heads, 128 x 128) in the model dtype.
    cfg = {
        "architectures": ["BailingMoeV2_5ForCausalLM"],
        "model_type": "bailing_hybrid",
        "torch_dtype": "bfloat16",
        "num_hidden_layers": 8,
        "num_attention_heads": 16,
        "hidden_size": 2048,
        "layer_group_size": 4,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
    }
    s = spec_from_config(cfg)
    assert s.layer_kinds == ("linear",) * 3 + ("mla",) + ("linear",) * 3 + ("mla",)
    # MLA: 2 layers x (512 + 64) x 2 B = 2,304 B a token; state 16 x 128 x 128 x 2 B =
    # 524,288 B a layer (mamba_ssm_cache_dtype does not apply to it).
    assert s.kv_bytes_per_token == 2304
    state = s.state_specs()[0]
    assert isinstance(state, LinearAttentionSpec) and s.state_bytes_per_layer == 524288
    assert spec_from_config(cfg, mamba_ssm_cache_dtype="float32").state_bytes_per_layer == 524288
    assert s.architecture_status == "modelled"


def test_gemma_3n() -> None:
    s = spec("google/gemma-3n-E4B-it")
    assert s.architecture_status == "verified"
    # 35 layers; the last 15 share layers 18/19's caches and keep nothing. Of the first
    # 20, 4 sliding : 1 full -> full at 4, 9, 14, 19 (4) and 16 sliding (512 tokens).
    assert s.layer_kind_counts == {"sliding": 16, "full": 4, "none": 15}
    # Each own layer: 2 KV heads x (256 + 256) x 2 B = 2,048 B a token: 20 x 2,048 =
    # 40,960 B if all kept every token; the 4 full layers keep 8,192 B a token.
    assert (s.kv_bytes_per_token, s.kv_bytes_per_token_full_attention) == (40960, 8192)
    # Groups of 4 layers: 4 sliding + 1 full; page 16 x 2 x 512 x 2 = 32,768 B.
    layout = kv_cache_layout(s, vllm_version="0.33.0")
    assert (layout.block_size, layout.page_size_bytes, layout.num_groups) == (16, 32768, 5)
    assert sorted(g.kind for g in layout.groups) == ["full"] + ["sliding"] * 4


def test_a_latent_rank_outside_the_mla_types_is_not_verified() -> None:
    cfg = {
        "architectures": ["MistralForCausalLM"],
        "model_type": "mistral4",
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "hidden_size": 256,
        "kv_lora_rank": 64,
        "qk_rope_head_dim": 16,
    }
    s = spec_from_config(cfg)
    assert not s.is_mla and s.architecture_status == "not verified"
    assert "kv_lora_rank" in str(s.architecture_note)


def test_ricursive_0_34_log() -> None:
    """A constructed vLLM 0.34.0 boot of RicursiveForCausalLM, new in 0.34.0's registry
    (sample_logs/constructed_0.34_ricursive.log, its config tests/data/ricursive_0_34_config.json:
    8 layers, 6 sliding of a 1,024 window + 2 full, 4 KV heads x 128, bf16), read exact.

    By hand:
    * page of a layer at vLLM 0.34's GPU block size 64: 64 x 2 (K, V) x 4 x 128 x 2 B =
      131,072 B; every layer the same page, so no unification.
    * group size min(6, 2) = 2 (6 is not under 1.5 x 2): cdiv(6, 2) = 3 sliding groups + 1
      full group = 4 groups of 2 layers; a block id holds 2 x 131,072 = 262,144 B.
    * 8.00 GiB = 8,589,934,592 B / 262,144 = 32,768 blocks.
    * vLLM's concurrency for 4,096 tokens: full cdiv(4,096, 64) = 64; each sliding group
      cdiv(min(1,023 + 2 x 2,048, 4,096), 64) + 1 = 65; 3 x 65 + 64 = 259 blocks;
      32,768 / 259 = 126.517x -> "126.52x"; int(126.5174 x 4,096) = 518,215 tokens.
    * a user of 512 + 128: 639 tokens held (P + O - 1), under the window: cdiv(639, 64) = 10
      blocks in each of 4 groups = 40; (32,768 - 1 null) // 40 = 819 (819 x 40 = 32,760).
    * mid-answer, 512 + 64 - 1 = 575 tokens: cdiv(575, 64) = 9, x 4 = 36;
      32,767 // 36 = 910 (910 x 36 = 32,760; 911 x 36 = 32,796 > 32,767).
    """
    from click.testing import CliRunner

    from vllm_logread.cli.commands import main

    log = ROOT / "sample_logs" / "constructed_0.34_ricursive.log"
    config = ROOT / "tests" / "data" / "ricursive_0_34_config.json"
    r = CliRunner().invoke(
        main,
        [str(log), "--config", str(config), "--prompt", "512", "--output", "128", "--json"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert out["is_exact"] is True
    assert (out["users"], out["users_mid_answer"]) == (819, 910)
    assert (out["num_blocks"], out["block_size"]) == (32768, 64)
    assert {c["name"]: c["status"] for c in out["checks"]} == {
        "max_concurrency": "pass",
        "pool_vs_memory": "pass",
        "kv_cache_groups": "pass",
    }
    assert architecture_status({"architectures": ["RicursiveForCausalLM"]}, {}).status == "verified"
