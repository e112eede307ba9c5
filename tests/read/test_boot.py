"""Boots and engines: vLLM's rules for ranks, DP engines and restarts."""

from __future__ import annotations

import pytest

from vllm_logread.boot.boots import BootTracker, engine_key
from vllm_logread.read.facts import Fact


def F(kind: str, value: object, line: int, process: str | None = None) -> Fact:  # noqa: N802
    return Fact(kind=kind, value=value, line=line, process=process)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tag", "engine"),
    [
        (None, "DP0"),
        ("EngineCore pid=4", "DP0"),
        ("EngineCore_DP0 pid=4", "DP0"),
        ("EngineCore_DP3 pid=4", "DP3"),
        ("EngineCore_1 pid=4", "DP1"),
        ("Worker_DP1_TP0 pid=9", "DP1"),
        ("Worker_TP3 pid=9", "DP0"),
        ("VllmWorker rank=2 pid=9", "DP0"),
        ("VllmWorkerProcess pid=9", "DP0"),
        ("RayWorkerWrapper pid=7, ip=10.0.0.2", "DP0"),
        ("RayWorkerProc rank=3 pid=7", "DP0"),
        ("Worker_PP1 pid=9", "DP0"),
        ("Worker_TP1_EP1 pid=9", "DP0"),
        ("TP1", "DP0"),  # SGLang's header ranks
        ("DP1 TP0 EP0", "DP1"),
        ("LLMRayActor pid=20770", "DP0"),
    ],
)
def test_engine_key(tag: str | None, engine: str) -> None:
    assert engine_key(tag) == engine


def test_tp_ranks_repeating_the_pool_are_one_engine_with_the_minimum() -> None:
    t = BootTracker()
    for i, v in enumerate([24096, 24096, 23968, 24096]):
        t.add_line([F("pool_tokens", v, 10 + i, "EngineCore_DP0 pid=1")])
    (boot,) = t.boots
    (eng,) = boot.pool_engines
    assert eng.pool_tokens == 23968
    assert eng.ranks_disagree


# One engine's ranks, as each era labels them, each stating its own pool (8 ranks: say
# 301,120 ... 302,048 tokens); the smallest is not the last: vLLM keeps the minimum
# (unify_kv_cache_configs / get_kv_cache_configs), so 301,120 = 18,820 blocks x 16.
_RANK_POOLS = [302_048, 301_888, 301_120, 301_904, 302_048, 301_440, 301_776, 301_968]


@pytest.mark.parametrize(
    "label",
    [
        "EngineCore pid=1",  # 0.8-0.11.0: the engine prints one pool line per worker config
        "VllmWorker rank={r} pid=1{r}",
        "VllmWorkerProcess pid=1{r}",
        "Worker_TP{r} pid=1{r}",
        "RayWorkerWrapper pid=1{r}, ip=10.0.0.{r}",
        "RayWorkerProc rank={r} pid=1{r}",
        "TP{r}",
    ],
)
def test_ranks_of_one_engine_keep_the_minimum_pool(label: str) -> None:
    t = BootTracker()
    for r, tokens in enumerate(_RANK_POOLS):
        t.add_line([F("pool_tokens", tokens, 10 + r, label.format(r=r))])
    (boot,) = t.boots
    (eng,) = boot.pool_engines
    assert eng.pool_tokens == 301_120
    assert eng.ranks_disagree


def test_dp_engines_keep_their_own_minimum_over_their_ranks() -> None:
    t = BootTracker()
    for n, (tag, tokens) in enumerate(
        [
            ("Worker_DP0_TP0 pid=1", 1000),
            ("Worker_DP1_TP0 pid=2", 2000),
            ("Worker_DP0_TP1 pid=3", 990),
            ("Worker_DP1_TP1 pid=4", 2010),
        ]
    ):
        t.add_line([F("pool_tokens", tokens, n + 1, tag)])
    # DP0: min(1000, 990) = 990; DP1: min(2000, 2010) = 2000.
    assert [e.pool_tokens for e in t.current.pool_engines] == [990, 2000]


def test_dp_engines_each_have_a_pool() -> None:
    t = BootTracker()
    t.add_line([F("pool_tokens", 1000, 1, "EngineCore_DP0 pid=1")])
    t.add_line([F("pool_tokens", 2000, 2, "EngineCore_DP1 pid=2")])
    assert [e.pool_tokens for e in t.current.pool_engines] == [1000, 2000]


def test_restart_after_pool_starts_a_new_boot() -> None:
    t = BootTracker()
    t.add_line([F("vllm_version", "0.11.0", 1, "APIServer pid=1")])
    t.add_line([F("pool_tokens", 1000, 2, "EngineCore_DP0 pid=2")])
    assert not t.add_line([F("running_reqs", 3, 3, "APIServer pid=1")])
    assert t.add_line([F("vllm_version", "0.11.0", 4, "APIServer pid=9")]) is False  # new pid
    assert t.add_line([F("vllm_version", "0.11.0", 5, "APIServer pid=9")]) is True
    assert len(t.boots) == 2


def test_out_of_order_paste_does_not_split() -> None:
    # real log 010: the pool lines come before the non-default args in the paste
    t = BootTracker()
    t.add_line([F("pool_tokens", 619479, 1, "EngineCore pid=106")])
    t.add_line(
        [F("model", "m", 3, "APIServer pid=1"), F("max_model_len", 262144, 3, "APIServer pid=1")]
    )
    assert len(t.boots) == 1


def test_kv_too_small_after_a_pool_is_another_run() -> None:
    # real log 036: two runs pasted together, the second failed before a pool
    t = BootTracker()
    t.add_line([F("available_kv_gib", 10.55, 1)])
    t.add_line([F("pool_tokens", 230528, 2)])
    t.add_line([F("max_model_len", 221000, 4), F("kv_too_small", 122080, 4)])
    assert len(t.boots) == 2
    assert t.boots[0].value("pool_tokens") == 230528
    assert not t.boots[1].has_pool


def test_memory_summary_after_the_pool_is_the_same_boot() -> None:
    # vLLM 0.26+ (era_0_32_0.log, lines 13-16): "Available KV cache memory: 55.52 GiB", the pool,
    # then "Free memory on device (78.54/79.19 GiB) ... (0.92, 72.85 GiB) ... Current kv cache
    # memory in use is 55.52 GiB": the same KV memory again, in this boot's summary.
    p = "EngineCore pid=205"
    t = BootTracker()
    t.add_line([F("available_kv_gib", 55.52, 13, p)])
    t.add_line([F("pool_tokens", 454_848, 14, p)])
    summary = [
        F("total_gpu_gib", 79.19, 16, p),
        F("requested_gib", 72.85, 16, p),
        F("available_kv_gib", 55.52, 16, p),
        F("activation_peak_gib", 1.23, 16, p),
    ]
    assert t.add_line(summary) is False
    (boot,) = t.boots
    assert boot.value("activation_peak_gib") == 1.23
    # Another KV memory in a summary is another run.
    again = [F("requested_gib", 72.85, 30, p), F("available_kv_gib", 50.0, 30, p)]
    assert t.add_line(again) is True


def test_the_0_32_log_is_one_boot_with_its_summary() -> None:
    from pathlib import Path

    from vllm_logread.cli.diff_app import read_side
    from vllm_logread.report.model import Options

    log = Path(__file__).resolve().parents[2] / "sample_logs" / "era_0_32_0.log"

    class Console:
        def err(self, text: str) -> None:
            raise AssertionError(text)

    report, status, session = read_side("NEW", str(log), Options(), Console())
    assert status.code == 0 and len(session.tracker.boots) == 1
    # Line 16: 1.23 GiB for peak activation, 79.19 GiB total (the summary after the pool).
    assert report.boot.value("activation_peak_gib") == 1.23
    assert report.boot.value("total_gpu_gib") == 79.19
