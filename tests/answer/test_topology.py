"""Topology from evidence: the ranks a log's worker labels show (every era's labels),
TP/PP/DP "not stated" when the log does not state them (never 1), in the text, the
JSON and the CSV, and ``diff`` never reporting a change against an assumed value."""

from __future__ import annotations

import json
import re
from functools import cache
from itertools import permutations
from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread import analyze_file
from vllm_logread.cli.commands import main
from vllm_logread.read.lines import worker_label
from vllm_logread.report.diff import diff_reports
from vllm_logread.report.model import Report

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
REAL_LOGS = ROOT.parent / "shared" / "real_logs"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    ("process", "record", "label"),
    [
        ("VllmWorkerProcess pid=13105", "", "VllmWorkerProcess pid=13105"),  # V0 0.4.2-0.10.2
        ("VllmWorker rank=3 pid=1608647", "", "rank=3"),  # V1 0.6.5-0.10.0
        ("VllmWorker TP1 pid=4302", "", "TP1"),  # 0.10.1
        ("VllmWorker PP0_TP1 pid=4302", "", "PP0_TP1"),
        ("Worker_TP7 pid=99", "", "TP7"),  # 0.10.2+
        ("Worker_PP1_TP0 pid=99", "", "PP1_TP0"),
        ("Worker_DP0_TP0_EP0 pid=99", "", "DP0_TP0_EP0"),
        ("Worker_PP6 pid=583", "", "PP6"),  # vLLM issue 32105: PP 8, no TP part
        ("RayWorkerWrapper pid=7, ip=10.0.0.2", "", "RayWorkerWrapper pid=7, ip=10.0.0.2"),
        ("DP0 TP1 EP1", "", "DP0 TP1 EP1"),  # SGLang's header ranks
        (None, "[rank1]: INFO 07-12 09:41:02 [x.py:1] y", "rank1"),  # torchrun
        ("EngineCore_DP0 pid=200", "", None),
        ("APIServer pid=1", "", None),
        ("Worker pid=12", "", None),  # 0.17+: a worker before its groups exist, no rank
        (None, "INFO 07-12 09:41:02 [x.py:1] y", None),
    ],
)
def test_worker_label_of_every_era(process: str | None, record: str, label: str | None) -> None:
    assert worker_label(process, record) == label


@cache
def report_of(path: Path) -> Report:
    return analyze_file(str(path))


@pytest.mark.parametrize(
    ("name", "ranks", "tp"),
    [
        ("era_0_11_0_tp4.log", 4, 4),  # Worker_TP0..TP3
        ("era_0_9_2_tp2.log", 2, None),  # VllmWorker rank=0, rank=1
        ("wrap_ray.log", 2, None),  # two RayWorkerWrapper pids
        ("wrap_rank_prefix.log", 2, None),  # [rank0]: and [rank1]:
        ("seed_qwen3-8b_l4.log", None, None),  # one engine, no worker label
    ],
)
def test_ranks_seen_in_samples(name: str, ranks: int | None, tp: int | None) -> None:
    seen = report_of(SAMPLES / name).ranks_seen
    if ranks is None:
        assert seen is None
    else:
        assert seen is not None and (seen.num_ranks, seen.tensor_parallel_size) == (ranks, tp)


@pytest.mark.skipif(not REAL_LOGS.is_dir(), reason=f"no shared corpus of real logs at {REAL_LOGS}")
def test_v0_worker_processes_count_the_driver() -> None:
    # real_logs/033: six VllmWorkerProcess pids (ranks 1-7 less one that printed nothing
    # the reader keeps) + the driver, rank 0, which prints unlabelled: 7.
    seen = report_of(REAL_LOGS / "033.log").ranks_seen
    assert seen is not None and seen.num_ranks == 7
    assert seen.text == "7 ranks seen (6 VllmWorkerProcess + the driver)"


# Worker labels counted independently of the reader: one rank a distinct label.
_LABEL = re.compile(
    r"\((?:VllmWorker rank=\d+|VllmWorker (?:PP\d+_)?TP\d+|Worker(?:_[A-Z]+\d+)+"
    r"|VllmWorkerProcess pid=\d+|RayWorkerWrapper pid=\d+[^)]*)[ )]|^\s*\[rank\d+\]:",
    re.MULTILINE,
)


def _all_logs() -> list[Path]:
    logs = sorted(SAMPLES.glob("*.log"))
    if REAL_LOGS.is_dir():
        logs += sorted(REAL_LOGS.glob("*.log"))
    return logs


@pytest.mark.parametrize("log", _all_logs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_log_says_1_gpu_unless_it_states_tp_1(log: Path) -> None:
    result = run("read", str(log), "--format", "json")
    if not result.stdout.strip():
        return  # nothing to report (no pool, an input error)
    out = json.loads(result.stdout)
    reports = out["reports"] if "reports" in out else [out]
    text = run("read", str(log)).stdout
    labels = set(_LABEL.findall(log.read_text(encoding="utf-8", errors="replace")))
    if len(labels) > 1:
        assert "1 GPU," not in text and not text.rstrip().endswith("1 GPU"), log
    for rep in reports:
        stated = [f for f in rep["facts"] if f["kind"] == "tensor_parallel_size"]
        # JSON: the TP the log states, else null (never the assumed 1).
        assert rep["tensor_parallel_size"] == (stated[0]["value"] if stated else None) or (
            rep["tensor_parallel_size"] is None and not stated
        )
    if "1 GPU" in text:
        assert any(r["tensor_parallel_size"] == 1 for r in reports), log


def test_json_and_csv_say_not_stated() -> None:
    bare = json.loads(run("read", str(SAMPLES / "wrap_ansi_bare.log"), "--json").stdout)
    assert (bare["tensor_parallel_size"], bare["num_ranks_seen"]) == (None, None)
    tp4 = json.loads(run("read", str(SAMPLES / "era_0_11_0_tp4.log"), "--json").stdout)
    assert (tp4["tensor_parallel_size"], tp4["num_ranks_seen"]) == (4, 4)
    ranks = json.loads(run("read", str(SAMPLES / "wrap_rank_prefix.log"), "--json").stdout)
    assert (ranks["tensor_parallel_size"], ranks["num_ranks_seen"]) == (None, 2)
    csv = run("read", str(SAMPLES / "wrap_ansi_bare.log"), "--format", "csv").stdout
    header, row = csv.splitlines()[:2]
    cells = dict(zip(header.split(","), row.split(","), strict=False))
    assert cells["tp"] == "" and cells["num_gpus"] == ""


def test_text_says_the_ranks_and_tp_not_stated() -> None:
    text = " ".join(run("read", str(SAMPLES / "wrap_rank_prefix.log")).stdout.split())
    assert "2 ranks seen (rank0, rank1), TP not stated" in text
    assert "TP not stated" in run("read", str(SAMPLES / "wrap_ansi_bare.log")).stdout


# Logs with a pool: TP stated 1, 2, 4, 8; DP 2; TP not stated (with and without labels).
DIFF_LOGS = [
    "seed_qwen3-8b_l4.log",
    "era_0_9_2_tp2.log",
    "era_0_11_0_tp4.log",
    "era_0_5_3_v0_tp2.log",
    "era_0_18_0_dp2.log",
    "hybrid_deepseek_v3_tp8.log",
    "wrap_ansi_bare.log",
    "wrap_rank_prefix.log",
    "wrap_ray.log",
    "era_0_7_2_v0.log",
    "platform_cpu.log",
    "qwen3-8b-l4-v0.11.log",
]


@pytest.mark.parametrize(
    ("old", "new"), list(permutations(DIFF_LOGS, 2)), ids=lambda n: n.removesuffix(".log")
)
def test_diff_never_invents_a_change(old: str, new: str) -> None:
    d = diff_reports(report_of(SAMPLES / old), report_of(SAMPLES / new))
    for row in d.rows:
        if row.is_changed:
            assert not (row.old.is_assumed or row.new.is_assumed), (row.name, old, new)
    tp = next(r for r in d.rows if r.name == "tensor_parallel_size")
    if tp.old.is_assumed or tp.new.is_assumed:
        assert "tensor parallel went from" not in d.explanation.sentence


def test_diff_of_tp2_against_a_log_that_never_states_tp() -> None:
    # era_0_9_2_tp2 states tensor_parallel_size=2; wrap_ansi_bare states no TP: the
    # 1 the report assumes is marked (*) and no "went from 2 to 1, -50%".
    result = run("diff", str(SAMPLES / "era_0_9_2_tp2.log"), str(SAMPLES / "wrap_ansi_bare.log"))
    assert "tensor parallel went from" not in result.stdout
    row = next(line for line in result.stdout.splitlines() if "tensor parallel" in line)
    assert row.split()[-2:] == ["1*", "?"]
    assert "NEW tensor parallel: not stated in the log" in result.stdout


PP_LOG = SAMPLES / "constructed_0.11_deepseek_v3_pp2_tp2.log"


def test_pipeline_stage_pool_paired_with_its_own_memory() -> None:
    # DeepSeek-V3, PP 2 x TP 2, vLLM 0.11.0 (each worker states its KV memory; EngineCore
    # states each worker's pool). vLLM splits 61 layers 31 + 30 (get_pp_indices); an MLA
    # layer keeps 512 + 64 = 576 values x 2 B = 1,152 B a token; blocks of 64 tokens:
    #   PP0 (layers 0-30): 8.50 GiB = 9,126,805,504 B // (31 x 1,152 x 64 = 2,285,568 B)
    #       = 3,993 blocks = 255,552 tokens (its TP1: 8.52 GiB, 4,002 blocks)
    #   PP1 (layers 31-60): 7.90 GiB = 8,482,560,409 B // (30 x 1,152 x 64 = 2,211,840 B)
    #       = 3,835 blocks = 245,440 tokens (its TP1: 7.91 GiB, 3,839 blocks)
    # vLLM gives every stage the fewest: 3,835 blocks, PP1's; its memory is 7.90 GiB, not
    # the first line's 8.50 (PP0's: 8.50 GiB / 2,285,568 B would be 3,993 blocks).
    rep = report_of(PP_LOG)
    assert rep.num_blocks == 3_835 and rep.pool_tokens == 245_440
    assert rep.available_kv_gib == 7.90
    assert rep.kv_bytes_per_token == 30 * 1_152  # 34,560: the stage's 30 layers
    memory = next(c for c in rep.checks if c.name == "pool_vs_memory")
    assert memory.status == "pass"
    # (3,835 - 1 null block) // cdiv(512 + 128 - 1 = 639, 64) = 3,834 // 10 = 383 users.
    assert rep.users == 383
    assert rep.ranks_seen is not None and rep.ranks_seen.num_ranks == 4
    assert (rep.ranks_seen.tensor_parallel_size, rep.ranks_seen.pipeline_parallel_size) == (2, 2)
