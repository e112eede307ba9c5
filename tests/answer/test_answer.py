"""One boot, one answer (issue 25): P + O - 1 tokens at the end of an answer, the
pool's users capped by max_num_seqs with the limit named, and every command
(read, the gate, simulate) giving the same figure. Expected values are worked by
hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.report.capacity import Workload, tokens_held_at_end, users_that_fit
from vllm_logread.report.resolved import Sourced, answer

S = Path(__file__).resolve().parents[2] / "sample_logs"
REAL_SEED = S / "real_vllm_0.32_qwen3-8b_seed.log"
L4_GPT_OSS = S / "hybrid_gpt_oss_20b_l4.log"
DEEPSEEK = S / "hybrid_deepseek_v3_tp8.log"


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def run_json(*args: str) -> dict[str, Any]:
    r = run(*args, "--json")
    assert r.exit_code == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def test_the_last_sampled_token_holds_no_kv() -> None:
    # The real vLLM 0.32 seed boot: 753 blocks of 32, one null block: 752 usable.
    # 513 + 128: 640 tokens held = 20 blocks -> 752 // 20 = 37 (vLLM ran 37, 740
    # blocks in use); P + O = 641 would be 21 blocks -> 35.
    assert tokens_held_at_end(513, 128) == 640
    c = users_that_fit(
        num_blocks=753, block_size=32, workload=Workload(prompt_tokens=513, output_tokens=128)
    )
    assert (c.blocks_per_user, c.users, c.tokens_held) == (20, 37, 640)
    # Mid-answer: 513 + 64 - 1 = 576 tokens = 18 blocks -> 752 // 18 = 41.
    assert (c.blocks_per_user_mid, c.users_mid_answer, c.tokens_held_mid) == (18, 41, 576)
    # 514 + 128: 641 tokens = 21 blocks -> 752 // 21 = 35.
    c = users_that_fit(
        num_blocks=753, block_size=32, workload=Workload(prompt_tokens=514, output_tokens=128)
    )
    assert (c.blocks_per_user, c.users) == (21, 35)


def test_sglang_keeps_counting_the_last_token() -> None:
    # SGLang's pages of 1 token: 641 slots for 513 + 128 (its overlap scheduler
    # may give the last token a slot): 10,000 // 641 = 15.
    c = users_that_fit(
        num_blocks=10_000,
        block_size=1,
        workload=Workload(prompt_tokens=513, output_tokens=128),
        has_null_block=False,
        counts_last_token=True,
    )
    assert (c.blocks_per_user, c.users, c.tokens_held) == (641, 15, 641)


@pytest.mark.parametrize(("prompt", "output"), [(512, 128), (513, 128), (512, 129), (511, 128)])
def test_read_and_simulate_agree_at_block_boundaries(prompt: int, output: int) -> None:
    # 752 usable blocks of 32: 639, 640, 640 and 638 tokens held = 20 blocks each
    # -> 37 users; 48 closed-loop users settle at 37 running in the simulation
    # (and in the real vLLM 0.32 run at 513 + 128: tests/real_vllm/NOTES.md).
    p, o = str(prompt), str(output)
    read = run_json(str(REAL_SEED), "--prompt", p, "--output", o)
    assert (read["users"], read["workload"]["blocks_per_user"]) == (37, 20)
    sim = run_json("simulate", str(REAL_SEED), "--users", "48", "--prompt", p, "--output", o)
    assert sim["settled_running"] == read["users"] == 37


def test_max_num_seqs_caps_the_headline_json_and_gate() -> None:
    # gpt-oss-20b on an L4: 13,707 usable // 49 blocks = 279 users in the pool
    # (13,707 // 45 = 304 mid-answer), but its 1.65x proves vLLM's small-card
    # defaults, max_num_seqs 256: 256 run at once.
    out = run_json(str(L4_GPT_OSS))
    assert (out["users"], out["users_mid_answer"]) == (256, 256)
    a = out["answer"]
    assert (a["pool_users"], a["pool_users_mid_answer"]) == (279, 304)
    assert (a["limit"], a["max_num_seqs"], a["users_is_lower_bound"]) == (
        "max_num_seqs",
        256,
        False,
    )
    text = " ".join(run(str(L4_GPT_OSS)).stdout.split())
    assert text.startswith(
        "== vllm-logread: 256 users at 512 prompt + 128 output tokens run at once: "
        "max_num_seqs 256 caps them (the pool holds 279, 304 mid-answer)"
    )
    gate = run(str(L4_GPT_OSS), "--min-users", "270")
    assert gate.exit_code == 1
    assert "only 256 users" in gate.stderr
    assert run(str(L4_GPT_OSS), "--min-users", "256").exit_code == 0


def test_csv_and_sweep_rows_give_the_capped_answer() -> None:
    rows = run(str(L4_GPT_OSS), "--format", "csv").stdout.splitlines()
    head, row = rows[0].split(","), rows[1].split(",")
    assert row[head.index("users")] == "256"
    sweep = run(str(L4_GPT_OSS), "--prompt", "512,8000", "--output", "128", "--format", "csv")
    # 8,000 + 128: 8,127 tokens = 508 full + 9 sliding = 517 blocks -> 13,707 // 517 = 26.
    users = [line.split(",")[4] for line in sweep.stdout.splitlines()[1:]]
    assert users == ["256", "26"]


def test_an_unsettled_max_num_seqs_gives_a_lower_bound() -> None:
    # era_0_18_0_dp2: 607 + 608 users in the two engines' pools; the log does not
    # name the card, so max_num_seqs is 256 or 1,024: at least 256 + 256 = 512 run.
    out = run_json(str(S / "era_0_18_0_dp2.log"))
    a = out["answer"]
    assert (out["users"], a["pool_users"], a["users_high"]) == (512, 1215, 1215)
    assert a["users_is_lower_bound"] is True and out["is_exact"] is False
    # --gpu H100-80GB settles it at 1,024: the pools bind, 1,215 exactly.
    out = run_json(str(S / "era_0_18_0_dp2.log"), "--gpu", "H100-80GB")
    assert (out["users"], out["answer"]["limit"], out["is_exact"]) == (1215, "pool", True)


def test_read_and_simulate_use_the_same_scheduler_limits() -> None:
    # DeepSeek-V3 at TP 8: weights + KV cache take 121.11 GiB per GPU, more than
    # any A100 has: vLLM's big-card defaults, max_num_seqs 1,024 and 8,192 batched
    # tokens, for read and simulate alike.
    read = run_json(str(DEEPSEEK))
    assert read["answer"]["max_num_seqs"] == 1024
    sim = run_json("simulate", str(DEEPSEEK), "--users", "10")
    assert (sim["scheduler"]["max_num_seqs"], sim["scheduler"]["max_num_batched_tokens"]) == (
        1024,
        8192,
    )
    # The seed CPU boot (vLLM 0.32): vLLM's CPU defaults, 128 and 2,048 (one rank).
    seed = run_json("simulate", str(REAL_SEED), "--users", "10")
    assert (seed["scheduler"]["max_num_seqs"], seed["scheduler"]["max_num_batched_tokens"]) == (
        128,
        2048,
    )
    assert run_json(str(REAL_SEED))["answer"]["max_num_seqs"] == 128


def test_answer_caps_each_engine_on_its_own() -> None:
    # Two engines of 300 and 200 users, max_num_seqs 256: 256 + 200 = 456;
    # mid-answer 320 and 220: 256 + 220 = 476.
    m = Sourced(value=256, kind="stated", source="line 3")
    a = answer([(300, 320), (200, 220)], m)
    assert (a.users, a.users_mid_answer, a.pool_users, a.limit) == (456, 476, 500, "max_num_seqs")
    a = answer([(100, 120), (200, 220)], m)
    assert (a.users, a.limit) == (300, "pool")
    assert answer([(None, None)], m).users is None


def test_diff_says_when_max_num_seqs_caps_the_users() -> None:
    # OLD: the L4's 279 in the pool, 256 by its proven max_num_seqs; NEW: 3,012 in the
    # pool (147,594 blocks // 49), 256 or 1,024 by the card: at least 256.
    r = run("diff", str(L4_GPT_OSS), str(S / "hybrid_gpt_oss_20b_v0_11.log"))
    line = next(x for x in r.stdout.splitlines() if x.startswith("  users "))
    assert "256 (capped; pool 279)" in line and "at least 256 (pool 3,012)" in line


def test_a_sweep_is_computed_once_in_the_report_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    # --prompt 512,1024: the report itself is 512+128; the sweep builds 1024+128 once,
    # and the CSV, the gate and the exit code read that row (no second build).
    import vllm_logread.report as report_pkg

    built: list[tuple[int, int]] = []
    real = report_pkg.build_report

    def counting(boot: Any, opts: Any, **kw: Any) -> Any:
        built.append((opts.workload.prompt_tokens, opts.workload.output_tokens))
        return real(boot, opts, **kw)

    monkeypatch.setattr(report_pkg, "build_report", counting)
    # 1,024 + 128: 1,151 tokens = 72 blocks of 16 -> 1,505 // 72 = 20 users on the L4 seed.
    seed = S / "seed_qwen3-8b_l4.log"
    r = run(str(seed), "--prompt", "512,1024", "--format", "csv", "--min-users", "21")
    assert built == [(1024, 128)]
    assert r.exit_code == 1 and "only 20 users" in r.stderr
    users = [line.split(",")[4] for line in r.stdout.splitlines()[1:]]
    assert users == ["37", "20"]
