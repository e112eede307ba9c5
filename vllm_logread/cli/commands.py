"""The command line: options in, library calls, output and an exit code out.

Exit codes (README): 0 ok; 1 a CI gate failed (--min-users); 2 usage error;
3 the log lacks what was asked (no KV pool line; a near miss under --strict);
4 the log contradicts itself, or the config given, beyond the printed precision.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, TypeAlias

import click

from ..errors import LogReadError

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from .terminal import Sink

# The reading machinery (patterns, regexes, report) is imported by the command
# that reads, not here: `vllm-logread --help` and `kv` start as fast as click.


#: Every command's help ends with the exit codes (README, "Exit codes").
EXIT_CODES = """\b
Exit codes:
  0  ok
  1  a CI gate failed (--min-users: fewer users, at any workload of a sweep)
  2  usage error; a file that cannot be read; an extra not installed
  3  the log lacks the KV pool (or --strict: a near miss)
  4  the log contradicts itself or the --config given
  130/143  interrupted (Ctrl-C / SIGTERM), after the load summary
  --prometheus: 2 also Prometheus unreachable or a query rejected; 3 no
     vLLM server in the window, or none answers now (all down or stale)
  Several inputs: each on its own; the exit code is the highest of theirs.

\b
Shell completion: eval "$(_VLLM_LOGREAD_COMPLETE=bash_source vllm-logread)"
(zsh: zsh_source; fish: _VLLM_LOGREAD_COMPLETE=fish_source vllm-logread | source)
"""


#: A command's function (its options as keyword arguments), and what adds an option to it.
Command: TypeAlias = Callable[..., None]
Decorator: TypeAlias = Callable[[Command], Command]


# ------------------------------------------------------------------ shell completion
# (EXIT_CODES' last lines say how to turn it on.) Each function runs only when the
# shell asks, and reads the shipped tables then: start-up never pays for them.


def _complete_path(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """A file: the shell's own file names (click's ``file`` completion)."""
    from click.shell_completion import CompletionItem

    return [CompletionItem(incomplete, type="file")]


def _table_names(name: str, key: str) -> list[str]:
    """The names of a shipped table (data/NAME.json's KEY object), or none
    when it cannot be read (completion never fails a shell)."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "data" / name
    try:
        table = json.loads(path.read_text(encoding="utf-8"))[key]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return sorted(table) if isinstance(table, dict) else []


def _complete_model(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """``kv MODEL``: the shipped table's models (data/models.json) that start
    with what is typed (any case), and file names (a config.json) when none do."""
    from click.shell_completion import CompletionItem

    low = incomplete.lower()
    names = [n for n in _table_names("models.json", "models") if n.lower().startswith(low)]
    # The file item first: bash falls back to file names only when no name matches.
    return [CompletionItem(incomplete, type="file"), *map(CompletionItem, names)]


def _complete_gpu(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """``--gpu``: the GPU table's names (data/gpus.json) that start with what is typed."""
    from click.shell_completion import CompletionItem

    low = incomplete.lower()
    names = _table_names("gpus.json", "gpus")
    return [CompletionItem(n) for n in names if n.lower().startswith(low)]


def _options(*decorators: Decorator) -> Decorator:
    """Several click options as one decorator, in the order given."""

    def add(f: Command) -> Command:
        for d in reversed(decorators):
            f = d(f)
        return f

    return add


def _workload(*, sweeps: bool, with_file: bool = True) -> Decorator:
    """``--prompt``, ``--output`` (read's grammar in every command) and ``--workload``."""
    what = (
        "; a list (256,512,2048) or a range (256:2048:256) sweeps"
        if sweeps
        else " (one value: read sweeps lists and ranges)"
    )
    kind = _IntList if sweeps else _Tokens
    opts = [
        click.option(
            "--prompt",
            "prompt_tokens",
            type=kind(),
            default=None,
            help=f"Prompt tokens per user{what}.  [default: 512]",
        ),
        click.option(
            "--output",
            "output_tokens",
            type=kind(),
            default=None,
            help=f"Output tokens per user{what}.  [default: 128]",
        ),
    ]
    if with_file:
        opts.append(
            click.option(
                "--workload",
                "workload_path",
                metavar="FILE",
                shell_complete=_complete_path,
                default=None,
                help="A mix of requests (CSV or JSONL: prompt and output tokens per request, an "
                "optional count), instead of --prompt/--output (giving both is a usage error).",
            )
        )
    return _options(*opts)


def _config(what: str = "") -> Decorator:
    """``--config PATH`` and ``--model NAME`` (resolved as ``kv`` resolves names)."""
    return _options(
        click.option(
            "--config",
            "config",
            metavar="PATH",
            shell_complete=_complete_path,
            default=None,
            help=f"The model's config.json (or its folder){what}; default: the offline Hugging "
            "Face cache, then the shipped table.",
        ),
        click.option(
            "--model",
            "model",
            metavar="NAME",
            shell_complete=_complete_model,
            default=None,
            help=f"The model{what} by name (ORG/NAME), when the log does not name it: its "
            "config from the offline Hugging Face cache or the shipped table, as kv finds it "
            "(never the network). Not with --config; over a log that names another model, "
            "--model wins (said on stderr).",
        ),
    )


def _block_size(what: str) -> Decorator:
    return click.option(
        "--block-size",
        type=click.IntRange(1, 1_000_000),
        metavar="N",
        default=None,
        help=f"KV block size {what}.",
    )


def _gpu(what: str) -> Decorator:
    """``--gpu NAME`` (the GPU table, nvidia-smi's and ROCm's names too) and
    ``--gpu-memory-gib N`` (any card)."""
    return _options(
        click.option(
            "--gpu",
            metavar="NAME",
            shell_complete=_complete_gpu,
            default=None,
            help=f"{what} A name of the GPU table (vllm-logread kv --list-gpus), nvidia-smi's "
            "or ROCm's ('NVIDIA H100 80GB HBM3', 'AMD Instinct MI300X') too.",
        ),
        click.option(
            "--gpu-memory-gib",
            type=click.FloatRange(0, min_open=True),
            default=None,
            metavar="N",
            help="Instead of --gpu, any card: its total memory in GiB as the driver reports "
            "it (vLLM's total_gpu_memory; a bit less than nvidia-smi's MiB / 1024).",
        ),
    )


def _format(command: str, what: str) -> Decorator:
    """``--format`` (the command's formats, formats.FORMATS) and ``--json``."""
    from .formats import FORMATS

    return _options(
        click.option(
            "--format",
            "fmt",
            type=click.Choice(list(FORMATS[command])),
            default="text",
            show_default=True,
            help=what,
        ),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="Print one JSON object (= --format json), with its schema_version.",
        ),
    )


def _given(params: Mapping[str, object]) -> dict[str, Any]:
    """The options given (click's None for an option not given is the options
    class's own default), as keyword arguments of the command's options class
    (``Any``: click hands each option's value in the type its declaration
    converts to; the options class's fields are the types)."""
    return {k: v for k, v in params.items() if v is not None}


@contextlib.contextmanager
def _machinery(module: str) -> Iterator[None]:
    """Import a command's machinery (``module`` and what it imports) with the
    cyclic garbage collector paused, then freeze what the imports made.

    The imports make tens of thousands of objects that live as long as the
    process (about 36,000 for the seed report: the patterns table, the regexes,
    about 110 dataclasses whose methods are each compiled from source), and the collector
    walked them again and again: 56 collections, 26 to 44 ms of the seed
    report's CPU (timed by ``gc.callbacks``, one process; `import click` alone:
    14 collections, 2.4 ms). Paused, and those objects frozen (no later
    collection walks them), the whole report ran 23 collections in 4.7 ms,
    click's own import 15 of them (docs/performance.md, "Start-up"). Only on
    the first import, and only when the collector is on: a caller that imports
    the package itself (a test run) keeps its collector as it had it.
    """
    if module in sys.modules or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _run(job: Callable[[], int]) -> None:
    """Run a command's library call; its errors as click's, its code as the exit."""
    from .options import OptionsError

    try:
        code = job()
    except OptionsError as err:
        raise click.UsageError(str(err)) from err
    except LogReadError as err:
        raise _error(err) from err
    sys.exit(code)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` (``$COLUMNS``, else the terminal's,
    else 80) without importing shutil, which imports bz2, lzma and zlib: 1.7 ms
    of a 45 ms ``--help`` on this project's benchmark machine
    (docs/performance.md, "Start-up")."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = 0 if stdout is None else os.get_terminal_size(stdout.fileno()).columns
        except (ValueError, OSError):
            columns = 0
    return columns or 80


class _Context(click.Context):
    """click's Context, its help as wide as click makes it (the terminal less 2
    columns, 50 to 78, or click.testing's forced width), the terminal's width read
    by :func:`_terminal_columns`."""

    def make_formatter(self) -> click.HelpFormatter:
        width = self.terminal_width
        if width is None:
            width = click.formatting.FORCED_WIDTH
        if width is None:
            width = max(min(_terminal_columns(), self.max_content_width or 80) - 2, 50)
        return self.formatter_class(width=width, max_width=self.max_content_width)


class _Command(click.Command):
    context_class = _Context


class _DefaultGroup(click.Group):
    """A group whose default command is ``read``: ``vllm-logread FILE`` reads FILE."""

    context_class = _Context
    command_class = _Command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing and not args:
            return super().parse_args(ctx, args)  # completing the first word: see below
        if not args or (
            args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")
        ):
            args.insert(0, "read")
        return super().parse_args(ctx, args)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The first word: a subcommand, or a log file (``read`` is the default).
        The file item comes first: bash offers file names only when no command
        matches what is typed."""
        from click.shell_completion import CompletionItem

        found = super().shell_complete(ctx, incomplete)
        if incomplete.startswith("-"):
            return found
        return [CompletionItem(incomplete, type="file"), *found]


MAIN_EXAMPLES = """\b
Examples:
  vllm-logread sample_logs/seed_qwen3-8b_l4.log --prompt 512 --output 128
  vllm serve Qwen/Qwen3-8B 2>&1 | vllm-logread --prompt 512 --output 128
  vllm-logread kv Qwen/Qwen3-8B --tp 2 --kv-cache-dtype fp8

"""


@click.group(
    cls=_DefaultGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=MAIN_EXAMPLES + EXIT_CODES,
)
# click's own message, given: its default is looked up through gettext at import,
# which imports locale and searches the disk for translations on every start.
@click.version_option(package_name="vllm-logread", message="%(prog)s, version %(version)s")
def main() -> None:
    """Read a vLLM log and say how many users really fit in its KV cache.

    The default command is `read`; `vllm-logread FILE` is `vllm-logread read FILE`.
    """


def _error(err: LogReadError) -> click.ClickException:
    """A library error as click's one ``Error: ...`` line, with its documented
    exit code (ClickException alone exits 1, the gate's code)."""
    # events.py (its dataclasses) only on an error: --help imports no more than
    # click, errors.py and formats.py (docs/performance.md, "Start-up").
    from ..session.events import exit_code_of

    class _Error(click.ClickException):
        exit_code = int(exit_code_of(err))

    return _Error(str(err))


class _IntList(click.ParamType):  # type: ignore[type-arg]
    """Token counts of a workload: one number, a list (256,512,2048) or a range
    (256:2048:256, stop included), each at least 1 (options.MIN_WORKLOAD_TOKENS)."""

    name = "N[,N...]|START:STOP[:STEP]"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        from ..render.tables import parse_int_list
        from .options import MIN_WORKLOAD_TOKENS

        try:
            return parse_int_list(str(value), minimum=MIN_WORKLOAD_TOKENS)
        except LogReadError as err:
            self.fail(str(err), param, ctx)


class _Tokens(_IntList):
    """A workload's token count where one value works (kv, simulate, diff): the
    metavar says N, and a list or a range is refused by name (read sweeps them)."""

    name = "N"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[int, ...]:
        values = super().convert(value, param, ctx)
        if len(values) > 1:
            command = ctx.info_name if ctx is not None else "this command"
            self.fail(
                f"{value!r}: {command} takes one value (read sweeps lists and ranges)",
                param,
                ctx,
            )
        return values


class _Percent(click.ParamType):  # type: ignore[type-arg]
    """A percentage, one grammar in every command (options.parse_percent):
    ``5%`` or ``5``."""

    name = "PCT"

    def __init__(self, *, top_included: bool = True) -> None:
        self.top_included = top_included

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        from .options import parse_percent

        try:
            return parse_percent(str(value), top_included=self.top_included)
        except LogReadError as err:
            self.fail(str(err), param, ctx)


class _Terminal:
    """The library's Console (app.py) over this process's stdin, stdout, stderr.

    stdout goes through terminal.Sink, which goes quiet when its reader closes
    (``| head -3``) so that a live pipe is read on to the end.
    """

    @functools.cached_property
    def _stdout(self) -> Sink:  # at the first write, as sys.stdout may be swapped (CliRunner)
        from .terminal import Sink

        return Sink(sys.stdout.buffer)

    def stdin(self) -> IO[bytes]:
        return sys.stdin.buffer

    def write(self, data: bytes) -> None:
        self._stdout.write(data)

    def out(self, text: str) -> None:
        self._stdout.line(text)

    def err(self, text: str) -> None:
        click.echo(text, err=True)


READ_EXAMPLES = """\b
Examples:
  vllm serve Qwen/Qwen3-8B 2>&1 | vllm-logread --prompt 512 --output 128
  vllm-logread boot.log --prompt 256,512 --min-users 30 --json > capacity.json
  vllm-logread logs/*.log --format csv

"""


@main.command("read", epilog=READ_EXAMPLES + EXIT_CODES)
@click.argument("files", nargs=-1, metavar="[FILE]...", shell_complete=_complete_path)
@click.option(
    "--metrics-url",
    metavar="URL",
    default=None,
    help="Read a running vLLM's Prometheus text (http://host:8000/metrics) instead of a log: "
    "the pool and the load now. A /metrics text piped in or named as FILE is recognised too.",
)
@click.option(
    "--compare-metrics",
    metavar="FILE|URL",
    shell_complete=_complete_path,
    default=None,
    help="The same server's /metrics (a saved text or http://host:8000/metrics): every figure "
    "the log and its cache_config_info both state, side by side, each difference explained by "
    "vLLM's rule. One log.",
)
@click.option(
    "--prometheus",
    metavar="URL",
    default=None,
    help="Read every vLLM server a Prometheus scrapes (http://prometheus:9090): one row per "
    "server (pool, users, the window's peaks and preemptions), a total per model.",
)
@click.option(
    "--since",
    default="1h",
    show_default=True,
    metavar="DURATION",
    help="With --prometheus: the window of the peaks and counts (90s, 30m, 1h, 2d).",
)
@click.option(
    "--by",
    multiple=True,
    metavar="LABEL[,LABEL...]",
    help="With --prometheus: the labels that identify a server (default instance,model_name,"
    "engine; --by instance folds an instance's engines into one row).",
)
@_workload(sweeps=True)
@_config()
@_block_size("when the log does not state it (default: vLLM's for the device)")
@_format(
    "read",
    "text; markdown (for any CI); csv (one row per server, or the sweep); json; github "
    "(Actions annotations, and a summary to $GITHUB_STEP_SUMMARY).",
)
@_gpu(
    "The GPU the log came from, when the log does not state its total memory; for the "
    "utilization and GPU what-ifs."
)
@click.option(
    "--explain",
    is_flag=True,
    help="Add the arithmetic behind every figure, every check and every what-if in full to "
    "the text report (lines may then exceed 100 columns).",
)
@click.option(
    "--min-users",
    type=click.IntRange(0),
    metavar="N",
    default=None,
    help="CI gate: exit 1 when fewer users fit at the workload (at any workload of a sweep; "
    "the message names each one short).",
)
@click.option(
    "--margin",
    type=_Percent(top_included=False),
    default=None,
    help="With --min-users: boot-to-boot tolerance (the memory profile moves a pool a few "
    "percent between boots). --min-users 30 --margin 5% fails below 28.5: 29 passes with a "
    "warning, 28 fails.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="A line with a known marker that fails its pattern is fatal (exit 3).",
)
@click.option("--all-boots", is_flag=True, help="Report every boot in the log, not only the last.")
@click.option(
    "--echo/--no-echo",
    default=None,
    help="Pass every input line through to stdout, the report inserted as a marked block "
    "(default when reading standard input without --json).",
)
@click.option(
    "--stats-csv",
    metavar="FILE",
    shell_complete=_complete_path,
    default=None,
    help="Write the stats lines' time series (time, engine, running, waiting, kv_usage_pct, "
    "prompt_tps, generation_tps, preemptions) to FILE as CSV.",
)
@click.option(
    "--stats-jsonl",
    metavar="FILE",
    shell_complete=_complete_path,
    default=None,
    help="Write every stats line's facts to FILE as JSON Lines, as they are read "
    "(--json holds the load folded).",
)
@click.option(
    "--no-stats",
    "no_stats",
    is_flag=True,
    help="Skip the stats lines: the boot report alone, without the load (fastest on a big log).",
)
@click.option(
    "--what-if",
    "what_if",
    multiple=True,
    metavar="CHANGE",
    help="Users under a change, added to 'What to change' (repeatable): kv_cache_dtype=fp8, "
    "weights=fp8, gpu_memory_utilization=0.95, max_model_len=4096, tensor_parallel_size=2, "
    "gpu=H100-80GB, gpu_memory_gib=80, max_num_batched_tokens=8192; combine with '+'.",
)
@click.option(
    "--target-users",
    type=click.IntRange(1),
    metavar="N",
    default=None,
    help="List the smallest changes (FP8 KV or weights, utilization, bigger GPUs, TP) that fit "
    "this many users, with their arithmetic.",
)
@click.option(
    "--sort",
    type=click.Choice(["input", "users"]),
    default="input",
    show_default=True,
    help="Several inputs: the servers' rows in the order given, or most users first.",
)
@click.option(
    "--plot",
    "plot_path",
    metavar="FILE",
    shell_complete=_complete_path,
    default=None,
    help="Draw users against tokens per user (and the load over time) to FILE.png or .svg; "
    "needs matplotlib.",
)
@click.option(
    "--shared-prefix",
    "shared_prefix",
    type=click.IntRange(0),
    default=0,
    metavar="N",
    help="Tokens of system prompt every request starts with: with prefix caching on, its full "
    "blocks are held once in the pool, each user holds the rest.",
)
@click.option(
    "--simulate",
    is_flag=True,
    help="Add to the load verdict whether the log's peak and settle are the scheduler "
    "simulation's (users: the most running + waiting on a stats line; one --prompt/--output "
    "request each).",
)
@click.option(
    "--simulate-users",
    type=click.IntRange(1),
    default=None,
    metavar="N",
    help="The closed-loop users to simulate (implies --simulate).",
)
@click.option(
    "--simulate-rounds",
    type=click.IntRange(1),
    default=None,
    metavar="N",
    help="Requests per simulated user (simulate's --rounds; implies --simulate): later waves.",
)
@click.option(
    "--simulate-spread",
    type=click.FloatRange(min=0),
    default=0.0,
    metavar="N",
    help="Start the simulated users' first requests over N steps (simulate's --spread; "
    "implies --simulate): the steady count instead of waves.",
)
def read_cmd(**params: object) -> None:
    """Report the KV pool and the users that fit, from vLLM logs or a pipe.

    On a pipe the report comes as soon as the boot has stated its pool; then
    the stats lines are watched against it until the end of input or Ctrl-C.
    The report opens with the answer; --explain adds the arithmetic.
    """
    with _machinery("vllm_logread.cli.app"):
        from . import app
        from .options import ReadOptions

    options = ReadOptions(**_given(params), summary_path=os.environ.get("GITHUB_STEP_SUMMARY"))
    _run(lambda: app.run_read(options, _Terminal()))


KV_EXIT_CODES = """\b
Exit codes:
  0  ok (with --gpu, also an estimate that says the boot would fail)
  2  usage error; a model or GPU the tables do not know (the message names the
     close ones and how to go on: --list-models, --list-gpus, --gpu-memory-gib,
     the command that fetches a config.json)
"""


KV_EXAMPLES = """\b
Examples:
  vllm-logread kv Qwen/Qwen3-8B --tp 2 --kv-cache-dtype fp8
  vllm-logread kv Qwen/Qwen3-8B --gpu "NVIDIA H100 80GB HBM3" --prompt 512 --output 128
  vllm-logread kv --list-gpus

"""


@main.command("kv", epilog=KV_EXAMPLES + KV_EXIT_CODES)
@click.argument(
    "model_or_config", metavar="[MODEL]", required=False, shell_complete=_complete_model
)
@click.option(
    "--list-models",
    is_flag=True,
    help="List the shipped table's models (no MODEL); --format csv/markdown/json too.",
)
@click.option(
    "--list-architectures",
    is_flag=True,
    help="List every architecture of vLLM 0.34's registry and whether this tool models it: "
    "verified (a hand-worked test), modelled, or not verified (never exact on its own).",
)
@click.option(
    "--list-gpus",
    is_flag=True,
    help="List the GPU table: each card's memory and its source (no MODEL).",
)
@click.option(
    "--tp",
    "tensor_parallel_size",
    type=click.IntRange(1, 1024),
    metavar="N",
    default=1,
    show_default=True,
    help="Tensor parallel size (KV heads per GPU).",
)
@click.option(
    "--pp",
    "pipeline_parallel_size",
    type=click.IntRange(1, 1024),
    metavar="N",
    default=1,
    show_default=True,
    help="Pipeline parallel size (layers per GPU).",
)
@click.option(
    "--kv-cache-dtype",
    metavar="DTYPE",
    default="auto",
    show_default=True,
    help="auto (the model's dtype), fp8, fp8_e4m3, fp8_e5m2, ...",
)
@click.option(
    "--vllm-version",
    default=None,
    metavar="X.Y.Z",
    help="The vLLM version whose rules apply (default: the newest this tool knows, "
    "as a plan is for the vLLM one would install today).",
)
@click.option(
    "--tokens",
    "num_tokens",
    type=click.IntRange(0, 1 << 30),
    metavar="N",
    default=640,
    show_default=True,
    help="Tokens of the request whose blocks the 'how' lines count.",
)
@_format("kv", "text or json; csv and markdown for --list-models and --list-gpus.")
@_gpu(
    "Estimate the pool and the users before the boot on this GPU: its memory x the "
    "utilization, less the weights and estimated overheads."
)
@click.option(
    "--max-model-len",
    type=click.IntRange(1),
    metavar="N",
    default=None,
    help="With --gpu: the max model len to check (default: the config's "
    "max_position_embeddings, as vLLM).",
)
@_block_size("with --gpu (default: vLLM's for the model)")
@click.option(
    "--gpu-memory-utilization",
    type=click.FloatRange(0, 1, min_open=True),
    metavar="N",
    default=None,
    help="With --gpu: the fraction vLLM may use (default: vLLM's: 1.0 with 0.34's extensible KV "
    "cache, 0.92 from 0.20, 0.90 before).",
)
@click.option(
    "--weights-gib",
    type=click.FloatRange(0),
    metavar="N",
    default=None,
    help="With --gpu: the weights per GPU in GiB, when the estimate cannot count them.",
)
@click.option(
    "--max-num-seqs",
    type=click.IntRange(1),
    metavar="N",
    default=None,
    help="With --gpu: vLLM's max_num_seqs (default: vLLM's for the GPU's memory).",
)
@_workload(sweeps=False, with_file=False)
@click.option(
    "--explain",
    is_flag=True,
    help="With --gpu: where each estimate comes from (the logs it was fitted to).",
)
def kv_cmd(**params: object) -> None:
    """The KV bytes per token of a model, from its config.json, without any log;
    with --gpu, the pool and the users a boot would give (an estimate, with its range).
    """
    with _machinery("vllm_logread.cli.kv_app"):
        from .kv_app import KvOptions, run_kv

    _run(lambda: run_kv(KvOptions(**_given(params)), _Terminal()))


SIMULATE_EXIT_CODES = """\b
Exit codes:
  0  ok
  2  usage error; a file that cannot be read
  3  the log lacks the KV pool (or its block size): pass --num-blocks and --block-size
"""


SIMULATE_EXAMPLES = """\b
Examples:
  vllm-logread simulate server.log --users 48 --prompt 512 --output 128
  vllm-logread simulate server.log --users 40 --workload requests.csv --json

"""


@main.command("simulate", epilog=SIMULATE_EXAMPLES + SIMULATE_EXIT_CODES)
@click.argument("file", metavar="LOG", default="-", shell_complete=_complete_path)
@click.option(
    "--users",
    type=click.IntRange(1),
    metavar="N",
    default=None,
    help="Closed-loop users: each sends a request, and the next when it is answered.",
)
@_workload(sweeps=False)
@click.option(
    "--requests",
    type=click.IntRange(1),
    metavar="N",
    default=None,
    help="Stop sending after N requests in all (a real run's count of answered requests).",
)
@click.option(
    "--rounds",
    type=click.IntRange(1),
    metavar="N",
    default=None,
    help="Requests per user (default 1 unless --requests is given).",
)
@click.option(
    "--spread",
    type=click.FloatRange(min=0),
    default=0.0,
    metavar="N",
    help="Start the users' first requests evenly over N steps instead of together "
    "(users who joined over a while: no waves, a steady count).",
)
@click.option(
    "--arrival-interval",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="N",
    help="A fixed rate instead of users: one request every N steps.",
)
@click.option(
    "--steps",
    type=click.IntRange(1),
    metavar="N",
    default=1000,
    show_default=True,
    help="Scheduler steps to run (one step: one token for each running request).",
)
@click.option(
    "--max-num-seqs",
    type=click.IntRange(1),
    metavar="N",
    default=None,
    help="Requests running at once (default: the log's, else vLLM's for the device).",
)
@click.option(
    "--max-num-batched-tokens",
    type=click.IntRange(1),
    metavar="N",
    default=None,
    help="Tokens a step may compute (default: vLLM's for the device, 2,048 for most).",
)
@click.option(
    "--chunked-prefill/--no-chunked-prefill",
    default=None,
    help="Split long prompts over steps (default: vLLM's, on; off for MLA on CPU).",
)
@click.option(
    "--num-blocks", type=click.IntRange(1), metavar="N", default=None, help="Override the pool."
)
@_block_size("when the log does not state it, or to override it")
@_config()
@_format("simulate", "text; json (with the steps); csv (the steps, one row each).")
@click.option(
    "--steps-csv",
    metavar="FILE",
    shell_complete=_complete_path,
    default=None,
    help="Write the simulation's steps as CSV to FILE (read's --stats-csv is the log's stats "
    "lines).",
)
# The old spelling of --steps-csv, which read uses for the log's stats lines: kept
# working, hidden, with a note on stderr (one meaning per option name).
@click.option(
    "--stats-csv",
    "old_stats_csv",
    metavar="FILE",
    shell_complete=_complete_path,
    default=None,
    hidden=True,
    help="The old name of --steps-csv (a note on stderr says so).",
)
@click.option(
    "--output-dist",
    metavar="uniform:LO:HI",
    default=None,
    help="Draw each request's output tokens uniformly in [LO, HI] (seeded by --seed).",
)
@click.option(
    "--seed", type=int, metavar="N", default=0, show_default=True, help="Seed of --output-dist."
)
@click.option(
    "--plot",
    "plot_path",
    metavar="FILE",
    shell_complete=_complete_path,
    default=None,
    help="Draw the simulation (running, KV usage) beside the log's own stats lines, x as the "
    "answer tokens generated so far (steps are not seconds). Needs vllm-logread[plot].",
)
def simulate_cmd(**params: object) -> None:
    """Replay vLLM's scheduler over the log's KV pool: peak, settle, preemptions.

    --workload FILE gives each request's prompt and output tokens, cycled: user
    u's k-th request is row (k x users + u) mod the rows of the expanded file;
    with --arrival-interval, in order.
    """
    with _machinery("vllm_logread.cli.simulate_app"):
        from .simulate_app import SimulateOptions, run_simulate

    old = params.pop("old_stats_csv", None)
    if old is not None:
        click.echo(
            "warning: simulate --stats-csv is now --steps-csv (read's --stats-csv writes the "
            "log's stats lines); the old name will go in a later release",
            err=True,
        )
        params["steps_csv"] = params.get("steps_csv") or old
    _run(lambda: run_simulate(SimulateOptions(**_given(params)), _Terminal()))


DIFF_EXIT_CODES = """\b
Exit codes:
  0  ok
  1  a CI gate failed (--max-drop: the users fell more than PCT%, or are unknown)
  2  usage error; an input that cannot be read (named OLD or NEW)
  3  an input lacks the KV pool, or its boot serves nobody (named OLD or NEW)
  4  an input contradicts its model config
  The highest applies; the comparison is printed whatever the code.
"""


DIFF_EXAMPLES = """\b
Examples:
  vllm-logread diff old.log new.log
  vllm-logread diff v0.19.log v0.20.log --max-drop 10   # an upgrade gate
  curl -s localhost:8000/metrics | vllm-logread diff baseline.log - --json

"""


@main.command("diff", epilog=DIFF_EXAMPLES + DIFF_EXIT_CODES)
@click.argument("old", metavar="OLD", shell_complete=_complete_path)
@click.argument("new", metavar="NEW", shell_complete=_complete_path)
@_workload(sweeps=False, with_file=False)
@_config(" (both inputs)")
@_block_size("when a log does not state it")
@click.option(
    "--max-drop",
    type=_Percent(),
    default=None,
    help="CI gate: exit 1 when the users fell more than PCT percent from OLD to NEW (10% or 10).",
)
@_format(
    "diff",
    "text; json; markdown or csv (the side-by-side table); github (Actions annotations: the "
    "gate on NEW's pool line, and the table to $GITHUB_STEP_SUMMARY).",
)
def diff_cmd(**params: object) -> None:
    """What changed between two boots (two logs, or a log and a /metrics text),
    side by side, and which line explains the change of the pool.
    """
    with _machinery("vllm_logread.cli.diff_app"):
        from .diff_app import DiffOptions, run_diff

    options = DiffOptions(**_given(params), summary_path=os.environ.get("GITHUB_STEP_SUMMARY"))
    _run(lambda: run_diff(options, _Terminal()))


def run() -> None:
    """Entry point for ``python -m vllm_logread``."""
    main(prog_name="vllm-logread")
