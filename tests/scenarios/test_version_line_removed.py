"""A golden log with every line that states vLLM's version removed: the figures stay,
or become unknown, never another number.

Without a version line the tool reads the releases the log's own lines name
(fingerprint.version_range: the logger call sites and process labels). Where every row
of the Feature table treats those releases alike (rules.one_rule_set) and two or more
lines decided them, the pool is decoded by their rules, so the reading equals the
versioned one; otherwise the newest vLLM's rules are a candidate only, and a pool line
they cannot decode leaves the users unknown (the brief: never a wrong number).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
#: A line that states the version: the version line, the engine's config line
#: "Initializing a V1 LLM engine (v0.11.0)", "vLLM API server version 0.9.2", ...
VERSION_LINE = re.compile(
    r"vllm version|API server version|version 0\.\d|\(v0\.\d|vllm_version|version=|vLLM v?0\.\d",
    re.IGNORECASE,
)


def _goldens_with_a_version() -> list[Path]:
    out = []
    for golden in sorted(SAMPLES.glob("*.golden.json")):
        spec = json.loads(golden.read_text(encoding="utf-8"))
        log = golden.with_name(golden.name.replace(".golden.json", spec.get("log_suffix", ".log")))
        if log.suffix == ".log" and VERSION_LINE.search(log.read_text(encoding="utf-8")):
            out.append(golden)
    return out


GOLDENS = _goldens_with_a_version()


def _stripped_reading(golden: Path, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    spec = json.loads(golden.read_text(encoding="utf-8"))
    log = golden.with_name(golden.name.replace(".golden.json", ".log"))
    kept = [
        line
        for line in log.read_text(encoding="utf-8").splitlines(keepends=True)
        if not VERSION_LINE.search(line)
    ]
    stripped = tmp_path / log.name
    stripped.write_text("".join(kept), encoding="utf-8")
    result = CliRunner().invoke(main, [str(stripped), *spec.get("args", []), "--json"])
    assert "Traceback" not in result.output
    return spec["expect"], json.loads(result.stdout) if result.stdout.strip() else {}


@pytest.mark.parametrize("golden", GOLDENS, ids=[g.name for g in GOLDENS])
def test_the_users_stay_or_become_unknown(golden: Path, tmp_path: Path) -> None:
    expect, got = _stripped_reading(golden, tmp_path)
    if "users" in expect and got:
        assert got.get("users") in (expect["users"], None), (expect["users"], got.get("users"))


# The goldens' figures (reviewed by hand: each golden's "about" works them), read again
# without the version: each log's lines name one release (0.11.0 by 11 call sites and
# labels, two of these hand-written samples by weighing them; 0.32.0 by 26 to 30), whose
# rules decode the pool as the version line did.
# Before, the newest vLLM's rules read them: the 0.21+ pool line (int(concurrency x max
# len)) decodes no block count for 0.11.0's two groups (1,180,752 = 147,594 // 2 x 16).
NAMED_BY_THEIR_LINES = {
    "hybrid_gpt_oss_20b_v0_11.golden.json": 256,  # 3,012 fit, max_num_seqs 256 caps them
    "hybrid_gpt_oss_20b_l4.golden.json": 256,
    "hybrid_qwen3_next_80b_tp4.golden.json": 256,
    "real_vllm_0.32_llama-4-scout_chunked.golden.json": 16,
    "real_vllm_0.32_nemotron-h-56b_load.golden.json": 3,
    "real_vllm_0.32_nemotron-h-56b_load_64-16.golden.json": 4,
}


@pytest.mark.parametrize("name", sorted(NAMED_BY_THEIR_LINES))
def test_a_release_named_by_the_lines_reads_as_the_version_line(name: str, tmp_path: Path) -> None:
    expect, got = _stripped_reading(SAMPLES / name, tmp_path)
    assert expect["users"] == NAMED_BY_THEIR_LINES[name]
    assert got["users"] == NAMED_BY_THEIR_LINES[name]
    assert got["vllm_version"] is None  # not stated: the range is said instead
    assert got["vllm_version_range"]["num_releases"] == 1


def test_rules_that_decode_the_pool_are_the_candidates_that_survive(tmp_path: Path) -> None:
    # era_0_24_0.log (vLLM 0.24.0, Llama-3.1-8B, max len 25,000) without its two version
    # lines: its call sites allow 0.3.3 to 0.34.0 (a wide span: no one rule set). The rules
    # first tried print the pool as blocks x 16, and 454,862 tokens is no whole number of
    # 16-token blocks; the 0.21+ rules print int(max concurrency x max model len): 28,438
    # blocks / cdiv(25,000, 16) = 1,563 blocks a max-length request = 18.194... x 25,000 =
    # 454,862. Every rule set that decodes it gives (28,438 - 1 null) // 40 blocks = 710
    # users at 512 + 128, which max_num_seqs (256, not in the log) caps, as with the version.
    log = SAMPLES / "era_0_24_0.log"
    stripped = tmp_path / log.name
    stripped.write_text(
        "".join(
            line
            for line in log.read_text(encoding="utf-8").splitlines(keepends=True)
            if not VERSION_LINE.search(line)
        ),
        encoding="utf-8",
    )
    for path, version in ((log, "0.24.0"), (stripped, None)):
        result = CliRunner().invoke(main, [str(path), "--json"])
        assert result.exit_code == 0, result.output
        got = json.loads(result.stdout)
        assert (got["users"], got["num_blocks"], got["answer"]["pool_users"]) == (256, 28_438, 710)
        assert got["vllm_version"] == version
    assert any("the rules of vLLM 0.34.0" in w for w in got["warnings"])
