#!/usr/bin/env python3
"""Capture issue 30's max_num_batched_tokens evidence: boots of one sliding-window shape that
differ only in ``--max-num-batched-tokens`` (the KV memory fixed, so the pools are comparable).

Run from the repository root, under the machine's heavy-job lock, one server at a time:

    flock /tmp/heavy.lock -c 'nice -n 5 .venv/bin/python tests/real_vllm/capture_mnbt.py \
        --vllm-version 0.32.0 gpt-oss 2048,8192'

Each boot: ``vllm serve MODEL --load-format dummy --skip-tokenizer-init --enforce-eager
--max-model-len 8192 --kv-cache-memory-bytes B --max-num-batched-tokens N``, ``GET /health``
= 200, one ``/v1/completions`` request (32 prompt ids, 8 tokens), the next stats line, stop.
Writes ``sample_logs/real_vllm_<v>_<shape>_mnbt<N>.log`` (``<v>`` = ``0.32`` for 0.32.0, as
the other 0.32 samples, else the full version). ``tests/real_vllm/NOTES.md``
("max_num_batched_tokens: two boots") records what was run and printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
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

#: shape -> (served model name, file stem, --kv-cache-memory-bytes). gpt-oss: 161 blocks of
#: 128 tokens x 12 layers x 2 x 8 KV heads x 64 x 2 B = 3,145,728 B (as capture_cost.py).
#: mistral: every layer slides over 4,096; 64 blocks of 128 x 32 layers x 2 x 8 x 128 x 2 B =
#: 16,777,216 B (1 GiB), where a max-length request is budgeted cdiv(min(4,095 + N, 8,192),
#: 128) + 1 blocks: 49 at 2,048, 65 at 8,192 (more than the pool: vLLM refuses the boot).
SHAPES: dict[str, tuple[str, str, int]] = {
    "gpt-oss": ("openai/gpt-oss-20b", "gpt-oss-20b", 161 * 3_145_728),
    "mistral": ("mistralai/Mistral-7B-v0.1", "mistral-7b-v0.1", 64 * 16_777_216),
}


def file_stem(version: str, shape: str, mnbt: int) -> str:
    """``real_vllm_0.32_gpt-oss-20b_mnbt2048`` (0.32.0 is written ``0.32``)."""
    v = "0.32" if version == "0.32.0" else version
    return f"real_vllm_{v}_{SHAPES[shape][1]}_mnbt{mnbt}"


def capture(version: str, shape: str, mnbt: int, out: Path) -> dict[str, object]:
    repo_id, _, kv_bytes = SHAPES[shape]
    venv = H.ensure_venv() if version == H.VLLM_VERSION else H.ensure_version_venv(version)
    recipe = H.RECIPES.get(version)
    cfg = json.loads((REPO / "tests/real_vllm/shapes" / f"{shape}.json").read_text())
    H.write_tiny_model(H.TinyShape(repo_id=repo_id, base_config=f"(none: {shape})", fallback=cfg))
    log = out / f"{file_stem(version, shape, mnbt)}.log"
    log.unlink(missing_ok=True)
    args = (
        "--max-model-len",
        "8192",
        "--kv-cache-memory-bytes",
        str(kv_bytes),
        "--max-num-batched-tokens",
        str(mnbt),
    )
    workdir = Path(f"/tmp/vlr-mnbt-{version}-{mnbt}")
    env_extra = recipe.env() if recipe is not None else {}
    info: dict[str, object] = {"version": version, "mnbt": mnbt, "log": str(log)}
    with H.VllmServer(
        repo_id, args, workdir=workdir, log_path=log, venv=venv, env_extra=env_extra
    ) as server:
        info["argv"] = server.argv[1:]
        try:
            info["boot_s"] = round(server.wait_ready(timeout_s=900), 1)
        except H.ServerDied:  # refused (e.g. "the estimated maximum model length is L")
            info["died_after_s"] = round(time.monotonic() - server.started_at, 1)
            info["pool"] = H.parse_pool(server.text())
            info["returncode"] = server.returncode()
            return info
        info["pool"] = H.parse_pool(server.text())
        status, _ = H.http_post_json(
            server.port,
            "/v1/completions",
            {
                "model": repo_id,
                "prompt": H.make_prompt(0, 0, 32),
                "max_tokens": 8,
                "ignore_eos": True,
                "detokenize": False,
            },
        )
        info["request_status"] = status
        _, metrics = H.http_get(server.port, "/metrics")
        cache = H.parse_metrics(metrics).get("vllm:cache_config_info", [])
        info["cache_config_info"] = cache[0][0] if cache else None
        server.wait_for_line(r"Running: \d+ reqs", timeout_s=60)
    info["returncode"] = server.returncode()
    return info


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm-version", default=H.VLLM_VERSION)
    parser.add_argument("--out", default=os.environ.get("VLR_MNBT_OUT") or REPO / "sample_logs")
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("mnbt", help="comma-separated --max-num-batched-tokens values")
    args = parser.parse_args(argv)
    for n in (int(x) for x in args.mnbt.split(",")):
        print(f"# {args.shape} mnbt {n} {time.strftime('%H:%M:%S')}", flush=True)
        print(json.dumps(capture(args.vllm_version, args.shape, n, Path(args.out))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
