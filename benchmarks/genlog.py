#!/usr/bin/env python3
"""Write a large, realistic vLLM serving log for the benchmark (``bench.py``).

A V1 boot (Qwen/Qwen3-8B on one L4: 24,096 tokens, 2.94x at 8,192 tokens),
then a long serving phase: the API server's access lines (70%), request lines
(25%) and a stats line about every twenty lines (5%), 200 lines a header
second. Deterministic for a seed: the same lines, byte for byte, on every
machine (``random.Random``), so that figures measured on it can be compared.

12,000,000 lines make about 1.6 GB (1,596,578,245 bytes with the default
seed), 1,200,000 about 160 MB.

Usage:
    python benchmarks/genlog.py LINES [--seed N] > /tmp/serving.log
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import TextIO

BOOT = """\
(APIServer pid=1) INFO 11-29 10:00:01 [api_server.py:1839] vLLM API server version 0.11.0
(APIServer pid=1) INFO 11-29 10:00:01 [utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B', 'max_model_len': 8192}
(APIServer pid=1) INFO 11-29 10:00:09 [model.py:547] Resolved architecture: Qwen3ForCausalLM
(APIServer pid=1) INFO 11-29 10:00:09 [model.py:1510] Using max model len 8192
(EngineCore_DP0 pid=200) INFO 11-29 10:00:12 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen3-8B', speculative_config=None, tokenizer='Qwen/Qwen3-8B', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=8192, download_dir=None, load_format=auto, tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=Qwen/Qwen3-8B, enable_prefix_caching=True, chunked_prefill_enabled=True
(EngineCore_DP0 pid=200) INFO 11-29 10:00:20 [gpu_model_runner.py:2653] Model loading took 15.2683 GiB and 30.512331 seconds
(EngineCore_DP0 pid=200) INFO 11-29 10:00:40 [gpu_worker.py:298] Available KV cache memory: 3.31 GiB
(EngineCore_DP0 pid=200) INFO 11-29 10:00:40 [kv_cache_utils.py:1087] GPU KV cache size: 24,096 tokens
(EngineCore_DP0 pid=200) INFO 11-29 10:00:40 [kv_cache_utils.py:1091] Maximum concurrency for 8,192 tokens per request: 2.94x
(EngineCore_DP0 pid=200) INFO 11-29 10:00:52 [gpu_model_runner.py:3480] Graph capturing finished in 12 secs, took 0.53 GiB
(APIServer pid=1) INFO 11-29 10:00:55 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000
"""  # noqa: E501 - vLLM's own lines, as printed


# The pool is full (99.9% KV usage) from 38 running requests on: the stats
# lines' usage is running x 2.5 + up to 2 points (40 x 2.5 = 100, capped at 99.9).
MAX_RUNNING = 40


def write_log(out: TextIO, lines: int, *, seed: int = 1) -> None:
    """The boot, then ``lines`` serving lines (one random draw order: keep it,
    or the log changes)."""
    rnd = random.Random(seed)
    out.write(BOOT)
    running = 0
    for i in range(lines):
        # 200 lines a second from 10:00:55; the hour wraps after 14 hours.
        s = 55 + i // 200
        stamp = f"11-29 {10 + s // 3600 % 14:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
        r = rnd.random()
        if r < 0.05:
            running = max(0, min(MAX_RUNNING, running + rnd.randint(-4, 5)))
            usage = min(99.9, running * 2.5 + rnd.random() * 2)
            # (drawn in the order the line prints them)
            prompt_tps = rnd.random() * 5000
            generation_tps = rnd.random() * 2000
            waiting = rnd.randint(0, 3) if usage > 95 else 0
            hit_pct = rnd.random() * 60
            out.write(
                f"(APIServer pid=1) INFO {stamp} [loggers.py:123] Engine 000: "
                f"Avg prompt throughput: {prompt_tps:.1f} tokens/s, "
                f"Avg generation throughput: {generation_tps:.1f} tokens/s, "
                f"Running: {running} reqs, Waiting: {waiting} reqs, "
                f"GPU KV cache usage: {usage:.1f}%, Prefix cache hit rate: {hit_pct:.1f}%\n"
            )
        elif r < 0.30:
            out.write(
                f"(APIServer pid=1) INFO {stamp} [logger.py:43] Received request "
                f"chatcmpl-{rnd.getrandbits(64):016x}: prompt: '', params: SamplingParams(n=1, "
                f"temperature=0.7, top_p=0.8, max_tokens={rnd.randint(64, 512)}), "
                f"prompt_token_ids: None, lora_request: None.\n"
            )
        else:
            out.write(
                f"(APIServer pid=1) INFO:     10.0.{rnd.randint(0, 255)}.{rnd.randint(1, 254)}:"
                f'{rnd.randint(30000, 60000)} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lines", type=int, help="serving lines after the boot's 11")
    ap.add_argument("--seed", type=int, default=1, help="the random seed (default 1)")
    args = ap.parse_args(argv)
    write_log(sys.stdout, args.lines, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
