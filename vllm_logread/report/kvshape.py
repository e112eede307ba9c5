"""The model's KV shape for ``vllm-logread kv``: its KV cache groups, the blocks a
request holds in each, and the rule behind each number, as a JSON-ready dict.

Computed here, in the report stage (the layout vLLM forms, each kind's blocks by
its spec's own rule, kv/specs.py), so render/ only words it: the notes stay typed
findings (vllm_logread/findings.py) until render/json.dumps or the text words them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from ..findings import Finding, WindowedBudgetInFlight
from ..jsontypes import JSONObject
from ..kv.groups import KVCacheGroup, KVCacheLayout, kv_cache_layout
from ..kv.specs import KVCacheSpec, KVSpec
from ..vllm.rules import DEFAULT_MAX_NUM_BATCHED_TOKENS
from ..vllm.versions import cdiv


class _SpecFields(TypedDict):
    """The spec's own figures, in vLLM's names (``_spec_fields``)."""

    model: str | None
    source: str
    architecture: str | None
    architecture_status: str
    architecture_note: str | None
    source_kind: str
    model_type: str | None
    tensor_parallel_size: int
    pipeline_parallel_size: int
    stage_layers: list[int]
    kv_cache_dtype: str
    kv_dtype: str
    dtype_bytes: int
    model_dtype: str
    num_hidden_layers: int
    layer_kinds: dict[str, int]
    num_attention_heads: int
    total_num_kv_heads: int
    num_kv_heads_per_gpu: int
    head_size: int
    kv_factor: int
    is_mla: bool
    page_bytes_per_token_per_layer: int
    kv_bytes_per_token: int
    kv_bytes_per_token_full_attention: int
    state_bytes_per_layer: int
    state_bytes_per_request: int
    is_uniform: bool


class KVGroupJSON(TypedDict):
    """One KV cache group of ``kv --json``."""

    kind: str
    num_layers: int
    num_padding_layers: int
    block_size: int
    window_tokens: int | None


class KindDecision(TypedDict):
    """One distinct spec of ``how``: its layers, page and blocks, with their rules."""

    kind: str
    spec: str
    num_layers: int
    num_groups: int
    layers: str
    block_size: int
    page_size_bytes: int
    page: str
    page_rule: str
    num_tokens: int
    blocks_per_request: int
    rule: str


class KVDecisions(TypedDict):
    """``how``: how the layout's numbers were decided (``kv_decisions``)."""

    vllm_version: str
    kinds: list[KindDecision]
    bytes_per_block: int
    bytes_per_block_rule: str
    rules: list[Finding]  # worded at the edge (render/words.py)
    is_exact: bool


class KVReport(_SpecFields):
    """``vllm-logread kv --json``'s object (``kv_report``), in its key order."""

    window_caps: JSONObject
    kv_cache_groups: list[KVGroupJSON]
    group_size: int
    block_size: int
    page_size_bytes: int
    is_hybrid_kv_cache_manager: bool
    describe: str
    notes: list[Finding]  # worded at the edge (render/words.py), as text and JSON alike
    how: KVDecisions


def kv_report(
    spec: KVSpec,
    *,
    block_size: int | None = None,
    vllm_version: str | None = None,
    num_tokens: int = 640,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
) -> KVReport:
    """The KV spec as a JSON-ready dict (``vllm-logread kv --json``).

    Includes the KV cache groups vLLM would form (its hybrid KV cache manager,
    vLLM >= 0.9.1 on CUDA/ROCm, unless ``vllm_version`` says otherwise) and
    ``how``: per kind its layers, page, the blocks a request of ``num_tokens``
    holds and the rule behind each number.
    """
    layout = kv_cache_layout(spec, block_size=block_size, vllm_version=vllm_version)
    return {
        **_spec_fields(spec),
        "window_caps": _window_caps(spec, layout),
        "kv_cache_groups": [
            {
                "kind": g.kind,
                "num_layers": g.num_layers,
                "num_padding_layers": g.num_padding_layers,
                "block_size": g.block_size,
                "window_tokens": g.window_tokens,
            }
            for g in layout.groups
        ],
        "group_size": layout.group_size,
        "block_size": layout.block_size,
        "page_size_bytes": layout.page_size_bytes,
        "is_hybrid_kv_cache_manager": layout.is_hybrid_manager,
        "describe": spec.describe(),
        "notes": list(spec.notes) + list(layout.notes),
        "how": kv_decisions(
            layout, num_tokens=num_tokens, max_num_batched_tokens=max_num_batched_tokens
        ),
    }


def _spec_fields(spec: KVSpec) -> _SpecFields:
    """The spec's own figures, in vLLM's names, in kv --json's order."""
    return {
        "model": spec.model,
        "source": spec.source,
        "architecture": spec.architecture,
        "architecture_status": spec.architecture_status,
        "architecture_note": spec.architecture_note,
        "source_kind": spec.source_kind,
        "model_type": spec.model_type,
        "tensor_parallel_size": spec.tensor_parallel_size,
        "pipeline_parallel_size": spec.pipeline_parallel_size,
        "stage_layers": list(spec.stage_layer_range),
        "kv_cache_dtype": spec.kv_cache_dtype,
        "kv_dtype": spec.kv_dtype,
        "dtype_bytes": spec.dtype_bytes,
        "model_dtype": spec.model_dtype,
        "num_hidden_layers": spec.num_hidden_layers,
        "layer_kinds": spec.layer_kind_counts,
        "num_attention_heads": spec.num_attention_heads,
        "total_num_kv_heads": spec.total_num_kv_heads,
        "num_kv_heads_per_gpu": spec.num_kv_heads,
        "head_size": spec.head_size,
        "kv_factor": spec.kv_factor,
        "is_mla": spec.is_mla,
        "page_bytes_per_token_per_layer": spec.page_bytes_per_token_per_layer,
        "kv_bytes_per_token": spec.kv_bytes_per_token,
        "kv_bytes_per_token_full_attention": spec.kv_bytes_per_token_full_attention,
        "state_bytes_per_layer": spec.state_bytes_per_layer,
        "state_bytes_per_request": spec.state_bytes_per_request,
        "is_uniform": spec.is_uniform,
    }


def _window_caps(spec: KVSpec, layout: KVCacheLayout) -> JSONObject:
    """The sliding window (and the most a sliding layer holds) and the attention chunk."""
    windows: JSONObject = {}
    if spec.sliding_window_tokens is not None:
        w = spec.sliding_window_tokens
        windows["sliding_window_tokens"] = w
        # Steady decode: a sliding layer holds at most cdiv(W - 1, bs) + 1
        # blocks (gpt-oss, W = 128: 9 blocks = 144 tokens): its spec's own peak,
        # SlidingWindowSpec.blocks_charged, at any length past the window.
        sliding = next((g for g in layout.groups if g.kind == "sliding"), None)
        windows["sliding_max_tokens_held_per_layer"] = (
            sliding.spec.blocks_charged(w + sliding.block_size) * sliding.block_size
            if sliding is not None
            else (cdiv(w - 1, layout.block_size) + 1) * layout.block_size
        )
    if spec.attention_chunk_size is not None:
        windows["attention_chunk_size"] = spec.attention_chunk_size
    return windows


# What each page formula is and the vLLM version it was read from.
_PAGE_RULES = {
    "AttentionSpec": (
        "block_size x num_kv_heads x (head_size + head_size_v) x dtype bytes, or the "
        "dtype's packed bytes per token and head (AttentionSpec.page_size_bytes, 0.31+)"
    ),
    "MLAAttentionSpec": (
        "block_size x one latent (kv_lora_rank + qk_rope_head_dim) per token, never split "
        "by TP, + the sparse indexer's keys (MLAAttention.get_kv_cache_spec, 0.31+)"
    ),
    "MambaSpec": (
        "the state tensors' bytes, padded to the attention page "
        "(MambaSpec.page_size_bytes, _align_hybrid_block_size, 0.31+)"
    ),
}


def _layers_text(indices: Sequence[int]) -> str:
    """Layer numbers for a person: a range, a stride, or the first few.

    >>> _layers_text(range(36)), _layers_text(range(3, 48, 4)), _layers_text([0, 2, 7])
    ('0-35', '3, 7, ..., 47 (every 4th)', '0, 2, 7')
    """
    idx = list(indices)
    if len(idx) > 2:
        step = idx[1] - idx[0]
        if all(b - a == step for a, b in zip(idx, idx[1:], strict=False)):
            if step == 1:
                return f"{idx[0]}-{idx[-1]}"
            return f"{idx[0]}, {idx[1]}, ..., {idx[-1]} (every {_ordinal(step)})"
    if len(idx) > 8:
        return ", ".join(str(i) for i in idx[:6]) + f", ... ({len(idx)} layers)"
    return ", ".join(str(i) for i in idx)


def _ordinal(n: int) -> str:
    return {2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def kv_decisions(
    layout: KVCacheLayout, *, num_tokens: int, max_num_batched_tokens: int
) -> KVDecisions:
    """How the layout's numbers were decided: per kind, and the rules.

    One entry per distinct spec (a kind with its window and shape): the
    layers, the page, the blocks a request of ``num_tokens`` tokens holds and
    is budgeted at the max model length, each with its rule.
    """
    by_spec: dict[KVCacheSpec, list[KVCacheGroup]] = {}
    for g in layout.groups:
        by_spec.setdefault(g.spec, []).append(g)
    kinds: list[KindDecision] = []
    for spec, groups in by_spec.items():
        layers = sorted(i for g in groups for i in g.layer_indices)
        kinds.append(
            {
                "kind": spec.kind,
                "spec": type(spec).__name__,
                "num_layers": len(layers),
                "num_groups": len(groups),
                "layers": _layers_text(layers),
                "block_size": spec.block_size,
                "page_size_bytes": spec.page_size_bytes,
                "page": spec.page_text(),
                "page_rule": _PAGE_RULES.get(type(spec).__name__, _PAGE_RULES["AttentionSpec"]),
                "num_tokens": num_tokens,
                "blocks_per_request": spec.blocks_charged(num_tokens),
                "rule": spec.rule(),
            }
        )
    version = (
        "not given: the rules of vLLM 0.30 and before where 0.31+ differ (--vllm-version)"
        if layout.vllm_version is None
        else str(layout.vllm_version)
    )
    rules = list(layout.rules)
    if layout.max_concurrent_batches > 1 and any(g.window_tokens for g in layout.groups):
        rules.append(
            WindowedBudgetInFlight(
                max_concurrent_batches=layout.max_concurrent_batches,
                max_num_batched_tokens=max_num_batched_tokens,
            )
        )
    return {
        "vllm_version": version,
        "kinds": kinds,
        "bytes_per_block": layout.bytes_per_block,
        "bytes_per_block_rule": (
            f"page {layout.page_size_bytes:,} B x {layout.layers_per_block_on_gpu} layers a "
            "block id spans on this GPU"
        ),
        "rules": rules,
        "is_exact": layout.is_exact,
    }


__all__ = ["kv_decisions", "kv_report"]
