"""The command line: options in, library calls, output and an exit code out.

Exit codes (README): 0 ok; 1 a CI gate failed (--min-users); 2 usage error;
3 the log lacks what was asked (no KV pool line; a near miss under --strict);
4 the log contradicts the model config beyond the printed precision.
"""

from __future__ import annotations

import sys
from typing import IO, Any

import click

from . import pipeline
from .capacity import Workload
from .facts import LogReadError, MissingPoolError
from .report import Options

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_NO_POOL, EXIT_CONTRADICTION = 0, 1, 2, 3, 4


class _DefaultGroup(click.Group):
    """A group whose default command is ``read``: ``vllm-logread FILE`` reads FILE."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (
            args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")
        ):
            args.insert(0, "read")
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vllm-logread")
def main() -> None:
    """Read a vLLM log and say how many users really fit in its KV cache.

    The default command is `read`; `vllm-logread FILE` is `vllm-logread read FILE`.

    Example: vllm serve Qwen/Qwen3-8B 2>&1 | vllm-logread --prompt 512 --output 128
    """


def _open_inputs(files: tuple[str, ...]) -> list[tuple[str, IO[bytes]]]:
    if not files:
        if sys.stdin.isatty():
            raise click.UsageError(
                "no log given: pipe a vLLM log in (vllm serve ... 2>&1 | vllm-logread) "
                "or name a file (vllm-logread server.log)"
            )
        files = ("-",)
    out: list[tuple[str, IO[bytes]]] = []
    for name in files:
        if name == "-":
            out.append(("-", sys.stdin.buffer))
            continue
        try:
            out.append((name, pipeline.open_input(name)))
        except LogReadError as err:
            raise click.ClickException(str(err)) from err
    return out


@main.command("read")
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option(
    "--prompt",
    "prompt_tokens",
    type=click.IntRange(0, 10_000_000),
    default=512,
    show_default=True,
    help="Prompt tokens per user.",
)
@click.option(
    "--output",
    "output_tokens",
    type=click.IntRange(0, 10_000_000),
    default=128,
    show_default=True,
    help="Output tokens per user.",
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
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (facts and summary).")
@click.option(
    "--min-users",
    type=click.IntRange(0),
    default=None,
    help="CI gate: exit 1 when fewer users fit at the workload.",
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
    help="Pass every input line through to stdout (default when reading a pipe in text mode).",
)
def read_cmd(
    files: tuple[str, ...],
    prompt_tokens: int,
    output_tokens: int,
    config: str | None,
    block_size: int | None,
    as_json: bool,
    min_users: int | None,
    strict: bool,
    all_boots: bool,
    echo: bool | None,
) -> None:
    """Report the KV pool and the users that fit, from vLLM logs or a pipe.

    Example: vllm-logread sample_logs/qwen3-8b-l4-v0.11.log --prompt 512 --output 128
    """
    from . import kvspec

    inputs = _open_inputs(files)
    opts = Options(
        workload=Workload(prompt_tokens=prompt_tokens, output_tokens=output_tokens),
        config=config,
        block_size=block_size,
    )
    do_echo = echo if echo is not None else (files in ((), ("-",)) and not as_json)
    out = click.get_text_stream("stdout")
    results = []
    for name, stream in inputs:
        session = pipeline.Session(
            name, opts, spec_resolver=kvspec.resolve_spec, keep_all_facts=as_json
        )
        try:
            for item in pipeline.run(session, stream, echo=out.buffer if do_echo else None):
                _emit(item, as_json=as_json, all_boots=all_boots, strict=strict)
        except LogReadError as err:
            raise click.ClickException(str(err)) from err
        results.append(session)
    code = pipeline.exit_status(results, min_users=min_users, strict=strict, all_boots=all_boots)
    if as_json:
        click.echo(pipeline.json_text(results, all_boots=all_boots))
    elif not any(s.reported for s in results):
        click.echo(pipeline.missing_pool_message(results), err=True)
    if code.message and code.code not in (EXIT_OK, EXIT_NO_POOL):
        click.echo(code.message, err=True)
    sys.exit(code.code)


def _emit(item: pipeline.Output, *, as_json: bool, all_boots: bool, strict: bool) -> None:
    if item.kind == "warning":
        click.echo(item.text, err=True)
        if strict:
            raise MissingPoolError(f"--strict: {item.text}")
        return
    if item.kind == "report" and item.report is not None and not as_json:
        click.echo(pipeline.report_block(item.report))


@main.command("kv")
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
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def kv_cmd(
    model_or_config: str,
    tensor_parallel_size: int,
    pipeline_parallel_size: int,
    kv_cache_dtype: str,
    as_json: bool,
) -> None:
    """The KV bytes per token of a model, from its config.json, without any log.

    Example: vllm-logread kv Qwen/Qwen3-8B --tp 2 --kv-cache-dtype fp8
    """
    from . import kvspec
    from .render import dumps

    try:
        spec = kvspec.spec_for_argument(
            model_or_config,
            tensor_parallel_size=tensor_parallel_size,
            pipeline_parallel_size=pipeline_parallel_size,
            kv_cache_dtype=kv_cache_dtype,
        )
    except LogReadError as err:
        raise click.ClickException(str(err)) from err
    click.echo(dumps(kvspec.kv_report(spec)) if as_json else kvspec.kv_text(spec))


def run() -> Any:
    """Entry point for ``python -m vllm_logread``."""
    return main(prog_name="vllm-logread")
