"""``read --prometheus URL`` as one library call: Prometheus in, the fleet
table out through the caller's console, an exit code back (as app.run_read).

Exit codes: 0 ok; 1 ``--min-users`` failed for a model's total; 2 Prometheus
unreachable, an HTTP error, a query it rejects, or options that do not go
with ``--prometheus``; 3 no vLLM server in the window, or none answers now
(every one down or stale: the table still shows them).
"""

from __future__ import annotations

from typing import Protocol

from ..errors import UsageError
from ..kv.config import load_config, resolve_spec
from ..read.prometheus import Prometheus, parse_by, parse_since, read_fleet
from ..render.fleet import fleet_text
from ..session.events import ExitCode, exit_code_of
from ..session.fleet import fleet_of, gate_message, no_answer_error
from .options import ReadOptions, one_workload, output_format, report_options


class _Console(Protocol):
    def out(self, text: str) -> None: ...

    def err(self, text: str) -> None: ...


# read's options that mean nothing for a fleet (option name, how it is unset).
_NOT_WITH_PROMETHEUS = (
    ("files", "FILE"),
    ("metrics_url", "--metrics-url"),
    ("echo", "--echo"),
    ("stats_csv", "--stats-csv"),
    ("stats_jsonl", "--stats-jsonl"),
    ("what_if", "--what-if"),
    ("target_users", "--target-users"),
    ("plot_path", "--plot"),
    ("all_boots", "--all-boots"),
    ("explain", "--explain"),
    ("strict", "--strict"),
    ("no_stats", "--no-stats"),
    ("workload_path", "--workload"),
    ("shared_prefix", "--shared-prefix"),
    ("simulate", "--simulate"),
    ("simulate_users", "--simulate-users"),
    ("simulate_rounds", "--simulate-rounds"),
)


def check_options(opts: ReadOptions) -> None:
    """Raise UsageError for what --prometheus does not do (before any query)."""
    given = [
        flag for name, flag in _NOT_WITH_PROMETHEUS if getattr(opts, name) not in (None, (), False)
    ]
    if given:
        raise UsageError(
            f"--prometheus reads the fleet's table; it does not take {', '.join(given)}"
        )
    if opts.is_sweep:
        raise UsageError("--prometheus reports one workload: give one --prompt and one --output")


def run_fleet(opts: ReadOptions, console: _Console) -> int:
    """Query the Prometheus, print the table in ``--format``, return the exit code.

    Raises:
        LogReadError: the options, Prometheus or its answers (exit 2 or 3).
    """
    check_options(opts)
    parse_since(opts.since)  # a bad --since fails before any query
    by = parse_by(opts.by)
    if opts.config is not None:
        load_config(opts.config)
    assert opts.prometheus is not None
    fmt = output_format(opts, "read")
    options = report_options(opts, one_workload(opts))
    read = read_fleet(Prometheus(opts.prometheus), since=opts.since, by=by)
    fleet = fleet_of(read, options, spec_resolver=resolve_spec)
    gate = gate_message(fleet, opts.min_users, opts.margin or 0.0)
    for row in fleet.rows:
        for w in row.warnings:
            console.err(f"warning: {w}")
    console.out(fleet_text(fleet, fmt, gate=gate))
    if fmt == "github" and opts.summary_path:
        try:
            with open(opts.summary_path, "a", encoding="utf-8") as fh:
                fh.write(fleet_text(fleet, "markdown") + "\n")
        except OSError as err:
            raise UsageError(
                f"GITHUB_STEP_SUMMARY {opts.summary_path}: cannot append ({err.strerror})"
            ) from None
    missing = no_answer_error(fleet)
    if missing is not None:
        console.err(f"Error: {missing}")
        return exit_code_of(missing)
    if gate:
        console.err(gate)
        return ExitCode.GATE_FAILED
    return ExitCode.OK
