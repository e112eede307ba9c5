"""Hostile inputs, shared: example lines, hostile values, seeded mutators and
the hypothesis strategies built on them.

CI feeds the tool whatever a failed boot left behind, so the tests (and the
long fuzz run in tools/fuzz.py) start from real vLLM lines and damage them the
way captures do: truncated, glued, hard-wrapped, coloured, NUL-padded, with a
number swapped for a 10,000-digit one, ``nan`` or a negative. The mutators take
a ``random.Random`` so that a failing input is reproducible from its seed;
the hypothesis strategies wrap them (``st.randoms``) so hypothesis can shrink.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent
SAMPLE_LOGS = REPO / "sample_logs"

# One message (the text after vLLM's header) per row of patterns.ROWS, in
# vLLM's own wording (VLLM_LINES.md). test_patterns_linear.py checks that each
# row reads its example, so this table follows the patterns table.
ROW_EXAMPLES: dict[str, str] = {
    "weights": "Loading model weights took 14.9595 GB",
    "v0_profile_oneline": "Memory profiling results: total_gpu_memory=23.58GiB "
    "initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB "
    "non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90",
    "v0_profile_total": "the current vLLM instance can use total_gpu_memory (79.22GiB) x "
    "gpu_memory_utilization (0.90) = 71.30GiB",
    "v0_profile_split": "model weights take 14.96GiB; non_torch_memory takes 1.79GiB; PyTorch "
    "activation peak memory takes 1.26GiB; the rest of the memory reserved for KV Cache is 53.29GiB.",
    "profile_tabular": "total_gpu_memory     79.22GiB",
    "v1_profile_debug": "Memory profiling takes 40.46 seconds. Total non KV cache memory: "
    "62.79GiB; torch peak memory increase: 5.62GiB; non-torch forward increase memory: 2.04GiB; "
    "weights memory: 55.13GiB.",
    "available_kv": "Available KV cache memory: 3.31 GiB",
    "kv_bytes_mode": "Initial free memory 78.54 GiB, reserved 12.00GiB memory for KV Cache as "
    "specified by kv_cache_memory_bytes config and skipped memory profiling.",
    "cpu_kv_space": "Explicitly set (3.31/18.34) GiB for KV cache on node 0.",
    "free_memory_summary": "Free memory on device (30.27/31.4 GiB) on startup. Desired GPU memory "
    "utilization is (0.92, 28.88 GiB). Actual usage is 15.27 GiB for weight, 1.59 GiB for peak "
    "activation, 0.1 GiB for non-torch memory, and 0.09 GiB for CUDAGraph memory. Replace "
    "gpu_memory_utilization config with `--kv-cache-memory=12917635953` (12.03 GiB) to fit into "
    "requested memory.",
    "hpu_free_memory": "Free device memory: 94.62 GiB, 85.16 GiB usable (gpu_memory_utilization="
    "0.9), 8.516 GiB reserved for HPUGraphs (VLLM_GRAPH_RESERVED_MEM=0.1), 16 MiB reserved for KV "
    "cache dummy block 76.63 GiB reserved for usable KV cache",
    "hpu_num_blocks": "Usable num_blocks: 4903, actual allocated num_blocks: 4904 (_PAD_BLOCK_ID=0, "
    "_PAD_SLOT_ID=0)",
    "xpu_profile": "Before memory profiling run, total GPU memory: 24480.00 MB, model load takes "
    "15316.12 MB, free gpu memory is 8900.34 MB.",
    "tpu_hbm": "Memory statistics | total_hbm_limit_gb=125.0GiB | total_hbm_limit_cap_gb=112.5GiB | "
    "total_hbm_used_gb=16.42GiB | total_hbm_avail_gb=96.08GiB",
    "tpu_kv_cache": "Init kv-cache | num_layers=32 | shape=(num_blocks, (256, 8, 2, 128)) | "
    "num_blocks=[3168, 3168] | dtype=bfloat16 | hbm=[(28.49, 31.25)]Gb",
    "ascend_memory_bytes": "Available memory: 48318382080, total memory: 65787658240",
    "cpu_kvcache_space": "VLLM_CPU_KVCACHE_SPACE not set. Using 63.5 GiB for KV cache.",
    "spyre_blocks": "Spyre constraint: num blocks rounded from 2049 to 2080 (multiple of batch "
    "size=32)",
    "blocks_override": "Overriding num_gpu_blocks=8192 with num_gpu_blocks_override=2069",
    "cudagraph_util_hint": "The current --gpu-memory-utilization=0.8800 is equivalent to "
    "--gpu-memory-utilization=0.8592 without CUDA graph memory profiling.",
    "graph_capture": "Graph capturing finished in 36 secs, took 0.44 GiB",
    "graph_estimate": "Estimated CUDA graph memory: 0.44 GiB total",
    "graph_pool": "CUDA graph pool memory: 0.09 GiB (actual), 0.44 GiB (estimated)",
    "blocks": "# GPU blocks: 5691, # CPU blocks: 2048",
    "cpu_backend_blocks": "# CPU blocks: 1170",
    "pool_tokens": "GPU KV cache size: 24,096 tokens",
    "max_concurrency": "Maximum concurrency for 8,192 tokens per request: 2.94x",
    "cache_config_info": "Engine 000: vllm cache_config_info with initialization after "
    "num_gpu_blocks is: 1506",
    "max_model_len": "Using max model len 8192",
    "too_small_v0": "The model's max seq len (29000) is larger than the maximum number of tokens "
    "that can be stored in KV cache (23648). Try increasing `gpu_memory_utilization`",
    "too_small_v1": "To serve at least one request with the models's max seq len (221000), "
    "(10.12 GiB KV cache is needed, which is larger than the available KV cache memory "
    "(5.59 GiB). Based on the available memory, the estimated maximum model length is 122080.",
    "engine_config": "Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen3-8B', "
    "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=2, pipeline_parallel_size=1, "
    "data_parallel_size=1, quantization=None, kv_cache_dtype=fp8, enable_prefix_caching=True",
    "non_default_args": "non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'model': "
    "'Qwen/Qwen3-8B', 'max_model_len': 32768, 'gpu_memory_utilization': 0.95, 'block_size': 32}",
    "version": "vLLM API server version 0.11.0",
    "version_logo": " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.33.0",
    "model_logo": "  █▄█▀ █     █     █     █  model   meta-llama/Llama-3.1-8B",
    "starting_to_load": "Starting to load model openai/gpt-oss-120b...",
    "stats": "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 tokens/s, "
    "Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, "
    "CPU KV cache usage: 0.0%",
    "preemption_warning": "Sequence group 147 is preempted by PreemptionMode.RECOMPUTE mode "
    "because there is not enough KV cache space. total_num_cumulative_preemption=51",
    "block_size_set": "Setting attention block size to 544 tokens to ensure that attention page "
    "size is >= mamba page size.",
    "platform_block_size": "Using KV cache block size: 128",
    "spyre_config": "Configurations for Spyre. max_model_len=32768, max_num_seqs=32, block_size=64, "
    "max_num_batched_tokens=1024, enable_chunked_prefill=True, enable_prefix_caching=False",
    "hybrid_disabled": "Hybrid KV cache manager is disabled for this hybrid model.",
    "padding_layers": "Add 8 padding layers, may waste at most 15.38% KV cache memory",
    "mamba_cache_mode": "Mamba cache mode is set to 'align' for NemotronHForCausalLM by default "
    "when prefix caching is enabled",
    "platform": "Automatically detected platform cpu.",
    "kv_group_sizes": "kv cache group sizes (32, 32, 32, 32, 32, 32, 32)",
    "kv_lcm_block_size": "kv lcm block sizes 32",
}

# Physical lines as captures wrap them: process tags, vLLM's header in two
# vintages, Docker stamps, k9s borders, journald, caret-rendered colours.
PREFIXES: tuple[str, ...] = (
    "",
    "INFO 11-29 10:00:40 [kv_cache_utils.py:1087] ",
    "(EngineCore_DP0 pid=200) INFO 11-29 10:00:40 [gpu_worker.py:298] ",
    "(VllmWorker rank=1 pid=12) INFO 11-29 10:00:40 [gpu_worker.py:298] ",
    "INFO 08-18 14:14:59 worker.py:237] ",
    "2025-11-29T10:00:40.123456789Z (EngineCore pid=7) INFO 11-29 10:00:40 [x.py:1] ",
    "│ (EngineCore pid=7) INFO 11-29 10:00:40 [x.py:1] ",
    "Aug 18 14:14:59 host python3[28145]: INFO 08-18 14:14:59 [x.py:1] ",
    "^[[0;36m(EngineCore_DP0 pid=200)^[[0;0m INFO 11-29 10:00:40 [x.py:1] ",
    "\x1b[1;36m(EngineCore_DP0 pid=200)\x1b[0;0m WARNING 11-29 10:00:40 [x.py:1] ",
)

# Values no vLLM prints where a number belongs, and a few it does (the
# negative KV memory and the nan concurrency are real lines).
HOSTILE_NUMBERS: tuple[str, ...] = (
    "0",
    "0.0",
    "-0",
    "-1",
    "-2.14",
    "-24,096",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "NaN",
    "Infinity",
    "1e308",
    "1e-308",
    "18446744073709551616",
    "9" * 20,
    "9" * 21,
    "9" * 10_000,
    "1" + ",000" * 7,
    "1,2,3",
    "1.2.3",
    "0x10",
    "1_000",
    "٢٤٠٩٦",  # Arabic-Indic digits
    "２４０９６",  # full-width digits
    "",
)

# Damage a capture can do inside a line.
INSERTS: tuple[bytes, ...] = (
    b"\x00",
    b"\r",
    b"\r\n",
    b"\t",
    b"\x1b[0;36m",
    b"\x1b[0m",
    b"^[[0;36m",
    b"\x1b]8;;http://x\x07",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",  # a UTF-8-encoded surrogate: invalid
    b" \xe2\x94\x82 ",  # " │ "
    b"\n",
    b"(EngineCore_DP1 pid=9) ",
    b"INFO 11-29 10:00:40 [x.py:1] ",
)

_NUMBER = re.compile(rb"-?[0-9][0-9,]*(?:\.[0-9]+)?")


def seed_log_lines() -> list[bytes]:
    """Lines of every sample log plus every row example with a prefix: the
    material mutations start from."""
    out: list[bytes] = []
    for path in sorted(SAMPLE_LOGS.glob("*.log")):
        out.extend(path.read_bytes().splitlines())
    for i, msg in enumerate(ROW_EXAMPLES.values()):
        out.append((PREFIXES[i % len(PREFIXES)] + msg).encode())
    return out


def seed_logs() -> list[bytes]:
    """The sample logs, each whole."""
    return [p.read_bytes() for p in sorted(SAMPLE_LOGS.glob("*.log"))]


# -- mutators: (rng, lines, material) -> lines --------------------------------


def _pick(rng: random.Random, lines: list[bytes]) -> int:
    return rng.randrange(len(lines))


def swap_number(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Replace one number of a line with a hostile value."""
    i = _pick(rng, lines)
    spans = [m.span() for m in _NUMBER.finditer(lines[i])]
    if not spans:
        return lines
    a, b = rng.choice(spans)
    value = rng.choice(HOSTILE_NUMBERS).encode()
    lines[i] = lines[i][:a] + value + lines[i][b:]
    return lines


def insert_junk(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Insert NUL, CR, ANSI, a BOM, a stray byte or a tag somewhere in a line."""
    i = _pick(rng, lines)
    at = rng.randint(0, len(lines[i]))
    lines[i] = lines[i][:at] + rng.choice(INSERTS) + lines[i][at:]
    return lines


def truncate(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Cut a line short (a log cut mid-write)."""
    i = _pick(rng, lines)
    lines[i] = lines[i][: rng.randint(0, len(lines[i]))]
    return lines


def glue(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Join a line with the next (a capture lost the newline)."""
    if len(lines) < 2:
        return lines
    i = rng.randrange(len(lines) - 1)
    lines[i : i + 2] = [lines[i] + rng.choice((b"", b" ", b"\r")) + lines[i + 1]]
    return lines


def hard_wrap(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Break a line at a column (a terminal's hard wrap)."""
    i = _pick(rng, lines)
    if len(lines[i]) < 2:
        return lines
    at = rng.randint(1, len(lines[i]) - 1)
    lines[i : i + 1] = [lines[i][:at], lines[i][at:]]
    return lines


def splice(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Put a piece of another real line inside this one."""
    i = _pick(rng, lines)
    other = rng.choice(material)
    a = rng.randint(0, len(other))
    b = rng.randint(a, min(len(other), a + 200))
    at = rng.randint(0, len(lines[i]))
    lines[i] = lines[i][:at] + other[a:b] + lines[i][at:]
    return lines


def add_line(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Insert a real line (maybe a second pool line) somewhere."""
    lines.insert(rng.randint(0, len(lines)), rng.choice(material))
    return lines


def drop_line(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    if lines:
        del lines[_pick(rng, lines)]
    return lines


def repeat_line(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Repeat a line, or one token of it, many times."""
    i = _pick(rng, lines)
    if rng.random() < 0.5:
        lines[i : i + 1] = [lines[i]] * rng.randint(2, 50)
    else:
        words = lines[i].split(b" ")
        w = rng.randrange(len(words))
        words[w] = words[w] * rng.randint(2, 2000)
        lines[i] = b" ".join(words)
    return lines


def flip_bytes(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """Overwrite a few bytes with random ones (a damaged file)."""
    i = _pick(rng, lines)
    line = bytearray(lines[i])
    for _ in range(rng.randint(1, 4)):
        if line:
            line[rng.randrange(len(line))] = rng.randrange(256)
    lines[i] = bytes(line)
    return lines


def pad(rng: random.Random, lines: list[bytes], material: list[bytes]) -> list[bytes]:
    """A long run of spaces, digits or commas inside or at the end of a line."""
    i = _pick(rng, lines)
    run = rng.choice((b" ", b"\t", b"9", b",", b"0,", b"(")) * rng.randint(1, 70_000)
    at = rng.choice((len(lines[i]), rng.randint(0, len(lines[i]))))
    lines[i] = lines[i][:at] + run + lines[i][at:]
    return lines


MUTATORS: tuple[Callable[[random.Random, list[bytes], list[bytes]], list[bytes]], ...] = (
    swap_number,
    swap_number,
    swap_number,
    insert_junk,
    insert_junk,
    truncate,
    glue,
    hard_wrap,
    splice,
    add_line,
    drop_line,
    repeat_line,
    flip_bytes,
    pad,
)


def mutate_log(
    rng: random.Random, base: bytes, material: list[bytes], *, max_mutations: int = 6
) -> bytes:
    """A damaged copy of ``base``: 1..max_mutations mutators, and sometimes a
    whole-file change (no final newline, CRLF, UTF-16 with a BOM, a UTF-8 BOM)."""
    lines = base.splitlines() or [b""]
    for _ in range(rng.randint(1, max_mutations)):
        lines = rng.choice(MUTATORS)(rng, lines, material) or [b""]
    data = b"\n".join(lines)
    roll = rng.random()
    if roll < 0.7:
        data += b"\n"
    elif roll < 0.8:
        data = data.replace(b"\n", b"\r\n") + b"\r\n"
    elif roll < 0.85:
        text = data.decode("utf-8", errors="replace")
        data = b"\xff\xfe" + text.encode("utf-16-le")
    elif roll < 0.88:
        data = b"\xef\xbb\xbf" + data
    return data


# -- hypothesis strategies -----------------------------------------------------


@st.composite
def damaged_logs(draw: st.DrawFn, *, max_mutations: int = 6) -> bytes:
    """A sample log damaged by seeded mutations (see ``mutate_log``)."""
    rng = draw(st.randoms(use_true_random=False))
    bases = seed_logs()
    base = bases[rng.randrange(len(bases))]
    return mutate_log(rng, base, seed_log_lines(), max_mutations=max_mutations)


def hostile_numbers() -> st.SearchStrategy[str]:
    """Text where a number belongs: the table above, or random decimals,
    signs and exponents."""
    return st.one_of(
        st.sampled_from(HOSTILE_NUMBERS),
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.from_regex(r"\A-?[0-9,.]{1,40}\Z", fullmatch=True),
    )


def row_line_with_value() -> st.SearchStrategy[tuple[str, bytes]]:
    """(row name, a physical line of that row with its first number hostile)."""

    def build(args: tuple[str, str, str]) -> tuple[str, bytes]:
        name, prefix, value = args
        msg = ROW_EXAMPLES[name]
        m = re.search(r"-?[0-9][0-9,]*(?:\.[0-9]+)?", msg)
        if m:
            msg = msg[: m.start()] + value + msg[m.end() :]
        return name, (prefix + msg).encode("utf-8", errors="surrogatepass")

    return st.tuples(
        st.sampled_from(sorted(ROW_EXAMPLES)), st.sampled_from(PREFIXES), hostile_numbers()
    ).map(build)


# gzip, xz and zstd (vllm_logread/session/session.py reads them as compressed, exit 2).
_COMPRESSED_MAGIC = (b"\x1f\x8b", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")


def garbage_bytes() -> st.SearchStrategy[bytes]:
    """Bytes with no structure, with and without newlines, BOMs and NULs.

    Not the magic bytes of gzip, xz or zstd: a compressed input has its own
    answer (exit 2, "decompress it first"), not "no pool" (b"(\xb5/\xfd" found it)."""
    return st.one_of(
        st.binary(max_size=4096).filter(lambda b: not b.startswith(_COMPRESSED_MAGIC)),
        st.binary(max_size=512).map(lambda b: b"\xff\xfe" + b),
        st.binary(max_size=512).map(lambda b: b"\xfe\xff" + b),
        st.lists(st.sampled_from(INSERTS), max_size=60).map(b"".join),
    )


# -- the oracle: no value the input did not state ------------------------------

_ANSI_ANY = re.compile(
    r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]{0,200}(?:\x07|\x1b\\)|\^\[\[[0-9;]*m"
)
# Any decimal digit (Python's int() and the patterns' \d read every script's).
# Python literals count too: "non-default args" is read with ast.literal_eval,
# which takes 1_000, 0x10 and 1e3.
_NUM_TEXT = re.compile(
    r"[-+]?(?:0[xXoObB][0-9a-fA-F_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
)
# Kinds whose value is named, not quoted, by the line (docs/facts.md): the device
# word, the stats engine, flags, and a preemption warning that counts 1.
_DERIVED_KINDS = frozenset(
    {
        "device",
        "stats_engine",
        "hybrid_kv_disabled",
        "enable_prefix_caching",
        "engine_kind",
        # "kv cache group sizes (128, 128)": the count of the sizes, and the sizes joined
        "num_kv_cache_groups",
        # a request line's prompt_token_ids [7985, 264, ...]: the count of the ids
        "request_prompt_tokens",
        "kv_group_block_sizes",
    }
)


def input_text(data: bytes) -> str:
    """The input as the scanner decodes it (UTF-16 with a BOM, else UTF-8)."""
    if data[:2] == b"\xff\xfe":
        return data[2:].decode("utf-16-le", errors="replace")
    if data[:2] == b"\xfe\xff":
        return data[2:].decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")


# A fact's value is on its line or, for a hard-wrapped record, on the lines
# after it (stream.py joins them). A line that arrives whole in one read chunk
# (1 MiB) is read whole; the rest of a longer one is skipped.
_WINDOW_LINES = 64
_LINE_CHARS = 1 << 22


def _numbers_in(text: str) -> set[int | float]:
    """Numbers written in ``text``; commas removed as thousands separators only
    ("24,096"; "0.90,,," stays 0.90), and every one ("2,4096" from a wrap).
    Whole numbers are kept as ints, so a 20-digit value compares exactly."""
    out: set[int | float] = set()
    both = re.sub(r"(?<=\d),(?=\d{3})", "", text) + "\n" + text.replace(",", "")
    for tok in _NUM_TEXT.findall(both):
        try:
            if tok.lstrip("+-")[:2].lower() in ("0x", "0o", "0b"):
                out.add(int(tok, 0))
            elif any(c in tok for c in ".eE"):
                out.add(float(tok.replace("_", "")))
            else:
                out.add(int(tok.replace("_", "")))
        except ValueError:  # over Python's 4,300-digit limit, or "1__0"
            continue
    return out


class _Stated:
    """What the input states around a line, after the documented clean-ups:
    colour codes removed, thousands separators removed, wrapped lines rejoined.
    Each physical line is read once, however many facts point at it."""

    def __init__(self, data: bytes) -> None:
        self.lines = [ln[:_LINE_CHARS].rstrip("\r") for ln in input_text(data).split("\n")]
        self._numbers: dict[int, set[int | float]] = {}
        self._near: dict[int, tuple[set[int | float], set[float], tuple[str, ...]]] = {}

    def _numbers_at(self, i: int) -> set[int | float]:
        """Numbers of line i (0-based), and of its end joined with the starts of
        the next 1-3 lines (a hard wrap inside a number)."""
        if i not in self._numbers:
            line = self.lines[i]
            pieces = [line, _ANSI_ANY.sub("", line)]
            joined = line[-60:]
            for k in range(1, 4):
                if i + k < len(self.lines):
                    joined += self.lines[i + k][:60]
                    pieces.append(_ANSI_ANY.sub("", joined))
            self._numbers[i] = _numbers_in("\n".join(pieces))
        return self._numbers[i]

    def near(self, line: int) -> tuple[set[int | float], set[float], tuple[str, ...]]:
        """(numbers, the same as floats, texts) of lines ``line`` .. +63."""
        if line not in self._near:
            rows = range(max(line - 1, 0), min(line - 1 + _WINDOW_LINES, len(self.lines)))
            numbers: set[int | float] = set()
            for i in rows:
                numbers |= self._numbers_at(i)
            raw = "\n".join(self.lines[i] for i in rows)
            text = _ANSI_ANY.sub("", raw)
            floats = {float(n) for n in numbers if abs(n) < 1e308}
            self._near[line] = (numbers, floats, (raw, text, text.replace("\n", "")))
        return self._near[line]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# The facts a pool in tokens is read from: vLLM's pool line, and SGLang's lines
# that stand in when its scheduler's max_total_num_tokens line is missing: "KV Cache
# is allocated. #tokens: N" (SGLang sizes the pool to exactly N), and a sliding-window
# hybrid's full / SWA token pools (vllm_logread/boot/boots.py, Engine.stated_pool_facts).
POOL_TOKEN_KINDS = ("pool_tokens", "kv_alloc_tokens", "sglang_full_tokens", "sglang_swa_tokens")


def unstated_values(
    data: bytes, obj: dict[str, object], *, block_size: int | None = None
) -> list[str]:
    """Problems with one ``--json`` object read from ``data``: a fact or summary
    number the input does not state and no documented arithmetic produces, or
    users that do not fit in the pool. Empty when all is well."""
    problems: list[str] = []
    source = _Stated(data)
    facts = obj.get("facts") or []
    by_kind: dict[str, set[object]] = {}
    for f in facts:  # type: ignore[union-attr]
        kind, value = f["kind"], f["value"]
        by_kind.setdefault(kind, set()).add(value)
        if kind in _DERIVED_KINDS or isinstance(value, bool):
            continue
        numbers, as_floats, texts = source.near(int(f["line"]))
        if isinstance(value, str):
            if not value.isprintable():
                problems.append(f"fact {kind}={value!r} (line {f['line']}) has control characters")
            elif not any(value in t for t in texts):
                problems.append(f"fact {kind}={value!r} (line {f['line']}) is not in the input")
            continue
        if (
            not isinstance(value, (int, float))
            or value != value
            or value in (float("inf"), float("-inf"))
        ):
            problems.append(f"fact {kind}={value!r} is not a finite number")
            continue
        # A float fact is the stated text read as a float ("99999999999999999999" -> 1e20).
        ok = value in (numbers if isinstance(value, int) else as_floats)
        if kind == "preemptions" and value == 1:
            ok = True  # a warning without the total counts one (docs/facts.md)
        if kind.endswith("_gib") and not ok:
            # "MB" lines are MiB (/ 1024); Ascend prints bytes (/ 2**30); HPU's
            # format_bytes prints KiB and TiB too (patterns._sized).
            ok = any(
                abs(n) < 1e300
                and value
                in (
                    round(n / 1024, 6),
                    float(n) / 2**30,
                    round(n / 2**20, 6),
                    round(n * 1024.0, 6),
                )
                for n in numbers
            )
        if kind == "kv_usage_pct" and not ok:  # SGLang's "token usage: 0.59" is a fraction
            ok = any(
                abs(n) < 1e300 and round(float(n) * 100, k) == value
                for n in numbers
                for k in range(8)
            )
        if not ok:
            problems.append(f"fact {kind}={value!r} (line {f['line']}) is not stated in the input")

    def stated(kind: str, value: object) -> bool:
        return value in by_kind.get(kind, set())

    # SGLang states its KV memory as "K size: 26.90 GB, V size: 26.90 GB": the
    # pool's memory is their sum (sglang.py).
    for k in by_kind.get("kv_k_gib", set()):
        for v in by_kind.get("kv_v_gib", set()):
            for digits in range(2, 7):
                by_kind.setdefault("available_kv_gib", set()).add(round(k + v, digits))  # type: ignore[operator]
    for key, kinds in (
        ("available_kv_gib", ("available_kv_gib", "kv_size_gib")),
        ("vllm_max_concurrency", ("max_concurrency",)),
        ("concurrency_tokens", ("concurrency_tokens",)),
        ("max_model_len", ("max_model_len", "concurrency_tokens")),
    ):
        v = obj.get(key)
        if v is not None and not any(stated(k, v) for k in kinds):
            problems.append(f"{key}={v!r} is not a fact of the input")
    bs = obj.get("block_size")
    # Defaults: vLLM's 16 (GPU), 64 (XPU), 128 (CPU, HPU); SGLang's page_size 1;
    # the block sizes vLLM accepts, when the log's figures pick one (boot/resolve.py);
    # the block size the log's KV cache groups state. A hybrid model's block size
    # follows vLLM's rule from its config (TPU's from its max model len).
    by_rule = "rule" in str(obj.get("block_size_source"))
    if bs is not None and not (
        stated("block_size", bs)
        or stated("kv_lcm_block_size", bs)
        or bs in (1, 16, 32, 64, 128, 256)
        or bs == block_size
        or by_rule
    ):
        problems.append(f"block_size={bs!r} is neither stated, given nor a default")
    if isinstance(bs, int) and bs <= 0:
        problems.append(f"block_size={bs} is not positive")
    workload = obj.get("workload") or {}
    per_user = workload.get("blocks_per_user") if isinstance(workload, dict) else None

    def stated_pool(tokens: object) -> bool:
        return any(stated(k, tokens) for k in POOL_TOKEN_KINDS)

    for eng in obj.get("engines") or []:  # type: ignore[union-attr]
        nb, pool, users = eng["num_blocks"], eng["pool_tokens"], eng["users"]
        if nb is not None and isinstance(bs, int) and bs > 0:
            if not (
                stated("gpu_blocks", nb)
                or stated_pool(nb * bs)
                or (pool is not None and stated_pool(pool))
            ):
                problems.append(f"engine {eng['engine']}: num_blocks={nb} is not from the input")
        if pool is not None and not (
            stated_pool(pool) or (nb is not None and isinstance(bs, int) and pool == nb * bs)
        ):
            problems.append(f"engine {eng['engine']}: pool_tokens={pool} is not from the input")
        # A boot that serves nobody (a failure: its engine died) serves 0 whatever
        # its pool: 0 there is what happened, not a division of the pool.
        if users is not None and not (users == 0 and obj.get("failure") is not None):
            if nb is None or nb < 0:
                problems.append(f"engine {eng['engine']}: {users} users from no usable pool ({nb})")
            elif users < 0:
                problems.append(f"engine {eng['engine']}: negative users {users}")
            elif isinstance(per_user, int) and per_user > 0 and users * per_user > nb:
                problems.append(
                    f"engine {eng['engine']}: {users} users x {per_user} blocks > {nb} blocks"
                )
    return problems


TPUT = "Avg prompt throughput: 1234.5 tokens/s, Avg generation throughput: 456.7 tokens/s"
# Every wording of vLLM's stats line (VLLM_LINES.md 3.10), and shapes near it.
STATS_MESSAGES = {
    # vLLM's wordings (VLLM_LINES.md 3.10), the fast path reads these:
    "v0_0_4_2": f"{TPUT}, Running: 12 reqs, Swapped: 0 reqs, Pending: 3 reqs, "
    "GPU KV cache usage: 7.3%, CPU KV cache usage: 0.0%",
    "v0_0_6": f"{TPUT}, Running: 12 reqs, Swapped: 0 reqs, Pending: 3 reqs, "
    "GPU KV cache usage: 7.3%, CPU KV cache usage: 0.0%.",
    "v1_0_7_3": f"{TPUT}, Running: 24 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.5%, "
    "Prefix cache hit rate: 43.2%",
    "v1_0_8_3": f"Engine 000: {TPUT}, Running: 24 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 12.5%, Prefix cache hit rate: 43.2%",
    "v1_0_14_preempt": f"Engine 000: {TPUT}, Running: 24 reqs, Waiting: 3 reqs, Preemptions: 2, "
    "GPU KV cache usage: 97.1%, Prefix cache hit rate: 43.2%",
    "v1_aggregated": f"2 Engines Aggregated: {TPUT}, Running: 48 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 50.0%, Prefix cache hit rate: 0.0%",
    "v1_0_20_deferred": f"Engine 001: {TPUT}, Running: 24 reqs, Waiting: 3 reqs, "
    "Deferred: 1 reqs, GPU KV cache usage: 97.1%, Prefix cache hit rate: 43.2%",
    "v1_0_30_xpu": f"Engine 000: {TPUT}, Running: 1 reqs, Waiting: 0 reqs, "
    "XPU KV cache usage: 3.0%, Prefix cache hit rate: 0.0%",
    "v1_0_31_no_prefix": f"Engine 000: {TPUT}, Running: 1 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 3.0%",
    "v1_0_32_all_parts": f"Engine 000: {TPUT}, Running: 5 reqs, Waiting: 0 reqs, "
    "KV fetch: 1 waiting to start, 2 in progress, 3 completed waiting, Preemptions: 1, "
    "GPU KV cache usage: 3.0%, Prefix cache hit rate: 1.0%, Corrupted: 0 reqs, "
    "External prefix cache hit rate: 2.0%, MM cache hit rate: 3.0%",
    "whole_numbers": "Avg prompt throughput: 0 tokens/s, Avg generation throughput: 12 tokens/s, "
    "Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0%",
    "twenty_digits": "Avg prompt throughput: 12345678901234567890.123456789012 tokens/s, "
    "Avg generation throughput: 1.5 tokens/s, Running: 99999999999999999999 reqs, "
    "Waiting: 0 reqs, GPU KV cache usage: 1.0%",
    # ... and these it leaves to the general path:
    "v1_0_7_1_no_comma": f"{TPUT}, Running: 2 reqs, Waiting: 0 reqs GPU KV cache usage: 1.5%.",
    "nan": "Avg prompt throughput: nan tokens/s, Avg generation throughput: 0.0 tokens/s, "
    "Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%",
    "twenty_one_digits": "Avg prompt throughput: 123456789012345678901.0 tokens/s, "
    "Avg generation throughput: 1.5 tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 1.0%",
    "engine_5_digits": f"Engine 00000: {TPUT}, Running: 1 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 1.0%",
    "trailing_text": f"{TPUT}, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0% (x)",
    "ray_dedup": f"{TPUT}, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0% "
    "[repeated 3x across cluster]",
    "with_pool_marker": f"{TPUT}, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
    "GPU KV cache size: 5 tokens",
    "cut": "Avg prompt throughput: 1.0 tokens/s, Avg generation",
}
# The wordings the scanner's whole-line regex (stats.STATS_LINE) leaves to the row.
STATS_SLOW_MESSAGES = (
    "v1_0_7_1_no_comma",
    "nan",
    "twenty_one_digits",
    "engine_5_digits",
    "trailing_text",
    "ray_dedup",
    "with_pool_marker",
    "cut",
)
