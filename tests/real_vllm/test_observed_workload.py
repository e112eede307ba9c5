"""The workload from the server, on a real vLLM 0.32: /metrics histograms and request lines.

One short-lived small server of its own (Llama-3.2-1B's KV shape, the CPU default block size
128, ``--enable-log-requests``), so its histograms hold exactly the requests this test sent
(they are cumulative over a server's life, and the seed server carries other tests' loads).
A mixed load of four kinds of requests (prompt tokens, max_tokens; ``ignore_eos`` and
``min_tokens = max_tokens``, so every answer has exactly max_tokens tokens):

* 6 x (100, 20), 5 x (300, 50), 4 x (700, 10), 3 x (1,500, 100): 18 requests.

What was sent, worked by hand:

* prompt tokens: sum 6 x 100 + 5 x 300 + 4 x 700 + 3 x 1,500 = 600 + 1,500 + 2,800 + 4,500
  = 9,400; mean 9,400 / 18 = 522.2...; sorted, the p50 (the 9th of 18) is 300, the p90 (the
  17th: ceil(0.9 x 18) = 17) is 1,500, the p99 (the 18th) 1,500;
* generation tokens: sum 6 x 20 + 5 x 50 + 4 x 10 + 3 x 100 = 120 + 250 + 40 + 300 = 710;
  mean 710 / 18 = 39.4...; sorted (4 x 10, 6 x 20, 5 x 50, 3 x 100) the 9th is 20, the 17th
  100, the 18th 100.

vLLM's request-token buckets are 1-2-5 up to max_model_len 4,096 (build_1_2_5_buckets):
1, 2, 5, ..., 1000, 2000; so the prompt p50 300 is in (200, 500], the p90 1,500 in
(1000, 2000]; the generation p50 20 in (10, 20], the p90 100 in (50, 100].
"""

from __future__ import annotations

import json
import math
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from . import harness
from .conftest import tool_env

pytestmark = pytest.mark.real_vllm

SHAPE = "llama-3.2-1b"
ARGS: tuple[str, ...] = (
    "--max-model-len",
    "4096",
    "--kv-cache-memory-bytes",
    "800000000",
    "--enable-log-requests",
)

#: (prompt tokens, max_tokens, how many)
MIX: tuple[tuple[int, int, int], ...] = ((100, 20, 6), (300, 50, 5), (700, 10, 4), (1500, 100, 3))


def send_mix(port: int, model: str, *, parallel: int = 4) -> list[tuple[int, int]]:
    """Send MIX, ``parallel`` at a time; (prompt tokens, completion tokens) of each answer."""
    jobs = [(p, o, i) for p, o, n in MIX for i in range(n)]
    done: list[tuple[int, int]] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        for p, o, i in jobs[k::parallel]:
            status, resp = harness.http_post_json(
                port,
                "/v1/completions",
                {
                    "model": model,
                    "prompt": harness.make_prompt(100 + i, p, p),
                    "max_tokens": o,
                    "min_tokens": o,
                    "ignore_eos": True,
                    "temperature": 0.0,
                    "detokenize": False,
                },
            )
            assert status == 200, resp
            usage = resp["usage"]
            with lock:
                done.append((int(usage["prompt_tokens"]), int(usage["completion_tokens"])))

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return done


def mixed_run(workdir: Path, venv: Path) -> tuple[str, str, list[tuple[int, int]]]:
    """Boot the server, send the mix, scrape /metrics: (scrape, log, what was answered)."""
    with harness.serve(SHAPE, ARGS, workdir=workdir, venv=venv) as server:
        model = harness.SHAPES[SHAPE].repo_id
        sent = send_mix(server.port, model)
        status, text = harness.http_get(server.port, "/metrics")
        assert status == 200
        log = server.text()
    return text, log, sent


def tool_json(path: Path, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [*harness.tool_command(), str(path), *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def _in(value: int, rng: dict[str, Any]) -> bool:
    """A true value inside a reported bucket range (lower, upper]."""
    lower, upper = rng["lower_tokens"], rng["upper_tokens"]
    return (lower is None or lower < value) and (upper is None or value <= upper)


def test_mixed_load_distribution(vllm_venv: Path, real_workdir: Path, tmp_path: Path) -> None:
    scrape, log, sent = mixed_run(real_workdir / "mixed", vllm_venv)
    (tmp_path / "mixed.metrics.txt").write_text(scrape, encoding="utf-8")
    (tmp_path / "mixed.log").write_text(log, encoding="utf-8")
    print(f"\n[real_vllm] mixed load: {len(sent)} answers; scrape and log in {tmp_path}")
    # The answers are what was sent (prompt ids as given, ignore_eos + min_tokens).
    expected = sorted((p, o) for p, o, n in MIX for _ in range(n))
    assert sorted(sent) == expected
    prompts = sorted(p for p, _ in sent)
    outputs = sorted(o for _, o in sent)
    assert sum(prompts) == 9_400 and sum(outputs) == 710  # module docstring

    out = tool_json(tmp_path / "mixed.metrics.txt", "--prompt", "512", "--output", "128")
    obs = out["observed_workload"]
    assert obs["source"] == "metrics"
    prompt, gen = obs["prompt_tokens"], obs["generation_tokens"]
    assert prompt["count"] == gen["count"] == 18
    assert prompt["sum"] == 9_400 and gen["sum"] == 710
    assert prompt["mean"] == pytest.approx(9_400 / 18)
    assert gen["mean"] == pytest.approx(710 / 18)
    for q, rank in (("p50", 9), ("p90", 17), ("p99", 18)):  # ceil(q x 18)
        assert rank == math.ceil(float(q[1:]) / 100 * 18)
        assert _in(prompts[rank - 1], prompt[q]), (q, prompt[q])
        assert _in(outputs[rank - 1], gen[q]), (q, gen[q])
    # The mean request: ceil(522.2) = 523 prompt + ceil(39.4) = 40 output = 563 tokens.
    assert obs["at_mean"]["prompt_tokens"] == 523
    assert obs["at_mean"]["output_tokens"] == 40

    # The log's request lines (0.32 prints max_tokens at INFO; the prompt's ids at DEBUG only).
    out = tool_json(tmp_path / "mixed.log", "--prompt", "512", "--output", "128")
    logged = out["observed_workload"]
    assert logged["source"] == "log"
    assert logged["max_tokens"]["count"] == 18
    assert logged["max_tokens"]["sum"] == 710
    assert logged["max_tokens"]["p50"] == 20 and logged["max_tokens"]["p90"] == 100
