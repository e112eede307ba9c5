"""vLLM's memory budget on one GPU: what the KV cache gets of the card.

At boot vLLM measures what everything but the KV cache takes and gives the
rest of its share of the GPU to the pool (docs/vllm-numbers.md, section 3;
V1 0.9.1+, V0 0.6.5-0.10.2 alike)::

    requested     = total x gpu_memory_utilization
    KV cache      = requested - weights - activation peak - non-torch
                    [- CUDA graphs] [- the extensible cache's margin]

The CUDA graph estimate is taken from the KV memory by default from vLLM 0.20
(``rules.cuda_graph_rule``: "apart"), and from 0.31 the printed activation peak
already holds it ("in_peak"), so its own share is the peak less the graphs. The
boot estimate counts the graphs from 0.21 (``rules.Feature.CUDA_GRAPH_IN_BUDGET``)
and 0.34's extensible KV cache margin beside them.

:class:`MemoryBudget` holds one boot's terms, each a
:class:`~vllm_logread.boot.state.Sourced` (stated with its line, given, a
default, derived, or an estimate's figure) or None when nothing gives it, and
does the budget's arithmetic for every command: the KV memory it leaves (the
boot estimate), the KV memory one changed term gains (what-ifs, the
max_num_batched_tokens what-if) and each term's effect between two boots (diff).
The words are the callers'.

A V0 boot of vLLM 0.7.2 (sample_logs/era_0_7_2_v0.log, lines 12-13): 79.15 GiB
x 0.90 = 71.24 GiB requested (as printed) - 14.96 weights - 0.54 non-torch -
1.19 activation peak = 54.55 GiB for the KV cache, the figure the line states;
its 0.53 GiB of CUDA graphs are captured after the KV cache (V0: rule "no").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from ..boot.state import Sourced

#: One term: its value in GiB (a fraction for the utilization) with where it came
#: from, or None when nothing gives it.
Term: TypeAlias = "Sourced[float] | None"

#: How a boot's vLLM charges the CUDA graph memory (rules.cuda_graph_rule): "no"
#: (not taken from the KV memory), "apart" (taken beside the activation peak),
#: "in_peak" (inside the printed activation peak), "unknown" (the version is not
#: stated: no graph figure is charged or left out by guess).
CudaGraphRule = Literal["no", "apart", "in_peak", "unknown"]

#: The terms in the budget's order, as :meth:`MemoryBudget.changes_to` gives them.
TermName = Literal[
    "requested_gib",
    "weights_gib",
    "activation_peak_gib",
    "non_torch_gib",
    "cuda_graph_gib",
    "kv_margin_gib",
]


def _v(term: Term) -> float | None:
    return None if term is None else term.value


def _is_own(term: Term) -> bool:
    """The term is a figure of the boot's own (stated, given or derived), not a default."""
    return term is not None and term.kind != "default"


@dataclass(frozen=True, slots=True, kw_only=True)
class TermChange:
    """One term between two budgets: what it charges on each side (GiB; None:
    unknown there) and its effect on the KV memory.

    ``old_gib`` and ``new_gib`` are what the term takes from the KV memory: the
    activation peak's own share, the CUDA graphs vLLM takes (0 where it takes
    none); the requested memory is what the others are taken from.
    """

    name: TermName
    old_gib: float | None
    new_gib: float | None

    @property
    def is_moved(self) -> bool:
        return self.old_gib != self.new_gib

    @property
    def kv_effect_gib(self) -> float | None:
        """What the change gave the KV memory (negative: took); None: a side unknown.

        >>> TermChange(name="weights_gib", old_gib=15.27, new_gib=7.64).kv_effect_gib
        7.63
        >>> TermChange(name="requested_gib", old_gib=71.27, new_gib=75.23).kv_effect_gib
        3.96...
        """
        if self.old_gib is None or self.new_gib is None:
            return None
        if self.name == "requested_gib":
            return self.new_gib - self.old_gib
        return -(self.new_gib - self.old_gib)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryBudget:
    """vLLM's memory budget on one GPU (see the module's docstring).

    Attributes:
        total_gib: the GPU's total memory (vLLM's ``total_gpu_memory``).
        gpu_memory_utilization: the share of it vLLM may use.
        requested_gib: total x utilization as the log states it (None: worked
            from both, :attr:`requested`).
        weights_gib: the weights per GPU ("Model loading took X GiB").
        activation_peak_gib: the profile's activation peak, as printed (0.31+:
            with the CUDA graph estimate inside).
        non_torch_gib: memory outside PyTorch's allocator (NCCL, CUDA context).
        consumed_gib: weights + non-torch, as 0.27+'s summary line states it.
        cuda_graph_gib: the CUDA graph memory (estimate or capture).
        kv_margin_gib: 0.34's extensible KV cache margin (None: none charged).
        kv_cache_gib: the KV memory as the log states it ("Available KV cache
            memory"), for comparison with what the terms leave.
        cuda_graph_rule: how this vLLM charges the graphs (:data:`CudaGraphRule`).
    """

    total_gib: Term = None
    gpu_memory_utilization: Term = None
    requested_gib: Term = None
    weights_gib: Term = None
    activation_peak_gib: Term = None
    non_torch_gib: Term = None
    consumed_gib: Term = None
    cuda_graph_gib: Term = None
    kv_margin_gib: Term = None
    kv_cache_gib: Term = None
    cuda_graph_rule: CudaGraphRule = "apart"

    @property
    def requested(self) -> float | None:
        """total x gpu_memory_utilization: as stated, else worked from both.

        >>> MemoryBudget(total_gib=_given(24.0), gpu_memory_utilization=_given(0.9)).requested
        21.6
        """
        if self.requested_gib is not None:
            return self.requested_gib.value
        total, util = _v(self.total_gib), _v(self.gpu_memory_utilization)
        return None if total is None or util is None else total * util

    @property
    def activation_own_gib(self) -> float | None:
        """The activation peak less the CUDA graphs it holds (0.31+: "in_peak");
        None when a figure it needs is unknown."""
        peak = _v(self.activation_peak_gib)
        if peak is None or self.cuda_graph_rule != "in_peak":
            return peak
        graphs = _v(self.cuda_graph_gib)
        return None if graphs is None else peak - graphs

    @property
    def cuda_graph_taken_gib(self) -> float | None:
        """The CUDA graph memory taken from the KV memory: 0 where vLLM takes none;
        None when the graphs or the rule are unknown."""
        if self.cuda_graph_rule == "no":
            return 0.0
        if self.cuda_graph_rule == "unknown":
            return None
        return _v(self.cuda_graph_gib)

    @property
    def overheads_gib(self) -> float | None:
        """What the profile takes besides the weights, in the budget's order (the
        activation's own share, non-torch, the graphs, the margin)."""
        parts = (self.activation_own_gib, _v(self.non_torch_gib), self.cuda_graph_taken_gib)
        if any(p is None for p in parts):
            return None
        act, non_torch, graphs = parts
        assert act is not None and non_torch is not None and graphs is not None
        return act + non_torch + graphs + (_v(self.kv_margin_gib) or 0.0)

    @property
    def kv_cache_left_gib(self) -> float | None:
        """The KV memory the budget leaves: requested - weights - overheads (None:
        a term unknown; negative: the overheads exceed the budget).

        >>> MemoryBudget(total_gib=_given(24.0), gpu_memory_utilization=_given(0.9),
        ...     weights_gib=_given(15.27), activation_peak_gib=_given(1.18),
        ...     non_torch_gib=_given(0.12), cuda_graph_gib=_given(0.53)).kv_cache_left_gib
        4.5...
        """
        requested, weights, overheads = self.requested, _v(self.weights_gib), self.overheads_gib
        if requested is None or weights is None or overheads is None:
            return None
        return requested - weights - overheads

    def derived(self, *, digits: int | None = None) -> MemoryBudget:
        """This budget with requested (total x utilization) and non-torch
        (consumed - weights) worked out where the log does not state them, from
        the boot's own figures only (a default utilization gives no figure).

        ``digits``: round to them. Two printed figures of 2 decimals multiply to
        4 (79.19 x 0.90 = 71.2710): rounding to 4 drops the float's noise, not a
        digit the log gave.
        """
        out = self
        if self.requested_gib is None and _is_own(self.total_gib):
            if _is_own(self.gpu_memory_utilization):
                value = self.requested
                assert value is not None
                out = replace(out, requested_gib=_derived(value, "total x utilization", digits))
        if self.non_torch_gib is None and self.consumed_gib is not None:
            weights = _v(self.weights_gib)
            if weights is not None:
                value = self.consumed_gib.value - weights
                how = "consumed (weights + non-torch) - weights"
                out = replace(out, non_torch_gib=_derived(value, how, digits))
        return out

    def changed(
        self,
        *,
        source: str,
        total_gib: float | None = None,
        gpu_memory_utilization: float | None = None,
        weights_gib: float | None = None,
        activation_peak_gib: float | None = None,
    ) -> MemoryBudget:
        """The same budget with the given terms changed (``source``: the change).

        A new total or utilization drops a stated requested figure (it is worked
        again from both); the stated KV memory line is this boot's, so it goes.
        """
        out = replace(self, kv_cache_gib=None)
        if total_gib is not None or gpu_memory_utilization is not None:
            out = replace(out, requested_gib=None)
        if total_gib is not None:
            out = replace(out, total_gib=Sourced(value=total_gib, kind="given", source=source))
        if gpu_memory_utilization is not None:
            util = Sourced(value=gpu_memory_utilization, kind="given", source=source)
            out = replace(out, gpu_memory_utilization=util)
        if weights_gib is not None:
            out = replace(out, weights_gib=Sourced(value=weights_gib, kind="given", source=source))
        if activation_peak_gib is not None:
            peak = Sourced(value=activation_peak_gib, kind="given", source=source)
            out = replace(out, activation_peak_gib=peak)
        return out

    def changes_to(self, new: MemoryBudget) -> tuple[TermChange, ...]:
        """Each term from this budget to ``new``, in the budget's order."""
        pairs: tuple[tuple[TermName, float | None, float | None], ...] = (
            ("requested_gib", self.requested, new.requested),
            ("weights_gib", _v(self.weights_gib), _v(new.weights_gib)),
            ("activation_peak_gib", self.activation_own_gib, new.activation_own_gib),
            ("non_torch_gib", _v(self.non_torch_gib), _v(new.non_torch_gib)),
            ("cuda_graph_gib", self.cuda_graph_taken_gib, new.cuda_graph_taken_gib),
            ("kv_margin_gib", _v(self.kv_margin_gib), _v(new.kv_margin_gib)),
        )
        return tuple(TermChange(name=n, old_gib=a, new_gib=b) for n, a, b in pairs)

    def kv_gain_gib(self, new: MemoryBudget) -> float | None:
        """The KV memory ``new`` leaves beyond this budget: the sum of the effects of
        the terms that moved (a term unknown on both sides and unmoved cancels);
        None when a moved term is unknown on a side.

        >>> now = MemoryBudget(total_gib=_given(22.05), gpu_memory_utilization=_given(0.9))
        >>> round(now.kv_gain_gib(now.changed(gpu_memory_utilization=0.95, source="x")), 4)
        1.1025
        """
        gain = 0.0
        for change in self.changes_to(new):
            if not change.is_moved:
                continue
            effect = change.kv_effect_gib
            if effect is None:
                return None
            gain += effect
        return gain

    def utilization_share_gib(self, new: MemoryBudget) -> float | None:
        """The part of the requested memory's change the utilization makes, at this
        budget's total: total x (new utilization - this one) (None: unknown).

        >>> now = MemoryBudget(total_gib=_given(79.19), gpu_memory_utilization=_given(0.9))
        >>> round(now.utilization_share_gib(now.changed(gpu_memory_utilization=0.92,
        ...     source="x")), 4)
        1.5838
        """
        total = _v(self.total_gib)
        util, new_util = _v(self.gpu_memory_utilization), _v(new.gpu_memory_utilization)
        if total is None or util is None or new_util is None:
            return None
        return total * (new_util - util)

    @property
    def min_gpu_gib(self) -> float | None:
        """What the GPU holds at least: the weights and the KV memory the log states
        both sit in it (no weights line: the KV memory alone); None: no KV line.

        >>> MemoryBudget(kv_cache_gib=_given(100.43)).min_gpu_gib
        100.43
        """
        kv = _v(self.kv_cache_gib)
        if kv is None:
            return None
        weights = _v(self.weights_gib)
        return (0.0 if weights is None else max(weights, 0.0)) + max(kv, 0.0)


def _derived(value: float, how: str, digits: int | None) -> Sourced[float]:
    return Sourced(
        value=value if digits is None else round(value, digits), kind="derived", source=how
    )


def _given(value: float) -> Sourced[float]:
    """A term given as an option (the doctests' figures)."""
    return Sourced(value=value, kind="given", source="given")


__all__ = ["CudaGraphRule", "MemoryBudget", "Term", "TermChange", "TermName"]
