"""The summary step: which fact is the pool, block sizes, checks, what-ifs."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from vllm_logread.findings import EveryRequestOverMaxModelLen
from vllm_logread.report.build import _blocks_from_tokens
from vllm_logread.report.capacity import Workload
from vllm_logread.report.model import Options
from vllm_logread.session.inputs import run
from vllm_logread.session.session import Session


@dataclass(frozen=True)
class FakeSpec:
    """A stand-in for kvspec.KVSpec: only what report.py reads."""

    kv_bytes_per_token: int
    is_uniform: bool = True
    source: str = "test"

    def describe(self) -> str:
        return f"{self.kv_bytes_per_token:,} bytes per token"


QWEN3_8B = FakeSpec(kv_bytes_per_token=36 * 8 * 128 * 2 * 2)  # 147,456


def report_of(text: str, spec: FakeSpec | None = QWEN3_8B, **opts: object):
    session = Session(
        "-",
        Options(**opts),
        spec_resolver=(lambda *a, **k: spec) if spec else None,  # type: ignore[arg-type]
    )
    for _ in run(session, _Bytes(text.encode())):
        pass
    return session.report_for(session.last_boot)


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, n: int) -> bytes:
        out, self.data = self.data[:n], self.data[n:]
        return out


SEED = (
    "(EngineCore pid=2) INFO 11-29 10:00:40 [gpu_worker.py:773] Available KV cache memory: 3.31 GiB\n"
    "(EngineCore pid=2) INFO 11-29 10:00:40 [kv_cache_utils.py:1148] GPU KV cache size: 24,096 tokens,"
    " Maximum concurrency for 8,192 tokens per request: 2.94x\n"
)


def test_seed_gives_37_and_41_with_passing_checks() -> None:
    r = report_of(SEED)
    # 24,096 / 16 = 1,506 blocks; minus the null block 1,505; 640 tokens = 40 blocks.
    assert (r.num_blocks, r.block_size, r.users, r.users_mid_answer) == (1506, 16, 37, 41)
    assert {c.name: c.status for c in r.checks} == {
        "max_concurrency": "pass",
        "pool_vs_memory": "pass",
    }
    fp8 = next(w for w in r.what_if if w.change == "kv_cache_dtype=fp8")
    assert fp8.users == 75  # 3,012 blocks - 1 = 3,011 // 40


def test_a_wrong_model_shape_from_the_users_config_is_a_contradiction() -> None:
    # Llama-3.1-8B's 131,072 bytes per token cannot give 1,506 blocks from 3.31 GiB:
    # 3.31 GiB / (131,072 x 16) = 1,694 blocks. The user gave that config (--config).
    r = report_of(SEED, spec=FakeSpec(kv_bytes_per_token=131072), config="config.json")
    assert r.contradicts
    assert next(c for c in r.checks if c.name == "pool_vs_memory").status == "fail"


def test_a_wrong_model_shape_the_tool_found_itself_is_not_a_contradiction() -> None:
    # The same shape from the tool's own resolution (its table, the HF cache): its reading
    # of the model is what broke, not the log (issue 27): users unknown, with the sentence.
    r = report_of(SEED, spec=FakeSpec(kv_bytes_per_token=131072))
    assert not r.contradicts and r.users is None
    check = next(c for c in r.checks if c.name == "pool_vs_memory")
    assert check.status == "unknown"
    assert "the tool does not understand this model's KV layout for vLLM" in check.detail
    assert [u.name for u in r.unknowns] == ["kv_layout"]


def test_an_unnamed_unversioned_model_leaves_the_users_a_candidate() -> None:
    # No model, no version: the pool line may be vLLM 0.20.1+'s int(2.94 x 8,192),
    # which a hybrid prints too; plain attention's 37 users is a candidate only.
    r = report_of(SEED, spec=None)
    assert r.users is None and not r.contradicts
    assert r.kv_bytes_per_token is None
    [u] = r.unknowns
    assert u.name == "attention_layout" and u.candidates[0] == "plain full attention: 37 users"


def test_unknown_model_on_0_11_leaves_the_check_unknown_but_users_known() -> None:
    # vLLM 0.11 prints a hybrid's pool as blocks // groups x 16: 24,096 / 16 = 1,506
    # blocks, 1,506 / 512 = 2.94x is the plain reading's, the log's figure confirms it.
    version = "(APIServer pid=1) INFO 11-29 10:00:01 [api_server.py:1839] vLLM API server version 0.11.0\n"
    r = report_of(version + SEED, spec=None)
    assert r.users == 37
    assert not r.contradicts
    assert r.kv_bytes_per_token is None
    assert {c.name: c.status for c in r.checks}["attention_layout"] == "pass"


def test_v0_blocks_line_has_no_null_block() -> None:
    text = (
        "INFO 11-29 12:34:56 executor_base.py:110] # CUDA blocks: 1478, # CPU blocks: 2048\n"
        "INFO 11-29 12:34:56 executor_base.py:115] Maximum concurrency for 8192 tokens per request: 2.89x\n"
    )
    r = report_of(text, spec=None)
    # V0: 1,478 blocks, all usable; 1,478 // 40 = 36 (36 x 40 = 1,440).
    assert (r.engine_generation, r.num_blocks, r.users) == ("V0", 1478, 36)
    assert (
        next(c for c in r.checks if c.name == "max_concurrency").status == "pass"
    )  # 1478*16/8192 = 2.89


def test_v0_pool_smaller_than_max_model_len_serves_nobody() -> None:
    text = (
        "INFO 11-29 12:34:56 executor_base.py:110] # CUDA blocks: 1478, # CPU blocks: 2048\n"
        "INFO 11-29 12:34:56 executor_base.py:115] Maximum concurrency for 29000 tokens per request: 0.82x\n"
    )
    r = report_of(text, spec=None)
    # 1,478 x 16 = 23,648 tokens < 29,000: V0 raises after this line; 0 users.
    assert (r.num_blocks, r.users) == (1478, 0)
    assert r.failure is not None and "smaller than max model len 29,000" in r.failure.cause
    assert "--max-model-len 23648 or less" in r.failure.fix[0]  # paste-ready: no separator


def test_block_size_from_the_log_wins_over_the_default() -> None:
    text = (
        "(APIServer pid=1) INFO 11-29 10:00:01 [api_utils.py:265] non-default args: {'model': "
        "'Qwen/Qwen3-8B', 'block_size': 32}\n" + SEED
    )
    r = report_of(text, spec=None)
    # 24,096 / 32 = 753 blocks; 752 usable; 640 tokens = 20 blocks -> 37; 576 = 18 blocks -> 41.
    assert (r.block_size, r.num_blocks, r.users, r.users_mid_answer) == (32, 753, 37, 41)


def test_a_model_named_only_by_a_path_is_not_exact() -> None:
    """The issue's gated-delta-net hybrid served from a folder: its pool line reads the same
    as plain attention's, so without a config the users are not exact (exactness.py)."""
    for model, why in (
        ("/models/my-qwen3-next", "Qwen3-Next"),
        ("my-served-model", "names no family the tool knows"),
    ):
        text = (
            "(APIServer pid=1) INFO 11-29 10:00:01 [api_utils.py:265] non-default args: "
            f"{{'model': '{model}'}}\n" + SEED
        )
        r = report_of(text, spec=None)
        # The plain reading would be 1,505 usable blocks // 40 = 37 users: a candidate only.
        assert r.num_blocks == 1506 and r.users is None
        assert [u.name for u in r.unknowns] == ["attention_layout"]
        assert why in r.unknowns[0].why and "37 users" in r.unknowns[0].candidates[0]
        assert "--config" in r.unknowns[0].settle
    # A stated single KV cache group settles it: plain, 37 users.
    text = (
        "(APIServer pid=1) INFO 11-29 10:00:01 [api_utils.py:265] non-default args: "
        "{'model': '/models/my-qwen3-next'}\n" + SEED + "(EngineCore pid=2) INFO 11-29 "
        "10:00:41 [kv_cache_utils.py:1200] kv cache group sizes (16), kv lcm block sizes 16\n"
    )
    assert report_of(text, spec=None).users == 37


def test_cpu_backend_default_block_size_is_128() -> None:
    text = "INFO 11-29 10:00:40 [kv_cache_utils.py:1148] CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 2,048 tokens per request: 512.00x\n"
    r = report_of(text, spec=None)
    assert (r.device, r.block_size, r.num_blocks) == ("CPU", 128, 8192)


@pytest.mark.parametrize(
    ("tokens", "block", "max_len", "version", "blocks"),
    [
        (24096, 16, 8192, (0, 11), 1506),
        # 0.21+: int(1,506 / 513 x 8,200) = 24,072 (8,200 is not a multiple of 16)
        (24072, 16, 8200, (0, 21), 1506),
        (24072, 16, 8200, (0, 20), None),
    ],
)
def test_blocks_from_tokens(
    tokens: int, block: int, max_len: int, version: tuple[int, ...], blocks: int | None
) -> None:
    assert _blocks_from_tokens(tokens, block, max_len, version)[0] == blocks


def test_dp_engines_sum_users() -> None:
    text = (
        "(EngineCore_DP0 pid=1) INFO 11-29 10:00:40 [k.py:1] GPU KV cache size: 24,096 tokens\n"
        "(EngineCore_DP1 pid=2) INFO 11-29 10:00:40 [k.py:1] GPU KV cache size: 24,096 tokens\n"
    )
    r = report_of(text)  # the model's spec given (Qwen3-8B: plain attention)
    assert [e.users for e in r.engines] == [37, 37]
    assert r.users == 74


def test_workload_changes_users() -> None:
    r = report_of(SEED, workload=Workload(prompt_tokens=7000, output_tokens=1000))
    # 8,000 tokens = 500 blocks; 1,505 // 500 = 3.
    assert r.users == 3


def test_a_workload_over_max_model_len_gets_no_users() -> None:
    r = report_of(SEED, spec=None, workload=Workload(prompt_tokens=8000, output_tokens=1000))
    # 9,000 tokens > max_model_len 8,192: vLLM rejects every such request.
    assert r.users == 0
    assert EveryRequestOverMaxModelLen(max_model_len=8192, tokens_per_user=9000) in r.warnings


def test_negative_pool_is_never_divided() -> None:
    text = "INFO 11-29 10:00:40 [k.py:1] GPU KV cache size: -16 tokens\n"
    r = report_of(text, spec=None)
    assert r.users is None
