"""The KV pool and the users before the boot: ``vllm-logread kv MODEL --gpu NAME``.

vLLM sizes its pool per GPU as (vLLM 0.21+, ``gpu_worker.determine_available_memory``)::

    KV bytes = total x gpu_memory_utilization
               - weights - non-torch memory - activation peak - CUDA graph memory

then ``num_blocks = KV bytes // page_size // layers sharing a block`` group by
group (capacity.num_blocks_for_memory), and the users that fit follow from the
blocks as in a boot report (capacity.users_for_layout), capped by max_num_seqs.
Before 0.21 vLLM did not take the CUDA graphs from that budget (they came out
of the 1 - utilization headroom), so the estimate leaves them out there.

Only the GPU's total (data/gpus.json), the utilization and the page size are
vLLM's own figures. The weights are counted from the config (kv/weights.py)
or taken from the table; the other three are **estimates** fitted to the
boot logs that print them (a corpus of real logs and sample_logs), each with
its spread, so the pool comes as a range, the boot log's figures replacing
every estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, TypedDict, TypeGuard, cast

from ..boot.state import Sourced, SourceKind
from ..errors import LogReadError, UsageError
from ..findings import Finding, WindowedPoolLineNeedsBatchedTokens
from ..jsontypes import JSONObject, JSONValue
from ..kv.config import (
    TABLE_SOURCE,
    checkpoint_total_bytes,
    config_for_argument,
    spec_for_argument,
    table_weights,
)
from ..kv.groups import KVCacheLayout, kv_cache_layout
from ..kv.specs import KVSpec
from ..kv.weights import (
    DTYPE_BYTES,
    MULTIMODAL_TYPES,
    count_parameters,
    model_dtype,
    other_towers,
    quantization_of,
)
from ..vllm.rules import (
    ESTIMATE_VERSION,
    MAX_MODEL_LEN_WITHOUT_CONFIG_LENGTH,
    Feature,
    default_generation,
    default_max_num_batched_tokens,
    default_max_num_seqs,
    default_utilization,
    is_big_gpu,
    supports,
)
from ..vllm.versions import Version
from .budget import MemoryBudget
from .capacity import (
    Capacity,
    Workload,
    blocks_per_max_len_request,
    num_blocks_for_memory,
    pool_tokens_printed,
    users_for_layout,
)
from .gpus import MAX_GPU_GIB, Gpu, find_gpu

GIB = 1 << 30

#: Whether one request of max_model_len boots: at every end of the estimate
#: ("yes"), unless the profile takes far more than any text model's ("likely"),
#: at some ends only ("maybe"), at none ("no"), or not estimated ("unknown").
MaxLenFits = Literal["yes", "likely", "maybe", "no", "unknown"]

#: The real logs load 0.0-0.6% more than the parameters x dtype bytes counted
#: here (rotary caches and buffers): Qwen3-8B counts 15.256 GiB, loads 15.2683;
#: Llama-3.1-8B 14.957, loads 14.9575-14.9889; Llama-3.3-70B TP 4 32.854,
#: loads 32.889; Qwen2.5-7B 14.185, loads 14.2487 (+0.45%); Gemma 3 27B with
#: its vision tower 51.09, loads 51.3795 (+0.57%).
WEIGHTS_SPREAD = 0.01
#: The typical excess, for the central figure (Qwen3-8B +0.08%, Llama-3.1-8B
#: +0.0/+0.2%, Llama-3.3-70B +0.1%).
WEIGHTS_CENTRAL = 0.002


class TableWeights(TypedDict, total=False):
    """An entry's ``weights`` fields in data/models.json (kv.config.table_weights):
    what real boots loaded per GPU at a TP, or the model card's parameters."""

    loaded_gib: list[float]  # [low, high] per GPU
    loaded_tensor_parallel_size: int
    num_parameters: list[int]  # [low, high]
    extra_parameters: int  # a tower the config does not count
    extra_parameters_source: str
    quantization: str
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    """One memory figure per GPU, in GiB: a central value, its range, where it comes from.

    ``high_gib`` None means no upper bound can be given (a multimodal or Mamba
    model's profile can take far more than any text model's).
    """

    name: str
    gib: float
    low_gib: float
    high_gib: float | None
    source: str
    is_estimate: bool = True
    replaced_by: str = ""
    brief: str = ""

    def to_json(self) -> JSONObject:
        return {
            "name": self.name,
            "gib": round(self.gib, 4),
            "low_gib": round(self.low_gib, 4),
            "high_gib": None if self.high_gib is None else round(self.high_gib, 4),
            "is_estimate": self.is_estimate,
            "source": self.source,
            "brief": self.brief,
            "replaced_by": self.replaced_by,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightsBasis:
    """The whole model's weight bytes (all GPUs), a range, and the arithmetic."""

    low_bytes: float
    high_bytes: float
    how: str
    num_params: int | None = None
    central_bytes: float | None = None
    replicated_bytes: float = 0.0
    brief: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """The pool and users for one KV budget (central, or an end of the range)."""

    available_kv_bytes: int
    num_blocks: int
    pool_tokens: int | None
    capacity: Capacity | None
    users: int | None

    def to_json(self) -> JSONObject:
        c = self.capacity
        return {
            "available_kv_gib": round(self.available_kv_bytes / GIB, 4),
            "num_blocks": self.num_blocks,
            "pool_tokens": self.pool_tokens,
            "blocks_per_user": None if c is None else c.blocks_per_user,
            "users_by_blocks": None if c is None else c.users,
            "users": self.users,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class BootEstimate:
    """What a boot of ``model`` on ``gpu`` would print, estimated; see the module doc."""

    model: str
    gpu: Gpu
    vllm_version: str
    tensor_parallel_size: int
    gpu_memory_utilization: float
    utilization_source: str
    requested_gib: float
    weights: Figure | None
    overheads: tuple[Figure, ...]
    layout: KVCacheLayout
    block_size: int
    workload: Workload
    max_model_len: int
    max_model_len_source: str
    max_num_seqs: int
    max_num_seqs_source: str
    max_num_batched_tokens: int
    central: Outcome | None
    best: Outcome | None
    worst: Outcome | None
    max_len_blocks: int
    max_len_fits: MaxLenFits
    max_len_message: str
    estimated_max_model_len: int | None
    unknown: str = ""
    notes: tuple[Finding, ...] = field(default_factory=tuple)
    suggestion: str = ""

    @property
    def users(self) -> int | None:
        return None if self.central is None else self.central.users

    @property
    def prints_blocks(self) -> bool:
        """The boot prints "# GPU blocks: N" (vLLM before 0.8), not a token count."""
        return _prints_blocks(self.vllm_version)


def _gib_range(low: float, high: float | None, digits: int = 2) -> str:
    if high is None:
        return f"at least {low:.{digits}f} GiB"
    if round(low, digits) == round(high, digits):
        return f"{low:.{digits}f} GiB"
    return f"{low:.{digits}f}-{high:.{digits}f} GiB"


def _compressed_tensors_bits(qcfg: Mapping[str, JSONValue]) -> tuple[int, int] | None:
    """(bits, group size) of a compressed-tensors config's weights, when every
    config group agrees; None otherwise.

    The group size is 0 for the "channel" and "tensor" strategies: one scale
    an output channel or a tensor, no groups (W8A8 INT8 and FP8-dynamic
    checkpoints scale by channel, static FP8 by tensor). "group" and
    "tensor_group" (NVFP4's: groups under one per-tensor scale) need a
    positive group_size: compressed-tensors itself rejects one without
    (source only, compressed-tensors 0.20.1). Other strategies ("block", a
    missing one) are not read: None.
    """
    groups = qcfg.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        return None
    found = set()
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, Mapping) else None
        if not isinstance(weights, Mapping):
            return None
        bits = weights.get("num_bits")
        if not _is_count(bits):
            return None
        size = _ct_group_size(weights)
        if size is None:
            return None
        found.add((int(bits), size))
    return found.pop() if len(found) == 1 else None


def _ct_group_size(weights: Mapping[str, JSONValue]) -> int | None:
    """A compressed-tensors weights scheme's group size, 0 for "channel" and
    "tensor"; None when the strategy is another or the group size is no count."""
    strategy = weights.get("strategy")
    if strategy in ("channel", "tensor"):
        return 0
    size = weights.get("group_size")
    return size if strategy in ("group", "tensor_group") and _is_count(size) else None


def _served(dtype: str) -> str:
    """The dtype as vLLM serves it: a float32 config in 16 bits (2 B, as counted).

    >>> _served("float32"), _served("bfloat16")
    ('float32 served in 16 bits', 'bfloat16')
    """
    return f"{dtype} served in 16 bits" if dtype in ("float32", "float") else dtype


def _is_count(value: object) -> TypeGuard[int]:
    """A positive int of a plausible size (a config's bits or group size), not a bool."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 20


def _is_group_size(value: object) -> TypeGuard[int]:
    """A count, or GPTQ's -1 (one group per output channel)."""
    return value == -1 or _is_count(value)


def _is_nvfp4(method: str, qcfg: Mapping[str, JSONValue]) -> bool:
    """NVFP4 weights: modelopt's ``quant_algo: NVFP4`` or compressed-tensors'
    nvfp4-pack-quantized format (4-bit floats, an FP8 scale per 16)."""
    if method in ("modelopt", "modelopt_fp4"):
        return str(qcfg.get("quant_algo") or "").upper() == "NVFP4" or method == "modelopt_fp4"
    if method == "compressed-tensors":
        return "nvfp4" in str(qcfg.get("format") or "").lower()
    return False


@dataclass(frozen=True, slots=True, kw_only=True)
class _Params:
    """The model's parameters (a range from a model card's total), and how they were found."""

    low: int
    high: int
    num_embedding: int
    num_replicated: int
    how: str
    is_counted: bool  # counted from the config (else the model card's total)
    num_routed_expert: int = 0  # kv/weights.ParamCount.num_routed_expert_params


@dataclass(frozen=True, slots=True, kw_only=True)
class _Bytes:
    """The parameters' bytes at the weights' dtype or quantization, and how."""

    low_bytes: float
    high_bytes: float
    replicated_bytes: float
    how: str


def _loaded(extra: TableWeights) -> WeightsBasis | None:
    """What real boots loaded, when the table has it (per GPU, x its TP)."""
    loaded = extra.get("loaded_gib")
    if not (isinstance(loaded, list) and len(loaded) == 2):
        return None
    tp = int(extra.get("loaded_tensor_parallel_size", 1))
    lo, hi = float(loaded[0]) * tp * GIB, float(loaded[1]) * tp * GIB
    return WeightsBasis(
        low_bytes=lo,
        high_bytes=hi,
        how=f"{_gib_range(lo / GIB, hi / GIB)} in all, "
        + (f"{tp} x the per-GPU figure: " if tp > 1 else "")
        + str(extra.get("source", "the table")),
        brief="what real boots loaded (the table)",
    )


def _parameters(config: Mapping[str, JSONValue], extra: TableWeights) -> _Params | str:
    """The model card's total (the table), else the config's count, or why neither."""
    published = extra.get("num_parameters")
    count = count_parameters(config)
    if isinstance(published, list) and len(published) == 2:
        lo_p, hi_p = int(published[0]), int(published[1])
        emb = 0 if count is None else count.num_embedding_params
        how = f"{lo_p / 1e9:.1f}-{hi_p / 1e9:.1f} B parameters ({extra.get('source', 'the table')})"
    elif count is not None:
        lo_p = hi_p = count.num_params
        emb = count.num_embedding_params
        how = f"{count.num_params:,} parameters counted from the config: {count.how}"
        extra_params = extra.get("extra_parameters")
        if isinstance(extra_params, int):
            lo_p, hi_p = lo_p + extra_params, hi_p + extra_params
            how += f"; + {extra_params / 1e9:.3f} B ({extra.get('extra_parameters_source', '')})"
        elif str(config.get("model_type")) in MULTIMODAL_TYPES or other_towers(config):
            towers = " and ".join(other_towers(config) or ["vision"])
            return (
                f"the config counts the language model only; its {towers} tower is not in the table"
            )
    else:
        return (
            f"the parameters of model_type {config.get('model_type')!r} are not counted here "
            "and the table has no total for it"
        )
    return _Params(
        low=lo_p,
        high=hi_p,
        num_embedding=emb,
        num_replicated=0 if count is None or lo_p != hi_p else count.num_replicated_params,
        how=how,
        is_counted=count is not None,
        num_routed_expert=0 if count is None else count.num_routed_expert_params,
    )


def _weight_bytes(
    method: str,
    qcfg: Mapping[str, JSONValue],
    dtype: str,
    dtype_bytes: int,
    p: _Params,
    source: str,
) -> _Bytes | str:
    """The parameters' bytes by the weights' quantization method ("" or "none": the
    dtype's), or why they are not modelled (``source``: where the method was read)."""
    lo_p, hi_p, emb, repl = p.low, p.high, p.num_embedding, p.num_replicated
    if method == "int4-experts":
        routed = p.num_routed_expert
        if not routed:
            return f"INT4 experts whose parameters are not counted here ({source})"
        # The routed experts packed in 4 bits with a 16-bit scale per 32 (0.5 + 2 / 32
        # = 0.5625 B), the rest 16-bit. Kimi-K2-Thinking: 1,014,686,023,680 x 0.5625 +
        # 11,722,208,768 x 2 = 594,205,305,856 B = 553.40 GiB (the Hub's 594 GB).
        return _Bytes(
            low_bytes=routed * 0.5625 + (lo_p - routed) * 2.0,
            high_bytes=routed * 0.5625 * 1.01 + (hi_p - routed) * 2.0,
            replicated_bytes=repl * 2.0,
            how="; INT4 routed experts: 0.5625 B a weight (a 16-bit scale per 32), the rest 2 B",
        )
    if method in ("", "none"):
        per = float(dtype_bytes)
        return _Bytes(
            low_bytes=lo_p * per,
            high_bytes=hi_p * per,
            replicated_bytes=repl * per,
            how=f"; x {dtype_bytes} B ({_served(dtype)})",
        )
    if _is_nvfp4(method, qcfg):
        # NVFP4: 4-bit weights, one FP8 (1 B) scale per 16 and one FP32 scale a
        # tensor (negligible): 0.5 + 1 / 16 = 0.5625 B a linear weight.
        per_linear = 0.5625
        return _Bytes(
            low_bytes=(lo_p - emb) * per_linear + emb * 2.0,
            high_bytes=(hi_p - emb) * per_linear * 1.01 + emb * 2.0,
            replicated_bytes=repl * per_linear,
            how="; NVFP4: 0.5625 B a linear weight (an FP8 scale per 16), embeddings 2 B",
        )
    if method in ("modelopt", "modelopt_fp8") and str(
        qcfg.get("quant_algo") or "FP8"
    ).upper() not in ("FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO"):
        return (
            f"weights quantized by modelopt as {qcfg.get('quant_algo')!r}: their "
            "bytes are not modelled here"
        )
    if method in ("fp8", "fbgemm_fp8", "modelopt", "modelopt_fp8"):
        # Linear layers 1 byte (block or channel scales add < 0.1%); embeddings
        # and lm_head stay 16-bit.
        return _Bytes(
            low_bytes=(lo_p - emb) + emb * 2.0,
            high_bytes=(hi_p - emb) * 1.001 + emb * 2.0,
            replicated_bytes=float(repl),
            how=f"; FP8: the linear layers 1 B, the {emb / 1e9:.2f} B embedding parameters 2 B",
        )
    if method in ("w8a8", "int8") or (
        method == "compressed-tensors" and _compressed_tensors_bits(qcfg) in ((8, 0),)
    ):
        # 8-bit weights (INT8 or FP8 in compressed-tensors) with channel or
        # tensor scales: the same bytes as FP8. Llama-3.1-70B w8a8: 68,452,360,192 x 1 B + 2 x
        # 2,101,346,304 embedding parameters x 2 B = 72,655,052,800 B = 67.67
        # GiB; a real boot loaded 67.7229 (real_logs/019).
        return _Bytes(
            low_bytes=(lo_p - emb) + emb * 2.0,
            high_bytes=(hi_p - emb) * 1.001 + emb * 2.0,
            replicated_bytes=float(repl),
            how=f"; 8-bit weights: the linear layers 1 B, the {emb / 1e9:.2f} B embedding ones 2 B",
        )
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin", "compressed-tensors"):
        return _packed_bytes(method, qcfg, p)
    return f"weights quantized as {method!r}: their bytes are not modelled here ({source})"


def _packed_bytes(method: str, qcfg: Mapping[str, JSONValue], p: _Params) -> _Bytes | str:
    """AWQ / GPTQ / compressed-tensors weights packed in 4 or 8 bits, with group scales."""
    lo_p, hi_p, emb = p.low, p.high, p.num_embedding
    ct = _compressed_tensors_bits(qcfg) if method == "compressed-tensors" else None
    if method == "compressed-tensors" and (ct is None or ct[0] not in (4, 8)):
        return "a compressed-tensors scheme whose weight bits are not one number"
    raw_bits = ct[0] if ct else qcfg.get("bits", qcfg.get("w_bit", 4))
    # A compressed-tensors group size 0 is a scale per channel or tensor: GPTQ's -1.
    raw_group = (ct[1] or -1) if ct else qcfg.get("group_size", qcfg.get("q_group_size", 128))
    if raw_group is None:
        raw_group = 128
    if not _is_count(raw_bits) or not _is_group_size(raw_group):
        return (
            f"the {method} config's bits {raw_bits!r} or group size {raw_group!r} "
            "is not a whole number"
        )
    bits, group = int(raw_bits), int(raw_group)
    # Packed weights bits/8 B, a 16-bit scale and a packed zero per group.
    # GPTQ's group_size -1 is one group per output channel (thousands of
    # weights): its scales are under the +1% of the high end.
    per_linear = bits / 8 + ((2 + bits / 8) / group if group > 0 else 0.0)
    return _Bytes(
        low_bytes=(lo_p - emb) * per_linear + emb * 2.0,
        high_bytes=(hi_p - emb) * per_linear * 1.01 + emb * 2.0,
        replicated_bytes=p.num_replicated * per_linear,
        how=f"; {method} {bits}-bit, "
        + (f"group {group}" if group > 0 else "a scale per channel or tensor")
        + f": {per_linear:.4f} B a linear weight, embeddings 2 B",
    )


def weights_basis(config: Mapping[str, JSONValue], extra: TableWeights) -> WeightsBasis | str:
    """The model's weight bytes (all GPUs) as a range, or why they are unknown."""
    loaded = _loaded(extra)
    if loaded is not None:
        return loaded
    quant = extra.get("quantization")
    qcfg: Mapping[str, JSONValue] = quantization_of(config) or {}
    method = str(quant or qcfg.get("quant_method") or "").lower()
    dtype = model_dtype(config)
    dtype_bytes = DTYPE_BYTES.get(dtype)
    if dtype_bytes is None:
        return f"the weights' dtype {dtype!r} is not one vLLM serves in 16 bits"
    p = _parameters(config, extra)
    if isinstance(p, str):
        return p
    by = _weight_bytes(method, qcfg, dtype, dtype_bytes, p, f"{extra.get('source', 'the config')}")
    if isinstance(by, str):
        return by
    lo_p, hi_p = p.low, p.high
    how, hi_b, central = p.how + by.how, by.high_bytes, None
    if lo_p == hi_p:
        central = by.low_bytes * (1 + WEIGHTS_CENTRAL)
        hi_b *= 1 + WEIGHTS_SPREAD
        how += (
            f"; + 0-{WEIGHTS_SPREAD:.0%} (what real boots load beyond the count; "
            f"{WEIGHTS_CENTRAL:.1%} typical)"
        )
    if by.replicated_bytes:
        how += (
            f"; {by.replicated_bytes / GIB:.2f} GiB of it on every GPU (MLA's kv_a_proj_with_mqa)"
        )
    return WeightsBasis(
        low_bytes=by.low_bytes,
        high_bytes=hi_b,
        how=how,
        num_params=lo_p,
        central_bytes=central,
        replicated_bytes=by.replicated_bytes,
        brief=(
            f"{lo_p / 1e9:,.2f} B params"
            if lo_p == hi_p
            else f"{lo_p / 1e9:,.1f}-{hi_p / 1e9:,.1f} B params"
        )
        + (" (config)" if p.is_counted and lo_p == hi_p else " (model card)")
        + f" {'FP8' if method.startswith('fp8') else method or _served(dtype)}"
        + ("" if lo_p != hi_p else f" +0-{WEIGHTS_SPREAD:.0%}"),
    )


def _overheads(
    *,
    tp: int,
    version: Version | None,
    is_big: bool,
    is_unusual: str,
    is_big_batch: bool,
) -> tuple[Figure, ...]:
    """The three estimates vLLM measures at boot, each with the spread seen in real logs.

    The rule, fitted to the logs that print the memory profile (what is left of
    total x utilization after the weights and the KV cache): one GPU, 1.7-1.9
    GiB in all for 8B models (Llama-3.1-8B on an H100, vLLM 0.32: 1.23 activation
    + 0.49 CUDA graphs + 0.63 non-torch; Qwen3-8B on an L4: 1.18 + 0.53 graphs),
    the activation smaller under the 2,048-token batch of GPUs below 70 GiB; at
    TP > 1, 1.7-5.5 GiB besides the graphs (Llama-3.3-70B at TP 4 5.45, DeepSeek-V3
    at TP 8 4.64, Qwen3-Next at TP 4 3.03, taking the GPU as an 80 / 141 GB card).
    """
    activation = _activation_peak(is_unusual=is_unusual, is_big_batch=is_big_batch)
    figures = [activation, _non_torch(tp)]
    # vLLM 0.21+ takes the profiled CUDA graph memory from the KV budget
    # (rules.Feature.CUDA_GRAPH_IN_BUDGET).
    if supports(version, Feature.CUDA_GRAPH_IN_BUDGET):
        figures.append(_cuda_graph(is_big))
    if supports(version, Feature.EXTENSIBLE_KV_CACHE):
        figures.append(_kv_margin(activation))
    return tuple(figures)


def _activation_peak(*, is_unusual: str, is_big_batch: bool) -> Figure:
    """The activation peak of vLLM's profile run: no upper bound for a model of an
    unusual kind (``is_unusual`` says which)."""
    high_act: float | None = 2.5
    unusual = ""
    if is_unusual:
        high_act = None
        unusual = (
            f"; {is_unusual}: no upper bound (real_logs/022, a Llama-3.2-11B-Vision boot, "
            "profiled 36.63 GiB; real_logs/017, a Bamba Mamba hybrid, kept 17.8 GiB beyond "
            "its weights and KV cache)"
        )
    return Figure(
        name="activation_peak",
        gib=1.25 if is_big_batch else 0.75,
        low_gib=0.2,
        high_gib=high_act,
        source=(
            "estimate: the logs that print 'PyTorch activation peak memory' / 'for peak "
            "activation' show 1.19-1.59 GiB for 7-8B text models (1.23 on an H100, vLLM "
            "0.32), 2.38 on an 80 GB card, 0.22-0.47 for small ones; about 0.7 on an L4's "
            "2,048-token batch (what the L4 logs leave); CUDA only: a ROCm V0 boot "
            "profiled 9.31 GiB (sample_logs/era_0_8_5_rocm_v0.log)" + unusual
        ),
        replaced_by="'PyTorch activation peak memory takes X GiB' (or 'X GiB for peak activation')",
        brief="estimate, real logs' memory profiles"
        + ("; unbounded for this kind of model" if high_act is None else ""),
    )


def _non_torch(tp: int) -> Figure:
    """The memory outside torch's allocator: NCCL's buffers at TP > 1."""
    return Figure(
        name="non_torch",
        gib=0.5 if tp == 1 else 2.0,
        low_gib=0.0 if tp == 1 else 0.3,
        high_gib=2.2 if tp == 1 else 4.0,
        source=(
            "estimate: the logs show 0.03-0.62 GiB on one GPU (1.79 and 2.12 in two); "
            "at TP > 1 NCCL and custom all-reduce buffers add more: 2.53 GiB at TP 16, "
            "and what TP 4-8 logs leave besides the activation (1.7-5.5 GiB in all)"
        ),
        replaced_by="'non_torch_memory takes X GiB'",
        brief="estimate, real logs' memory profiles" + (" (NCCL at TP > 1)" if tp > 1 else ""),
    )


def _cuda_graph(is_big: bool) -> Figure:
    """The CUDA graphs' memory, counted in the KV budget (rules.Feature.CUDA_GRAPH_IN_BUDGET)."""
    return Figure(
        name="cuda_graph",
        gib=1.5 if is_big else 0.6,
        low_gib=0.35,
        high_gib=3.2 if is_big else 1.2,
        source=(
            "estimate: 'Graph capturing finished ... took X GiB' in the logs: "
            "0.37-1.12 GiB for models up to 80 B, 3.15 GiB for DeepSeek-V3 at TP 8; "
            "counted in the KV budget from vLLM 0.21"
        ),
        replaced_by="'Graph capturing finished in N secs, took X GiB' (or 'X GiB for "
        "CUDAGraph memory')",
        brief="estimate, real logs' graph captures",
    )


def _kv_margin(activation: Figure) -> Figure:
    """The margin vLLM's extensible KV cache keeps free beyond the activation peak."""
    # vLLM 0.34's extensible KV cache (on CUDA and ROCm by default) keeps a margin of
    # max(1 GiB, 0.75 x the warmup's transient peak) free beyond the peak itself
    # (v1/worker/extensible_kv_cache.py 0.34.0 lines 64-65 and 615-617): the
    # central peak 1.25 GiB -> max(1, 0.94) = 1 GiB; the high 2.5 -> 1.875 GiB.
    high_act = activation.high_gib
    return Figure(
        name="kv_margin",
        gib=max(1.0, 0.75 * activation.gib),
        low_gib=1.0,
        high_gib=None if high_act is None else max(1.0, 0.75 * high_act),
        source=(
            "vLLM's extensible KV cache (rules.Feature.EXTENSIBLE_KV_CACHE) sizes the "
            "cache from the memory free after warmup and keeps max(1 GiB, 0.75 x the "
            "transient peak) free as a margin (source only)"
        ),
        replaced_by="'Available KV cache memory: X GiB'",
        brief="vLLM's extensible KV cache margin, source only",
    )


def _outcome(
    layout: KVCacheLayout,
    available_bytes: float,
    *,
    workload: Workload,
    version: str,
    max_model_len: int,
    max_num_batched_tokens: int,
    max_num_seqs: int,
) -> Outcome:
    avail = int(available_bytes)
    blocks = num_blocks_for_memory(layout, avail) if avail > 0 else 0
    pool: int | None = None
    capacity: Capacity | None = None
    users: int | None = None
    if blocks > 0 and _prints_blocks(version):
        # Before 0.8 vLLM prints "# GPU blocks: N", not tokens: the pool holds
        # N x block_size tokens (one group; V0 has no hybrid groups).
        pool = blocks * layout.block_size
    elif blocks > 0:
        try:
            pool = pool_tokens_printed(
                layout,
                num_blocks=blocks,
                vllm_version=version,
                max_model_len=max_model_len,
                max_num_batched_tokens=max_num_batched_tokens,
            )
        except LogReadError:
            pool = None
    if blocks > 0:
        capacity = users_for_layout(layout, num_blocks=blocks, workload=workload)
        users = min(capacity.users, max_num_seqs)
    return Outcome(
        available_kv_bytes=avail,
        num_blocks=blocks,
        pool_tokens=pool,
        capacity=capacity,
        users=0 if blocks == 0 else users,
    )


def _prints_blocks(version: str) -> bool:
    """vLLM before 0.8.0 prints its pool as "# GPU blocks: N" (rules.Feature.POOL_TOKENS_LINE)."""
    return not supports(Version.parse(version, strict=True), Feature.POOL_TOKENS_LINE)


def _max_len_for_blocks(
    layout: KVCacheLayout, num_blocks: int, max_num_batched_tokens: int, upper: int
) -> int:
    """The longest max_model_len whose one request fits ``num_blocks`` (vLLM's
    estimate_max_model_len, by bisection on the blocks a request is charged)."""
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        need = blocks_per_max_len_request(
            layout, max_model_len=mid, max_num_batched_tokens=max_num_batched_tokens
        )
        if need <= num_blocks:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _utilization(version: str, gpu_memory_utilization: float | None) -> tuple[float, str]:
    """--gpu-memory-utilization, else the version's default, with its source.

    Raises:
        UsageError: a utilization outside (0, 1].
    """
    if gpu_memory_utilization is None:
        util, util_src = default_utilization(version)
        return util, util_src.replace(
            "(not stated in the log)", "(--gpu-memory-utilization changes it)"
        )
    if not 0 < gpu_memory_utilization <= 1:
        raise UsageError(
            f"--gpu-memory-utilization must be in (0, 1], got {gpu_memory_utilization}"
        )
    return gpu_memory_utilization, "--gpu-memory-utilization"


def _check_weights_gib(weights_gib: float | None) -> None:
    """Raises UsageError for --weights-gib beyond any card (or nan)."""
    if weights_gib is not None and not 0 <= weights_gib < MAX_GPU_GIB:  # nan too
        # 1e300 GiB is inf bytes: no pool arithmetic survives it.
        raise UsageError(
            f"--weights-gib {weights_gib:g}: give the weights per GPU in GiB, from 0 to below "
            f"{MAX_GPU_GIB:,.0f}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Weights:
    """The weights per GPU (None: unknown, and why), and the parameters counted."""

    figure: Figure | None
    unknown: str = ""
    num_params: int | None = None


def _weights(
    weights_gib: float | None, config: Mapping[str, JSONValue], extra: TableWeights, tp: int
) -> _Weights:
    """--weights-gib, else the weights counted from the config (or the table) per GPU."""
    if weights_gib is not None:
        return _Weights(
            figure=Figure(
                name="weights",
                gib=weights_gib,
                low_gib=weights_gib,
                high_gib=weights_gib,
                source="--weights-gib",
                brief="--weights-gib",
                is_estimate=False,
                replaced_by="'Model loading took X GiB'",
            )
        )
    basis = weights_basis(config, extra)
    if isinstance(basis, str):
        return _Weights(
            figure=None, unknown=f"weights per GPU unknown because {basis}; pass --weights-gib G"
        )
    r = basis.replicated_bytes

    def per_gpu(num_bytes: float) -> float:
        # Sharded over the GPUs, but the replicated part whole on each.
        return ((num_bytes - r) / tp + r) / GIB

    lo, hi = per_gpu(basis.low_bytes), per_gpu(basis.high_bytes)
    mid = (lo + hi) / 2 if basis.central_bytes is None else per_gpu(basis.central_bytes)
    return _Weights(
        figure=Figure(
            name="weights",
            gib=mid,
            low_gib=lo,
            high_gib=hi,
            source=f"estimate: {basis.how}" + (f"; / {tp} GPUs" if tp > 1 else ""),
            brief="estimate: " + basis.brief + (f", / {tp} GPUs" if tp > 1 else ""),
            replaced_by="'Model loading took X GiB'",
        ),
        num_params=basis.num_params,
    )


def _with_checkpoint(weights: _Weights, model: str) -> _Weights:
    """The count held against the cached checkpoint's safetensors index, when there
    is one: its total bytes beside the counted ones (the index also holds MTP layers
    and towers vLLM may not load, so it is said, not used). Qwen3-8B: 16,381,470,720 B
    = 8,190,735,360 parameters x 2 B, the count to the byte."""
    fig = weights.figure
    found = checkpoint_total_bytes(model)
    if fig is None or found is None or fig.source == "--weights-gib":
        return weights
    total, path = found
    note = f"; the cached checkpoint's safetensors index states {total / GIB:.2f} GiB ({path})"
    return replace(weights, figure=replace(fig, source=fig.source + note))


def _unusual(
    model_type: str, config: Mapping[str, JSONValue], extra: TableWeights, spec: KVSpec
) -> str:
    """Why this model's profile can take more than any text model's ("": it cannot)."""
    if model_type in MULTIMODAL_TYPES or other_towers(config) or extra.get("extra_parameters"):
        return "a multimodal model's encoder profile can take more"
    if spec.state_bytes_per_request:
        return "a Mamba / linear-attention hybrid's profile can take more"
    return ""


def _max_model_len(max_model_len: int | None, config: Mapping[str, JSONValue]) -> tuple[int, str]:
    """max_model_len: the option, else the config's max_position_embeddings."""
    mpe = config.get("max_position_embeddings")
    nested = config.get("text_config")
    if not isinstance(mpe, int) and isinstance(nested, Mapping):
        mpe = nested.get("max_position_embeddings")
    if max_model_len is not None:
        return max_model_len, "--max-model-len"
    if isinstance(mpe, int) and mpe > 0:
        return mpe, "vLLM's default: the config's max_position_embeddings"
    # vLLM's _get_and_verify_max_len falls back to 2,048 when the config
    # names no length (Falcon-7B's config has none).
    return (
        MAX_MODEL_LEN_WITHOUT_CONFIG_LENGTH,
        "vLLM's default when the config states no length (2,048)",
    )


#: An end of the estimate's ranges: the central figures, the low ends (the best
#: pool) or the high ends (the worst).
_End = Literal["central", "low", "high"]


def _at(figure: Figure, end: _End) -> Sourced[float] | None:
    """A figure at an end of its range, as a budget term (None: no bound there)."""
    gib = {"central": figure.gib, "low": figure.low_gib, "high": figure.high_gib}[end]
    if gib is None:
        return None
    kind: SourceKind = "derived" if figure.is_estimate else "given"
    return Sourced(value=gib, kind=kind, source=figure.brief or figure.source)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Budget:
    """What the pool of one boot is sized against, besides the layout."""

    # The card's total and the utilization (budget.MemoryBudget).
    memory: MemoryBudget
    weights: Figure
    overheads: tuple[Figure, ...]
    workload: Workload
    version: str
    max_model_len: int
    max_num_batched_tokens: int
    max_num_seqs: int

    @property
    def requested_gib(self) -> float:
        requested = self.memory.requested
        assert requested is not None  # the card's total and a utilization, always
        return requested

    @property
    def total_gib(self) -> float:
        """The card's whole memory: weights above it never load, whatever the utilization."""
        assert self.memory.total_gib is not None
        return self.memory.total_gib.value

    def at(self, end: _End) -> MemoryBudget | None:
        """The budget with the weights and the overheads at ``end`` (None: a figure
        has no bound there). The graphs are charged where the version counts them
        (the figure is there: rules.Feature.CUDA_GRAPH_IN_BUDGET)."""
        by = {f.name: f for f in self.overheads}
        # The weights' high end is their central figure when they have none (--weights-gib).
        weights = _at(self.weights, end) or _at(self.weights, "central")
        terms = {
            name: None if name not in by else _at(by[name], end)
            for name in ("activation_peak", "non_torch", "cuda_graph", "kv_margin")
        }
        if any(terms[name] is None for name in by):
            return None
        return replace(
            self.memory,
            weights_gib=weights,
            activation_peak_gib=terms["activation_peak"],
            non_torch_gib=terms["non_torch"],
            cuda_graph_gib=terms["cuda_graph"],
            kv_margin_gib=terms["kv_margin"],
            cuda_graph_rule="apart" if "cuda_graph" in by else "no",
        )

    def outcome(self, layout: KVCacheLayout, end: _End) -> Outcome | None:
        """The pool and the users at ``end`` of the ranges (None: no bound there)."""
        budget = self.at(end)
        available_gib = None if budget is None else budget.kv_cache_left_gib
        if available_gib is None:
            return None
        return _outcome(
            layout,
            available_gib * GIB,
            workload=self.workload,
            version=self.version,
            max_model_len=self.max_model_len,
            max_num_batched_tokens=self.max_num_batched_tokens,
            max_num_seqs=self.max_num_seqs,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Ends:
    """The pool at the central estimate and at both ends, and whether max_model_len boots."""

    central: Outcome | None = None
    best: Outcome | None = None
    worst: Outcome | None = None
    max_len_blocks: int = 0
    fits: MaxLenFits = "unknown"
    message: str = ""
    estimated_max_model_len: int | None = None


def _ends(layout: KVCacheLayout, b: _Budget) -> _Ends:
    """The pool and users at the central figures and the two ends of their ranges."""
    weights = b.weights
    w_hi = weights.high_gib if weights.high_gib is not None else weights.gib
    central, best = b.outcome(layout, "central"), b.outcome(layout, "low")
    assert central is not None and best is not None  # every figure has a central and a low
    worst = b.outcome(layout, "high")
    max_len_blocks = blocks_per_max_len_request(
        layout, max_model_len=b.max_model_len, max_num_batched_tokens=b.max_num_batched_tokens
    )
    ok = [o.num_blocks >= max_len_blocks for o in (worst, central, best) if o is not None]
    ends = _Ends(central=central, best=best, worst=worst, max_len_blocks=max_len_blocks)
    if weights.low_gib > b.total_gib:
        # GLM-4.7 in bfloat16 on one H100: ~657 GiB of weights against a 79.19 GiB card.
        return replace(
            ends,
            fits="no",
            message=f"the boot would fail: the weights alone ({_gib_range(weights.low_gib, w_hi)}"
            f" per GPU) exceed this GPU ({b.total_gib:.2f} GiB); more GPUs (--tp) or smaller "
            "weights",
        )
    if central.available_kv_bytes <= 0 and best.available_kv_bytes <= 0:
        return replace(
            ends,
            fits="no",
            message=f"the boot would fail: the weights ({_gib_range(weights.low_gib, w_hi)} "
            f"per GPU) and overheads leave no KV memory of the {b.requested_gib:.2f} GiB asked "
            "for (vLLM: 'No available memory for the cache blocks'); more GPUs (--tp) or "
            "smaller weights",
        )
    if all(ok):
        # No worst end (an unbounded profile): it fits unless the profile
        # takes far more than any text model's.
        return replace(ends, fits="yes" if worst is not None else "likely")
    return _short_of_max_len(layout, b, replace(ends, fits="no" if not any(ok) else "maybe"))


def _short_of_max_len(layout: KVCacheLayout, b: _Budget, ends: _Ends) -> _Ends:
    """Why one request of max_model_len may not fit, and the length that does."""
    central, worst, max_len_blocks, mml = (
        ends.central,
        ends.worst,
        ends.max_len_blocks,
        b.max_model_len,
    )
    assert central is not None
    need_gib = max_len_blocks * layout.bytes_per_block / GIB
    avail_c = central.available_kv_bytes / GIB
    est_len = _max_len_for_blocks(layout, central.num_blocks, b.max_num_batched_tokens, mml)
    short = need_gib - avail_c
    vllm_says = (
        f"vLLM: 'To serve at least one request with the model's max seq len ({mml})"
        "... the estimated maximum model length is N'"
    )
    need = (
        f"one request of max_model_len {mml:,} needs {max_len_blocks:,} blocks = "
        f"{need_gib:.2f} GiB of KV cache"
    )
    if ends.fits == "maybe" and central.num_blocks >= max_len_blocks:
        # The central estimate fits; only the top of the overhead ranges does not.
        worst_gib = 0.0 if worst is None else max(worst.available_kv_bytes, 0) / GIB
        message = (
            f"{need}: the central estimate leaves {avail_c:.2f} GiB (it fits); with "
            f"the overheads at the top of their ranges {worst_gib:.2f} GiB, and the "
            f"boot would fail ({vllm_says})"
        )
    else:
        message = (
            f"the boot {'would' if ends.fits == 'no' else 'may'} fail: {need}, the estimate "
            f"leaves {avail_c:.2f} GiB"
            + (f" ({short:.2f} GiB short)" if short > 0 else "")
            + f" ({vllm_says}); --max-model-len {est_len} or lower fits the central "
            "estimate"
        )
    return replace(ends, message=message, estimated_max_model_len=est_len)


def _layout_notes(layout: KVCacheLayout, max_num_batched_tokens: int) -> tuple[Finding, ...]:
    """The layout's caveats, and what a windowed layer's pool line depends on."""
    if any(g.kind in ("sliding", "chunked") for g in layout.groups):
        windowed = WindowedPoolLineNeedsBatchedTokens(max_num_batched_tokens=max_num_batched_tokens)
        return (*layout.notes, windowed)
    return layout.notes


@dataclass(frozen=True, slots=True, kw_only=True)
class _Asked:
    """estimate_boot's options as given, again for the estimate at a wider tensor
    parallel size (_more_gpus)."""

    gpu: str | Gpu
    workload: Workload
    max_model_len: int | None
    block_size: int | None
    gpu_memory_utilization: float | None
    vllm_version: str | None
    max_num_seqs: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Inputs:
    """What the estimate starts from: the card, the memory figures, the layout and
    the scheduler's limits, each with its source."""

    card: Gpu
    version: str
    gpu_memory_utilization: float
    utilization_source: str
    weights: _Weights
    overheads: tuple[Figure, ...]
    layout: KVCacheLayout
    max_model_len: int
    max_model_len_source: str
    max_num_batched_tokens: int
    max_num_seqs: int
    max_num_seqs_source: str

    @property
    def memory(self) -> MemoryBudget:
        """The card's total and the utilization (budget.MemoryBudget)."""
        util_kind: SourceKind = (
            "given" if self.utilization_source == "--gpu-memory-utilization" else "default"
        )
        return MemoryBudget(
            total_gib=Sourced(value=self.card.total_gib, kind="given", source=self.card.source),
            gpu_memory_utilization=Sourced(
                value=self.gpu_memory_utilization, kind=util_kind, source=self.utilization_source
            ),
        )

    @property
    def requested_gib(self) -> float:
        requested = self.memory.requested
        assert requested is not None  # the card's total and a utilization, always
        return requested

    def ends(self, workload: Workload) -> _Ends:
        """The pool at the estimate's ends; no pool without the weights."""
        if self.weights.figure is None or not self.max_model_len:
            return _Ends()
        budget = _Budget(
            memory=self.memory,
            weights=self.weights.figure,
            overheads=self.overheads,
            workload=workload,
            version=self.version,
            max_model_len=self.max_model_len,
            max_num_batched_tokens=self.max_num_batched_tokens,
            max_num_seqs=self.max_num_seqs,
        )
        return _ends(self.layout, budget)


def _inputs(model: str, spec: KVSpec, asked: _Asked, weights_gib: float | None) -> _Inputs:
    """The card, the weights, the overheads, the layout and the scheduler's defaults.

    Raises:
        UsageError: an unknown GPU, a utilization outside (0, 1], weights
            beyond any card.
    """
    gpu = asked.gpu
    card = gpu if isinstance(gpu, Gpu) else find_gpu(gpu)  # Gpu: --gpu-memory-gib
    version = asked.vllm_version or ESTIMATE_VERSION
    parsed = Version.parse(version, strict=True)
    tp = spec.tensor_parallel_size * spec.pipeline_parallel_size
    util, util_src = _utilization(version, asked.gpu_memory_utilization)
    _check_weights_gib(weights_gib)
    found = config_for_argument(model)
    config: Mapping[str, JSONValue] = found[0] if found else {}
    table = table_weights(model) if found and found[1].startswith(TABLE_SOURCE) else None
    # The table's fields as data/models.json gives them.
    extra = TableWeights() if table is None else cast(TableWeights, table[1])
    weights = _with_checkpoint(_weights(weights_gib, config, extra, tp), model)
    model_type = str(config.get("model_type") or spec.model_type or "")
    total_params = weights.num_params or 0
    is_big = total_params >= 100e9 or model_type in ("deepseek_v3", "deepseek_v2", "kimi_k2")
    big_gpu = is_big_gpu(card.total_gib, card.name)
    overheads = _overheads(
        tp=tp,
        version=parsed,
        is_big=is_big,
        is_unusual=_unusual(model_type, config, extra, spec),
        is_big_batch=big_gpu,
    )
    mml, mml_src = _max_model_len(asked.max_model_len, config)
    # V1 is the engine from 0.8.0 (V0's default max_num_seqs is 256 on any GPU).
    seqs, seqs_src = default_max_num_seqs(
        default_generation(parsed), card.total_gib, card.name, total_source="--gpu"
    )
    seqs_src = seqs_src.replace("; not in the log", "; --max-num-seqs changes it")
    if asked.max_num_seqs is not None:
        seqs, seqs_src = asked.max_num_seqs, "--max-num-seqs"
    return _Inputs(
        card=card,
        version=version,
        gpu_memory_utilization=util,
        utilization_source=util_src,
        weights=weights,
        overheads=overheads,
        # The KV layout, as the boot report forms it.
        layout=kv_cache_layout(spec, block_size=asked.block_size, vllm_version=version),
        max_model_len=mml,
        max_model_len_source=mml_src,
        max_num_batched_tokens=default_max_num_batched_tokens(is_big_gpu=big_gpu),
        max_num_seqs=seqs,
        max_num_seqs_source=seqs_src,
    )


def estimate_boot(
    model: str,
    spec: KVSpec,
    *,
    gpu: str | Gpu,
    workload: Workload,
    max_model_len: int | None = None,
    block_size: int | None = None,
    gpu_memory_utilization: float | None = None,
    vllm_version: str | None = None,
    weights_gib: float | None = None,
    max_num_seqs: int | None = None,
    suggest: bool = True,
) -> BootEstimate:
    """The pool and the users a boot of ``model`` on ``gpu`` would give, estimated.

    ``spec`` is the model's KV spec per GPU (its tensor parallel size applied).

    Raises:
        UsageError: an unknown GPU, a utilization outside (0, 1], weights
            beyond any card.
    """
    asked = _Asked(
        gpu=gpu,
        workload=workload,
        max_model_len=max_model_len,
        block_size=block_size,
        gpu_memory_utilization=gpu_memory_utilization,
        vllm_version=vllm_version,
        max_num_seqs=max_num_seqs,
    )
    inp = _inputs(model, spec, asked, weights_gib)
    ends = inp.ends(workload)
    central = ends.central
    serves = central is not None and bool(central.users) and ends.fits in ("yes", "likely", "maybe")
    is_estimated = inp.weights.figure is not None and weights_gib is None
    suggestion = ""
    if suggest and is_estimated and central is not None and not serves:
        suggestion = _more_gpus(model, spec, asked)
    return BootEstimate(
        model=model,
        gpu=inp.card,
        vllm_version=inp.version,
        tensor_parallel_size=spec.tensor_parallel_size,
        gpu_memory_utilization=inp.gpu_memory_utilization,
        utilization_source=inp.utilization_source,
        requested_gib=inp.requested_gib,
        weights=inp.weights.figure,
        overheads=inp.overheads,
        layout=inp.layout,
        block_size=inp.layout.block_size,
        workload=workload,
        max_model_len=inp.max_model_len,
        max_model_len_source=inp.max_model_len_source,
        max_num_seqs=inp.max_num_seqs,
        max_num_seqs_source=inp.max_num_seqs_source,
        max_num_batched_tokens=inp.max_num_batched_tokens,
        central=central,
        best=ends.best,
        worst=ends.worst,
        max_len_blocks=ends.max_len_blocks,
        max_len_fits=ends.fits,
        max_len_message=ends.message,
        estimated_max_model_len=ends.estimated_max_model_len,
        unknown=inp.weights.unknown,
        notes=_layout_notes(inp.layout, inp.max_num_batched_tokens),
        suggestion=suggestion,
    )


def _more_gpus(model: str, spec: KVSpec, asked: _Asked) -> str:
    """The smallest tensor parallel size (2, 4, 8, 16) at which one user fits and
    max_model_len boots, by the same estimate; or why none does."""
    for tp in (2, 4, 8, 16):
        if tp <= spec.tensor_parallel_size:
            continue
        try:
            wider = spec_for_argument(
                model,
                tensor_parallel_size=tp,
                pipeline_parallel_size=spec.pipeline_parallel_size,
                kv_cache_dtype=spec.kv_cache_dtype,
            )
            est = estimate_boot(
                model,
                wider,
                suggest=False,
                gpu=asked.gpu,
                workload=asked.workload,
                max_model_len=asked.max_model_len,
                block_size=asked.block_size,
                gpu_memory_utilization=asked.gpu_memory_utilization,
                vllm_version=asked.vllm_version,
                max_num_seqs=asked.max_num_seqs,
            )
        except LogReadError:
            continue
        c = est.central
        if c is not None and c.users and est.max_len_fits in ("yes", "likely", "maybe"):
            lo = None if est.worst is None else est.worst.users
            hi = None if est.best is None else est.best.users
            span = f"{lo}-{hi}" if lo is not None and lo != hi else f"at most {hi}"
            if lo == hi:
                span = f"{lo}"
            return f"--tp {tp}: ~{c.users:,} users ({span}), by the same estimate"
    return "no tensor parallel size up to 16 serves a user on this GPU, by the same estimate"


__all__ = ["BootEstimate", "Figure", "Outcome", "WeightsBasis", "estimate_boot", "weights_basis"]
