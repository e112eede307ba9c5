"""app.run_read through a fake console: what goes to stdout and stderr, and the
exit code, without click or a process.

The seed log (sample_logs/seed_qwen3-8b_l4.log) states a pool of 24,096
tokens = 1,506 blocks of 16 at line 16; at 512 + 128 tokens a user holds 40
blocks, so (1,506 - 1 null block) // 40 = 37 users.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from vllm_logread.cli import app
from vllm_logread.cli.terminal import Interrupted
from vllm_logread.errors import InputError, LogReadError, MissingPoolError
from vllm_logread.session.events import ExitCode, exit_code_of

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"
FRAME_OPEN = b"=" * 30 + b" vllm-logread " + b"=" * 30 + b"\n"
FRAME_CLOSE = b"=" * 74 + b"\n"


class FakeConsole:
    """Collects stdout bytes and stderr lines; stdin is the given bytes."""

    def __init__(self, stdin: bytes | IO[bytes] = b"", *, is_tty: bool = False) -> None:
        self._stdin = io.BytesIO(stdin) if isinstance(stdin, bytes) else stdin
        self._stdin.isatty = lambda: is_tty  # type: ignore[method-assign]
        self.num_stdin_calls = 0
        self.stdout = bytearray()
        self.stderr: list[str] = []

    def stdin(self) -> IO[bytes]:
        self.num_stdin_calls += 1
        return self._stdin

    def write(self, data: bytes) -> None:
        self.stdout += data

    def out(self, text: str) -> None:
        self.stdout += text.encode() + b"\n"

    def err(self, text: str) -> None:
        self.stderr.append(text)


def read(console: FakeConsole, *files: str | Path, **opts: object) -> int:
    options = app.ReadOptions(files=tuple(str(f) for f in files), **opts)  # type: ignore[arg-type]
    return app.run_read(options, console)


def test_a_file_gives_its_report_and_exit_0() -> None:
    c = FakeConsole()
    assert read(c, SEED) == 0
    text = c.stdout.decode()
    assert text.startswith("== vllm-logread: 37 users fit at 512 prompt + 128 output tokens")
    assert "KV pool:      24,096 tokens = 1,506 blocks of 16 tokens (line 16)" in text
    assert FRAME_OPEN not in c.stdout  # a named file is not echoed
    assert c.stderr == []
    assert c.num_stdin_calls == 0


def test_json_is_the_only_thing_on_stdout() -> None:
    c = FakeConsole()
    assert read(c, SEED, as_json=True) == 0
    obj = json.loads(c.stdout)
    assert obj["pool_tokens"] == 24096 and obj["num_blocks"] == 1506
    assert obj["users"] == 37
    assert c.stderr == []


def test_stdin_is_echoed_unchanged_with_the_report_framed() -> None:
    log = SEED.read_bytes()
    c = FakeConsole(log)
    assert read(c) == 0
    out = bytes(c.stdout)
    start = out.index(FRAME_OPEN)
    end = out.index(FRAME_CLOSE, start) + len(FRAME_CLOSE)
    assert b"37 users fit at 512 prompt + 128 output tokens" in out[start:end]
    assert out[:start] + out[end:] == log  # every input byte, once, in order
    # The report comes right after line 16, the pool line, not at the end.
    assert out[:start].count(b"\n") == 16


def test_stdin_under_json_or_a_format_is_not_echoed() -> None:
    for opts in ({"as_json": True}, {"fmt": "github"}, {"echo": False}):
        c = FakeConsole(SEED.read_bytes())
        assert read(c, **opts) == 0, opts
        assert b"(EngineCore pid=200)" not in c.stdout, opts


def test_a_metrics_text_on_stdin_is_reported_without_a_frame() -> None:
    c = FakeConsole((ROOT / "sample_logs" / "metrics_v1_0_10_qwen3-8b.txt").read_bytes())
    assert read(c) == 0
    assert c.stdout and FRAME_OPEN not in c.stdout and FRAME_CLOSE not in c.stdout


@pytest.mark.parametrize(
    ("opts", "files", "is_tty", "says"),
    [
        ({"echo": True, "as_json": True}, (), False, "--echo would mix log lines into the JSON"),
        ({}, (), True, "no log given: pipe a vLLM log in"),
        (
            {"metrics_url": "http://127.0.0.1:1/metrics"},
            (SEED,),
            False,
            "--metrics-url reads a server, not files",
        ),
        ({"stats_csv": "/nonexistent/dir/x.csv"}, (SEED,), False, "--stats-csv /nonexistent"),
    ],
    ids=["echo-and-json", "terminal-stdin", "metrics-url-and-files", "stats-csv-unwritable"],
)
def test_usage_errors_are_options_errors(
    opts: dict[str, object], files: tuple[Path, ...], is_tty: bool, says: str
) -> None:
    c = FakeConsole(b"never read", is_tty=is_tty)
    with pytest.raises(app.OptionsError, match=says) as info:
        read(c, *files, **opts)
    assert exit_code_of(info.value) == ExitCode.USAGE == 2
    assert c.stdout == b"" and c.stderr == []


@pytest.mark.parametrize(
    ("opts", "files", "says"),
    [
        ({}, ("/nonexistent.log",), "/nonexistent.log: no such file"),
        ({"config": "/nonexistent/config.json"}, (SEED,), "cannot read model config"),
        ({"what_if": ("foo=bar",)}, (SEED,), "--what-if 'foo=bar'"),
        ({"metrics_url": "http://127.0.0.1:1/metrics"}, (), "cannot reach the server"),
    ],
    ids=["missing-file", "bad-config", "bad-what-if", "unreachable-metrics"],
)
def test_bad_values_are_plain_errors_with_exit_2(
    opts: dict[str, object], files: tuple[str | Path, ...], says: str
) -> None:
    c = FakeConsole()
    with pytest.raises(LogReadError, match=says) as info:
        read(c, *files, **opts)
    assert not isinstance(info.value, app.OptionsError)  # no usage line for these
    assert exit_code_of(info.value) == ExitCode.USAGE == 2
    assert c.stdout == b""


def test_a_missing_file_among_several_is_its_own_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each input on its own: the seed still says 37 users; the missing file is
    # named once, and the exit code is the worse of the two (2).
    opened: list[IO[bytes]] = []
    real_open = app.open_input

    def spy(name: str) -> IO[bytes]:
        stream: IO[bytes] = real_open(name)
        opened.append(stream)
        return stream

    monkeypatch.setattr(app, "open_input", spy)
    c = FakeConsole()
    assert read(c, SEED, "/nonexistent.log") == 2
    assert len(opened) == 1 and opened[0].closed
    assert b"Users that fit: 37 users" in c.stdout or b"37 users" in c.stdout
    assert c.stderr == ["Error: /nonexistent.log: no such file"]


def test_a_single_missing_file_is_the_command_error() -> None:
    with pytest.raises(InputError):
        read(FakeConsole(), "/nonexistent.log")


def test_min_users_gate_exits_1_with_its_reason() -> None:
    c = FakeConsole()
    assert read(c, SEED, min_users=38) == 1
    assert c.stderr == [f"{SEED}: --min-users 38: only 37 users fit at 512+128 tokens"]
    assert read(FakeConsole(), SEED, min_users=37) == 0


def test_no_pool_exits_3_and_says_why_once(tmp_path: Path) -> None:
    head = b"".join(SEED.read_bytes().splitlines(keepends=True)[:14])  # cut before the pool
    path = tmp_path / "cut.log"
    path.write_bytes(head)
    c = FakeConsole()
    assert read(c, path) == 3
    assert c.stdout == b""
    assert len(c.stderr) == 1
    assert c.stderr[0].startswith(f"{path}: no KV cache pool line (seen: ")
    assert "14 lines read" in c.stderr[0]


def _near_miss_log(tmp_path: Path) -> Path:
    lines = SEED.read_bytes().splitlines(keepends=True)
    bad = b"(EngineCore pid=200) INFO 11-29 10:00:40 [kv_cache_utils.py:1148] "
    bad += b"GPU KV cache size: lots of tokens\n"
    path = tmp_path / "near.log"
    path.write_bytes(b"".join([*lines[:15], bad, *lines[15:]]))
    return path


def test_a_near_miss_is_a_warning_and_fatal_under_strict(tmp_path: Path) -> None:
    path = _near_miss_log(tmp_path)
    warning = f"warning: {path}:16: pool_tokens: line has 'KV cache size: ' but not its known"
    c = FakeConsole()
    assert read(c, path) == 0
    assert len(c.stderr) == 1 and c.stderr[0].startswith(warning)
    c = FakeConsole()
    with pytest.raises(MissingPoolError, match="^--strict: warning: ") as info:
        read(c, path, strict=True)
    assert exit_code_of(info.value) == ExitCode.MISSING == 3
    assert len(c.stderr) == 1 and c.stderr[0].startswith(warning)  # said before the error


class _InterruptedPipe(io.RawIOBase):
    """The seed log, then SIGINT arrives while waiting for more."""

    def __init__(self, data: bytes, signum: int) -> None:
        self._data, self._signum = data, signum

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        if not self._data:
            raise Interrupted(self._signum)
        chunk, self._data = self._data[:n], self._data[n:]
        return chunk


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_still_gives_the_json_and_its_exit_code(signum: int, code: int) -> None:
    c = FakeConsole(_InterruptedPipe(SEED.read_bytes(), signum))  # type: ignore[arg-type]
    assert read(c, as_json=True) == code
    obj = json.loads(c.stdout)
    assert obj["source"] == "-" and obj["pool_tokens"] == 24096


def test_an_interrupt_before_any_input_exits_130_with_an_empty_json() -> None:
    c = FakeConsole(_InterruptedPipe(b"", signal.SIGINT))  # type: ignore[arg-type]
    assert read(c, as_json=True) == 130
    obj = json.loads(c.stdout)
    assert obj["source"] == "-" and obj["pool_tokens"] is None and obj["facts"] == []
    assert c.stderr == []


def test_github_format_appends_the_step_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    c = FakeConsole()
    assert read(c, SEED, fmt="github", summary_path=str(summary)) == 0
    lines = c.stdout.decode().splitlines()
    assert lines[-1].endswith(
        "::37 users fit at 512+128 tokens (41 mid-answer); vLLM's 2.94x is "
        "for users who each fill 8,192 tokens"
    )
    assert lines[-1].startswith("::notice ")
    text = summary.read_text()
    assert text.startswith("## vllm-logread: KV cache capacity\n")
    assert "| KV pool | 24,096 tokens |" in text


def test_the_library_prints_nothing_and_imports_no_click(capfd: pytest.CaptureFixture[str]) -> None:
    assert read(FakeConsole(), SEED, fmt="markdown") == 0
    assert capfd.readouterr() == ("", "")
    code = (
        "import sys; from vllm_logread.cli import app\n"
        "class C:\n"
        "    def stdin(self): raise AssertionError\n"
        "    def write(self, data): pass\n"
        "    out = err = write\n"
        f"code = app.run_read(app.ReadOptions(files=({str(SEED)!r},)), C())\n"
        "print(code, 'click' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == "0 False\n"
