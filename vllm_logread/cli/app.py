"""The ``read`` command as one library call: options in, output through a
console, an exit code out.

commands.py parses the options into a ``ReadOptions`` and calls ``run_read``,
which checks the options, opens the inputs, reads each through a
``session.Session`` and hands every output to the console the moment it
arises (on ``vllm serve ... | vllm-logread`` the report comes when the boot
states its pool, not at the end of input), then returns the documented exit
code. The library never prints and never exits: stdout and stderr are the
caller's ``Console``, so a test passes a fake one and reads what was said.

Errors stay ``LogReadError``s. ``OptionsError`` marks the ones about how the
command was called (``--echo`` with ``--json``, no input on a terminal), which
the CLI shows with click's usage line; every other error is one
``Error: ...`` line with its own exit code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING

from ..errors import LogReadError, MissingPoolError, UsageError
from ..kv.config import load_config, resolve_spec
from ..render.ci import Extras
from ..render.json import StatsJsonl, json_text
from ..render.tables import StatsCsv
from ..render.text import crosscheck_text, output_text
from ..session.events import ExitCode, ExitStatus, exit_code_of
from ..session.inputs import is_live_stream, open_input, run
from ..session.session import Session
from .options import (
    OptionsError,
    ReadOptions,
    check_common,
    model_notes,
    one_workload,
    report_options,
    unused_options,
)
from .outcome import gate_note, judged, results_of, with_sweep, worst
from .terminal import Console, Interrupted, signals_as_exceptions, signals_ignored

# Names for the annotations alone; /metrics (read.metrics, report.crosscheck) is
# imported by the options that read it, not by every report, and render/plot.py
# only when --simulate asks (docs/performance.md, "Start-up").
if TYPE_CHECKING:
    from ..read.facts import Fact
    from ..render.plot import StatsRecorder
    from ..report.capacity import Workload
    from ..report.crosscheck import Agreement
    from ..report.model import Options
    from ..session.events import Output
    from ..session.session import StatsSink

Inputs = list[tuple[str, IO[bytes]]]
Unread = list[tuple[str, "ExitStatus"]]  # inputs that could not be opened, and why


def run_read(opts: ReadOptions, console: Console) -> int:
    """Read the inputs ``opts`` names, tell ``console`` what they say, and
    return the exit code: 0 ok, 1 ``--min-users`` failed, 3 no pool (or a near
    miss under ``--strict``), 4 a contradiction, 130/143 on SIGINT/SIGTERM.

    Raises:
        OptionsError: options that cannot work together (before any reading).
        LogReadError: an option value or an input that cannot be used, or a
            read that failed; its ``exit_code`` is the one to exit with.
    """
    check_common(opts, "read", sweeps=True)
    if opts.echo and opts.as_json:
        raise OptionsError("--echo would mix log lines into the JSON; use one or the other")
    if opts.prometheus is not None:
        from .fleet_app import run_fleet  # the fleet table (fleet_app.py)

        try:
            return run_fleet(opts, console)
        except UsageError as err:
            raise OptionsError(str(err)) from err
    _check_read_options(opts)
    files = _stats_files(opts)
    extras = Extras(
        fmt=opts.fmt,
        prompts=opts.prompts,
        outputs=opts.outputs,
        plot_path=opts.plot_path,
        what_ifs=opts.what_if,
        sort=None if opts.sort == "input" else opts.sort,
    )
    job, inputs = _start_job(opts, console, extras, files)
    return _read_and_finish(job, inputs, extras, files)


def _check_read_options(opts: ReadOptions) -> None:
    """The log read's options that cannot work, refused before any input is opened."""
    if opts.compare_metrics is not None and (opts.metrics_url or len(opts.files) > 1):
        raise OptionsError(
            "--compare-metrics holds one log against its server's /metrics: give one log file "
            "(or a pipe), not --metrics-url or several files"
        )
    if opts.margin is not None:
        if opts.min_users is None:
            raise OptionsError("--margin is the --min-users gate's tolerance: give --min-users too")
        if not 0 <= opts.margin < 100:
            raise OptionsError(f"--margin {opts.margin:g}: a percentage from 0 to below 100")
    if opts.config is not None:
        load_config(opts.config)  # an explicit --config that cannot be read: exit 2


@dataclass(frozen=True, slots=True, kw_only=True)
class _StatsFiles:
    """--stats-csv and --stats-jsonl: opened before reading, closed after it."""

    csv: StatsCsv | None
    jsonl: StatsJsonl | None


def _stats_files(opts: ReadOptions) -> _StatsFiles:
    """The stats files, opened before reading: a file that cannot be written is exit 2."""
    try:
        csv = StatsCsv(opts.stats_csv) if opts.stats_csv else None
        jsonl = StatsJsonl(opts.stats_jsonl) if opts.stats_jsonl else None
    except LogReadError as err:
        raise OptionsError(str(err)) from err
    return _StatsFiles(csv=csv, jsonl=jsonl)


def _start_job(
    opts: ReadOptions, console: Console, extras: Extras, files: _StatsFiles
) -> tuple[_Job, Inputs]:
    """The workload and report options, then the inputs opened, as one job to read."""
    csv, jsonl = files.csv, files.jsonl
    is_json = opts.as_json or extras.is_json
    for note in unused_options(opts, "json" if is_json else opts.fmt):
        console.err(note)
    is_quiet = is_json or extras.is_quiet  # stdout is JSON, a table or annotations
    workload = _workload(opts)  # before any input is opened: a bad file exits 2 at once
    failures: Unread = []
    sim_rows = None
    if opts.wants_simulation:
        from ..render.plot import StatsRecorder

        sim_rows = StatsRecorder()  # the stats lines, for the simulated verdict
    if opts.metrics_url:
        inputs = _metrics_input(opts.metrics_url, opts.files)
    else:
        inputs, failures = _open_inputs(opts.files, console)
    job = _Job(
        opts=opts,
        console=console,
        options=report_options(
            opts,
            workload,
            shared_prefix_tokens=opts.shared_prefix,
            what_ifs=extras.changes,
            target_users=opts.target_users,
        ),
        is_json=is_json,
        is_quiet=is_quiet,
        is_echo=opts.echo if opts.echo is not None else opts.files in ((), ("-",)) and not is_quiet,
        on_stats=extras.on_stats(
            None if csv is None else csv.add, None if sim_rows is None else sim_rows.add
        ),
        on_stats_facts=None if jsonl is None else jsonl.add,
        failures=failures,
        sim_rows=sim_rows,
    )
    return job, inputs


def _read_and_finish(job: _Job, inputs: Inputs, extras: Extras, files: _StatsFiles) -> int:
    """Read every input under the signal handlers, close them, and say the exit code."""
    csv, jsonl = files.csv, files.jsonl
    try:
        with signals_as_exceptions():
            job.read(inputs)
    except Interrupted as stop:
        with signals_ignored():
            job.interrupted()
            if csv is not None:
                csv.close()
        return stop.exit_code
    finally:
        for name, stream in inputs:
            if name != "-":
                stream.close()
        if jsonl is not None:
            jsonl.close()
    if csv is not None:
        csv.close()
    return job.finish(extras)


def _workload(opts: ReadOptions) -> Workload:
    """--workload FILE's mix, or the --prompt/--output pair; a --shared-prefix
    longer than a prompt is a usage error (no prompt can start with it)."""
    workload = one_workload(opts)
    if opts.shared_prefix > 0:
        short = min(workload.rows, key=lambda r: r.prompt_tokens)
        if opts.shared_prefix > short.prompt_tokens:
            where = "the workload's shortest prompt" if workload.is_mix else "--prompt"
            raise OptionsError(
                f"--shared-prefix {opts.shared_prefix} is longer than {where} "
                f"({short.prompt_tokens:,} tokens): the prefix is part of every prompt"
            )
    return workload


def _open_inputs(files: tuple[str, ...], console: Console) -> tuple[Inputs, Unread]:
    """The named files, opened; ``-`` or none is standard input.

    One file that cannot be opened is the command's error (exit 2); among
    several, it is that input's error alone: the others are still read, and
    it is named (and counted in the exit code) at the end.
    """
    if not files:
        if console.stdin().isatty():
            raise OptionsError(
                "no log given: pipe a vLLM log in (vllm serve ... 2>&1 | vllm-logread) "
                "or name a file (vllm-logread server.log)"
            )
        files = ("-",)
    inputs: Inputs = []
    failures: Unread = []
    try:
        for name in files:
            try:
                inputs.append((name, console.stdin() if name == "-" else open_input(name)))
            except LogReadError as err:
                if len(files) == 1:
                    raise
                failures.append((name, ExitStatus(exit_code_of(err), f"Error: {err}")))
    except LogReadError:
        for name, stream in inputs:  # the ones opened before the bad one
            if name != "-":
                stream.close()
        raise
    return inputs, failures


def _metrics_input(url: str, files: Sequence[str]) -> Inputs:
    """--metrics-url: the server's /metrics text, fetched now (exit 2 if not)."""
    import io

    from ..read.metrics import fetch_metrics

    if files:
        raise OptionsError("--metrics-url reads a server, not files: give one or the other")
    return [(url, io.BytesIO(fetch_metrics(url)))]


@dataclass(slots=True, kw_only=True)
class _Job:
    """One ``read``: the sessions so far and how their outputs are shown."""

    opts: ReadOptions
    console: Console
    options: Options  # what every Session reports with
    is_json: bool  # a JSON object on stdout at the end
    is_quiet: bool  # no report text while reading (JSON, a table or annotations)
    is_echo: bool  # input bytes pass through to stdout
    on_stats: StatsSink | None
    on_stats_facts: Callable[[list[Fact]], None] | None = None  # --stats-jsonl
    failures: Unread = field(default_factory=list)  # inputs that could not be opened
    sessions: list[Session] = field(default_factory=list)
    sim_rows: StatsRecorder | None = None  # --simulate: every stats line

    def read(self, inputs: Inputs) -> None:
        """Each input through its own Session, outputs shown as they come."""
        for name, stream in inputs:
            session = Session(
                name,
                self.options,
                spec_resolver=resolve_spec,
                keep_all_facts=False,
                list_boot_facts=self.is_json,
                on_stats_facts=self.on_stats_facts,
                on_stats=self.on_stats,
                read_stats=not self.opts.no_stats,
                is_live=is_live_stream(stream, is_stdin=name == "-"),
                all_boots=self.opts.all_boots,
            )
            self.sessions.append(session)
            for item in run(session, stream, echo=self.is_echo):
                # A /metrics text is not echoed, so its report needs no frame;
                # the session knows it is one only once its first bytes are in.
                is_framed = self.is_echo and not session.is_metrics
                self._show(item, is_framed=is_framed, strict=self.opts.strict)

    def interrupted(self) -> None:
        """Ctrl-C or SIGTERM: the load so far, and the JSON if asked."""
        sessions = self.sessions
        for item in sessions[-1].interrupted() if sessions else []:
            self._show(item, is_framed=self.is_echo, strict=False)
        if self.is_json and sessions:
            self.console.out(json_text(results_of(sessions, all_boots=self.opts.all_boots)))

    def finish(self, extras: Extras) -> int:
        """After the end of input: JSON, the format's output, the exit code
        and (stderr) its reason, each input judged on its own."""
        opts, sessions = self.opts, self.sessions
        workloads = extras.workloads if extras.is_sweep else ()
        crosscheck = self._crosscheck()
        results, statuses = [], []
        for res in with_sweep(results_of(sessions, all_boots=opts.all_boots), workloads):
            res, st = judged(
                res,
                min_users=opts.min_users,
                strict=opts.strict,
                workloads=workloads,
                margin_pct=opts.margin or 0.0,
            )
            if crosscheck:
                res = replace(res, crosscheck=crosscheck)
            results.append(res)
            statuses.append(st)
            note = gate_note(res)
            if note is not None:
                self.console.err(note)
        for session in sessions:
            for note in model_notes(opts.model, session.tracker.boots):
                self.console.err(note)
        if not statuses:
            statuses.append(ExitStatus(ExitCode.MISSING, "no input was read"))
        status = worst([*statuses, *(status for _, status in self.failures)])
        out = extras.finish(
            results,
            min_users=opts.min_users,
            summary_path=opts.summary_path,
            is_json=self.is_json,
            unread=[(name, int(st.code), st.message) for name, st in self.failures],
        )
        if crosscheck and not self.is_quiet:
            self.console.out(crosscheck_text(crosscheck, metrics=opts.compare_metrics or ""))
        if out:
            self.console.out(out)
        if status.message:
            self.console.err(status.message)
        return status.code

    def _crosscheck(self) -> tuple[Agreement, ...]:
        """--compare-metrics: the log's last report against its server's /metrics."""
        where = self.opts.compare_metrics
        if where is None or not self.sessions:
            return ()
        session = self.sessions[-1]
        report = session.report_for(session.last_boot)
        if not report.has_pool:
            return ()
        from ..read.metrics import fetch_metrics, read_metrics, read_metrics_file
        from ..report.crosscheck import crosscheck, pick_server

        if where.startswith(("http://", "https://")):
            data = fetch_metrics(where)
        else:
            data = read_metrics_file(where)
        scraped = read_metrics(data.decode("utf-8", "replace"), source=where)
        server = pick_server(scraped.servers, report.model)
        if server is None:
            named = ", ".join(str(s.model) for s in scraped.servers) or "none"
            self.console.err(
                f"warning: {where}: no server of {report.model or 'the log'}'s model to compare "
                f"(its servers: {named})"
            )
            return ()
        return crosscheck(report, server)

    def _simulated(self, item: Output) -> Output:
        """The load summary with the simulation's word added to its verdict (--simulate)."""
        import dataclasses

        from .simulate_app import simulated_verdict

        if item.summary is None or not self.sessions or self.sim_rows is None:
            return item
        said = simulated_verdict(
            self.sessions[-1],
            item.summary,
            self.sim_rows.rows,
            prompt_tokens=self.opts.prompts[0],
            output_tokens=self.opts.outputs[0],
            users=self.opts.simulate_users,
            rounds=self.opts.simulate_rounds,
            spread_steps=self.opts.simulate_spread,
        )
        if said is None:
            return item
        verdict = item.summary.verdict
        said = said[0].upper() + said[1:]
        text = f"{verdict}. {said}" if verdict else said
        return dataclasses.replace(item, summary=dataclasses.replace(item.summary, verdict=text))

    def _show(self, item: Output, *, is_framed: bool, strict: bool) -> None:
        """One output of the reading loop: echoed bytes, a report, an alert, a
        summary or (to stderr) a warning."""
        if item.kind == "note":
            self.console.err(item.text)
        elif item.kind == "warning":
            self.console.err(item.text)
            if strict:
                raise MissingPoolError(f"--strict: {item.text}")
        elif item.kind == "echo":
            self.console.write(item.data)
        elif not self.is_quiet:
            if item.kind == "summary" and self.sim_rows is not None and item.server is None:
                item = self._simulated(item)
            self.console.out(
                output_text(
                    item,
                    echo=is_framed,
                    explain=self.opts.explain,
                    source=len(self.opts.files) > 1,
                )
            )
