"""The ``kv`` command as one library call: a model in, its KV spec out (and,
with a GPU, the pool and users a boot would give), or the tables it knows.

commands.py parses the options into ``KvOptions`` and calls ``run_kv``, which says
what it found through the caller's console, like ``app.run_read``.

Exit codes: 0 ok (also an estimate that says the boot would fail); 2 a model
or GPU the tables do not know (with the close names and how to go on), or
options that do not go together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .options import (
    NEWEST_VLLM,
    CommonOptions,
    check_common,
    gpu_card,
    one_workload,
    output_format,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class KvOptions(CommonOptions):
    """The ``kv`` command's options, named as its click parameters."""

    model_or_config: str | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    kv_cache_dtype: str = "auto"
    vllm_version: str | None = None
    num_tokens: int = 640
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    weights_gib: float | None = None
    max_num_seqs: int | None = None
    explain: bool = False
    list_models: bool = False
    list_gpus: bool = False
    list_architectures: bool = False

    @property
    def version(self) -> str:
        """--vllm-version, else the newest vLLM this tool knows."""
        return self.vllm_version or NEWEST_VLLM


def gpu_rows() -> list[dict[str, Any]]:
    """The GPU table: name, memory and where the figure comes from, largest first."""
    from ..report.gpus import all_gpus

    return [
        {"gpu": g.name, "total_gib": g.total_gib, "estimate": g.is_estimate, "source": g.source}
        for g in all_gpus()
    ]


def model_rows() -> list[dict[str, Any]]:
    """The shipped model table's names, sorted."""
    from ..kv.config import table_models

    return [{"model": name} for name in table_models()]


def _table(kind: str, rows: list[dict[str, Any]], fmt: str) -> str:
    from ..render.json import SCHEMA_VERSION, dumps
    from ..render.tables import format_rows, listing_text

    if fmt == "json":
        return dumps({"schema_version": SCHEMA_VERSION, "command": f"kv --list-{kind}", kind: rows})
    if fmt == "text":
        return listing_text(rows)
    return format_rows(rows, tuple(rows[0]) if rows else (), fmt)


def run_kv(opts: KvOptions, console: Any) -> int:
    """The spec, the estimate or a table, said on ``console``; the exit code (0).

    Raises:
        LogReadError: a model or GPU the tables do not know, bad options (exit 2).
    """
    check_common(opts, "kv")
    fmt = output_format(opts, "kv")
    if opts.list_architectures:
        if opts.model_or_config is not None:
            raise UsageError("--list-architectures takes no MODEL")
        console.out(_architectures(fmt))
        return 0
    if opts.list_models or opts.list_gpus:
        if opts.model_or_config is not None:
            raise UsageError("--list-models and --list-gpus take no MODEL")
        if opts.list_models:
            console.out(_table("models", model_rows(), fmt))
        if opts.list_gpus:
            console.out(_table("gpus", gpu_rows(), fmt))
        return 0
    if opts.model_or_config is None:
        raise UsageError("give a MODEL (ORG/NAME) or a config.json; --list-models lists them")
    if fmt in ("markdown", "csv"):
        raise UsageError(f"kv --format {fmt} is for --list-models and --list-gpus")
    console.out(kv_output(opts, fmt))
    return 0


def _architectures(fmt: str) -> str:
    """--list-architectures: vLLM 0.33's registry and what this tool knows of each."""
    from ..kv.architectures import all_architectures, registry_version
    from ..render.architectures import architectures_json, architectures_text
    from ..render.json import SCHEMA_VERSION, dumps

    archs, version = all_architectures(), registry_version()
    if fmt == "json":
        obj = {
            "schema_version": SCHEMA_VERSION,
            "command": "kv --list-architectures",
            **architectures_json(archs, vllm_version=version),
        }
        return dumps(obj)
    if fmt != "text":
        raise UsageError(f"kv --list-architectures prints text or json, not {fmt}")
    return architectures_text(archs, vllm_version=version)


def kv_output(opts: KvOptions, fmt: str) -> str:
    """The spec (no GPU) or the boot estimate, as text or JSON."""
    from ..kv.config import spec_for_argument
    from ..render.json import SCHEMA_VERSION, dumps, kv_report
    from ..render.text import kv_text

    assert opts.model_or_config is not None
    spec = spec_for_argument(
        opts.model_or_config,
        tensor_parallel_size=opts.tensor_parallel_size,
        pipeline_parallel_size=opts.pipeline_parallel_size,
        kv_cache_dtype=opts.kv_cache_dtype,
    )
    card = gpu_card(opts)
    if card is None:
        if fmt != "json":
            return kv_text(spec, vllm_version=opts.version, num_tokens=opts.num_tokens)
        rep = kv_report(spec, vllm_version=opts.version, num_tokens=opts.num_tokens)
        return dumps({"schema_version": SCHEMA_VERSION, "command": "kv", **rep})
    from ..render.estimate import estimate_json, estimate_text
    from ..report.estimate import estimate_boot

    workload = one_workload(opts)
    est = estimate_boot(
        opts.model_or_config,
        spec,
        gpu=card,
        workload=workload,
        max_model_len=opts.max_model_len,
        block_size=opts.block_size,
        gpu_memory_utilization=opts.gpu_memory_utilization,
        # None: the estimate's own default, the release its overheads were fitted to.
        vllm_version=opts.vllm_version,
        weights_gib=opts.weights_gib,
        max_num_seqs=opts.max_num_seqs,
    )
    if fmt != "json":
        return estimate_text(est, explain=opts.explain)
    rep = kv_report(
        spec,
        block_size=est.block_size,
        vllm_version=est.vllm_version,
        # P + O - 1: the tokens a request holds at the end of its answer.
        num_tokens=workload.tokens_held_at_end,
    )
    return dumps(
        {
            "schema_version": SCHEMA_VERSION,
            "command": "kv",
            **rep,
            "boot_estimate": estimate_json(est),
        }
    )
