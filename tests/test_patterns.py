"""One case per wording of every row in the patterns table (VLLM_LINES.md)."""

from __future__ import annotations

import pytest
from strategies import STATS_MESSAGES, STATS_SLOW_MESSAGES

from vllm_logread.read import stats
from vllm_logread.read.facts import KIND_TYPES
from vllm_logread.read.grammar import NearMiss
from vllm_logread.read.patterns import MARKERS, ROWS, facts_from_message


def _facts(message: str) -> list[tuple[str, object]]:
    out = []
    for e in facts_from_message(message, line=1, process=None):
        assert not isinstance(e, NearMiss), f"near miss on {message!r}: {e}"
        if e.kind not in ("device", "stats_engine"):
            out.append((e.kind, e.value))
    return out


CASES = [
    # -- weights
    ("Loading model weights took 14.9595 GB", [("weights_gib", 14.9595)]),
    ("Loading model weights took 0.2389 GiB", [("weights_gib", 0.2389)]),
    ("Model loading took 15.2683 GiB and 30.512331 seconds", [("weights_gib", 15.2683)]),
    ("Model loading took 13.1665 GB and 5.346817 seconds", [("weights_gib", 13.1665)]),
    ("Model loading took 64.38 GiB memory and 14.380607 seconds", [("weights_gib", 64.38)]),
    ("Model loading took 15.0 GiB memory and 3.5 seconds", [("weights_gib", 15.0)]),
    ("Model loading took 512.0 MB and 1.0 seconds", [("weights_gib", 0.5)]),
    # -- V0 profile, three shapes
    (
        "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
        "peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB "
        "kv_cache_size=2.89GiB gpu_memory_utilization=0.90",
        [
            ("total_gpu_gib", 23.58),
            ("non_torch_gib", 0.35),
            ("available_kv_gib", 2.89),
            ("gpu_memory_utilization", 0.9),
        ],
    ),
    (
        "Memory profiling results: duration=71.88 seconds, total_gpu_memory=79.15GiB, "
        "initial_memory_usage=19.68GiB, peak_torch_memory=34.32GiB, memory_usage_post_profile=35.32GiB,"
        " non_torch_memory=1.96GiB, kv_cache_size=34.96GiB, gpu_memory_utilization=0.90.",
        [
            ("total_gpu_gib", 79.15),
            ("non_torch_gib", 1.96),
            ("available_kv_gib", 34.96),
            ("gpu_memory_utilization", 0.9),
        ],
    ),
    (
        "the current vLLM instance can use total_gpu_memory (79.22GiB) x gpu_memory_utilization "
        "(0.90) = 71.30GiB",
        [("total_gpu_gib", 79.22), ("gpu_memory_utilization", 0.9), ("requested_gib", 71.3)],
    ),
    (
        "model weights take 14.96GiB; non_torch_memory takes 1.79GiB; PyTorch activation peak memory "
        "takes 1.26GiB; the rest of the memory reserved for KV Cache is 53.29GiB.",
        [
            ("weights_gib", 14.96),
            ("non_torch_gib", 1.79),
            ("activation_peak_gib", 1.26),
            ("available_kv_gib", 53.29),
        ],
    ),
    ("total_gpu_memory     79.22GiB", [("total_gpu_gib", 79.22)]),
    ("available_kv_cache_memory 53.29GiB".replace(" ", "   "), [("available_kv_gib", 53.29)]),
    ("Memory profiling takes 0.75 seconds", []),
    # -- available KV memory, every path
    ("Available KV cache memory: 3.31 GiB", [("available_kv_gib", 3.31)]),
    ("Available KV cache memory: -2.14 GiB", [("available_kv_gib", -2.14)]),
    (
        "Initial free memory 78.53955078125 GiB, reserved 12.00GiB memory for KV Cache as specified "
        "by kv_cache_memory_bytes config and skipped memory profiling.",
        [("available_kv_gib", 12.0)],
    ),
    (
        "Initial free memory 78.54 GiB, reserved 12.0 GiB memory for KV Cache as specified by "
        "kv_cache_memory_bytes config and skipped memory profiling.",
        [("available_kv_gib", 12.0)],
    ),
    ("Explicitly set (3.31/18.34) GiB for KV cache on node 0.", [("available_kv_gib", 3.31)]),
    (
        "Auto set (3.31/16.21) GiB for KV cache on node 0, with 4.0 GiB requested memory for the "
        "worker. 0.69 GiB memory was consumed by non-kv usages.",
        [("available_kv_gib", 3.31)],
    ),
    (
        "Free memory on device (30.27/31.4 GiB) on startup. Desired GPU memory utilization is (0.92, "
        "28.88 GiB). Actual usage is 15.27 GiB for weight, 1.59 GiB for peak activation, 0.1 GiB for "
        "non-torch memory, and 0.09 GiB for CUDAGraph memory. Replace gpu_memory_utilization config "
        "with `--kv-cache-memory=12917635953` (12.03 GiB) to fit into requested memory, or "
        "`--kv-cache-memory=14104115404` (13.14 GiB) to fully utilize gpu memory. Current kv cache "
        "memory in use is 11.85 GiB.",
        [
            ("total_gpu_gib", 31.4),
            ("gpu_memory_utilization", 0.92),
            ("requested_gib", 28.88),
            ("weights_gib", 15.27),
            ("activation_peak_gib", 1.59),
            ("non_torch_gib", 0.1),
            ("cuda_graph_gib", 0.09),
            ("kv_cache_memory_bytes", 12917635953),
            ("available_kv_gib", 11.85),
        ],
    ),
    (
        "Free memory on device (30.27/31.4 GiB) on startup. Desired GPU memory utilization is (0.92, "
        "28.88 GiB). Actual usage is 15.4 GiB for consumed memory (weights + non-torch), 1.59 GiB for "
        "peak activation, and 0.09 GiB for CUDAGraph memory. Replace gpu_memory_utilization config "
        "with `--kv-cache-memory=12917635953` (12.03 GiB) to fit into requested memory.",
        [
            ("total_gpu_gib", 31.4),
            ("gpu_memory_utilization", 0.92),
            ("requested_gib", 28.88),
            ("kv_cache_memory_bytes", 12917635953),
            ("activation_peak_gib", 1.59),
            ("cuda_graph_gib", 0.09),
        ],
    ),
    (
        "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
        "--gpu-memory-utilization=0.8800 is equivalent to --gpu-memory-utilization=0.8592 without",
        [("gpu_memory_utilization", 0.88)],
    ),
    # -- CUDA graphs
    ("Graph capturing finished in 36 secs, took 0.44 GiB", [("cuda_graph_gib", 0.44)]),
    ("Graph capturing finished in 5 secs, took -0.02 GiB", [("cuda_graph_gib", -0.02)]),
    ("Graph capturing finished in 12 secs.", []),
    ("Estimated CUDA graph memory: 0.44 GiB total", [("cuda_graph_gib", 0.44)]),
    (
        "CUDA graph pool memory: 0.09 GiB (actual), 0.44 GiB (estimated), difference: 0.35 GiB (79.5%).",
        [("cuda_graph_gib", 0.09)],
    ),
    # -- pool lines of every era
    ("# GPU blocks: 5691, # CPU blocks: 2048", [("gpu_blocks", 5691), ("cpu_blocks", 2048)]),
    ("# CUDA blocks: 27284, # CPU blocks: 2048", [("gpu_blocks", 27284), ("cpu_blocks", 2048)]),
    ("# cuda blocks: 7191, # CPU blocks: 512", [("gpu_blocks", 7191), ("cpu_blocks", 512)]),
    ("GPU blocks: 1952, # CPU blocks: 2048", [("gpu_blocks", 1952), ("cpu_blocks", 2048)]),
    ("# GPU blocks: 1381", [("gpu_blocks", 1381)]),
    ("# TPU blocks: 100, # CPU blocks: 20", [("gpu_blocks", 100), ("cpu_blocks", 20)]),
    ("# CPU blocks: 1170", [("gpu_blocks", 1170)]),
    ("# cpu blocks: 1170, # CPU blocks: 0", [("gpu_blocks", 1170), ("cpu_blocks", 0)]),
    ("GPU KV cache size: 24,096 tokens", [("pool_tokens", 24096)]),
    ("GPU KV cache size: 1406 tokens", [("pool_tokens", 1406)]),
    (
        "Maximum concurrency for 8,192 tokens per request: 2.94x",
        [("concurrency_tokens", 8192), ("max_concurrency", 2.94)],
    ),
    (
        "Maximum concurrency for 2048 tokens per request: 10.79x",
        [("concurrency_tokens", 2048), ("max_concurrency", 10.79)],
    ),
    (
        "GPU KV cache size: 436,544 tokens, Maximum concurrency for 131,072 tokens per request: 3.33x",
        [("pool_tokens", 436544), ("concurrency_tokens", 131072), ("max_concurrency", 3.33)],
    ),
    (
        "CPU KV cache size: 1,048,576 tokens, Maximum concurrency for 2,048 tokens per request: 512.00x",
        [("pool_tokens", 1048576), ("concurrency_tokens", 2048), ("max_concurrency", 512.0)],
    ),
    (
        "GPU + host KV cache size: 500,000 tokens, Maximum concurrency for 2,048 tokens per request: 1.00x",
        [("pool_tokens", 500000), ("concurrency_tokens", 2048), ("max_concurrency", 1.0)],
    ),
    (
        "Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 1506",
        [("gpu_blocks", 1506)],
    ),
    ("Using max model len 8192", [("max_model_len", 8192)]),
    # -- too small for max_model_len
    (
        "The model's max seq len (29000) is larger than the maximum number of tokens that can be "
        "stored in KV cache (23648). Try increasing `gpu_memory_utilization`",
        [("max_model_len", 29000), ("kv_too_small", 23648)],
    ),
    (
        "ValueError: To serve at least one request with the models's max seq len (221000), (10.12 GiB "
        "KV cache is needed, which is larger than the available KV cache memory (5.59 GiB). Based on "
        "the available memory, the estimated maximum model length is 122080. Try increasing",
        [("max_model_len", 221000), ("available_kv_gib", 5.59), ("kv_too_small", 122080)],
    ),
    (
        "To serve at least one request with the model's max seq len (32768), (4.0 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (2.5 GiB). Based on the available "
        "memory, the estimated maximum model length is 20480.",
        [("max_model_len", 32768), ("available_kv_gib", 2.5), ("kv_too_small", 20480)],
    ),
    # -- config lines
    (
        "Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen3-8B', "
        "speculative_config=None, tokenizer='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=8192, "
        "tensor_parallel_size=2, pipeline_parallel_size=1, data_parallel_size=1, quantization=None, "
        "enforce_eager=False, kv_cache_dtype=fp8,  device_config=cuda, enable_prefix_caching=True",
        [
            ("vllm_version", "0.11.0"),
            ("model", "Qwen/Qwen3-8B"),
            ("max_model_len", 8192),
            ("tensor_parallel_size", 2),
            ("pipeline_parallel_size", 1),
            ("data_parallel_size", 1),
            ("dtype", "torch.bfloat16"),
            ("kv_cache_dtype", "fp8"),
            ("enable_prefix_caching", True),
        ],
    ),
    (
        "Initializing an LLM engine with config: model='/m/Qwen-7B', tokenizer='/m/Qwen-7B', "
        "dtype=torch.bfloat16, max_seq_len=4096, tensor_parallel_size=1, quantization=awq, seed=0)",
        [
            ("model", "/m/Qwen-7B"),
            ("max_model_len", 4096),
            ("tensor_parallel_size", 1),
            ("dtype", "torch.bfloat16"),
            ("quantization", "awq"),
        ],
    ),
    (
        "Initializing a V0 LLM engine (v0.8.5) with config: model='m', speculative_config=None, "
        "max_seq_len=2048, tensor_parallel_size=1, chunked_prefill_enabled=False "
        "multi_step_stream_outputs=True, enable_prefix_caching=None, use_cached_outputs=False, ",
        [
            ("vllm_version", "0.8.5"),
            ("model", "m"),
            ("max_model_len", 2048),
            ("tensor_parallel_size", 1),
        ],
    ),
    (
        "non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B', 'max_model_len': "
        "32768, 'gpu_memory_utilization': 0.95, 'block_size': 32, 'max_num_seqs': 64, "
        "'enable_prefix_caching': False, 'kv_cache_memory_bytes': 3553099776, 'quantization': None}",
        [
            ("model", "Qwen/Qwen3-8B"),
            ("max_model_len", 32768),
            ("block_size", 32),
            ("gpu_memory_utilization", 0.95),
            ("enable_prefix_caching", False),
            ("max_num_seqs", 64),
            ("kv_cache_memory_bytes", 3553099776),
        ],
    ),
    # -- version lines
    ("vLLM API server version 0.11.0", [("vllm_version", "0.11.0")]),
    (
        "vLLM server version 0.17.0, serving model Qwen/Qwen3-8B",
        [("vllm_version", "0.17.0"), ("model", "Qwen/Qwen3-8B")],
    ),
    (" ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.33.0", [("vllm_version", "0.33.0")]),
    (
        "  █▄█▀ █     █     █     █  model   meta-llama/Llama-3.1-8B",
        [("model", "meta-llama/Llama-3.1-8B")],
    ),
    ("Starting to load model openai/gpt-oss-120b...", [("model", "openai/gpt-oss-120b")]),
    # -- stats, every version
    (
        "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 tokens/s, Running: 2 "
        "reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, CPU KV cache usage: 0.0%",
        [
            ("prompt_tps", 0.0),
            ("generation_tps", 44.9),
            ("running_reqs", 2),
            ("swapped_reqs", 0),
            ("waiting_reqs", 3),
            ("kv_usage_pct", 82.1),
        ],
    ),
    (
        "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 5 "
        "reqs, Waiting: 1 reqs GPU KV cache usage: 7.5%.",
        [
            ("prompt_tps", 1.0),
            ("generation_tps", 2.0),
            ("running_reqs", 5),
            ("waiting_reqs", 1),
            ("kv_usage_pct", 7.5),
        ],
    ),
    (
        "Engine 000: Avg prompt throughput: 2345.6 tokens/s, Avg generation throughput: 789.0 "
        "tokens/s, Running: 24 reqs, Waiting: 3 reqs, Preemptions: 2, GPU KV cache usage: 97.1%, "
        "Prefix cache hit rate: 43.2%",
        [
            ("prompt_tps", 2345.6),
            ("generation_tps", 789.0),
            ("running_reqs", 24),
            ("waiting_reqs", 3),
            ("preemptions", 2),
            ("kv_usage_pct", 97.1),
            ("prefix_hit_pct", 43.2),
        ],
    ),
    (
        "2 Engines Aggregated: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 "
        "tokens/s, Running: 40 reqs, Waiting: 0 reqs, Deferred: 1 reqs, CPU KV cache usage: 99.5%, "
        "External prefix cache hit rate: 5.0%",
        [
            ("prompt_tps", 1.0),
            ("generation_tps", 2.0),
            ("running_reqs", 40),
            ("waiting_reqs", 0),
            ("kv_usage_pct", 99.5),
        ],
    ),
    # -- preemption warnings
    (
        "Sequence group 147 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough "
        "KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization "
        "or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=51",
        [("preemptions", 51)],
    ),
    (
        "Sequence group 3 is preempted by PreemptionMode.SWAP mode because there is not enough KV "
        "cache space. This can affect the end-to-end performance.",
        [("preemptions", 1)],
    ),
    # -- block size changes
    (
        "Setting attention block size to 544 tokens to ensure that attention page size is >= mamba page size.",
        [("block_size", 544)],
    ),
    ("Forcing kv cache block size to 64 for FlashMLA backend.", [("block_size", 64)]),
    ("Setting kv cache block size to 32 for CPU_ATTN backend(s).", [("block_size", 32)]),
    (
        "Hybrid KV cache manager is disabled for this hybrid model, This means we do not enable any "
        "optimizations for saving KV cache memory.",
        [("hybrid_kv_disabled", True)],
    ),
    ("Add 8 padding layers, may waste at most 15.38% KV cache memory", [("padding_layers", 8)]),
    (
        "Mamba cache mode is set to 'align' for Qwen3NextForCausalLM by default when prefix "
        "caching is enabled",
        [("mamba_cache_mode", "align")],
    ),
    (
        "Mamba cache mode is set to 'none' when prefix caching is disabled",
        [("mamba_cache_mode", "none")],
    ),
    (
        "kv cache group sizes [16, 32]",
        [("num_kv_cache_groups", 2), ("kv_group_block_sizes", "16,32")],
    ),
    ("Automatically detected platform cpu.", [("platform", "cpu")]),
    (
        "kv cache group sizes (128, 128, 128, 128)",
        [("num_kv_cache_groups", 4), ("kv_group_block_sizes", "128,128,128,128")],
    ),
    ("kv lcm block sizes 128", [("kv_lcm_block_size", 128)]),
    ("Automatically detected platform cuda.", [("platform", "cuda")]),
    ("EngineCore failed to start.", [("engine_failed", True)]),
    (
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        "proc(s): {'EngineCore': 1}",
        [("engine_failed", True)],
    ),
    # -- lines that state nothing
    ("Loading weights took 4.91 seconds", []),
    ("init engine (profile, create kv cache, warmup model) took 32.41 seconds", []),
    # -- SGLang boot logs (sglang.py; SGLang's own format strings)
    (
        "server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tokenizer_path='Qwen/Qwen3-8B', "
        "dtype='auto', kv_cache_dtype='auto', quantization=None, context_length=None, "
        "mem_fraction_static=0.88, max_running_requests=None, page_size=1, tp_size=2, pp_size=1, "
        "dp_size=1, disable_radix_cache=False)",
        [
            ("engine_kind", "sglang"),
            ("model", "Qwen/Qwen3-8B"),
            ("kv_cache_dtype", "auto"),
            ("mem_fraction_static", 0.88),
            ("block_size", 1),
            ("tensor_parallel_size", 2),
            ("pipeline_parallel_size", 1),
            ("data_parallel_size", 1),
            ("enable_prefix_caching", True),
        ],
    ),
    (
        "Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=6.48 GB, "
        "mem usage=15.27 GB.",
        [("avail_after_weights_gib", 6.48), ("dtype", "torch.bfloat16"), ("weights_gib", 15.27)],
    ),
    (
        "Load weight end. elapsed=1.97 s, type=Qwen3ForCausalLM, avail mem=162.30 GB, "
        "mem usage=15.28 GB.",
        [("avail_after_weights_gib", 162.3), ("weights_gib", 15.28)],
    ),
    (
        "Load weight end. type=MistralForCausalLM, dtype=torch.bfloat16, avail mem=9.69 GB",
        [("avail_after_weights_gib", 9.69), ("dtype", "torch.bfloat16")],
    ),
    (
        "KV Cache is allocated. #tokens: 250000, K size: 17.17 GB, V size: 17.17 GB",
        [
            ("engine_kind", "sglang"),
            ("kv_alloc_tokens", 250000),
            ("kv_k_gib", 17.17),
            ("kv_v_gib", 17.17),
        ],
    ),
    (
        "KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB",
        [("engine_kind", "sglang"), ("kv_alloc_tokens", 524288), ("kv_size_gib", 17.16)],
    ),
    ("Memory pool end. avail mem=2.44 GB", [("avail_after_pool_gib", 2.44)]),
    (
        "max_total_num_tokens=298447, chunked_prefill_size=2048, max_prefill_tokens=16384, "
        "max_running_requests=3730, context_len=40960, available_gpu_mem=2.82 GB",
        [
            ("engine_kind", "sglang"),
            ("pool_tokens", 298447),
            ("max_num_seqs", 3730),
            ("max_model_len", 40960),
        ],
    ),
    (
        "max_total_num_tokens=56524, max_prefill_tokens=16384, max_running_requests=2049, "
        "context_len=32768",
        [
            ("engine_kind", "sglang"),
            ("pool_tokens", 56524),
            ("max_num_seqs", 2049),
            ("max_model_len", 32768),
        ],
    ),
    (
        "TensorRT-LLM MHA only supports page_size of 16, 32 or 64, changing page_size from None "
        "to 64.",
        [("block_size", 64)],
    ),
    (
        "Decode batch. #running-req: 40, #token: 25600, token usage: 0.99, "
        "gen throughput (token/s): 1234.56, #queue-req: 3, ",
        [
            ("running_reqs", 40),
            ("kv_usage_pct", 99.0),
            ("generation_tps", 1234.56),
            ("waiting_reqs", 3),
        ],
    ),
    (
        "Decode batch, #running-req: 1, #full token: 44, full token usage: 0.29, #swa token: 3, "
        "swa token usage: 0.01, cuda graph: True, gen throughput (token/s): 6.41, #queue-req: 0, ",
        [
            ("running_reqs", 1),
            ("kv_usage_pct", 29.0),
            ("generation_tps", 6.41),
            ("waiting_reqs", 0),
        ],
    ),
    # SGLang's pool-leak warning shares the scheduler line's marker: not a pool, not a warning.
    ("Warning: available_size=9, max_total_num_tokens=56524 KV cache pool leak detected!", []),
]


@pytest.mark.parametrize(("message", "expected"), CASES, ids=[c[0][:60] for c in CASES])
def test_row_reads_its_wording(message: str, expected: list[tuple[str, object]]) -> None:
    assert sorted(_facts(message), key=str) == sorted(expected, key=str)


NEAR_MISSES = [
    "Available KV cache memory: lots of GiB",
    "GPU KV cache size: " + "9" * 10_000 + " tokens",
    "Maximum concurrency for 0 tokens per request: nanx",
    "Model loading took inf GiB and 1.0 seconds",
    "non-default args: {'model': 'x', 'max_model_len': 8192",
]


@pytest.mark.parametrize("message", NEAR_MISSES, ids=[m[:40] for m in NEAR_MISSES])
def test_marker_without_wording_is_a_near_miss(message: str) -> None:
    events = list(facts_from_message(message, line=3, process=None))
    assert any(isinstance(e, NearMiss) for e in events)
    assert not any(getattr(e, "kind", "") in ("pool_tokens", "max_concurrency") for e in events)


def test_every_row_has_a_case() -> None:
    covered = set()
    for message, _ in CASES:
        for row in ROWS:
            if any(m in message for m in row.markers) and row.regex.search(message):
                covered.add(row.name)
    missing = {r.name for r in ROWS} - covered
    assert not missing, f"rows without a test case: {sorted(missing)}"


def test_markers_are_in_the_table() -> None:
    assert set(MARKERS) == {m for row in ROWS for m in row.markers}


# -- the stats line: one declaration (read/stats.py), three readers ---------------------


def test_the_stats_parts_give_facts_of_their_declared_types() -> None:
    kinds = [p.kind for p in stats._parts_in_order()]
    assert stats.STATS_KINDS_IN_ORDER == tuple(dict.fromkeys(kinds))
    for p in stats._parts_in_order():
        assert p.kind is not None and KIND_TYPES[p.kind] is p.number.type, p.kind


def _row_facts(message: str) -> dict[str, tuple[object, int | None]]:
    return {
        f.kind: (f.value, f.decimals)
        for f in facts_from_message(message, line=1, process=None)
        if not isinstance(f, ValueError)
    }


@pytest.mark.parametrize("message", sorted(STATS_MESSAGES))
def test_every_stats_reader_reads_what_the_row_reads(message: str) -> None:
    """The row's parts, the scanner's whole-line regex and serving mode's
    chunk regex, all made from STATS_PARTS, give the same facts on every
    wording (or leave the line to the row)."""
    text = STATS_MESSAGES[message]
    row = _row_facts(text)
    raw = ("INFO 11-29 12:34:56 [loggers.py:248] " + text).encode()
    m = stats.STATS_LINE.fullmatch(raw)
    assert (m is None) == (message in STATS_SLOW_MESSAGES)
    if m is not None:
        line = {f.kind: (f.value, f.decimals) for f in stats.stats_line_facts(m, 1, "-")}
        assert line == row
    fast = stats.STATS_FAST.search(raw)
    assert fast is not None
    g = fast.groups()
    if g[0] is None:  # left to the row
        return
    for kind, groups in stats.STATS_FAST_COLUMNS.items():
        values = [g[i] for i in groups if g[i] is not None]
        if kind in row:
            assert len(values) == 1 and KIND_TYPES[kind](values[0].decode()) == row[kind][0]
        else:
            assert values == []


@pytest.mark.parametrize("message", sorted(STATS_MESSAGES))
def test_the_stats_row_reads_every_line_the_declaration_reads(message: str) -> None:
    """The "stats" row's own regex (its head) takes every line STATS_LINE reads."""
    text = STATS_MESSAGES[message]
    (row,) = [r for r in ROWS if r.name == "stats"]
    if stats.STATS_LINE.fullmatch(("INFO [x.py:1] " + text).encode()) is not None:
        assert row.regex.search(text) is not None
