"""The resolver of unknowns (boot/resolve.py): candidates, pruned by every figure.

Each test reads a log of one class where the tool used to say "users unknown"
although the log's own figures decide the answer, with the arithmetic by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.boot import resolve, state
from vllm_logread.boot.fingerprint import VersionRange
from vllm_logread.boot.resolve import agreed, rule_over
from vllm_logread.cli.commands import main
from vllm_logread.report import resolved
from vllm_logread.vllm.rules import can_be_hybrid, concurrency_tells_layout

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
DATA = ROOT / "tests" / "data"


def _read(log: Path, *args: str) -> dict[str, Any]:
    r = CliRunner().invoke(main, [str(log), "--prompt", "512", "--output", "128", "--json", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def _check(out: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((c for c in out["checks"] if c["name"] == name), None)


# --------------------------------------------------------------------------- version rules


def _range(*releases: str) -> VersionRange:
    return VersionRange(releases=releases, evidence=())


def test_a_rule_applies_when_every_release_of_the_range_agrees() -> None:
    # 0.9.1 to 0.11.0 are all before 0.20.1: the concurrency tells the layout in each.
    assert rule_over(_range("0.9.1", "0.9.2", "0.10.2", "0.11.0"), concurrency_tells_layout)
    # 0.11.0 says yes, 0.24.0 says no: the range decides nothing.
    assert rule_over(_range("0.11.0", "0.24.0"), concurrency_tells_layout) is None
    assert rule_over(_range("0.24.0", "0.33.0"), concurrency_tells_layout) is False
    # No range: any release, as rules.py says of an unknown version.
    assert rule_over(None, concurrency_tells_layout) is False
    # KV cache groups exist from 0.9.1: a range of 0.8.x has none.
    assert rule_over(_range("0.8.4", "0.8.5"), lambda v: can_be_hybrid(v, "V1")) is False


def test_candidates_that_agree_are_one_value() -> None:
    assert agreed([33, 33]) == 33
    assert agreed([33, 36]) is None


# --------------------------------------------------------------------------- (1) no version line


NAMELESS = SAMPLES / "real_nameless_no_version_qwen3-14b.log"


def test_a_nameless_log_without_a_version_stays_open_over_any_release(tmp_path: Path) -> None:
    # The real paste without its call sites: nothing says its release.
    log = tmp_path / "unsited.log"
    log.write_text(re.sub(r"\[[\w.]+\.py:\d+\] ", "", NAMELESS.read_text()))
    out = _read(log)
    # Any release may be 0.20.1+, where 1.30x fits every layout: no exact users.
    assert out["users"] is None
    assert [u["name"] for u in out["unknowns"]] == ["attention_layout"]


def test_a_nameless_log_s_call_sites_give_its_release() -> None:
    # gpu_worker.py:298, kv_cache_utils.py:864 and :868 under EngineCore_DP0 are vLLM
    # 0.10.2's calls (docs/fingerprint.md): before 0.20.1, so 1.30x = 2,666 / 2,048
    # confirms plain: (2,666 - 1) // 40 = 66 users, exact.
    out = _read(NAMELESS)
    assert out["users"] == 66 and out["is_exact"] is True
    assert out["vllm_version_range"]["highest"] == "0.10.2"


def test_a_range_before_0_20_1_lets_the_concurrency_confirm_plain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = _range("0.9.2", "0.10.0", "0.10.2", "0.11.0")
    for module in (state, resolved):
        monkeypatch.setattr(module, "version_range", lambda boot: old)
    out = _read(NAMELESS)
    # 42,656 tokens / 16 = 2,666 blocks; 2,666 / cdiv(32,768, 16) = 2,666 / 2,048 = 1.30x,
    # the printed figure, which a hybrid prints otherwise in every release of the range.
    # 639 tokens = 40 blocks: (2,666 - 1 null) // 40 = 66 users, below max_num_seqs 256.
    assert out["users"] == 66 and out["is_exact"] is True
    check = _check(out, "attention_layout")
    assert check is not None and check["status"] == "pass"
    assert "1.30x (line 5)" in check["detail"] and "vLLM 0.9.2 to 0.11.0" in check["detail"]


def test_a_range_across_0_20_1_decides_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    mixed = _range("0.11.0", "0.20.1")
    for module in (state, resolved):
        monkeypatch.setattr(module, "version_range", lambda boot: mixed)
    assert _read(NAMELESS)["users"] is None


# --------------------------------------------------------------------------- (2) blocks stated


def test_blocks_pool_and_concurrency_stated_are_one_group_at_any_release() -> None:
    out = _read(SAMPLES / "constructed_cache_config_info_one_group.log")
    # 320,000 = 20,000 x 16 and 20,000 / cdiv(65,536, 16) = 20,000 / 4,096 = 4.88x:
    # (20,000 - 1 null) // 40 blocks = 499 users in the pool; max_num_seqs 256 (or 1,024 on
    # a card of 70 GiB or more: the log does not say) caps them: at least 256 run.
    assert out["answer"]["pool_users"] == 499
    assert out["users"] == 256 and out["answer"]["users_is_lower_bound"] is True
    check = _check(out, "attention_layout")
    assert check is not None and check["status"] == "pass"
    assert check["detail"] == (
        "one KV cache group: pool 320,000 = 20,000 x 16 and 4.88x = 20,000 / 4,096, lines 7, 8, 10"
    )


def test_a_pool_below_its_blocks_is_not_one_group(tmp_path: Path) -> None:
    text = (SAMPLES / "constructed_cache_config_info_one_group.log").read_text()
    # A hybrid from 0.20.1 prints less than blocks x block size: 310,000 < 320,000.
    log = tmp_path / "hybrid.log"
    log.write_text(text.replace("320,000 tokens", "310,000 tokens"))
    assert _read(log)["users"] is None


# --------------------------------------------------------------------------- (5) family guess


def test_the_figures_beat_a_family_guess() -> None:
    out = _read(SAMPLES / "constructed_granite_4_dense_v0_11.log")
    # The name says Granite 4 (hybrids), but 0.11.0 printed 2.94x = 1,506 / cdiv(8,192, 16)
    # = 1,506 / 512, plain attention's figure: (1,506 - 1) // 40 = 37 users, exact.
    assert out["users"] == 37 and out["is_exact"] is True
    check = _check(out, "attention_layout")
    assert check is not None and check["status"] == "pass"
    assert "2.94x (line 19)" in check["detail"]


# --------------------------------------------------------------------------- (6) confirmed


GEMMA = SAMPLES / "real_vllm_0.32_gemma-3-27b_cpu128.log"
GEMMA_CONFIG = DATA / "gemma3_sliding_window_pattern_config.json"


def test_an_unverified_config_the_log_confirms_is_exact() -> None:
    out = _read(GEMMA, "--config", str(GEMMA_CONFIG))
    # _sliding_window_pattern is a field the tool does not read, so its reading is not
    # verified; the log states 7 groups of 128 (line 46), 10,948 tokens and 1.34x at
    # 8,192 (line 45): the reading's 286 blocks over 7 groups reproduce them all. A user
    # of 639 tokens holds 5 blocks (full) + 6 x 5 (sliding, 1,024-token window) = 35
    # blocks: (286 - 1 null) // 35 = 8 users, exact.
    assert out["users"] == 8 and out["is_exact"] is True
    assert "confirmed by the log (lines 43, 45, 46)" in out["kv_bytes_per_token_source"]
    check = _check(out, "attention_layout")
    assert check is not None and check["status"] == "pass"


def test_an_unverified_config_without_the_log_s_groups_stays_open(tmp_path: Path) -> None:
    log = tmp_path / "no_groups_line.log"
    log.write_text(
        "".join(
            line
            for line in GEMMA.read_text().splitlines(keepends=True)
            if "kv cache group sizes" not in line
        )
    )
    out = _read(log, "--config", str(GEMMA_CONFIG))
    assert out["users"] is None
    assert [u["name"] for u in out["unknowns"]] == ["architecture"]


# --------------------------------------------------------------------------- (7) agreement


def test_block_sizes_that_give_the_same_users_are_an_answer() -> None:
    out = _read(SAMPLES / "constructed_cpu_block_sizes_agree.log")
    # 128: (166 - 1) // 5 = 33; 16: (1,328 - 1) // 40 = 33. Mid-answer (575 tokens): 128
    # gives (166 - 1) // 5 = 33, 16 gives 1,327 // 36 = 36: the least, 33, is said.
    assert out["users"] == 33 and out["is_exact"] is True
    assert out["users_mid_answer"] == 33
    assert "users_range" not in out or out["users_range"] is None
    assert "128 or 16 all reproduce" in out["block_size_source"]


def test_a_cpu_log_s_cap_over_a_range_is_each_release_s_cpu_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 0.9.2's vllm serve on CPU runs 32 sequences, 0.10.0 on 128 a rank (rules.py's
    # cpu_batch_defaults): over both releases the cap is 32 or 128, and 33 users in
    # the pool make "at least 32" (a lower bound, never 33 exact).
    span = _range("0.9.2", "0.10.0")
    for module in (state, resolved):
        monkeypatch.setattr(module, "version_range", lambda boot: span)
    out = _read(SAMPLES / "constructed_cpu_block_sizes_agree.log")
    assert out["answer"]["pool_users"] == 33
    assert out["users"] == 32 and out["answer"]["users_high"] == 33
    assert out["answer"]["users_is_lower_bound"] is True
    assert "32 or 128" in out["answer"]["max_num_seqs_source"]
    assert resolve.cpu_max_num_seqs_candidates(span, "V1", 2) == (32, 256)


LOGS = sorted(SAMPLES.glob("*.log"))
_RANGE = re.compile(r"([\d,]+) to ([\d,]+) users")


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_no_output_prints_a_range_whose_ends_are_equal(log: Path) -> None:
    base = [str(log), "--prompt", "512", "--output", "128"]
    text = CliRunner().invoke(main, base).stdout
    for low, high in _RANGE.findall(text):
        assert low != high, f"{log.name}: {low} to {high} users"
    for line in text.splitlines():
        if "not known exactly" in line:
            assert _RANGE.search(line), f"{log.name}: {line}"
    r = CliRunner().invoke(main, [*base, "--json"])
    for out in _reports(json.loads(r.stdout)):
        rng = out.get("users_range")
        assert not rng or rng[0] != rng[1], f"{log.name}: users_range {rng}"


def _reports(out: Any) -> list[dict[str, Any]]:
    if isinstance(out, dict) and isinstance(out.get("boots"), list):
        return [b for b in out["boots"] if isinstance(b, dict)]
    return [out] if isinstance(out, dict) else []


def test_kv_memory_past_80_gib_settles_the_big_card_default(tmp_path: Path) -> None:
    # Real log 052's lines (vLLM-Omni on 0.14): 100.43 GiB of KV cache per GPU and no
    # weights line. The card holds at least that, past every A100's 80 GiB, so vLLM's
    # default is 1,024 (0.14's arg_utils: 1,024 sequences on 70 GiB or more, but an
    # A100): 2,925,232 / 16 = 182,827 blocks, (182,827 - 1) // 40 = 4,570 in the pool,
    # capped at 1,024, exact (it said "256 at least": 256 or 1,024 by the card).
    log = SAMPLES / "wrap_stage.log"
    lines = [x for x in log.read_text().splitlines() if "Model loading took" not in x]
    paste = tmp_path / "no_weights.log"
    paste.write_text("\n".join(lines) + "\n")
    out = _read(paste)
    assert out["users"] == 1024 and out["is_exact"] is True
