"""The options several commands share, checked and turned into a report's
options in one place.

``read``, ``kv``, ``diff`` and ``simulate`` take the same workload
(``--prompt``/``--output`` with ``read``'s grammar: one number, a list or a
range; ``--workload FILE``), ``--config``, ``--block-size``, ``--gpu`` /
``--gpu-memory-gib`` and ``--format``/``--json``. commands.py declares each option
once and passes its value here as it was typed; each command's options class
(``ReadOptions`` below, ``diff_app.DiffOptions``, ``simulate_app.SimulateOptions``)
is a :class:`CommonOptions`, so a workload is built, a format chosen and a
report's :class:`~vllm_logread.report.model.Options` made by the functions
below and nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..vllm.rules import ESTIMATE_VERSION
from .formats import FORMATS

if TYPE_CHECKING:  # capacity's import waits for the command that reads
    from ..report.capacity import Workload

#: A user's prompt and answer when --prompt/--output are not given (README, "Use").
DEFAULT_PROMPT_TOKENS = 512
DEFAULT_OUTPUT_TOKENS = 128

#: The vLLM whose rules ``kv`` plans with when --vllm-version is not given, with
#: or without --gpu: rules.ESTIMATE_VERSION, the newest release this tool was
#: checked against (a plan before a boot is for the vLLM one would install today).
NEWEST_VLLM = ESTIMATE_VERSION


#: A workload's token counts are at least 1: vLLM rejects an empty prompt and
#: max_tokens 0 (``--prompt 0 --output 0`` was read as a request of 0 tokens).
MIN_WORKLOAD_TOKENS = 1


def parse_percent(text: str, *, top_included: bool = True) -> float:
    """A percentage option's value, one grammar for every command (``--margin``,
    ``diff --max-drop``): "5%", "5" or "2.5 %"; 0 to 100 (``top_included``
    False: below 100).

    >>> parse_percent("5%"), parse_percent("2.5"), parse_percent(" 10 % ")
    (5.0, 2.5, 10.0)

    Raises:
        UsageError: not a number, NaN, or outside the range.
    """
    body = text.strip().removesuffix("%").strip()
    try:
        value = float(body)
    except ValueError:
        value = float("nan")
    top_ok = value <= 100 if top_included else value < 100
    if not (value >= 0 and top_ok):
        top = "100" if top_included else "below 100"
        raise UsageError(f"{text!r} is not a percentage from 0 to {top} (e.g. 5% or 5)")
    return value


class OptionsError(UsageError):
    """Options or arguments that cannot work together; the CLI shows it as a
    usage error (click's ``Usage:`` line, exit 2)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommonOptions:
    """The options every command that reads a workload or a model shares.

    Attributes:
        prompt_tokens, output_tokens: as given; ``()`` when not given (then
            DEFAULT_PROMPT_TOKENS / DEFAULT_OUTPUT_TOKENS). Several: a sweep.
        workload_path: ``--workload FILE``, a mix of requests (replaces both).
        config: the model's config.json (or its folder).
        model: ``--model NAME``: the model by name, its config found as ``kv``
            finds it (a path, the offline Hugging Face cache, the shipped table).
        block_size: the KV block size when the log does not state it.
        gpu: a card of the GPU table; gpu_memory_gib: any card, by its memory.
        fmt: ``--format``; as_json: ``--json`` (= ``--format json``).
    """

    prompt_tokens: tuple[int, ...] = ()
    output_tokens: tuple[int, ...] = ()
    workload_path: str | None = None
    config: str | None = None
    model: str | None = None
    block_size: int | None = None
    gpu: str | None = None
    gpu_memory_gib: float | None = None
    fmt: str = "text"
    as_json: bool = False

    @property
    def prompts(self) -> tuple[int, ...]:
        """The prompt tokens asked for (512 when not given)."""
        return self.prompt_tokens or (DEFAULT_PROMPT_TOKENS,)

    @property
    def outputs(self) -> tuple[int, ...]:
        """The output tokens asked for (128 when not given)."""
        return self.output_tokens or (DEFAULT_OUTPUT_TOKENS,)

    @property
    def is_sweep(self) -> bool:
        """Several prompts or outputs: a table of users per workload."""
        return len(self.prompts) > 1 or len(self.outputs) > 1

    @property
    def has_workload_tokens(self) -> bool:
        """--prompt or --output given (not their defaults)."""
        return bool(self.prompt_tokens or self.output_tokens)


def check_common(opts: CommonOptions, command: str, *, sweeps: bool = False) -> None:
    """The checks every command makes of the shared options, before any input
    is read.

    Raises:
        OptionsError: --workload with --prompt/--output; a sweep to a command
            that compares one workload; --json with another --format; --gpu
            with --gpu-memory-gib; a format the command does not write.
        UsageError: a --gpu the table does not know; a --gpu-memory-gib no
            card has (report/gpus.gpu_of_memory).
    """
    if opts.workload_path is not None and opts.has_workload_tokens:
        raise OptionsError(
            "--workload FILE is the workload: give it or --prompt/--output, not both"
        )
    if opts.is_sweep and not sweeps:
        raise OptionsError(
            f"{command} takes one workload: give one --prompt and one --output "
            "(read sweeps lists and ranges)"
        )
    if opts.gpu is not None and opts.gpu_memory_gib is not None:
        raise OptionsError("--gpu names a card of the table, --gpu-memory-gib any card: not both")
    gpu_card(opts)  # a card the table does not know, a memory no card has: before any input
    if opts.model is not None:
        if opts.config is not None:
            raise OptionsError(
                "--model names the model and --config gives its config.json: one or the other"
            )
        from ..kv.config import check_model_name

        check_model_name(opts.model)  # a name nothing offline knows: exit 2, before any input
    output_format(opts, command)


def output_format(opts: CommonOptions, command: str) -> str:
    """The format to write: ``--json`` is ``--format json``.

    >>> output_format(CommonOptions(as_json=True), "diff")
    'json'

    Raises:
        OptionsError: ``--json`` with another ``--format``; a format ``command``
            does not write.
    """
    if opts.as_json and opts.fmt not in ("text", "json"):
        raise OptionsError(
            f"--json is --format json: give one or the other, not --format {opts.fmt}"
        )
    fmt = "json" if opts.as_json else opts.fmt
    allowed = FORMATS[command]
    if fmt not in allowed:
        raise OptionsError(f"{command} --format {fmt!r}: one of {', '.join(allowed)}")
    return fmt


def one_workload(opts: CommonOptions, *, with_file: bool = True) -> Workload:
    """The workload of a command that takes one: --workload FILE's mix, or the
    first --prompt and --output (a sweep's first row). ``with_file=False``: the
    --prompt/--output pair even with --workload (simulate cycles the file's
    requests itself; its report keeps the pair).

    Raises:
        InputError: the workload file cannot be read (exit 2).
    """
    from ..report.capacity import Workload

    if with_file and opts.workload_path is not None:
        from ..vllm.workload import read_workload

        mix = read_workload(opts.workload_path)
        return Workload.of_mix(mix.requests, source=mix.source)
    return Workload(prompt_tokens=opts.prompts[0], output_tokens=opts.outputs[0])


def gpu_card(opts: CommonOptions) -> Any:
    """--gpu's row of the GPU table, or a card of --gpu-memory-gib; None for neither.

    Raises:
        UsageError: a name the table does not know (with the close ones).
    """
    from ..report.gpus import find_gpu, gpu_of_memory

    if opts.gpu_memory_gib is not None:
        return gpu_of_memory(opts.gpu_memory_gib)
    return None if opts.gpu is None else find_gpu(opts.gpu)


def report_options(opts: CommonOptions, workload: Workload, **more: Any) -> Any:
    """The report's :class:`~vllm_logread.report.model.Options` of ``opts``:
    the workload, --config, --block-size and the GPU, and what the command adds
    (``what_ifs``, ``target_users``, ``shared_prefix_tokens``)."""
    from ..report.model import Options

    return Options(
        workload=workload,
        config=opts.config,
        model=opts.model,
        block_size=opts.block_size,
        gpu=gpu_card(opts),
        **more,
    )


def model_notes(given: str | None, boots: Sequence[Any]) -> list[str]:
    """One stderr line for each boot whose log names another model than
    ``--model`` (``given``): which name the report uses (``--model``'s, as a
    ``--config`` given wins over the log's name) and the log's line.

    ``boots``: boots.Boot objects (their first ``model`` fact).
    """
    if given is None:
        return []
    from ..kv.config import is_same_model

    out: list[str] = []
    for boot in boots:
        f = boot.first("model")
        if f is None or is_same_model(given, str(f.value)):
            continue
        note = (
            f"warning: --model {given} is not the model the log names ({f.value}, line "
            f"{f.line}): --model wins, its config sizes the KV cache; a figure of the log "
            "that disagrees with it fails its check"
        )
        if note not in out:
            out.append(note)
    return out


def unused_options(opts: Any, fmt: str) -> list[str]:
    """What ``read`` was asked that the chosen output cannot carry, one warning
    each for stderr (an option never vanishes in silence).

    ``opts``: read's options (ReadOptions); ``fmt``: the output format.

    >>> from types import SimpleNamespace as O
    >>> unused_options(O(simulate=True, simulate_users=None, explain=False, what_if=(),
    ...                  target_users=None, is_sweep=False), "json")
    ['warning: --simulate adds its verdict to the text load summary; --format json does not carry it (run without --json/--format for it, or: vllm-logread simulate LOG --json)']
    """
    out: list[str] = []
    if fmt == "text" and not opts.is_sweep:
        return out
    where = "a sweep's table" if opts.is_sweep else f"--format {fmt}"
    if opts.simulate or getattr(opts, "wants_simulation", opts.simulate_users is not None):
        flag = "--simulate" if opts.simulate else "--simulate-users"
        out.append(
            f"warning: {flag} adds its verdict to the text load summary; {where} does not "
            "carry it (run without --json/--format for it, or: vllm-logread simulate LOG --json)"
        )
    if opts.explain:
        out.append(f"warning: --explain adds the arithmetic to the text report; {where} has none")
    if (opts.what_if or opts.target_users is not None) and (opts.is_sweep or fmt == "csv"):
        flag = "--what-if" if opts.what_if else "--target-users"
        out.append(
            f"warning: {flag} answers one workload's report; {where} has one row per "
            "server or workload and no what-ifs (--json or markdown carry them)"
        )
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadOptions(CommonOptions):
    """The ``read`` command's options, named as its click parameters; the
    shared ones (workload, config, block size, GPU, format) are CommonOptions'.

    Attributes:
        files: the inputs; ``-`` or none is standard input.
        metrics_url: read a server's /metrics text instead of files.
        echo: pass the input through to stdout; None: when reading stdin
            without JSON, a table or annotations on stdout.
        summary_path: ``$GITHUB_STEP_SUMMARY`` for ``--format github``.
        explain: the text report with the arithmetic of every figure.
    """

    files: tuple[str, ...] = ()
    metrics_url: str | None = None
    # --compare-metrics: the same server's /metrics (a file or a URL) beside the one log.
    compare_metrics: str | None = None
    # --prometheus: the fleet Prometheus scrapes, over --since, one row per --by value.
    prometheus: str | None = None
    since: str = "1h"
    by: tuple[str, ...] = ()
    min_users: int | None = None
    # --margin: the gate's boot-to-boot tolerance in percent (--margin 5% is 5.0:
    # parse_percent); None: none.
    margin: float | None = None
    strict: bool = False
    all_boots: bool = False
    echo: bool | None = None
    stats_csv: str | None = None
    stats_jsonl: str | None = None
    no_stats: bool = False
    what_if: tuple[str, ...] = ()
    target_users: int | None = None
    plot_path: str | None = None
    summary_path: str | None = None
    explain: bool = False
    shared_prefix: int = 0
    # --sort: the servers' rows in input order (default) or most users first.
    sort: str = "input"
    simulate: bool = False
    simulate_users: int | None = None
    # The simulated closed loop (--simulate-rounds, --simulate-spread; simulate's
    # --rounds and --spread): requests per user, first requests spread over steps.
    simulate_rounds: int | None = None
    simulate_spread: float = 0.0

    @property
    def wants_simulation(self) -> bool:
        """--simulate or any option that implies it."""
        return (
            self.simulate
            or self.simulate_users is not None
            or self.simulate_rounds is not None
            or self.simulate_spread > 0
        )
