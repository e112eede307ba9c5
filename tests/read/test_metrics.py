"""A running vLLM's /metrics text: detected from its content, read into the same report.

The three ``sample_logs/metrics_*.txt`` texts are built by hand from vLLM's
metric definitions of each era (vllm/engine/metrics.py for the V0 engine,
vllm/v1/metrics/loggers.py for V1; see metrics.py) and checked against their
``.golden.json``; ``real_vllm_0.32_qwen3-8b.metrics.txt`` is a capture from a
real vLLM 0.32 (CPU build) when it is present. Expected numbers are worked by
hand in the tests and the golden notes: 1,506 blocks of 16 - 1 null block =
1,505; // 40 blocks per user of 640 tokens = 37.
"""

from __future__ import annotations

import http.server
import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.errors import InputError, UsageError
from vllm_logread.read.metrics import fetch_metrics, looks_like_metrics, parse_samples, read_metrics

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
V0 = SAMPLES / "metrics_v0_engine_qwen3-8b.txt"
V1_010 = SAMPLES / "metrics_v1_0_10_qwen3-8b.txt"
V1_DP2 = SAMPLES / "metrics_v1_0_11_dp2_qwen3-8b.txt"
REAL_032 = SAMPLES / "real_vllm_0.32_qwen3-8b.metrics.txt"
SEED_LOG = SAMPLES / "seed_qwen3-8b_l4.log"


def run(*args: str, stdin: bytes | None = None):
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


# -- detection ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"# HELP python_gc_objects_collected_total Objects collected during gc\n", True),
        (b"\n\n# TYPE vllm:num_requests_running gauge\n", True),
        (b'vllm:cache_config_info{block_size="16",num_gpu_blocks="1506"} 1.0\n', True),
        (b"vllm:num_requests_running 3.0\n", True),
        (b"# a note someone added\n# HELP vllm:x y\n", True),
        (b"\xef\xbb\xbf# HELP x y\n", True),
        (b"INFO 11-29 10:00:00 [core.py:1] GPU KV cache size: 24,096 tokens\n", False),
        (b"(APIServer pid=1) INFO 11-29 10:00:01 [utils.py:298] # HELP\n", False),
        (b"[2026-04-27 02:35:54] server_args=ServerArgs(model_path='Qwen/Qwen3-8B')\n", False),
        (b"# just a comment\nINFO 11-29 10:00:00 [x.py:1] hello\n", False),
        (b"python_gc_objects_collected_total 1.0\n", False),  # not vLLM's: read as a log
        (b"", False),
        (b"\n\n\n", False),
    ],
)
def test_content_is_detected_from_the_first_lines(head: bytes, expected: bool) -> None:
    assert looks_like_metrics(head) is expected


@pytest.mark.parametrize("path", [V0, V1_010, V1_DP2], ids=lambda p: p.name)
def test_every_sample_is_recognised_and_every_log_is_not(path: Path) -> None:
    assert looks_like_metrics(path.read_bytes()[:4096])
    for log in sorted(SAMPLES.glob("*.log")):
        assert not looks_like_metrics(log.read_bytes()[:65536]), log.name


# -- the parser and its line numbers ------------------------------------------------


def test_samples_keep_their_line_numbers() -> None:
    samples = parse_samples(V1_010.read_text())
    by_name = {s.name: s for s in samples}
    config = by_name["vllm:cache_config_info"]
    assert config.line == 85
    assert config.labels["num_gpu_blocks"] == "1506" and config.labels["engine"] == "0"
    assert by_name["vllm:num_requests_running"].line == 17
    assert by_name["vllm:kv_cache_usage_perc"].line == 32
    assert by_name["vllm:num_preemptions_total"].value == 7.0
    # histogram buckets share a name: each keeps its own line, in order
    buckets = [s for s in samples if s.name == "vllm:time_to_first_token_seconds_bucket"]
    assert [b.line for b in buckets] == list(range(58, 58 + 23))  # lines 58-80


def test_a_broken_text_is_an_input_error() -> None:
    with pytest.raises(InputError, match="not a readable Prometheus text"):
        parse_samples('# TYPE vllm:x gauge\nvllm:x{a="1" 2.0\n', source="bad.txt")


def test_without_prometheus_client_the_message_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client.parser", None)
    with pytest.raises(UsageError, match=r"pip install prometheus-client$"):
        parse_samples(V1_010.read_text())


# -- what each era says ---------------------------------------------------------------


def test_v0_text_has_no_null_block_and_its_swap_space_is_cpu_blocks() -> None:
    read = read_metrics(V0.read_text())
    (server,) = read.servers
    assert server.generation == "V0" and server.model == "Qwen/Qwen3-8B"
    kinds = {f.kind: f.value for f in server.config_facts}
    assert kinds["gpu_blocks"] == 1560 and kinds["cpu_blocks"] == 1820
    out = json.loads(run(str(V0), "--json").stdout)
    # V0: no null block, but a decoding request needs one block free and the last user is
    # admitted (32 prompt blocks) above the watermark int(0.01 x 1,560) = 15 (issue 26, the
    # real V0 boot real_vllm_0.9.1_qwen3-8b_load.log): min(1,559 // 40, 1,513 // 40 + 1) = 38;
    # mid-answer min(1,559 // 36, 1,513 // 36 + 1) = 43 (1,560 // 40 = 39 before).
    assert out["engine"] == "V0" and out["users"] == 38 and out["users_mid_answer"] == 43


def test_v1_text_reads_the_new_usage_name_and_ignores_v1_num_cpu_blocks() -> None:
    read = read_metrics(V1_010.read_text())
    (server,) = read.servers
    assert server.generation == "V1"
    assert "cpu_blocks" not in {f.kind for f in server.config_facts}
    (load,) = server.loads
    assert (load.engine, load.running_reqs, load.waiting_reqs, load.preemptions) == ("0", 40, 3, 7)
    assert load.kv_usage_pct == pytest.approx(1497 / 1505 * 100)
    usage = [f for f in load.facts if f.kind == "kv_usage_pct"]
    assert [f.line for f in usage] == [32]  # vllm:kv_cache_usage_perc, not the deprecated line 23


def test_the_old_usage_name_alone_is_read() -> None:
    text = V1_010.read_text().replace("vllm:kv_cache_usage_perc", "vllm:other_perc")
    (load,) = read_metrics(text).servers[0].loads
    assert load.kv_usage_pct == pytest.approx(1497 / 1505 * 100)


def test_data_parallel_engines_each_get_a_row() -> None:
    r = run(str(V1_DP2))
    assert r.exit_code == 0, r.stderr
    assert re.search(r"== vllm-logread: 74 users fit\b", r.stdout)
    out = json.loads(run(str(V1_DP2), "--json").stdout)
    assert [(e["engine"], e["users"], e["line"]) for e in out["engines"]] == [
        ("DP0", 37, 49),
        ("DP1", 37, 50),
    ]
    assert "engine 1: 41 running, 6 waiting, KV cache usage 99.2%, 3 preemptions" in r.stdout


def test_real_vllm_032_text_when_present() -> None:
    if not REAL_032.is_file():
        pytest.skip(f"no capture at {REAL_032}")
    out = json.loads(run(str(REAL_032), "--json").stdout)
    # 753 blocks of 32 (kv_cache_size_tokens 24,096) - 1 null = 752; 640 tokens = 20 blocks.
    assert (out["num_blocks"], out["block_size"], out["pool_tokens"]) == (753, 32, 24096)
    assert (out["users"], out["users_mid_answer"]) == (37, 41)
    assert {c["name"]: c["status"] for c in out["checks"]}["blocks_vs_tokens"] == "pass"


TWO_MODELS = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",instance="a:8000",model_name="Qwen/Qwen3-8B"} 12.0
vllm:num_requests_running{engine="0",instance="b:8000",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",instance="a:8000",model_name="Qwen/Qwen3-8B"} 0.25
vllm:kv_cache_usage_perc{engine="0",instance="b:8000",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.5
# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",instance="a:8000",num_gpu_blocks="1506"} 1.0
vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",instance="b:8000",num_gpu_blocks="2000"} 1.0
"""


def test_two_models_on_one_endpoint_each_get_their_report() -> None:
    r = run("--json", stdin=TWO_MODELS.encode())
    assert r.exit_code == 0, r.stderr
    servers = json.loads(r.stdout)["servers"]
    assert [s["model"] for s in servers] == ["Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"]
    # 1,505 // 40 = 37; Llama-3.1-8B: 2,000 - 1 = 1,999 // 40 = 49.
    assert [s["users"] for s in servers] == [37, 49]
    assert [s["load"]["peak_running"] for s in servers] == [12, 3]
    text = run(stdin=TWO_MODELS.encode()).stdout
    assert text.count("== vllm-logread: ") == 2
    assert text.count("== vllm-logread load now") == 2


def test_min_users_gate_covers_every_model_on_the_endpoint() -> None:
    assert run("--min-users", "40", stdin=TWO_MODELS.encode()).exit_code == 1
    assert run("--min-users", "37", stdin=TWO_MODELS.encode()).exit_code == 0


def test_a_text_without_cache_config_info_has_no_pool() -> None:
    text = "# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\n"
    text += 'vllm:num_requests_running{engine="0",model_name="m"} 1.0\n'
    r = run(stdin=text.encode())
    assert r.exit_code == 3
    assert "has no vllm:cache_config_info line" in r.stderr


# -- the CLI: stdin, a file, --metrics-url ----------------------------------------------


def test_seed_numbers_through_stdin_give_37_and_nothing_echoed() -> None:
    r = run("--prompt", "512", "--output", "128", stdin=V1_010.read_bytes())
    assert r.exit_code == 0, r.stderr
    assert re.search(r"== vllm-logread: 37 users fit\b", r.stdout)
    assert "(1,506 - 1 null) // 40 = 37 users" in r.stdout
    assert "# HELP" not in r.stdout and "vllm:cache_config_info" not in r.stdout
    assert "=" * 30 + " vllm-logread " not in r.stdout  # no frame: no log lines around it
    assert "40 running, 3 waiting, KV cache usage 99.5%, 7 preemptions" in r.stdout
    assert "7 preemptions since the server started: the pool ran out at some earlier" in r.stdout


def test_a_log_through_stdin_is_still_a_log() -> None:
    r = run("--prompt", "512", "--output", "128", stdin=SEED_LOG.read_bytes())
    assert r.exit_code == 0
    assert "37 users fit at 512 prompt + 128 output" in r.stdout
    assert "GPU KV cache size" in r.stdout  # the log's own lines pass through (echo)


def test_metrics_json_matches_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "vllm_logread" / "data" / "report.schema.json").read_text())
    for path in (V0, V1_010, V1_DP2):
        obj = json.loads(run(str(path), "--json").stdout)
        jsonschema.validate(obj, schema)
    for server in json.loads(run("--json", stdin=TWO_MODELS.encode()).stdout)["servers"]:
        jsonschema.validate(server, schema)


class _Handler(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path != "/metrics":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def metrics_server() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (port 0) serving the 0.10 sample at /metrics."""
    handler = type("Handler", (_Handler,), {"body": V1_010.read_bytes()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_metrics_url_against_a_local_server_gives_37(metrics_server: str) -> None:
    r = run("--metrics-url", f"{metrics_server}/metrics", "--prompt", "512", "--output", "128")
    assert r.exit_code == 0, r.stderr
    assert re.search(r"== vllm-logread: 37 users fit\b", r.stdout)
    out = json.loads(run("--metrics-url", f"{metrics_server}/metrics", "--json").stdout)
    assert (out["users"], out["num_blocks"], out["block_size"]) == (37, 1506, 16)
    assert out["source"] == f"{metrics_server}/metrics"


def test_metrics_url_http_error_is_exit_2(metrics_server: str) -> None:
    r = run("--metrics-url", f"{metrics_server}/nope")
    assert r.exit_code == 2
    assert (
        r.stderr.strip() == f"Error: {metrics_server}/nope: the server answered HTTP 404 Not Found"
    )


def test_metrics_url_with_files_is_a_usage_error() -> None:
    r = CliRunner().invoke(main, ["--metrics-url", "http://127.0.0.1:1/metrics", str(V0)])
    assert r.exit_code == 2
    assert "--metrics-url reads a server, not files" in r.stderr


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_metrics_url_exits_2_with_one_line_and_no_traceback() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/metrics"
    proc = subprocess.run(
        [sys.executable, "-m", "vllm_logread", "--metrics-url", url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"Error: {url}: cannot reach the server")
    assert "Traceback" not in proc.stderr


def test_fetch_times_out() -> None:
    """A server that accepts and never answers: the timeout, not a hang."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/metrics"
        with pytest.raises(InputError, match=r"no answer within 0\.2 s"):
            fetch_metrics(url, timeout_s=0.2)


def test_fetch_refuses_a_page_that_is_not_prometheus_text() -> None:
    handler = type("Handler", (_Handler,), {"body": b"<html>login</html>"})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(InputError, match="not a Prometheus text"):
            fetch_metrics(f"http://127.0.0.1:{server.server_address[1]}/metrics")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
