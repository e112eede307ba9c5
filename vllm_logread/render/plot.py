"""Pictures (``--plot FILE.png|.svg``): the capacity curve, and the load over time.

The capacity panel draws users against tokens per user: the pool divided by
what each user holds, ``usable // cdiv(tokens, block_size)``. On the seed
(1,505 usable blocks of 16 tokens) the curve passes through 37 users at 640
tokens and 2.94 at 8,192: vLLM's "maximum concurrency" is the curve's point at
the max model len, and the workload's point is where the users really are.
Both are marked, so the "2.94 versus 37" story is one image.

With stats lines a second panel shows requests running (and waiting) and the
KV cache usage over time, with our estimate (users at the end of their answers
to users mid-answer) as a band: running settles in the band when the pool is
the limit.

matplotlib is the optional extra ``plot`` and is imported inside the
functions; the figure is drawn on a ``matplotlib.figure.Figure`` (no pyplot,
no global backend), at a fixed size: 1000 x 600 pixels for one panel, 1000 x
1000 for two.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..read.stats import header_seconds
from ..report.capacity import Workload
from ..session.watch import Estimate
from ..vllm.versions import cdiv

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from typing_extensions import Unpack

    from ..read.serving import StatsSink
    from ..report.model import Report
    from ..vllm.simulate import Simulation

#: One stats line's values as ``Session.on_stats`` passes them (``read.serving.StatsSink``):
#: time (``MM-DD HH:MM:SS`` or None), engine label, running, waiting, KV usage %, prompt
#: and generation throughput, preemptions, line.
StatsRow = tuple[
    str | None,
    str | None,
    int | None,
    int | None,
    float | None,
    float | None,
    float | None,
    int,
    int,
]

PLOT_HINT = "pip install 'vllm-logread[plot]'"


DPI = 100


WIDTH_IN = 10.0


PANEL_HEIGHT_IN = 6.0


TWO_PANEL_HEIGHT_IN = 10.0


# The curve's points: every block boundary up to this many, then sampled.
MAX_CURVE_POINTS = 4000


PLOT_SUFFIXES = (".png", ".svg")


# The curve starts here: shorter users are not what anyone asks about, and
# the flat top (every block a user) would squash the rest.
MIN_CURVE_TOKENS = 64


def check_available(path: str) -> None:
    """Fail before reading when ``--plot`` cannot be honoured.

    Raises:
        UsageError: matplotlib is missing, or the file is not .png / .svg.
    """
    if not path.lower().endswith(PLOT_SUFFIXES):
        raise UsageError(f"--plot {path}: name a .png or .svg file")
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(f"--plot needs matplotlib: {PLOT_HINT}")


@dataclass(slots=True)
class StatsRecorder:
    """The stats lines' values, kept for the load panel (``Session.on_stats``).

    Each row: time (``MM-DD HH:MM:SS`` or None), engine label, running,
    waiting, KV usage %, prompt and generation throughput, preemptions, line.
    A stats line every 10 s is 8,640 rows a day: a few hundred kilobytes.
    """

    rows: list[StatsRow] = field(default_factory=list)

    def add(self, *row: Unpack[StatsRow]) -> None:
        self.rows.append(row)


def fan_out(*sinks: StatsSink | None) -> StatsSink | None:
    """One ``on_stats`` callback that calls each given one (None: none given)."""
    live = [s for s in sinks if s is not None]
    if not live:
        return None
    if len(live) == 1:
        return live[0]

    def call(*row: Unpack[StatsRow]) -> None:
        for s in live:
            s(*row)

    return call


def capacity_curve(report: Report, *, max_tokens: int | None = None) -> tuple[list[int], list[int]]:
    """(tokens per user, users) along the curve, at every block boundary.

    Uses the report's what-if basis (the same arithmetic as the users figure,
    KV cache groups included); the prompt/output split does not matter at the
    end of an answer, so each point is a user of ``tokens`` prompt tokens.
    """
    basis = report.basis
    if basis is None:
        return [], []
    bs = basis.block_size
    top = max_tokens or max(report.max_model_len or 0, 2 * basis.workload.tokens_per_user, 8 * bs)
    steps = cdiv(top, bs)
    stride = max(1, cdiv(steps, MAX_CURVE_POINTS))
    xs: list[int] = []
    ys: list[int] = []
    from dataclasses import replace

    first = max(1, cdiv(MIN_CURVE_TOKENS, bs))
    for k in range(first, steps + 1, stride):
        tokens = k * bs
        b = replace(basis, workload=Workload(prompt_tokens=tokens, output_tokens=0))
        xs.append(tokens)
        ys.append(b.fit(basis.num_blocks).users * basis.num_engines)
    return xs, ys


def _draw_capacity(ax: Axes, reports: Sequence[Report]) -> None:
    colors = ["tab:blue", "tab:green", "tab:purple", "tab:brown", "tab:olive", "tab:cyan"]
    for i, r in enumerate(reports):
        color = colors[i % len(colors)]
        xs, ys = capacity_curve(r)
        if not xs:
            continue
        label = r.model or r.source
        if len(reports) > 1:
            label = f"{r.source}: {label}"
        pos = [(x, y) for x, y in zip(xs, ys, strict=True) if y > 0]
        ax.step([p[0] for p in pos], [p[1] for p in pos], where="post", color=color, label=label)
        w = r.workload
        if r.users is not None and r.users > 0:
            ax.plot([w.tokens_held_at_end], [r.users], "o", color="tab:red", zorder=5)
            ax.annotate(
                f"your users: {w.prompt_tokens:,}+{w.output_tokens:,} tokens\n"
                f"{r.users:,} users ({_n(r.users_mid_answer)} mid-answer)",
                (w.tokens_held_at_end, r.users),
                textcoords="offset points",
                xytext=(-10, -10),
                ha="right",
                va="top",
                fontsize=10,
                color="tab:red",
                fontweight="bold",
            )
        length = r.concurrency_tokens or r.max_model_len
        if r.vllm_max_concurrency is not None and length and r.vllm_max_concurrency > 0:
            ax.plot([length], [r.vllm_max_concurrency], "s", color="black", zorder=5)
            ax.annotate(
                f"vLLM: {r.vllm_max_concurrency:.2f}x at {length:,} tokens\n"
                "(every user fills the max model len)",
                (length, r.vllm_max_concurrency),
                textcoords="offset points",
                xytext=(-14, -4),
                ha="right",
                va="top",
                fontsize=10,
            )
        fp8 = next((wi for wi in r.what_if if wi.change == "kv_cache_dtype=fp8"), None)
        if (
            fp8 is not None
            and fp8.num_blocks
            and fp8.num_blocks != (r.num_blocks or 0)
            and r.basis is not None  # it is: capacity_curve drew a curve of it
        ):
            from dataclasses import replace

            rb = replace(r, basis=replace(r.basis, num_blocks=fp8.num_blocks))
            fx, fy = capacity_curve(rb)
            pos = [(x, y) for x, y in zip(fx, fy, strict=True) if y > 0]
            ax.step(
                [p[0] for p in pos],
                [p[1] for p in pos],
                where="post",
                color=color,
                linestyle="--",
                alpha=0.6,
                label=f"with --kv-cache-dtype fp8 ({fp8.users} users at {w.tokens_held_at_end:,})",
            )
    _label_every_decade(ax)
    ax.set_xlabel("tokens each user holds (prompt + answer so far)")
    ax.set_ylabel("users that fit in the KV cache")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper right", fontsize=9)
    if len(reports) == 1:
        r = reports[0]
        pool = f"{r.pool_tokens:,} tokens" if r.pool_tokens is not None else "pool unknown"
        blocks = (
            f" = {r.num_blocks:,} blocks of {r.block_size}"
            if r.num_blocks is not None and r.block_size
            else ""
        )
        ax.set_title(f"{r.model or r.source}: KV cache {pool}{blocks}")
    else:
        ax.set_title("KV cache capacity by server")


def _n(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "unknown"


def decade_limits(low: float, high: float, base: int = 10) -> tuple[float, float]:
    """The powers of ``base`` around ``[low, high]``: a log axis that starts
    and ends on a labelled tick.

    >>> decade_limits(3, 75), decade_limits(1, 10), decade_limits(200, 4000, base=2)
    ((1, 100), (1, 10), (128, 4096))
    """
    import math

    low, high = max(low, 1e-9), max(high, low)
    lo = base ** math.floor(math.log(low, base) + 1e-9)
    hi = base ** math.ceil(math.log(high, base) - 1e-9)
    return lo, max(hi, lo * base) if hi <= lo else hi


def _label_every_decade(ax: Axes) -> None:
    """Log axes (tokens base 2, users base 10) with a label at every power,
    the plain number written out (1, 10, 100, 1,000; 256, 512, 1,024)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    for axis, base, (lo, hi) in (
        (ax.xaxis, 2, ax.get_xlim()),
        (ax.yaxis, 10, ax.get_ylim()),
    ):
        low, high = decade_limits(lo, hi, base)
        if axis is ax.xaxis:
            ax.set_xlim(low, high)
        else:
            ax.set_ylim(low, high)
        axis.set_major_locator(LogLocator(base=base, numticks=64))
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(NullFormatter())


def _seconds(rows: Sequence[StatsRow]) -> tuple[list[float], str]:
    """x values: minutes since the first stats line, or the stats line count."""

    secs = [None if r[0] is None else header_seconds(str(r[0])) for r in rows]
    if rows and all(s is not None for s in secs):
        t0 = secs[0]
        assert t0 is not None
        out = []
        for s in secs:
            assert s is not None
            d = s - t0
            if d < -300 * 86_400:  # over New Year
                d += 365 * 86_400
            out.append(d / 60)
        return out, "minutes since the first stats line"
    return [float(i) for i in range(len(rows))], "stats line"


def _draw_load(ax: Axes, report: Report | None, rows: Sequence[StatsRow]) -> None:
    labels = list(dict.fromkeys(r[1] for r in rows))
    label = labels[0]
    mine = [r for r in rows if r[1] == label]
    xs, xlabel = _seconds(mine)
    running = [r[2] or 0 for r in mine]
    waiting = [r[3] or 0 for r in mine]
    kv = [r[4] or 0.0 for r in mine]
    if report is not None and report.users is not None:
        est = Estimate.from_report(report)
        users, mid = est.for_engine(label) if est is not None else (report.users, report.users)
        ax.axhspan(
            users,
            max(mid, users) + 0.0001,
            color="tab:red",
            alpha=0.18,
            label=f"our estimate: {_n(users)} (end of answers) to {_n(mid)} (mid-answer)",
        )
        ax.axhline(users, color="tab:red", linewidth=0.8, alpha=0.6)
    ax.plot(xs, running, "-o", color="tab:blue", markersize=3, label="running requests")
    ax.plot(xs, waiting, ":", color="tab:gray", label="waiting requests")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("requests")
    top = max(running + waiting + [report.users_mid_answer or 0 if report is not None else 0])
    ax.set_ylim(0, top * 1.45 + 1)  # room for the legend above the lines
    ax.grid(True, alpha=0.3)
    kv_ax = ax.twinx()
    kv_ax.plot(xs, kv, "-", color="tab:orange", alpha=0.8, label="KV cache usage %")
    kv_ax.set_ylim(0, 145)
    kv_ax.set_yticks([0, 20, 40, 60, 80, 100])
    kv_ax.set_ylabel("KV cache usage %")
    lines = ax.get_legend_handles_labels()
    more = kv_ax.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left", fontsize=9, ncol=2)
    who = "" if label is None or len(labels) == 1 else f" (engine {label})"
    ax.set_title(f"Under load{who}: running requests against our estimate")


def render(path: str, reports: Sequence[Report], stats: Sequence[StatsRow] = ()) -> None:
    """Draw the capacity panel (and the load panel when ``stats`` has rows and
    there is one report) into ``path`` (.png or .svg).

    Raises:
        UsageError: matplotlib missing, no report with a pool, or the file
            cannot be written.
    """
    check_available(path)
    from matplotlib.figure import Figure

    shown = [r for r in reports if r.has_pool and r.basis is not None]
    if not shown:
        raise UsageError("--plot: no report with a KV pool to draw")
    with_load = bool(stats) and len(shown) == 1
    height = TWO_PANEL_HEIGHT_IN if with_load else PANEL_HEIGHT_IN
    fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI)
    if with_load:
        top, bottom = fig.subplots(2, 1, height_ratios=[1.1, 1])
        _draw_capacity(top, shown)
        _draw_load(bottom, shown[0], stats)
    else:
        _draw_capacity(fig.subplots(), shown)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=DPI)
    except OSError as err:
        raise UsageError(f"--plot {path}: cannot write it ({err.strerror})") from None


#: vLLM's stats interval (``VLLM_LOG_STATS_INTERVAL``, 10 s by default): the
#: span the first stats line's throughput is averaged over when no line precedes it.
STATS_INTERVAL_S = 10.0


def load_phase(rows: Sequence[StatsRow]) -> tuple[list[StatsRow], list[float] | None]:
    """The stats rows of one engine (the first named) from the first with a
    request running or waiting to the first after the last with one running
    (the line that shows the end), and the answer tokens vLLM had generated by
    each (None when a row has no time or no generation throughput).

    A stats line's generation throughput is the tokens generated since the
    line before, over the seconds since it: throughput x interval, summed, is
    the tokens generated so far (the seed's 150 s load: 23 lines, 1,113.5 tok/s
    summed x 10 s = 11,135 tokens; it answered 87 x 128 = 11,136).

    >>> phase, tokens = load_phase([("01-01 00:00:00", None, 0, 0, 0.0, 0.0, 0.0),
    ...     ("01-01 00:00:10", None, 5, 3, 9.0, 50.0, 1.5), ("01-01 00:00:20", None, 2, 0, 4.0,
    ...     0.0, 20.0), ("01-01 00:00:30", None, 0, 0, 0.0, 0.0, 4.0)])
    >>> [r[2] for r in phase], tokens
    ([5, 2, 0], [15.0, 215.0, 255.0])
    """
    if not rows:
        return [], None
    label = rows[0][1]
    mine = [r for r in rows if r[1] == label]
    busy = [i for i, r in enumerate(mine) if (r[2] or 0) > 0 or (r[3] or 0) > 0]
    if not busy:
        return [], None
    last = max(i for i, r in enumerate(mine) if (r[2] or 0) > 0 or i == busy[0])
    last = min(last + 1, len(mine) - 1)
    phase = mine[busy[0] : last + 1]
    secs = [None if r[0] is None else header_seconds(str(r[0])) for r in mine]
    if any(s is None for s in secs) or any(len(r) < 7 or r[6] is None for r in mine):
        return phase, None
    total = 0.0
    tokens: list[float] = []
    for i, r in enumerate(mine):
        prev, now = secs[i - 1] if i else None, secs[i]
        assert now is not None
        span = STATS_INTERVAL_S if prev is None or now <= prev else float(now - prev)
        generation_tps = r[6]
        assert generation_tps is not None
        total += float(generation_tps) * span
        tokens.append(total)
    return phase, tokens[busy[0] : last + 1]


def fractions(values: Sequence[float]) -> list[float]:
    """Positions scaled to [0, 1]: ``(v - first) / (last - first)``.

    >>> fractions([10, 20, 40]), fractions([3])
    ([0.0, 0.3333333333333333, 1.0], [0.0])
    """
    if not values:
        return []
    lo, hi = values[0], values[-1]
    span = hi - lo
    return [0.0 if span <= 0 else (v - lo) / span for v in values]


def render_simulation(
    path: str, sim: Simulation, rows: Sequence[StatsRow] = (), *, source: str = ""
) -> None:
    """The simulation (running requests and KV usage by step) beside what the
    log's stats lines say vLLM did, when it holds a load phase.

    Steps are scheduler iterations, stats lines come every ~10 s, and a step's
    length varies with its batch (a 2,048-token prefill takes seconds on a CPU,
    a decode of a few requests a fraction of one): neither can be turned into
    the other. The two are aligned by the work done instead: x is the answer
    tokens generated so far, by the simulation's steps (one per request whose
    sequence completes) and by vLLM's stats lines (generation throughput x
    interval, summed: see :func:`load_phase`). A log whose stats lines have no
    times or no throughput falls back to the fraction of each run (first busy
    line to last, first step to last). Give ``--requests`` the count the real
    run answered so both runs cover the same work.

    Raises:
        UsageError: matplotlib missing, or the file cannot be written.
    """
    check_available(path)
    from matplotlib.figure import Figure

    phase, tokens = load_phase(rows)
    fig = Figure(figsize=(WIDTH_IN, TWO_PANEL_HEIGHT_IN), dpi=DPI)
    run_ax, kv_ax = fig.subplots(2, 1, sharex=True)
    steps = sim.steps
    by_tokens = tokens is not None or not phase
    if by_tokens:
        sim_x = [float(s.num_output_tokens) for s in steps]
    else:
        sim_x = fractions([float(s.step) for s in steps])
    _draw_simulated(run_ax, kv_ax, sim_x, sim)
    if phase:
        note = _draw_real(run_ax, kv_ax, phase, tokens)
    else:
        note = "answer tokens generated so far (the log has no load phase to compare)"
    _label_simulation(run_ax, kv_ax, sim, phase, note=note, source=source)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=DPI)
    except OSError as err:
        raise UsageError(f"--plot {path}: cannot write it ({err.strerror})") from None


def _draw_simulated(run_ax: Axes, kv_ax: Axes, sim_x: list[float], sim: Simulation) -> None:
    """The simulation's running, waiting and KV usage, a step each."""
    steps = sim.steps
    run_ax.step(
        sim_x,
        [s.num_running for s in steps],
        where="post",
        color="tab:blue",
        label="simulated running (each step)",
    )
    run_ax.step(
        sim_x,
        [s.num_waiting for s in steps],
        where="post",
        color="tab:blue",
        linestyle=":",
        alpha=0.7,
        label="simulated waiting",
    )
    kv_ax.step(
        sim_x,
        [s.kv_usage_pct for s in steps],
        where="post",
        color="tab:blue",
        label="simulated KV cache usage %",
    )


def _draw_real(run_ax: Axes, kv_ax: Axes, phase: list[StatsRow], tokens: list[float] | None) -> str:
    """What vLLM's stats lines say over the load phase; returns the x axis's label."""
    if tokens is not None:
        real_x = tokens
    else:
        secs, how = _seconds(phase)
        real_x = fractions(secs)
        unit = "times" if how.startswith("minutes") else "order"
    run_ax.plot(
        real_x,
        [r[2] or 0 for r in phase],
        "-o",
        color="tab:red",
        markersize=4,
        label=f"vLLM running (stats lines, {len(phase)})",
    )
    run_ax.plot(
        real_x,
        [r[3] or 0 for r in phase],
        ":o",
        color="tab:red",
        markersize=3,
        alpha=0.7,
        label="vLLM waiting",
    )
    kv_ax.plot(
        real_x,
        [r[4] or 0.0 for r in phase],
        "-o",
        color="tab:red",
        markersize=4,
        label="vLLM KV cache usage % (stats lines)",
    )
    if tokens is not None:
        return (
            "answer tokens generated so far (vLLM: each stats line's generation throughput"
            " x its interval; steps are not seconds)"
        )
    return (
        "fraction of each run: simulation by step, vLLM by its stats lines' "
        f"{unit}, aligned at start and end (steps are not seconds)"
    )


def _label_simulation(
    run_ax: Axes,
    kv_ax: Axes,
    sim: Simulation,
    phase: list[StatsRow],
    *,
    note: str,
    source: str,
) -> None:
    """The settle line, the axes' limits, labels, legends and the title."""
    steps = sim.steps
    run_ax.axhline(
        sim.settled_running,
        color="tab:green",
        linewidth=0.8,
        linestyle="--",
        label=f"simulated settle: {sim.settled_running} (peak {sim.peak_running}, "
        f"{sim.num_preemptions} preemption{'' if sim.num_preemptions == 1 else 's'})",
    )
    run_ax.set_ylabel("requests")
    top = max([s.num_running + s.num_waiting for s in steps] + [r[2] or 0 for r in phase] + [1])
    run_ax.set_ylim(0, top * 1.3 + 1)
    run_ax.grid(True, alpha=0.3)
    run_ax.legend(loc="upper right", fontsize=9)
    title = source or "simulation"
    run_ax.set_title(f"{title}: what vLLM did against what the simulation says")
    kv_ax.set_ylim(0, 115)
    kv_ax.set_yticks([0, 20, 40, 60, 80, 100])
    kv_ax.set_ylabel("KV cache usage %")
    kv_ax.set_xlabel(note)
    kv_ax.grid(True, alpha=0.3)
    kv_ax.legend(loc="lower center", fontsize=9)
