"""Every attention kind the CPU build boots, against vllm-logread's reading of its log.

Each kind is booted from a config.json with the real model's KV fields and a tiny body
(``tests/real_vllm/shapes/``), at ``--max-model-len 8192`` and a fixed
``--kv-cache-memory-bytes`` that fits one 8,192-token request, with no ``--block-size``
(the CPU default applies and is printed nowhere). What vLLM says is the truth: the pool
line's tokens and concurrency, and ``/metrics`` ``vllm:cache_config_info``'s
``num_gpu_blocks`` and ``block_size``. vllm-logread must give the same four from the log
alone, and users at 512 + 128 tokens (checked by hand in the samples' goldens).

Two kinds run in CI (Mistral-7B's all-sliding layers, and Qwen3-Next's gated delta net
hybrid): a boot costs about a minute on two cores. The rest run with
``VLLM_LOGREAD_ALL_KINDS=1`` (``tests/real_vllm/NOTES.md`` has their recorded figures;
the same logs are kept as ``sample_logs/real_vllm_0.32_*`` with goldens).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from . import harness
from .conftest import tool_env

pytestmark = pytest.mark.real_vllm

SHAPES_DIR = Path(__file__).resolve().parent / "shapes"

#: kind -> (served model name, --kv-cache-memory-bytes, runs in CI). The bytes are the
#: smallest of the recorded boots that fit one 8,192-token request (NOTES.md).
KINDS: dict[str, tuple[str, int, bool]] = {
    "mistral": ("mistralai/Mistral-7B-v0.1", 1_000_000_000, True),
    "qwen3-next": ("Qwen/Qwen3-Next-80B-A3B-Instruct", 800_000_000, True),
    "gemma3": ("google/gemma-3-27b-it", 3_000_000_000, False),
    "gpt-oss": ("openai/gpt-oss-20b", 800_000_000, False),
    "deepseek-v3": ("deepseek-ai/DeepSeek-V3", 800_000_000, False),
    "nemotron-h": ("nvidia/Nemotron-H-56B-Base-8K", 4_500_000_000, False),
    "llama4": ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 2_100_000_000, False),
}

ALL_KINDS = os.environ.get("VLLM_LOGREAD_ALL_KINDS") == "1"


def _cache_config(metrics: str) -> dict[str, str]:
    line = next(ln for ln in metrics.splitlines() if ln.startswith("vllm:cache_config_info{"))
    return dict(re.findall(r'(\w+)="([^"]*)"', line))


def _tool(log: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [*harness.tool_command(), str(log), "--prompt", "512", "--output", "128", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr}"
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_kind_reads_as_vllm_allocated_it(kind: str, vllm_venv: Path, real_workdir: Path) -> None:
    repo_id, kv_bytes, in_ci = KINDS[kind]
    if not (in_ci or ALL_KINDS):
        pytest.skip("one more boot (about a minute): set VLLM_LOGREAD_ALL_KINDS=1 to run it")
    cfg = json.loads((SHAPES_DIR / f"{kind}.json").read_text(encoding="utf-8"))
    shape = harness.TinyShape(repo_id=repo_id, base_config=f"(none: {kind})", fallback=cfg)
    harness.write_tiny_model(shape)
    workdir = real_workdir / f"kind-{kind}"
    args = ("--max-model-len", "8192", "--kv-cache-memory-bytes", str(kv_bytes))
    with harness.VllmServer(repo_id, args, workdir=workdir, venv=vllm_venv) as server:
        server.wait_ready()
        pool = harness.parse_pool(server.text())
        status, metrics = harness.http_get(server.port, "/metrics")
        assert status == 200
        log = workdir / "server.log"
        log.write_text(server.text(), encoding="utf-8")
    assert pool is not None, "vLLM printed no pool line"
    truth = _cache_config(metrics)
    ours = _tool(log)
    assert ours["pool_tokens"] == pool["pool_tokens"]
    assert ours["vllm_max_concurrency"] == pytest.approx(pool["max_concurrency"])
    assert ours["num_blocks"] == int(truth["num_gpu_blocks"]), ours["arithmetic"]
    assert ours["block_size"] == int(truth["block_size"]), ours["block_size_source"]
    assert not [c for c in ours["checks"] if c["status"] == "fail"], ours["checks"]
    assert ours["users"] is not None and ours["users"] > 0
