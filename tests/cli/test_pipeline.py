"""The session: when a report comes, echo placement, serving mode, the CLI's
read loop (echo, --json load, --stats-csv)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.read.scanner import MAX_LINE_BYTES
from vllm_logread.read.serving import hand_back
from vllm_logread.report.model import Options
from vllm_logread.session.events import Output
from vllm_logread.session.inputs import run
from vllm_logread.session.session import QUIET_MISSING_ENGINE_S, QUIET_S, Session

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"
RISING = ROOT / "sample_logs" / "load_rising_qwen3-8b_l4.log"
PREEMPT = ROOT / "sample_logs" / "load_preempt_qwen3-8b_l4.log"


def session(keep_all_facts: bool = False) -> Session:
    return Session("-", Options(), keep_all_facts=keep_all_facts)


def report_lines(lines: list[str]) -> list[int]:
    """Feed line by line; the 1-based lines after which a report came."""
    s = session()
    out = []
    for i, line in enumerate(lines, 1):
        if any(o.kind == "report" for o in s.feed(line.encode() + b"\n")):
            out.append(i)
    return out


def test_seed_reports_on_its_pool_line() -> None:
    lines = SEED.read_text().splitlines()
    pool = next(i for i, x in enumerate(lines, 1) if "KV cache size" in x)
    assert report_lines(lines) == [pool] == [16]


H = "(EngineCore_DP0 pid=7) INFO 05-01 10:00:00 [x.py:1] "
V1_CONFIG = (
    H + "Initializing a V1 LLM engine (v{v}) with config: model='m', tensor_parallel_size={tp}, "
    "data_parallel_size=1"
)
POOL = H + "GPU KV cache size: 24,096 tokens"
CONC = H + "Maximum concurrency for 8,192 tokens per request: 2.94x"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # 0.8-0.27: the concurrency line follows the pool line.
        ([V1_CONFIG.format(v="0.11.0", tp=1), POOL, CONC, "x"], [3]),
        # Before 0.11.1 every TP worker repeats the pair: wait for the last.
        ([V1_CONFIG.format(v="0.10.0", tp=2), POOL, CONC, POOL, CONC], [5]),
        # 0.11.1+: printed once, however many workers.
        ([V1_CONFIG.format(v="0.12.0", tp=2), POOL, CONC], [3]),
        # V0 before 0.6.3 prints no concurrency line: the blocks line completes it.
        (
            [
                "INFO 05-01 10:00:00 llm_engine.py:1] Initializing an LLM engine (v0.5.3) with "
                "config: model='m'",
                "INFO 05-01 10:00:01 gpu_executor.py:1] # GPU blocks: 1506, # CPU blocks: 2048",
            ],
            [2],
        ),
        # A line of another kind after the pool closes it (here a stats line).
        (
            [
                POOL,
                "INFO 05-01 10:00:09 [loggers.py:1] Avg prompt throughput: 0.0 tokens/s, Avg "
                "generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV "
                "cache usage: 0.0%",
            ],
            [2],
        ),
    ],
    ids=["v1-two-lines", "tp-repeats", "v0.12-once", "v0-old", "closed-by-stats"],
)
def test_report_comes_when_the_boot_has_said_it_all(lines: list[str], expected: list[int]) -> None:
    assert report_lines(lines) == expected


def test_data_parallel_waits_for_every_engine() -> None:
    cfg = (
        "(EngineCore_DP{n} pid=7) INFO 05-01 10:00:00 [core.py:1] Initializing a V1 LLM engine "
        "(v0.11.0) with config: model='m', data_parallel_size=2"
    )
    pool = "(EngineCore_DP{n} pid=7) INFO 05-01 10:00:00 [x.py:1] GPU KV cache size: 24,096 tokens"
    conc = (
        "(EngineCore_DP{n} pid=7) INFO 05-01 10:00:00 [x.py:1] Maximum concurrency for 8,192 "
        "tokens per request: 2.94x"
    )
    lines = [cfg.format(n=0), cfg.format(n=1), pool.format(n=0), conc.format(n=0)]
    lines += [pool.format(n=1), conc.format(n=1)]
    assert report_lines(lines) == [6]
    s = session()
    s.feed("\n".join(lines[:4]).encode() + b"\n")
    assert s.quiet_timeout() == QUIET_MISSING_ENGINE_S


def test_silence_reports_a_pool_whose_version_is_unknown() -> None:
    s = session()
    assert s.feed(POOL.encode() + b"\n") == []  # might a concurrency line follow?
    assert s.quiet_timeout() == QUIET_S
    assert [o.kind for o in s.quiet()] == ["report"]
    assert s.quiet_timeout() is None and s.quiet() == []


def _echo_run(data: bytes, chunk: int) -> list[Output]:
    class Chunks(io.RawIOBase):
        def __init__(self) -> None:
            self.pos = 0

        def readable(self) -> bool:
            return True

        def read1(self, n: int = -1) -> bytes:  # what a pipe gives: up to `chunk` bytes
            out = data[self.pos : self.pos + min(n, chunk)]
            self.pos += len(out)
            return out

    return list(run(session(), Chunks(), echo=True))


@pytest.mark.parametrize("chunk", [1 << 20, 100, 7])
def test_echo_passes_every_byte_and_inserts_outputs_after_their_line(chunk: int) -> None:
    data = RISING.read_bytes()
    outs = _echo_run(data, chunk)
    assert b"".join(o.data for o in outs if o.kind == "echo") == data
    # Where each output sits: the number of newlines echoed before it.
    at, seen = {}, 0
    for o in outs:
        if o.kind == "echo":
            seen += o.data.count(b"\n")
        else:
            at.setdefault(o.kind, []).append((o.line, seen))
    assert at["report"] == [(16, 16)]
    assert at["alert"] == [(37, 37), (37, 37), (40, 40), (40, 40)]
    assert at["summary"] == [(None, 52)]


def test_over_long_lines_keep_the_line_numbers_right() -> None:
    long = b"x" * (MAX_LINE_BYTES * 3) + b"\n"
    data = RISING.read_bytes()
    cut = data.index(b"(APIServer pid=1) INFO 11-29 10:01:55")
    s = session()
    outs = []
    for piece in (data[:cut], long[:70_000], long[70_000:], data[cut:]):
        outs += s.feed(piece)
    outs += s.finish()
    assert [o.line for o in outs if o.kind == "alert"] == [38, 38, 41, 41]  # one line later
    assert s.lines_read == 53


def test_utf16_logs_stay_in_boot_mode_and_still_report() -> None:
    s = session()
    outs = s.feed(b"\xff\xfe" + RISING.read_text().encode("utf-16-le")) + s.finish()
    assert [o.kind for o in outs].count("report") == 1
    assert s.load_of(s.last_boot).num_stats_lines == 11  # type: ignore[union-attr]


def test_restart_with_new_pids_is_a_new_boot_in_both_modes() -> None:
    first = RISING.read_bytes()
    second = first.replace(b"pid=200", b"pid=300").replace(b"pid=1)", b"pid=2)")
    for keep in (False, True):
        s = session(keep)
        outs = s.feed(first) + s.feed(second) + s.finish()
        assert [o.kind for o in outs if o.kind in ("report", "summary")] == [
            "report",
            "summary",
            "report",
            "summary",
        ]
        assert len(s.tracker.boots) == 2


def run_cli(*args: str, stdin: bytes | None = None):
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


@pytest.mark.parametrize("log", [RISING, PREEMPT], ids=["rising", "preempt"])
def test_cli_load_lines_golden(log: Path) -> None:
    r = run_cli(str(log), "--no-echo")
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    golden = log.with_suffix(".load.txt").read_text()
    assert out[out.index("== vllm-logread load") :] == golden


def test_cli_echo_is_the_default_on_stdin_and_json_never_mixes() -> None:
    data = RISING.read_bytes()
    r = run_cli(stdin=data)
    assert r.exit_code == 0
    assert r.stdout.startswith(data[:200].decode())
    assert "=" * 30 + " vllm-logread " + "=" * 30 + "\n== vllm-logread: 37 users fit" in r.stdout
    j = run_cli("--json", stdin=data)
    assert j.exit_code == 0
    obj = json.loads(j.stdout)
    assert (
        obj["load"]["verdict"] == "40 running at 99.5%: consistent with 37 to 41 users of 512+128"
    )
    bad = run_cli("--json", "--echo", stdin=data)
    assert bad.exit_code == 2 and "--echo" in bad.stderr


def test_cli_stats_csv(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from vllm_logread.render.tables import STATS_COLUMNS, read_stats_csv

    csv = tmp_path / "stats.csv"
    r = run_cli(str(RISING), "--no-echo", "--stats-csv", str(csv))
    assert r.exit_code == 0, r.stderr
    frame = read_stats_csv(str(csv))
    assert tuple(frame.columns) == STATS_COLUMNS
    assert list(frame["running"]) == [0, 8, 16, 24, 32, 38, 40, 40, 40, 22, 0]
    assert list(frame["kv_usage_pct"])[6] == 99.5
    assert list(frame["line"])[:2] == [22, 25]
    assert frame["time"].iloc[0] == "11-29 10:01:05" and frame["engine"].iloc[0] == "000"
    assert list(frame["generation_tps"])[1] == 52.3


def test_cli_stats_csv_bad_path_is_a_usage_error(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    r = run_cli(str(RISING), "--stats-csv", str(tmp_path / "no" / "such" / "dir.csv"))
    assert r.exit_code == 2 and "cannot write" in r.stderr


def test_a_late_data_parallel_engine_is_not_a_restart() -> None:
    """DP1's config line after DP0's report (the config did not say DP=2) is
    the same boot: its engine has no pool yet."""
    cfg = (
        "(EngineCore_DP{n} pid=7{n}) INFO 05-01 10:00:00 [core.py:1] Initializing a V1 LLM "
        "engine (v0.30.0) with config: model='m'"
    )
    pool = (
        "(EngineCore_DP{n} pid=7{n}) INFO 05-01 10:00:00 [x.py:1] GPU KV cache size: 24,096 "
        "tokens, Maximum concurrency for 8,192 tokens per request: 2.94x"
    )
    lines = [cfg.format(n=0), pool.format(n=0), cfg.format(n=1), pool.format(n=1)]
    s = session()
    s.feed("\n".join(lines).encode() + b"\n")
    assert len(s.tracker.boots) == 1
    assert [e.key for e in s.tracker.current.pool_engines] == ["DP0", "DP1"]


@pytest.mark.parametrize(
    "line",
    [
        b"(APIServer pid=1) INFO 11-29 10:00:01 [api_server.py:1839] vLLM API server version 0.11.0",
        b"INFO 02-10 14:20:01 llm_engine.py:232] Initializing an LLM engine (v0.7.2) with config:",
        "(APIServer pid=1) INFO 11-29 10:00:01 [utils.py:1] ▀▄▀ vLLM".encode(),
        b"(EngineCore pid=200) INFO 11-29 10:00:40 [kv_cache_utils.py:1087] GPU KV cache size: 1",
        b"INFO 02-10 14:20:33 executor_base.py:110] # CUDA blocks: 27927, # CPU blocks: 2048",
        b"INFO 02-10 14:20:33 cpu_executor.py:110] # CPU blocks: 1170",
    ],
    ids=["banner", "v0-engine", "logo", "v1-pool", "v0-pool", "cpu-pool"],
)
def test_serving_mode_hands_back_boot_and_pool_lines(line: bytes) -> None:
    """Each line boot mode must read is found among access lines by its rare
    byte, at any place in a buffer (patterns.HAND_BACK_HEADS)."""
    access = b'INFO:     10.0.0.1:4000 - "POST /v1/completions HTTP/1.1" 200 OK\n' * 50
    buf = access + line + b"\n" + access
    assert hand_back(buf, 0, len(buf)) == len(access)
    assert hand_back(access * 2, 0, len(access) * 2) == len(access) * 2
