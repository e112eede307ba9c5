"""The workload from the server: /metrics histograms and a log's request lines, by hand.

Every expected number below is worked in the comments beside it; the pool is the seed's
(1,506 blocks of 16 tokens, 1 null block: 1,505 usable), so users = 1,505 // blocks per
request, blocks = ceil(tokens / 16).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

pytest.importorskip("prometheus_client")

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"

_L = 'engine="0",model_name="Qwen/Qwen3-8B"'
_BOUNDS = ("1.0", "2.0", "5.0", "10.0", "20.0", "50.0", "100.0", "200.0", "500.0", "1000.0")
_BOUNDS += ("2000.0", "5000.0", "+Inf")


def _histogram(name: str, cumulative: tuple[int, ...], total: int) -> str:
    lines = [f"# HELP {name} x.", f"# TYPE {name} histogram"]
    for le, c in zip(_BOUNDS, cumulative, strict=True):
        lines.append(f'{name}_bucket{{engine="0",le="{le}",model_name="Qwen/Qwen3-8B"}} {c}.0')
    lines.append(f"{name}_count{{{_L}}} {cumulative[-1]}.0")
    lines.append(f"{name}_sum{{{_L}}} {total}.0")
    return "\n".join(lines)


# Ten finished requests. Prompts: 4 x 300, 3 x 600, 2 x 1,500, 1 x 6,000 (above the last
# bound 5,000: the +Inf bucket); sum 1,200 + 1,800 + 3,000 + 6,000 = 12,000, mean 1,200.
# Cumulative per bound 1 ... 5000, +Inf: 0 up to 200, 4 at 500, 7 at 1000, 9 at 2000 and
# 5000, 10 at +Inf.
# Answers: 5 x 100, 5 x 200; sum 1,500, mean 150; 5 at 100, 10 at 200 and up.
PROMPT_CUM = (0, 0, 0, 0, 0, 0, 0, 0, 4, 7, 9, 9, 10)
GEN_CUM = (0, 0, 0, 0, 0, 0, 5, 10, 10, 10, 10, 10, 10)

METRICS = "\n".join(
    [
        "# HELP vllm:num_requests_running x.",
        "# TYPE vllm:num_requests_running gauge",
        f"vllm:num_requests_running{{{_L}}} 8.0",
        "# HELP vllm:num_requests_waiting x.",
        "# TYPE vllm:num_requests_waiting gauge",
        f"vllm:num_requests_waiting{{{_L}}} 5.0",
        "# HELP vllm:num_requests_waiting_by_reason x.",
        "# TYPE vllm:num_requests_waiting_by_reason gauge",
        f'vllm:num_requests_waiting_by_reason{{{_L},reason="capacity"}} 3.0',
        f'vllm:num_requests_waiting_by_reason{{{_L},reason="deferred"}} 2.0',
        "# HELP vllm:kv_cache_usage_perc x.",
        "# TYPE vllm:kv_cache_usage_perc gauge",
        f"vllm:kv_cache_usage_perc{{{_L}}} 0.5",
        "# HELP vllm:num_preemptions_total x.",
        "# TYPE vllm:num_preemptions_total counter",
        f"vllm:num_preemptions_total{{{_L}}} 4.0",
        _histogram("vllm:request_prompt_tokens", PROMPT_CUM, 12_000),
        _histogram("vllm:request_generation_tokens", GEN_CUM, 1_500),
        "# HELP vllm:cache_config_info x.",
        "# TYPE vllm:cache_config_info gauge",
        'vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",'
        'num_gpu_blocks="1506"} 1.0',
        "",
    ]
)


def _run(path: Path, *args: str) -> Any:
    return CliRunner().invoke(main, [str(path), "--prompt", "512", "--output", "128", *args])


def test_metrics_histograms_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "m.txt"
    path.write_text(METRICS)
    r = _run(path, "--json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    obs = out["observed_workload"]
    p, g = obs["prompt_tokens"], obs["generation_tokens"]
    assert (p["count"], p["sum"], p["mean"]) == (10, 12_000, 1_200)
    assert (g["count"], g["sum"], g["mean"]) == (10, 1_500, 150)
    # Nearest rank: p50 the 5th (ceil(50 x 10 / 100)), p90 the 9th, p99 the 10th
    # (ceil(9.9)). Prompt: the 5th is in the first bucket holding >= 5, le=1000 (7):
    # (500, 1000]; the 9th in le=2000 (9): (1000, 2000]; the 10th only in +Inf: (5000, -).
    assert p["p50"] == {"lower_tokens": 500, "upper_tokens": 1000}
    assert p["p90"] == {"lower_tokens": 1000, "upper_tokens": 2000}
    assert p["p99"] == {"lower_tokens": 5000, "upper_tokens": None}
    # Answers: the 5th in le=100 (5): (50, 100]; the 9th and 10th in le=200: (100, 200].
    assert g["p50"] == {"lower_tokens": 50, "upper_tokens": 100}
    assert g["p90"] == g["p99"] == {"lower_tokens": 100, "upper_tokens": 200}
    users = {u["label"]: (u["prompt_tokens"], u["output_tokens"], u["users"]) for u in obs["users"]}
    # mean: 1,200 + 150 = 1,350 tokens = ceil(84.4) = 85 blocks: 1,505 // 85 = 17.
    assert users["mean"] == (1_200, 150, 17)
    # p50 high: 1,000 + 100 = 1,100 = ceil(68.75) = 69 blocks: 1,505 // 69 = 21;
    # p50 low: 501 + 51 = 552 = ceil(34.5) = 35 blocks: 1,505 // 35 = 43 (35 x 43 = 1,505).
    assert users["p50 high"] == (1_000, 100, 21)
    assert users["p50 low"] == (501, 51, 43)
    # p90 high: 2,000 + 200 = 2,200 = ceil(137.5) = 138 blocks: 1,505 // 138 = 10;
    # p90 low: 1,001 + 101 = 1,102 = ceil(68.9) = 69 blocks: 21.
    assert users["p90 high"] == (2_000, 200, 10)
    assert users["p90 low"] == (1_001, 101, 21)
    # p99 high: the prompt's +Inf bucket has no upper bound: unknown, never a figure;
    # p99 low: 5,001 + 101 = 5,102 = ceil(318.9) = 319 blocks: 1,505 // 319 = 4.
    assert users["p99 high"] == (None, None, None)
    assert users["p99 low"] == (5_001, 101, 4)
    # The headline stays the --prompt/--output one: 640 tokens = 40 blocks: 37.
    assert out["users"] == 37
    # Waiting by reason are facts; the verdict says the deferred are not the pool's, and
    # the 4 preemptions that the pool ran out before (it is at 50% now).
    kinds = {f["kind"]: f["value"] for f in out["facts"]}
    assert kinds["waiting_capacity_reqs"] == 3 and kinds["waiting_deferred_reqs"] == 2
    verdict = out["load"]["verdict"]
    assert "4 preemptions since the server started" in verdict
    assert "2 waiting are deferred" in verdict
    assert "3 waiting for capacity at 50.0% KV usage" in verdict


def test_metrics_text_report_fits_100_columns(tmp_path: Path) -> None:
    path = tmp_path / "m.txt"
    path.write_text(METRICS)
    r = _run(path)
    assert r.exit_code == 0, r.stderr
    text = r.stdout
    assert "Workload seen (from /metrics: 10 finished requests" in text
    assert "17 at the mean request (1,200 + 150 tokens); 37 at your 512 + 128" in text
    assert "p50 request:  21 to 43 users (1,000 + 100 to 501 + 51 tokens)" in text
    assert "marginals" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    explained = _run(path, "--explain").stdout
    assert "p90 is the 9th of 10 (ceil(90 x 10 / 100)): (1,000, 2,000]" in explained


def test_empty_histograms_say_so() -> None:
    # The real 0.32 capture before any request finished: every bucket 0.
    r = _run(ROOT / "sample_logs" / "real_vllm_0.32_qwen3-8b.metrics.txt", "--json")
    obs = json.loads(r.stdout)["observed_workload"]
    assert obs["prompt_tokens"]["count"] == 0 and obs["users"] == []


def _request(rid: int, prompt: int, max_tokens: int) -> str:
    ids = ", ".join(str(10 + i % 900) for i in range(prompt))
    return (
        f"(APIServer pid=1) INFO 11-29 10:01:{rid:02d} [logger.py:41] Received request "
        f"cmpl-{rid}: prompt: '', params: SamplingParams(n=1, temperature=0.0, stop=[], "
        f"ignore_eos=False, max_tokens={max_tokens}, min_tokens=0, logprobs=None), "
        f"prompt_token_ids: [{ids}], prompt_embeds shape: None, lora_request: None.\n"
    )


@pytest.mark.parametrize("json_mode", [False, True], ids=["serving-mode", "boot-mode"])
def test_log_request_lines_by_hand(tmp_path: Path, json_mode: bool) -> None:
    # Three requests in 0.11's wording: prompts 100, 300, 2,000 token ids; max_tokens 50,
    # 100, 500. Text mode reads them in serving mode (after the report), --json through
    # the patterns table: the same figures.
    log = tmp_path / "requests.log"
    log.write_text(
        SEED.read_text() + _request(1, 100, 50) + _request(2, 300, 100) + _request(3, 2000, 500)
    )
    if json_mode:
        obs = json.loads(_run(log, "--json").stdout)["observed_workload"]
        p, m = obs["prompt_tokens"], obs["max_tokens"]
        # prompt: sum 2,400, mean 800; p50 the 2nd (ceil(1.5)) = 300; p90 the 3rd = 2,000.
        assert (p["count"], p["sum"], p["p50"], p["p90"], p["p99"]) == (3, 2_400, 300, 2_000, 2_000)
        # max_tokens: sum 650, mean 216.67; p50 100, p90 and p99 500.
        assert (m["count"], m["sum"], m["p50"], m["p90"]) == (3, 650, 100, 500)
        users = {u["label"]: u["users"] for u in obs["users"]}
        # mean: 800 + ceil(216.67) = 217 -> 1,017 tokens = ceil(63.6) = 64 blocks: 23;
        # p50: 300 + 100 = 400 = 25 blocks: 1,505 // 25 = 60;
        # p90: 2,000 + 500 = 2,500 = ceil(156.25) = 157 blocks: 1,505 // 157 = 9.
        assert (users["mean"], users["p50"], users["p90"], users["p99"]) == (23, 60, 9, 9)
        return
    text = _run(log).stdout
    assert "Workload seen (from the log's request lines: 3 requests)" in text
    assert "23 at the mean request (800 + 217 tokens); 37 at your 512 + 128" in text
    assert "p90 request:  9 users (2,000 + 500 tokens)" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def _request_032(rid: int, prompt: int, max_tokens: int) -> str:
    # 0.32's two lines: the DEBUG details (the ids) and the INFO params (max_tokens).
    ids = ", ".join(str(10 + i % 900) for i in range(prompt))
    return (
        f"(APIServer pid=1) DEBUG 11-29 10:01:{rid:02d} [request_logger.py:56] Request "
        f"cmpl-{rid}-0 details: prompt: None, prompt_token_ids: [{ids}], prompt_embeds shape: "
        "None.\n"
        f"(APIServer pid=1) INFO 11-29 10:01:{rid:02d} [request_logger.py:65] Received request "
        f"cmpl-{rid}-0: params: SamplingParams(n=1, stop=[], ignore_eos=True, "
        f"max_tokens={max_tokens}, min_tokens=0, extra_args=None), lora_request: None.\n"
    )


@pytest.mark.parametrize("json_mode", [False, True], ids=["serving-mode", "boot-mode"])
def test_log_request_lines_032_debug(tmp_path: Path, json_mode: bool) -> None:
    # Two requests: prompts 1,000 and 24 ids, max_tokens 64 and 200. Mean prompt 512,
    # mean max_tokens 132: 644 tokens = ceil(40.25) = 41 blocks: 1,505 // 41 = 36 users.
    log = tmp_path / "requests.log"
    log.write_text(SEED.read_text() + _request_032(1, 1000, 64) + _request_032(2, 24, 200))
    if json_mode:
        obs = json.loads(_run(log, "--json").stdout)["observed_workload"]
        assert (obs["prompt_tokens"]["count"], obs["prompt_tokens"]["sum"]) == (2, 1_024)
        assert (obs["max_tokens"]["count"], obs["max_tokens"]["sum"]) == (2, 264)
        assert obs["at_mean"]["users"] == 36
        return
    text = _run(log).stdout
    assert "36 at the mean request (512 + 132 tokens)" in text


def _engine_text(engine: str, prompt_cum: tuple[int, ...], prompt_sum: int) -> str:
    lab = f'engine="{engine}",model_name="Qwen/Qwen3-8B"'
    lines = [f"vllm:num_requests_running{{{lab}}} 0.0", f"vllm:num_requests_waiting{{{lab}}} 0.0"]
    for name, cum, total in (
        ("vllm:request_prompt_tokens", prompt_cum, prompt_sum),
        ("vllm:request_generation_tokens", (0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2), 20),
    ):
        for le, c in zip(_BOUNDS, cum, strict=True):
            lines.append(
                f'{name}_bucket{{engine="{engine}",le="{le}",model_name="Qwen/Qwen3-8B"}} {c}.0'
            )
        lines.append(f"{name}_count{{{lab}}} {cum[-1]}.0")
        lines.append(f"{name}_sum{{{lab}}} {total}.0")
    lines.append(
        f'vllm:cache_config_info{{block_size="16",engine="{engine}",num_gpu_blocks="1506"}} 1.0'
    )
    return "\n".join(lines)


def test_data_parallel_engines_are_summed_bucket_by_bucket(tmp_path: Path) -> None:
    # Engine 0: 2 prompts of 100 (le=100: 2); engine 1: 2 prompts of 1,000 (le=1000: 2);
    # every answer 10 tokens (le=10: 2 each). Summed: 4 requests, prompt sum 200 + 2,000 =
    # 2,200, mean 550; p50 the 2nd of 4: le=100 holds 2: (50, 100]; p90 the 4th
    # (ceil(3.6)): le=1000 holds 4: (500, 1000]. Mean request 550 + 10 = 560 tokens = 35
    # blocks: 1,505 // 35 = 43 users per engine, 86 over the two.
    types = [
        "# TYPE vllm:num_requests_running gauge",
        "# TYPE vllm:num_requests_waiting gauge",
        "# TYPE vllm:request_prompt_tokens histogram",
        "# TYPE vllm:request_generation_tokens histogram",
        "# TYPE vllm:cache_config_info gauge",
    ]
    zero = (0,) * 6
    text = "\n".join(
        types
        + [
            _engine_text("0", zero + (2,) * 7, 200),
            _engine_text("1", zero + (0, 0, 0) + (2,) * 4, 2000),
        ]
    )
    # (prometheus-client wants each family's samples together: regroup by name)
    lines = [ln for ln in text.splitlines() if ln.startswith("#")]
    samples = [ln for ln in text.splitlines() if not ln.startswith("#")]
    by_family: dict[str, list[str]] = {}
    for ln in samples:
        base = ln.split("{")[0].removesuffix("_bucket").removesuffix("_count").removesuffix("_sum")
        by_family.setdefault(base, []).append(ln)
    out_lines = []
    for t in lines:
        name = t.split()[2]
        out_lines += [t, *by_family[name]]
    path = tmp_path / "dp2.txt"
    path.write_text("\n".join(out_lines) + "\n")
    r = _run(path, "--json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    obs = (out["servers"][0] if "servers" in out else out)["observed_workload"]
    p = obs["prompt_tokens"]
    assert (p["count"], p["sum"], p["mean"]) == (4, 2_200, 550)
    assert p["p50"] == {"lower_tokens": 50, "upper_tokens": 100}
    assert p["p90"] == {"lower_tokens": 500, "upper_tokens": 1000}
    assert obs["at_mean"]["users"] == 86
    assert [e["engine"] for e in obs["engines"]] == ["0", "1"]
    assert [e["prompt_tokens"]["count"] for e in obs["engines"]] == [2, 2]


@pytest.mark.parametrize("json_mode", [False, True], ids=["serving-mode", "boot-mode"])
def test_prompt_ids_cut_by_max_log_len_are_not_counted(tmp_path: Path, json_mode: bool) -> None:
    # The server ran with --max-log-len 5 (its non-default args say so): a logged list of 5
    # ids may be a longer prompt cut there, so the prompt is not summarized (never an
    # undercount) and --prompt 512 stands in. max_tokens 64: 512 + 64 = 576 tokens = 36
    # blocks: 1,505 // 36 = 41 users.
    seed = SEED.read_text().replace(
        "'max_model_len': 8192}", "'max_model_len': 8192, 'max_log_len': 5}"
    )
    log = tmp_path / "cut.log"
    log.write_text(seed + _request(1, 5, 64))
    if json_mode:
        out = json.loads(_run(log, "--json").stdout)
        assert {"kind": "max_log_len", "value": 5} in [
            {"kind": f["kind"], "value": f["value"]} for f in out["facts"]
        ]
        obs = out["observed_workload"]
        assert obs["prompt_tokens"] is None
        assert obs["at_mean"]["prompt_tokens"] == 512 and obs["at_mean"]["users"] == 41
        return
    text = _run(log).stdout
    assert "prompt:       not in the log (ids cut at --max-log-len 5): --prompt 512 used" in text


def test_a_missing_histogram_is_the_given_workload(tmp_path: Path) -> None:
    # No generation histogram (nor max_tokens): the output side is --output 128, said so.
    # Mean request 1,200 + 128 = 1,328 tokens = 83 blocks (1,328 / 16 exactly):
    # 1,505 // 83 = 18 users (83 x 18 = 1,494).
    text = "\n".join(ln for ln in METRICS.splitlines() if "request_generation_tokens" not in ln)
    path = tmp_path / "m.txt"
    path.write_text(text + "\n")
    obs = json.loads(_run(path, "--json").stdout)["observed_workload"]
    assert obs["generation_tokens"] is None
    assert (obs["at_mean"]["prompt_tokens"], obs["at_mean"]["output_tokens"]) == (1_200, 128)
    assert obs["at_mean"]["users"] == 18
    assert "generation:   unknown (no whole histogram in the text): 128" in _run(path).stdout
