"""The command line: options in, library calls, output and an exit code out.

Exit codes (README): 0 ok; 1 a CI gate failed (--min-users); 2 usage error;
3 the log lacks what was asked (no KV pool line; a near miss under --strict);
4 the log contradicts the model config beyond the printed precision.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import IO, Any

import click

from .errors import LogReadError

# The reading machinery (patterns, regexes, report) is imported by the command
# that reads, not here: `vllm-logread --help` and `kv` start as fast as click.


#: Every command's help ends with the exit codes (README, "Exit codes").
EXIT_CODES = """\b
Exit codes:
  0  ok
  1  a CI gate failed (--min-users: fewer users, at any workload of a sweep)
  2  usage error; a file that cannot be read; an extra not installed
  3  the log lacks the KV pool (or --strict: a near miss)
  4  the log contradicts the model config
  130/143  interrupted (Ctrl-C / SIGTERM), after the load summary
  --prometheus: 2 also Prometheus unreachable or a query rejected; 3 no
     vLLM server in the window, or none answers now (all down or stale)
  Several inputs: each on its own; the exit code is the highest of theirs.

\b
Shell completion: eval "$(_VLLM_LOGREAD_COMPLETE=bash_source vllm-logread)"
(zsh: zsh_source; fish: _VLLM_LOGREAD_COMPLETE=fish_source vllm-logread | source)
"""


def _one_workload(when: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--prompt`` and ``--output`` as one user's tokens (kv, diff; ``read`` takes lists)."""

    def add(f: Callable[..., Any]) -> Callable[..., Any]:
        for name, dest, default, what in (
            ("--output", "output_tokens", 128, "output"),
            ("--prompt", "prompt_tokens", 512, "prompt"),
        ):
            f = click.option(
                name,
                dest,
                type=click.IntRange(0),
                default=default,
                show_default=True,
                help=f"{when}{what.capitalize() if not when else what} tokens per user.",
            )(f)
        return f

    return add


class _DefaultGroup(click.Group):
    """A group whose default command is ``read``: ``vllm-logread FILE`` reads FILE."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (
            args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")
        ):
            args.insert(0, "read")
        return super().parse_args(ctx, args)


@click.group(
    cls=_DefaultGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES,
)
@click.version_option(package_name="vllm-logread")
def main() -> None:
    """Read a vLLM log and say how many users really fit in its KV cache.

    The default command is `read`; `vllm-logread FILE` is `vllm-logread read FILE`.

    \b
    Examples:
      vllm-logread sample_logs/seed_qwen3-8b_l4.log --prompt 512 --output 128
      vllm serve Qwen/Qwen3-8B 2>&1 | vllm-logread --prompt 512 --output 128
      vllm-logread kv Qwen/Qwen3-8B --tp 2 --kv-cache-dtype fp8
    """


def _error(err: LogReadError) -> click.ClickException:
    """A library error as click's one ``Error: ...`` line, with its documented
    exit code (ClickException alone exits 1, the gate's code)."""

    class _Error(click.ClickException):
        exit_code = err.exit_code

    return _Error(str(err))


class _IntList(click.ParamType):  # type: ignore[type-arg]
    """One number, a list (256,512,2048) or a range (256:2048:256, stop included)."""

    name = "N[,N...]|START:STOP[:STEP]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        from .render.tables import parse_int_list

        try:
            return parse_int_list(str(value))
        except LogReadError as err:
            self.fail(str(err), param, ctx)


class _Terminal:
    """The library's Console (app.py) over this process's stdin, stdout, stderr.

    stdout goes through live.Sink, which goes quiet when its reader closes
    (``| head -3``) so that a live pipe is read on to the end.
    """

    @functools.cached_property
    def _stdout(self) -> Any:  # at the first write, as sys.stdout may be swapped (CliRunner)
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


@main.command("read", epilog=EXIT_CODES)
@click.argument("files", nargs=-1, metavar="[FILE]...")
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
@click.option(
    "--prompt",
    "prompt_tokens",
    type=_IntList(),
    default=512,
    show_default=True,
    help="Prompt tokens per user; a list (256,512,2048) or a range (256:2048:256) sweeps.",
)
@click.option(
    "--output",
    "output_tokens",
    type=_IntList(),
    default=128,
    show_default=True,
    help="Output tokens per user; a list or a range sweeps (a table of users per workload).",
)
@click.option(
    "--config",
    "config",
    metavar="PATH",
    help="The model's config.json (or its folder); default: the offline Hugging Face "
    "cache, then the shipped table.",
)
@click.option(
    "--block-size",
    type=click.IntRange(1, 1_000_000),
    default=None,
    help="KV block size when the log does not state it (default: vLLM's for the device).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON object, whatever else is asked (= --format json).",
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
    default=None,
    help="CI gate: exit 1 when fewer users fit at the workload (at any workload of a sweep; "
    "the message names each one short).",
)
@click.option(
    "--margin",
    metavar="PCT",
    default=None,
    help="With --min-users: boot-to-boot tolerance (the memory profile moves a pool a few "
    "percent between boots). --min-users 30 --margin 5%% fails below 28.5: 29 passes with a "
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
    default=None,
    help="Write the stats lines' time series (time, engine, running, waiting, kv_usage_pct, "
    "prompt_tps, generation_tps, preemptions) to FILE as CSV; needs pandas.",
)
@click.option(
    "--stats-jsonl",
    metavar="FILE",
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
    "gpu=H100-80GB, gpu_memory_gib=80; combine with '+'.",
)
@click.option(
    "--target-users",
    type=click.IntRange(1),
    default=None,
    help="List the smallest changes (FP8 KV or weights, utilization, bigger GPUs, TP) that fit "
    "this many users, with their arithmetic.",
)
@click.option(
    "--gpu",
    metavar="NAME",
    default=None,
    help="The GPU the log came from (L4, A10G, H100-80GB, ...), when the log does not state "
    "its total memory; for the utilization and GPU what-ifs.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "csv", "json", "github"]),
    default="text",
    show_default=True,
    help="text; markdown (for any CI); csv (one row per server, or the sweep); json; github "
    "(Actions annotations, and a summary to $GITHUB_STEP_SUMMARY).",
)
@click.option(
    "--plot",
    "plot_path",
    metavar="FILE",
    default=None,
    help="Draw users against tokens per user (and the load over time) to FILE.png or .svg; "
    "needs matplotlib.",
)
@click.option(
    "--workload",
    "workload_path",
    metavar="FILE",
    default=None,
    help="A mix of requests (CSV or JSONL: prompt and output tokens per request, an optional "
    "count): users as vLLM charges each request its own blocks, with the spread. Replaces "
    "--prompt/--output (giving both is a usage error).",
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
def read_cmd(**params: Any) -> None:
    """Report the KV pool and the users that fit, from vLLM logs or a pipe.

    On a pipe the report comes as soon as the boot has stated its pool; then
    the stats lines are watched against it until the end of input or Ctrl-C.
    The report opens with the answer; --explain adds the arithmetic.

    \b
    Examples:
      vllm serve Qwen/Qwen3-8B 2>&1 | vllm-logread --prompt 512 --output 128
      vllm-logread boot.log --prompt 256,512 --min-users 30 --json > capacity.json
      vllm-logread logs/*.log --format csv
    """
    from . import app

    ctx = click.get_current_context()
    if params.get("workload_path") is not None and any(
        ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
        for name in ("prompt_tokens", "output_tokens")
    ):
        raise click.UsageError(
            "--workload FILE is the workload: give it or --prompt/--output, not both"
        )
    options = app.ReadOptions(**params, summary_path=os.environ.get("GITHUB_STEP_SUMMARY"))
    try:
        code = app.run_read(options, _Terminal())
    except app.OptionsError as err:
        raise click.UsageError(str(err)) from err
    except LogReadError as err:
        raise _error(err) from err
    sys.exit(code)


@main.command("kv", epilog=EXIT_CODES)
@click.argument("model_or_config")
@click.option(
    "--tp",
    "tensor_parallel_size",
    type=click.IntRange(1, 1024),
    default=1,
    show_default=True,
    help="Tensor parallel size (KV heads per GPU).",
)
@click.option(
    "--pp",
    "pipeline_parallel_size",
    type=click.IntRange(1, 1024),
    default=1,
    show_default=True,
    help="Pipeline parallel size (layers per GPU).",
)
@click.option(
    "--kv-cache-dtype",
    default="auto",
    show_default=True,
    help="auto (the model's dtype), fp8, fp8_e4m3, fp8_e5m2, ...",
)
@click.option(
    "--vllm-version",
    default=None,
    help="The vLLM version whose rules apply (default: those of 0.30 and before where "
    "0.31+ differ).",
)
@click.option(
    "--tokens",
    "num_tokens",
    type=click.IntRange(0, 1 << 30),
    default=640,
    show_default=True,
    help="Tokens of the request whose blocks the 'how' lines count.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (= --format json).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text or json.",
)
@click.option(
    "--gpu",
    metavar="NAME",
    default=None,
    help="Estimate the pool and the users before the boot on this GPU (H100-80GB, L4, ...): "
    "its memory x the utilization, less the weights and estimated overheads.",
)
@click.option(
    "--max-model-len",
    type=click.IntRange(1),
    default=None,
    help="With --gpu: the max model len to check (default: the config's "
    "max_position_embeddings, as vLLM).",
)
@click.option(
    "--block-size",
    type=click.IntRange(1, 1_000_000),
    default=None,
    help="With --gpu: KV block size (default: vLLM's for the model).",
)
@click.option(
    "--gpu-memory-utilization",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    help="With --gpu: the fraction vLLM may use (default: vLLM's, 0.92 from 0.20, 0.90 before).",
)
@click.option(
    "--weights-gib",
    type=click.FloatRange(0),
    default=None,
    help="With --gpu: the weights per GPU in GiB, when the estimate cannot count them.",
)
@click.option(
    "--max-num-seqs",
    type=click.IntRange(1),
    default=None,
    help="With --gpu: vLLM's max_num_seqs (default: vLLM's for the GPU's memory).",
)
@_one_workload("With --gpu: ")
@click.option(
    "--explain",
    is_flag=True,
    help="With --gpu: where each estimate comes from (the logs it was fitted to).",
)
def kv_cmd(
    model_or_config: str,
    tensor_parallel_size: int,
    pipeline_parallel_size: int,
    kv_cache_dtype: str,
    vllm_version: str | None,
    num_tokens: int,
    as_json: bool,
    fmt: str = "text",
    gpu: str | None = None,
    max_model_len: int | None = None,
    block_size: int | None = None,
    gpu_memory_utilization: float | None = None,
    weights_gib: float | None = None,
    max_num_seqs: int | None = None,
    prompt_tokens: int = 512,
    output_tokens: int = 128,
    explain: bool = False,
) -> None:
    """The KV bytes per token of a model, from its config.json, without any log;
    with --gpu, the pool and the users a boot would give (an estimate, with its range).

    \b
    Examples:
      vllm-logread kv Qwen/Qwen3-8B --tp 2 --kv-cache-dtype fp8
      vllm-logread kv Qwen/Qwen3-8B --gpu H100-80GB --prompt 512 --output 128
      vllm-logread kv meta-llama/Llama-3.1-70B-Instruct --gpu H100-80GB --tp 4 --json

    With --gpu it exits 0 with the estimate, also one that says the boot would
    fail; 2 for a model or GPU it does not know.
    """
    from .kv.config import spec_for_argument
    from .render.json import dumps, kv_report
    from .render.text import kv_text

    as_json = as_json or fmt == "json"
    try:
        spec = spec_for_argument(
            model_or_config,
            tensor_parallel_size=tensor_parallel_size,
            pipeline_parallel_size=pipeline_parallel_size,
            kv_cache_dtype=kv_cache_dtype,
        )
        if gpu is None:
            out = (
                dumps(kv_report(spec, vllm_version=vllm_version, num_tokens=num_tokens))
                if as_json
                else kv_text(spec, vllm_version=vllm_version, num_tokens=num_tokens)
            )
        else:
            from .capacity import Workload
            from .render.estimate import estimate_json, estimate_text
            from .report.estimate import estimate_boot

            est = estimate_boot(
                model_or_config,
                spec,
                gpu=gpu,
                workload=Workload(prompt_tokens=prompt_tokens, output_tokens=output_tokens),
                max_model_len=max_model_len,
                block_size=block_size,
                gpu_memory_utilization=gpu_memory_utilization,
                vllm_version=vllm_version,
                weights_gib=weights_gib,
                max_num_seqs=max_num_seqs,
            )
            if as_json:
                rep = kv_report(
                    spec,
                    block_size=est.block_size,
                    vllm_version=est.vllm_version,
                    num_tokens=prompt_tokens + output_tokens,
                )
                rep["boot_estimate"] = estimate_json(est)
                out = dumps(rep)
            else:
                out = estimate_text(est, explain=explain)
    except LogReadError as err:
        raise _error(err) from err
    click.echo(out)


@main.command("simulate")
@click.argument("file", metavar="LOG", default="-")
@click.option("--users", type=click.IntRange(1), default=None, help="Closed-loop users.")
@click.option(
    "--prompt", "prompt_tokens", type=click.IntRange(1), default=None, help="[default: 512]"
)
@click.option(
    "--output", "output_tokens", type=click.IntRange(1), default=None, help="[default: 128]"
)
@click.option(
    "--requests",
    type=click.IntRange(1),
    default=None,
    help="Stop sending after N requests in all (a real run's count of answered requests).",
)
@click.option(
    "--rounds",
    type=click.IntRange(1),
    default=None,
    help="Requests per user (default 1 unless --requests is given).",
)
@click.option(
    "--arrival-interval",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="STEPS",
    help="A fixed rate instead of users: one request every STEPS steps.",
)
@click.option("--steps", type=click.IntRange(1), default=1000, show_default=True)
@click.option("--max-num-seqs", type=click.IntRange(1), default=None)
@click.option("--max-num-batched-tokens", type=click.IntRange(1), default=None)
@click.option("--chunked-prefill/--no-chunked-prefill", default=None)
@click.option("--num-blocks", type=click.IntRange(1), default=None, help="Override the pool.")
@click.option("--block-size", type=click.IntRange(1), default=None)
@click.option("--config", metavar="PATH", default=None, help="The model's config.json.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the steps.")
@click.option("--stats-csv", metavar="FILE", default=None, help="Write the steps as CSV.")
@click.option(
    "--workload",
    metavar="FILE",
    default=None,
    help="Each request's prompt and output tokens (CSV or JSONL), cycled: user u's k-th "
    "request is row (k x users + u) mod the rows of the expanded file; with --arrival-interval, "
    "in order.",
)
@click.option(
    "--output-dist",
    metavar="uniform:LO:HI",
    default=None,
    help="Draw each request's output tokens uniformly in [LO, HI] (seeded by --seed).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --output-dist.")
@click.option(
    "--plot",
    "plot_path",
    metavar="FILE.png",
    default=None,
    help="Draw the simulation (running, KV usage) beside the log's own stats lines, x as the "
    "answer tokens generated so far (steps are not seconds). Needs vllm-logread[plot].",
)
def simulate_cmd(**params: Any) -> None:
    """Replay vLLM's scheduler over the log's KV pool: peak, settle, preemptions.

    Example: vllm-logread simulate server.log --users 48 --prompt 512 --output 128
    """
    from .simulate_app import SimulateOptions, run_simulate

    try:
        sys.exit(run_simulate(SimulateOptions(**params), _Terminal()))
    except LogReadError as err:
        raise _error(err) from err


DIFF_EXIT_CODES = """\b
Exit codes:
  0  ok
  1  a CI gate failed (--max-drop: the users fell more than PCT%, or are unknown)
  2  usage error; an input that cannot be read (named OLD or NEW)
  3  an input lacks the KV pool, or its boot serves nobody (named OLD or NEW)
  4  an input contradicts its model config
  The highest applies; the comparison is printed whatever the code.
"""


@main.command("diff", epilog=DIFF_EXIT_CODES)
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@_one_workload()
@click.option("--config", metavar="PATH", default=None, help="The model's config.json (both).")
@click.option(
    "--block-size",
    type=click.IntRange(1, 1_000_000),
    default=None,
    help="KV block size when a log does not state it.",
)
@click.option(
    "--max-drop",
    type=click.FloatRange(0, 100),
    default=None,
    metavar="PCT",
    help="CI gate: exit 1 when the users fell more than PCT percent from OLD to NEW.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def diff_cmd(**params: Any) -> None:
    """What changed between two boots (two logs, or a log and a /metrics text),
    side by side, and which line explains the change of the pool.

    \b
    Examples:
      vllm-logread diff old.log new.log
      vllm-logread diff v0.19.log v0.20.log --max-drop 10   # an upgrade gate
      curl -s localhost:8000/metrics | vllm-logread diff baseline.log - --json
    """
    from .diff_app import DiffOptions, run_diff

    try:
        sys.exit(run_diff(DiffOptions(**params), _Terminal()))
    except LogReadError as err:
        raise _error(err) from err


def run() -> Any:
    """Entry point for ``python -m vllm_logread``."""
    return main(prog_name="vllm-logread")
