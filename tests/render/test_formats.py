"""--format github|markdown: GitHub's workflow-command syntax, exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.render.ci import annotation, escape_data, escape_property

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"
SEED_REL = "sample_logs/seed_qwen3-8b_l4.log"
ADVICE = (
    "max_num_seqs 256 (vLLM's default below 70 GiB of GPU memory, 1024 on bigger GPUs but A100s "
    "in recent versions; the log shows only that it has at least 18.58 GiB (weights + KV cache); "
    "--gpu NAME settles it; not in the log) admits more requests than the pool holds at 512+128 "
    "tokens (37): under full load vLLM preempts (recomputes) the newest as answers grow; "
    "--max-num-seqs 37 keeps every admitted answer in the pool (41 fit mid-answer)"
)


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner(env=env).invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    ("text", "data", "prop"),
    [
        ("plain", "plain", "plain"),
        ("100%", "100%25", "100%25"),
        ("a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"),
        ("k: v, w", "k: v, w", "k%3A v%2C w"),
        ("%0A", "%250A", "%250A"),  # a literal %0A stays literal
    ],
)
def test_escaping(text: str, data: str, prop: str) -> None:
    assert escape_data(text) == data
    assert escape_property(text) == prop


def test_annotation_syntax() -> None:
    assert annotation("error", "bad", file="a,b.log", line=3, title="t: x") == (
        "::error file=a%2Cb.log,line=3,title=t%3A x::bad"
    )
    assert annotation("warning", "50% full\nreally") == "::warning::50%25 full%0Areally"
    assert annotation("notice", "n", file="-", line=4) == "::notice::n"  # stdin has no file
    with pytest.raises(ValueError):
        annotation("info", "x")


def test_github_on_the_seed_with_a_failed_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    r = run(SEED_REL, "--format", "github", "--min-users", "40")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        f"::error file={SEED_REL},line=16,title=vllm-logread --min-users::--min-users 40: only 37 "
        "users fit at 512+128 tokens",
        f"::warning file={SEED_REL},line=16,title=vllm-logread max_num_seqs::{ADVICE}",
        f"::notice file={SEED_REL},line=16,title=vllm-logread%3A Qwen/Qwen3-8B::37 users fit at "
        "512+128 tokens (41 mid-answer); vLLM's 2.94x is for users who each fill 8,192 tokens",
    ]


def test_github_points_a_contradiction_at_its_line(tmp_path: Path) -> None:
    # Llama-3.1-8B's shape: 32 x 8 x 128 x 2 x 2 = 131,072 B per token cannot give
    # 1,506 blocks from 3.31 GiB (line 15 states it).
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "hidden_size": 4096,
                "torch_dtype": "bfloat16",
            }
        )
    )
    r = run(str(SEED), "--format", "github", "--config", str(cfg))
    assert r.exit_code == 4
    first = r.stdout.splitlines()[0]
    assert first.startswith(
        f"::error file={escape_property(str(SEED))},line=15,title=vllm-logread pool_vs_memory::"
        "pool_vs_memory: 3.31 GiB / (131,072 B x 16 tokens) = 1,692..1,697 blocks"
    )


def test_github_no_pool_is_an_error(tmp_path: Path) -> None:
    log = tmp_path / "cut.log"
    log.write_text("".join(SEED.read_text().splitlines(keepends=True)[:13]))
    r = run(str(log), "--format", "github")
    assert r.exit_code == 3
    assert r.stdout.startswith(
        f"::error file={escape_property(str(log))},title=vllm-logread%3A no KV pool::"
    )
    assert len(r.stdout.splitlines()) == 1


def test_github_failed_boot_annotates_the_cause_its_line_and_the_fix() -> None:
    """A boot vLLM refused: the annotation is the stderr's words on the line that says
    why (line 10: "the estimated maximum model length is 24096"), never "no KV cache
    pool line ... did the boot fail?" without a line."""
    log = ROOT / "sample_logs" / "never_wrong_v1_kv_too_small.log"
    r = run(str(log), "--format", "github")
    assert r.exit_code == 3
    (first,) = [a for a in r.stdout.splitlines() if a.startswith("::error")]
    head, message = first.split("::")[1], first.split("::", 2)[2]
    assert head == (
        f"error file={escape_property(str(log))},line=10,"
        "title=vllm-logread%3A the boot serves nobody"
    )
    assert message.startswith(
        "the boot serves nobody: KV cache too small: one request of max model len 131,072 "
        "does not fit; the KV cache holds 24,096 tokens, so vLLM refused to start%0A"
        "  fix: --max-model-len 24096 or less"
    )
    assert "as one line: vllm serve Qwen/Qwen3-8B --max-model-len 24096" in message
    assert "no KV cache pool line" not in r.stdout
    # The same words as exit 3's message on stderr (both from the report's Failure).
    assert r.stderr.strip() == f"{log}:10: " + message.replace("%0A", "\n")


def test_step_summary_is_appended(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    r = run(str(SEED), "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 0
    text = summary.read_text()
    assert text.startswith("earlier step\n## vllm-logread: KV cache capacity\n")
    assert (
        "**37 users fit at 512+128 tokens (41 mid-answer); vLLM's 2.94x is for users who each "
        "fill 8,192 tokens**" in text
    )
    assert "| `kv_cache_dtype=fp8` | 75 | exact |" in text


def test_no_summary_without_the_variable(tmp_path: Path) -> None:
    r = run(str(SEED), "--format", "github", env={"GITHUB_STEP_SUMMARY": ""})
    assert r.exit_code == 0 and r.stdout.count("::notice") == 1


def test_markdown_for_any_ci() -> None:
    r = run(str(SEED), "--format", "markdown", "--target-users", "100")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "## vllm-logread: KV cache capacity"
    assert "| pool_vs_memory | pass |" in r.stdout
    assert "| `weights=fp8` | 111 | estimate |" in r.stdout
    assert "To serve 100 users (now 37):" in r.stdout


def test_format_json_is_the_json_report() -> None:
    a = json.loads(run(str(SEED), "--format", "json").stdout)
    b = json.loads(run(str(SEED), "--json").stdout)
    assert a == b and a["users"] == 37


def test_github_refuses_a_sweep() -> None:
    r = run(str(SEED), "--format", "github", "--prompt", "256,512")
    assert r.exit_code == 2 and "one workload" in r.stderr
