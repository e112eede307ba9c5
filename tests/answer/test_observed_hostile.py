"""The workload seen on /metrics, against histograms nobody here wrote: odd bucket sets,
impossible sums, a histogram of the +Inf bucket alone. Never a wrong number, never a
traceback.

The pool is the seed's (1,506 blocks of 16 tokens, 1 null block: 1,505 usable).
"""

from __future__ import annotations

import bisect
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_logread.cli.commands import main
from vllm_logread.report.observed import QUANTILES_PCT, from_histogram, nearest_rank

pytest.importorskip("prometheus_client")

_L = 'engine="0",model_name="Qwen/Qwen3-8B"'


def _metrics(*histograms: str) -> str:
    return "\n".join(
        [
            "# HELP vllm:num_requests_running x.",
            "# TYPE vllm:num_requests_running gauge",
            f"vllm:num_requests_running{{{_L}}} 0.0",
            "# HELP vllm:cache_config_info x.",
            "# TYPE vllm:cache_config_info gauge",
            'vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",'
            'gpu_memory_utilization="0.9",num_gpu_blocks="1506"} 1.0',
            *histograms,
            "",
        ]
    )


def _histogram(name: str, buckets: list[tuple[str, int]], count: int, total: float) -> str:
    lines = [f"# HELP {name} x.", f"# TYPE {name} histogram"]
    for le, c in buckets:
        lines.append(f'{name}_bucket{{engine="0",le="{le}",model_name="Qwen/Qwen3-8B"}} {c}.0')
    lines.append(f"{name}_count{{{_L}}} {count}.0")
    lines.append(f"{name}_sum{{{_L}}} {total}")
    return "\n".join(lines)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=200),
    bounds=st.lists(
        st.floats(min_value=-5, max_value=12_000, allow_nan=False), min_size=0, max_size=15
    ),
)
def test_each_quantile_range_holds_the_true_quantile(
    values: list[int], bounds: list[float]
) -> None:
    """Bucket the values as prometheus-client does (a value v counts in every bucket with
    v <= le; +Inf holds them all), then the reported (lower, upper] of each quantile must
    hold the nearest-rank quantile of the values themselves, and its whole-token
    low/high must bracket it."""
    les = sorted(set(bounds)) + [math.inf]
    ordered = sorted(values)
    buckets = [(le, bisect.bisect_right(ordered, le)) for le in les]
    s = from_histogram("prompt_tokens", buckets, count=len(values), sum_tokens=sum(values))
    assert s is not None
    for pct in QUANTILES_PCT:
        true = ordered[nearest_rank(pct, len(values)) - 1]
        q = s.quantiles[pct]
        assert not isinstance(q, int)
        assert q.lower_tokens is None or q.lower_tokens < true
        assert q.upper_tokens is None or true <= q.upper_tokens
        assert s.low(pct) is not None and s.low(pct) <= true  # type: ignore[operator]
        high = s.high(pct)
        assert high is None or true <= high
        assert s.quantile_text(pct)  # says something, never raises


def test_a_histogram_of_the_inf_bucket_alone_says_unbounded(tmp_path: Path) -> None:
    """A histogram with no finite bound (custom buckets set to none): every request is in
    +Inf, so each quantile is 'any' (no bound either side), not a traceback. The mean stays
    exact: 18 requests, sum 9,400 -> 522.2."""
    path = tmp_path / "m.txt"
    path.write_text(
        _metrics(_histogram("vllm:request_prompt_tokens", [("+Inf", 18)], 18, 9400.0)),
        encoding="utf-8",
    )
    r = CliRunner().invoke(main, [str(path), "--prompt", "512", "--output", "128"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    assert "mean 522.2" in r.output
    assert "p50 any (one +Inf bucket)" in r.output


def test_a_negative_sum_is_not_a_mean(tmp_path: Path) -> None:
    """A sum of -100 over 18 requests would be a mean of -5.6 tokens and 501 users at it:
    token counts are >= 0, so the histogram is not read (the prompt is the --prompt)."""
    buckets = [("200.0", 6), ("500.0", 11), ("1000.0", 15), ("2000.0", 18), ("+Inf", 18)]
    path = tmp_path / "m.txt"
    path.write_text(
        _metrics(_histogram("vllm:request_prompt_tokens", buckets, 18, -100.0)),
        encoding="utf-8",
    )
    r = CliRunner().invoke(main, [str(path), "--prompt", "512", "--output", "128"])
    assert r.exit_code == 0, r.output
    assert "mean -5.6" not in r.output
    assert "501" not in r.output


def test_a_sum_the_buckets_cannot_hold_is_not_a_mean(tmp_path: Path) -> None:
    """18 requests all <= 2,000 tokens (the +Inf bucket adds none) hold at most
    6 x 200 + 5 x 500 + 4 x 1,000 + 3 x 2,000 = 1,200 + 2,500 + 4,000 + 6,000 = 13,700
    tokens: a sum of 100,000 (a mean of 5,555.6) is a corrupt text, not a mean."""
    buckets = [("200.0", 6), ("500.0", 11), ("1000.0", 15), ("2000.0", 18), ("+Inf", 18)]
    path = tmp_path / "m.txt"
    path.write_text(
        _metrics(_histogram("vllm:request_prompt_tokens", buckets, 18, 100000.0)),
        encoding="utf-8",
    )
    r = CliRunner().invoke(main, [str(path), "--prompt", "512", "--output", "128"])
    assert r.exit_code == 0, r.output
    assert "5,555" not in r.output and "5555" not in r.output
    # The same buckets with the sum 13,700 (every request at its bucket's top) are read.
    path.write_text(
        _metrics(_histogram("vllm:request_prompt_tokens", buckets, 18, 13700.0)),
        encoding="utf-8",
    )
    r = CliRunner().invoke(main, [str(path), "--prompt", "512", "--output", "128"])
    assert "mean 761.1" in r.output, r.output  # 13,700 / 18 = 761.11


def test_a_big_scrape_is_read_for_its_vllm_families_only() -> None:
    """A /metrics text of 60 MB is mostly other exporters' families (an http histogram per
    handler). Only the ``vllm:``/``sglang:`` families are read, so 200,000 foreign series
    (1.2 million lines, about 14 MB) cost a line scan, not a parse: measured before the
    filter, 60 MB took 58 s and 1.2 GB; here 14 MB must take well under 10 s. The samples
    read and their line numbers are the same as in the small text."""
    import time

    from vllm_logread.read.metrics import parse_samples

    head = _metrics(_histogram("vllm:request_prompt_tokens", [("+Inf", 3)], 3, 30.0))
    foreign = ["# HELP http_seconds x.", "# TYPE http_seconds histogram"]
    for i in range(200_000):
        foreign += [
            f'http_seconds_bucket{{handler="/h{i}",le="+Inf"}} {i}',
            f'http_seconds_count{{handler="/h{i}"}} {i}',
            f'http_seconds_sum{{handler="/h{i}"}} {i}',
            f'http_total{{handler="/h{i}"}} {i}',
            f'http_other{{handler="/h{i}"}} {i}',
            f'http_more{{handler="/h{i}"}} {i}',
        ]
    text = "\n".join(foreign) + "\n" + head
    offset = len(foreign)  # the vLLM lines start after the foreign ones
    t0 = time.perf_counter()
    samples = parse_samples(text)
    elapsed = time.perf_counter() - t0
    assert elapsed < 10, elapsed
    small = parse_samples(head)
    assert [(s.name, s.value, s.line + offset) for s in small] == [
        (s.name, s.value, s.line) for s in samples
    ]


_SP = (
    "SamplingParams(n=1, temperature=0.7, stop=[], include_stop_str_in_output=False, "
    "ignore_eos=False, max_tokens={}, min_tokens=0, logprobs=None)"
)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # 0.5 to 0.8's line (vllm/entrypoints/logger.py): prompt, params, ids, lora, adapter.
        (
            f"Received request cmpl-1: prompt: 'hi', params: {_SP.format(64)}, "
            "prompt_token_ids: [1, 2, 3], lora_request: None, prompt_adapter_request: None.",
            [("request_max_tokens", 64, None), ("request_prompt_tokens", 3, None)],
        ),
        # The same with a prompt that holds a list of 5 ids, and no ids of its own (None):
        # the prompt's text is no count.
        (
            "Received request cmpl-1: prompt: 'see prompt_token_ids: [1, 2, 3, 4, 5]', "
            f"params: {_SP.format(64)}, prompt_token_ids: None, lora_request: None, "
            "prompt_adapter_request: None.",
            [("request_max_tokens", 64, None)],
        ),
        # 0.10/0.11: max_tokens=None (not set), a prompt that writes 'max_tokens=5': no
        # max_tokens (5 is the prompt's text, not the request's).
        (
            "Received request cmpl-1: prompt: 'say ignore_eos=False, max_tokens=5, ok', "
            f"params: {_SP.format('None')}, prompt_token_ids: [1, 2], prompt_embeds shape: "
            "None, lora_request: None.",
            [("request_prompt_tokens", 2, None)],
        ),
        # A line cut by a pager inside the params: its last fields are gone, so the list
        # seen is the prompt's: nothing read.
        (
            "Received request cmpl-1: prompt: 'a prompt_token_ids: [1, 2]', params: "
            "SamplingParams(n=1, temperature=0.7, ",
            [],
        ),
        # 0.12+'s DEBUG details line, ids None, a prompt holding a list of 3.
        (
            "Request cmpl-1 details: prompt: 'z prompt_token_ids: [1, 2, 3]', "
            "prompt_token_ids: None, prompt_embeds shape: None.",
            [],
        ),
        # 0.2's async_llm_engine.py line (era_0_2_7_v0.log): max_tokens read; its
        # "prompt token ids" list is not the later field's name, so not counted.
        (
            "Received request cmpl-3: prompt: None, prefix_pos: None,sampling params: "
            f"{_SP.format(256)}, prompt token ids: [1, 518, 25580].",
            [("request_max_tokens", 256, None)],
        ),
        # 0.12+'s INFO line: params only.
        (
            f"Received request cmpl-1: params: {_SP.format(20)}, lora_request: None.",
            [("request_max_tokens", 20, None)],
        ),
    ],
)
def test_request_values_read_the_fields_not_the_prompt(message: str, expected: list[Any]) -> None:
    from vllm_logread.read.patterns import request_values

    assert request_values(message) == expected


def _dp_text(prompt_engines: tuple[str, ...], prompt_bounds: dict[str, tuple[str, ...]]) -> str:
    """Two engines (0, 1) of one model, each with a generation histogram of 2 answers of
    10 tokens; the prompt histogram (2 prompts of 100 each, sum 200) only on
    ``prompt_engines``, with each engine's bounds from ``prompt_bounds``."""
    out = ["# TYPE vllm:num_requests_running gauge"]
    out += [
        f'vllm:num_requests_running{{engine="{e}",model_name="Qwen/Qwen3-8B"}} 0.0' for e in "01"
    ]
    out.append("# TYPE vllm:cache_config_info gauge")
    out += [
        f'vllm:cache_config_info{{block_size="16",engine="{e}",num_gpu_blocks="1506"}} 1.0'
        for e in "01"
    ]
    for name, engines in (
        ("vllm:request_prompt_tokens", prompt_engines),
        ("vllm:request_generation_tokens", ("0", "1")),
    ):
        out.append(f"# TYPE {name} histogram")
        for e in engines:
            lab = f'engine="{e}",model_name="Qwen/Qwen3-8B"'
            bounds = prompt_bounds[e] if "prompt" in name else ("10.0", "+Inf")
            out += [f'{name}_bucket{{{lab},le="{le}"}} 2.0' for le in bounds]
            total = 200 if "prompt" in name else 20
            out += [f"{name}_count{{{lab}}} 2.0", f"{name}_sum{{{lab}}} {total}.0"]
    return "\n".join(out) + "\n"


def test_a_data_parallel_engine_without_the_histogram_is_no_server_total(
    tmp_path: Path,
) -> None:
    """Engine 1 publishes no prompt histogram: engine 0's 2 prompts (mean 100) are not
    the server's (its 4 answers say 4 requests finished), so the prompt is unknown
    (--prompt stands in), and said so; the 4 answers (2 + 2, sum 40, mean 10) stay."""
    import json

    path = tmp_path / "dp.txt"
    path.write_text(_dp_text(("0",), {"0": ("100.0", "+Inf")}), encoding="utf-8")
    r = CliRunner().invoke(main, [str(path), "--json"])
    assert r.exit_code == 0, r.output
    obs = json.loads(r.output)["observed_workload"]
    assert obs["prompt_tokens"] is None
    assert (obs["generation_tokens"]["count"], obs["generation_tokens"]["mean"]) == (4, 10)
    assert any("engine" in n and "prompt" in n for n in obs["notes"]), obs["notes"]


def test_data_parallel_engines_with_other_bounds_say_so(tmp_path: Path) -> None:
    """Engine 0's prompt bounds 100, +Inf; engine 1's 200, +Inf: not summed bucket by
    bucket (a bucket (100, 200] of one is no bucket of the other), and a note says why."""
    import json

    path = tmp_path / "dp.txt"
    bounds = {"0": ("100.0", "+Inf"), "1": ("200.0", "+Inf")}
    path.write_text(_dp_text(("0", "1"), bounds), encoding="utf-8")
    r = CliRunner().invoke(main, [str(path), "--json"])
    assert r.exit_code == 0, r.output
    obs = json.loads(r.output)["observed_workload"]
    assert obs["prompt_tokens"] is None
    assert any("bounds" in n for n in obs["notes"]), obs["notes"]


@pytest.mark.parametrize("kind", ["gzip", "metrics-gzip"])
def test_a_compressed_input_is_named_not_called_no_vllm_log(tmp_path: Path, kind: str) -> None:
    """A gzip'd log or scrape was read as text: 'no vLLM lines at all ... not a vLLM log?'
    (exit 3). It is a file that cannot be read as it is: exit 2, saying to decompress."""
    import gzip

    src = (
        (Path(__file__).resolve().parents[2] / "sample_logs" / "seed_qwen3-8b_l4.log").read_bytes()
        if kind == "gzip"
        else _metrics().encode()
    )
    path = tmp_path / "in.gz"
    path.write_bytes(gzip.compress(src))
    r = CliRunner().invoke(main, [str(path)])
    assert r.exit_code == 2, r.output
    assert "gzip" in r.output and "decompress it first" in r.output
    assert "Traceback" not in r.output
