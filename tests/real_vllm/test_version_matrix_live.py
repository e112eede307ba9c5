"""The version matrix live, on demand: boot older vLLM CPU builds and hold the tool to them.

Runs only with ``-m real_vllm`` AND ``VLLM_LOGREAD_VERSIONS`` naming the versions (comma
list of :data:`harness.RECIPES` keys, e.g. ``VLLM_LOGREAD_VERSIONS=0.20.2,0.26.0``): each
version installs into its own cached venv (5-8 GB, 5-18 minutes the first time) and one boot
with its load takes 5-10 minutes on this machine, so CI (``.ci/run``) never runs it; the
recorded boots in ``sample_logs/real_vllm_<version>_*_load.log`` are checked on every run by
``tests/scenarios/test_version_matrix.py`` instead.

Each version: ``python tools/real_vllm.py matrix --vllm-version V`` (Qwen3-8B's KV shape,
3 GiB of KV cache, 40 closed-loop users of 512+128, one request each) into a temporary
folder; then the tool on that log must give vLLM's own figures: block size and blocks from
the ``/metrics`` scrape's ``cache_config_info``, users = the running count of the longest run
in the ``/metrics`` samples while requests wait, and ``simulate`` the same settled count and
at least the peak (the most ``num_requests_running`` in the ``/metrics`` samples).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from . import harness

REPO = Path(__file__).resolve().parents[2]
VERSIONS = [v for v in os.environ.get("VLLM_LOGREAD_VERSIONS", "").split(",") if v.strip()]

pytestmark = [
    pytest.mark.real_vllm,
    pytest.mark.skipif(not VERSIONS, reason="set VLLM_LOGREAD_VERSIONS=0.20.2,... to boot them"),
]


def _tool(*args: str) -> dict[str, object]:
    out = subprocess.run(
        [*harness.tool_command(), *args, "--json"], capture_output=True, text=True, check=True
    )
    parsed: dict[str, object] = json.loads(out.stdout)
    return parsed


@pytest.mark.parametrize("version", VERSIONS or ["none"])
def test_a_version_boots_and_the_tool_gives_its_figures(version: str, tmp_path: Path) -> None:
    assert version in harness.RECIPES or version == harness.VLLM_VERSION, version
    subprocess.run(
        [sys.executable, str(REPO / "tools" / "real_vllm.py"), "matrix"]
        + ["--vllm-version", version, "--out", str(tmp_path)],
        check=True,
    )
    (log,) = tmp_path.glob("*_load.log")
    metrics = log.with_suffix(".metrics.txt").read_text()
    info = re.search(r"^vllm:cache_config_info\{(.*)\}", metrics, re.M)
    assert info is not None
    labels = dict(re.findall(r'(\w+)="([^"]*)"', info.group(1)))
    series = json.loads(log.with_suffix(".series.json").read_text())["series"]
    # While requests wait, the pool is the limit: the settled count is the longest run then.
    limited = [int(s["running"]) if s["waiting"] > 0 else -1 for s in series]
    runs = [(n, len(list(g))) for n, g in itertools.groupby(limited) if n > 0]
    settled = max(runs, key=lambda r: r[1])[0]
    peak = max(int(s["running"]) for s in series)

    got = _tool(str(log), "--prompt", "512", "--output", "128")
    assert got["block_size"] == int(labels["block_size"])
    assert got["num_blocks"] == int(labels["num_gpu_blocks"])
    assert got["users"] == settled

    sim = _tool("simulate", str(log), "--users", "40", "--prompt", "512", "--output", "128")
    # A one-step peak can fall between two 1 s samples (sliding-window runs): at least.
    assert sim["settled_running"] == settled
    assert isinstance(sim["peak_running"], int) and sim["peak_running"] >= peak
