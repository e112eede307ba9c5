"""capacity: users that fit, charged the way vLLM charges a request.

Every hybrid example is worked by hand in its comments, so a changed number
has to be argued against vLLM's rules, not just re-recorded.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_logread.errors import UsageError
from vllm_logread.findings import MLABlockSizeAssumed
from vllm_logread.kv.build import spec_from_config
from vllm_logread.kv.config import resolve_spec
from vllm_logread.kv.groups import KVCacheGroup, KVCacheLayout, kv_cache_layout
from vllm_logread.kv.specs import (
    ChunkedLocalAttentionSpec,
    FullAttentionSpec,
    KVCacheSpec,
    KVSpec,
    MambaSpec,
    SlidingWindowSpec,
)
from vllm_logread.report import capacity as cap
from vllm_logread.report.capacity import Workload
from vllm_logread.vllm.versions import Version

GIB = 1 << 30


def new_kv_cache_group(
    kind: str, *, block_size: int = 16, window_tokens: int | None = None, num_layers: int = 1
) -> KVCacheGroup:
    """A one-spec group for tests (vLLM's test factories: new_kv_cache_spec)."""
    spec: KVCacheSpec
    if kind == "sliding":
        spec = SlidingWindowSpec(block_size=block_size, sliding_window=window_tokens or 1)
    elif kind == "chunked":
        spec = ChunkedLocalAttentionSpec(
            block_size=block_size, attention_chunk_size=window_tokens or 1
        )
    elif kind == "mamba":
        spec = MambaSpec(block_size=block_size, shapes=((1,),), dtypes_bytes=(2,))
    else:
        spec = FullAttentionSpec(block_size=block_size)
    return KVCacheGroup(spec=spec, num_layers=num_layers, num_padding_layers=0)


def spec(name: str, **kwargs: Any) -> KVSpec:
    found = resolve_spec(name, **kwargs)
    assert found is not None, name
    return found


# --------------------------------------------------------------------------
# The seed arithmetic (uniform model, one group)


def test_seed_qwen3_8b_l4() -> None:
    # 24,096 tokens / 16 = 1,506 blocks; 1 null block -> 1,505 usable.
    # 512 + 128 = 640 tokens = 40 blocks -> 37 users; mid-answer 576 -> 36 -> 41.
    c = cap.users_that_fit(num_blocks=1506, block_size=16, workload=Workload())
    assert (c.usable_blocks, c.blocks_per_user, c.users) == (1505, 40, 37)
    assert (c.blocks_per_user_mid, c.users_mid_answer) == (36, 41)


def test_seed_fp8_doubles_the_pool() -> None:
    # FP8 KV halves the page: 3,012 blocks -> 3,011 usable // 40 = 75 users.
    c = cap.users_that_fit(num_blocks=3012, block_size=16, workload=Workload())
    assert c.users == 75


def test_seed_through_the_spec_is_identical() -> None:
    qwen = spec("Qwen/Qwen3-8B")
    layout = kv_cache_layout(qwen)
    assert layout.is_single_full_group and layout.group_size == 36
    # 3.31 GiB // (16 x 4,096 B) // 36 layers = 1,506 blocks.
    assert cap.num_blocks_for_memory(layout, int(3.31 * GIB)) == 1506
    c = cap.users_for_spec(qwen, num_blocks=1506, workload=Workload())
    assert (c.users, c.users_mid_answer, c.num_groups, c.is_exact) == (37, 41, 1, True)


def test_v0_has_no_null_block() -> None:
    c = cap.users_for_spec(
        spec("Qwen/Qwen3-8B"), num_blocks=1506, workload=Workload(), vllm_version="0.6.3"
    )
    assert c.usable_blocks == 1506


# --------------------------------------------------------------------------
# Hybrid models, worked by hand


def test_gpt_oss_20b_two_groups() -> None:
    # 24 layers alternate sliding-128 / full: group_size = min(12, 12) = 12,
    # 2 groups, no padding. Page = 16 tokens x 2 x 8 x 64 x 2 B = 32,768 B;
    # a block id spans 12 layers = 393,216 B. 10 GiB -> 327,680 pages // 12
    # = 27,306 blocks, 27,305 usable.
    layout = kv_cache_layout(spec("openai/gpt-oss-20b"))
    assert [(g.kind, g.num_layers, g.num_padding_layers) for g in layout.groups] == [
        ("sliding", 12, 0),
        ("full", 12, 0),
    ]
    assert (layout.page_size_bytes, layout.bytes_per_block) == (32768, 393216)
    nb = cap.num_blocks_for_memory(layout, 10 * GIB)
    assert nb == 27306
    # 640 tokens: full 40 blocks. Sliding: at 640 tokens it holds
    # 40 - (640 - 128) // 16 = 8 blocks, but at 641 it holds 9 (the window
    # straddles 9 blocks), so a user is charged the peak cdiv(127, 16) + 1 = 9.
    # 49 per user -> 27,305 // 49 = 557. Mid-answer 576: 36 + 9 = 45 -> 606.
    group = layout.groups[0]
    assert (cap.blocks_held(group, 640), cap.blocks_held(group, 641)) == (8, 9)
    c = cap.users_for_layout(layout, num_blocks=nb, workload=Workload())
    assert c.blocks_per_user_by_group == (9, 40)
    assert (c.blocks_per_user, c.users, c.blocks_per_user_mid, c.users_mid_answer) == (
        49,
        557,
        45,
        606,
    )
    # Max concurrency for 131,072 tokens, 8,192 batched: full 8,192 blocks;
    # sliding cdiv(min(127 + 8,192, 131,072), 16) + 1 = 520 + 1 = 521.
    # 27,306 / 8,713 = 3.13x.
    conc = cap.max_concurrency(
        layout, num_blocks=nb, max_model_len=131072, max_num_batched_tokens=8192
    )
    assert f"{conc:.2f}" == "3.13"
    # Pool line: <= 0.20 prints 27,306 // 2 x 16 = 218,448; 0.21+ prints
    # int(3.1339 x 131,072) = 410,771.
    assert cap.pool_tokens_printed(layout, num_blocks=nb, vllm_version="0.20.0") == 218448
    assert (
        cap.pool_tokens_printed(
            layout,
            num_blocks=nb,
            vllm_version="0.21.0",
            max_model_len=131072,
            max_num_batched_tokens=8192,
        )
        == 410771
    )


def test_gpt_oss_before_the_hybrid_manager() -> None:
    # vLLM 0.9.0 unifies sliding into full: one group of 24 layers, 10 GiB ->
    # 327,680 // 24 = 13,653 blocks, 40 blocks per user -> 13,652 // 40 = 341.
    layout = kv_cache_layout(spec("openai/gpt-oss-20b"), vllm_version="0.9.0")
    assert (layout.num_groups, layout.group_size, layout.is_hybrid_manager) == (1, 24, False)
    nb = cap.num_blocks_for_memory(layout, 10 * GIB)
    c = cap.users_for_layout(layout, num_blocks=nb, workload=Workload())
    assert (nb, c.users, c.users_mid_answer) == (13653, 341, 379)
    # And the concurrency line was num_blocks x 16 / L then.
    assert cap.max_concurrency(layout, num_blocks=nb, max_model_len=131072) == nb * 16 / 131072
    forced_off = kv_cache_layout(spec("openai/gpt-oss-20b"), hybrid_kv_cache_manager=False)
    assert forced_off.num_groups == 1 and forced_off.has_null_block


def test_gemma3_27b_seven_groups_with_padding() -> None:
    # 62 layers, 5 sliding (1,024) : 1 full -> 52 sliding + 10 full.
    # group_size = min(52, 10) = 10; sliding needs cdiv(52, 10) = 6 groups
    # (layers[i::6]: four of 9 layers, two of 8 -> 8 padding layers), plus 1
    # full group = 7 groups. Page: 16 x 2 x 16 KV heads x 128 x 2 B = 131,072 B;
    # a block id spans 10 layers = 1,310,720 B.
    layout = kv_cache_layout(spec("google/gemma-3-27b-it"))
    assert layout.num_groups == 7 and layout.group_size == 10
    assert [g.num_layers for g in layout.groups] == [9, 9, 9, 9, 8, 8, 10]
    assert sum(g.num_padding_layers for g in layout.groups) == 8
    assert layout.bytes_per_block == 1310720
    # 20 GiB -> 163,840 pages // 10 = 16,384 blocks, 16,383 usable.
    nb = cap.num_blocks_for_memory(layout, 20 * GIB)
    assert nb == 16384
    # 640 tokens < window: every group holds 40 blocks -> 280 per user -> 58.
    # (Padding makes short requests cost 70 layer-pages per token, not 62.)
    c = cap.users_for_layout(layout, num_blocks=nb, workload=Workload())
    assert (c.blocks_per_user, c.users, c.blocks_per_user_mid, c.users_mid_answer) == (
        280,
        58,
        252,
        65,
    )
    # 32,768 tokens: full 2,048; each sliding group peaks at cdiv(1,023, 16) + 1
    # = 65 -> 2,048 + 6 x 65 = 2,438 per user -> 16,383 // 2,438 = 6.
    long = cap.users_for_layout(
        layout, num_blocks=nb, workload=Workload(prompt_tokens=32000, output_tokens=768)
    )
    assert (long.blocks_per_user, long.users) == (2438, 6)


def test_qwen3_next_80b_mamba_groups_tp4() -> None:
    # TP 4: 2 KV heads -> 1 per GPU: 2 x 1 x 256 x 2 B = 1,024 B per token.
    # Gated DeltaNet state per layer: conv 3 x 8,192 / 4 x 2 B + SSM
    # 32 / 4 x 128 x 128 x 2 B = 12,288 + 262,144 = 274,432 B.
    # Attention block size: 16 x cdiv(274,432, 16 x 1,024) = 16 x 17 = 272
    # tokens; page 272 x 1,024 = 278,528 B (the state padded to it).
    q = spec("Qwen/Qwen3-Next-80B-A3B-Instruct", tensor_parallel_size=4)
    assert q.state_bytes_per_layer == 274432
    layout = kv_cache_layout(q)
    assert (layout.block_size, layout.page_size_bytes) == (272, 278528)
    # 12 full + 36 linear: group_size 12 -> 1 full + 3 Mamba groups.
    assert sorted((g.kind, g.num_layers) for g in layout.groups) == [
        ("full", 12),
        ("mamba", 12),
        ("mamba", 12),
        ("mamba", 12),
    ]
    # 30 GiB // 278,528 = 115,651 pages // 12 = 9,637 blocks, 9,636 usable.
    nb = cap.num_blocks_for_memory(layout, 30 * GIB)
    assert nb == 9637
    # 640 tokens: cdiv(640, 272) = 3 attention blocks + 3 state blocks = 6
    # -> 9,636 // 6 = 1,606 users (the state, not the tokens, dominates).
    c = cap.users_for_layout(layout, num_blocks=nb, workload=Workload())
    assert (c.blocks_per_user, c.users, c.users_mid_answer) == (6, 1606, 1606)
    # With prefix caching ("align" mode) each Mamba group holds 2 blocks: 9.
    aligned = cap.users_for_layout(
        layout, num_blocks=nb, workload=Workload(), mamba_blocks_per_request=2
    )
    assert (aligned.blocks_per_user, aligned.users) == (9, 1070)
    # Max concurrency at 262,144: cdiv(262,144, 272) = 964 + 3 = 967 blocks
    # -> 9,637 / 967 = 9.97x; <= 0.20 pool line: 9,637 // 4 x 272 = 655,248.
    conc = cap.max_concurrency(layout, num_blocks=nb, max_model_len=262144)
    assert f"{conc:.2f}" == "9.97"
    assert cap.pool_tokens_printed(layout, num_blocks=nb, vllm_version="0.11.0") == 655248


def test_deepseek_v3_mla_tp8() -> None:
    # MLA keeps one 576-value latent per layer on every GPU: 61 x 1,152 B =
    # 70,272 B per token at TP 8 as at TP 1. FlashMLA blocks of 64 tokens:
    # page 64 x 1,152 = 73,728 B, x 61 layers = 4,497,408 B per block.
    ds = spec("deepseek-ai/DeepSeek-V3", tensor_parallel_size=8)
    assert ds.kv_bytes_per_token == 70272
    layout = kv_cache_layout(ds, block_size=64)
    assert layout.is_single_full_group and layout.bytes_per_block == 4497408
    # 40 GiB // 73,728 = 582,542 // 61 = 9,549 blocks, 9,548 usable.
    nb = cap.num_blocks_for_memory(layout, 40 * GIB)
    assert nb == 9549
    # 640 tokens = 10 blocks of 64 -> 954 users; 576 = 9 blocks -> 1,060.
    c = cap.users_for_layout(layout, num_blocks=nb, workload=Workload())
    assert (c.blocks_per_user, c.users, c.users_mid_answer) == (10, 954, 1060)
    base = cap.users_that_fit(num_blocks=nb, block_size=64, workload=Workload())
    assert (c.users, c.users_mid_answer) == (base.users, base.users_mid_answer)
    # No version: CacheConfig's 16 assumed, and the note says MLA backends often use 64.
    assert MLABlockSizeAssumed(block_size=16) in kv_cache_layout(ds).notes


def test_mistral_v01_one_sliding_group() -> None:
    # Every layer slides (4,096): one group of SlidingWindowSpec. A 8,192-token
    # user holds at most cdiv(4,095, 16) + 1 = 257 blocks, not 512: 10,000 // 257
    # = 38 users.
    layout = kv_cache_layout(spec("mistralai/Mistral-7B-v0.1"))
    assert [(g.kind, g.num_layers) for g in layout.groups] == [("sliding", 32)]
    c = cap.users_for_layout(
        layout, num_blocks=10001, workload=Workload(prompt_tokens=8000, output_tokens=192)
    )
    assert (c.blocks_per_user, c.users) == (257, 38)
    # Max concurrency at 32,768 with 8,192 batched: cdiv(4,095 + 8,192, 16) + 1
    # = 768 + 1 = 769 blocks, not 2,048.
    assert (
        cap.blocks_per_max_len_request(layout, max_model_len=32768, max_num_batched_tokens=8192)
        == 769
    )
    with pytest.raises(UsageError, match="max_num_batched_tokens"):
        cap.max_concurrency(layout, num_blocks=1000, max_model_len=32768)


def test_llama4_chunked_defaults_to_one_group() -> None:
    cfg = {
        "model_type": "llama4_text",
        "num_hidden_layers": 48,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "hidden_size": 5120,
        "attention_chunk_size": 8192,
    }
    llama4 = spec_from_config(cfg)
    off = kv_cache_layout(llama4)
    assert off.num_groups == 1 and not off.is_exact
    on = kv_cache_layout(llama4, hybrid_kv_cache_manager=True)
    # 36 chunked + 12 full -> group_size 12 -> 3 chunked + 1 full = 4 groups.
    assert sorted(g.kind for g in on.groups) == ["chunked", "chunked", "chunked", "full"]
    # 20,000 tokens: now in the third chunk (from 16,384) -> 1,250 - 1,024 = 226
    # blocks per chunked group, but each peaked at a full chunk, 8,192 / 16 =
    # 512 blocks; the full group holds 1,250.
    c = cap.users_for_layout(
        on, num_blocks=100001, workload=Workload(prompt_tokens=19872, output_tokens=128)
    )
    assert cap.blocks_held(on.groups[0], 20000) == 226
    assert sorted(c.blocks_per_user_by_group) == [512, 512, 512, 1250]
    # Before 0.10.1 (0.9.1-0.10.0) the hybrid manager handled chunked attention.
    assert kv_cache_layout(llama4, vllm_version="0.10.0").num_groups == 4


# --------------------------------------------------------------------------
# Decoding the pool line


def test_decode_uniform_pool_line() -> None:
    layout = kv_cache_layout(spec("Qwen/Qwen3-8B"))
    got = cap.num_blocks_from_pool_line(layout, pool_tokens=24096, vllm_version="0.11.0")
    assert got is not None and (got.low, got.high, got.is_exact) == (1506, 1506, True)
    assert cap.num_blocks_from_pool_line(layout, pool_tokens=24095, vllm_version="0.11.0") is None
    with pytest.raises(UsageError, match="0.8.0"):
        cap.num_blocks_from_pool_line(layout, pool_tokens=24096, vllm_version="0.7.3")


def test_decode_gpt_oss_120b_real_log() -> None:
    # VLLM_LINES section 5: gpt-oss-120b, 2 groups x 18, "78,384 tokens" in
    # <= 0.20 = num_blocks // 2 x 16 -> num_blocks is 9,798 or 9,799.
    layout = kv_cache_layout(spec("openai/gpt-oss-120b"))
    assert (layout.num_groups, layout.group_size) == (2, 18)
    got = cap.num_blocks_from_pool_line(layout, pool_tokens=78384, vllm_version="0.11.0")
    assert got is not None and (got.low, got.high) == (9798, 9799)
    # And "Available KV cache memory: 5.38 GiB" ([5.375, 5.385) GiB) holds
    # 9,798 blocks x 32,768 B x 18 layers = 5.3822 GiB.
    assert 5.375 <= 9798 * layout.bytes_per_block / GIB < 5.385
    assert cap.num_blocks_for_memory(layout, 9798 * layout.bytes_per_block) == 9798


def test_decode_qwen35_issue_40691() -> None:
    # vLLM issue #40691 (0.19.0, Qwen3.5): "GPU KV cache size: 290,864 tokens"
    # with "Maximum concurrency for 32,768 tokens per request: 33.04x".
    # 1 attention + 3 Mamba groups at block size 784: tokens = nb // 4 x 784
    # -> nb in [1,484, 1,487]; concurrency nb / (cdiv(32,768, 784) + 3) =
    # nb / 45 prints 33.04 only for 1,487.
    groups = tuple(
        new_kv_cache_group(k, block_size=784) for k in ("full", "mamba", "mamba", "mamba")
    )
    layout = KVCacheLayout(
        groups=groups,
        group_size=1,
        block_size=784,
        page_size_bytes=1,
        layers_per_block_on_gpu=1,
        is_hybrid_manager=True,
    )
    loose = cap.num_blocks_from_pool_line(layout, pool_tokens=290864, vllm_version="0.19.0")
    assert loose is not None and (loose.low, loose.high) == (1484, 1487)
    tight = cap.num_blocks_from_pool_line(
        layout,
        pool_tokens=290864,
        vllm_version="0.19.0",
        max_model_len=32768,
        max_concurrency_printed=33.04,
    )
    assert tight is not None and (tight.low, tight.high) == (1487, 1487)


def test_decode_0_21_concurrency_tokens() -> None:
    layout = kv_cache_layout(spec("openai/gpt-oss-20b"))
    got = cap.num_blocks_from_pool_line(
        layout,
        pool_tokens=410771,
        vllm_version="0.21.0",
        max_model_len=131072,
        max_num_batched_tokens=8192,
    )
    assert got is not None and got.low <= 27306 <= got.high


def test_max_concurrency_by_version() -> None:
    layout_new = kv_cache_layout(spec("Qwen/Qwen3-8B"))
    layout_old = kv_cache_layout(spec("Qwen/Qwen3-8B"), vllm_version="0.8.5")
    # 40,000 is not a multiple of 16: old = 1,506 x 16 / 40,000 = 0.6024;
    # 0.9.1+ = 1,506 / cdiv(40,000, 16) = 1,506 / 2,500 = 0.6024 as well; at
    # 40,001 they differ: 0.60238... vs 1,506 / 2,501 = 0.60216.
    assert cap.max_concurrency(layout_old, num_blocks=1506, max_model_len=40001) == (
        1506 * 16 / 40001
    )
    assert cap.max_concurrency(layout_new, num_blocks=1506, max_model_len=40001) == 1506 / 2501


def test_version_parse() -> None:
    assert Version.parse("0.10.1.1") == Version((0, 10, 1, 1))
    assert Version.parse("0.11.0rc2.dev5+g1234") == Version((0, 11, 0))
    assert Version.parse((0, 9, 1)) == Version((0, 9, 1))
    with pytest.raises(UsageError):
        Version.parse("nightly", strict=True)


# --------------------------------------------------------------------------
# Properties

LAYOUTS = [
    kv_cache_layout(spec(name))
    for name in (
        "Qwen/Qwen3-8B",
        "openai/gpt-oss-20b",
        "google/gemma-3-27b-it",
        "mistralai/Mistral-7B-v0.1",
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "nvidia/Nemotron-H-56B-Base-8K",
    )
] + [kv_cache_layout(spec("google/gemma-3-27b-it"), vllm_version="0.9.0")]

layouts = st.sampled_from(LAYOUTS)
workloads = st.builds(
    Workload,
    prompt_tokens=st.integers(min_value=0, max_value=200_000),
    output_tokens=st.integers(min_value=0, max_value=50_000),
)


@settings(max_examples=100, deadline=None)
@given(layout=layouts, num_blocks=st.integers(min_value=0, max_value=2_000_000), workload=workloads)
def test_users_never_exceed_the_pool(
    layout: KVCacheLayout, num_blocks: int, workload: Workload
) -> None:
    c = cap.users_for_layout(layout, num_blocks=num_blocks, workload=workload)
    assert c.users * c.blocks_per_user <= c.usable_blocks
    assert c.users_mid_answer * c.blocks_per_user_mid <= c.usable_blocks
    assert c.users_mid_answer >= c.users
    assert (c.users + 1) * c.blocks_per_user > c.usable_blocks


@settings(max_examples=100, deadline=None)
@given(
    layout=layouts,
    num_blocks=st.integers(min_value=0, max_value=2_000_000),
    tokens=st.integers(min_value=0, max_value=300_000),
    more=st.integers(min_value=0, max_value=100_000),
)
def test_users_do_not_grow_with_context(
    layout: KVCacheLayout, num_blocks: int, tokens: int, more: int
) -> None:
    short = cap.users_for_layout(
        layout, num_blocks=num_blocks, workload=Workload(prompt_tokens=tokens, output_tokens=0)
    )
    long = cap.users_for_layout(
        layout,
        num_blocks=num_blocks,
        workload=Workload(prompt_tokens=tokens + more, output_tokens=0),
    )
    assert long.users <= short.users


@settings(max_examples=100, deadline=None)
@given(
    num_blocks=st.integers(min_value=0, max_value=5_000_000),
    block_size=st.sampled_from([1, 16, 32, 64, 128]),
    workload=workloads,
)
def test_one_full_group_is_users_that_fit(
    num_blocks: int, block_size: int, workload: Workload
) -> None:
    layout = kv_cache_layout(spec("Qwen/Qwen3-8B"), block_size=block_size)
    a = cap.users_for_layout(layout, num_blocks=num_blocks, workload=workload)
    b = cap.users_that_fit(num_blocks=num_blocks, block_size=block_size, workload=workload)
    assert (a.users, a.users_mid_answer, a.blocks_per_user) == (
        b.users,
        b.users_mid_answer,
        b.blocks_per_user,
    )


@settings(max_examples=100, deadline=None)
@given(
    layout=layouts,
    num_blocks=st.integers(min_value=1, max_value=2_000_000),
    version=st.sampled_from(["0.11.0", "0.19.0", "0.21.0", "0.27.0"]),
    max_model_len=st.integers(min_value=1024, max_value=262_144),
)
def test_pool_line_round_trip(
    layout: KVCacheLayout, num_blocks: int, version: str, max_model_len: int
) -> None:
    kwargs: dict[str, Any] = {"max_model_len": max_model_len, "max_num_batched_tokens": 8192}
    tokens = cap.pool_tokens_printed(layout, num_blocks=num_blocks, vllm_version=version, **kwargs)
    conc = cap.max_concurrency(layout, num_blocks=num_blocks, vllm_version=version, **kwargs)
    got = cap.num_blocks_from_pool_line(
        layout,
        pool_tokens=tokens,
        vllm_version=version,
        max_concurrency_printed=float(f"{conc:.2f}"),
        **kwargs,
    )
    assert got is not None and got.low <= num_blocks <= got.high


@settings(max_examples=100, deadline=None)
@given(
    kind=st.sampled_from(["sliding", "chunked", "full"]),
    block_size=st.sampled_from([1, 3, 16, 32]),
    window=st.integers(min_value=1, max_value=300),
    tokens=st.integers(min_value=0, max_value=2000),
)
def test_blocks_charged_is_the_peak_held(
    kind: str, block_size: int, window: int, tokens: int
) -> None:
    group = new_kv_cache_group(kind, block_size=block_size, window_tokens=window)
    peak = max(cap.blocks_held(group, n) for n in range(tokens + 1))
    assert cap.blocks_charged(group, tokens) == peak
