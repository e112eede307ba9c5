"""``--shared-prefix`` on a real vLLM 0.32.0: a prefix's full blocks are held once.

Seed shape (Qwen3-8B's KV, blocks of 32, 4,718,592 B a block). Every request is a 512-token
system prompt (the same token ids) + 88 tokens of its own, answered with 100 tokens
(ignore_eos). By hand: 700 tokens = cdiv(700, 32) = 22 blocks a user; the prefix's
min(512 // 32, (600 - 1) // 32) = 16 full blocks are shared, so each user holds 22 - 16 = 6
of its own. 12 users need 16 + 12 x 6 + 1 null = 89 blocks = 419,954,688 B (what
``--target-users 12 --shared-prefix 512`` prints on the recorded seed boot); without the
prefix held once the same pool holds (89 - 1) // 22 = 4.

One boot (~50 s), one warm-up request (so the prefix is in the cache before the 12 arrive
together: requests scheduled in the same step as the first cannot hit blocks not yet
computed), then 12 closed-loop users of one request each.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from . import harness
from .conftest import tool_env

pytestmark = pytest.mark.real_vllm

REPO = Path(__file__).resolve().parents[2]
SEED_LOG = REPO / "sample_logs" / "real_vllm_0.32_qwen3-8b_seed.log"
USERS, PREFIX, OWN, OUTPUT = 12, 512, 88, 100
PROMPT = PREFIX + OWN  # 600
BLOCKS = 16 + USERS * 6 + 1  # 89: the shared 16, 12 x 6 own, the null block
NBYTES = BLOCKS * 32 * 147_456  # 419,954,688


def tool_json(log: Path, *extra: str) -> dict[str, Any]:
    cmd = [*harness.tool_command(), str(log), "--prompt", str(PROMPT), "--output", str(OUTPUT)]
    proc = subprocess.run(
        [*cmd, *extra, "--json"],
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


def prompt_of(user: int) -> list[int]:
    """The shared 512 token ids, then 88 of this user's own (unique from their first)."""
    prefix = [10 + (i * 37) % (harness.TINY_VOCAB - 10) for i in range(PREFIX)]
    return prefix + harness.make_prompt(user, 1, OWN)


def complete(port: int, user: int, out: list[tuple[int, int]]) -> None:
    body = {
        "model": harness.SHAPES["qwen3-8b"].repo_id,
        "prompt": prompt_of(user),
        "max_tokens": OUTPUT,
        "min_tokens": OUTPUT,
        "ignore_eos": True,
        "temperature": 0.0,
        "detokenize": False,
    }
    status, resp = harness.http_post_json(port, "/v1/completions", body, 180)
    out.append((status, int((resp.get("usage") or {}).get("completion_tokens") or 0)))


def test_shared_prefix_users_on_a_real_pool(
    vllm_venv: Path, real_workdir: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    plan = tool_json(SEED_LOG, "--shared-prefix", str(PREFIX), "--target-users", str(USERS))
    kv = plan["target"]["kv_cache_memory"]
    assert (kv["num_blocks"], kv["kv_cache_memory_bytes"]) == (BLOCKS, NBYTES) == (89, 419_954_688)

    harness.write_tiny_model("qwen3-8b")
    args = (
        "--max-model-len",
        "1024",
        "--block-size",
        "32",
        "--kv-cache-memory-bytes",
        str(NBYTES),
        "--max-num-seqs",
        str(USERS),
        "--enable-prefix-caching",
    )
    server = harness.VllmServer(
        harness.SHAPES["qwen3-8b"].repo_id, args, workdir=real_workdir / "prefix", venv=vllm_venv
    )
    request.addfinalizer(server.stop)
    server.start()
    print(f"\n[real_vllm] prefix boot ready in {server.wait_ready():.1f}s")
    log = tmp_path / "prefix.log"
    log.write_text(server.text(), encoding="utf-8")

    warm: list[tuple[int, int]] = []
    complete(server.port, 999, warm)
    assert warm == [(200, OUTPUT)]
    sampler = harness.MetricsSampler(server.port)
    start = len(server.lines)
    done: list[tuple[int, int]] = []
    threads = [
        threading.Thread(target=complete, args=(server.port, u, done), daemon=True)
        for u in range(USERS)
    ]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        sampler()
        time.sleep(0.5)
    time.sleep(11)  # one more stats interval
    sampler()
    text = "".join(line for _, line in server.lines[start:])
    running_log = [int(s["running"]) for s in harness.stats_series(text)]
    hits = harness.metric_value(
        harness.parse_metrics(sampler.last_text), "vllm:prefix_cache_hits_total"
    )
    server.stop()
    seen = {
        "done": done,
        "running_log": running_log,
        "peak_running_metrics": sampler.peak("running"),
        "peak_kv_usage_metrics": sampler.peak("kv_usage"),
        "preemptions_metrics": sampler.peak("preemptions"),
        "prefix_cache_hits_tokens": hits,
        "preemptions_log": re.findall(r"Preemptions: (\d+)", text),
    }
    print(f"[real_vllm] shared prefix load: {seen}")

    shared = tool_json(log, "--shared-prefix", str(PREFIX))
    alone = tool_json(log)
    print(f"[real_vllm] tool: {shared['users']} with the prefix held once, {alone['users']} not")
    assert shared["num_blocks"] == BLOCKS
    assert shared["users"] == (89 - 1 - 16) // 6 == USERS
    assert alone["users"] == (89 - 1) // 22 == 4
    assert sorted(done) == [(200, OUTPUT)] * USERS
    assert max(seen["peak_running_metrics"], max(running_log, default=0)) == USERS, seen
    assert seen["preemptions_metrics"] == 0 and not seen["preemptions_log"], seen
    # Each of the 12 found the prefix's 16 full blocks of 32 in the cache (the warm-up none).
    assert seen["prefix_cache_hits_tokens"] == USERS * 16 * 32 == 6_144, seen
