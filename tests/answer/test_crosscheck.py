"""--compare-metrics: the log against the same server's /metrics, figure by figure.

The real pair: sample_logs/real_vllm_0.32_qwen3-8b_load.log and the /metrics scraped from
that same server during its load (real_vllm_0.32_qwen3-8b.metrics.txt): 753 blocks of 32,
24,096 tokens, concurrency 2.94140625 (printed 2.94). Edited copies of the scrape stand
for the cases the real pair does not show; each edit is named where it is made.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "sample_logs" / "real_vllm_0.32_qwen3-8b_load.log"
METRICS = ROOT / "sample_logs" / "real_vllm_0.32_qwen3-8b.metrics.txt"
SCHEMA = json.loads((ROOT / "vllm_logread" / "data" / "report.schema.json").read_text())


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def _edited(tmp_path: Path, *edits: tuple[str, str]) -> str:
    text = METRICS.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "edited.metrics.txt"
    path.write_text(text)
    return str(path)


def test_the_real_pair_agrees_on_every_figure_both_state() -> None:
    code, out, err = _run(str(LOG), "--compare-metrics", str(METRICS), "--json")
    assert code == 0, err
    jsonschema.validate(json.loads(out), SCHEMA)
    rows = {a["name"]: a for a in json.loads(out)["metrics_crosscheck"]}
    assert rows["num_gpu_blocks"]["log"] == "753" and rows["num_gpu_blocks"]["metrics"] == "753"
    assert rows["kv_cache_size_tokens"]["status"] == "same"
    assert rows["block_size"]["log"] == "32" and rows["block_size"]["status"] == "same"
    # 2.94140625 rounds to the log's two decimals, 2.94: the same figure.
    assert rows["kv_cache_max_concurrency"]["log"] == "2.94"
    assert rows["kv_cache_max_concurrency"]["metrics"] == "2.94140625"
    assert rows["kv_cache_max_concurrency"]["status"] == "same"
    # The log states no utilization (--kv-cache-memory-bytes boots); /metrics does.
    assert rows["gpu_memory_utilization"]["status"] == "metrics only"
    assert not [a for a in rows.values() if a["status"] == "differs"]
    code, text, _ = _run(str(LOG), "--compare-metrics", str(METRICS))
    assert code == 0
    assert "== vllm-logread log vs /metrics: they agree" in text


def test_a_raised_attention_block_is_explained(tmp_path: Path) -> None:
    """A hybrid boot: the user's block size is 16, vLLM's attention groups run 32
    (published as effective_attention_block_size): the log's 32 is the one in use."""
    edited = _edited(
        tmp_path,
        # (the label after _block_size_resolved; effective_attention_block_size stays 32)
        (
            '_block_size_resolved="True",block_size="32"',
            '_block_size_resolved="True",block_size="16"',
        ),
    )
    code, out, _ = _run(str(LOG), "--compare-metrics", edited, "--json")
    assert code == 0
    rows = {a["name"]: a for a in json.loads(out)["metrics_crosscheck"]}
    assert (rows["block_size"]["log"], rows["block_size"]["metrics"]) == ("32", "16")
    assert rows["block_size"]["status"] == "differs"
    assert "raised the attention groups' to 32" in rows["block_size"]["why"]


def test_a_scrape_of_another_boot_differs_in_blocks(tmp_path: Path) -> None:
    """752 blocks in the scrape where the log states 753: another boot (a restart)."""
    edited = _edited(tmp_path, ('num_gpu_blocks="753"', 'num_gpu_blocks="752"'))
    code, text, _ = _run(str(LOG), "--compare-metrics", edited)
    assert code == 0
    assert "== vllm-logread log vs /metrics: 1 of 8 figures differ" in text
    assert "num_gpu_blocks             log 753 (line 44), /metrics 752: differs" in text
    assert "different boots" in text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--compare-metrics", "/no/such/file"], "cannot read it"),
        (["--compare-metrics", str(LOG)], "not a Prometheus /metrics text"),
    ],
    ids=["missing", "not-metrics"],
)
def test_a_bad_metrics_input_is_a_clear_error(args: list[str], needle: str) -> None:
    code, _, err = _run(str(LOG), *args)
    assert code == 2
    assert needle in err and "Traceback" not in err


def test_compare_metrics_takes_one_log() -> None:
    code, _, err = _run(str(LOG), str(LOG), "--compare-metrics", str(METRICS))
    assert code == 2 and "give one log file" in err
