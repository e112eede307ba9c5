"""KV cache groups of different block sizes, as the log states them (issue 27 item 3),
and exit 4 only for stated figures that contradict (item 7).

sample_logs/constructed_0.33_group_sizes_16_32.log is constructed (its header says from
which vLLM 0.33 source lines): a Gemma-3-like model, 25 sliding layers of 8 KV heads and 5
full layers of 4 (tests/data/groups_16_32_config.json), head size 256, bf16. By hand:

* page of a sliding layer at 16 tokens: 16 x 2 (K, V) x 8 x 256 x 2 B = 131,072 B; of a
  full layer: 65,536 B, so vLLM scales the full layers' block size to 32 (same page).
* group size 5 (the smaller bucket): 5 sliding groups + 1 full group, block sizes
  (16, 16, 16, 16, 16, 32); the lcm 32 is the scheduler's alignment, not a group's size.
* 8.00 GiB / (131,072 B x 5 layers) = 8,589,934,592 / 655,360 = 13,107 blocks.
* a user of 512 + 128 = 640 tokens (under the 1,024 window): 5 x cdiv(640, 16) = 200
  sliding blocks + cdiv(640, 32) = 20 full blocks = 220; (13,107 - 1 null) // 220 = 59
  (59 x 220 = 12,980; 60 x 220 = 13,200 > 13,106).
* mid-answer, 512 + 64 = 576 tokens: 5 x 36 + 18 = 198; 13,106 // 198 = 66 (66 x 198 =
  13,068; 67 x 198 = 13,266).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "sample_logs" / "constructed_0.33_group_sizes_16_32.log"
CONFIG = ROOT / "tests" / "data" / "groups_16_32_config.json"
SENTENCE = "the tool does not understand this model's KV layout for vLLM 0.33.0"


def _json(*args: str) -> tuple[int, dict[str, Any]]:
    r = CliRunner().invoke(
        main, [*args, "--prompt", "512", "--output", "128", "--json"], catch_exceptions=False
    )
    return r.exit_code, json.loads(r.stdout)


def test_each_group_keeps_its_own_block_size() -> None:
    code, out = _json(str(LOG), "--config", str(CONFIG))
    assert code == 0
    assert (out["users"], out["users_mid_answer"]) == (59, 66)
    assert out["num_blocks"] == 13107 and out["block_size"] == 16
    status = {c["name"]: c["status"] for c in out["checks"]}
    assert status == {
        "max_concurrency": "pass",
        "pool_vs_memory": "pass",
        "kv_cache_groups": "pass",
    }
    groups = next(c for c in out["checks"] if c["name"] == "kv_cache_groups")
    assert "block sizes 16, 16, 16, 16, 16, 32" in groups["detail"]


def test_without_the_config_the_users_are_unknown_not_a_contradiction() -> None:
    code, out = _json(str(LOG))
    assert code == 0
    assert out["users"] is None
    assert [u["name"] for u in out["unknowns"]] == ["attention_layout"]


def test_a_layout_the_tool_gets_wrong_is_users_unknown_and_exit_0() -> None:
    # --block-size 32 makes the tool form the groups at 32 (sliding 32, full 64): its
    # layout no longer reproduces the log's (16, ..., 32). That is the tool's model, not
    # the log: exit 0, users unknown, and the sentence.
    code, out = _json(str(LOG), "--config", str(CONFIG), "--block-size", "32")
    assert code == 0
    assert out["users"] is None
    assert not any(c["status"] == "fail" for c in out["checks"])
    assert any(SENTENCE in w for w in out["warnings"])
    assert "kv_layout" in [u["name"] for u in out["unknowns"]]


# -- no shipped sample or shared real log exits 4 unless stated figures contradict

SHARED_LOGS = ROOT.parent / "shared" / "real_logs"
SAMPLE_LOGS = sorted((ROOT / "sample_logs").glob("*.log"))
REAL_LOGS = sorted(SHARED_LOGS.glob("*.log")) if SHARED_LOGS.is_dir() else []

# Logs whose own stated figures contradict each other (reviewed by hand), with why. None
# today: wrap_glued.log (two servers' records glued) is read as a layout the tool cannot
# settle, not as one boot contradicting itself.
SELF_CONTRADICTING: dict[str, str] = {}


def _exit_code(path: Path) -> int:
    r = CliRunner().invoke(main, [str(path), "--prompt", "512", "--output", "128", "--json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code


@pytest.mark.parametrize("path", SAMPLE_LOGS, ids=[p.name for p in SAMPLE_LOGS])
def test_no_sample_exits_4_unless_its_figures_contradict(path: Path) -> None:
    assert (_exit_code(path) == 4) == (path.name in SELF_CONTRADICTING)


@pytest.mark.parametrize(
    "path",
    REAL_LOGS
    or [
        pytest.param(
            None, marks=pytest.mark.skip(reason=f"no real-log corpus at {SHARED_LOGS}"), id="absent"
        )
    ],
    ids=[p.name for p in REAL_LOGS] or None,
)
def test_no_real_log_exits_4_unless_its_figures_contradict(path: Path) -> None:
    assert (_exit_code(path) == 4) == (path.name in SELF_CONTRADICTING)


def test_a_log_against_itself_still_exits_4(tmp_path: Path) -> None:
    # vLLM 0.21+ prints its pool as int(concurrency x max model len): 8,000 tokens beside
    # 2.94x at 8,192 (2.935..2.945 x 8,192 = 24,044..24,125 tokens) are two stated figures apart.
    seed = (ROOT / "sample_logs" / "seed_qwen3-8b_l4.log").read_text()
    log = tmp_path / "self.log"
    log.write_text(
        seed.replace("GPU KV cache size: 24,096 tokens", "GPU KV cache size: 8,000 tokens")
    )
    code, out = _json(str(log))
    assert code == 4
    assert next(c for c in out["checks"] if c["name"] == "max_concurrency")["status"] == "fail"
