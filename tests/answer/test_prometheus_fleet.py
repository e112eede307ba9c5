"""``read --prometheus``: the fleet, against a real Prometheus scraping real /metrics texts.

Five stand-ins of vLLM servers (threads on 127.0.0.1, tests/fleet_harness.py)
serve recorded /metrics texts of real vLLMs; Debian's Prometheus 2.42
scrapes them every second. Each row of the tool's fleet table must be the
tool's own answer on the text that server serves, read directly, and the
figures worked by hand here:

* real 0.32 (A and B): 753 blocks of 32; 512 + 128 = 640 tokens = 20 blocks;
  (753 - 1 null) // 20 = 37 users. A serves the idle text twice, then the
  preempted one: preemptions 0 -> 13 in the window, the prompt histogram's
  count 0 -> 49 and sum 0 -> 25,088 (25,088 / 49 = 512.0 tokens), the
  generation histogram's sum 0 -> 6,272 (6,272 / 49 = 128.0); running
  peaks at 44 (the idle text's 44, then 34).
* dp2 0.11 (C): two engines of 1,506 blocks of 16; 640 / 16 = 40 blocks;
  (1,506 - 1) // 40 = 37 users each, 74 for the instance.
* V0 (D): 1,560 blocks of 16, no null block, but one kept free while decoding and the
  watermark int(0.01 x 1,560) = 15 at admission (issue 26, the real V0 boot
  real_vllm_0.9.1_qwen3-8b_load.log): min(1,559 // 40, (1,560 - 15 - 32) // 40 + 1) = 38 users.
* V1 0.10 (E): 1,506 blocks of 16: 37 users.

Totals per model: Qwen/Qwen3-8B = 37 + 37 (C) + 38 (D) + 37 (E) = 149; the
real servers' model (a local snapshot path) = 37 + 37 = 74.
Then B stops: its row is down, still 37 users (its pool as last scraped), not
counted: the path model's total is 37, the rest unchanged.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fleet_harness import (
    RunningPrometheus,
    Scraped,
    prometheus_binary,
    query,
    start_prometheus,
    wait_until,
)

from vllm_logread.cli.commands import main
from vllm_logread.errors import InputError
from vllm_logread.findings import PoolConfigChangedInWindow, RestartedInWindow
from vllm_logread.read.prometheus import Prometheus, parse_since

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
REAL = SAMPLES / "real_vllm_0.32_qwen3-8b.metrics.txt"
PREEMPTED = SAMPLES / "real_vllm_0.32_qwen3-8b_preempted.metrics.txt"
DP2 = SAMPLES / "metrics_v1_0_11_dp2_qwen3-8b.txt"
V0 = SAMPLES / "metrics_v0_engine_qwen3-8b.txt"
V1_010 = SAMPLES / "metrics_v1_0_10_qwen3-8b.txt"
SNAPSHOT = (
    "/root/.cache/vllm-logread/tiny-hf/hub/models--Qwen--Qwen3-8B/snapshots/"
    "0000000000000000000000000000000000000000"
)


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    binary = prometheus_binary()
    if binary is None:
        pytest.skip(
            "no prometheus binary: set PROMETHEUS=/path/to/prometheus (the binary of "
            "Prometheus' release archive, unpacked anywhere: no root) or put one on PATH "
            "(Debian: apt-get install prometheus); no PyPI package ships it"
        )
    served = {
        "A": (Scraped([REAL.read_bytes(), REAL.read_bytes(), PREEMPTED.read_bytes()]), REAL),
        "B": (Scraped([REAL.read_bytes()]), REAL),
        "C": (Scraped([DP2.read_bytes()]), DP2),
        "D": (Scraped([V0.read_bytes()]), V0),
        "E": (Scraped([V1_010.read_bytes()]), V1_010),
    }
    prom: RunningPrometheus | None = None
    try:
        for stand_in, _ in served.values():
            stand_in.start()
        targets = {name: s.target for name, (s, _) in served.items()}
        prom = start_prometheus(binary, list(targets.values()), tmp_path_factory.mktemp("prom"))
        url = prom.url
        # Bounded: every target scraped and up, and A past its third scrape.
        wait_until(
            "Prometheus scraped all five stand-ins",
            lambda: sum(float(r["value"][1]) for r in query(url, "up")) == 5,
        )
        wait_until(
            "A served its preempted text",
            lambda: any(
                float(r["value"][1]) == 13
                for r in query(url, f'vllm:num_preemptions_total{{instance="{targets["A"]}"}}')
            ),
        )
        yield {"url": url, "targets": targets, "served": served, "prom": prom}
    finally:
        if prom is not None:
            prom.stop()
        for stand_in, _ in served.values():
            stand_in.stop()


def _direct(path: Path) -> dict[str, Any]:
    """The tool's own answer on a text, read directly."""
    r = run(str(path), "--json")
    assert r.exit_code == 0, r.output
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def _fleet_json(
    url: str, *args: str, not_up: frozenset[str] = frozenset()
) -> tuple[int, dict[str, Any]]:
    """The fleet's JSON once every server but ``not_up`` (instances) is up:
    a scrape that missed Prometheus' 1 s timeout on this shared machine marks
    a target down until the next one, so a few tries, bounded."""
    deadline = time.monotonic() + 10
    while True:
        r = run("--prometheus", url, "--format", "json", *args)
        out: dict[str, Any] = json.loads(r.stdout)
        settled = all(
            (row["status"] == "up") != (row["instance"] in not_up) for row in out["servers"]
        )
        if settled or time.monotonic() > deadline:
            return r.exit_code, out
        time.sleep(0.5)


def _rows_by_instance(out: dict[str, Any]) -> dict[tuple[str, str | None], dict[str, Any]]:
    return {(row["instance"], row["engine"]): row for row in out["servers"]}


def _check_against_direct(row: dict[str, Any], path: Path) -> None:
    direct = _direct(path)
    engines = {e["engine"]: e for e in direct["engines"]}
    one = engines.get(f"DP{row['engine']}") if len(engines) > 1 else direct
    assert one is not None
    assert row["num_blocks"] == one["num_blocks"]
    assert row["users"] == one["users"]
    assert row["users_mid_answer"] == one["users_mid_answer"]
    assert row["block_size"] == direct["block_size"]
    assert row["model"] == direct["model"]


def test_every_row_is_the_tool_s_answer_on_the_text_it_scraped(fleet: dict[str, Any]) -> None:
    code, out = _fleet_json(fleet["url"])
    assert code == 0
    rows = _rows_by_instance(out)
    t = fleet["targets"]
    # One row per engine: A, B, D and E one each, C two.
    assert len(rows) == 6
    for name, (stand_in, path) in fleet["served"].items():
        for (instance, _engine), row in rows.items():
            if instance == stand_in.target:
                assert row["status"] == "up", (name, row)
                _check_against_direct(row, path)
    # The hand-worked figures (module docstring).
    a, b = rows[(t["A"], "0")], rows[(t["B"], "0")]
    assert (a["num_blocks"], a["block_size"], a["users"]) == (753, 32, 37)
    assert (b["num_blocks"], b["block_size"], b["users"]) == (753, 32, 37)
    assert (a["preemptions"], a["num_requests"], a["peak_running"]) == (13, 49, 44)
    assert (a["mean_prompt_tokens"], a["mean_output_tokens"]) == (512.0, 128.0)
    assert (b["preemptions"], b["num_requests"], b["mean_prompt_tokens"]) == (0, 0, None)
    assert [rows[(t["C"], e)]["users"] for e in ("0", "1")] == [37, 37]
    assert rows[(t["D"], None)]["users"] == 38  # V0: no null block, one kept free
    assert rows[(t["E"], "0")]["users"] == 37
    totals = {row["model"]: row for row in out["totals"]}
    assert totals["Qwen/Qwen3-8B"]["users"] == 149  # 37 + 37 + 38 + 37
    assert totals[SNAPSHOT]["users"] == 74  # 37 + 37
    assert totals[SNAPSHOT]["preemptions"] == 13
    assert totals[SNAPSHOT]["status"] == "2 of 2 up"


def test_by_instance_folds_an_instance_s_engines_as_its_log_report_does(
    fleet: dict[str, Any],
) -> None:
    code, out = _fleet_json(fleet["url"], "--by", "instance")
    assert code == 0
    rows = {row["instance"]: row for row in out["servers"]}
    assert len(rows) == 5
    c = rows[fleet["targets"]["C"]]
    assert c["users"] == _direct(DP2)["users"] == 74  # 37 + 37 over DP0 and DP1


def test_the_formats_and_the_gate(fleet: dict[str, Any], tmp_path: Path) -> None:
    url = fleet["url"]
    r = run("--prometheus", url, "--format", "csv")
    assert r.exit_code == 0
    head, *lines = r.stdout.splitlines()
    assert head.startswith("instance,engine,model,status,num_blocks,block_size,pool_tokens,users")
    assert len(lines) == 8  # 6 servers + 2 model totals
    r = run("--prometheus", url, "--format", "markdown")
    assert r.exit_code == 0 and "| total |  | Qwen/Qwen3-8B | 4 of 4 up |" in r.stdout
    r = run("--prometheus", url)
    assert r.exit_code == 0 and r.stdout.startswith("== vllm-logread fleet: 6 vLLM servers (6 up)")
    # The gate is on each model's total: 74 < 100 fails, 149 passes.
    summary = tmp_path / "summary.md"
    r = CliRunner(env={"GITHUB_STEP_SUMMARY": str(summary)}).invoke(
        main, ["--prometheus", url, "--format", "github", "--min-users", "100"]
    )
    assert r.exit_code == 1
    assert f"{SNAPSHOT}: only 74 users over 2 of 2 servers answering" in r.stderr
    assert "Qwen/Qwen3-8B: only" not in r.stderr
    assert "::error title=vllm-logread --min-users::" in r.stdout
    assert "## vllm-logread: the fleet" in summary.read_text(encoding="utf-8")
    assert run("--prometheus", url, "--min-users", "74").exit_code == 0


def test_a_bad_query_is_prometheus_s_own_message(fleet: dict[str, Any]) -> None:
    with pytest.raises(InputError, match=r"Prometheus rejected 'max_over_time\(up\)': bad_data"):
        Prometheus(fleet["url"]).query("max_over_time(up)")


def test_a_server_that_stops_is_a_row_marked_down_the_rest_unchanged(
    fleet: dict[str, Any],
) -> None:
    # The last of the tests on the fixture (file order): it stops B for good.
    url, t = fleet["url"], fleet["targets"]
    _, before = _fleet_json(url)
    stand_in, _ = fleet["served"]["B"]
    stand_in.stop()
    wait_until(
        "Prometheus saw B down",
        lambda: any(float(r["value"][1]) == 0 for r in query(url, f'up{{instance="{t["B"]}"}}')),
        timeout_s=15,
    )
    code, after = _fleet_json(url, not_up=frozenset({t["B"]}))
    assert code == 0
    rows, old = _rows_by_instance(after), _rows_by_instance(before)
    b = rows[(t["B"], "0")]
    assert b["status"] == "down" and b["users"] == 37  # its pool as last scraped
    assert "up == 0" in b["note"]
    for key, row in rows.items():
        if key != (t["B"], "0"):
            assert row == old[key]
    totals = {row["model"]: row for row in after["totals"]}
    assert totals[SNAPSHOT]["users"] == 37  # A alone; B not counted
    assert totals[SNAPSHOT]["status"] == "1 of 2 up"
    assert totals["Qwen/Qwen3-8B"]["users"] == 149


# -- without a Prometheus: errors, each a clear message and its exit code ---------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _FakeApi:
    """An HTTP server whose every GET answers ``body`` with ``status`` (or drips)."""

    def __init__(self, body: bytes, *, status: int = 200, drip_s: float = 0.0) -> None:
        owner = self
        self.body, self.status, self.drip_s = body, status, drip_s

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_response(owner.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                if owner.drip_s:
                    for byte in owner.body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(owner.drip_s)
                else:
                    self.wfile.write(owner.body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_unreachable_is_exit_2_one_line() -> None:
    r = run("--prometheus", f"http://127.0.0.1:{_free_port()}")
    assert r.exit_code == 2
    assert "cannot reach Prometheus" in r.stderr and "Traceback" not in r.output


def test_not_a_prometheus_http_error_is_exit_2() -> None:
    api = _FakeApi(b"404 page not found", status=404)
    try:
        r = run("--prometheus", api.url)
    finally:
        api.close()
    assert r.exit_code == 2
    assert "HTTP 404 that is not Prometheus' API" in r.stderr


def test_no_vllm_series_is_exit_3() -> None:
    empty = b'{"status":"success","data":{"resultType":"vector","result":[]}}'
    api = _FakeApi(empty)
    try:
        r = run("--prometheus", api.url)
    finally:
        api.close()
    assert r.exit_code == 3
    assert "no vllm:cache_config_info series in the last 1h" in r.stderr


def test_a_dripping_answer_does_not_hold_us() -> None:
    api = _FakeApi(b'{"status":"success","data":{}}' * 100, drip_s=0.05)
    started = time.monotonic()
    try:
        with pytest.raises(InputError, match="no answer within 1 s"):
            Prometheus(api.url, timeout_s=1.0).query("up")
    finally:
        api.close()
    assert time.monotonic() - started < 3


def test_options_that_do_not_go_with_prometheus_are_usage_errors() -> None:
    r = run("--prometheus", "http://127.0.0.1:1", str(V0))
    assert r.exit_code == 2 and "does not take FILE" in r.stderr
    r = run("--prometheus", "http://127.0.0.1:1", "--since", "1.5h")
    assert r.exit_code == 2 and "--since '1.5h'" in r.stderr
    r = run("--prometheus", "http://127.0.0.1:1", "--prompt", "256,512")
    assert r.exit_code == 2 and "one workload" in r.stderr
    # a mix or a shared prefix is not read from Prometheus: refused, not silently dropped
    r = run(
        "--prometheus",
        "http://127.0.0.1:1",
        "--workload",
        str(SAMPLES.parent / "tests/data/mix_seed.csv"),
    )
    assert r.exit_code == 2 and "does not take --workload" in r.stderr
    r = run("--prometheus", "http://127.0.0.1:1", "--shared-prefix", "64")
    assert r.exit_code == 2 and "does not take --shared-prefix" in r.stderr


def test_since_is_prometheus_duration() -> None:
    assert parse_since("2d") == 172_800  # 2 x 86,400 s


def test_a_server_that_stops_publishing_its_pool_is_stale(fleet: dict[str, Any]) -> None:
    # After the test above (file order): E still answers its scrapes (up == 1)
    # but its text has no vLLM series any more, as a vLLM restarting behind a
    # proxy would; Prometheus marks its series stale at that scrape.
    url, t = fleet["url"], fleet["targets"]
    stand_in, _ = fleet["served"]["E"]
    with stand_in.lock:
        stand_in.texts = [b"# HELP process_cpu_seconds_total CPU\nprocess_cpu_seconds_total 1.0\n"]
    wait_until(
        "Prometheus marked E's series stale",
        lambda: not query(url, f'vllm:cache_config_info{{instance="{t["E"]}"}}'),
        timeout_s=15,
    )
    code, out = _fleet_json(url, not_up=frozenset({t["B"], t["E"]}))
    assert code == 0
    e = _rows_by_instance(out)[(t["E"], "0")]
    assert e["status"] == "stale" and e["users"] == 37
    assert "marked its series stale" in e["note"]
    totals = {row["model"]: row for row in out["totals"]}
    assert totals["Qwen/Qwen3-8B"]["users"] == 112  # 149 - E's 37
    assert totals["Qwen/Qwen3-8B"]["status"] == "3 of 4 up"


def test_a_scrape_older_than_two_intervals_is_stale() -> None:
    from vllm_logread.read.prometheus import _status

    engine = (("instance", "a:8000"), ("job", "vllm"), ("engine", "0"))
    # Scraped 5 s ago: every 1 s is due, so 5 > 2 x 1 is stale; every 15 s is not (5 <= 30).
    common: dict[str, Any] = {"ages_s": {engine: 5.0}, "up": {("a:8000", "vllm"): 1.0}}
    assert _status([engine], intervals={("a:8000", "vllm"): 1.0}, **common)[0] == "stale"
    assert _status([engine], intervals={("a:8000", "vllm"): 15.0}, **common) == ("up", "")
    down = {**common, "up": {("a:8000", "vllm"): 0.0}}
    assert _status([engine], intervals={}, **down)[0] == "down"


def test_an_answer_over_the_size_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import vllm_logread.read.prometheus as prometheus

    monkeypatch.setattr(prometheus, "MAX_RESPONSE_BYTES", 100)
    api = _FakeApi(b'{"status":"success","data":{}}' * 10)  # 300 bytes
    try:
        with pytest.raises(InputError, match="over 100 bytes"):
            Prometheus(api.url).query("up")
    finally:
        api.close()


class _Answers(Prometheus):
    """A Prometheus whose answers are given per query (the rest: no series)."""

    def __init__(self, answers: dict[str, list[tuple[dict[str, str], float]]]) -> None:
        self.url = "http://prometheus.test:9090"
        self.answers = answers

    def query(self, promql: str) -> list[Any]:
        from vllm_logread.read.prometheus import Series

        return [Series(labels=dict(lb), value=v) for lb, v in self.answers.get(promql, [])]

    def scrape_intervals_s(self) -> dict[tuple[str, str], float]:
        return {("a:8000", "vllm"): 15.0}


def test_a_restart_in_the_window_keeps_the_pool_scraped_now_and_counts_no_preemptions() -> None:
    from vllm_logread.read.prometheus import read_fleet
    from vllm_logread.report.model import Options
    from vllm_logread.session.fleet import fleet_of

    target = {"instance": "a:8000", "job": "vllm", "engine": "0"}
    old = {**target, "block_size": "32", "num_gpu_blocks": "753", "cache_dtype": "auto"}
    new = {**target, "block_size": "16", "num_gpu_blocks": "1506", "cache_dtype": "auto"}
    gauge = {**target, "model_name": "Qwen/Qwen3-8B"}
    w = "[1h]"
    answers = {
        f"last_over_time(vllm:cache_config_info{w})": [(old, 1.0), (new, 1.0)],
        "time() - timestamp(vllm:cache_config_info)": [(new, 3.0)],  # the new one is scraped now
        "up": [({"instance": "a:8000", "job": "vllm"}, 1.0)],
        f"last_over_time(vllm:num_requests_running{w})": [(gauge, 5.0)],
        f"last_over_time(vllm:num_requests_waiting{w})": [(gauge, 0.0)],
        f"max_over_time(vllm:num_requests_running{w})": [(gauge, 40.0)],
        f"max_over_time(vllm:num_preemptions_total{w}) - "
        f"min_over_time(vllm:num_preemptions_total{w})": [(gauge, 20.0)],
        f"resets(vllm:num_preemptions_total{w})": [(gauge, 1.0)],  # the restart
    }
    read = read_fleet(_Answers(answers))
    (server,) = read.servers
    assert server.status == "up"  # scraped 3 s ago, every 15 s
    assert server.peak_running == 40
    assert server.preemptions is None  # 20 - 0 across a reset is no count
    assert server.notes == (PoolConfigChangedInWindow(), RestartedInWindow())
    fleet = fleet_of(read, Options())
    (row,) = fleet.rows
    # The new pool: 1,506 blocks of 16; 640 / 16 = 40 blocks; (1,506 - 1) // 40 = 37.
    assert (row.same("num_blocks"), row.same("block_size"), row.users) == (1506, 16, 37)


def test_by_must_be_label_names() -> None:
    r = run("--prometheus", "http://127.0.0.1:1", "--by", "instance,pod-name")
    assert r.exit_code == 2 and "--by 'pod-name': not a Prometheus label name" in r.stderr
