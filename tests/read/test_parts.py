"""Lines read part by part: one part removed or garbled never loses the others.

A multi-part line (the one-line memory summary, the V0 and V1 memory
profiles, the platform plugins' memory lines, the ``non-default args`` dict)
states several facts, each in a part of its own. A platform plugin rewords one
part, a paste garbles one number, a build drops one clause: the facts of the
other parts must still be read, and the damaged part is named in a near miss
(never silently dropped). The parts are the ones the patterns table reads
(``patterns.Part``), found in each example by their own regexes, so a part added
to a table is damaged here too.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_logread.read import patterns
from vllm_logread.read.facts import Fact
from vllm_logread.read.grammar import NearMiss
from vllm_logread.read.patterns import Part, facts_from_message

# One example per multi-part row (vLLM's and the plugins' own wordings) and the
# parts table it is read with.
EXAMPLES: list[tuple[str, tuple[Part, ...]]] = [
    (
        "Free memory on device (30.27/31.4 GiB) on startup. Desired GPU memory utilization is "
        "(0.92, 28.88 GiB). Actual usage is 15.27 GiB for weight, 1.59 GiB for peak activation, "
        "0.1 GiB for non-torch memory, and 0.09 GiB for CUDAGraph memory. Replace "
        "gpu_memory_utilization config with `--kv-cache-memory=12917635953` (12.03 GiB) to fit into "
        "requested memory, or `--kv-cache-memory=13917635953` (12.96 GiB) to fully utilize gpu "
        "memory. Current kv cache memory in use is 12.03 GiB.",
        patterns._FREE_MEMORY_PARTS,
    ),
    (
        "Free memory on device (78.54/79.19 GiB) on startup. Desired GPU memory utilization is "
        "(0.92, 72.85 GiB). Actual usage is 15.59 GiB for consumed memory (weights + non-torch), "
        "1.23 GiB for peak activation, and 0.49 GiB for CUDAGraph memory. Replace "
        "gpu_memory_utilization config with `--kv-cache-memory=59482981131` (55.4 GiB) to fit into "
        "requested memory. Current kv cache memory in use is 55.52 GiB.",
        patterns._FREE_MEMORY_PARTS,
    ),
    (
        "Free memory on device (60.86/61.27 GiB) on startup. Desired GPU memory utilization is (0.9, "
        "55.14 GiB). Actual usage: 1.14 GiB for weights, 0.22 GiB for peak activation, 0.13 GiB for "
        "non-torch memory, 0.04 GiB for NPU graph memory. Replace gpu_memory_utilization with "
        "`--kv-cache-memory=57403864576` (53.46 GiB) to fit into requested memory. Current KV cache "
        "memory: 53.59 GiB.",
        patterns._FREE_MEMORY_PARTS,
    ),
    (
        "model weights take 14.96GiB; non_torch_memory takes 1.79GiB; PyTorch activation peak "
        "memory takes 1.26GiB; the rest of the memory reserved for KV Cache is 53.29GiB.",
        patterns._V0_SPLIT_PARTS,
    ),
    (
        "the current vLLM instance can use total_gpu_memory (79.22GiB) x gpu_memory_utilization "
        "(0.90) = 71.30GiB",
        patterns._V0_TOTAL_PARTS,
    ),
    (
        "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
        "peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB "
        "kv_cache_size=2.89GiB gpu_memory_utilization=0.90",
        patterns._V0_ONELINE_PARTS,
    ),
    (
        "Memory profiling takes 40.46 seconds. Total non KV cache memory: 62.79GiB; torch peak "
        "memory increase: 5.62GiB; non-torch forward increase memory: 2.04GiB; weights memory: "
        "55.13GiB.",
        patterns._V1_PROFILE_PARTS,
    ),
    (
        "Free device memory: 94.62 GiB, 85.16 GiB usable (gpu_memory_utilization=0.9), 8.516 GiB "
        "reserved for HPUGraphs (VLLM_GRAPH_RESERVED_MEM=0.1), 16 MiB reserved for KV cache dummy "
        "block 76.63 GiB reserved for usable KV cache",
        patterns._HPU_FREE_PARTS,
    ),
    (
        "After memory profiling run, peak memory usage is 16020.50 MB,torch mem is 15316.12 MB, "
        "non-torch mem is 410.00 MB, free gpu memory is 8100.22 MB.",
        patterns._XPU_PROFILE_PARTS,
    ),
    (
        "Memory statistics | total_hbm_limit_gb=125.0GiB | total_hbm_limit_cap_gb=112.5GiB | "
        "total_hbm_used_gb=16.42GiB | total_hbm_avail_gb=96.08GiB",
        patterns._TPU_HBM_PARTS,
    ),
]

# Text a garbled number becomes: no number at all, a word, a cut one.
GARBLE = ("x.yz", "n/a", "lots", "?", "", "1.2.3.4")

Facts = Counter[tuple[str, object]]


def _read(message: str) -> tuple[Facts, list[NearMiss]]:
    facts: Facts = Counter()
    misses: list[NearMiss] = []
    for e in facts_from_message(message, line=1, process=None):
        if isinstance(e, Fact):
            facts[(e.kind, e.value)] += 1
        else:
            misses.append(e)
    return facts, misses


def _spans(message: str, parts: tuple[Part, ...]) -> list[tuple[int, int, Facts]]:
    """Each part present in the message: its span and the facts it gives alone."""
    out = []
    for part in parts:
        m = part.regex.search(message)
        if m is None or m.end() == m.start():
            continue
        out.append((m.start(), m.end(), Counter((k, v) for k, v, _ in part.build(m))))
    return out


def test_every_example_reads_whole() -> None:
    for message, parts in EXAMPLES:
        facts, misses = _read(message)
        assert not misses, (message, misses)
        spans = _spans(message, parts)
        assert len(spans) >= 3, message
        assert sum((f for _, _, f in spans), Counter()) == facts, message


def test_parts_do_not_overlap() -> None:
    """A part's text is its own, so removing it leaves the others' text whole."""
    for message, parts in EXAMPLES:
        spans = sorted(_spans(message, parts))
        for (_, end, _), (start, _, _) in zip(spans, spans[1:], strict=False):
            assert end <= start, message


@settings(max_examples=150, deadline=None)
@given(
    which=st.integers(min_value=0, max_value=len(EXAMPLES) - 1),
    part_index=st.integers(min_value=0, max_value=20),
    how=st.sampled_from(("remove", "garble")),
    garble=st.sampled_from(GARBLE),
)
def test_one_damaged_part_never_loses_the_others(
    which: int, part_index: int, how: str, garble: str
) -> None:
    message, parts = EXAMPLES[which]
    spans = _spans(message, parts)
    start, end, own = spans[part_index % len(spans)]
    piece = message[start:end]
    if how == "remove":
        damaged = message[:start] + message[end:]
    elif not any(c.isdigit() for c in piece):
        return  # no number to garble
    else:
        first_digit = next(i for i, c in enumerate(piece) if c.isdigit())
        stop = first_digit
        while stop < len(piece) and (piece[stop].isdigit() or piece[stop] in ".,"):
            stop += 1
        damaged = message[: start + first_digit] + garble + message[start + stop :]
    facts, misses = _read(damaged)
    others = sum((f for s, _, f in spans if s != start), Counter())
    assert not (others - facts), f"{how} {piece!r}: lost {others - facts}"
    if how == "garble" and own and not (own & facts):
        assert misses, f"garbled {piece!r} silently"


NON_DEFAULT = (
    "non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B', "
    "'attention_config': AttentionConfig(backend=None, flash_attn_version=3), "
    "'data_parallel_size': 2, 'max_model_len': 32768, 'block_size': 32, 'kv_cache_dtype': 'fp8', "
    "'gpu_memory_utilization': 0.95, 'max_num_seqs': 64, 'enable_prefix_caching': False}"
)
ITEMS = (
    ("'data_parallel_size': 2", ("data_parallel_size", 2)),
    ("'max_model_len': 32768", ("max_model_len", 32768)),
    ("'block_size': 32", ("block_size", 32)),
    ("'kv_cache_dtype': 'fp8'", ("kv_cache_dtype", "fp8")),
    ("'gpu_memory_utilization': 0.95", ("gpu_memory_utilization", 0.95)),
    ("'max_num_seqs': 64", ("max_num_seqs", 64)),
    ("'enable_prefix_caching': False", ("enable_prefix_caching", False)),
)


@settings(max_examples=60, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=len(ITEMS) - 1),
    how=st.sampled_from(("remove", "garble")),
    garble=st.sampled_from(("Len(1)", "<Enum.X: 2>", "SomeConfig(a=[1, (2, 3)], b={'c': 4})")),
)
def test_one_damaged_dict_value_never_loses_the_others(index: int, how: str, garble: str) -> None:
    item, fact = ITEMS[index]
    key = item.split(":")[0]
    replacement = "" if how == "remove" else f"{key}: {garble}"
    if how == "remove":
        cut = item + ", " if item + ", " in NON_DEFAULT else ", " + item
        damaged = NON_DEFAULT.replace(cut, "")
    else:
        damaged = NON_DEFAULT.replace(item, replacement)
    facts, misses = _read(damaged)
    whole, _ = _read(NON_DEFAULT)
    assert whole - facts == Counter({fact: 1})
    assert ("model", "Qwen/Qwen3-8B") in facts
    # A fact's key that cannot be read is named; one removed is simply absent.
    assert bool(misses) == (how == "garble")
