"""--json as light as the text report (issue 28): the document lists the boot's own
facts and holds the stats lines folded (``load``) and the request lines folded
(``observed_workload``), so its size and the memory behind it do not grow with the
log; ``--stats-jsonl FILE`` streams every stats line's facts instead, as read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.read.facts import Fact
from vllm_logread.report.model import Options
from vllm_logread.session.session import Session

# benchmarks/genlog.py's boot: vLLM 0.11.0 V1, Qwen/Qwen3-8B, 24,096 tokens (line 8),
# 2.94x at 8,192 (line 9), then the graph capture (line 10, after the report) and the
# API server's start (line 11).
BOOT = (
    "(APIServer pid=1) INFO 11-29 10:00:01 [api_server.py:1839] vLLM API server version 0.11.0\n"
    "(APIServer pid=1) INFO 11-29 10:00:01 [utils.py:233] non-default args: {'model_tag': "
    "'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B', 'max_model_len': 8192}\n"
    "(APIServer pid=1) INFO 11-29 10:00:09 [model.py:547] Resolved architecture: "
    "Qwen3ForCausalLM\n"
    "(APIServer pid=1) INFO 11-29 10:00:09 [model.py:1510] Using max model len 8192\n"
    "(EngineCore_DP0 pid=200) INFO 11-29 10:00:12 [core.py:77] Initializing a V1 LLM engine "
    "(v0.11.0) with config: model='Qwen/Qwen3-8B', speculative_config=None, "
    "tokenizer='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=8192, "
    "tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1, "
    "kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=Qwen/Qwen3-8B, "
    "enable_prefix_caching=True, chunked_prefill_enabled=True\n"
    "(EngineCore_DP0 pid=200) INFO 11-29 10:00:20 [gpu_model_runner.py:2653] Model loading "
    "took 15.2683 GiB and 30.512331 seconds\n"
    "(EngineCore_DP0 pid=200) INFO 11-29 10:00:40 [gpu_worker.py:298] Available KV cache "
    "memory: 3.31 GiB\n"
    "(EngineCore_DP0 pid=200) INFO 11-29 10:00:40 [kv_cache_utils.py:1087] GPU KV cache size: "
    "24,096 tokens\n"
    "(EngineCore_DP0 pid=200) INFO 11-29 10:00:40 [kv_cache_utils.py:1091] Maximum concurrency "
    "for 8,192 tokens per request: 2.94x\n"
    "(EngineCore_DP0 pid=200) INFO 11-29 10:00:52 [gpu_model_runner.py:3480] Graph capturing "
    "finished in 12 secs, took 0.53 GiB\n"
    "(APIServer pid=1) INFO 11-29 10:00:55 [api_server.py:1880] Starting vLLM API server 0 on "
    "http://0.0.0.0:8000\n"
)
ACCESS = (
    '(APIServer pid=1) INFO:     10.0.0.1:40000 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
)
REQUEST = (
    "(APIServer pid=1) INFO 11-29 10:01:00 [logger.py:43] Received request chatcmpl-1: "
    "prompt: '', params: SamplingParams(n=1, temperature=0.7, top_p=0.8, max_tokens=128), "
    "prompt_token_ids: None, lora_request: None.\n"
)


def stats(second: int, running: int, kv: str) -> str:
    return (
        f"(APIServer pid=1) INFO 11-29 10:01:{second:02d} [loggers.py:123] Engine 000: "
        "Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 50.5 tokens/s, "
        f"Running: {running} reqs, Waiting: 0 reqs, GPU KV cache usage: {kv}%, "
        "Prefix cache hit rate: 0.0%\n"
    )


def serving_log(num_stats: int) -> str:
    """The boot, then ``num_stats`` rounds of a request line, 18 access lines and a
    stats line (3 running at 12.5% KV usage; the last round 5 at 20.8%)."""
    rounds = [REQUEST + ACCESS * 18 + stats(i % 60, 3, "12.5") for i in range(num_stats - 1)]
    rounds.append(REQUEST + ACCESS * 18 + stats(59, 5, "20.8"))
    return BOOT + "".join(rounds)


def run_json(tmp_path: Path, text: str, *more: str) -> Any:
    log = tmp_path / "serving.log"
    log.write_text(text)
    result = CliRunner().invoke(main, [str(log), "--json", *more], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


STATS_AND_REQUEST_KINDS = {
    "stats_engine",
    "prompt_tps",
    "generation_tps",
    "running_reqs",
    "waiting_reqs",
    "swapped_reqs",
    "kv_usage_pct",
    "prefix_hit_pct",
    "preemptions",
    "request_max_tokens",
    "request_prompt_tokens",
}


def test_json_lists_the_boots_facts_and_folds_the_stats_lines(tmp_path: Path) -> None:
    """--json lists the boot's facts and the first 1,000 stats lines' (a bug report's
    capture whole: the answer keys of real logs list their stats lines), and folds the
    rest into the load: the document stops growing at 1,000 stats lines."""
    small = run_json(tmp_path, serving_log(10))
    cap = run_json(tmp_path, serving_log(1_000))
    large = run_json(tmp_path, serving_log(2_000))

    def stats_lines(doc: Any) -> set[int]:
        return {f["line"] for f in doc["facts"] if f["kind"] == "running_reqs"}

    assert len(stats_lines(small)) == 10
    assert len(stats_lines(cap)) == len(stats_lines(large)) == 1_000
    # The first 1,000 stats lines of both logs are the same lines: the same facts but
    # for the last (its own running count, 5 at 20.8%, in the 1,000-line log).
    assert [f for f in cap["facts"] if f["line"] < max(stats_lines(cap))] == [
        f for f in large["facts"] if f["line"] < max(stats_lines(cap))
    ]
    assert len(large["facts"]) == len(cap["facts"])
    boot = [f for f in large["facts"] if f["kind"] not in STATS_AND_REQUEST_KINDS]
    # The boot's lines: to line 11, the API server's start (engine_ready, issue 27).
    assert max(f["line"] for f in boot) == 11
    assert not {f["kind"] for f in large["facts"]} & {"request_max_tokens", "request_prompt_tokens"}
    # The graph capture (line 10) comes after the report (line 9): still listed.
    graph = [f for f in large["facts"] if f["kind"] == "cuda_graph_gib"]
    assert graph == [
        {"kind": "cuda_graph_gib", "value": 0.53, "line": 10, "process": "EngineCore_DP0 pid=200"}
    ]
    # The load folds every stats line: 2,000 of them, peak 5 running at 20.8%.
    load = large["load"]
    assert load["num_stats_lines"] == 2_000
    assert load["peak_running"] == 5
    assert load["peak_kv_usage_pct"] == 20.8
    assert small["load"]["num_stats_lines"] == 10


def test_stats_jsonl_streams_every_stats_fact(tmp_path: Path) -> None:
    out = tmp_path / "stats.jsonl"
    doc = run_json(tmp_path, serving_log(3), "--stats-jsonl", str(out))
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    # 3 stats lines x 7 facts; the lines: 11 boot lines, then rounds of 20 lines
    # whose 20th is the stats line (31, 51, 71).
    assert len(rows) == 21
    source = str(tmp_path / "serving.log")
    head = {"source": source, "time": "11-29 10:01:59", "process": "APIServer pid=1"}
    assert rows[14:] == [
        {**head, "line": 71, "kind": "stats_engine", "value": "000"},
        {**head, "line": 71, "kind": "prompt_tps", "value": 100.0},
        {**head, "line": 71, "kind": "generation_tps", "value": 50.5},
        {**head, "line": 71, "kind": "running_reqs", "value": 5},
        {**head, "line": 71, "kind": "waiting_reqs", "value": 0},
        {**head, "line": 71, "kind": "kv_usage_pct", "value": 20.8},
        {**head, "line": 71, "kind": "prefix_hit_pct", "value": 0.0},
    ]
    assert [r["line"] for r in rows[::7]] == [31, 51, 71]
    assert [r["time"] for r in rows[::7]] == ["11-29 10:01:00", "11-29 10:01:01", "11-29 10:01:59"]
    assert doc["load"]["num_stats_lines"] == 3


def test_stats_jsonl_names_each_input(tmp_path: Path) -> None:
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text(serving_log(2))
    b.write_text(serving_log(1))
    out = tmp_path / "stats.jsonl"
    result = CliRunner().invoke(
        main, [str(a), str(b), "--json", "--stats-jsonl", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["source"], r["line"]) for r in rows[::7]] == [
        (str(a), 31),
        (str(a), 51),
        (str(b), 31),
    ]


def test_stats_jsonl_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    log = tmp_path / "serving.log"
    log.write_text(serving_log(2))
    result = CliRunner().invoke(
        main, [str(log), "--stats-jsonl", str(tmp_path / "no" / "such" / "dir.jsonl")]
    )
    assert result.exit_code == 2
    assert "--stats-jsonl" in result.stderr


def _streamed(text: bytes, *, keep_all_facts: bool, chunk: int) -> list[tuple[Any, ...]]:
    got: list[list[Fact]] = []
    s = Session("-", Options(), keep_all_facts=keep_all_facts, on_stats_facts=got.append)
    for i in range(0, len(text), chunk):
        s.feed(text[i : i + chunk])
    s.finish()
    return [(f.line, f.time, f.process, f.kind, f.value) for line in got for f in line]


def test_serving_mode_streams_what_boot_mode_streams() -> None:
    # Stats lines both before the report (read in boot mode) and after (serving mode),
    # in chunks that cut lines anywhere; the reference reads every line in boot mode.
    text = (stats(1, 2, "8.3") + serving_log(300) + "tail without newline").encode()
    ref = _streamed(text, keep_all_facts=True, chunk=1 << 20)
    assert len(ref) == 301 * 7
    assert ref[0] == (1, "11-29 10:01:01", "APIServer pid=1", "stats_engine", "000")
    for chunk in (997, 65_536, 1 << 20):
        assert _streamed(text, keep_all_facts=False, chunk=chunk) == ref


def test_stats_jsonl_lines_follow_the_schema(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    root = Path(__file__).resolve().parents[2]
    schema = json.loads((root / "vllm_logread" / "data" / "report.schema.json").read_text())
    line_schema = {**schema["definitions"]["stats_jsonl_fact"], "definitions": {}}
    out = tmp_path / "stats.jsonl"
    doc = run_json(tmp_path, serving_log(2), "--stats-jsonl", str(out))
    jsonschema.validate(doc, schema)
    rows = out.read_text().splitlines()
    assert len(rows) == 14
    for row in rows:
        jsonschema.validate(json.loads(row), line_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**json.loads(rows[0]), "extra": 1}, line_schema)
