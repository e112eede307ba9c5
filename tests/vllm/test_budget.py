"""budget.MemoryBudget: vLLM's memory budget, the KV memory it leaves, one term
changed, and each term's effect between two boots. Every figure worked by hand."""

from __future__ import annotations

import pytest

from vllm_logread.boot.state import Sourced, SourceKind
from vllm_logread.report.budget import MemoryBudget, TermChange


def gib(value: float, kind: SourceKind = "stated") -> Sourced[float]:
    return Sourced(value=value, kind=kind, source="line 1" if kind == "stated" else kind)


#: An 8B model on a 24 GiB card at 0.90, the graphs taken beside the peak (0.20-0.30).
CARD_24 = MemoryBudget(
    total_gib=gib(24.0),
    gpu_memory_utilization=gib(0.9),
    weights_gib=gib(15.27),
    activation_peak_gib=gib(1.18),
    non_torch_gib=gib(0.12),
    cuda_graph_gib=gib(0.53),
    cuda_graph_rule="apart",
)


def test_requested_is_total_times_utilization() -> None:
    # 24 GiB x 0.90 = 21.6 GiB.
    assert CARD_24.requested == pytest.approx(21.6)


def test_a_stated_requested_figure_is_used_as_printed() -> None:
    # vLLM 0.7.2 prints 79.15 x 0.90 = 71.24 (71.235 rounded): the line's figure stands.
    budget = MemoryBudget(
        total_gib=gib(79.15), gpu_memory_utilization=gib(0.9), requested_gib=gib(71.24)
    )
    assert budget.requested == 71.24


def test_kv_memory_left_with_the_graphs_apart() -> None:
    # 21.6 - 15.27 weights - (1.18 peak + 0.12 non-torch + 0.53 graphs = 1.83) = 4.50 GiB.
    assert CARD_24.overheads_gib == pytest.approx(1.83)
    assert CARD_24.kv_cache_left_gib == pytest.approx(4.5)


def test_kv_memory_left_on_a_v0_boot_matches_its_line() -> None:
    # sample_logs/era_0_7_2_v0.log, lines 12-13: 71.24 - 14.96 weights - 0.54 non-torch
    # - 1.19 peak = 54.55 GiB, the KV line's figure; V0 takes no graphs (0.53 captured after).
    budget = MemoryBudget(
        requested_gib=gib(71.24),
        weights_gib=gib(14.96),
        non_torch_gib=gib(0.54),
        activation_peak_gib=gib(1.19),
        cuda_graph_gib=gib(0.53),
        cuda_graph_rule="no",
    )
    assert budget.cuda_graph_taken_gib == 0.0
    assert budget.kv_cache_left_gib == pytest.approx(54.55)


def test_a_peak_that_holds_the_graphs_is_charged_once() -> None:
    # 0.31+ prints the peak with the graph estimate inside: 1.71 printed = 1.18 own + 0.53
    # graphs, so the KV memory is the same 4.50 GiB as with 1.18 and the graphs apart.
    in_peak = MemoryBudget(
        total_gib=gib(24.0),
        gpu_memory_utilization=gib(0.9),
        weights_gib=gib(15.27),
        activation_peak_gib=gib(1.71),
        non_torch_gib=gib(0.12),
        cuda_graph_gib=gib(0.53),
        cuda_graph_rule="in_peak",
    )
    assert in_peak.activation_own_gib == pytest.approx(1.18)
    assert in_peak.kv_cache_left_gib == pytest.approx(4.5)


def test_an_unknown_term_leaves_no_kv_figure() -> None:
    # No non-torch line, or no version to say whether the graphs are charged: no figure.
    no_non_torch = MemoryBudget(
        total_gib=gib(24.0), gpu_memory_utilization=gib(0.9), weights_gib=gib(15.27)
    )
    assert no_non_torch.kv_cache_left_gib is None
    unknown_rule = MemoryBudget(
        requested_gib=gib(21.6),
        weights_gib=gib(15.27),
        activation_peak_gib=gib(1.18),
        non_torch_gib=gib(0.12),
        cuda_graph_gib=gib(0.53),
        cuda_graph_rule="unknown",
    )
    assert unknown_rule.cuda_graph_taken_gib is None
    assert unknown_rule.kv_cache_left_gib is None


def test_the_extensible_cache_margin_is_taken_too() -> None:
    # 0.34: 21.6 - 15.27 - (1.18 + 0.12 + 0.53 + 1.0 margin = 2.83) = 3.50 GiB.
    budget = MemoryBudget(
        total_gib=gib(24.0),
        gpu_memory_utilization=gib(0.9),
        weights_gib=gib(15.27),
        activation_peak_gib=gib(1.18),
        non_torch_gib=gib(0.12),
        cuda_graph_gib=gib(0.53),
        kv_margin_gib=gib(1.0, "derived"),
    )
    assert budget.kv_cache_left_gib == pytest.approx(3.5)


def test_derived_works_requested_and_non_torch_from_stated_lines() -> None:
    # 79.19 x 0.90 = 71.271 (2 + 2 decimals: 4, exact); 15.59 consumed - 14.99 weights = 0.60.
    budget = MemoryBudget(
        total_gib=gib(79.19),
        gpu_memory_utilization=gib(0.9),
        weights_gib=gib(14.99),
        consumed_gib=gib(15.59),
    ).derived(digits=4)
    assert budget.requested_gib == Sourced(
        value=71.271, kind="derived", source="total x utilization"
    )
    assert budget.non_torch_gib is not None
    assert budget.non_torch_gib.value == 0.6
    assert budget.non_torch_gib.kind == "derived"


def test_derived_takes_no_figure_from_a_default_utilization() -> None:
    # 79.19 x vLLM's default 0.92 would be an assumption shown as a figure.
    budget = MemoryBudget(
        total_gib=gib(79.19), gpu_memory_utilization=gib(0.92, "default")
    ).derived(digits=4)
    assert budget.requested_gib is None
    assert budget.requested == pytest.approx(72.8548)  # worked on demand, for what-ifs


def test_a_higher_utilization_gains_its_share_of_the_card() -> None:
    # 22.05 GiB x (0.95 - 0.90) = 1.1025 GiB more for the KV cache.
    now = MemoryBudget(total_gib=gib(22.05), gpu_memory_utilization=gib(0.9))
    then = now.changed(gpu_memory_utilization=0.95, source="--what-if")
    assert then.gpu_memory_utilization == Sourced(value=0.95, kind="given", source="--what-if")
    assert now.kv_gain_gib(then) == pytest.approx(1.1025)


def test_a_new_card_drops_the_stated_requested_figure() -> None:
    # 71.24 was the old card's; on 79.19 GiB at 0.90: 71.271, so 0.031 GiB more.
    now = MemoryBudget(
        total_gib=gib(79.15),
        gpu_memory_utilization=gib(0.9),
        requested_gib=gib(71.24),
        kv_cache_gib=gib(54.55),
    )
    then = now.changed(total_gib=79.19, source="--gpu")
    assert then.requested_gib is None and then.kv_cache_gib is None
    assert then.requested == pytest.approx(71.271)
    assert now.kv_gain_gib(then) == pytest.approx(0.031)


def test_fp8_weights_give_back_what_they_shed() -> None:
    # 15.27 GiB of weights at half: 7.635, so 7.635 GiB more; the terms nobody states
    # (non-torch, peak) are unknown on both sides and cancel.
    now = MemoryBudget(weights_gib=gib(15.27))
    assert now.kv_gain_gib(now.changed(weights_gib=7.635, source="weights=fp8")) == (
        pytest.approx(7.635)
    )


def test_an_activation_peak_in_proportion_to_the_step_frees_its_share() -> None:
    # 2.0 GiB at 8,192 tokens is 1.0 at 4,096: 1.0 GiB more; at 16,384, 4.0: 2.0 GiB less.
    now = MemoryBudget(activation_peak_gib=gib(2.0))
    assert now.kv_gain_gib(now.changed(activation_peak_gib=1.0, source="x")) == 1.0
    assert now.kv_gain_gib(now.changed(activation_peak_gib=4.0, source="x")) == -2.0


def test_a_moved_term_unknown_on_a_side_has_no_gain() -> None:
    # The weights are known now but not after (nothing to subtract): no figure.
    now = MemoryBudget(weights_gib=gib(15.27))
    assert now.kv_gain_gib(MemoryBudget()) is None


def test_changes_between_two_boots_in_the_budgets_order() -> None:
    # OLD: 79.19 x 0.90 = 71.27 requested, 15.27 weights; NEW: 79.19 x 0.92 = 72.85,
    # 7.64 weights (FP8). Requested +1.58 gives; weights -7.63 gives 7.63; together 9.21.
    old = MemoryBudget(
        total_gib=gib(79.19),
        gpu_memory_utilization=gib(0.9),
        requested_gib=gib(71.27),
        weights_gib=gib(15.27),
    )
    new = MemoryBudget(
        total_gib=gib(79.19),
        gpu_memory_utilization=gib(0.92),
        requested_gib=gib(72.85),
        weights_gib=gib(7.64),
    )
    changes = old.changes_to(new)
    assert [c.name for c in changes] == [
        "requested_gib",
        "weights_gib",
        "activation_peak_gib",
        "non_torch_gib",
        "cuda_graph_gib",
        "kv_margin_gib",
    ]
    assert changes[0].kv_effect_gib == pytest.approx(1.58)
    assert changes[1].kv_effect_gib == pytest.approx(7.63)
    assert old.kv_gain_gib(new) == pytest.approx(9.21)
    # The utilization's share at the old total: 79.19 x 0.02 = 1.5838 GiB.
    assert old.utilization_share_gib(new) == pytest.approx(1.5838)


def test_an_upgrade_across_0_20_charges_the_same_graphs() -> None:
    # 0.19 takes none of its 0.49 GiB of graphs, 0.20 takes them: 0.49 GiB less KV memory.
    old = MemoryBudget(cuda_graph_gib=gib(0.49), cuda_graph_rule="no")
    new = MemoryBudget(cuda_graph_gib=gib(0.49), cuda_graph_rule="apart")
    graphs = old.changes_to(new)[4]
    assert (graphs.old_gib, graphs.new_gib) == (0.0, 0.49)
    assert graphs.kv_effect_gib == pytest.approx(-0.49)


def test_term_change_signs() -> None:
    # More requested memory gives KV memory; more of any other term takes it.
    assert TermChange(name="requested_gib", old_gib=20.0, new_gib=21.0).kv_effect_gib == 1.0
    assert TermChange(name="non_torch_gib", old_gib=0.5, new_gib=2.0).kv_effect_gib == -1.5
    assert TermChange(name="weights_gib", old_gib=None, new_gib=2.0).kv_effect_gib is None


def test_the_gpu_holds_at_least_the_weights_and_the_kv_memory() -> None:
    # Real log 052: 100.43 GiB of KV memory and no weights line: at least 100.43 GiB.
    assert MemoryBudget(kv_cache_gib=gib(100.43)).min_gpu_gib == 100.43
    # sample_logs/era_0_32_0.log: 14.99 weights + 55.52 KV = 70.51 GiB at least.
    both = MemoryBudget(weights_gib=gib(14.99), kv_cache_gib=gib(55.52))
    assert both.min_gpu_gib == pytest.approx(70.51)
    assert MemoryBudget(weights_gib=gib(14.99)).min_gpu_gib is None
