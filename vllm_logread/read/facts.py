"""Facts: one named value that one log line states (see docs/facts.md).

Every number the tool reports is computed from these, and ``--json`` lists them
all, so a reader can audit each figure back to its line. A fact keeps the
precision it was printed with: ``3.31 GiB`` means [3.305, 3.315), and checks
use that interval instead of a magic tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jsontypes import JSONObject

Value = int | float | str | bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """One value stated by one line.

    Attributes:
        kind: a name from docs/facts.md (``pool_tokens``, ``weights_gib``, ...).
        value: the value in the unit the kind names.
        line: 1-based number of the (first) physical line in the input.
        process: the process tag (``EngineCore_DP0 pid=200``) or None.
        decimals: how many decimals the value was printed with (None: exact or
            not a printed float), so ``half_ulp`` gives the printed precision.
        source: which input (file name or ``-``) the line came from.
        time: the line's header time ``MM-DD HH:MM:SS`` or None (not in the JSON).
        site: the logger call that printed the line, ``kv_cache_utils.py:716``, or
            None (not in the JSON, the repr or comparisons: the same fact from another
            release is the same fact). fingerprint.py reads a log's release from them.
    """

    kind: str
    value: Value
    line: int
    process: str | None = None
    decimals: int | None = None
    source: str = "-"
    time: str | None = None
    site: str | None = field(default=None, compare=False, repr=False)

    @property
    def half_ulp(self) -> float:
        """Half a unit in the last printed place (0.005 for ``3.31``).

        >>> Fact(kind="available_kv_gib", value=3.31, line=1, decimals=2).half_ulp
        0.005
        """
        if self.decimals is None:
            return 0.0
        return 0.5 * 10.0 ** (-self.decimals)

    def to_json(self) -> JSONObject:
        """The JSON shape of docs/facts.md: kind, value, line, process."""
        return {"kind": self.kind, "value": self.value, "line": self.line, "process": self.process}


# The type of each fact kind (docs/facts.md), the core kinds and the extensions.
KIND_TYPES: dict[str, type] = {
    "vllm_version": str,
    "model": str,
    "max_model_len": int,
    "tensor_parallel_size": int,
    "pipeline_parallel_size": int,
    # A worker rank's label, once per label: "TP1", "PP1_TP0", "rank=2", "rank0",
    # "VllmWorkerProcess pid=13105" (read/lines.worker_label; boots.ranks_seen counts them).
    "worker_rank": str,
    "data_parallel_size": int,
    "kv_cache_dtype": str,
    "dtype": str,
    "quantization": str,
    "block_size": int,
    "gpu_memory_utilization": float,
    "enable_prefix_caching": bool,
    "max_num_seqs": int,
    "weights_gib": float,
    "total_gpu_gib": float,
    "requested_gib": float,
    "non_torch_gib": float,
    "activation_peak_gib": float,
    "cuda_graph_gib": float,
    "available_kv_gib": float,
    "gpu_blocks": int,
    "cpu_blocks": int,
    "pool_tokens": int,
    "max_concurrency": float,
    "concurrency_tokens": int,
    "kv_cache_memory_bytes": int,
    "running_reqs": int,
    "waiting_reqs": int,
    "swapped_reqs": int,
    "kv_usage_pct": float,
    "prefix_hit_pct": float,
    "prompt_tps": float,
    "generation_tps": float,
    "preemptions": int,
    "kv_too_small": int,
    # Extensions (docs/facts.md, "Extensions"):
    "device": str,  # GPU / CPU / XPU / TPU / CUDA: the word before "KV cache size" or "blocks"
    "stats_engine": str,  # "000" from "Engine 000:", "2 engines" from "2 Engines Aggregated:"
    "max_num_batched_tokens": int,
    "hybrid_kv_disabled": bool,
    "padding_layers": int,
    "mamba_cache_mode": str,  # "Mamba cache mode is set to 'align'" (vLLM 0.31+)
    "num_kv_cache_groups": int,  # "kv cache group sizes (128, 128)": 2 groups (0.31+, hybrids)
    "kv_group_block_sizes": str,  # the same line's block sizes, "128,128"
    "kv_lcm_block_size": int,  # "kv lcm block sizes 128"
    "platform": str,  # "Automatically detected platform cpu." (cuda, rocm, cpu, tpu, xpu, hpu, ...)
    "engine_failed": bool,  # the engine died during start-up (after or before its pool line)
    # Start-up's end (boots.py, report/failure.py): a fatal error's text ("ValueError: No
    # common block size for 16 ...", "WorkerProc hit an exception."), the engine saying it
    # is ready ("init engine (profile, create kv cache, warmup model) took 7.91 s"), and a
    # stop the operator asked for ("[shutdown] EngineCore: trigger received signal=SIGTERM").
    "boot_error": str,
    "engine_ready": bool,
    "stop_requested": str,
    "engine_died": bool,  # a worker failed while serving ("Worker failed with error")
    "cpu_worker_kv": bool,  # the CPU worker's "... GiB for KV cache on node N": a CPU boot
    "num_speculative_tokens": int,
    "speculative_method": str,  # speculative_config's method: eagle, eagle3, mtp, dflash, ngram...
    "draft_model": str,  # speculative_config's draft model (EAGLE heads, draft models)
    # What a person typed beside the log (a pasted `vllm serve NAME ...`, `lm_eval
    # --model_args pretrained=NAME,...`, `LLM(model="NAME")`): the boot's model and
    # length only where the engine's own lines do not state them (boots.py).
    "model_named": str,
    "max_model_len_named": int,
    "served_model_name": str,  # --served-model-name: the name clients use, a last resort
    # Memory figures of the profile and platform lines that no core kind means
    # (docs/facts.md, "Extensions"); GiB as everywhere:
    "non_kv_cache_gib": float,  # V1 DEBUG profile "Total non KV cache memory: X GiB"
    # 0.27+: "total consumed (from mem_get_info): X GiB" (DEBUG profile) and the memory
    # summary's "X GiB for consumed memory (weights + non-torch)"
    "consumed_gib": float,
    "free_device_gib": float,  # HPU "Free device memory: X", XPU "free gpu memory is X MB"
    "usable_device_gib": float,  # HPU "X usable (gpu_memory_utilization=u)" (free x u)
    "graph_reserved_gib": float,  # HPU "X reserved for HPUGraphs"
    "cpu_mla_kernel": str,  # CPU "Using CPU_MLA backend." / "Using AMX_MLA backend." (0.28+)
    "cpu_kv_space_gib": float,  # CPU "VLLM_CPU_KVCACHE_SPACE ... using 4 by default" / "Using X GiB for KV cache"
    "peak_memory_gib": float,  # XPU "peak memory usage is X MB" (weights included)
    # TPU (tpu-inference) "Memory statistics | ...": sums over the worker's chips
    "hbm_limit_gib": float,  # total_hbm_limit_gb
    "hbm_limit_cap_gib": float,  # total_hbm_limit_cap_gb (limit x gpu_memory_utilization)
    "hbm_used_gib": float,  # total_hbm_used_gb
    "hbm_avail_gib": float,  # total_hbm_avail_gb: the KV budget of all the chips
    # SGLang boot logs (report/sglang.py), where the meaning differs from a core kind:
    "engine_kind": str,  # "sglang": the log is SGLang's (its pool arithmetic differs)
    "kv_alloc_tokens": int,  # "#tokens: N" of "KV Cache is allocated" (the K/V buffers hold N + page_size)
    "kv_k_gib": float,  # "K size: X GB" (SGLang's GB is 2**30 bytes)
    "kv_v_gib": float,  # "V size: X GB"
    "kv_size_gib": float,  # "KV size: X GB" (MLA models: one latent buffer)
    "kv_alloc_dtype": str,  # "dtype: torch.bfloat16" of the same line (the KV cache's torch dtype)
    # SGLang hybrids with sliding-window layers: two token pools, "Use sliding window memory
    # pool. full_layer_tokens=N, swa_layer_tokens=M" / "SWAKVPool mem usage: X GB, swa size:
    # M, full size: N"; a model whose every layer slides has the SWA pool alone.
    "sglang_full_tokens": int,
    "sglang_swa_tokens": int,
    "avail_after_weights_gib": float,  # "Load weight end. ... avail mem=X GB"
    "avail_after_pool_gib": float,  # "Memory pool end. avail mem=X GB"
    "mem_fraction_static": float,  # server_args mem_fraction_static
    # The workload seen (observed.py): /metrics' waiting gauge by reason (0.31+), and a
    # log's request lines (--enable-log-requests), one fact per request:
    "waiting_capacity_reqs": int,  # num_requests_waiting_by_reason{reason="capacity"}
    "waiting_deferred_reqs": int,  # reason="deferred": LoRA budget, KV transfer, blocked
    "request_max_tokens": int,  # "Received request ...: params: SamplingParams(... max_tokens=N"
    "request_prompt_tokens": int,  # the count of the line's prompt_token_ids
    "max_log_len": int,  # non-default args 'max_log_len': the request lines' ids are cut there
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ParseWarning:
    """A line that carries a known marker but could not be read (a near miss)."""

    line: int
    text: str
    source: str = "-"

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.text}"


Event = Fact | ParseWarning
