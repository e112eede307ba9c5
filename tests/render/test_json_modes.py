"""One JSON shape per question: ``--json`` and ``--format json`` print the same
single object in every mode, and it validates against the shipped schema
(vllm_logread/data/report.schema.json), whole, not server by server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_logs"
SEED = str(S / "seed_qwen3-8b_l4.log")
SCHEMA = json.loads((ROOT / "vllm_logread" / "data" / "report.schema.json").read_text())

MODES = {
    "single": [SEED],
    "sweep": [SEED, "--prompt", "256,512", "--output", "128,512"],
    "many-servers": [SEED, str(S / "era_0_18_0_dp2.log"), str(S / "sglang_qwen3-8b_h100.log")],
    "many-with-bad": [SEED, str(S / "wrap_tqdm.log"), str(S / "never_wrong_v1_kv_too_small.log")],
    "many-sweep": [SEED, str(S / "era_0_17_0.log"), "--prompt", "256,512"],
    "metrics": [str(S / "metrics_v1_0_10_qwen3-8b.txt")],
    "metrics-dp2": [str(S / "metrics_v1_0_11_dp2_qwen3-8b.txt")],
    "sglang": [str(S / "sglang_qwen3-8b_h100.log")],
    "all-boots": [str(S / "wrap_glued.log"), "--all-boots"],
    "no-pool": [str(S / "wrap_tqdm.log")],
    "kv": ["kv", "Qwen/Qwen3-8B"],
    "kv-gpu": ["kv", "Qwen/Qwen3-8B", "--gpu", "H100-80GB"],
    "kv-gpu-fails": ["kv", "mistralai/Mixtral-8x7B-Instruct-v0.1", "--gpu", "L4"],
    "kv-gpu-unknown": ["kv", "moonshotai/Kimi-K2-Thinking", "--gpu", "H200", "--tp", "8"],
    "metrics-workload": [str(S / "real_vllm_0.32_llama-3.2-1b_mixed.metrics.txt")],
    "log-requests": [str(S / "real_vllm_0.32_llama-3.2-1b_mixed.log")],
    "workload-mix": [SEED, "--workload", str(ROOT / "tests" / "data" / "mix_seed.csv")],
    "workload-mix-prefix": [
        SEED,
        "--workload",
        str(ROOT / "tests" / "data" / "mix_seed.csv"),
        "--shared-prefix",
        "64",
        "--target-users",
        "50",
    ],
}


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("mode", list(MODES), ids=list(MODES))
def test_every_mode_is_one_valid_object(mode: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    a = run(*MODES[mode], "--json")
    b = run(*MODES[mode], "--format", "json")
    assert a.stdout == b.stdout, "--json and --format json differ"
    assert a.exit_code == b.exit_code
    obj = json.loads(a.stdout)  # the whole stdout: nothing printed after the object
    jsonschema.validate(obj, SCHEMA)
    if "--prompt" in MODES[mode]:
        assert obj["sweep"], "a sweep's rows are in the object"
    if mode in ("metrics-workload", "log-requests"):
        assert obj["observed_workload"]["source"] == ("metrics" if "metrics" in mode else "log")


def test_many_servers_count_only_the_good_ones() -> None:
    r = run(*MODES["many-with-bad"], "--json")
    obj = json.loads(r.stdout)
    assert r.exit_code == 3  # no pool (wrap_tqdm); a boot that serves nobody (KV cache too small)
    assert [s["exit_code"] for s in obj["servers"]] == [0, 3, 3]
    assert obj["servers"][0]["users"] == 37  # the seed among bad logs still says 37
    assert obj["total"]["num_servers"] == 1 and obj["total"]["users"] == 37
    assert [n["source"] for n in obj["total"]["not_counted"]] == MODES["many-with-bad"][1:]


DIFF_MODES = {
    "diff-fp8": [
        "diff",
        str(S / "real_vllm_0.32_qwen3-8b_seed.log"),
        str(S / "real_vllm_0.32_qwen3-8b_fp8.log"),
    ],
    "diff-gate": ["diff", SEED, str(S / "era_0_17_0.log"), "--max-drop", "5"],
    "diff-no-pool": ["diff", SEED, str(S / "wrap_tqdm.log")],
    "diff-metrics": ["diff", str(S / "metrics_v1_0_10_qwen3-8b.txt"), SEED],
}


@pytest.mark.parametrize("mode", list(DIFF_MODES), ids=list(DIFF_MODES))
def test_diff_is_one_valid_object(mode: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    r = run(*DIFF_MODES[mode], "--json")
    obj = json.loads(r.stdout)  # the whole stdout: nothing printed after the object
    jsonschema.validate(obj, SCHEMA)
    assert obj["command"] == "diff"
    assert [obj["old"]["source"], obj["new"]["source"]] == DIFF_MODES[mode][1:3]
