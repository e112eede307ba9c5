"""Speculative decoding: the log's speculative config is read and charged (issue 27, item 4)."""

from __future__ import annotations

from pathlib import Path

from vllm_logread.kv.config import resolve_spec
from vllm_logread.report.exactness import lookahead_slots
from vllm_logread.report.model import Options
from vllm_logread.session.inputs import run
from vllm_logread.session.session import Session

ROOT = Path(__file__).resolve().parents[2]
POOL = (
    "(EngineCore pid=2) INFO 11-29 10:00:40 [gpu_worker.py:773] Available KV cache memory: 3.31 GiB\n"
    "(EngineCore pid=2) INFO 11-29 10:00:40 [kv_cache_utils.py:1148] GPU KV cache size: 24,096 "
    "tokens, Maximum concurrency for 8,192 tokens per request: 2.94x\n"
)


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, n: int) -> bytes:
        out, self.data = self.data[:n], self.data[n:]
        return out


def report_of(text: str):  # type: ignore[no-untyped-def]
    session = Session("-", Options(), spec_resolver=resolve_spec)
    for _ in run(session, _Bytes(text.encode())):
        pass
    return session.report_for(session.last_boot)


def args_line(spec: str) -> str:
    return (
        "(APIServer pid=1) INFO 11-29 10:00:01 [api_utils.py:265] non-default args: "
        f"{{'model': 'Qwen/Qwen3-8B', 'speculative_config': {spec}}}\n"
    )


def test_lookahead_slots_by_method() -> None:
    # vLLM 0.33's VllmConfig.num_lookahead_tokens: EAGLE-family and draft models k,
    # DFlash k + 1, n-gram and suffix 0; a method it does not know: None.
    assert [lookahead_slots(m, 3) for m in ("eagle", "eagle3", "mtp", "draft_model")] == [3] * 4
    assert lookahead_slots("dflash", 3) == 4
    assert lookahead_slots("ngram", 3) == lookahead_slots("suffix", 3) == 0
    assert lookahead_slots("medusa", 3) is None


def test_eagle3_is_a_range() -> None:
    r = report_of(
        args_line("{'method': 'eagle3', 'model': 'org/eagle3-head', 'num_speculative_tokens': 3}")
        + POOL
    )
    facts = {f.kind: f.value for f in r.boot.facts}
    assert facts["speculative_method"] == "eagle3" and facts["draft_model"] == "org/eagle3-head"
    # 24,096 / 16 = 1,506 blocks, 1,505 usable. Without the drafter: 640 tokens = 40 blocks,
    # 37 users; with 3 draft tokens and 3 lookahead slots held: cdiv(646, 16) = 41 -> 36.
    assert r.users is None and r.users_range == (36, 37)
    assert [u.name for u in r.unknowns] == ["speculative_decoding"]


def test_dflash_adds_its_bonus_slot() -> None:
    r = report_of(
        args_line("{'method': 'dflash', 'model': 'z/dflash', 'num_speculative_tokens': 8}") + POOL
    )
    # 640 + 8 draft + 9 lookahead = 657 tokens = 42 blocks: 1,505 // 42 = 35; 37 without.
    assert r.users_range == (35, 37)


def test_ngram_holds_no_drafter_kv() -> None:
    r = report_of(args_line("{'method': 'ngram', 'num_speculative_tokens': 5}") + POOL)
    assert r.users == 37 and not r.unknowns


def test_engine_config_line_states_the_drafter() -> None:
    line = (
        "(EngineCore pid=2) INFO 11-29 10:00:05 [core.py:93] Initializing a V1 LLM engine "
        "(v0.33.0) with config: model='Qwen/Qwen3-8B', speculative_config=SpeculativeConfig("
        "method='mtp', model='Qwen/Qwen3-8B', num_spec_tokens=2), tokenizer='Qwen/Qwen3-8B', "
        "max_seq_len=8192, tensor_parallel_size=1\n"
    )
    r = report_of(line + POOL)
    facts = {f.kind: f.value for f in r.boot.facts}
    assert (facts["speculative_method"], facts["num_speculative_tokens"]) == ("mtp", 2)
    # The draft model's model= is not taken for the served one.
    assert facts["model"] == "Qwen/Qwen3-8B"
    # 640 + 2 + 2 = 644 tokens = 41 blocks: 1,505 // 41 = 36 to 37.
    assert r.users_range == (36, 37)


def test_a_hybrid_with_a_drafter_is_unknown() -> None:
    # The real-shaped Qwen3-Next boot (1,659 users without a drafter) with an MTP drafter:
    # its layer joins the KV cache groups in a way the tool does not model: unknown.
    text = (ROOT / "sample_logs/hybrid_qwen3_next_80b_tp4.log").read_text(encoding="utf-8")
    text = text.replace(
        "speculative_config=None",
        "speculative_config=SpeculativeConfig("
        "method='mtp', model='Qwen/Qwen3-Next-80B-A3B-Instruct', num_spec_tokens=2)",
    )
    r = report_of(text)
    assert r.users is None and r.users_range is None
    assert [u.name for u in r.unknowns] == ["speculative_decoding"]
    assert "not known to the tool" in r.unknowns[0].why
