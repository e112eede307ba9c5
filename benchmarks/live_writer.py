"""A stand-in for ``vllm serve`` writing to a pipe, for the live tests and benchmark.

Usage: ``python live_writer.py SEED_LOG --controlled`` or ``python live_writer.py SEED_LOG
--all MB``.

It writes the seed boot up to its pool line, then obeys control lines on its stdin:
"pool" writes the pool line and the rest of the boot, and says on stderr when it wrote it
(the monotonic clock, so a reader in another process can time the report); "bulk MB"
writes MB megabytes of serving lines and says how long the writes took; "load" writes four
stats lines that fill the pool; "end" stops. With ``--all MB`` it writes the boot and MB of
serving lines at once, uncontrolled.
"""

from __future__ import annotations

import os
import random
import sys
import time


def write(data: bytes) -> None:
    """All of ``data`` to stdout, through short writes (a full pipe blocks, never drops)."""
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def block() -> bytes:
    """About 1 MiB of serving lines: access and request lines, and a stats line in
    twenty, its values moving like a server under a changing load."""
    rnd = random.Random(7)
    out: list[str] = []
    running = 0
    while sum(map(len, out)) < 1 << 20:
        r = rnd.random()
        stamp = f"11-29 10:{rnd.randint(10, 59):02d}:{rnd.randint(0, 59):02d}"
        if r < 0.05:
            running = max(0, min(40, running + rnd.randint(-3, 3)))
            kv = min(99.9, running * 2.4)
            out.append(
                f"(APIServer pid=1) INFO {stamp} [loggers.py:257] Engine 000: Avg prompt "
                f"throughput: {rnd.random() * 900:.1f} tokens/s, Avg generation throughput: "
                f"{rnd.random() * 600:.1f} tokens/s, Running: {running} reqs, Waiting: 0 reqs, "
                f"GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: 0.0%\n"
            )
        elif r < 0.3:
            out.append(
                f"(APIServer pid=1) INFO {stamp} [logger.py:43] Received request "
                f"cmpl-{rnd.getrandbits(64):016x}-0: params: SamplingParams(n=1, temperature=0.7,"
                f" max_tokens=128), prompt_token_ids: None, lora_request: None.\n"
            )
        else:
            out.append(
                f"(APIServer pid=1) INFO:     10.0.{rnd.randint(0, 255)}.{rnd.randint(1, 254)}:"
                f'{rnd.randint(30000, 60000)} - "POST /v1/completions HTTP/1.1" 200 OK\n'
            )
    return "".join(out).encode()


def bulk(mb: float) -> float:
    """Write ``mb`` megabytes of serving lines; the seconds the writes took."""
    data = block()
    t = time.monotonic()
    for _ in range(max(1, round(mb * (1 << 20) / len(data)))):
        write(data)
    return time.monotonic() - t


def load() -> None:
    """Four stats lines that fill the pool (99.5 % with 40 running and 2 waiting)."""
    for i, (running, kv) in enumerate([(20, 50.0), (38, 93.0), (40, 99.5), (40, 99.5)]):
        write(
            f"(APIServer pid=1) INFO 11-29 10:01:{10 + 10 * i} [loggers.py:257] Engine 000: "
            f"Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 500.0 "
            f"tokens/s, Running: {running} reqs, Waiting: {2 if kv > 99 else 0} reqs, GPU "
            f"KV cache usage: {kv}%, Prefix cache hit rate: 0.0%\n".encode()
        )


def main() -> None:
    with open(sys.argv[1], "rb") as f:
        boot = f.read().splitlines(keepends=True)
    at = next(i for i, line in enumerate(boot) if b"KV cache size" in line)
    if sys.argv[2] == "--all":
        write(b"".join(boot))
        bulk(float(sys.argv[3]))
        return
    write(b"".join(boot[:at]))
    for command in sys.stdin:
        word = command.split()
        if word[0] == "pool":
            t0 = time.monotonic()
            write(boot[at])
            print("pool", t0, file=sys.stderr, flush=True)
            write(b"".join(boot[at + 1 :]))
        elif word[0] == "bulk":
            print("bulk", bulk(float(word[1])), file=sys.stderr, flush=True)
        elif word[0] == "load":
            load()
            print("load", flush=True, file=sys.stderr)
        elif word[0] == "end":
            break


if __name__ == "__main__":
    main()
