"""Hostile input: a documented exit code and a readable line, never a traceback or a hang.

CI feeds the tool whatever a failed boot left behind. Every case here ends in
an exit code of the README's table (0 ok, 1 gate, 2 usage or unreadable input,
3 no pool, 4 contradiction), with no traceback, in bounded time and memory,
and says on stderr what was wrong, where, and what to try. The safety tests
at the end check that a run never opens a socket, never imports code a config
names, and never writes a file it was not asked to.

Most cases run the CLI in-process (click's CliRunner, stdout and stderr apart);
the large inputs, the FIFO and the memory bound run the installed command.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from strategies import (
    POOL_TOKEN_KINDS,
    SAMPLE_LOGS,
    damaged_logs,
    garbage_bytes,
    row_line_with_value,
    unstated_values,
)

from vllm_logread.boot.boots import POOL_KINDS, SGLANG_POOL_KINDS
from vllm_logread.cli.commands import main
from vllm_logread.report.model import Options
from vllm_logread.session.session import Session

SEED = (SAMPLE_LOGS / "seed_qwen3-8b_l4.log").read_bytes()
SEED_USERS = 37  # 24,096 tokens / 16 = 1,506 blocks - 1 null = 1,505 // 40 blocks per user
H = b"INFO 11-29 10:00:40 [kv_cache_utils.py:1087] "
# A fragment that names no model is read as plain attention only when its figures confirm
# it (tests/answer/test_nameless.py); the fragments below that test other things name the seed's
# model (plain: the shipped table), so that their users stay the seed's 37.
NAMED = b"INFO 11-29 10:00:01 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B'}\n"
EXE = Path(sys.executable).with_name("vllm-logread")
# A minimal config.json of Qwen/Qwen3-8B: 36 x 8 x 128 x 2 x 2 = 147,456 B per token.
QWEN3_8B = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "hidden_size": 4096,
    "torch_dtype": "bfloat16",
}


# -- helpers -------------------------------------------------------------------


def cli(*args: str, input: bytes | None = None) -> Result:
    """Run the CLI in-process; an exception other than SystemExit is a traceback."""
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        tb = "".join(traceback.format_exception(*result.exc_info))
        pytest.fail(f"traceback instead of an exit code:\n{tb}")
    return result


def check(
    result: Any, code: int, *needles: str, stderr_lines: int | None = None, max_line: int = 1200
) -> list[str]:
    """Exit ``code``, no traceback, stderr readable and saying ``needles``.

    Returns stderr's lines. ``stderr_lines`` pins how many there are.
    """
    out = result.stdout if isinstance(result.stdout, str) else result.stdout.decode()
    err = result.stderr if isinstance(result.stderr, str) else result.stderr.decode()
    code_got = result.exit_code if hasattr(result, "exit_code") else result.returncode
    assert code_got == code, f"exit {code_got}, expected {code}; stderr:\n{err[-3000:]}"
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.splitlines()
    for line in lines:
        assert line.isprintable(), f"unprintable stderr line: {line[:200]!r}"
        if not line.startswith("Error: Invalid value for"):  # click quotes the argument given
            assert len(line) <= max_line, f"stderr line of {len(line)} characters"
    for needle in needles:
        assert needle in err, f"{needle!r} not in stderr:\n{err[-3000:]}"
    if stderr_lines is not None:
        assert len(lines) == stderr_lines, lines
    return lines


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def json_of(result: Result) -> dict[str, Any]:
    obj = json.loads(result.stdout)
    assert isinstance(obj, dict)
    return obj


def bounded_run(
    args: list[str], *, timeout_s: float = 60, stdin: Any = subprocess.DEVNULL
) -> tuple[subprocess.CompletedProcess[bytes], float, float]:
    """Run the installed command; return (result, seconds, its peak RSS in MiB).

    The peak is the program's own VmHWM, sampled from /proc while it runs
    (ru_maxrss would also count the pytest process it was forked from). A
    timer kills it past ``timeout_s``, so a hang fails the test instead of
    stalling the suite.
    """
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.perf_counter()
    peak_kib = [0]
    done = threading.Event()

    def sample(pid: int) -> None:
        while not done.is_set():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                return
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    peak_kib[0] = max(peak_kib[0], int(line.split()[1]))
            done.wait(0.005)

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([str(EXE), *args], stdin=stdin, stdout=out, stderr=err, env=env)
        timer = threading.Timer(timeout_s, proc.kill)
        sampler = threading.Thread(target=sample, args=(proc.pid,), daemon=True)
        timer.start()
        sampler.start()
        try:
            _, status, _ = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            done.set()
            sampler.join()
            if proc.stdin is not None:
                proc.stdin.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())
    assert proc.returncode != -9, f"killed after {timeout_s} s: a hang"
    return result, seconds, peak_kib[0] / 1024


# -- point 1: hostile logs, one case each ----------------------------------------


NO_POOL = "no KV cache pool line"


def _utf16(enc: str, bom: bytes) -> bytes:
    return bom + SEED.decode().encode(enc)


# (id, log bytes, extra args, exit code, stderr needles, users or None)
LOG_CASES: list[tuple[str, bytes, tuple[str, ...], int, tuple[str, ...], int | None]] = [
    (
        "empty",
        b"",
        (),
        3,
        (NO_POOL, "no vLLM lines at all", "0 lines read", "Was the log cut"),
        None,
    ),
    ("whitespace_only", b" \t\n\r\n  \n" * 1000, (), 3, (NO_POOL, "3,000 lines read"), None),
    (
        "random_bytes",
        bytes((i * 7919 + 13) % 251 for i in range(1 << 16)),
        (),
        3,
        (NO_POOL, "no vLLM lines at all"),
        None,
    ),
    ("invalid_utf8_only", b"\xff\xc3\x28\xa0\xa1\xe2\x28\xa1\n" * 100, (), 3, (NO_POOL,), None),
    (
        "invalid_utf8_between_lines",
        SEED.replace(b"\n(Engine", b"\n\xc3\x28\xff\n(Engine"),
        (),
        0,
        (),
        SEED_USERS,
    ),
    ("utf16_le_bom", _utf16("utf-16-le", b"\xff\xfe"), (), 0, (), SEED_USERS),
    ("utf16_be_bom", _utf16("utf-16-be", b"\xfe\xff"), (), 0, (), SEED_USERS),
    ("utf16_bom_then_garbage", b"\xff\xfe\x00\xd8\x00\xdcG\x00\xd8x", (), 3, (NO_POOL,), None),
    ("utf8_bom", b"\xef\xbb\xbf" + SEED, (), 0, (), SEED_USERS),
    ("nul_bytes_only", b"\x00" * (1 << 20), (), 3, (NO_POOL,), None),
    # A crash leaves a block of NULs at the end of a log file.
    ("nul_tail", SEED + b"\x00" * 4096, (), 0, (), SEED_USERS),
    (
        "nul_inside_pool_number",
        SEED.replace(b"24,096", b"24,\x00096"),
        (),
        3,
        ("pool_tokens: line has 'KV cache size: ' but not its known wording", NO_POOL),
        None,
    ),
    (
        "digits_10k_in_pool",
        H + b"GPU KV cache size: " + b"9" * 10_000 + b" tokens\n",
        (),
        3,
        (":1: pool_tokens: line has 'KV cache size: '", NO_POOL),
        None,
    ),
    (
        "digits_10k_in_kv_memory",
        SEED.replace(b"memory: 3.31 GiB", b"memory: " + b"9" * 10_000 + b" GiB"),
        (),
        0,
        (":15: available_kv: line has 'Available KV cache memory'",),
        SEED_USERS,
    ),
    (
        "nan_concurrency",
        NAMED + H + b"GPU KV cache size: 24,096 tokens\n"
        b"INFO 11-29 10:00:40 [x.py:1] Maximum concurrency for 0 tokens per request: nanx\n",
        (),
        0,
        (":3: max_concurrency: 'nan' is not a finite number",),
        SEED_USERS,
    ),
    (
        "inf_kv_memory",
        SEED.replace(b"3.31 GiB", b"inf GiB"),
        (),
        0,
        (":15: available_kv_gib: 'inf' is not a finite number",),
        SEED_USERS,
    ),
    # vLLM prints a negative KV memory and then fails: no pool line follows.
    (
        "negative_kv_memory_then_crash",
        H + b"Available KV cache memory: -2.14 GiB\n"
        b"ERROR 11-29 10:00:40 [core.py:1] ValueError: No available memory for the cache blocks.\n",
        (),
        3,
        # The log says why: the failure, not the generic "no pool" line.
        ("the boot serves nobody: available KV cache memory is -2.14 GiB",),
        None,
    ),
    ("zero_pool_tokens", H + b"GPU KV cache size: 0 tokens\n", (), 0, (), 0),
    # V0 raises "No available memory for the cache blocks" on an empty pool: a
    # failed boot (exit 3), 0 users.
    (
        "zero_gpu_blocks",
        H + b"# GPU blocks: 0, # CPU blocks: 0\n",
        (),
        3,
        ("the pool has 0 blocks",),
        0,
    ),
    (
        "zero_pool_gate",
        H + b"GPU KV cache size: 0 tokens\n",
        ("--min-users", "1"),
        1,
        ("only 0 users fit",),
        0,
    ),
    # A negative pool makes no sense: reported, never divided by, users unknown.
    ("negative_pool", H + b"GPU KV cache size: -24,096 tokens\n", (), 0, (), None),
    (
        "negative_pool_gate",
        H + b"GPU KV cache size: -24,096 tokens\n",
        ("--min-users", "1"),
        1,
        ("--min-users 1: unknown users fit at 512+128 tokens",),
        None,
    ),
    # "# GPU blocks" takes no sign: a negative count is not a pool line.
    ("negative_gpu_blocks", H + b"# GPU blocks: -5, # CPU blocks: 0\n", (), 3, (NO_POOL,), None),
    # Non-physical lengths and block sizes are never divided by.
    (
        "negative_max_model_len",
        H
        + b"vLLM API server version 0.22.0\n"
        + H
        + b"Using max model len -5\n"
        + H
        + b"GPU KV cache size: 24,095 tokens\n",
        (),
        0,
        (),
        None,
    ),
    (
        "negative_concurrency_tokens",
        NAMED
        + H
        + b"Using max model len -8192\n"
        + H
        + b"GPU KV cache size: 24,096 tokens, Maximum concurrency for -8,192 tokens per request: 2.94x\n",
        (),
        0,
        (),
        SEED_USERS,
    ),
    (
        "zero_block_size",
        SEED.replace(b"'max_model_len': 8192}", b"'max_model_len': 8192, 'block_size': 0}"),
        (),
        0,
        (),
        SEED_USERS,
    ),
    (
        "zero_max_model_len",
        SEED.replace(b"Using max model len 8192", b"Using max model len 0")
        .replace(b"max_seq_len=8192", b"max_seq_len=0")
        .replace(b"'max_model_len': 8192", b"'max_model_len': 0"),
        (),
        0,
        (),
        SEED_USERS,
    ),
    # 0 tokens is no request: vLLM rejects an empty prompt and max_tokens 0.
    (
        "prompt_zero",
        SEED,
        ("--prompt", "0", "--output", "0"),
        2,
        ("Invalid value for '--prompt': 0 is not in the range 1<=x<=10000000",),
        None,
    ),
    ("workload_at_maximum", SEED, ("--prompt", "10000000", "--output", "10000000"), 0, (), 0),
    (
        "prompt_negative",
        SEED,
        ("--prompt", "-1"),
        2,
        ("Invalid value for '--prompt': -1 is not in the range 1<=x<=10000000",),
        None,
    ),
    (
        "prompt_10k_digits",
        SEED,
        ("--prompt", "9" * 10_000),
        2,
        ("Invalid value for '--prompt'",),
        None,
    ),
    ("prompt_not_a_number", SEED, ("--output", "nan"), 2, ("'nan' is not a valid integer",), None),
    (
        "min_users_negative",
        SEED,
        ("--min-users", "-1"),
        2,
        ("Invalid value for '--min-users'",),
        None,
    ),
    (
        "block_size_zero_option",
        SEED,
        ("--block-size", "0"),
        2,
        ("Invalid value for '--block-size'",),
        None,
    ),
]


@pytest.mark.parametrize(
    ("data", "args", "code", "needles", "users"),
    [c[1:] for c in LOG_CASES],
    ids=[c[0] for c in LOG_CASES],
)
def test_hostile_log(
    tmp_path: Path,
    data: bytes,
    args: tuple[str, ...],
    code: int,
    needles: tuple[str, ...],
    users: int | None,
) -> None:
    path = write(tmp_path, "server.log", data)
    lines = check(cli(path, *args), code, *needles)
    if code == 2:
        assert lines[-1].startswith("Error: ")
        return
    if code == 3:
        # It says what was wrong (no pool, or why the boot serves nobody), where
        # (the file) and what to try.
        said = [ln for ln in lines if ln.startswith(f"{path}")]
        assert said and (NO_POOL in said[-1] or "the boot serves nobody" in said[-1])
    result = cli(path, "--json", *args)
    check(result, code)
    obj = json_of(result)
    assert obj["users"] == users
    assert unstated_values(data, obj) == []


def test_negative_pool_is_reported_as_such(tmp_path: Path) -> None:
    path = write(tmp_path, "neg.log", H + b"GPU KV cache size: -24,096 tokens\n")
    result = cli(path)
    check(result, 0)
    assert "-24,096 tokens" in result.stdout
    assert "the pool is negative" in result.stdout
    assert "users not computed" in result.stdout
    obj = json_of(cli(path, "--json"))
    assert obj["num_blocks"] is None and obj["users"] is None and obj["what_if"] == []


def test_non_physical_lengths_are_reported_as_such(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "len.log",
        H + b"Using max model len -8192\n" + H + b"GPU KV cache size: 24,096 tokens\n",
    )
    obj = json_of(check_ok(cli(path, "--json")))
    assert obj["max_model_len"] is None
    assert any("max model len -8192" in w for w in obj["warnings"]), obj["warnings"]
    obj = json_of(
        check_ok(
            cli(
                write(
                    tmp_path,
                    "bs.log",
                    SEED.replace(
                        b"'max_model_len': 8192}", b"'max_model_len': 8192, 'block_size': 0}"
                    ),
                ),
                "--json",
            )
        )
    )
    assert obj["block_size"] == 16
    assert any("block size 0" in w for w in obj["warnings"]), obj["warnings"]


def check_ok(result: Result) -> Result:
    check(result, 0)
    return result


def test_nan_concurrency_is_not_a_fact(tmp_path: Path) -> None:
    data = (
        H
        + b"GPU KV cache size: 24,096 tokens\n"
        + H
        + b"Maximum concurrency for 0 tokens per request: nanx\n"
    )
    obj = json_of(check_ok(cli(write(tmp_path, "nan.log", data), "--json")))
    assert obj["vllm_max_concurrency"] is None
    assert [f["kind"] for f in obj["facts"]] == ["device", "pool_tokens"]


def test_negative_kv_memory_with_a_pool_contradicts_the_config(tmp_path: Path) -> None:
    """A pool line after ``Available KV cache memory: -2.14 GiB`` cannot be: with the
    model's shape known, that is a contradiction (exit 4), named on stderr."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(QWEN3_8B))
    data = SEED.replace(b"memory: 3.31 GiB", b"memory: -2.14 GiB")
    check(
        cli(write(tmp_path, "s.log", data), "--config", str(cfg)),
        4,
        "the log contradicts the model config",
        "-2.14 GiB",
    )


def test_pool_repeated_with_other_values(tmp_path: Path) -> None:
    """vLLM schedules from the smallest pool its ranks state: the later, smaller
    pool line wins and ranks_disagree says so. Here it also contradicts the
    concurrency line and the KV memory for the model (shipped table), so the
    run exits 4, naming both; text and JSON runs agree."""
    data = (
        SEED + H + b"GPU KV cache size: 48,192 tokens\n" + H + b"GPU KV cache size: 8,000 tokens\n"
    )
    path = write(tmp_path, "rep.log", data)
    result = cli(path, "--json")
    check(result, 4, "the log contradicts", "the log says 2.94x", "the log says 500")
    obj = json_of(result)
    assert obj["pool_tokens"] == 8000
    assert obj["engines"][0]["ranks_disagree"] is True
    # 8,000 / 16 = 500 blocks - 1 null = 499 // 40 = 12 would be the users, but
    # never a users figure beside a failed check.
    assert obj["users"] is None
    assert obj["engines"][0]["num_blocks"] == 500
    assert any("different pools" in w for w in obj["warnings"])
    assert unstated_values(data, obj) == []
    check(cli(path, "--min-users", "20"), 4, "the log contradicts")


LATER_POOL = (
    NAMED + H + b"GPU KV cache size: 24,096 tokens\n"
    b"INFO 11-29 10:00:52 [gpu_model_runner.py:5210] Graph capturing finished in 12 secs, "
    b"took 0.53 GiB\n"
)


def test_a_later_smaller_pool_line_is_reported_again(tmp_path: Path) -> None:
    """A file is reported once, after its last line: a later pool line of the same
    engine with other figures is the boot's last word (with a warning), and the one
    report is the one the gate holds. Through a pipe the report comes at the pool
    line and again, marked as an update, when the later line changes it."""
    data = LATER_POOL + H + b"GPU KV cache size: 8,000 tokens\n"
    result = cli(write(tmp_path, "rep.log", data), "--min-users", "20")
    check(
        result,
        1,
        "rep.log:4: the pool was stated again, with other figures",
        "--min-users 20: only 12 users fit",
    )
    reports = result.stdout.split("== vllm-logread")[1:]
    assert len(reports) == 1
    assert reports[0].startswith(": 12 users fit")  # 8,000 / 16 = 500 blocks - 1, // 40
    live = CliRunner().invoke(main, ["--no-echo", "--min-users", "20"], input=data)
    assert live.exit_code == 1
    reports = live.stdout.split("== vllm-logread")[1:]
    assert len(reports) == 2
    assert reports[0].startswith(": 37 users fit")
    assert reports[1].startswith(" (update, line 4): 12 users fit")
    assert "-:4: the pool was stated again after the report above" in live.stderr
    # A repeat with the same figures says nothing more.
    again = LATER_POOL + H + b"GPU KV cache size: 24,096 tokens\n"
    result = cli(write(tmp_path, "same.log", again))
    check(result, 0, stderr_lines=0)
    assert result.stdout.count("== vllm-logread: ") == 1


@pytest.mark.parametrize(
    "pool_line",
    [
        H + b"GPU KV cache size: 8,000 tokens\n",
        # V0's wording: its "#" is found like V1's "z" (the boot is V1 here,
        # but serving mode hands the line back on its head alone)
        b"INFO 11-29 10:00:40 [executor_base.py:40] # GPU blocks: 500, # CPU blocks: 2048\n",
    ],
    ids=["v1", "v0-wording"],
)
def test_a_later_pool_line_reaches_serving_mode_too(pool_line: bytes) -> None:
    """The same, with the pool line in a later read, after a busy stretch:
    serving mode hands a pool line back to boot mode, so it is reported as in
    one read (a file of any size gives the same as a pipe)."""
    busy = (
        b'(APIServer pid=1) INFO:     10.0.0.1:4000 - "POST /v1/completions HTTP/1.1" 200 OK\n'
        * 5000
    )
    data = LATER_POOL + busy + pool_line
    results = []
    for cuts in ([len(data)], [len(LATER_POOL), len(LATER_POOL) + len(busy), len(data)]):
        s = Session("-", Options(), keep_all_facts=False)
        outs, at = [], 0
        for cut in cuts:
            outs += s.feed(data[at:cut])
            at = cut
        outs += s.finish()
        results.append([(o.kind, o.line, o.report.users if o.report else o.text) for o in outs])
    assert results[0] == results[1]
    assert [x for x in results[0] if x[0] == "report"] == [("report", 3, 37), ("report", 5004, 12)]


# -- big inputs: the installed command, time and memory bounds ------------------


def test_100_mb_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "json.log"
    chunk = b'{"key": [1, 2, 3], "text": "GPU KV cache size", "n": 24096}, ' * 16_000  # ~1 MB
    with path.open("wb") as f:
        for _ in range(100):
            f.write(chunk)
    result, seconds, peak_mib = bounded_run([str(path)], timeout_s=60)
    lines = check(result, 3, NO_POOL, "1 lines read")
    assert lines[-1].startswith(f"{path}: {NO_POOL}")
    assert seconds < 30, seconds
    assert peak_mib < 100, peak_mib


def test_100_mb_json_line_inside_a_real_log(tmp_path: Path) -> None:
    """The issue's 2 GB line of JSON, scaled: the boot lines around it are read."""
    path = tmp_path / "mixed.log"
    head, tail = SEED.split(b"(EngineCore pid=200) INFO 11-29 10:00:40 [gpu_worker", 1)
    with path.open("wb") as f:
        f.write(head)
        f.write(b"{")
        for _ in range(100):
            f.write(b'"k": "' + b"x" * (1 << 20) + b'", ')
        f.write(b"}\n(EngineCore pid=200) INFO 11-29 10:00:40 [gpu_worker" + tail)
    result, seconds, peak_mib = bounded_run([str(path), "--json"], timeout_s=60)
    check(result, 0)
    assert json.loads(result.stdout)["users"] == SEED_USERS
    assert seconds < 30, seconds
    assert peak_mib < 100, peak_mib


def test_ten_million_empty_lines(tmp_path: Path) -> None:
    path = tmp_path / "empty_lines.log"
    path.write_bytes(b"\n" * 10_000_000)
    result, seconds, _ = bounded_run([str(path)], timeout_s=60)
    lines = check(result, 3, "10,000,000 lines read", stderr_lines=1)
    assert lines[0].startswith(f"{path}: {NO_POOL}")
    assert seconds < 30, seconds


def test_fifo_is_read_like_a_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "server.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("wb") as f:
            f.write(SEED)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result, _, _ = bounded_run([str(fifo), "--json"], timeout_s=30)
    writer.join(5)
    check(result, 0)
    assert json.loads(result.stdout)["users"] == SEED_USERS


def test_fifo_of_garbage(tmp_path: Path) -> None:
    fifo = tmp_path / "garbage.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("wb") as f:
            f.write(bytes(range(256)) * 4096)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result, _, _ = bounded_run([str(fifo)], timeout_s=30)
    writer.join(5)
    check(result, 3, NO_POOL)


# -- inputs that are not files ---------------------------------------------------


def test_directory(tmp_path: Path) -> None:
    check(cli(str(tmp_path)), 2, "is a directory, not a log file", str(tmp_path), stderr_lines=1)


def test_missing_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.log")
    check(cli(missing), 2, f"Error: {missing}: no such file", stderr_lines=1)


def test_path_through_a_file(tmp_path: Path) -> None:
    inside = write(tmp_path, "a.log", SEED) + "/x.log"
    check(cli(inside), 2, f"{inside}: cannot read it (Not a directory)", stderr_lines=1)


def test_unreadable_file() -> None:
    """Tests run as root, so chmod 000 does not stop a read; a write-only sysctl
    refuses root too (procfs checks its own mode bits)."""
    path = "/proc/sys/vm/drop_caches"
    if not os.path.exists(path) or os.access(path, os.R_OK) and _readable(path):
        pytest.skip(f"{path} is readable here: no file refuses root on this machine")
    check(cli(path), 2, f"{path}: cannot read it (Permission denied)", stderr_lines=1)


def _readable(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError:
        return False
    return True


def test_read_error_after_open() -> None:
    """/proc/self/mem opens, then its first read fails with EIO."""
    if not os.path.exists("/proc/self/mem"):
        pytest.skip("no /proc/self/mem (not Linux)")
    result, _, _ = bounded_run(["/proc/self/mem"], timeout_s=30)
    check(result, 2, "/proc/self/mem", "Input/output error", stderr_lines=1)


def test_name_too_long(tmp_path: Path) -> None:
    name = str(tmp_path / ("a" * 5000))
    check(cli(name), 2, "File name too long", stderr_lines=1, max_line=6000)


# -- --config: untrusted config.json --------------------------------------------


def _config_cases(tmp_path: Path) -> dict[str, tuple[str, int, tuple[str, ...]]]:
    d = tmp_path
    (d / "malformed.json").write_text('{"num_hidden_layers": 36,')
    (d / "not_utf8.json").write_bytes(b'{"a": "\xff\xfe"}')
    (d / "list.json").write_text("[1, 2, 3]")
    with (d / "huge.json").open("wb") as f:
        f.write(b'{"pad": "')
        f.write(b"x" * (6 << 20))
        f.write(b'"}')
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "deep_dict.json").write_text('{"a": ' * 5_000 + "1" + "}" * 5_000)
    (d / "empty.json").write_bytes(b"")
    (d / "nan.json").write_text('{"num_hidden_layers": NaN}')
    os.mkfifo(d / "fifo.json")
    (d / "folder").mkdir()
    return {
        "malformed": (str(d / "malformed.json"), 2, ("is not valid JSON",)),
        "not_utf8": (str(d / "not_utf8.json"), 2, ("is not UTF-8",)),
        "not_an_object": (str(d / "list.json"), 2, ("is not a JSON object",)),
        "huge": (str(d / "huge.json"), 2, ("refusing files over",)),
        "deep_list": (str(d / "deep.json"), 2, ("nested",)),
        "deep_dict": (str(d / "deep_dict.json"), 2, ("nested",)),
        "empty": (str(d / "empty.json"), 2, ("is not valid JSON",)),
        "missing": (str(d / "missing.json"), 2, ("missing.json",)),
        "fifo": (str(d / "fifo.json"), 2, ("is not a file",)),
        "folder_without_config": (str(d / "folder"), 2, ("config.json",)),
        "dev_zero": ("/dev/zero", 2, ("is not a file",)),
    }


CONFIG_CASE_IDS = [
    "malformed",
    "not_utf8",
    "not_an_object",
    "huge",
    "deep_list",
    "deep_dict",
    "empty",
    "missing",
    "fifo",
    "folder_without_config",
    "dev_zero",
]


@pytest.mark.parametrize("case", CONFIG_CASE_IDS)
def test_unreadable_config(tmp_path: Path, case: str) -> None:
    """A --config that cannot be read is a usage error, named on one line; the
    log is not reported with a model shape that was never read."""
    path, code, needles = _config_cases(tmp_path)[case]
    log = write(tmp_path, "s.log", SEED)
    check(cli(log, "--config", path), code, *needles, "model config", stderr_lines=1)
    lines = check(cli("kv", path), 2, path, stderr_lines=1)
    assert lines[0].startswith("Error: ")


# (config, what the one-line refusal names); None: the value is not used.
WRONG_TYPES: dict[str, tuple[dict[str, Any], str | None]] = {
    "layers_as_string": (
        {**QWEN3_8B, "num_hidden_layers": "36"},
        "num_hidden_layers must be an integer",
    ),
    "layers_negative": ({**QWEN3_8B, "num_hidden_layers": -36}, "num_hidden_layers=-36 is outside"),
    "layers_zero": ({**QWEN3_8B, "num_hidden_layers": 0}, "num_hidden_layers=0 is outside"),
    "layers_huge": ({**QWEN3_8B, "num_hidden_layers": 10**400}, "is outside [1, 10,000]"),
    "heads_float": (
        {**QWEN3_8B, "num_key_value_heads": 8.5},
        "num_key_value_heads must be an integer",
    ),
    "heads_null": (
        {**QWEN3_8B, "num_key_value_heads": None, "num_attention_heads": None},
        "no num_attention_heads",
    ),
    "head_dim_list": ({**QWEN3_8B, "head_dim": [128]}, "head_dim must be an integer"),
    "head_dim_bool": ({**QWEN3_8B, "head_dim": True}, "head_dim must be an integer, got True"),
    "model_type_number": ({**QWEN3_8B, "model_type": 7}, "model_type must be a string"),
    "layer_types_wrong_length": (
        {**QWEN3_8B, "layer_types": ["full_attention"]},
        "layer_types has 1 entries for 36 layers",
    ),
    "text_config_string": ({**QWEN3_8B, "text_config": "x"}, "text_config must be an object"),
    "sliding_window_negative": (
        {**QWEN3_8B, "sliding_window": -1, "use_sliding_window": True},
        "sliding_window=-1 is outside",
    ),
    # An unknown dtype object is not used: the log's dtype (bfloat16) is.
    "dtype_object": ({**QWEN3_8B, "torch_dtype": {"x": 1}}, None),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_config_with_wrong_types(tmp_path: Path, case: str) -> None:
    """Valid JSON whose values make no sense: never a traceback, never a shape
    built from them. Reading a log, the report goes on without the shape and
    says why; ``kv`` refuses in one line (exit 2)."""
    config, refusal = WRONG_TYPES[case]
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config))
    log = write(tmp_path, "s.log", SEED)
    obj = json_of(check_ok(cli(log, "--config", str(cfg), "--json")))
    assert obj["users"] == SEED_USERS
    if refusal is None:
        assert obj["kv_bytes_per_token"] == 147_456
        check(cli("kv", str(cfg)), 0)
        return
    assert obj["kv_bytes_per_token"] is None
    assert any(w.startswith("model config: ") and refusal in w for w in obj["warnings"]), obj[
        "warnings"
    ]
    lines = check(cli("kv", str(cfg)), 2, refusal, stderr_lines=1, max_line=2000)
    assert lines[0].startswith(f"Error: {cfg}: ")


# -- safety: no network, no code from configs, no writes ------------------------


class _NoNetwork(Exception):
    pass


def _refuse(*args: object, **kwargs: object) -> Any:
    raise _NoNetwork("the tool opened a network connection")


def test_never_opens_a_network_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "socket", _refuse)
    monkeypatch.setattr(socket, "create_connection", _refuse)
    monkeypatch.setattr(socket, "getaddrinfo", _refuse)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    log = write(tmp_path, "s.log", SEED)
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(QWEN3_8B))
    for args in (
        [log],
        [log, "--json"],
        [log, "--config", str(cfg)],
        ["kv", "Qwen/Qwen3-8B"],
        ["kv", "some-org/unknown-model"],
        ["kv", str(cfg)],
    ):
        result = CliRunner().invoke(main, args)
        assert not isinstance(result.exception, _NoNetwork), args
        assert result.exit_code in (0, 2), (args, result.stderr)


AUDIT_SCRIPT = r"""
import os, sys
FORBIDDEN_PREFIXES = ("socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn",
                      "os.fork", "os.spawn", "urllib.", "http.", "ctypes.dlopen")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
seen = []
def hook(event, args):
    if event.startswith(FORBIDDEN_PREFIXES) or event in ("os.mkdir", "os.rename", "os.remove",
            "os.rmdir", "shutil.rmtree", "shutil.move", "shutil.copyfile", "os.truncate"):
        seen.append(event)
    elif event == "open":
        path, mode, flags = args
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & WRITE_FLAGS)
        if writing and path not in (1, 2):
            seen.append(f"open for writing: {path!r}")
    elif event == "import" and args[0] in ("evil_config_module", "transformers"):
        seen.append(f"import {args[0]}")
sys.addaudithook(hook)
from vllm_logread.session import session  # noqa: F401  (imported before the hook counts opens)
from vllm_logread.cli.commands import main
from vllm_logread.report.model import Options
try:
    main(sys.argv[1:], prog_name="vllm-logread")
except SystemExit as e:
    code = e.code
else:
    code = 0
if seen:
    os.write(2, ("AUDIT: " + "; ".join(map(str, seen)) + "\n").encode())
    os._exit(99)
os._exit(code if isinstance(code, int) else 2)
"""


def _audited(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(cwd / "home")}
    env["PYTHONPATH"] = str(cwd / "evil")  # the auto_map module is importable, if anyone asked
    return subprocess.run(
        [sys.executable, "-c", AUDIT_SCRIPT, *args],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


def test_audit_no_socket_process_write_or_config_code(tmp_path: Path) -> None:
    """Python's audit hooks see every socket, process, file opened for writing
    and import: a run over hostile inputs and an ``auto_map`` config has none."""
    (tmp_path / "home").mkdir()
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "PWNED"
    (evil / "evil_config_module.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    cfg = tmp_path / "model"
    cfg.mkdir()
    (cfg / "config.json").write_text(
        json.dumps(
            {
                **QWEN3_8B,
                "auto_map": {
                    "AutoConfig": "evil_config_module.EvilConfig",
                    "AutoModelForCausalLM": "evil_config_module.Evil",
                },
                "trust_remote_code": True,
            }
        )
    )
    log = write(tmp_path, "s.log", SEED.replace(b"Qwen/Qwen3-8B", str(cfg).encode()))
    hostile = write(tmp_path, "h.log", b"\x00\xff" * 1000 + b"\n" + SEED[:500])
    for args in (
        [log],
        [log, "--json"],
        [log, "--config", str(cfg)],
        [log, "--config", str(cfg / "config.json"), "--min-users", "1"],
        [hostile],
        ["kv", str(cfg)],
    ):
        proc = _audited(args, tmp_path)
        err = proc.stderr.decode(errors="replace")
        assert "AUDIT" not in err, (args, err)
        assert proc.returncode in (0, 1, 3), (args, proc.returncode, err)
        assert "Traceback" not in err
    assert not marker.exists()


def test_a_run_writes_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a temp cwd with a temp HOME, reading logs (text, JSON, gate, stdin,
    every --format) leaves the tree as it was: a file is written only when
    asked (--stats-csv FILE, --plot FILE), and then only that file."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "s.log", SEED)
    write(tmp_path, "bad.log", b"\xff" * 100)
    before = _tree(tmp_path)
    for args in (
        ["s.log"],
        ["s.log", "--json"],
        ["s.log", "--min-users", "99"],
        ["bad.log"],
        ["s.log", "--format", "markdown"],
        ["s.log", "--format", "csv"],
        ["s.log", "--format", "github"],
        ["s.log", "--what-if", "kv_cache_dtype=fp8", "--target-users", "100"],
    ):
        result = cli(*args)
        check(result, result.exit_code)  # no traceback, whatever the code
    cli("-", input=SEED)
    cli("kv", "Qwen/Qwen3-8B")
    assert _tree(tmp_path) == before
    for option, name in (("--stats-csv", "stats.csv"), ("--plot", "users.png")):
        result = cli("s.log", option, name)
        if result.exit_code == 0:  # pandas / matplotlib present: that file, nothing else
            # (matplotlib keeps its font cache under ~/.cache and ~/.config: its own doing)
            new = {p for p in _tree(tmp_path) - before if not p.startswith("home/")}
            assert new == {name}, option
            (tmp_path / name).unlink()
        else:
            assert _tree(tmp_path) == before, option


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_paths_in_the_log_are_text(tmp_path: Path) -> None:
    """A log names paths (a model folder, a URL, shell text): none is run,
    fetched or waited on. A model path that is a FIFO or a device is not opened
    (it would hang); a huge file there is refused."""
    fifo_dir = tmp_path / "fifo_model"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "config.json")
    big = tmp_path / "big_model"
    big.mkdir()
    with (big / "config.json").open("wb") as f:
        f.truncate(3 << 30)  # sparse: 3 GiB that cost nothing
    marker = tmp_path / "PWNED"
    for model in (
        str(fifo_dir),
        str(fifo_dir / "config.json"),
        str(big),
        "/dev/zero",
        "/dev/stdin",
        f"$(touch {marker})",
        f"`touch {marker}`",
        "https://example.invalid/config.json",
        "../../../../etc/passwd",
        "~no_such_user_0x7f/Qwen3-8B",  # no such home: expanduser raises
    ):
        data = SEED.replace(b"Qwen/Qwen3-8B", model.encode())
        path = write(tmp_path, "p.log", data)
        result, seconds, _ = bounded_run([path, "--json"], timeout_s=30, stdin=subprocess.PIPE)
        check(result, 0)
        obj = json.loads(result.stdout)
        assert obj["model"] == model
        # A path that names no family is not exact (report/exactness.py): the pool line
        # reads the same for a hybrid; the name that says Qwen3 is plain, 37 users.
        assert obj["users"] == (SEED_USERS if model.endswith("Qwen3-8B") else None)
        # Nothing read from the path: no shape, or one from the shipped table by name.
        source = obj["kv_bytes_per_token_source"]
        assert source is None or "config.json at" not in source, (model, source)
        assert seconds < 20
    assert not marker.exists()


@pytest.mark.parametrize(
    "model",
    [
        b"Qwen\x1bc",  # RIS: resets the terminal
        b"Qwen\x1b]8;;http://x",  # a hyperlink cut short
        b"Qwen\x9b2J",  # C1 CSI: clears the screen on some terminals
        b"Qwen\x07\x07",
        b"Qwen\x00",
    ],
    ids=["ris", "osc_cut", "c1_csi", "bell", "nul"],
)
def test_control_characters_never_reach_the_report(tmp_path: Path, model: bytes) -> None:
    """A name the log states is printed in the report; a name carrying control
    characters (raw, or as Python escapes in ``non-default args``, which
    literal_eval would decode) is a near miss instead, so the text report
    cannot drive the reader's terminal."""
    escaped = model.decode("latin-1").encode("unicode_escape")  # b"Qwen\\x1bc"
    data = (
        SEED.replace(b"model   Qwen/Qwen3-8B", b"model   " + model)
        .replace(b"'model': 'Qwen/Qwen3-8B'", b"'model': '" + escaped + b"'")
        .replace(b"model='Qwen/Qwen3-8B'", b"model='" + model + b"'")
        .replace(b"load model Qwen/Qwen3-8B", b"load model " + model)
    )
    result = cli(write(tmp_path, "c.log", data), "--no-echo")
    check(result, 0)
    assert [ch for ch in result.stdout if not ch.isprintable() and ch != "\n"] == []
    assert "control characters" in result.stderr


# -- properties: damaged real logs, hostile values, garbage -------------------------

PROPERTY_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# SGLang's H100 log without its scheduler line (max_total_num_tokens=391815): the
# pool is read from "KV Cache is allocated. #tokens: 391815" (line 10), which the
# checker once called invented (a Hypothesis find).
SGLANG_WITHOUT_MAX_TOTAL = b"".join(
    line
    for line in (SAMPLE_LOGS / "sglang_qwen3-8b_h100.log").read_bytes().splitlines(keepends=True)
    if b"max_total_num_tokens" not in line
)


@PROPERTY_SETTINGS
@given(damaged_logs())
@example(SGLANG_WITHOUT_MAX_TOTAL)
def test_damaged_logs_never_crash_or_invent(data: bytes) -> None:
    result = cli("-", "--json", input=data)
    assert result.exit_code in (0, 1, 3, 4), result.stderr
    assert "Traceback" not in result.stderr
    obj = json_of(result)
    assert unstated_values(data, obj) == []


def test_the_checker_reads_a_pool_from_every_line_the_tool_does() -> None:
    # Engine.stated_pool_facts reads the pool from these kinds (gpu_blocks is a count
    # of blocks, checked on its own); the checker must accept each as a source.
    assert (POOL_KINDS - {"gpu_blocks"}) | SGLANG_POOL_KINDS == set(POOL_TOKEN_KINDS)
    result = cli("-", "--json", input=SGLANG_WITHOUT_MAX_TOTAL)
    obj = json_of(result)
    # SGLang's page_size 1 (line 2): 391,815 tokens = 391,815 blocks of 1.
    assert (obj["pool_tokens"], obj["num_blocks"], obj["block_size"]) == (391815, 391815, 1)
    assert unstated_values(SGLANG_WITHOUT_MAX_TOTAL, obj) == []


@PROPERTY_SETTINGS
@given(row_line_with_value())
def test_a_hostile_value_in_any_row(case: tuple[str, bytes]) -> None:
    _, line = case
    data = line + b"\n"
    result = cli("-", "--json", input=data)
    assert result.exit_code in (0, 3), result.stderr
    obj = json_of(result)
    assert unstated_values(data, obj) == []
    for f in obj["facts"]:
        v = f["value"]
        assert not isinstance(v, float) or v == v and abs(v) != float("inf")
        assert not isinstance(v, int) or len(str(abs(v))) <= 21, f


@PROPERTY_SETTINGS
@given(garbage_bytes())
def test_garbage_is_no_pool(data: bytes) -> None:
    result = cli("-", input=data)
    lines = check(result, 3, NO_POOL)
    assert lines[-1].startswith(f"-: {NO_POOL}")


@PROPERTY_SETTINGS
@given(
    st.integers(min_value=1, max_value=10_000_000), st.integers(min_value=1, max_value=10_000_000)
)
def test_any_workload_fits_the_arithmetic(prompt: int, output: int) -> None:
    result = cli("-", "--json", "--prompt", str(prompt), "--output", str(output), input=SEED)
    obj = json_of(check_ok(result))
    # A request holds P + O - 1 tokens at the end of its answer (P, O >= 1).
    per_user = max(-(-(prompt + output - 1) // 16), 1)
    assert obj["workload"]["blocks_per_user"] == per_user
    # Over max_model_len 8,192 vLLM rejects every request: 0 users. At most
    # max_num_seqs run at once: 256 (the seed's card is not in the log; 256 is
    # the least vLLM's rule allows, 1,024 the most).
    assert obj["users"] == (0 if prompt + output > 8192 else min(1505 // per_user, 256))
