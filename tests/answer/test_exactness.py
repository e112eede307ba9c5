"""Exact or not: an unverified architecture gives users only as a candidate (exactness.py)."""

from __future__ import annotations

from typing import Any

from vllm_logread.kv.build import spec_from_config
from vllm_logread.kv.specs import KVSpec
from vllm_logread.report.model import Options
from vllm_logread.session.inputs import run
from vllm_logread.session.session import Session

POOL = (
    "(APIServer pid=1) INFO 11-29 10:00:01 [api_utils.py:265] non-default args: "
    "{'model': 'swiss-ai/Apertus-8B'}\n"
    "(EngineCore pid=2) INFO 11-29 10:00:40 [gpu_worker.py:773] Available KV cache memory: 3.31 GiB\n"
    "(EngineCore pid=2) INFO 11-29 10:00:40 [kv_cache_utils.py:1148] GPU KV cache size: 24,096 "
    "tokens, Maximum concurrency for 8,192 tokens per request: 2.94x\n"
)
ONE_GROUP = (
    "(EngineCore pid=2) INFO 11-29 10:00:41 [kv_cache_utils.py:1200] kv cache group sizes (16), "
    "kv lcm block sizes 16\n"
)


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, n: int) -> bytes:
        out, self.data = self.data[:n], self.data[n:]
        return out


def report_of(text: str, spec: KVSpec) -> Any:
    session = Session("-", Options(), spec_resolver=lambda *a, **k: spec)
    for _ in run(session, _Bytes(text.encode())):
        pass
    return session.report_for(session.last_boot)


def apertus(**extra: Any) -> KVSpec:
    # 36 layers x 8 KV heads x 128 x 2 x 2 B = 147,456 B a token: 3.31 GiB holds
    # 3.31 x 2^30 / (147,456 x 16) = 1,506 blocks, the pool's (the pool check passes).
    cfg = {
        "architectures": ["ApertusForCausalLM"],
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "hidden_size": 4096,
        "torch_dtype": "bfloat16",
    }
    return spec_from_config(dict(cfg, **extra), model="swiss-ai/Apertus-8B")


def test_an_unverified_architecture_is_not_exact() -> None:
    r = report_of(POOL, apertus())
    # The plain reading: 1,505 usable blocks // 40 blocks of 640 tokens = 37 users: a
    # candidate only, with the reason and what settles it.
    assert r.users is None and [u.name for u in r.unknowns] == ["architecture"]
    assert r.unknowns[0].candidates[0].startswith("37 users if the tool's reading")
    assert "no hand-worked test" in r.unknowns[0].why
    assert "not verified" in (r.kv_bytes_per_token_source or "")


def test_one_stated_kv_cache_group_settles_it() -> None:
    # vLLM says the pool is one group of 16-token blocks: plain, whatever the config says.
    assert report_of(POOL + ONE_GROUP, apertus()).users == 37


def test_a_verified_architecture_is_exact() -> None:
    r = report_of(POOL, apertus(architectures=["LlamaForCausalLM"]))
    assert r.users == 37 and not r.unknowns
