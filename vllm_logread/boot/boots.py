"""Facts -> boots -> what each engine said, applying vLLM's process rules.

A log may hold several boots (a restart, two runs pasted together); each has
one or more engines. vLLM's rules, which we mirror:

* Tensor- and pipeline-parallel ranks are one engine. Every rank computes its
  own block count and the engine schedules from the smallest, so the engine's
  pool is the minimum any line of that engine states, and we say when they
  disagree. Before 0.11.1 the engine prints its pool line once per worker:
  those repeats count once.
* Data-parallel engines (``EngineCore_DP0``, ``EngineCore_DP1``, ...) each own
  a pool: users per engine, and for the deployment their sum.

A new boot starts when a line restates what the current boot already said
after its pool was known (a second version banner, config line, weights line
or "Available KV cache memory" from the same process), or when vLLM says the
KV cache cannot hold one request (that run never got a pool).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..read.facts import Fact, Value
from ..vllm.rules import (
    DEFAULT_MAX_NUM_BATCHED_TOKENS_TRIED,
    pool_lines_per_worker,
    prints_max_concurrency,
)
from ..vllm.versions import Version

# Kinds that describe how a server was started: restated after a pool, they
# mean a new boot. Stats kinds never do.
_BOOT_KINDS = frozenset(
    {
        "vllm_version",
        "model",
        "max_model_len",
        "weights_gib",
        "available_kv_gib",
        "total_gpu_gib",
        "tensor_parallel_size",
        "kv_cache_dtype",
    }
)


POOL_KINDS = frozenset({"pool_tokens", "gpu_blocks"})


# What a person typed beside the log (a pasted `vllm serve NAME --max-model-len N`, an
# lm_eval or LLM(...) line: read/patterns.py rows pasted_command, script_model_args)
# stands in for the engine's own statement only when the engine made none: the engine's
# config line is what ran. Not among _BOOT_KINDS: a command pasted again after the log is
# no restart.
_TYPED_STAND_INS: dict[str, tuple[str, ...]] = {
    "model": ("model_named", "served_model_name"),
    "max_model_len": ("max_model_len_named",),
}

# SGLang's lines that state its pool besides the scheduler's max_total_num_tokens.
SGLANG_POOL_KINDS = frozenset({"kv_alloc_tokens", "sglang_full_tokens", "sglang_swa_tokens"})


STATS_KINDS = frozenset(
    {
        "running_reqs",
        "waiting_reqs",
        "swapped_reqs",
        "kv_usage_pct",
        "prefix_hit_pct",
        "prompt_tps",
        "generation_tps",
        "stats_engine",
    }
)


def engine_key(process: str | None) -> str:
    """The engine a process tag belongs to: TP/PP workers fold into their engine.

    ``EngineCore_DP1 pid=7`` -> ``DP1``; ``Worker_DP1_TP0 pid=9`` -> ``DP1``;
    anything else (EngineCore, Worker_TP1, VllmWorkerProcess, no tag) -> ``DP0``.

    >>> engine_key("EngineCore_DP1 pid=7"), engine_key("Worker_TP1 pid=3"), engine_key(None)
    ('DP1', 'DP0', 'DP0')
    """
    if not process:
        return "DP0"
    name = process.split(" pid=")[0]
    for part in name.replace(" ", "_").split("_"):
        if part.startswith("DP") and part[2:].isdigit():
            return f"DP{int(part[2:])}"
    if name.startswith("EngineCore_") and name[11:].isdigit():  # 0.8.3-0.10.1 "EngineCore_0"
        return f"DP{int(name[11:])}"
    return "DP0"


def process_label(process: str) -> str:
    """A process tag without its pid and address: the name vLLM gave the process.

    >>> process_label("VllmWorker rank=1 pid=77"), process_label("RayWorkerWrapper pid=7, ip=10.0.0.1")
    ('VllmWorker rank=1', 'RayWorkerWrapper')
    """
    return process.split(" pid=")[0]


@dataclass(slots=True)
class Engine:
    """What one engine (a DP rank, with its TP/PP workers) stated."""

    key: str
    pool_facts: list[Fact] = field(default_factory=list)
    block_facts: list[Fact] = field(default_factory=list)
    concurrency_facts: list[Fact] = field(default_factory=list)
    # SGLang's pool when its scheduler line is missing (report/sglang.py): the full
    # token pool of a sliding-window hybrid ("full_layer_tokens=N"), the SWA pool of a
    # model whose every layer slides, else "KV Cache is allocated. ... #tokens: N" (SGLang
    # sizes the pool to exactly N).
    sglang_pool_facts: list[Fact] = field(default_factory=list)

    @property
    def stated_pool_facts(self) -> list[Fact]:
        """The facts the pool is read from: the pool line's, else SGLang's stand-ins,
        the most specific first."""
        if self.pool_facts:
            return self.pool_facts
        for kind in ("sglang_full_tokens", "sglang_swa_tokens", "kv_alloc_tokens"):
            facts = [f for f in self.sglang_pool_facts if f.kind == kind]
            if facts:
                return facts
        return []

    @property
    def pool_tokens(self) -> int | None:
        vals = [int(f.value) for f in self.stated_pool_facts]
        return min(vals) if vals else None

    @property
    def gpu_blocks(self) -> int | None:
        vals = [int(f.value) for f in self.block_facts]
        return min(vals) if vals else None

    @property
    def max_concurrency(self) -> Fact | None:
        if not self.concurrency_facts:
            return None
        return min(self.concurrency_facts, key=lambda f: float(f.value))

    @property
    def has_pool(self) -> bool:
        return bool(self.pool_facts or self.block_facts or self.sglang_pool_facts)

    @property
    def ranks_disagree(self) -> bool:
        return (
            len({f.value for f in self.stated_pool_facts}) > 1
            or len({f.value for f in self.block_facts}) > 1
        )

    @property
    def pool_line(self) -> int | None:
        facts = self.stated_pool_facts or self.block_facts
        return facts[0].line if facts else None


@dataclass(slots=True)
class Boot:
    """One start of a server: its facts, in input order, and its engines."""

    index: int
    facts: list[Fact] = field(default_factory=list)
    engines: dict[str, Engine] = field(default_factory=dict)
    # (kind, process) pairs stated so far, to see a restart.
    _said: set[tuple[str, str | None]] = field(default_factory=set)
    # Stats lines were read for this boot (outside --json they are not among its
    # facts): it served, so an error after its pool was not the end of its start-up.
    has_load: bool = False
    # No more lines will come for this boot (the input ended, or another boot began): a
    # traceback's head with no exception line after it is then all the log will say
    # (report/failure.py).
    input_ended: bool = False

    @property
    def has_pool(self) -> bool:
        return any(e.has_pool for e in self.engines.values())

    @property
    def pool_engines(self) -> list[Engine]:
        return [e for e in sorted(self.engines.values(), key=lambda e: e.key) if e.has_pool]

    def first(self, kind: str) -> Fact | None:
        found = next((f for f in self.facts if f.kind == kind), None)
        if found is None and kind in _TYPED_STAND_INS:
            return next((f for k in _TYPED_STAND_INS[kind] if (f := self.first(k))), None)
        return found

    def last(self, kind: str) -> Fact | None:
        found = next((f for f in reversed(self.facts) if f.kind == kind), None)
        if found is None and kind in _TYPED_STAND_INS:
            return next((f for k in _TYPED_STAND_INS[kind] if (f := self.last(k))), None)
        return found

    def all(self, kind: str) -> list[Fact]:
        return [f for f in self.facts if f.kind == kind]

    def value(self, kind: str) -> Value | None:
        f = self.first(kind)
        return None if f is None else f.value

    def kinds(self) -> set[str]:
        return {f.kind for f in self.facts}

    def call_sites(self) -> dict[tuple[str, int], int]:
        """The logger calls that printed this boot's lines, ``("kv_cache_utils.py", 716)``,
        each with the first log line that showed it (fingerprint.py reads the release
        from them; docs/fingerprint.md)."""
        out: dict[tuple[str, int], int] = {}
        for f in self.facts:
            if f.site is not None:
                file, _, num = f.site.rpartition(":")
                if file and num.isdigit():
                    out.setdefault((file, int(num)), f.line)
        return out

    def process_labels(self) -> dict[str, int]:
        """The names vLLM gave this boot's processes (the tag without its pid:
        ``EngineCore_DP0``, ``VllmWorker rank=1``), each with its first line."""
        out: dict[str, int] = {}
        for f in self.facts:
            if f.process:
                out.setdefault(process_label(f.process), f.line)
        return out

    def add(self, fact: Fact) -> None:
        self.facts.append(fact)
        self._said.add((fact.kind, fact.process))
        if fact.kind in ("pool_tokens", "gpu_blocks", "max_concurrency") or (
            fact.kind in SGLANG_POOL_KINDS
        ):
            key = engine_key(fact.process)
            eng = self.engines.setdefault(key, Engine(key=key))
            if fact.kind == "pool_tokens":
                eng.pool_facts.append(fact)
            elif fact.kind == "gpu_blocks":
                eng.block_facts.append(fact)
            elif fact.kind in SGLANG_POOL_KINDS:
                eng.sglang_pool_facts.append(fact)
            else:
                eng.concurrency_facts.append(fact)

    def restates_version(self, line_facts: list[Fact]) -> bool:
        """Whether this line states the version again from an engine that
        stated its pool: once the boot is reported, a restart even from new
        processes (new pids; ``restarts_with`` needs the same process), as
        vLLM states its version once per boot, before the pool. Not from an
        engine that has no pool yet (a late data-parallel engine)."""
        pool_keys = {e.key for e in self.pool_engines}
        return any(
            f.kind == "vllm_version" and engine_key(f.process) in pool_keys for f in line_facts
        ) and not self.restarts_with(line_facts)

    def restarts_with(self, line_facts: list[Fact]) -> bool:
        """Whether this line's facts begin a new boot (see module docstring)."""
        if not self.has_pool:
            return False
        if any(f.kind == "kv_too_small" for f in line_facts):
            # V0 states its blocks, then raises on them (restating max_model_len):
            # the same boot. V1 checks before it prints a pool: after a pool,
            # another run.
            return not self.all("gpu_blocks") or bool(self.all("pool_tokens"))
        # vLLM 0.26+ prints its memory summary ("Free memory on device (x/TOTAL
        # GiB) ... Current kv cache memory in use is AVAIL GiB") after the pool:
        # the same KV memory again is this boot's summary, not another boot.
        is_summary = any(f.kind == "requested_gib" for f in line_facts)
        for f in line_facts:
            if f.kind in _BOOT_KINDS and (f.kind, f.process) in self._said:
                if is_summary and f.kind in ("available_kv_gib", "total_gpu_gib"):
                    said = self.first(f.kind)
                    if said is not None and said.value == f.value:
                        continue
                return True
        return False


class BootTracker:
    """Feeds facts (in input order) into boots; streaming-friendly."""

    def __init__(self) -> None:
        self.boots: list[Boot] = [Boot(index=0)]
        self._line: int | None = None
        self._line_facts: list[Fact] = []

    @property
    def current(self) -> Boot:
        return self.boots[-1]

    def add_line(self, facts: list[Fact]) -> bool:
        """Add the facts of one line; return True if they began a new boot."""
        new = False
        if facts and self.current.restarts_with(facts):
            self.current.input_ended = True
            self.boots.append(Boot(index=len(self.boots)))
            new = True
        for f in facts:
            self.current.add(f)
        return new

    def end_of_input(self) -> None:
        """The input ended: the current boot says no more."""
        self.current.input_ended = True

    def add_all(self, facts: Iterable[Fact]) -> None:
        """Add facts, grouping consecutive facts of the same line."""
        line: list[Fact] = []
        for f in facts:
            if line and (f.line != line[0].line or f.source != line[0].source):
                self.add_line(line)
                line = []
            line.append(f)
        if line:
            self.add_line(line)


_POOL_LINE_KINDS = frozenset(
    {
        "pool_tokens",
        "gpu_blocks",
        "cpu_blocks",
        "device",
        "max_concurrency",
        "concurrency_tokens",
        # 0.31+ hybrids follow their pool line with these, which settle the
        # layout and block size: a report given before them is given again
        # when they change its figures.
        "num_kv_cache_groups",
        "kv_lcm_block_size",
        *SGLANG_POOL_KINDS,
    }
)


def _all_engines_spoke(boot: Boot) -> bool:
    """Whether every data-parallel engine the config announced stated a pool."""
    dp = boot.value("data_parallel_size")
    expected = int(dp) if isinstance(dp, int) and dp > 0 else 1
    return len(boot.pool_engines) >= expected


def _boot_complete(boot: Boot, line: list[Fact]) -> bool:
    """Whether the boot has said what it will say about its pool.

    Every engine states its pool, then (V0 0.6.3+, V1 0.7.1+) its maximum
    concurrency: on one line from 0.28, on the next line before. Before
    0.11.1 V1 prints both once per TP/PP worker (N identical pairs). So the
    boot is complete on the concurrency line that leaves no engine and no
    worker's repeat to wait for; for versions without a concurrency line, on
    the pool line itself. A line of another kind after the pool (graph
    capture, a stats line) also closes it; when neither comes, a live pipe's
    silence does (``Session.quiet``).
    """
    if not boot.has_pool:
        return False
    if boot.value("engine_kind") == "sglang" and not any(e.pool_facts for e in boot.pool_engines):
        # SGLang states its pool again, with max_running_requests, in the scheduler's
        # line after its CUDA graphs: wait for it (or for silence, or the end of input).
        return False
    kinds = {f.kind for f in line}
    all_spoke = _all_engines_spoke(boot)
    if not kinds & _POOL_LINE_KINDS:
        return all_spoke or bool(kinds & STATS_KINDS)
    if not all_spoke:
        return False
    version = Version.parse(str(boot.value("vllm_version") or ""))
    gen = engine_generation(boot)
    # An unknown version: wait for the concurrency line, or for silence.
    prints_concurrency = prints_max_concurrency(version, gen)
    repeats = 1
    if pool_lines_per_worker(version, gen):
        tp = boot.value("tensor_parallel_size")
        pp = boot.value("pipeline_parallel_size")
        repeats = (int(tp) if isinstance(tp, int) else 1) * (int(pp) if isinstance(pp, int) else 1)
    for eng in boot.pool_engines:
        if eng.concurrency_facts:
            if len(eng.concurrency_facts) < repeats:
                return False
        elif prints_concurrency:
            return False
    return True


# Kinds of vLLM's "Free memory on device ... --kv-cache-memory=N" hint line (0.11+):
# its N is a suggestion, not a setting.
_KV_MEMORY_HINT_KINDS = frozenset(
    {"total_gpu_gib", "requested_gib", "consumed_gib", "activation_peak_gib"}
)


def kv_cache_memory_set(boot: Boot) -> Fact | None:
    """The last ``kv_cache_memory_bytes`` fact the boot *set* (non-default args,
    /metrics' cache_config_info), never the figure vLLM's free-memory hint suggests
    (sample_logs/era_0_32_0.log, line 16: ``--kv-cache-memory=59482981131`` on the
    line that states 1.23 GiB of peak activation); None when none was set."""
    hint_lines = {f.line for f in boot.facts if f.kind in _KV_MEMORY_HINT_KINDS}
    found = [f for f in boot.all("kv_cache_memory_bytes") if f.line not in hint_lines]
    return found[-1] if found else None


def engine_generation(boot: Boot) -> str | None:
    """V0 or V1, from the lines only V0 or only V1 prints."""
    for f in boot.facts:
        if f.kind == "cpu_blocks" or f.kind == "swapped_reqs":
            return "V0"
        if f.kind == "pool_tokens":
            return "V1"
    if boot.first("gpu_blocks") and not boot.first("cpu_blocks"):
        dev = boot.value("device")
        if dev in ("GPU",):
            return "V1"  # 0.6.4-0.7.3 V1 printed "# GPU blocks: N" alone
    if boot.first("waiting_reqs") and not boot.first("swapped_reqs"):
        return "V1"
    return None


def _mnbt_tried(boot: Boot) -> tuple[int, ...]:
    """The stated max_num_batched_tokens, else vLLM's defaults to try
    (rules.DEFAULT_MAX_NUM_BATCHED_TOKENS_TRIED)."""
    f = boot.last("max_num_batched_tokens")
    return (int(f.value),) if f is not None else DEFAULT_MAX_NUM_BATCHED_TOKENS_TRIED


@dataclass(frozen=True, slots=True, kw_only=True)
class RanksSeen:
    """The worker ranks a boot's labels show (``worker_rank`` facts, read/lines.py's
    worker_label): evidence of a parallel layout the config line may not state.

    Attributes:
        num_ranks: distinct ranks seen, a lower bound (a rank that printed nothing
            the reader keeps is not seen); V0's ``VllmWorkerProcess`` labels rank 1
            and up, so its driver (rank 0) adds one.
        tensor_parallel_size, pipeline_parallel_size: the highest TP / PP index a
            label names, plus one (None: no label names that part).
        labels: the labels, in order of first appearance.
    """

    num_ranks: int
    tensor_parallel_size: int | None
    pipeline_parallel_size: int | None
    labels: tuple[str, ...]

    @property
    def text(self) -> str:
        """``4 ranks seen (TP0..TP3)``, ``7 ranks seen (6 VllmWorkerProcess + the
        driver)``, ``2 ranks seen (rank0, rank1)`` for a person."""
        procs = [lb.split(" pid=")[0] for lb in self.labels if " pid=" in lb]
        if procs:
            kinds = ", ".join(f"{procs.count(k)} {k}" for k in dict.fromkeys(procs))
            driver = " + the driver" if self.num_ranks > len(set(self.labels)) else ""
            return f"{self.num_ranks} ranks seen ({kinds}{driver})"
        ordered = sorted(self.labels, key=lambda lb: [int(x) for x in re.findall(r"\d+", lb)])
        shown = ", ".join(ordered) if len(ordered) <= 2 else f"{ordered[0]}..{ordered[-1]}"
        return f"{self.num_ranks} ranks seen ({shown})"


def ranks_seen(boot: Boot) -> RanksSeen | None:
    """The ranks ``boot``'s worker labels show, or None when they show one or none.

    >>> b = Boot(index=0)
    >>> for i in range(4):
    ...     b.add(Fact(kind="worker_rank", value=f"TP{i}", line=i + 1))
    >>> r = ranks_seen(b)
    >>> r.num_ranks, r.tensor_parallel_size, r.text
    (4, 4, '4 ranks seen (TP0..TP3)')
    """
    labels = list(dict.fromkeys(str(f.value) for f in boot.all("worker_rank")))
    if not labels:
        return None
    ranks: set[str] = set()
    top: dict[str, int] = {}
    driver = 0
    for label in labels:
        if " pid=" in label:  # a process, one rank each
            ranks.add(label)
            driver = max(driver, int(label.startswith("VllmWorkerProcess")))
            continue
        if label.startswith("rank"):  # "rank=2" (VllmWorker), "rank2" (torchrun)
            ranks.add(label)
            continue
        ident = []
        for part in label.replace(" ", "_").split("_"):
            kind = part.rstrip("0123456789")
            index = int(part[len(kind) :] or 0)
            if kind in ("TP", "PP", "DP", "PCP", "DCP"):  # EP is DP x TP's, no rank of its own
                ident.append(part)
                top[kind] = max(top.get(kind, 0), index + 1)
        ranks.add("_".join(ident) or label)
    num = len(ranks) + driver
    if num <= 1:
        return None
    return RanksSeen(
        num_ranks=num,
        tensor_parallel_size=top.get("TP"),
        pipeline_parallel_size=top.get("PP"),
        labels=tuple(labels),
    )


def stage_kv_memory(boot: Boot) -> dict[int, Fact]:
    """Each pipeline stage's "Available KV cache memory", the smallest its ranks state
    (its TP ranks share one pool): ``{0: PP0's fact, 1: PP1's}``, from the ``PPk`` of
    the worker labels (``Worker_PP1_TP0``, ``VllmWorker PP1_TP0``). Empty when no
    line names a stage (no PP, or only the first rank prints, 0.11.1+)."""
    from ..read.lines import worker_label

    out: dict[int, Fact] = {}
    for f in boot.all("available_kv_gib"):
        label = worker_label(f.process) or ""
        stage = next(
            (int(p[2:]) for p in label.split("_") if p.startswith("PP") and p[2:].isdigit()),
            None,
        )
        if stage is not None and (stage not in out or float(f.value) < float(out[stage].value)):
            out[stage] = f
    return out
