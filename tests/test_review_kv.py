"""kv --gpu on quantization and wrapper configs the counter met only in review:
each expectation worked by hand beside it."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli import main
from vllm_logread.kv.config import table_entry
from vllm_logread.report.estimate import weights_basis

GIB = 1 << 30


def llama_8b(**changes: Any) -> dict[str, Any]:
    found = table_entry("meta-llama/Llama-3.1-8B-Instruct")
    assert found is not None
    cfg = dict(found[1])
    cfg.update(changes)
    return cfg


# Llama-3.1-8B: 8,030,261,248 parameters, of them 2 x 128,256 x 4,096 =
# 1,050,673,152 in embed_tokens and lm_head (untied), which stay 16-bit
# (2,101,346,304 B): 8,030,261,248 - 1,050,673,152 = 6,979,588,096 linear ones.


def test_gptq_group_minus_one_is_per_channel() -> None:
    # GPTQ's group_size -1: one scale (and zero) per output channel, not per
    # weight. 6,979,588,096 x 0.5 B = 3,489,794,048 + 2,101,346,304 =
    # 5,591,140,352 B = 5.2072 GiB (it was charged 3 B a weight: 21.46 GiB).
    cfg = llama_8b(quantization_config={"quant_method": "gptq", "bits": 4, "group_size": -1})
    basis = weights_basis(cfg, {})
    assert not isinstance(basis, str)
    assert round(basis.low_bytes / GIB, 4) == 5.2072


@pytest.mark.parametrize(
    "qcfg",
    [
        {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16},
        {
            "quant_method": "compressed-tensors",
            "format": "nvfp4-pack-quantized",
            "config_groups": {
                "group_0": {
                    "weights": {
                        "num_bits": 4,
                        "type": "float",
                        "strategy": "tensor_group",
                        "group_size": 16,
                    }
                }
            },
        },
    ],
)
def test_nvfp4_is_half_a_byte_and_an_fp8_scale_per_16(qcfg: dict[str, Any]) -> None:
    # NVFP4: 4-bit weights and one FP8 scale per 16: 0.5 + 1 / 16 = 0.5625 B a
    # linear weight. 6,979,588,096 x 0.5625 = 3,926,018,304 + 2,101,346,304 =
    # 6,027,364,608 B = 5.6134 GiB (modelopt's NVFP4 was charged as FP8: 8.46;
    # compressed-tensors' as groups of 128 with 16-bit scales: 5.33).
    basis = weights_basis(llama_8b(quantization_config=qcfg), {})
    assert not isinstance(basis, str)
    assert round(basis.low_bytes / GIB, 4) == 5.6134


def test_modelopt_of_another_algorithm_is_unknown() -> None:
    cfg = llama_8b(quantization_config={"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"})
    assert isinstance(weights_basis(cfg, {}), str)


@pytest.mark.parametrize(
    "qcfg",
    [
        {"quant_method": "gptq", "bits": None, "group_size": 128},
        {"quant_method": "gptq", "bits": "four", "group_size": 128},
        {"quant_method": "awq", "bits": 4, "group_size": "x"},
        {"quant_method": "gptq", "bits": 4.5, "group_size": 128},
        {
            "quant_method": "compressed-tensors",
            "config_groups": {
                "g": {"weights": {"num_bits": 4, "strategy": "group", "group_size": "x"}}
            },
        },
    ],
)
def test_malformed_quantization_is_unknown_not_a_traceback(qcfg: dict[str, Any]) -> None:
    assert isinstance(weights_basis(llama_8b(quantization_config=qcfg), {}), str)


def test_an_absurd_vocab_is_unknown_not_a_traceback() -> None:
    assert isinstance(weights_basis(llama_8b(vocab_size=10**400), {}), str)


def test_an_audio_tower_is_not_counted_as_nothing() -> None:
    # Qwen2-Audio-7B: a Qwen2 language model in text_config and a Whisper-style
    # audio tower (about 0.6 B) in audio_config: the text count alone is not the
    # weights.
    text = llama_8b(model_type="qwen2")
    cfg = {"model_type": "qwen2_audio", "audio_config": {"d_model": 1280}, "text_config": text}
    basis = weights_basis(cfg, {})
    assert isinstance(basis, str) and "audio" in basis


def test_kv_gpu_on_a_malformed_quantization_exits_0_unknown(tmp_path: Any) -> None:
    import json

    path = tmp_path / "config.json"
    cfg = llama_8b(quantization_config={"quant_method": "gptq", "bits": None})
    path.write_text(json.dumps(cfg))
    r = CliRunner().invoke(main, ["kv", str(path), "--gpu", "H100-80GB"])
    assert r.exit_code == 0, r.output
    assert "users unknown" in r.stdout and "--weights-gib" in r.stdout


def test_a_float32_config_is_labelled_as_served_in_16_bits() -> None:
    # Llama-3.2-1B's config says float32; vLLM serves it in 16 bits and the
    # count charges 2 B: 1,235,814,400 x 2 B = 2,471,628,800 B = 2.30 GiB. The
    # label said "float32" beside that figure, which reads as 4 B a weight.
    r = CliRunner().invoke(main, ["kv", "meta-llama/Llama-3.2-1B", "--gpu", "L4"])
    assert r.exit_code == 0, r.output
    assert "float32 served in 16 bits" in r.stdout
    assert "~2.30 GiB" in r.stdout or "~2.31 GiB" in r.stdout
