"""kv/weights.py's parameter counts for MoE, MLA and hybrid families against the
totals their model cards state, and ``kv --gpu`` giving weights (or saying they
exceed the GPU) for every model of the shipped table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_logread.kv.config import (
    checkpoint_total_bytes,
    spec_for_argument,
    table_entry,
    table_models,
)
from vllm_logread.kv.weights import count_parameters
from vllm_logread.report.capacity import Workload
from vllm_logread.report.estimate import estimate_boot

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(autouse=True)
def _no_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped table's configs, whatever this machine's Hugging Face cache holds."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-cache"))


def _count(model: str):
    found = table_entry(model)
    assert found is not None
    count = count_parameters(found[1])
    assert count is not None, model
    return count


# (model, the count vLLM loads, the MTP layers apart, the card's total in B, its rounding,
#  whether the card counts the MTP layers, the card's address)
CARDS = [
    # GLM-4.7 (glm4_moe): 92 layers x 136,329,216 attention (5,120 x 12,288 x 2 + 2 x 5,120
    # x 1,024 + 14,336 biases) + 92 x 10,240 norms + 3 dense MLPs x 188,743,680 (3 x 5,120 x
    # 12,288) + 89 MoE MLPs x 3,799,285,920 (161 experts x 23,592,960 + 819,200 router +
    # 160 bias) + 1,551,892,480 embeddings and lm_head + 5,120 = 352,797,805,472; its MTP
    # layer 5,539,962,016: 358,337,767,488 = the card's 358 B.
    (
        "zai-org/GLM-4.7",
        352_797_805_472,
        5_539_962_016,
        358,
        0.5,
        True,
        "https://docs.api.nvidia.com/nim/reference/z-ai-glm4-7 (Total Parameters: 358B)",
    ),
    # MiniMax-M2.1 (minimax_m2): 62 x (44,047,360 attention with 7,168 full-width q/k norms
    # + 6,144 norms + 3,624,665,344 MoE: 256 x 14,155,776 + 786,432 router + 256 bias)
    # + 1,229,193,216 + 3,072 = 228,689,764,864: the card's 229 B (230 B in its prose).
    (
        "MiniMaxAI/MiniMax-M2.1",
        228_689_764_864,
        0,
        229,
        0.5,
        False,
        "https://apxml.com/models/minimax-m2 (229 billion total, about 10 billion active)",
    ),
    # Qwen3.5-35B-A3B (qwen3_5_moe): 10 gated attention x 27,263,488 + 30 gated delta net x
    # 33,718,464 + 40 x 4,096 norms + 40 MoE x 808,978,432 (256 x 3,145,728 + 524,288
    # router + 3,145,728 shared + 2,048 gate) + 1,017,118,720 + 2,048 = 34,660,610,688;
    # with the vision encoder (0.446 B, the table) 35.11 B: the card's 35 B.
    (
        "Qwen/Qwen3.5-35B-A3B",
        34_660_610_688,
        851_095_744,
        35,
        0.5,
        False,
        "https://docs.nvidia.com/nemo/megatron-bridge/latest/models/vlm/qwen35-vl.html "
        "(35B total parameters, 3B activated)",
    ),
    # Qwen3.5-27B (qwen3_5, dense hybrid): 16 x 104,858,112 + 48 x 115,876,064 + 64 x
    # 10,240 + 64 x 267,386,880 (3 x 5,120 x 17,408) + 2,542,796,800 + 5,120 =
    # 26,895,998,464; with the vision encoder (0.46 B) 27.36 B: the card's 27 B.
    (
        "Qwen/Qwen3.5-27B",
        26_895_998_464,
        435_717_344,
        27,
        0.5,
        False,
        "https://docs.nvidia.com/nemo/megatron-bridge/latest/models/vlm/qwen35-vl.html "
        "(Qwen3.5 27B: 27B parameter vision-language model)",
    ),
    # DeepSeek-V3.2-Exp (deepseek_v32): DeepSeek-V3's 671,026,419,200 + 61 indexers x
    # 13,959,424 = 671,877,944,064; with its 13,477,385,728 MTP layer 685.36 B: the
    # Hub's 685 B (DeepSeek-V3: 671 B + 14 B MTP).
    (
        "deepseek-ai/DeepSeek-V3.2-Exp",
        671_877_944_064,
        13_477_385_728,
        685,
        0.5,
        True,
        "https://huggingface.co/deepseek-ai/DeepSeek-V3.2-Exp (685B params)",
    ),
]


@pytest.mark.parametrize(
    ("model", "params", "mtp", "card_b", "rounding_b", "card_has_mtp", "url"),
    CARDS,
    ids=[c[0] for c in CARDS],
)
def test_count_meets_the_model_card(
    model: str,
    params: int,
    mtp: int,
    card_b: int,
    rounding_b: float,
    card_has_mtp: bool,
    url: str,
) -> None:
    count = _count(model)
    assert (count.num_params, count.num_mtp_params) == (params, mtp)
    extra = 0
    found = table_entry(model)
    assert found is not None
    from vllm_logread.kv.config import table_weights

    weights = table_weights(model)
    if weights is not None and isinstance(weights[1].get("extra_parameters"), int):
        extra = int(weights[1]["extra_parameters"])  # type: ignore[arg-type]
    total_b = (params + extra + (mtp if card_has_mtp else 0)) / 1e9
    assert abs(total_b - card_b) <= rounding_b, (model, total_b, url)


def test_gated_delta_net_layer_by_hand() -> None:
    # Qwen3.5-27B's linear layers: in_proj_qkvz 5,120 x (2 x 2,048 + 2 x 6,144) =
    # 83,886,080, in_proj_ba 5,120 x 96 = 491,520, conv1d 10,240 x 4 = 40,960, dt_bias
    # and A_log 96, norm 128, out_proj 6,144 x 5,120 = 31,457,280: 115,876,064.
    assert "48 x 115,876,064" in _count("Qwen/Qwen3.5-27B").how


W = Workload(prompt_tokens=512, output_tokens=128)


@pytest.mark.parametrize("model", table_models())
def test_every_table_model_has_weights_on_an_h100(model: str) -> None:
    est = estimate_boot(model, spec_for_argument(model), gpu="H100", workload=W)
    assert est.weights is not None, (model, est.unknown)
    exceeds = est.weights.low_gib > est.gpu.total_gib
    assert exceeds == ("the weights alone" in (est.max_len_message or "")), model


def test_glm_47_on_one_h100_exceeds_and_names_the_tp_that_fits() -> None:
    # 352,797,805,472 x 2 B = 705,595,610,944 B = 657.14 GiB > 79.19 GiB; / 8 = 82.1 GiB
    # still above the card, / 16 = 41.1 GiB fits.
    model = "zai-org/GLM-4.7"
    est = estimate_boot(model, spec_for_argument(model), gpu="H100", workload=W)
    assert "the weights alone (657.14-663.71 GiB per GPU) exceed this GPU (79.19 GiB)" in (
        est.max_len_message or ""
    )
    assert est.suggestion.startswith("--tp 16: ")


def test_count_held_against_a_cached_safetensors_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Hugging Face cache holding Qwen3-8B's config.json and an index whose total is
    # 8,190,735,360 parameters x 2 B (bfloat16) = 16,381,470,720 B = 15.26 GiB.
    snap = tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_bytes((DATA / "qwen3-8b_config.json").read_bytes())
    index = {"metadata": {"total_size": 16_381_470_720}, "weight_map": {}}
    (snap / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert checkpoint_total_bytes("Qwen/Qwen3-8B") == (
        16_381_470_720,
        str(snap / "model.safetensors.index.json"),
    )
    assert _count("Qwen/Qwen3-8B").num_params * 2 == 16_381_470_720
    est = estimate_boot("Qwen/Qwen3-8B", spec_for_argument("Qwen/Qwen3-8B"), gpu="L4", workload=W)
    assert est.weights is not None
    assert "the cached checkpoint's safetensors index states 15.26 GiB" in est.weights.source


def test_no_index_no_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    assert checkpoint_total_bytes("Qwen/Qwen3-8B") is None
