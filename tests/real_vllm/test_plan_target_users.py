"""``--target-users`` proved on a real vLLM 0.32.0: the printed bytes hold N users, no more.

The tool is asked, on a real boot log of the seed model (``sample_logs/real_vllm_0.32_
qwen3-8b_seed.log``: Qwen3-8B's KV shape, blocks of 32, 147,456 B a token), for the
``--kv-cache-memory-bytes`` that holds 12 users of 100 prompt + 200 output tokens. By hand:
a user holds 300 tokens = cdiv(300, 32) = 10 blocks at the end of its answer (mid-answer
200 tokens = 7 blocks); 12 users + vLLM's null block = 12 x 10 + 1 = 121 blocks; a block is
32 tokens x 147,456 B = 4,718,592 B, so 121 x 4,718,592 = 570,949,632 B.

Boot 1 is given exactly that: its pool line must say 121 blocks (121 x 32 = 3,872 tokens at
--max-model-len 512: int(121 / cdiv(512, 32) x 512) = 3,872), the tool on its log must say
12 users, and 12 closed-loop users (ignore_eos, so every answer is 200 tokens) must run all
at once with no preemption. Boot 2 gets one user's worth of blocks less (570,949,632 -
10 x 4,718,592 = 523,763,712 B = 111 blocks): the tool must say (111 - 1) // 10 = 11, and the
same 12 users must either never run 12 at once or be preempted (12 users admitted at 4
blocks of prompt each need 12 x 10 = 120 blocks by the end of their answers; 110 are free).

Two boots (~50 s each) and two loads of one request per user (~30 s each): about 3 minutes.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from . import harness
from .conftest import tool_env

pytestmark = pytest.mark.real_vllm

REPO = Path(__file__).resolve().parents[2]
SEED_LOG = REPO / "sample_logs" / "real_vllm_0.32_qwen3-8b_seed.log"
USERS, PROMPT, OUTPUT = 12, 100, 200
BLOCK_SIZE = 32
BLOCK_BYTES = BLOCK_SIZE * 147_456  # 4,718,592 B: 32 tokens x Qwen3-8B's KV bytes per token
BLOCKS_PER_USER = 10  # cdiv(100 + 200, 32)
TARGET_BLOCKS = USERS * BLOCKS_PER_USER + 1  # 121, the null block included
TARGET_BYTES = TARGET_BLOCKS * BLOCK_BYTES  # 570,949,632
ONE_FEWER_BYTES = TARGET_BYTES - BLOCKS_PER_USER * BLOCK_BYTES  # 523,763,712 = 111 blocks
MAX_MODEL_LEN = 512  # a max-length request needs 16 blocks: both pools boot


def tool_json(log: Path, *extra: str) -> dict[str, Any]:
    """``vllm-logread LOG --prompt 100 --output 200 ... --json`` -> the parsed JSON object."""
    cmd = [
        *harness.tool_command(),
        str(log),
        "--prompt",
        str(PROMPT),
        "--output",
        str(OUTPUT),
        *extra,
        "--json",
    ]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=120,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr}"
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def load_and_watch(server: harness.VllmServer) -> dict[str, Any]:
    """12 closed-loop users, one request each; what the stats lines and /metrics showed."""
    log_start = len(server.lines)
    sampler = harness.MetricsSampler(server.port)
    result = harness.run_load(
        server.port,
        harness.SHAPES["qwen3-8b"].repo_id,
        users=USERS,
        prompt_tokens=PROMPT,
        output_tokens=OUTPUT,
        rounds=1,
        seconds=120,
        request_timeout_s=harness.scaled(180),
        on_tick=sampler,
        tick_s=0.5,
    )
    time.sleep(11)  # one more stats interval (10 s), so the last state is logged
    sampler()
    text = "".join(line for _, line in server.lines[log_start:])
    stats = harness.stats_series(text)
    preempt_log = [int(n) for n in re.findall(r"Preemptions: (\d+)", text)]
    return {
        "load": result.summary(),
        "ok": len(result.ok),
        "all_full": all(r.completion_tokens == OUTPUT for r in result.ok),
        "running_log_series": [int(s["running"]) for s in stats],
        "peak_running_log": max((int(s["running"]) for s in stats), default=0),
        "peak_running_metrics": int(sampler.peak("running")),
        "peak_kv_usage_metrics": sampler.peak("kv_usage"),
        "preemptions_metrics": int(sampler.peak("preemptions")),
        "preemptions_log": max(preempt_log, default=0),
    }


def boot(
    nbytes: int, workdir: Path, vllm_venv: Path, request: pytest.FixtureRequest
) -> harness.VllmServer:
    harness.write_tiny_model("qwen3-8b")
    args = (
        "--max-model-len",
        str(MAX_MODEL_LEN),
        "--block-size",
        str(BLOCK_SIZE),
        "--kv-cache-memory-bytes",
        str(nbytes),
        "--max-num-seqs",
        str(USERS),
    )
    server = harness.VllmServer(
        harness.SHAPES["qwen3-8b"].repo_id, args, workdir=workdir, venv=vllm_venv
    )
    request.addfinalizer(server.stop)
    server.start()
    print(f"\n[real_vllm] target boot {nbytes:,} B ready in {server.wait_ready():.1f}s")
    return server


def test_target_users_bytes_hold_exactly_n(
    vllm_venv: Path, real_workdir: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    plan = tool_json(SEED_LOG, "--target-users", str(USERS))["target"]["kv_cache_memory"]
    print(f"[real_vllm] --target-users {USERS}: {plan}")
    assert plan["num_blocks"] == TARGET_BLOCKS == 121
    assert plan["kv_cache_memory_bytes"] == TARGET_BYTES == 570_949_632
    assert plan["max_num_seqs"] == USERS

    # Boot 1: the printed bytes.
    server = boot(plan["kv_cache_memory_bytes"], real_workdir / "target", vllm_venv, request)
    log1 = tmp_path / "target.log"
    log1.write_text(server.text(), encoding="utf-8")
    pool = harness.parse_pool(server.text())
    assert pool is not None
    assert pool["pool_tokens"] == TARGET_BLOCKS * BLOCK_SIZE == 3_872
    seen1 = load_and_watch(server)
    server.stop()
    report1 = tool_json(log1)
    print(f"[real_vllm] boot 1: pool {pool}; tool {report1['users']} users; {seen1}")
    assert report1["num_blocks"] == TARGET_BLOCKS
    assert report1["users"] == (121 - 1) // 10 == USERS
    assert seen1["ok"] == USERS and seen1["all_full"], seen1
    assert max(seen1["peak_running_log"], seen1["peak_running_metrics"]) == USERS, seen1
    assert USERS in seen1["running_log_series"], seen1  # a stats line "Running: 12 reqs"
    assert seen1["preemptions_metrics"] == 0 and seen1["preemptions_log"] == 0, seen1

    # Boot 2: one user's worth of blocks less.
    server = boot(ONE_FEWER_BYTES, real_workdir / "target-1", vllm_venv, request)
    log2 = tmp_path / "target-1.log"
    log2.write_text(server.text(), encoding="utf-8")
    seen2 = load_and_watch(server)
    server.stop()
    report2 = tool_json(log2)
    print(f"[real_vllm] boot 2: tool {report2['users']} users; {seen2}")
    assert report2["num_blocks"] == TARGET_BLOCKS - BLOCKS_PER_USER == 111
    assert report2["users"] == (111 - 1) // 10 == USERS - 1
    assert seen2["ok"] == USERS and seen2["all_full"], seen2
    preempted = seen2["preemptions_metrics"] > 0 or seen2["preemptions_log"] > 0
    peak2 = max(seen2["peak_running_log"], seen2["peak_running_metrics"])
    assert preempted or peak2 <= USERS - 1, seen2
