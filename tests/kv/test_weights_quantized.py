"""kv --gpu on quantization and wrapper configs the counter met only in review:
each expectation worked by hand beside it."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
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


def _ct_weights(num_bits: int, kind: str, strategy: str) -> dict[str, Any]:
    """A compressed-tensors quantization_config of one group, as RedHatAI's
    (neuralmagic's) Llama-3.1-8B-Instruct checkpoints publish it in config.json:
    "-quantized.w8a8" (int, channel), "-FP8-dynamic" (float, channel), "-FP8"
    (float, tensor, static input scales)."""
    return {
        "config_groups": {
            "group_0": {
                "input_activations": {
                    "actorder": None,
                    "block_structure": None,
                    "dynamic": strategy == "channel",
                    "group_size": None,
                    "num_bits": 8,
                    "observer": "memoryless",
                    "observer_kwargs": {},
                    "strategy": "token" if strategy == "channel" else "tensor",
                    "symmetric": True,
                    "type": kind,
                },
                "output_activations": None,
                "targets": ["Linear"],
                "weights": {
                    "actorder": None,
                    "block_structure": None,
                    "dynamic": False,
                    "group_size": None,
                    "num_bits": num_bits,
                    "observer": "minmax",
                    "observer_kwargs": {},
                    "strategy": strategy,
                    "symmetric": True,
                    "type": kind,
                },
            }
        },
        "format": f"{kind}-quantized",
        "ignore": ["lm_head"],
        "kv_cache_scheme": None,
        "quant_method": "compressed-tensors",
        "quantization_status": "compressed",
    }


@pytest.mark.parametrize(
    "kind,strategy", [("int", "channel"), ("float", "channel"), ("float", "tensor")]
)
def test_compressed_tensors_8_bit_by_channel_or_tensor(kind: str, strategy: str) -> None:
    # W8A8 INT8 / FP8 weights with one scale a channel (or a tensor): 1 B a
    # linear weight, embeddings and lm_head 16-bit. 6,979,588,096 x 1 B +
    # 2,101,346,304 B = 9,080,934,400 B = 8.4573 GiB (it was "weight bits are not
    # one number": the group size 0 of these strategies was refused).
    basis = weights_basis(llama_8b(quantization_config=_ct_weights(8, kind, strategy)), {})
    assert not isinstance(basis, str), basis
    assert round(basis.low_bytes / GIB, 4) == 8.4573
    assert "8-bit weights" in basis.how


def test_compressed_tensors_4_bit_by_channel_has_no_group_scales() -> None:
    # 4-bit weights, one scale a channel: as GPTQ's group_size -1, 0.5 B a
    # linear weight. 6,979,588,096 x 0.5 = 3,489,794,048 + 2,101,346,304 =
    # 5,591,140,352 B = 5.2072 GiB (not groups of 128: 5.3339).
    basis = weights_basis(llama_8b(quantization_config=_ct_weights(4, "int", "channel")), {})
    assert not isinstance(basis, str), basis
    assert round(basis.low_bytes / GIB, 4) == 5.2072
    assert "a scale per channel or tensor" in basis.how


@pytest.mark.parametrize("strategy", ["group", "block", None])
def test_compressed_tensors_group_without_a_size_is_unknown(strategy: str | None) -> None:
    # compressed-tensors refuses "group" without a group_size; "block" and a
    # missing strategy are not read here: unknown, not a guessed group of 128.
    qcfg = _ct_weights(4, "int", "channel")
    qcfg["config_groups"]["group_0"]["weights"]["strategy"] = strategy
    assert isinstance(weights_basis(llama_8b(quantization_config=qcfg), {}), str)


def test_kv_gpu_on_a_w8a8_config_estimates_its_weights(tmp_path: Any) -> None:
    import json

    path = tmp_path / "config.json"
    path.write_text(json.dumps(llama_8b(quantization_config=_ct_weights(8, "int", "channel"))))
    r = CliRunner().invoke(main, ["kv", str(path), "--gpu", "H100-80GB"])
    assert r.exit_code == 0, r.output
    # 8.4573 GiB + 0.2% typical (WEIGHTS_CENTRAL) = 8.47; the range 8.46-8.55.
    assert "weights:       ~8.47 GiB" in r.stdout, r.stdout
    assert "not one number" not in r.stdout


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
