"""Every hand-written answer key against what the scanner reads from its log.

``sample_logs/<name>.facts.json`` lists, line by line, the facts (docs/facts.md) a reader
sees in ``sample_logs/<name>.log``; the notes in each key work the numbers through
vLLM's arithmetic for that version. The comparison is the one the conformance
scorer ``../shared/tools/score_facts.py`` makes: per docs/facts.md kind, the key's values
and the tool's values as multisets, numbers equal within 1e-4 relative; the process
tag is compared on every matched fact. A sample passes only with nothing missing,
nothing wrong (a value the key does not list) and no tag off.

The same comparison runs over the shared corpus of real logs
(``../shared/real_logs/NNN.log`` + ``NNN.facts.json``) when it is present.

Where a sample shows a reader bug that is not fixed yet, the fact is listed once in
``KNOWN_GAPS`` with what goes wrong: the sample test leaves that one fact aside (so
everything else in the log stays checked), and ``test_known_gap`` is a strict xfail
that starts failing, as a reminder to delete the entry, the day the reader gets it right.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vllm_logread.read.facts import Fact
from vllm_logread.read.scanner import scan_bytes

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
REAL_LOGS = Path(__file__).resolve().parents[3] / "shared" / "real_logs"

# The core kinds of docs/facts.md; the tool's extensions (device, stats_engine, ...) are not scored.
VOCAB = frozenset(
    {
        "vllm_version",
        "model",
        "max_model_len",
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "kv_cache_dtype",
        "dtype",
        "quantization",
        "block_size",
        "gpu_memory_utilization",
        "enable_prefix_caching",
        "max_num_seqs",
        "weights_gib",
        "total_gpu_gib",
        "requested_gib",
        "non_torch_gib",
        "activation_peak_gib",
        "cuda_graph_gib",
        "available_kv_gib",
        "gpu_blocks",
        "cpu_blocks",
        "pool_tokens",
        "max_concurrency",
        "concurrency_tokens",
        "kv_cache_memory_bytes",
        "running_reqs",
        "waiting_reqs",
        "swapped_reqs",
        "kv_usage_pct",
        "prefix_hit_pct",
        "prompt_tps",
        "generation_tps",
        "preemptions",
        "kv_too_small",
    }
)

FactJson = dict[str, Any]


def same(a: object, b: object) -> bool:
    """Equal as the scorer counts equal: bools exactly, numbers within 1e-4 relative.

    >>> same(0.9, 0.90001), same(24096, 24097), same(True, 1)
    (True, False, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-4 * max(1.0, abs(a), abs(b))
    return str(a).strip() == str(b).strip()


@dataclass(frozen=True)
class Score:
    missing: list[FactJson]
    wrong: list[FactJson]
    tags_off: list[tuple[FactJson, str | None]]
    lines_off: list[tuple[FactJson, int | None]]

    def report(self) -> str:
        def fmt(f: FactJson) -> str:
            return f"{f['kind']}={f['value']!r} (line {f.get('line')}, {f.get('process')})"

        parts = [f"missing {fmt(f)}" for f in self.missing]
        parts += [f"wrong {fmt(f)}" for f in self.wrong]
        parts += [f"tag off {fmt(f)}: tool says {got!r}" for f, got in self.tags_off]
        parts += [f"line off {fmt(f)}: tool says line {got}" for f, got in self.lines_off]
        return "\n".join(parts)


def score(expected: list[FactJson], got: list[FactJson]) -> Score:
    """Match the key against the tool's facts kind by kind (score_facts.py's rule).

    Among equal values the one on the key's line is taken first, so a value stated on
    several lines (TP ranks) pairs with its own line; ``lines_off`` lists matched facts
    whose line differs (score_facts.py does not look at lines; ``test_sample_lines`` does).
    """
    want: dict[str, list[FactJson]] = defaultdict(list)
    for f in expected:
        want[f["kind"]].append(f)
    have: dict[str, list[FactJson]] = defaultdict(list)
    for f in got:
        if f.get("kind") in VOCAB:
            have[f["kind"]].append(f)
    missing: list[FactJson] = []
    wrong: list[FactJson] = []
    tags_off: list[tuple[FactJson, str | None]] = []
    lines_off: list[tuple[FactJson, int | None]] = []
    for kind in sorted(set(want) | set(have)):
        pool = list(have[kind])
        for f in want[kind]:
            hits = [g for g in pool if same(g.get("value"), f["value"])]
            hit = next(
                (g for g in hits if g.get("line") == f.get("line")), hits[0] if hits else None
            )
            if hit is None:
                missing.append(f)
                continue
            pool.remove(hit)
            if (hit.get("process") or None) != (f.get("process") or None):
                tags_off.append((f, hit.get("process")))
            if hit.get("line") != f.get("line"):
                lines_off.append((f, hit.get("line")))
        wrong.extend(pool)
    return Score(missing, wrong, tags_off, lines_off)


def read_facts(log: Path) -> list[FactJson]:
    """Facts as ``--json`` lists them, straight from the scanner."""
    return [
        e.to_json() for e in scan_bytes(log.read_bytes(), source=log.name) if isinstance(e, Fact)
    ]


def log_of(key: Path) -> Path:
    return key.with_name(key.name.removesuffix(".facts.json") + ".log")


# -- known reader gaps -------------------------------------------------------------------------


@dataclass(frozen=True)
class Gap:
    """One fact the reader gets wrong in one sample, until it is fixed.

    ``missing``: the key lists ``kind=value`` on ``line`` and the reader does not find it there.
    ``wrong``: the reader reports ``kind=value`` on ``line`` and the key does not list it.
    """

    sample: str
    line: int
    kind: str
    value: object
    what: str  # "missing" or "wrong"
    reason: str


_HW = (
    "80-column hard wrap: only a physical line that carries a marker and fails its regex "
    "(a near miss) is rejoined with the lines after it; "
)
KNOWN_GAPS: tuple[Gap, ...] = ()


def _gaps(sample: str) -> list[Gap]:
    return [g for g in KNOWN_GAPS if g.sample == sample]


def _on_line(facts: list[FactJson], gap: Gap) -> list[FactJson]:
    return [
        f
        for f in facts
        if f.get("kind") == gap.kind
        and same(f.get("value"), gap.value)
        and f.get("line") == gap.line
    ]


def _set_gaps_aside(
    sample: str, expected: list[FactJson], got: list[FactJson]
) -> tuple[list[FactJson], list[FactJson]]:
    expected, got = list(expected), list(got)
    for gap in _gaps(sample):
        for facts in (expected, got) if gap.what == "missing" else (got,):
            for f in _on_line(facts, gap)[:1]:
                facts.remove(f)
    return expected, got


# -- the tests ---------------------------------------------------------------------------------

SAMPLE_KEYS = sorted(SAMPLES.glob("*.facts.json"))


def test_every_sample_log_has_a_key() -> None:
    """The era and wrapper samples come in pairs (a log without a key checks nothing)."""
    logs = {p.name.removesuffix(".log") for p in SAMPLES.glob("era_*.log")}
    logs |= {p.name.removesuffix(".log") for p in SAMPLES.glob("wrap_*.log")}
    keys = {p.name.removesuffix(".facts.json") for p in SAMPLE_KEYS}
    assert logs - keys == set()
    assert len(SAMPLE_KEYS) >= 30


@pytest.mark.parametrize(
    "key", SAMPLE_KEYS, ids=[k.name.removesuffix(".facts.json") for k in SAMPLE_KEYS]
)
def test_sample_facts(key: Path) -> None:
    data = json.loads(key.read_text(encoding="utf-8"))
    assert data["log"] == log_of(key).name
    sample = key.name.removesuffix(".facts.json")
    expected, got = _set_gaps_aside(sample, data["facts"], read_facts(log_of(key)))
    result = score(expected, got)
    assert not (result.missing or result.wrong or result.tags_off), "\n" + result.report()


@pytest.mark.parametrize(
    "key", SAMPLE_KEYS, ids=[k.name.removesuffix(".facts.json") for k in SAMPLE_KEYS]
)
def test_sample_lines(key: Path) -> None:
    """Each fact points at its line (docs/facts.md: the first physical line of a wrapped record)."""
    data = json.loads(key.read_text(encoding="utf-8"))
    sample = key.name.removesuffix(".facts.json")
    expected, got = _set_gaps_aside(sample, data["facts"], read_facts(log_of(key)))
    result = score(expected, got)
    assert not result.lines_off, "\n" + result.report()


# Every gap the reader had is fixed (KNOWN_GAPS is empty). A new one goes into
# KNOWN_GAPS with a strict-xfail test of its own, so its fix shows up:
#
#   @pytest.mark.parametrize("gap", [pytest.param(g, marks=pytest.mark.xfail(strict=True,
#                            reason=g.reason)) for g in KNOWN_GAPS])
#   def test_known_gap(gap): ...


def test_known_gaps_are_listed_in_their_key() -> None:
    """A "missing" gap must be a fact of the key, so setting it aside hides nothing else."""
    for gap in KNOWN_GAPS:
        facts = json.loads((SAMPLES / f"{gap.sample}.facts.json").read_text(encoding="utf-8"))
        assert bool(_on_line(facts["facts"], gap)) == (gap.what == "missing"), gap


REAL_KEYS = sorted(REAL_LOGS.glob("*.facts.json")) if REAL_LOGS.is_dir() else []


@pytest.mark.parametrize(
    "key",
    REAL_KEYS
    or [
        pytest.param(
            None, marks=pytest.mark.skip(reason=f"no real-log corpus at {REAL_LOGS}"), id="absent"
        )
    ],
    ids=[k.name.removesuffix(".facts.json") for k in REAL_KEYS] or None,
)
def test_real_log_facts(key: Path) -> None:
    """The conformance corpus: real logs from issues and forums, keys written by hand."""
    data = json.loads(key.read_text(encoding="utf-8"))
    result = score(data["facts"], read_facts(log_of(key)))
    assert not (result.missing or result.wrong or result.tags_off), "\n" + result.report()


def test_score_counts_missing_wrong_and_tags() -> None:
    """The comparison itself: a wrong number is reported as missing plus wrong."""
    key = [
        {"kind": "pool_tokens", "value": 24096, "process": "EngineCore pid=1"},
        {"kind": "max_concurrency", "value": 2.94, "process": None},
    ]
    got = [
        {"kind": "pool_tokens", "value": 24096, "process": None},
        {"kind": "max_concurrency", "value": 2.49, "process": None},
        {"kind": "device", "value": "GPU", "process": None},
    ]
    result = score(key, got)
    assert [f["value"] for f in result.missing] == [2.94]
    assert [f["value"] for f in result.wrong] == [2.49]
    assert [(f["kind"], tag) for f, tag in result.tags_off] == [("pool_tokens", None)]


def test_score_pairs_repeated_values_by_line() -> None:
    """Two ranks print the same weights: each key fact pairs with the fact on its own line."""
    key = [
        {"kind": "weights_gib", "value": 7.4829, "line": 12, "process": None},
        {"kind": "weights_gib", "value": 7.4829, "line": 13, "process": "VllmWorkerProcess pid=7"},
    ]
    got = [
        {"kind": "weights_gib", "value": 7.4829, "line": 13, "process": "VllmWorkerProcess pid=7"},
        {"kind": "weights_gib", "value": 7.4829, "line": 12, "process": None},
    ]
    result = score(key, got)
    assert (result.missing, result.wrong, result.tags_off, result.lines_off) == ([], [], [], [])
    shifted = [dict(f, line=f["line"] + 1) for f in got]
    assert [f["line"] for f, _ in score(key, shifted).lines_off] == [12]
