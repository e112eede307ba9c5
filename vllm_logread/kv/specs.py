"""Model config -> KV spec: what one token (and one request) costs in vLLM's KV pool.

vLLM sizes its KV pool per GPU from the model's attention layers. This module
reads the shape offline from (a) a config.json file or folder, (b) the Hugging
Face cache (``models--ORG--NAME/snapshots/*/config.json``), or (c) the table
shipped in ``vllm_logread/data/models.json``, and computes the bytes per token
the way vLLM's ``v1/kv_cache_interface.py`` does:

* full / sliding-window / chunked-local attention: ``2 (K and V) x num_kv_heads
  per GPU x head_size x dtype bytes`` per layer; Qwen3-8B: 2 x 8 x 128 x 2 =
  4,096 B per layer, x 36 layers = 147,456 B per token.
* MLA (DeepSeek, Kimi): one latent of ``kv_lora_rank + qk_rope_head_dim`` per
  layer and no factor 2, on every GPU whatever the TP size: DeepSeek-V3,
  (512 + 64) x 2 B x 61 layers = 70,272 B per token.
* Mamba / linear attention (Gated DeltaNet): no per-token bytes, a fixed state
  per request and layer (conv + SSM tensors).

Nothing here touches the network or imports or runs code a config names
(``auto_map`` and ``trust_remote_code`` are ignored). A config that cannot be
read or modelled raises :class:`~vllm_logread.errors.ConfigError`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

# Layer kinds. "full" and "mla" keep every token at long context; "sliding"
# keeps a window, "chunked" the current chunk (Llama 4 local attention);
# "mamba" (Mamba1/Mamba2) and "linear" (Gated DeltaNet) keep a fixed state per
# request; "none" layers (Nemotron-H's MLP-only "-") keep nothing.
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


@dataclass(frozen=True, slots=True, kw_only=True)
class KVSpec:
    """The KV shape of one model as vLLM allocates it, per GPU.

    Attributes:
        model: the model name it was looked up by, if any.
        source: where the shape came from, for a person.
        source_kind: ``"config"``, ``"hf-cache"`` or ``"table"``.
        model_type: the config's (text) ``model_type``.
        layer_kinds: one kind per hidden layer of the whole model.
        layer_windows: per layer, the sliding window or chunk size in tokens
            (None for other kinds).
        num_attention_heads: query heads of the whole model.
        total_num_kv_heads: KV heads of the whole model (MLA: the query heads).
        num_kv_heads: KV heads one GPU keeps, vLLM's ``max(1, total // tp)``
            (MLA: 1).
        head_size: vLLM's head_size (MLA: ``kv_lora_rank + qk_rope_head_dim``).
        kv_factor: 2 (a K and a V vector) or 1 (MLA's single latent).
        is_mla: MLA attention.
        model_dtype: the dtype vLLM runs the model in.
        kv_cache_dtype: the ``--kv-cache-dtype`` asked for (``"auto"`` = model dtype).
        kv_dtype: the dtype the cache is stored in (``"bfloat16"``, ``"fp8"``,
            ``"fp8_ds_mla"``...).
        dtype_bytes: bytes per cache element.
        page_bytes_per_token_per_layer: one attention layer, one token, one GPU.
        tensor_parallel_size, pipeline_parallel_size: the parallel layout.
        stage_layer_range: ``[start, end)`` of the pipeline stage whose KV is
            largest (the whole model without PP).
        kv_bytes_per_token: per GPU, every attention layer of that stage
            keeping every token (sliding and chunked layers included).
        kv_bytes_per_token_full_attention: per GPU, only the full/MLA layers:
            the per-token growth when vLLM's hybrid KV cache manager caps the
            sliding and chunked layers.
        state_bytes_per_layer: Mamba/linear state of one layer for one request
            on one GPU (0 if none), unpadded.
        state_bytes_per_request: that, summed over the stage's state layers.
        is_uniform: every KV layer is the same full-attention kind, so vLLM
            forms one KV cache group and ``tokens / block_size`` is exact.
        notes: assumptions and caveats, one sentence each.
    """

    model: str | None
    source: str
    source_kind: str
    model_type: str | None
    layer_kinds: tuple[str, ...]
    layer_windows: tuple[int | None, ...]
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
    page_bytes_per_token_per_layer: int
    tensor_parallel_size: int
    pipeline_parallel_size: int
    stage_layer_range: tuple[int, int]
    kv_bytes_per_token: int
    kv_bytes_per_token_full_attention: int
    state_bytes_per_layer: int
    state_bytes_per_request: int
    is_uniform: bool
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    indexer_bytes_per_token_per_layer: int = 0
    notes: tuple[str, ...] = ()

    @property
    def num_hidden_layers(self) -> int:
        """Layers of the whole model."""
        return len(self.layer_kinds)

    @property
    def stage_layer_kinds(self) -> tuple[str, ...]:
        """Layer kinds on the GPU this spec is per (the largest PP stage)."""
        start, end = self.stage_layer_range
        return self.layer_kinds[start:end]

    @property
    def layer_kind_counts(self) -> dict[str, int]:
        """Layers of each kind in the whole model, in first-seen order."""
        return dict(Counter(self.layer_kinds))

    @property
    def sliding_window_tokens(self) -> int | None:
        """The sliding window (the largest, if layers differ), or None."""
        wins = [
            w for k, w in zip(self.layer_kinds, self.layer_windows, strict=True) if k == SLIDING
        ]
        return max((w for w in wins if w is not None), default=None)

    @property
    def attention_chunk_size(self) -> int | None:
        """Llama 4's local-attention chunk, or None."""
        wins = [
            w for k, w in zip(self.layer_kinds, self.layer_windows, strict=True) if k == CHUNKED
        ]
        return max((w for w in wins if w is not None), default=None)

    @property
    def has_state(self) -> bool:
        """The model keeps Mamba or linear-attention state."""
        return any(k in STATE_KINDS for k in self.layer_kinds)

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
        kinds = self.stage_layer_kinds
        counts = Counter(kinds)
        n_attn = sum(counts[k] for k in ATTENTION_KINDS)
        dtype_txt = f"{self.dtype_bytes} {'byte' if self.dtype_bytes == 1 else 'bytes'}"
        dtype_txt += f" ({self.kv_dtype})"
        total = f"{self.kv_bytes_per_token:,} bytes ({_kib(self.kv_bytes_per_token)}) per token"
        where = ""
        if self.tensor_parallel_size > 1 or self.pipeline_parallel_size > 1:
            where = f" per GPU at TP {self.tensor_parallel_size}"
            if self.pipeline_parallel_size > 1:
                start, end = self.stage_layer_range
                where += f", PP {self.pipeline_parallel_size} (layers {start}-{end - 1})"
        if self.is_mla:
            if self.kv_dtype == "fp8_ds_mla":
                per = f"{FP8_DS_MLA_BYTES_PER_TOKEN} bytes (fp8_ds_mla latent)"
                if self.indexer_bytes_per_token_per_layer:
                    per += f" + {self.indexer_bytes_per_token_per_layer} bytes (indexer keys)"
                head = f"{n_attn} MLA layers x {per}"
            else:
                head = (
                    f"{n_attn} MLA layers x latent {self.head_size} "
                    f"(kv_lora_rank {self.kv_lora_rank} + qk_rope_head_dim "
                    f"{self.qk_rope_head_dim}) x {dtype_txt}"
                )
                if self.indexer_bytes_per_token_per_layer:
                    head += f" + {self.indexer_bytes_per_token_per_layer} bytes (indexer keys)"
            line = f"{head} = {total}{where} (one latent per token, same on every GPU)"
        else:
            layers_txt = f"{n_attn} layers" if self.is_uniform else f"{n_attn} attention layers"
            heads = "KV head" if self.num_kv_heads == 1 else "KV heads"
            line = (
                f"{layers_txt} x {self.num_kv_heads} {heads} x head size {self.head_size} "
                f"x 2 (K and V) x {dtype_txt} = {total}{where}"
            )
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
        return line + ("; " + "; ".join(extra) if extra else "")


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


def iter_layer_kinds(spec: KVSpec) -> Iterable[tuple[int, str, int | None]]:
    """(layer index, kind, window) for every layer of the whole model."""
    return (
        (i, k, w) for i, (k, w) in enumerate(zip(spec.layer_kinds, spec.layer_windows, strict=True))
    )
