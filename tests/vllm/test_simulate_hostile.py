"""The simulation takes the scheduler's limits the log states, and does not simulate
vLLM's scheduler over another engine's log."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from vllm_logread.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def test_simulate_takes_the_max_num_seqs_the_log_states() -> None:
    """era_0_17_0.log's non-default args (line 7) say 'max_num_seqs': 128. Its pool,
    24,303 blocks of 16 (24,302 usable), holds 24,302 // 40 = 607 users of 512 + 128
    (40 blocks each), so 200 users are held by the scheduler alone: at most 128 run at
    once, not 200 (vLLM's default 256 would admit them all)."""
    r = CliRunner().invoke(
        main, ["simulate", str(SAMPLES / "era_0_17_0.log"), "--users", "200", "--json"]
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["scheduler"]["max_num_seqs"] == 128
    assert d["peak_running"] == 128
    # --max-num-seqs still overrides it.
    r = CliRunner().invoke(
        main,
        ["simulate", str(SAMPLES / "era_0_17_0.log"), "--users", "200", "--json"]
        + ["--max-num-seqs", "64"],
    )
    assert json.loads(r.output)["peak_running"] == 64


def test_read_simulate_on_an_sglang_log_says_it_is_not_vllm_s_scheduler() -> None:
    """sglang_qwen3-8b_h100.log runs 650 at once (max_running_requests=4096): vLLM's
    scheduler at its default 256 would say 'peak 256', a number of no server here."""
    r = CliRunner().invoke(main, [str(SAMPLES / "sglang_qwen3-8b_h100.log"), "--simulate"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "peak 256" not in text
    assert "not simulated: sglang's scheduler is not vllm's" in text.lower()
