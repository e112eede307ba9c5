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

from ..boots import Boot
from ..capacity import Workload, users_that_fit
from ..rules import has_null_block
from .model import Failure


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


def boot_failure(
    boot: Boot,
    *,
    gen: str | None,
    block_size: int | None,
    max_model_len: int | None,
    num_blocks: int | None,
    workload: Workload,
) -> Failure | None:
    """Why this boot serves nobody, or None when nothing in the log says so."""
    too_small = boot.first("kv_too_small")
    if too_small is not None:
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
    failed = boot.first("engine_failed")
    if failed is not None and (num_blocks is not None or boot.has_pool):
        return Failure(
            cause="the engine failed to start after stating its pool, so that pool never served",
            line=failed.line,
            fix=("fix the error printed above this line and boot again",),
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
                    + _users_once_booted(pool_tokens, block_size, workload, gen),
                ),
                serve_args=("--max-model-len", str(pool_tokens)),
            )
    return None
