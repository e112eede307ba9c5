"""Sweeps (--prompt/--output lists and ranges) and many servers side by side."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.errors import UsageError
from vllm_logread.render.tables import parse_int_list

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
SEED = SAMPLES / "seed_qwen3-8b_l4.log"
PROMPTS, OUTPUTS = (256, 512, 2048), (128, 512)


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def single(prompt: int, output: int) -> tuple[int, int]:
    r = run(str(SEED), "--prompt", str(prompt), "--output", str(output), "--json")
    assert r.exit_code == 0, r.stderr
    obj = json.loads(r.stdout)
    return obj["users"], obj["users_mid_answer"]


def test_a_3x2_sweep_matches_the_single_runs() -> None:
    r = run(str(SEED), "--prompt", "256,512,2048", "--output", "128,512")
    assert r.exit_code == 0, r.stderr
    title, *lines = r.stdout.strip().splitlines()
    # The title says once what the source column would repeat, and the model.
    assert title == f"== vllm-logread users per workload: Qwen/Qwen3-8B, {SEED}"
    assert lines[0].split() == [
        "prompt_tokens",
        "output_tokens",
        "tokens_per_user",
        "users",
        "users_mid_answer",
        "exact",
    ]
    rows = [line.split() for line in lines[1:]]
    assert len(rows) == 6
    for row, (p, o) in zip(rows, [(p, o) for p in PROMPTS for o in OUTPUTS], strict=True):
        assert (int(row[0].replace(",", "")), int(row[1])) == (p, o)
        assert (int(row[3]), int(row[4])) == single(p, o)


def test_the_sweep_figures_by_hand() -> None:
    # 1,505 usable blocks; 256+128 = 384 tokens = 24 blocks -> 62, mid 320 = 20 -> 75;
    # 2,048+512 = 2,560 = 160 blocks -> 9, mid 2,304 = 144 -> 10.
    assert single(256, 128) == (62, 75)
    assert single(2048, 512) == (9, 10)


def test_csv_and_json_say_the_same() -> None:
    c = run(str(SEED), "--prompt", "256,512,2048", "--output", "128,512", "--format", "csv")
    j = run(str(SEED), "--prompt", "256,512,2048", "--output", "128,512", "--format", "json")
    assert c.exit_code == 0 and j.exit_code == 0
    from_csv = list(csv.DictReader(io.StringIO(c.stdout)))
    obj = json.loads(j.stdout)
    from_json = obj["sweep"]  # --format json is --json: the report, the sweep's rows in it
    assert obj["users"] == 62 and obj["workload"]["prompt_tokens"] == 256
    assert len(from_csv) == len(from_json) == 6
    for a, b in zip(from_csv, from_json, strict=True):
        assert a["source"] == b["source"] == str(SEED)
        for key in (
            "prompt_tokens",
            "output_tokens",
            "tokens_per_user",
            "users",
            "users_mid_answer",
        ):
            assert int(a[key]) == b[key]
    assert from_json[2] == {
        "source": str(SEED),
        "prompt_tokens": 512,
        "output_tokens": 128,
        "tokens_per_user": 640,
        "users": 37,
        "users_mid_answer": 41,
        "exact": True,
    }


def test_markdown_sweep() -> None:
    r = run(str(SEED), "--prompt", "512", "--output", "128:512:384", "--format", "markdown")
    title, blank, *table = r.stdout.splitlines()
    assert (title, blank) == (f"**vllm-logread** users per workload: Qwen/Qwen3-8B, {SEED}", "")
    assert table[:4] == [
        "| prompt_tokens | output_tokens | tokens_per_user | users | users_mid_answer | exact |",
        "|---:|---:|---:|---:|---:|---|",
        "| 512 | 128 | 640 | 37 | 41 | yes |",
        "| 512 | 512 | 1,024 | 23 | 31 | yes |",
    ]


def test_a_single_value_works_as_before() -> None:
    r = run(str(SEED), "--prompt", "512", "--output", "128")
    assert "37 users fit at 512 prompt + 128 output tokens" in r.stdout
    assert "prompt_tokens" not in r.stdout  # no table


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("512", (512,)),
        ("256,512,2048", (256, 512, 2048)),
        ("256:2048:256", (256, 512, 768, 1024, 1280, 1536, 1792, 2048)),
        ("100:103", (100, 101, 102, 103)),
        ("512,256:512:256", (512, 256)),  # repeats dropped, order kept
        (" 1_000 ", (1000,)),
    ],
)
def test_parse_int_list(text: str, values: tuple[int, ...]) -> None:
    assert parse_int_list(text) == values


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("-1", "-1 is not in the range 1<=x<=10000000"),
        ("abc", "'abc' is not a valid integer"),
        ("512:256", "runs backwards"),
        ("0:10000000:1", "more than 1000 values"),
        ("1:2:0", "is not a valid integer"),
    ],
)
def test_parse_int_list_errors(text: str, needle: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_int_list(text)
    assert needle in str(err.value)
    r = run(str(SEED), "--prompt", text)
    assert r.exit_code == 2 and needle in r.stderr


def test_many_servers_as_csv() -> None:
    logs = [SEED, SAMPLES / "era_0_19_0_dp2_aggregated.log", SAMPLES / "era_0_6_4_v0.log"]
    r = run(*map(str, logs), "--format", "csv")
    assert r.exit_code == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    # One row per server, in input order; three models: no total (37 Qwen3-8B users
    # and Llama-3.1-8B's do not add up). The DP 2 log's pools hold 297 each (594),
    # but each engine runs at most max_num_seqs 256 (not in the log: 256 is the least
    # vLLM's rule allows): 512.
    assert [row["users"] for row in rows] == ["37", "512", "84"]
    dp = rows[1]
    assert (dp["model"], dp["dp"], dp["num_gpus"], dp["checks"]) == (
        "meta-llama/Llama-3.1-8B-Instruct",
        "2",
        "2",
        "pass",
    )
    v0 = rows[2]
    assert (v0["gpu_gib"], v0["pool_tokens"], v0["num_blocks"]) == ("22.05", "54224", "3389")


def test_several_inputs_total_per_model_in_every_table_format() -> None:
    gemma = SAMPLES / "hybrid_gemma3_27b.log"
    logs = [str(SEED), str(gemma), str(SEED)]
    rows = list(csv.DictReader(io.StringIO(run(*logs, "--format", "csv").stdout)))
    # Input order, then Qwen3-8B's total: 37 + 37 = 74; Gemma's one server has none.
    assert [(row["source"], row["users"]) for row in rows[:3]] == [
        (str(SEED), "37"),
        (str(gemma), rows[1]["users"]),
        (str(SEED), "37"),
    ]
    assert [(r["source"], r["model"], r["users"], r["num_gpus"]) for r in rows[3:]] == [
        ("total", "Qwen/Qwen3-8B", "74", "2")
    ]
    md = run(*logs, "--format", "markdown").stdout
    head = md.split("\n\n")[1].splitlines()  # the servers side by side, before each report
    assert head[0].startswith("| source | model |")
    assert [line.split(" | ")[0].removeprefix("| ") for line in head[2:]] == [
        str(SEED),
        str(gemma),
        str(SEED),
        "total",
    ]
    text = run(*logs).stdout
    assert "== vllm-logread total: Qwen/Qwen3-8B: 74 users at 512+128 tokens over 2 servers" in text
    total = json.loads(run(*logs, "--json").stdout)["total"]
    assert total["users"] is None  # across two models: no one number
    assert [(m["model"], m["num_servers"], m["users"]) for m in total["models"]][0] == (
        "Qwen/Qwen3-8B",
        2,
        74,
    )


def test_one_server_csv_has_no_total() -> None:
    rows = list(csv.DictReader(io.StringIO(run(str(SEED), "--format", "csv").stdout)))
    assert len(rows) == 1
    assert rows[0]["users"] == "37" and rows[0]["vllm_max_concurrency"] == "2.94"
