"""The log against the server's /metrics: every figure both state, held side by side.

A boot log and a scrape of the same server's ``/metrics`` state the pool twice: the log
in its pool lines (``GPU KV cache size: 24,096 tokens``, ``Maximum concurrency ...:
2.94x``), ``/metrics`` in the labels of ``vllm:cache_config_info`` (``num_gpu_blocks``,
``block_size``, ``kv_cache_size_tokens``, ``kv_cache_max_concurrency``, and from 0.32
``effective_attention_block_size``). They should agree; where they do not, vLLM's own
rules usually say why, and the answer is only as good as the one that is right:

* ``block_size``: ``cache_config_info`` carries the block size the user asked for (or the
  platform default); on a hybrid model vLLM raises the attention groups' block size to
  hold a whole state page (Qwen3-Next at TP 4 on 0.32: 16 asked, 272 used), which 0.32+
  states apart as ``effective_attention_block_size``. The log's groups are the truth.
* ``num_gpu_blocks``: the engine's own count. A tensor-parallel log states each rank's
  and the engine keeps the minimum; a data-parallel server has one count per engine.
  A count that differs otherwise means the log and the scrape are of different boots.
* ``kv_cache_size_tokens`` and ``kv_cache_max_concurrency``: the same figures the pool
  lines print, before rounding: the concurrency label has every digit, the log two
  decimals (2.94140625 prints as 2.94).

Pure: the report and the parsed scrape in, typed agreements out (render/ words them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..jsontypes import JSONObject
from ..read.metrics import Server
from .model import Report

AgreementStatus = Literal["same", "differs", "log only", "metrics only"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Agreement:
    """One figure the log and /metrics may both state.

    Attributes:
        name: vLLM's name for it (the ``cache_config_info`` label).
        log_value, log_line: the log's value and the line that states it (None: not
            stated; a derived figure has its pool line).
        metrics_value: the label's value (None: not published).
        status: ``same`` within the log's printed precision, ``differs``, or which side
            alone states it.
        why: vLLM's rule that explains a difference ("" when there is none to explain).
    """

    name: str
    log_value: str | None
    log_line: int | None
    metrics_value: str | None
    status: AgreementStatus
    why: str = ""

    def to_json(self) -> JSONObject:
        return {
            "name": self.name,
            "log": self.log_value,
            "log_line": self.log_line,
            "metrics": self.metrics_value,
            "status": self.status,
            "why": self.why or None,
        }


def pick_server(servers: Sequence[Server], model: str | None) -> Server | None:
    """The scraped server of the log's model: the one whose model name is the log's, or
    the only one; None when several serve and none is named so."""
    named = [s for s in servers if model is not None and s.model == model]
    if len(named) == 1:
        return named[0]
    return servers[0] if len(servers) == 1 else None


def crosscheck(report: Report, server: Server) -> tuple[Agreement, ...]:
    """Every figure the log's report and the scraped server state, side by side."""
    labels = dict(server.config_labels)
    boot = report.boot
    out: list[Agreement] = []

    def fact_line(*kinds: str) -> int | None:
        for kind in kinds:
            f = boot.first(kind)
            if f is not None:
                return f.line
        return None

    blocks = _int(labels.get("num_gpu_blocks"))
    num_engines = len(server.loads) or 1
    assumed = _assumed_block_size(report)
    if assumed is not None and fact_line("gpu_blocks", "cache_config_info") is None:
        out.append(_blocks_of_assumed_size(report, blocks, assumed))
    else:
        out.append(
            _compare(
                "num_gpu_blocks",
                report.num_blocks,
                fact_line("gpu_blocks", "cache_config_info", "pool_tokens"),
                blocks,
                why=_blocks_why(report, blocks, num_engines),
            )
        )
    out.append(
        _compare(
            "kv_cache_size_tokens",
            report.pool_tokens,
            fact_line("pool_tokens"),
            _int(labels.get("kv_cache_size_tokens")),
            why="the log and the scrape are of different boots, or of different engines",
        )
    )
    out.append(_block_size(report, labels, fact_line("block_size", "kv_group_sizes")))
    out.append(_concurrency(report, labels.get("kv_cache_max_concurrency")))
    for name, kind in (
        ("cache_dtype", "kv_cache_dtype"),
        ("gpu_memory_utilization", "gpu_memory_utilization"),
        ("enable_prefix_caching", "enable_prefix_caching"),
        ("kv_cache_memory_bytes", "kv_cache_memory_bytes"),
    ):
        stated = boot.value(kind)
        out.append(
            _compare(
                name,
                None if stated is None else _text(stated),
                fact_line(kind),
                labels.get(name),
                why="a setting that differs: the log and the scrape are of different launches",
            )
        )
    return tuple(a for a in out if a.log_value is not None or a.metrics_value is not None)


def _compare(
    name: str,
    log_value: object,
    log_line: int | None,
    metrics_value: object,
    *,
    why: str,
) -> Agreement:
    log_text = None if log_value is None else _text(log_value)
    metrics_text = (
        None if metrics_value is None or metrics_value == "None" else _text(metrics_value)
    )
    if log_text is None or metrics_text is None:
        status: AgreementStatus = "log only" if metrics_text is None else "metrics only"
        return Agreement(
            name=name,
            log_value=log_text,
            log_line=log_line,
            metrics_value=metrics_text,
            status=status,
        )
    same = _normal(log_text) == _normal(metrics_text)
    return Agreement(
        name=name,
        log_value=log_text,
        log_line=log_line,
        metrics_value=metrics_text,
        status="same" if same else "differs",
        why="" if same else why,
    )


def _blocks_why(report: Report, metrics_blocks: int | None, num_engines: int) -> str:
    """Why the engine's count may differ from the log's."""
    if report.num_blocks is None or metrics_blocks is None:
        return ""
    if num_engines > 1:
        return (
            f"/metrics states each of its {num_engines} data-parallel engines' own count; the "
            "log's figure is the report's per-engine pool"
        )
    if report.tensor_parallel_size > 1:
        return (
            "a tensor-parallel boot: each rank states its pool and the engine keeps the "
            "smallest; the scrape may be of another boot"
        )
    return "the log and the scrape are of different boots (a restart between them?)"


def _assumed_block_size(report: Report) -> int | None:
    """The report's block size when the log does not state it (vLLM's default for
    the platform, assumed); None when the log states it or the user gave it."""
    resolved = report.resolved
    if resolved is None or resolved.block_size.kind not in ("default", "unknown"):
        return None
    return report.block_size


def _blocks_of_assumed_size(report: Report, blocks: int | None, assumed: int) -> Agreement:
    """The log states its pool in tokens and no block size: its block count is the
    report's, of an assumed block size, not the log's (the L4 seed: 24,096 tokens,
    1,506 blocks of an assumed 16; the scrape's 753 blocks of 32 are the same pool)."""
    tokens = report.pool_tokens
    said = f"{tokens:,} tokens" if tokens is not None else "its pool"
    why = (
        f"the log states {said}, not blocks; {report.num_blocks or 0:,} blocks is the "
        f"report's count at an assumed block size of {assumed}"
    )
    return Agreement(
        name="num_gpu_blocks",
        log_value=None,
        log_line=None,
        metrics_value=None if blocks is None else str(blocks),
        status="metrics only" if blocks is not None else "log only",
        why=why,
    )


def _block_size(report: Report, labels: dict[str, str], line: int | None) -> Agreement:
    """The block size: /metrics' ``block_size`` is the one asked for (or the platform's
    default); the attention groups of a hybrid model run a raised one, which 0.32+
    publishes as ``effective_attention_block_size``. A block size the log does not
    state is the report's assumption, never the log's figure."""
    asked = _int(labels.get("block_size"))
    effective = _int(labels.get("effective_attention_block_size"))
    log_bs = report.block_size
    assumed = _assumed_block_size(report)
    if assumed is not None and asked is not None:
        settle = (
            f"; /metrics says {asked}: --block-size {asked} reads the log at it"
            if asked != assumed
            else f"; /metrics says {asked} too"
        )
        return Agreement(
            name="block_size",
            log_value=None,
            log_line=None,
            metrics_value=str(asked),
            status="metrics only",
            why=f"the log does not state it; the report assumed {assumed} "
            f"({report.block_size_source.replace(' (not stated in the log)', '')}){settle}",
        )
    if log_bs is not None and asked is not None and log_bs != asked:
        if effective == log_bs:
            why = (
                f"/metrics' block_size is the one asked for ({asked}); vLLM raised the "
                f"attention groups' to {log_bs} to hold a whole state page "
                f"(effective_attention_block_size {effective}): the log's is the one in use"
            )
        else:
            why = (
                "on a hybrid model the block size /metrics labels is the smallest group's or "
                "the one asked for, not every group's; the log's KV cache groups are the ones "
                "in use"
            )
        return Agreement(
            name="block_size",
            log_value=str(log_bs),
            log_line=line,
            metrics_value=str(asked),
            status="differs",
            why=why,
        )
    return _compare("block_size", log_bs, line, asked, why="")


def _concurrency(report: Report, label: str | None) -> Agreement:
    """vLLM's max concurrency: the log prints two decimals, the label every digit; the
    same when the label rounds to the printed figure (2.94140625 -> 2.94)."""
    fact = report.boot.first("max_concurrency")
    printed = report.vllm_max_concurrency
    full = _float(label)
    if printed is None or full is None:
        return _compare(
            "kv_cache_max_concurrency",
            printed,
            None if fact is None else fact.line,
            None if full is None else label,
            why="",
        )
    decimals = fact.decimals if fact is not None and fact.decimals is not None else 2
    same = round(full, decimals) == round(printed, decimals)
    return Agreement(
        name="kv_cache_max_concurrency",
        log_value=f"{printed:.{decimals}f}",
        log_line=None if fact is None else fact.line,
        metrics_value=label,
        status="same" if same else "differs",
        why="" if same else "the log and the scrape are of different boots or settings",
    )


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def _float(text: str | None) -> float | None:
    try:
        return None if text is None else float(text)
    except ValueError:
        return None


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _normal(text: str) -> str:
    """Values as both sides spell them: "auto" and "True"/"true" alike; 0.90 as 0.9."""
    low = text.strip().lower()
    try:
        return repr(float(low))
    except ValueError:
        return low
