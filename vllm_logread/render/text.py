"""Report -> text for a person, and the JSON object of the contract.

The text is short: what vLLM's figure assumes, the users that really fit, the
arithmetic, the checks and what to change. The JSON carries the same numbers
plus every fact (FACTS.md), and is printed even for an incomplete log.
"""

from __future__ import annotations

from ..events import Output
from ..kv.specs import KVSpec
from ..read.metrics import Server
from ..report.model import Report
from ..report.plan import TargetPlan
from ..watch import LoadSummary
from .json import kv_report


def kv_text(spec: KVSpec, *, block_size: int | None = None) -> str:
    """The KV spec for a person, a few lines."""
    rep = kv_report(spec, block_size=block_size)
    lines = [
        f"model:   {spec.model or '-'}",
        f"source:  {spec.source}",
        f"KV:      {spec.describe()}",
    ]
    groups = ", ".join(
        f"{g['kind']}"
        + (f" {g['window_tokens']}" if g["window_tokens"] else "")
        + f" x{g['num_layers']}"
        + (f" (+{g['num_padding_layers']} padding)" if g["num_padding_layers"] else "")
        for g in rep["kv_cache_groups"]
    )
    lines.append(
        f"groups:  {len(rep['kv_cache_groups'])} KV cache group(s) of "
        f"{rep['group_size']} layers, block {rep['block_size']} tokens: {groups}"
    )
    for note in rep["notes"]:
        lines.append(f"note:    {note}")
    return "\n".join(lines)


def duration_text(seconds: float) -> str:
    """``1h 02m 05s`` style.

    >>> duration_text(0), duration_text(70), duration_text(3725)
    ('0s', '1m 10s', '1h 02m 05s')
    """
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h {m:02d}m {s:02d}s"
    if m:
        return f"{m}m {s:02d}s"
    return f"{s}s"


def summary_text(summary: LoadSummary, *, title: str = "") -> str:
    """The load summary for a person (a few lines, no trailing newline)."""
    s = summary
    span = ""
    if s.seconds_spanned is not None:
        span = f" over {duration_text(s.seconds_spanned)}"
    if s.first_time and s.last_time:
        span += f", {s.first_time} to {s.last_time}"
    lines = [
        f"== vllm-logread load summary{f' ({title})' if title else ''}: "
        f"{s.num_stats_lines:,} stats line{'s' if s.num_stats_lines != 1 else ''}{span}"
    ]
    lines.append(f"  peak running:  {s.peak_running}")
    lines.append(f"  peak waiting:  {s.peak_waiting}")
    above = (
        "unknown (no times in the stats lines)"
        if s.seconds_above_95pct is None
        else duration_text(s.seconds_above_95pct)
    )
    lines.append(f"  KV cache usage: peak {s.peak_kv_usage_pct:.1f}%; above 95% for {above}")
    pre = f"  preemptions:   {s.preemptions:,} printed by {s.server}"
    if s.num_running_falls:
        pre += (
            f"; running fell at a full pool with requests waiting {s.num_running_falls:,} "
            f"time{'s' if s.num_running_falls != 1 else ''} (the sign of preemption)"
        )
    lines.append(pre)
    if len(s.engines) > 1:
        for e in s.engines:
            lines.append(
                f"  engine {e.name}: peak {e.peak_running} running, {e.peak_waiting} waiting, "
                f"{e.peak_kv_usage_pct:.1f}% KV usage"
            )
    if s.verdict:
        lines.append(f"  verdict:       {s.verdict}")
    if s.phase:
        lines.append(f"  phase:         {s.phase}")
    return "\n".join(lines)


def load_text(server: Server, summary: LoadSummary) -> str:
    """The load now, for a person: one snapshot, held against the estimate.

    A /metrics text is one moment, not a history: its peaks are the values
    now, and its preemptions the total since the server started.
    """
    title = server.model or "model not named"
    lines = [f"== vllm-logread load now ({title}, from /metrics: one moment, not a history)"]
    several = len(server.loads) > 1
    for load in server.loads:
        who = f"engine {load.engine}: " if several and load.engine is not None else ""
        swapped = "" if load.swapped_reqs is None else f", {load.swapped_reqs} swapped"
        lines.append(
            f"  {who}{load.running_reqs} running, {load.waiting_reqs} waiting{swapped}, "
            f"KV cache usage {load.kv_usage_pct:.1f}%, {load.preemptions:,} preemptions since "
            f"the server started (line {load.line})"
        )
    if summary.verdict:
        lines.append(f"  verdict:       {summary.verdict}")
    if summary.phase:
        lines.append(f"  phase:         {summary.phase}")
    preempted = sum(load.preemptions for load in server.loads)
    if preempted:
        lines.append(
            f"  note:          {preempted:,} preemptions since the server started: the pool ran "
            "out at some earlier moment (a /metrics text keeps no history of when)"
        )
    return "\n".join(lines)


def output_text(item: Output, *, echo: bool) -> str:
    """The text of a report, alert or summary (no trailing newline). Among
    echoed lines, reports and summaries come as a marked block."""
    if item.report is not None:
        text = report_block(item.report)
    elif item.summary is not None and item.server is not None:
        text = load_text(item.server, item.summary)
    elif item.summary is not None:
        text = summary_text(item.summary, title=item.title)
    else:
        text = item.text
    if echo and item.kind in ("report", "summary"):
        return f"{_BLOCK_OPEN}\n{text}\n{_BLOCK_CLOSE}"
    return text


_BLOCK_OPEN = "=" * 30 + " vllm-logread " + "=" * 30


_BLOCK_CLOSE = "=" * 74


def _failure_lines(r: Report) -> list[str]:
    if r.failure is None:
        return []
    where = "" if r.failure.line is None else f" (line {r.failure.line})"
    out = [f"Users that fit: 0: the boot serves nobody: {r.failure.cause}{where}"]
    out += [f"  to boot: {fix}" for fix in r.failure.fix]
    return out


def report_block(report: Report) -> str:

    return report_text(report).rstrip("\n")


def _n(v: int | float | None) -> str:
    if v is None:
        return "unknown"
    if isinstance(v, float):
        return f"{v:,.2f}"
    return f"{v:,}"


def report_text(report: Report) -> str:
    """The report for a person: the answer first, then how it was reached."""
    r = report
    lines: list[str] = []
    bits = [
        b
        for b in (
            f"vLLM {r.vllm_version}" if r.vllm_version else "",
            r.engine_generation or "",
            r.device or "",
            f"TP={r.tensor_parallel_size}" if r.tensor_parallel_size > 1 else "",
            f"max model len {r.max_model_len:,}" if r.max_model_len else "",
        )
        if b
    ]
    head = r.model or "model not named in the log"
    lines.append(f"== vllm-logread: {head}" + (f" ({', '.join(bits)})" if bits else ""))
    if not r.has_pool:
        lines.append("KV pool:       not in the log")
        lines += _failure_lines(r)
        return "\n".join(lines) + "\n"
    w, c = r.workload, r.capacity
    pool = f"{_n(r.pool_tokens)} tokens"
    if r.num_blocks is not None and r.block_size and r.block_size > 1:
        # (SGLang's default page is one token: "N blocks of 1 token" says nothing)
        high = r.engines[0].num_blocks_high if r.engines else None
        # A pool decoded from its tokens may be one of several block counts
        # (Gemma 3 on 0.11: 29,760 tokens = 13,020 to 13,026 blocks; it was 13,025).
        blocks = f"{r.num_blocks:,}" if high is None else f"{r.num_blocks:,} to {high:,}"
        pool += f" = {blocks} blocks of {r.block_size} tokens"
    if r.engines and r.engines[0].line:
        pool += f" (line {r.engines[0].line})"
    lines.append(f"KV pool:       {pool}")
    if r.block_size:
        lines.append(f"               block size {r.block_size}: {r.block_size_source}")
    if r.available_kv_gib is not None:
        lines.append(f"               {r.available_kv_gib} GiB of memory for the KV cache")
    if r.vllm_max_concurrency is not None:
        length = r.concurrency_tokens or r.max_model_len
        lines.append(
            f"vLLM says:     {r.vllm_max_concurrency:.2f}x concurrency for {_n(length)} tokens per "
            f"request: users who each fill the whole max model length"
        )
    if r.failure is not None:
        lines += _failure_lines(r)
    elif r.users is not None and c is not None:
        approx = "" if r.is_exact else " (approximate: this model's layout is not modelled exactly)"
        lines.append(
            f"Users that fit: {r.users} users at {w.prompt_tokens:,} prompt + {w.output_tokens:,} output "
            f"tokens, at the end of their answers{approx}"
        )
        lines.append(
            f"                {r.users_mid_answer} users mid-answer (each holding "
            f"{w.prompt_tokens:,} + {w.output_tokens // 2:,} tokens)"
        )
        if len(r.engines) > 1:
            for e in r.engines:
                lines.append(
                    f"                engine {e.engine}: {_n(e.users)} (pool line {e.line})"
                )
    elif r.users_range is not None:
        lo, hi = r.users_range
        lines.append(f"Users that fit: {lo:,} to {hi:,} users: unknown exactly (see below)")
    else:
        lines.append("Users that fit: unknown (see the warnings)")
    for u in r.unknowns:
        lines.append(f"  unknown {u.name}: {u.why}: {'; '.join(u.candidates)}; {u.settle}")
    for a in r.arithmetic:
        lines.append(f"  how: {a}")
    if r.kv_bytes_per_token is None:
        lines.append(
            "KV per token:  unknown (model shape not found; pass --config PATH/config.json)"
        )
    else:
        lines.append(f"KV per token:  {r.kv_shape}")
        lines.append(f"               from {r.kv_bytes_per_token_source}")
    if r.checks:
        lines.append("Checks:")
        for ch in r.checks:
            lines.append(f"  {ch.status:<7} {ch.name}: {ch.detail}")
    if r.what_if:
        lines.append("What to change:")
        for wi in r.what_if:
            users = "" if wi.users is None else f": {wi.users} users"
            tag = "" if wi.is_exact or wi.users is None else " [estimate]"
            lines.append(f"  {wi.change}{users}{tag} - {wi.note}")
            if wi.arithmetic:
                lines.append(f"      how: {wi.arithmetic}")
    if r.target is not None:
        lines.extend(target_text(r.target))
    for warn in r.warnings:
        lines.append(f"warning: {warn}")
    return "\n".join(lines) + "\n"


def target_text(plan: TargetPlan) -> list[str]:
    """The plan for a person, one line each (render.py prints them)."""
    lines = [f"To serve {plan.target_users} users (now {plan.users}):"]
    if plan.users >= plan.target_users:
        lines.append("  already reached: no change needed")
    elif not plan.options:
        lines.append("  no combination searched reaches it")
    for o in plan.options:
        tag = "" if o.is_exact else " [estimate]"
        gpus = f", {o.num_gpus} GPU{'s' if (o.num_gpus or 0) > 1 else ''}" if o.num_gpus else ""
        lines.append(f"  {o.change}: {o.users} users{gpus}{tag}")
        if o.arithmetic:
            lines.append(f"      {o.arithmetic}")
    lines.append(f"  ({plan.note})")
    return lines
