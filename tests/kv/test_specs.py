"""kv/specs.py: one spec class per attention kind, each with a hand-worked number."""

from __future__ import annotations

import pytest

from vllm_logread.kv.specs import (
    ChunkedLocalAttentionSpec,
    CrossAttentionSpec,
    EncoderOnlyAttentionSpec,
    FullAttentionSpec,
    MambaSpec,
    MLAAttentionSpec,
    SinkFullAttentionSpec,
    SlidingWindowSpec,
)


def test_full_attention_qwen3_8b() -> None:
    # Qwen3-8B, bf16, TP 1, block 16: 16 x 8 KV heads x (128 + 128) x 2 B
    # = 65,536 B per layer. 640 tokens: cdiv(640, 16) = 40 blocks; 641: 41.
    spec = FullAttentionSpec(num_kv_heads=8, head_size=128, head_size_v=128, dtype_bytes=2)
    assert spec.page_size_bytes == 65536
    assert spec.page_bytes_per_token == 4096
    assert (spec.blocks_held(640), spec.blocks_held(641), spec.blocks_charged(640)) == (40, 41, 40)
    # Max model len 40,960: cdiv(40,960, 16) = 2,560 blocks whatever is in flight.
    assert spec.blocks_at_max_len(40960, max_in_flight_tokens=None) == 2560
    assert spec.kind == "full" and spec.group_kind == "full"


def test_full_attention_value_head_size() -> None:
    # MiMo-V2-Flash-style head_size 192, head_size_v 128, 4 KV heads, bf16:
    # 16 x 4 x (192 + 128) x 2 B = 40,960 B (not 16 x 4 x 2 x 192 x 2 = 49,152).
    spec = FullAttentionSpec(num_kv_heads=4, head_size=192, head_size_v=128, dtype_bytes=2)
    assert spec.page_size_bytes == 40960


def test_full_attention_packed_dtype() -> None:
    # int8_per_token_head: (128 + 128) x 1 B + 8 B of fp32 scales = 264 B a head;
    # 8 heads x 264 = 2,112 B a token; x 16 = 33,792 B a block.
    spec = FullAttentionSpec(
        num_kv_heads=8, dtype="int8_per_token_head", dtype_bytes=1, state_content_bytes=264
    )
    assert (spec.page_bytes_per_token, spec.page_size_bytes) == (2112, 33792)


def test_sink_full_attention_is_charged_as_full() -> None:
    # Sink attention keeps its sink blocks inside the full context:
    # 1,000 tokens at block 16 -> cdiv(1,000, 16) = 63 blocks.
    spec = SinkFullAttentionSpec(sink_len=64)
    assert spec.blocks_charged(1000) == 63
    assert spec.page_size_bytes == FullAttentionSpec().page_size_bytes


def test_mla_dense_deepseek_v3() -> None:
    # DeepSeek-V3 bf16: latent 512 + 64 = 576 x 2 B = 1,152 B a token, one head
    # on every GPU; FlashMLA block 64: 64 x 1,152 = 73,728 B per layer.
    spec = MLAAttentionSpec(block_size=64, head_size=576, dtype_bytes=2)
    assert spec.page_bytes_per_token == 1152
    assert spec.page_size_bytes == 73728
    # 32,768 tokens: cdiv(32,768, 64) = 512 blocks, as full attention.
    assert spec.blocks_charged(32768) == 512
    assert spec.kind == "mla" and spec.group_kind == "full" and not spec.is_sparse


def test_mla_sparse_with_indexer_deepseek_v32() -> None:
    # DeepSeek-V3.2 fp8: fp8_ds_mla latent 656 B + indexer 128 + 128 / 128 x 4 =
    # 132 B a token; block 64: 64 x 788 = 50,432 B per layer (the audit's figure).
    spec = MLAAttentionSpec(
        block_size=64,
        dtype="fp8_ds_mla",
        dtype_bytes=1,
        state_content_bytes=656,
        indexer_bytes_per_token=132,
    )
    assert spec.page_bytes_per_token == 788
    assert spec.page_size_bytes == 50432
    assert spec.is_sparse


def test_sliding_window_gpt_oss() -> None:
    # gpt-oss, W = 128, block 16: at 640 tokens 40 - (640 - 128) // 16 = 8
    # blocks are held, at 641 9; a user is charged the peak cdiv(127, 16) + 1 = 9.
    spec = SlidingWindowSpec(sliding_window=128, num_kv_heads=8, head_size=64, head_size_v=64)
    assert (spec.blocks_held(640), spec.blocks_held(641)) == (8, 9)
    assert spec.blocks_charged(640) == 9
    assert spec.blocks_charged(100) == 7  # shorter than the window: cdiv(100, 16)
    # Max model len 131,072: cdiv(min(127 + 8,192, 131,072), 16) + 1 = 520 + 1 =
    # 521 with 8,192 in flight; 0.31's async scheduling doubles it to 16,384:
    # cdiv(127 + 16,384, 16) + 1 = 1,032 + 1 = 1,033.
    assert spec.blocks_at_max_len(131072, max_in_flight_tokens=8192) == 521
    assert spec.blocks_at_max_len(131072, max_in_flight_tokens=16384) == 1033
    with pytest.raises(ValueError, match="in-flight"):
        spec.blocks_at_max_len(131072, max_in_flight_tokens=None)


def test_sliding_window_extra_retained_tokens() -> None:
    # EAGLE lookahead keeps 1 more token: cdiv(min(4,095 + 1 + 2,048, 32,768), 16)
    # + 1 = cdiv(6,144, 16) + 1 = 384 + 1 = 385.
    spec = SlidingWindowSpec(sliding_window=4096, extra_retained_tokens=1)
    assert spec.blocks_at_max_len(32768, max_in_flight_tokens=2048) == 385


def test_chunked_local_llama4() -> None:
    # Llama 4, C = 8,192, block 16: 20,000 tokens are in the third chunk (from
    # 16,384): cdiv(20,000, 16) - 16,384 / 16 = 1,250 - 1,024 = 226 blocks held,
    # but a user peaked at a whole chunk: 8,192 / 16 = 512.
    spec = ChunkedLocalAttentionSpec(attention_chunk_size=8192)
    assert spec.blocks_held(20000) == 226
    assert spec.blocks_charged(20000) == 512
    # Max model len 131,072 with 8,192 in flight: cdiv(min(8,192 + 8,192, L), 16)
    # = 1,024 (no + 1: a chunk starts on a block boundary).
    assert spec.blocks_at_max_len(131072, max_in_flight_tokens=8192) == 1024


def test_mamba_gated_delta_net_qwen3_next() -> None:
    # Qwen3-Next-80B, TP 1, bf16: conv 3 x 8,192 x 2 B = 49,152; SSM 32 x 128 x
    # 128 x 2 B = 1,048,576; 1,097,728 B a layer, padded to the 544-token
    # attention page 544 x 2 x 512 x 2 = 1,114,112 B.
    state = MambaSpec(
        shapes=((3, 8192), (32, 128, 128)), dtypes_bytes=(2, 2), mamba_type="gated_delta_net"
    )
    assert state.state_bytes == state.page_size_bytes == 1097728
    padded = MambaSpec(
        shapes=state.shapes,
        dtypes_bytes=state.dtypes_bytes,
        mamba_type="gated_delta_net",
        page_size_padded=1114112,
    )
    assert (padded.state_bytes, padded.page_size_bytes) == (1097728, 1114112)
    assert state.kind == "linear" and state.group_kind == "mamba"
    # Mode none: 1 page whatever the length. Align keeps 1 too (block 16: 100 tokens = 7
    # blocks, the first 6 null or freed), is budgeted 2 at max len, and holds 2 for the
    # one step that crosses a state block; align + 1 speculative: one more each.
    assert state.blocks_charged(100_000) == 1
    align = MambaSpec(mamba_type="gated_delta_net", mamba_cache_mode="align")
    assert align.blocks_charged(100) == align.blocks_held(100) == 1
    assert align.blocks_at_max_len(262144, max_in_flight_tokens=None) == 2
    assert align.blocks_charged(5) == align.blocks_held(5) == 1
    spec1 = MambaSpec(mamba_cache_mode="align", num_speculative_blocks=1)
    assert (spec1.blocks_charged(100), spec1.blocks_charged(5)) == (2, 2)
    # Peak: a 100-token prompt in one step, 119 held: cdiv(100, 16) = 7 < cdiv(119, 16) =
    # 8, the answer crosses into block 8 -> 2 pages for that step. 112 held: 7 = 7 -> 1.
    # A 64-token first step of the 100-token prompt: cdiv(64, 16) = 4 < 7 -> 2. Inside one
    # block (10 + 5): 1 whatever the first step. First step unknown past a block: None.
    assert align.peak_pages(prompt_tokens=100, tokens_held=119, first_step_tokens=100) == 2
    assert align.peak_pages(prompt_tokens=100, tokens_held=112, first_step_tokens=2048) == 1
    assert align.peak_pages(prompt_tokens=100, tokens_held=112, first_step_tokens=64) == 2
    assert align.peak_pages(prompt_tokens=10, tokens_held=14, first_step_tokens=None) == 1
    assert align.peak_pages(prompt_tokens=100, tokens_held=112, first_step_tokens=None) is None
    assert state.peak_pages(prompt_tokens=100, tokens_held=119, first_step_tokens=None) == 1


def test_mamba2_checkpoint_page_nemotron_h() -> None:
    # Nemotron-H-56B, TP 1, bf16: conv 3 x (16,384 + 2 x 8 x 256 = 20,480) x 2 B
    # = 122,880; SSM 256 x 64 x 256 x 2 B = 8,388,608 -> 8,511,488 B. From 0.32
    # a Mamba2 layer in align mode holds 2 + 1 checkpoint = 3 pages.
    state = MambaSpec(
        shapes=((3, 20480), (256, 64, 256)),
        dtypes_bytes=(2, 2),
        mamba_type="mamba2",
        mamba_cache_mode="align",
        num_prefill_checkpoint_blocks=1,
    )
    assert state.state_bytes == 8511488
    # 1 page kept whatever the length; the budget at max len 2 + 1 checkpoint = 3. A
    # prompt of 100 tokens (7 blocks of 16) in one step holds the checkpoint page too:
    # 1 + 1 = 2; the answer crossing into block 8 (119 held) is another step: 2. In two
    # steps (64 + 36): the second starts past 0 and enters block 7 past cdiv(64, 16) = 4,
    # and is the prompt's last: 1 + 1 + 1 checkpoint = 3.
    assert (state.blocks_charged(100_000), state.blocks_held(100_000)) == (1, 1)
    assert state.blocks_at_max_len(8192, max_in_flight_tokens=None) == 3
    assert state.peak_pages(prompt_tokens=100, tokens_held=112, first_step_tokens=100) == 2
    assert state.peak_pages(prompt_tokens=100, tokens_held=119, first_step_tokens=100) == 2
    assert state.peak_pages(prompt_tokens=100, tokens_held=119, first_step_tokens=64) == 3
    assert state.peak_pages(prompt_tokens=10, tokens_held=14, first_step_tokens=None) == 1
    assert state.blocks_charged(1) == state.blocks_held(1) == 1
    assert state.kind == "mamba"


def test_mamba1_jamba_and_mode_all() -> None:
    # Jamba-v0.1 TP 1 bf16: inner 2 x 4,096 = 8,192; conv 3 x 8,192 x 2 B = 49,152;
    # SSM 8,192 x 16 x 2 B = 262,144 -> 311,296 B. Mode "all" (0.31 only) at
    # mamba block 1,024: a 5,000-token request holds cdiv(5,000, 1,024) = 5 pages.
    state = MambaSpec(
        block_size=1024,
        shapes=((3, 8192), (8192, 16)),
        dtypes_bytes=(2, 2),
        mamba_type="mamba1",
        mamba_cache_mode="all",
    )
    assert state.state_bytes == 311296
    assert state.blocks_charged(5000) == 5
    assert state.blocks_at_max_len(262144, max_in_flight_tokens=None) == 256


def test_linear_attention_minimax_and_kda_kinds() -> None:
    # MiniMax linear attention: one (heads / tp, d, d) state; 64 heads / 8 x 128 x
    # 128 x 2 B = 262,144 B a layer at TP 8.
    minimax = MambaSpec(shapes=((8, 128, 128),), dtypes_bytes=(2,), mamba_type="linear_attention")
    assert minimax.page_size_bytes == 262144
    kda = MambaSpec(shapes=((3, 96), (2, 128, 128)), dtypes_bytes=(2, 4), mamba_type="kda")
    # KDA: conv 3 x 96 x 2 B = 576 + recurrent fp32 2 x 128 x 128 x 4 B = 131,072.
    assert kda.page_size_bytes == 131648
    assert minimax.kind == kda.kind == "linear"


def test_cross_attention_and_encoder_only() -> None:
    # Whisper-style cross-attention: the encoder's 1,500 tokens at block 16:
    # cdiv(1,500, 16) = 94 blocks whatever the decoder length.
    cross = CrossAttentionSpec(max_num_encoder_input_tokens=1500)
    assert cross.blocks_charged(10) == cross.blocks_at_max_len(448, max_in_flight_tokens=None) == 94
    enc = EncoderOnlyAttentionSpec()
    assert (enc.page_size_bytes, enc.blocks_charged(1000)) == (0, 0)


def test_with_block_size_scales_the_page() -> None:
    # Page-size unification doubles a layer's block: 32 x 8 x 256 x 2 = 131,072 B.
    spec = FullAttentionSpec(num_kv_heads=8).with_block_size(32)
    assert spec.page_size_bytes == 131072 and spec.blocks_charged(640) == 20
