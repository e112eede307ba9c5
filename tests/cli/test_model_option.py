"""``--model NAME`` on every command that takes ``--config``: the config found
by name as ``kv`` finds it (a path, the offline Hugging Face cache, the shipped
table), never the network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.kv.config import is_same_model

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"
PASTED = ROOT / "sample_logs" / "wrap_ansi_bare.log"  # the seed's pool lines, no model named
# Qwen/Qwen3-8B's config.json as the Hub serves it (a copy of shared/configs' file).
QWEN3_8B_CONFIG = ROOT / "tests" / "data" / "qwen3-8b_config.json"
SHARED_CONFIG = ROOT.parent / "shared" / "configs" / "Qwen--Qwen3-8B.json"


@pytest.fixture(autouse=True)
def _no_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty Hugging Face cache: the name resolves from the shipped table alone."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def users_of(*args: str) -> tuple[int | None, bool]:
    result = run("read", *args, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    return report["users"], report["is_exact"]


# The seed: 24,096 tokens = 1,506 blocks of 16; 512 + 128 - 1 = 639 tokens a user
# = 40 blocks (ceil(639 / 16)); (1,506 - 1 null block) // 40 = 37 users.
SEED_USERS = 37


def test_model_gives_the_users_of_its_config() -> None:
    assert users_of(str(SEED), "--model", "Qwen/Qwen3-8B") == (SEED_USERS, True)
    assert users_of(str(SEED), "--config", str(QWEN3_8B_CONFIG)) == (SEED_USERS, True)


@pytest.mark.skipif(not SHARED_CONFIG.is_file(), reason=f"{SHARED_CONFIG} is absent")
def test_model_equals_the_shared_config() -> None:
    by_name = users_of(str(SEED), "--model", "Qwen/Qwen3-8B")
    assert by_name == users_of(str(SEED), "--config", str(SHARED_CONFIG)) == (SEED_USERS, True)


def test_a_pasted_log_naming_no_model_is_exact_with_model() -> None:
    # Without a name the KV shape is unknown, but the paste's call sites
    # (kv_cache_utils.py:1087/:1091 under EngineCore_DP0) are vLLM 0.11.0's, before
    # 0.20.1, where 2.94x = 1,506 / 512 is plain attention's figure:
    # (1,506 - 1) // 40 = 37 users from the log alone (docs/fingerprint.md).
    assert users_of(str(PASTED)) == (SEED_USERS, True)
    # Qwen3-8B: 36 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 147,456 B a token;
    # 3.31 GiB / (147,456 x 16) = 1,505..1,507 blocks around the stated 1,506: it agrees.
    assert users_of(str(PASTED), "--model", "Qwen/Qwen3-8B") == (SEED_USERS, True)


def test_a_model_other_than_the_logs_is_said_and_wins() -> None:
    result = run("read", str(SEED), "--model", "meta-llama/Llama-3.2-1B")
    assert "--model meta-llama/Llama-3.2-1B is not the model the log names" in result.stderr
    assert "(Qwen/Qwen3-8B, line 4): --model wins" in result.stderr
    # Llama-3.2-1B's 32,768 B a token cannot give the seed's 1,506 blocks from 3.31 GiB.
    assert result.exit_code == 4


def test_the_logs_own_name_is_no_conflict() -> None:
    result = run("read", str(SEED), "--model", "qwen/qwen3-8b")
    assert result.exit_code == 0
    assert "--model" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--model", "nobody/no-such-model"), "no config for 'nobody/no-such-model'"),
        (("--model", "Qwen/Qwen3-8B", "--config", "x.json"), "one or the other"),
    ],
)
def test_model_refused_before_reading(args: tuple[str, ...], message: str) -> None:
    result = run("read", str(SEED), *args)
    assert result.exit_code == 2
    assert message in result.stderr


@pytest.mark.parametrize("command", ["read", "diff", "simulate"])
def test_every_command_with_config_takes_model(command: str) -> None:
    help_text = run(command, "--help").stdout
    assert "--config PATH" in help_text and "--model NAME" in help_text


def test_diff_and_simulate_read_the_name() -> None:
    diff = run("diff", str(PASTED), str(SEED), "--model", "Qwen/Qwen3-8B", "--json")
    assert diff.exit_code == 0, diff.output
    sim = run("simulate", str(PASTED), "--model", "Qwen/Qwen3-8B", "--users", "4", "--json")
    assert sim.exit_code == 0, sim.output


@pytest.mark.parametrize(
    ("given", "logged", "same"),
    [
        ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B", True),
        ("Qwen/Qwen3-8B", "/models/Qwen3-8B/", True),
        ("qwen/qwen3-8b", "Qwen/Qwen3-8B", True),
        ("Qwen/Qwen3-8B", "meta-llama/Llama-3.2-1B", False),
        ("Qwen/Qwen3-8B", "/models/prod-chat-v7", False),
    ],
)
def test_is_same_model(given: str, logged: str, same: bool) -> None:
    assert is_same_model(given, logged) is same
