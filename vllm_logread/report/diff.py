"""Two boots side by side, and which stated line explains the change of the pool.

``vllm-logread diff OLD NEW`` reads two inputs into reports (report/build.py)
and this module compares them: the settings that shape a block (version,
model, dtypes, block size, KV cache groups), the memory lines that make up the
KV memory, the pool and the users at the workload, each with its change; then
one sentence that names the change that explains the pool's.

The explanation is worked from vLLM's own memory budget, not from a ranking:

* The pool is ``KV memory / bytes per block`` blocks. When the KV memory is
  the same (to its printed precision) and the pool moved, the bytes per block
  did: the KV cache dtype, the block size, the layers or KV cache groups, or
  the model's shape per GPU (tensor parallel).
* When the KV memory moved, it is the line of the budget that took it. vLLM
  sizes the KV memory as (docs/vllm-numbers.md, section 3)::

      available KV = total x gpu_memory_utilization - weights - activation peak
                     - non-torch [- CUDA graph estimate]

  (V0 0.6.5-0.10.2 and V1 0.9.1+); the CUDA graph estimate is subtracted by
  default from vLLM 0.20 (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` = 1),
  not before, and from 0.31 the printed peak activation already holds it
  (``peak_activation_memory = transient_peak_headroom + estimate_applied``,
  read in the 0.31-0.33 sources), so there the graph's share is taken out of
  the peak's change rather than counted twice. With ``--kv-cache-memory-bytes``
  the KV memory is that figure and the budget is not used. Each stated line's
  change is its effect on the KV memory; the one that moved it most, in the
  direction it moved, is named. A line that one of the two logs does not
  state has no effect to weigh: when the stated lines leave most of the change
  unexplained, the sentence says so and names what is missing.

Nothing here prints: render/text.py and render/json.py show a ``Diff``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, cast

from ..boot.boots import Boot
from ..boot.boots import kv_cache_memory_set as boot_kv_cache_memory_set
from ..boot.state import Sourced, SourceKind
from ..jsontypes import JSONObject
from ..read.facts import Fact
from ..vllm.rules import cuda_graph_rule, default_utilization
from .budget import CudaGraphRule, MemoryBudget, TermChange, TermName
from .model import Report

GIB = float(1 << 30)

#: What a change of less than this share of the KV memory's change is called
#: beside the named line ("also ..."): below it, it is not mentioned.
_ALSO_SHARE = 0.2


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    """One side's value of one row, and how it is known.

    ``half_ulp``: half a unit of the printed precision (0.005 GiB for
    ``3.31``), so a change within both sides' precision is no change.
    ``note``: "" when stated; else why it is what it is (``assumed: ...``).
    """

    value: float | int | str | None
    half_ulp: float = 0.0
    note: str = ""
    line: int | None = None
    shown: str = ""  # the table's text when it says more than the value ("auto (bfloat16)")
    # A value no line states that the report assumes for its arithmetic (TP 1 when the
    # log never says): never compared with a stated one (Row.is_changed).
    is_assumed: bool = False

    @property
    def is_known(self) -> bool:
        return self.value is not None


_UNKNOWN = Figure(value=None)


#: A diff row's unit ("": a count or a word).
Unit = Literal["GiB", "tokens", "blocks", "engines", "B", ""]


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One line of the side-by-side table.

    ``name``: the JSON name (a kind of docs/facts.md where there is one);
    ``label``: the text table's; ``unit``: "GiB", "tokens", "blocks", "engines",
    "B" or "".
    """

    name: str
    label: str
    unit: Unit
    old: Figure
    new: Figure

    @property
    def is_numeric(self) -> bool:
        return isinstance(self.old.value, (int, float)) or isinstance(self.new.value, (int, float))

    @property
    def change(self) -> float | int | None:
        """new - old (None: a side unknown, or not a number)."""
        a, b = self.old.value, self.new.value
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return None
        if isinstance(a, bool) or isinstance(b, bool):
            return None
        d = b - a
        return round(d, 6) if isinstance(d, float) else d

    @property
    def change_pct(self) -> float | None:
        """The change in % of the old value (None: unknown, or old is 0).

        >>> Row(name="x", label="x", unit="", old=Figure(value=24096),
        ...     new=Figure(value=48192)).change_pct
        100.0
        """
        d, a = self.change, self.old.value
        if d is None or not isinstance(a, (int, float)) or a == 0:
            return None
        return round(100.0 * d / abs(a), 1)

    @property
    def is_changed(self) -> bool | None:
        """Whether the value moved beyond both sides' printed precision
        (None: a side is unknown)."""
        if not self.old.is_known or not self.new.is_known:
            return None
        if self.old.is_assumed or self.new.is_assumed:
            # "tensor parallel went from 2 to 1" against a log that never states TP
            # would be a change no log shows: unknown, not a change.
            return None
        d = self.change
        if d is None:
            return self.old.value != self.new.value
        # "3.31" is [3.305, 3.315): two printed values can be the same number
        # only while they are less than both half-ulps apart.
        return d != 0 and abs(d) >= self.old.half_ulp + self.new.half_ulp - 1e-9


@dataclass(frozen=True, slots=True, kw_only=True)
class Effect:
    """One budget line's effect on the KV memory between the two boots (GiB):
    positive gave KV memory, negative took it."""

    name: str  # the row that moved
    label: str
    effect_gib: float
    old_gib: float | None
    new_gib: float | None
    why: str = ""

    def to_json(self) -> JSONObject:
        return {
            "line": self.name,
            "old_gib": self.old_gib,
            "new_gib": self.new_gib,
            "effect_gib": round(self.effect_gib, 4),
            "why": self.why,
        }


#: What explains the pool's change (Explanation.kind).
ExplanationKind = Literal["unchanged", "memory", "bytes_per_block", "both", "unknown"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation:
    """Which change explains the pool's.

    ``kind``: "unchanged" (the pool did not move), "memory" (the KV memory
    moved: ``line`` is the budget line that took or gave it), "bytes_per_block"
    (same memory, other blocks: ``line`` is the setting), "both", or
    "unknown" (the logs do not state enough: ``unstated`` says what).
    """

    kind: ExplanationKind
    sentence: str
    line: str | None = None
    effects: tuple[Effect, ...] = ()
    unexplained_gib: float | None = None
    unstated: tuple[str, ...] = ()
    # Two boots of the same settings whose pools differ: the move in percent (the
    # memory profile's boot-to-boot variance); None otherwise.
    boot_to_boot_pct: float | None = None

    def to_json(self) -> JSONObject:
        return {
            "kind": self.kind,
            "line": self.line,
            "sentence": self.sentence,
            "effects": [e.to_json() for e in self.effects],
            "unexplained_gib": None
            if self.unexplained_gib is None
            else round(self.unexplained_gib, 4),
            "unstated": list(self.unstated),
            "boot_to_boot_pct": None
            if self.boot_to_boot_pct is None
            else round(self.boot_to_boot_pct, 2),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Diff:
    """Two reports compared: the rows, and the explanation of the pool's change."""

    old: Report
    new: Report
    rows: tuple[Row, ...]
    explanation: Explanation

    def row(self, name: str) -> Row:
        return next(r for r in self.rows if r.name == name)

    @property
    def users_drop_pct(self) -> float | None:
        """How far the users fell, in % of the old users (negative: they rose;
        None: unknown on a side, or no old users)."""
        pct = self.row("users").change_pct
        return None if pct is None else -pct


# -- one side's figures ----------------------------------------------------------------


def _fact(boot: Boot, kind: str, *, last: bool = False) -> Figure:
    f: Fact | None = boot.last(kind) if last else boot.first(kind)
    if f is None:
        return _UNKNOWN
    return Figure(value=f.value, half_ulp=f.half_ulp, line=f.line)


def kv_cache_memory_set(report: Report) -> Figure:
    """``--kv-cache-memory-bytes`` as the boot set it (boots.kv_cache_memory_set), in bytes."""
    f = boot_kv_cache_memory_set(report.boot)
    return _UNKNOWN if f is None else Figure(value=int(f.value), line=f.line)


def _utilization(report: Report) -> Figure:
    f = _fact(report.boot, "gpu_memory_utilization", last=True)
    if f.is_known:
        # Printed "%.2f" ("(0.90)") or as Python writes the setting ("(0.9, ...)",
        # "0.9" in /metrics), which is the value itself: no rounding to allow for.
        return replace(f, half_ulp=f.half_ulp if f.half_ulp <= 0.005 else 0.0)
    util, why = default_utilization(report.vllm_version)
    return Figure(value=util, note=f"assumed: {why}")


def _graph_rule(report: Report) -> CudaGraphRule:
    """How this boot's vLLM treats the CUDA graph memory: "no" (not taken from
    the KV memory), "apart" (subtracted beside the peak), "in_peak" (inside
    the printed peak activation), "unknown" (the version is not stated):
    rules.cuda_graph_rule, whose four words are budget.CudaGraphRule's."""
    return cast(CudaGraphRule, cuda_graph_rule(report.vllm_version, report.engine_generation))


def _term(fig: Figure) -> Sourced[float] | None:
    """A row's figure as a budget term: stated with its line, an assumption
    (vLLM's default), or worked from other lines (its note says how)."""
    value = _f(fig)
    if value is None:
        return None
    if fig.line is not None:
        return Sourced(value=value, kind="stated", source=f"line {fig.line}")
    kind: SourceKind = "default" if fig.note.startswith("assumed") else "derived"
    return Sourced(value=value, kind=kind, source=fig.note)


def _memory_rows(report: Report, util: Figure) -> dict[str, Figure]:
    """The memory budget's rows: each line the log states; the requested memory
    (total x utilization) and the non-torch memory (0.27+'s "X GiB for consumed
    memory (weights + non-torch)" less the weights) worked from the stated lines
    where the log does not state them (budget.MemoryBudget.derived)."""
    boot = report.boot
    total, weights = _fact(boot, "total_gpu_gib"), _fact(boot, "weights_gib")
    stated_util = _fact(boot, "gpu_memory_utilization", last=True)
    consumed = _fact(boot, "consumed_gib")
    requested, non_torch = _fact(boot, "requested_gib"), _fact(boot, "non_torch_gib")
    budget = MemoryBudget(
        total_gib=_term(total),
        gpu_memory_utilization=_term(stated_util),
        requested_gib=_term(requested),
        weights_gib=_term(weights),
        non_torch_gib=_term(non_torch),
        consumed_gib=_term(consumed),
    ).derived(digits=4)
    util_value = _f(stated_util)
    if not requested.is_known and budget.requested_gib is not None and util_value is not None:
        # 79.19 to 2 decimals x 0.90: within 0.005 x 0.90 of the product.
        requested = Figure(
            value=budget.requested_gib.value,
            half_ulp=total.half_ulp * util_value,
            note=budget.requested_gib.source,
        )
    if not non_torch.is_known and budget.non_torch_gib is not None:
        non_torch = Figure(
            value=budget.non_torch_gib.value,
            half_ulp=consumed.half_ulp + weights.half_ulp,
            note=budget.non_torch_gib.source,
        )
    return {
        "total_gpu_gib": total,
        "gpu_memory_utilization": util,
        "requested_gib": requested,
        "weights_gib": weights,
        "activation_peak_gib": _peak(report),
        "cuda_graph_gib": _fact(boot, "cuda_graph_gib"),
        "non_torch_gib": non_torch,
        "available_kv_gib": _fact(boot, "available_kv_gib"),
    }


def _peak(report: Report) -> Figure:
    f = _fact(report.boot, "activation_peak_gib")
    if f.is_known and _graph_rule(report) == "in_peak":
        return replace(f, note="note: vLLM 0.31+ prints it with the CUDA graph estimate inside")
    return f


def _kv_dtype(report: Report) -> Figure:
    spec = None if report.basis is None else report.basis.spec
    stated = report.kv_cache_dtype
    if spec is not None:
        # Compared as the log states it; shown with the dtype it resolves to.
        resolved = str(getattr(spec, "kv_dtype", "") or "")
        text = stated or "auto"
        shown = f"{text} ({resolved})" if resolved and resolved != text else ""
        return Figure(value=text, shown=shown)
    if stated:
        return Figure(value=stated)
    return Figure(value="auto", note="assumed: not stated (vLLM's default)")


def _model_dtype(report: Report) -> Figure:
    f = report.boot.first("dtype")
    if f is not None:
        return Figure(value=str(f.value).removeprefix("torch."), line=f.line)
    spec = None if report.basis is None else report.basis.spec
    if spec is not None and getattr(spec, "model_dtype", None):
        return Figure(value=str(spec.model_dtype), note="the model's config")
    return _UNKNOWN


def _bytes_per_token(report: Report) -> Figure:
    """KV bytes per token on one GPU (all groups): the block over its tokens."""
    basis = report.basis
    if basis is not None and basis.bytes_per_block is not None and basis.block_size:
        return Figure(value=basis.bytes_per_block // basis.block_size)
    if report.kv_bytes_per_token is not None:
        return Figure(value=report.kv_bytes_per_token)
    return _UNKNOWN


def _bytes_per_block(report: Report) -> Figure:
    basis = report.basis
    if basis is not None and basis.bytes_per_block is not None:
        note = "" if basis.spec is not None else "KV memory / blocks (model shape unknown)"
        return Figure(value=basis.bytes_per_block, note=note)
    return _UNKNOWN


def groups_text(report: Report) -> str | None:
    """The KV cache groups in a few words: ``1 x full (36 layers)``,
    ``2 x sliding (12 layers) + 1 x full (12 layers)``."""
    basis = report.basis
    layout = None if basis is None else basis.layout
    if layout is not None:
        counts: dict[str, list[int]] = {}
        for g in layout.groups:
            counts.setdefault(g.kind, []).append(g.num_layers)
        return " + ".join(f"{len(n)} x {k} ({sum(n)} layers)" for k, n in counts.items())
    spec = None if basis is None else basis.spec
    if spec is None:
        return None
    n = len(getattr(spec, "stage_layer_kinds", ()) or ()) or int(spec.num_hidden_layers)
    return f"1 x full ({n} layers)"


def _side(report: Report) -> dict[str, Figure]:
    users = report.users
    a = report.answer
    # The answer is the pool's users capped by max_num_seqs (report/resolved.answer):
    # when the cap binds the table says so, with the pool's own figure.
    shown = ""
    if a is not None and a.is_capped and users is not None and a.pool_users is not None:
        shown = (
            f"at least {users:,} (pool {a.pool_users:,})"
            if a.is_lower_bound
            else f"{users:,} (capped; pool {a.pool_users:,})"
        )
    users_fig = (
        Figure(value=users, shown=shown)
        if users is not None
        else Figure(
            value=None,
            note=(
                f"{report.users_range[0]:,} to {report.users_range[1]:,}"
                if report.users_range
                else "unknown"
            ),
        )
    )
    groups = groups_text(report)
    kv_set = kv_cache_memory_set(report)
    util = _utilization(report)
    if kv_set.is_known and util.note:
        util = _UNKNOWN  # a default vLLM ignores beside --kv-cache-memory-bytes
    return {
        "vllm_version": Figure(value=report.vllm_version),
        "model": Figure(value=report.model),
        "dtype": _model_dtype(report),
        "kv_cache_dtype": _kv_dtype(report),
        "tensor_parallel_size": _tensor_parallel(report),
        "num_engines": Figure(value=len(report.engines) if report.engines else None),
        "block_size": Figure(value=report.block_size),
        "kv_cache_groups": Figure(value=groups),
        "kv_bytes_per_token": _bytes_per_token(report),
        "bytes_per_block": _bytes_per_block(report),
        "kv_cache_memory_bytes": kv_set,
        **_memory_rows(report, util),
        "pool_tokens": Figure(value=report.pool_tokens),
        "num_blocks": Figure(value=report.num_blocks),
        "users": users_fig,
    }


def _tensor_parallel(report: Report) -> Figure:
    """TP as the log states it, or the 1 the report assumes, marked (and what the
    worker labels show)."""
    if report.is_tensor_parallel_stated:
        return Figure(value=report.tensor_parallel_size)
    seen = report.ranks_seen
    why = "not stated in the log" + ("" if seen is None else f"; {seen.text}")
    return Figure(
        value=report.tensor_parallel_size,
        note=f"assumed: {why}",
        is_assumed=True,
    )


#: The rows, in the table's order: (name, label, unit).
ROWS: tuple[tuple[str, str, Unit], ...] = (
    ("vllm_version", "vLLM", ""),
    ("model", "model", ""),
    ("dtype", "dtype", ""),
    ("kv_cache_dtype", "KV cache dtype", ""),
    ("tensor_parallel_size", "tensor parallel", ""),
    ("num_engines", "data parallel", "engines"),
    ("block_size", "block size", "tokens"),
    ("kv_cache_groups", "KV cache groups", ""),
    ("kv_bytes_per_token", "KV per token", "B"),
    ("bytes_per_block", "bytes per block", "B"),
    ("total_gpu_gib", "GPU memory", "GiB"),
    ("gpu_memory_utilization", "gpu_memory_util", ""),
    ("requested_gib", "requested", "GiB"),
    ("kv_cache_memory_bytes", "--kv-cache-mem", "B"),
    ("weights_gib", "weights", "GiB"),
    ("activation_peak_gib", "activation peak", "GiB"),
    ("cuda_graph_gib", "CUDA graph", "GiB"),
    ("non_torch_gib", "non-torch", "GiB"),
    ("available_kv_gib", "KV memory", "GiB"),
    ("pool_tokens", "pool", "tokens"),
    ("num_blocks", "pool", "blocks"),
    ("users", "users", ""),
)


def diff_reports(old: Report, new: Report) -> Diff:
    """Compare two boots' reports (each read at the same workload); the worked
    examples are in tests/answer/test_diff.py."""
    a, b = _side(old), _side(new)
    rows = tuple(
        Row(name=name, label=label, unit=unit, old=a[name], new=b[name])
        for name, label, unit in ROWS
    )
    by = {r.name: r for r in rows}
    return Diff(old=old, new=new, rows=rows, explanation=explain(old, new, by))


# -- the explanation -------------------------------------------------------------------


def _f(fig: Figure) -> float | None:
    v = fig.value
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _gib_of(num_bytes: float | None) -> float | None:
    return None if num_bytes is None else num_bytes / GIB


def _gib(x: float) -> str:
    """GiB as vLLM prints them: two decimals.

    >>> _gib(0.4449), _gib(2.3)
    ('0.44', '2.30')
    """
    return f"{x:.2f}"


def _moved(verb_up: str, verb_down: str, pct: float) -> str:
    """``grew 100%`` / ``fell 18%``: the percent at a precision that shows it.

    >>> _moved("grew", "fell", 100.0), _moved("grew", "fell", -18.04), _moved("grew", "fell", 0.003)
    ('grew 100%', 'fell 18%', 'grew 0.003%')
    """
    verb = verb_up if pct > 0 else verb_down
    mag = abs(pct)
    if mag >= 10:
        return f"{verb} {mag:.0f}%"
    return f"{verb} {mag:.1f}%" if mag >= 1 else f"{verb} {mag:.2g}%"


def _pool_phrase(by: dict[str, Row]) -> tuple[str, float | None]:
    """The pool's phrase ("the pool fell 18% (24,096 -> 19,760 tokens)") and new/old."""
    for name in ("pool_tokens", "num_blocks"):
        r = by[name]
        a, b = _f(r.old), _f(r.new)
        if a is not None and b is not None and a > 0:
            pct = 100.0 * (b - a) / a
            unit = r.unit
            if b == a:
                return f"the pool is the same ({int(a):,} {unit})", 1.0
            return (
                f"the pool {_moved('grew', 'fell', pct)} ({int(a):,} -> {int(b):,} {unit})",
                b / a,
            )
    return "", None


def _block_causes(by: dict[str, Row]) -> tuple[list[str], list[str]]:
    """The settings that changed the bytes per token, as phrases, and their row
    names (the KV cache dtype, the model, TP, the KV cache groups), then the
    block size (it changes the blocks, not the tokens). A setting that changed
    while the bytes per token did not (to 0.5%: one side may be worked from
    memory / blocks) explains nothing and is left out."""
    phrases: list[str] = []
    names: list[str] = []
    bpt = by["kv_bytes_per_token"]
    a, b = _f(bpt.old), _f(bpt.new)
    bpt_moved = a is None or b is None or abs(b - a) > 0.005 * max(a, b)
    for name, what in (
        ("kv_cache_dtype", "the KV cache dtype"),
        ("model", "the model"),
        ("tensor_parallel_size", "tensor parallel"),
        ("kv_cache_groups", "the KV cache groups"),
        ("block_size", "the block size"),
    ):
        r = by[name]
        if r.is_changed and (bpt_moved or name == "block_size"):
            phrases.append(f"{what} went from {_short(r.old.value)} to {_short(r.new.value)}")
            names.append(name)
    return phrases, names


def _short(value: object, width: int = 40) -> str:
    """A value for a sentence: a long one (a snapshot path) keeps its tail.

    >>> _short("/root/.cache/hub/models--Qwen--Qwen3-8B/snapshots/" + "0" * 40, 20)
    '...0000000000000000'
    """
    text = str(value)
    if len(text) <= width or " " in text:  # words wrap; a path does not
        return text
    return "..." + text[-(width - 3) :]


def _bpt_phrase(by: dict[str, Row]) -> str:
    r = by["kv_bytes_per_token"]
    a, b = _f(r.old), _f(r.new)
    if a is None or b is None or a == b:
        return ""
    return f"a token takes {int(b):,} bytes, not {int(a):,}"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Weighed:
    """Budget lines weighed: their effects on the KV memory, in order, and the
    lines that cannot be weighed (unstated on a side)."""

    effects: tuple[Effect, ...] = ()
    unstated: tuple[str, ...] = ()

    def then(self, other: _Weighed) -> _Weighed:
        return _Weighed(
            effects=self.effects + other.effects, unstated=self.unstated + other.unstated
        )


def _effects(old: Report, new: Report, by: dict[str, Row]) -> _Weighed:
    """Each budget line's effect on the KV memory, and the lines that cannot be
    weighed (unstated on a side): the budget, the overheads, the CUDA graphs."""
    fixed = _kv_memory_set(by)
    if fixed is not None:
        return fixed
    budgets = (_budget(by, "old", _graph_rule(old)), _budget(by, "new", _graph_rule(new)))
    changes = {c.name: c for c in budgets[0].changes_to(budgets[1])}
    return (
        _budget_effects(by, budgets, changes["requested_gib"])
        .then(_overhead_effects(by, changes))
        .then(_graph_effects(old, new, budgets, changes["cuda_graph_gib"]))
    )


def _budget(by: dict[str, Row], side: Literal["old", "new"], rule: CudaGraphRule) -> MemoryBudget:
    """One side's memory budget, from its rows (budget.MemoryBudget)."""

    def term(name: str) -> Sourced[float] | None:
        row = by[name]
        return _term(row.old if side == "old" else row.new)

    return MemoryBudget(
        total_gib=term("total_gpu_gib"),
        gpu_memory_utilization=term("gpu_memory_utilization"),
        requested_gib=term("requested_gib"),
        weights_gib=term("weights_gib"),
        activation_peak_gib=term("activation_peak_gib"),
        non_torch_gib=term("non_torch_gib"),
        cuda_graph_gib=term("cuda_graph_gib"),
        kv_cache_gib=term("available_kv_gib"),
        cuda_graph_rule=rule,
    )


def _kv_memory_set(by: dict[str, Row]) -> _Weighed | None:
    """--kv-cache-memory-bytes on a side: the KV memory is the figure, not the
    budget (None: neither side sets it)."""
    kvm = by["kv_cache_memory_bytes"]
    ka, kb = _gib_of(_f(kvm.old)), _gib_of(_f(kvm.new))
    if ka is None and kb is None:
        return None
    if ka is not None and kb is not None:
        if ka == kb:
            return _Weighed()
        set_both = Effect(
            name="kv_cache_memory_bytes",
            label="--kv-cache-memory-bytes",
            effect_gib=kb - ka,
            old_gib=ka,
            new_gib=kb,
            why="the KV memory is --kv-cache-memory-bytes",
        )
        return _Weighed(effects=(set_both,))
    side = "NEW" if kb is not None else "OLD"
    value = kb if kb is not None else ka
    assert value is not None
    set_one = Effect(
        name="kv_cache_memory_bytes",
        label="--kv-cache-memory-bytes",
        effect_gib=0.0,
        old_gib=ka,
        new_gib=kb,
        why=f"{side} sets --kv-cache-memory-bytes ({_gib(value)} GiB): its KV memory is "
        "that figure, not what the memory budget leaves",
    )
    return _Weighed(effects=(set_one,))


def _budget_effects(
    by: dict[str, Row], budgets: tuple[MemoryBudget, MemoryBudget], change: TermChange
) -> _Weighed:
    """total x utilization: the utilization's share at the old total, the rest the GPU's."""
    ta, tb = _f(by["total_gpu_gib"].old), _f(by["total_gpu_gib"].new)
    util_row = by["gpu_memory_utilization"]
    ua, ub = _f(util_row.old), _f(util_row.new)
    # Only a requested row (stated, or worked from stated lines) counts: a budget worked
    # from a default utilization would weigh an assumption as a line.
    ra, rb = _f(by["requested_gib"].old), _f(by["requested_gib"].new)
    moved = change.kv_effect_gib
    if ra is None or rb is None or moved is None:
        if util_row.is_changed:
            defaults = " (vLLM's defaults)" if util_row.old.note or util_row.new.note else ""
            return _Weighed(
                unstated=(
                    f"the GPU's memory, for gpu_memory_utilization {ua:.2f} -> {ub:.2f}{defaults}",
                )
            )
        return _Weighed(unstated=("total x gpu_memory_utilization",))
    if ta is None or tb is None or ua is None or ub is None:
        requested = Effect(
            name="requested_gib",
            label="requested memory (total x gpu_memory_utilization)",
            effect_gib=moved,
            old_gib=ra,
            new_gib=rb,
        )
        return _Weighed(effects=(requested,))
    effects: list[Effect] = []
    total_part = moved
    util_part = budgets[0].utilization_share_gib(budgets[1])
    if util_row.is_changed and util_part is not None:
        total_part -= util_part
        assumed = " (assumed: vLLM's default)" if util_row.old.note or util_row.new.note else ""
        effects.append(
            Effect(
                name="gpu_memory_utilization",
                label="gpu_memory_utilization",
                effect_gib=util_part,
                old_gib=ua,
                new_gib=ub,
                why=f"{_gib(ta)} GiB x {ub - ua:+.2f}{assumed}",
            )
        )
    effects.append(
        Effect(
            name="total_gpu_gib",
            label="the GPU's memory",
            effect_gib=total_part,
            old_gib=ta,
            new_gib=tb,
            why="total x utilization",
        )
    )
    return _Weighed(effects=tuple(effects))


def _overhead_effects(by: dict[str, Row], changes: dict[TermName, TermChange]) -> _Weighed:
    """The weights, the activation peak (0.31+: less the CUDA graph estimate it
    holds: budget.MemoryBudget.activation_own_gib) and the non-torch memory: each
    one's growth took KV memory."""
    effects: list[Effect] = []
    unstated: list[str] = []
    names: tuple[tuple[TermName, str], ...] = (
        ("weights_gib", "weights"),
        ("activation_peak_gib", "activation peak"),
        ("non_torch_gib", "non-torch memory"),
    )
    for name, label in names:
        old_gib, new_gib = _f(by[name].old), _f(by[name].new)  # as printed
        effect = changes[name].kv_effect_gib
        if effect is None:
            if old_gib is not None or new_gib is not None:
                unstated.append(f"{label} ({'OLD' if old_gib is None else 'NEW'})")
            else:
                unstated.append(label)
            continue
        effects.append(
            Effect(name=name, label=label, effect_gib=effect, old_gib=old_gib, new_gib=new_gib)
        )
    return _Weighed(effects=tuple(effects), unstated=tuple(unstated))


def _graph_effects(
    old: Report, new: Report, budgets: tuple[MemoryBudget, MemoryBudget], change: TermChange
) -> _Weighed:
    """The CUDA graph memory each side takes from the KV memory (vLLM 0.20+:
    budget.MemoryBudget.cuda_graph_taken_gib)."""
    rules = (budgets[0].cuda_graph_rule, budgets[1].cuda_graph_rule)
    rule_a, rule_b = rules
    taken_a, taken_b, effect = change.old_gib, change.new_gib, change.kv_effect_gib
    if taken_a is None or taken_b is None or effect is None:
        if rule_a != "no" or rule_b != "no":
            return _Weighed(
                unstated=("CUDA graph memory" if "unknown" not in rules else "the vLLM version",)
            )
        return _Weighed()
    if not change.is_moved:
        return _Weighed()
    why = "vLLM 0.20+ takes it from the KV memory"
    if (rule_a == "no") != (rule_b == "no"):
        # An upgrade across 0.20: the same graphs, now charged to the KV memory.
        side, other = ("NEW", "OLD") if rule_a == "no" else ("OLD", "NEW")
        rep, rep_other = (new, old) if rule_a == "no" else (old, new)
        taken = taken_b if rule_a == "no" else taken_a
        why = (
            f"{side}'s vLLM {rep.vllm_version} takes the CUDA graph estimate "
            f"({_gib(taken)} GiB) from the KV memory, {other}'s "
            f"{rep_other.vllm_version or 'vLLM'} does not"
        )
    graphs = Effect(
        name="cuda_graph_gib",
        label="CUDA graph memory",
        effect_gib=effect,
        old_gib=_cuda_graph_gib(budgets[0]),
        new_gib=_cuda_graph_gib(budgets[1]),
        why=why,
    )
    return _Weighed(effects=(graphs,))


def _cuda_graph_gib(budget: MemoryBudget) -> float | None:
    """The CUDA graph memory a side states (whether or not vLLM takes it)."""
    return None if budget.cuda_graph_gib is None else budget.cuda_graph_gib.value


def _memory_sentence(
    effects: Sequence[Effect],
    unstated: Sequence[str],
    kv_gib: tuple[float, float],
    tol: float,
) -> tuple[str, str | None, float]:
    """What took (or gave) the KV memory: the sentence, the line, the unexplained GiB."""
    d_kv = kv_gib[1] - kv_gib[0]
    known = sum(e.effect_gib for e in effects)
    unexplained = d_kv - known
    kvm = next((e for e in effects if e.name == "kv_cache_memory_bytes"), None)
    if kvm is not None and kvm.effect_gib == 0.0:
        return kvm.why, kvm.name, 0.0
    same_way = [e for e in effects if e.effect_gib * d_kv > 0 and abs(e.effect_gib) > tol]
    kv_text = f"KV memory {_gib(kv_gib[0])} -> {_gib(kv_gib[1])} GiB"
    if not same_way:
        missing = ", ".join(unstated) or "nothing"
        return (
            f"{kv_text}, and no line both logs state moved it (not stated: {missing})",
            None,
            unexplained,
        )
    lead = max(same_way, key=lambda e: abs(e.effect_gib))
    if abs(lead.effect_gib) < 0.5 * abs(d_kv) - tol and unstated:
        return (
            f"{kv_text}; the stated lines account for {_gib(abs(known))} GiB of the "
            f"{_gib(abs(d_kv))} GiB; the rest is in what a log does not state "
            f"({', '.join(unstated)})",
            None,
            unexplained,
        )
    text = _effect_phrase(lead)
    also = [
        e
        for e in same_way
        if e is not lead and abs(e.effect_gib) >= _ALSO_SHARE * abs(d_kv) and e.name != lead.name
    ]
    if also:
        text += "; also " + ", ".join(_effect_phrase(e) for e in also)
    if abs(unexplained) > _ALSO_SHARE * abs(d_kv) + tol:
        # The lead covers at least half, not all: say how much the stated lines
        # explain (weights -43.5 GiB of a +84.5 GiB KV change: "43.54 of the 84.53").
        text += (
            f", {_gib(abs(known))} of the {_gib(abs(d_kv))} GiB; {_gib(abs(unexplained))} GiB "
            "is in no line both logs state"
        )
    text += f" ({kv_text})"
    return text, lead.name, unexplained


def _effect_phrase(e: Effect) -> str:
    """``CUDA graph memory grew from 0.44 to 2.31 GiB``."""
    if e.name == "gpu_memory_utilization":
        return (
            f"gpu_memory_utilization went from {e.old_gib:.2f} to {e.new_gib:.2f} "
            f"({e.effect_gib:+.2f} GiB)"
        )
    if e.name == "cuda_graph_gib" and e.why.startswith(("NEW's", "OLD's")):
        return e.why
    if e.old_gib is None or e.new_gib is None:
        return f"{e.label} moved the KV memory {e.effect_gib:+.2f} GiB"
    verb = "grew" if e.new_gib > e.old_gib else "fell"
    return f"{e.label} {verb} from {_gib(e.old_gib)} to {_gib(e.new_gib)} GiB"


def explain(old: Report, new: Report, by: dict[str, Row]) -> Explanation:
    """Which change explains the pool's change (see the module's docstring);
    the pool is one engine's, so a change of data-parallel engines is said too."""
    out = _explain_pool(old, new, by)
    out = _boot_to_boot(out, by)
    dp = by["num_engines"]
    if dp.is_changed:
        out = replace(
            out,
            sentence=f"{out.sentence}; and NEW runs {dp.new.value} data-parallel engines, OLD "
            f"{dp.old.value} (users are summed over them; the pool is one engine's)",
        )
    return out


#: The rows that are a launch's settings: when none differs (and the model and version
#: are stated on both sides), a pool that moved moved by itself.
_SETTINGS = (
    "vllm_version",
    "model",
    "dtype",
    "kv_cache_dtype",
    "tensor_parallel_size",
    "num_engines",
    "block_size",
    "kv_cache_groups",
    "total_gpu_gib",
    "gpu_memory_utilization",
    "kv_cache_memory_bytes",
)


def _boot_to_boot(out: Explanation, by: dict[str, Row]) -> Explanation:
    """Two boots of the same settings whose pools differ: say how much, as the memory
    profile's boot-to-boot variance, and the ``--margin`` a gate on this setup wants.

    The profile measures the activation peak and the memory other processes hold at
    each boot, so the same launch moves its pool by a few percent (real logs: a few
    hundred blocks of tens of thousands). A gate at exactly one boot's users would
    flap; ``--min-users N --margin P%`` with P at least this move does not.
    """
    if any(by[name].is_changed for name in _SETTINGS):
        return out
    if not all(by[n].old.is_known and by[n].new.is_known for n in ("model", "vllm_version")):
        return out  # the same settings only where both logs state them (the docstring above)
    tp = by["tensor_parallel_size"]
    if (tp.old.is_assumed or tp.new.is_assumed) and tp.old.value != tp.new.value:
        return out  # TP stated on one side, not on the other: not known to be the same
    pool = by["num_blocks"] if by["num_blocks"].change_pct is not None else by["pool_tokens"]
    pct = pool.change_pct
    if pct is None or pct == 0:
        return out
    margin = math.ceil(abs(pct))
    return replace(
        out,
        sentence=f"{out.sentence}; every setting the logs state is the same, so the "
        f"{abs(pct):.1f}% move is the memory profile's boot-to-boot variance: a --min-users "
        f"gate on this setup wants --margin {margin}% or more",
        boot_to_boot_pct=abs(pct),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _PoolMove:
    """The pool's move between the boots, as the explanation's steps word it:
    its phrase and ratio (new / old), the settings that moved the bytes per
    block (phrases, row names) and the bytes-per-token phrase."""

    text: str
    ratio: float
    causes: tuple[str, ...]
    cause_names: tuple[str, ...]
    bpt: str


def _explain_pool(old: Report, new: Report, by: dict[str, Row]) -> Explanation:
    pool_text, ratio = _pool_phrase(by)
    if ratio is None:
        return _no_pool(old, new)
    causes, cause_names = _block_causes(by)
    move = _PoolMove(
        text=pool_text,
        ratio=ratio,
        causes=tuple(causes),
        cause_names=tuple(cause_names),
        bpt=_bpt_phrase(by),
    )
    if ratio == 1.0:
        return Explanation(
            kind="unchanged",
            sentence=pool_text + "".join(f"; {c}" for c in causes),
            line=cause_names[0] if cause_names else None,
        )
    ka, kb = _kv_memory(by)
    if ka is None or kb is None:
        return _memory_not_stated(move, ka, kb)
    kv = by["available_kv_gib"]
    tol = kv.old.half_ulp + kv.new.half_ulp
    d_kv = kb - ka
    if d_kv == 0 or abs(d_kv) < tol - 1e-9:
        return _same_memory(move, kv, ka, kb, tol)
    return _memory_moved(old, new, by, move, (ka, kb), tol)


def _no_pool(old: Report, new: Report) -> Explanation:
    which = [
        side
        for side, r in (("OLD", old), ("NEW", new))
        if r.pool_tokens is None and r.num_blocks is None
    ]
    what = " and ".join(which) or "a side"
    return Explanation(
        kind="unknown",
        sentence=f"no pool to compare: {what} states no KV cache pool",
        unstated=("the pool",),
    )


def _kv_memory(by: dict[str, Row]) -> tuple[float | None, float | None]:
    """Each side's KV memory (GiB): the memory line, else --kv-cache-memory-bytes."""
    kv = by["available_kv_gib"]
    ka, kb = _f(kv.old), _f(kv.new)
    if ka is None:
        ka = _gib_of(_f(by["kv_cache_memory_bytes"].old))
    if kb is None:
        kb = _gib_of(_f(by["kv_cache_memory_bytes"].new))
    return ka, kb


def _memory_not_stated(move: _PoolMove, ka: float | None, kb: float | None) -> Explanation:
    """A side does not state its KV memory: the change cannot be attributed."""
    missing = "OLD" if ka is None else "NEW"
    if ka is None and kb is None:
        missing = "either log"
    head = f"{move.text}: the KV memory is not stated in {missing}"
    if move.causes:
        return Explanation(
            kind="unknown",
            sentence=f"{head}; {', '.join(move.causes)}, but whether the memory moved too "
            "cannot be told",
            line=move.cause_names[0],
            unstated=("KV memory",),
        )
    return Explanation(
        kind="unknown",
        sentence=f"{head}, so the change cannot be attributed",
        unstated=("KV memory",),
    )


def _same_memory(move: _PoolMove, kv: Row, ka: float, kb: float, tol: float) -> Explanation:
    """The KV memory did not move (to both sides' printed precision): the bytes
    per block did, by a stated setting, or by less than the precision shows."""
    if move.causes:
        tail = f": {move.bpt}" if move.bpt else ""
        return Explanation(
            kind="bytes_per_block",
            sentence=f"{move.text}: {', '.join(move.causes)}{tail}, in the same "
            f"{_gib(ka)} GiB of KV memory",
            line=move.cause_names[0],
        )
    if abs(move.ratio - 1.0) * max(ka, kb) <= tol:
        # 16 blocks of 2.25 MiB = 0.035 GiB hide in "53.4" vs "53.44" (format_gib).
        return Explanation(
            kind="unknown",
            sentence=f"{move.text}: less than the printed precision of the KV memory "
            f"({kv.old.value} and {kv.new.value} GiB), too little to name a line",
            unstated=("the KV memory's bytes",),
        )
    return Explanation(
        kind="unknown",
        sentence=f"{move.text} in the same {_gib(ka)} GiB of KV memory, so the bytes per "
        "block changed, but no stated setting did (the model's shape is unknown: "
        "pass --config)",
        unstated=("the model's KV shape",),
    )


def _memory_moved(
    old: Report,
    new: Report,
    by: dict[str, Row],
    move: _PoolMove,
    kv_gib: tuple[float, float],
    tol: float,
) -> Explanation:
    """The KV memory moved: the budget line that moved it; when the bytes per
    block moved too, the larger factor first."""
    ka, kb = kv_gib
    weighed = _effects(old, new, by)
    mem_text, line, unexplained = _memory_sentence(weighed.effects, weighed.unstated, kv_gib, tol)
    sentence = f"{move.text}: {mem_text}"
    kind: ExplanationKind = "memory" if line is not None else "unknown"
    # Both moved: the KV memory's factor and the bytes per block's, the larger first.
    if move.causes and ka > 0 and kb > 0:
        mem_factor = abs(math.log(kb / ka))
        block_factor = abs(math.log(move.ratio / (kb / ka))) if move.ratio > 0 else 0.0
        block_text = ", ".join(move.causes) + (f" ({move.bpt})" if move.bpt else "")
        if block_factor > mem_factor:
            sentence = f"{move.text}: {block_text}; the KV memory moved too: {mem_text}"
            line = move.cause_names[0]
        else:
            sentence = f"{sentence}; also {block_text}"
        kind = "both"
    return Explanation(
        kind=kind,
        sentence=sentence,
        line=line,
        effects=weighed.effects,
        unexplained_gib=unexplained,
        unstated=weighed.unstated,
    )
