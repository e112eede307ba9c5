"""Review of main (one answer, options across commands, the registry): inputs a
user can type that ended in a traceback, each now a usage error (exit 2) with a
readable line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
SEED = str(SAMPLES / "seed_qwen3-8b_l4.log")


@pytest.mark.parametrize("value", ["1e308", "inf", "nan", "1e6"])
@pytest.mark.parametrize(
    "args",
    [
        ["kv", "Qwen/Qwen3-8B"],
        ["read", SEED],
    ],
)
def test_gpu_memory_gib_not_a_card_is_a_usage_error(args: list[str], value: str) -> None:
    # 1e308 GiB x 2**30 B overflows a float to inf, which int() refuses;
    # nan passes click's FloatRange (every comparison with nan is False).
    # --what-if gpu_memory_gib=N already takes only 0 < N < 100,000 GiB: the
    # option takes the same cards.
    r = CliRunner().invoke(main, [*args, "--gpu-memory-gib", value])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "--gpu-memory-gib" in r.output


@pytest.mark.parametrize("value", ["1e300", "inf", "nan", "1e6"])
def test_kv_weights_gib_beyond_any_card_is_a_usage_error(value: str) -> None:
    # --weights-gib 1e300: 1e300 x 2**30 B is inf bytes; available = requested
    # - weights = -inf, and int(-inf) raised OverflowError.
    r = CliRunner().invoke(main, ["kv", "Qwen/Qwen3-8B", "--gpu", "L4", "--weights-gib", value])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "--weights-gib" in r.output


def test_kv_weights_gib_of_a_big_model_still_answers() -> None:
    # 70 GiB of weights on an L4 (22.05 GiB): a boot that would fail, said so
    # (exit 0: kv plans, it reads no log).
    r = CliRunner().invoke(main, ["kv", "Qwen/Qwen3-8B", "--gpu", "L4", "--weights-gib", "70"])
    assert r.exit_code == 0, r.output
    assert "would fail" in r.output


# --------------------------------------------------------------------------
# The FP8 KV what-if is exact only when both ends of what the log allows agree
# --------------------------------------------------------------------------

REAL_SEED = str(SAMPLES / "real_vllm_0.32_qwen3-8b_seed.log")
GEMMA = SAMPLES / "hybrid_gemma3_27b.log"


def _what_if(args: list[str], change: str) -> dict[str, object]:
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    import json

    found = [w for w in json.loads(r.stdout)["what_if"] if w["change"] == change]
    assert len(found) == 1
    return dict(found[0])


def test_fp8_what_if_of_a_pool_known_to_a_block_is_not_exact() -> None:
    # The real seed boot: 753 blocks of 32 (24,096 tokens / 32), 4,718,592 B
    # a block (147,456 B x 32). vLLM took floor(A / 4,718,592) = 753, so the
    # KV memory A is in [753, 754) blocks' bytes. At FP8 a block is 2,359,296
    # B and floor(A / 2,359,296) is 1,506 or 1,507. A user of 8,000 + 33
    # holds 8,032 tokens = 251 blocks of 32: (1,506 - 1 null) // 251 = 5, but
    # (1,507 - 1) // 251 = 6 (6 x 251 = 1,506). Both are possible: 5 is not
    # exact.
    w = _what_if([REAL_SEED, "--prompt", "8000", "--output", "33"], "kv_cache_dtype=fp8")
    assert w["users"] == 5
    assert w["exact"] is False
    assert "5 to 6 users" in str(w["note"])


def test_fp8_what_if_stays_exact_when_both_ends_agree() -> None:
    # The same boot at 512 + 128: 639 tokens = 20 blocks of 32; (1,506 - 1)
    # // 20 = 75 and (1,507 - 1) // 20 = 75: exact.
    w = _what_if([REAL_SEED], "kv_cache_dtype=fp8")
    assert (w["users"], w["exact"]) == (75, True)


def test_fp8_what_if_of_a_pool_decoded_as_a_range_is_not_exact(tmp_path: Path) -> None:
    # Gemma 3 27B on vLLM 0.11 without the API server's num_gpu_blocks line:
    # the pool line's 29,760 tokens decode to 13,020 to 13,026 blocks (7 KV
    # cache groups). A user of 512 + 128 holds 639 tokens = 40 blocks in each
    # of the 7 groups = 280 blocks. The headline: (13,020 - 1) // 280 = 46
    # and (13,026 - 1) // 280 = 46, exact. FP8 doubles the blocks: (26,040 -
    # 1) // 280 = 92 at the low end, (2 x 13,026 + 1 - 1) // 280 = 93 at the
    # high end (93 x 280 = 26,040). The whole log's 13,025 blocks give 93:
    # "92, exact" was a wrong exact number.
    log = tmp_path / "gemma_no_blocks_line.log"
    log.write_text(
        "".join(ln for ln in GEMMA.read_text().splitlines(True) if "num_gpu_blocks" not in ln)
    )
    w = _what_if([str(log)], "kv_cache_dtype=fp8")
    assert w["exact"] is False
    assert "92 to 93 users" in str(w["note"])
    full = _what_if([str(GEMMA)], "kv_cache_dtype=fp8")
    assert (full["users"], full["exact"]) == (93, True)


def test_what_if_notes_count_the_tokens_a_user_holds() -> None:
    # 513 + 128 on the real seed (blocks of 32): a user holds 513 + 128 - 1 =
    # 640 tokens = 20 blocks at the end of its answer, as the report's "per
    # user" line says; the what-ifs counted 20 blocks but wrote "641 tokens".
    args = [REAL_SEED, "--prompt", "513", "--output", "128"]
    w = _what_if(args, "kv_cache_dtype=fp8")
    # (1,506 - 1) // 20 = 75 and (1,507 - 1) // 20 = 75.
    assert w["users"] == 75 and "75 users at 640 tokens" in str(w["note"])
    m = _what_if([*args, "--what-if", "max_model_len=4096"], "max_model_len=4096")
    assert "users at 640 tokens stay" in str(m["note"]) and "641" not in str(m["note"])


# --------------------------------------------------------------------------
# --compare-metrics: a figure the log does not state is not the log's
# --------------------------------------------------------------------------

L4_SEED = SEED
METRICS_32 = str(SAMPLES / "real_vllm_0.32_qwen3-8b.metrics.txt")


def test_compare_metrics_does_not_give_an_assumed_block_size_as_the_logs() -> None:
    # The L4 seed states 24,096 tokens but no block size: the report assumes
    # vLLM's GPU default 16 (24,096 / 16 = 1,506 blocks). The real CPU scrape
    # states block_size 32 and 753 blocks, 24,096 tokens: the same pool at 32
    # (753 x 32 = 24,096). Main said "log 16", "log 1506 (line 16)" and blamed
    # "different boots (a restart between them?)" and "a hybrid model": the
    # tool's assumption is what the scrape contradicts, not the log.
    import json

    r = CliRunner().invoke(main, [L4_SEED, "--compare-metrics", METRICS_32, "--json"])
    assert r.exit_code == 0, r.output
    rows = {a["name"]: a for a in json.loads(r.stdout)["metrics_crosscheck"]}
    bs, blocks = rows["block_size"], rows["num_gpu_blocks"]
    assert (bs["log"], bs["metrics"], bs["status"]) == (None, "32", "metrics only")
    assert "assumed 16" in bs["why"] and "--block-size 32" in bs["why"]
    assert (blocks["log"], blocks["metrics"], blocks["status"]) == (None, "753", "metrics only")
    assert "24,096 tokens" in blocks["why"] and "different boots" not in blocks["why"]
    assert rows["kv_cache_size_tokens"]["status"] == "same"
    t = CliRunner().invoke(main, [L4_SEED, "--compare-metrics", METRICS_32])
    assert "they agree" in t.stdout and "hybrid" not in t.stdout


@pytest.mark.parametrize(
    ("log", "users_range"),
    [
        # vLLM on a Tenstorrent card: the pool is 33,104 tokens and the block
        # size is not settled (the text says "51 to 256 users").
        ("platform_tt.log", [51, 256]),
        # A hybrid served from a path: its layout is unknown (no range).
        ("never_wrong_unnamed_hybrid.log", None),
    ],
)
def test_unknown_users_are_never_called_exact(log: str, users_range: list[int] | None) -> None:
    # --json said "users": null beside "is_exact": true: a reader that trusts
    # is_exact is told an unknown figure is exact.
    import json

    r = CliRunner().invoke(main, [str(SAMPLES / log), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["users"] is None and out.get("users_range") == users_range
    assert out["is_exact"] is False


def test_markdown_and_github_give_the_text_reports_range() -> None:
    # platform_tt: the text report's headline is "51 to 256 users fit at 512
    # prompt + 128 output tokens"; markdown and the GitHub annotation said
    # "users unknown": the same input, two answers.
    log = str(SAMPLES / "platform_tt.log")
    for fmt in ("markdown", "github"):
        r = CliRunner().invoke(main, [log, "--format", fmt])
        assert r.exit_code == 0, r.output
        assert "51 to 256 users" in r.stdout, (fmt, r.stdout)
        assert "users unknown" not in r.stdout


def test_a_what_if_capped_by_an_unsettled_max_num_seqs_is_a_lower_bound() -> None:
    # era_0_11_0_tp4: Llama-3.3-70B at TP 4 on vLLM 0.11, 26,977 blocks of 16;
    # the log names no card: weights + KV take 32.89 + 32.93 = 65.82 GiB per
    # GPU, so max_num_seqs is 256 (below 70 GiB or an A100) or 1,024 (an 80 GB
    # H100): the headline says "256 users at least". FP8 KV: 2 x 26,977 =
    # 53,954 blocks, (53,954 - 1) // 40 = 1,348 users in the pool, so 256 or
    # 1,024 run at once by the card. "256, exact" was a wrong exact number.
    log = str(SAMPLES / "era_0_11_0_tp4.log")
    w = _what_if([log], "kv_cache_dtype=fp8")
    assert w["users"] == 256 and w["exact"] is False
    assert "256 or 1,024" in str(w["note"])
    # With the card named the cap is settled: an H100 takes 1,024, exact.
    h = _what_if([log, "--gpu", "H100"], "kv_cache_dtype=fp8")
    assert (h["users"], h["exact"]) == (1024, True)


def test_margin_help_shows_one_percent_sign() -> None:
    # click prints option help as written (no % formatting): "5%%" showed as
    # "5%%", an input --margin itself refuses.
    r = CliRunner().invoke(main, ["read", "--help"])
    text = " ".join(r.stdout.split())
    assert "--margin 5% fails below 28.5" in text and "5%%" not in text
