"""Review of main (one answer, options across commands, the registry): inputs a
user can type that ended in a traceback, each now a usage error (exit 2) with a
readable line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
SEED = str(SAMPLES / "seed_qwen3-8b_l4.log")


@pytest.mark.parametrize("value", ["1e308", "inf", "nan", "1e6"])
@pytest.mark.parametrize(
    "args",
    [
        ["kv", "Qwen/Qwen3-8B"],
        ["read", SEED],
    ],
)
def test_gpu_memory_gib_not_a_card_is_a_usage_error(args: list[str], value: str) -> None:
    # 1e308 GiB x 2**30 B overflows a float to inf, which int() refuses;
    # nan passes click's FloatRange (every comparison with nan is False).
    # --what-if gpu_memory_gib=N already takes only 0 < N < 100,000 GiB: the
    # option takes the same cards.
    r = CliRunner().invoke(main, [*args, "--gpu-memory-gib", value])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "--gpu-memory-gib" in r.output


@pytest.mark.parametrize("value", ["1e300", "inf", "nan", "1e6"])
def test_kv_weights_gib_beyond_any_card_is_a_usage_error(value: str) -> None:
    # --weights-gib 1e300: 1e300 x 2**30 B is inf bytes; available = requested
    # - weights = -inf, and int(-inf) raised OverflowError.
    r = CliRunner().invoke(main, ["kv", "Qwen/Qwen3-8B", "--gpu", "L4", "--weights-gib", value])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "--weights-gib" in r.output


def test_kv_weights_gib_of_a_big_model_still_answers() -> None:
    # 70 GiB of weights on an L4 (22.05 GiB): a boot that would fail, said so
    # (exit 0: kv plans, it reads no log).
    r = CliRunner().invoke(main, ["kv", "Qwen/Qwen3-8B", "--gpu", "L4", "--weights-gib", "70"])
    assert r.exit_code == 0, r.output
    assert "would fail" in r.output
