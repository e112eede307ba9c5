"""The ``simulate`` command as one library call: a log's pool under a load.

cli.py parses the options into a ``SimulateOptions`` and calls
``run_simulate``, which reads the log's last boot into a report (the pool,
the block size, the KV cache groups of a hybrid model), replays vLLM's
scheduler over that pool (:mod:`vllm_logread.simulate`) and says what it did
through the caller's console, like ``app.run_read``.

The scheduler's limits are the log's when given, else vLLM 0.32's
``vllm serve`` defaults for the device (CPU: 2,048 batched tokens and 128
sequences; GPU: 2,048 and 256, which a big GPU raises to 8,192 tokens), and
vLLM's CPU rule for MLA models (``platforms/cpu.py``, 0.32: chunked prefill
off, ``max_num_batched_tokens = max(max_model_len, 2048)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .capacity import Workload
from .errors import MissingPoolError, UsageError
from .inputs import open_input, run
from .kv.config import resolve_spec
from .render.json import dumps
from .render.simulation import simulation_json, simulation_text, write_steps_csv
from .report.model import Options
from .session import Session
from .simulate import GroupRule, Load, Pool, SchedulerLimits, Simulation, simulate


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulateOptions:
    """The ``simulate`` command's options, named as its click parameters."""

    file: str = "-"
    users: int | None = None
    prompt_tokens: int = 512
    output_tokens: int = 128
    requests: int | None = None
    rounds: int | None = None
    arrival_interval: float | None = None
    steps: int = 1000
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    chunked_prefill: bool | None = None
    num_blocks: int | None = None
    block_size: int | None = None
    config: str | None = None
    as_json: bool = False
    stats_csv: str | None = None


def pool_from_report(
    report: Any, *, num_blocks: int | None = None, block_size: int | None = None
) -> Pool:
    """The pool a report states: its blocks, block size and KV cache groups.

    Raises:
        MissingPoolError: the log states no pool (and none was given).
    """
    blocks = num_blocks if num_blocks is not None else report.num_blocks
    bs = block_size if block_size is not None else report.block_size
    if blocks is None or bs is None:
        raise MissingPoolError(
            f"{report.source}: no KV pool in blocks to simulate (the log states no pool line, "
            "or its block size is unknown); pass --num-blocks and --block-size"
        )
    basis = report.basis
    layout = None if basis is None else basis.layout
    groups: tuple[GroupRule, ...] = ()
    has_null = report.engine_generation != "V0"
    if layout is not None:
        groups = tuple(
            GroupRule(kind=g.kind, block_size=g.block_size, window_tokens=g.window_tokens)
            for g in layout.groups
        )
        has_null = bool(layout.has_null_block)
    if block_size is not None:
        groups = tuple(
            GroupRule(kind=g.kind, block_size=block_size, window_tokens=g.window_tokens)
            for g in groups
        )
    return Pool(
        num_blocks=blocks,
        block_size=bs,
        groups=groups,
        has_null_block=has_null,
        max_model_len=report.max_model_len,
    )


def limits_for_report(report: Any, opts: SimulateOptions) -> SchedulerLimits:
    """The scheduler limits: the options, else vLLM's defaults for the log's device."""
    is_cpu = (report.device or "").upper() == "CPU"
    spec = None if report.basis is None else report.basis.spec
    is_mla = bool(getattr(spec, "is_mla", False))
    chunked = True
    batched = 2048
    if is_cpu and is_mla:
        # vLLM 0.32 platforms/cpu.py: "MLA is enabled on a non-GPU platform;
        # forcing chunked prefill and prefix caching to be disabled."
        chunked = False
        batched = max(report.max_model_len or 0, 2048)
    return SchedulerLimits(
        max_num_seqs=opts.max_num_seqs or (128 if is_cpu else 256),
        max_num_batched_tokens=opts.max_num_batched_tokens or batched,
        enable_chunked_prefill=chunked if opts.chunked_prefill is None else opts.chunked_prefill,
    )


def simulate_log(opts: SimulateOptions, *, report: Any) -> Simulation:
    """The simulation ``opts`` asks for, over ``report``'s pool."""
    if opts.users is None and opts.arrival_interval is None:
        raise UsageError("give --users N (closed loop) or --arrival-interval STEPS")
    is_closed = opts.arrival_interval is None
    rounds = opts.rounds
    if is_closed and rounds is None and opts.requests is None:
        rounds = 1  # one request per user: the first wave, which packs and preempts
    load = Load(
        prompt_tokens=opts.prompt_tokens,
        output_tokens=opts.output_tokens,
        num_users=opts.users if is_closed else None,
        num_requests=opts.requests,
        num_rounds=rounds if is_closed else None,
        arrival_interval_steps=opts.arrival_interval,
    )
    pool = pool_from_report(report, num_blocks=opts.num_blocks, block_size=opts.block_size)
    return simulate(pool, load, limits=limits_for_report(report, opts), num_steps=opts.steps)


def read_report(path: str, opts: SimulateOptions, console: Any = None) -> Any:
    """The report of the last boot in ``path`` (``-``: standard input)."""

    options = Options(
        workload=Workload(prompt_tokens=opts.prompt_tokens, output_tokens=opts.output_tokens),
        config=opts.config,
        block_size=opts.block_size,
    )
    session = Session(path, options, spec_resolver=resolve_spec, read_stats=False)
    stream = console.stdin() if path == "-" and console is not None else open_input(path)
    try:
        for _ in run(session, stream):
            pass
    finally:
        if path != "-":
            stream.close()
    return session.report_for(session.last_boot)


def run_simulate(opts: SimulateOptions, console: Any) -> int:
    """Read the log, simulate, tell ``console``; return the exit code (0).

    Raises:
        LogReadError: an option or an input that cannot be used (exit 2), a
            log without a pool (exit 3).
    """

    report = read_report(opts.file, opts, console)
    sim = simulate_log(opts, report=report)
    if opts.stats_csv:
        try:
            with open(opts.stats_csv, "w", encoding="utf-8", newline="") as out:
                write_steps_csv(sim, out)
        except OSError as err:
            raise UsageError(f"--stats-csv {opts.stats_csv}: {err.strerror or err}") from err
    if opts.as_json:
        console.out(dumps(simulation_json(sim, source=opts.file)))
    else:
        console.out(simulation_text(sim, source=opts.file))
    return 0
