"""Unknowns as candidates, stated figures as constraints.

A value the report uses is stated (a fact with its line), given (an option, a
config) or assumed. An assumed block size is a list of candidates, each with
where it comes from: first the platform's defaults for the log's version
(``rules.default_block_sizes``), then, when none of those reproduces the log's own
figures, every block size vLLM accepts (``other_block_sizes``). The caller
tries each candidate against the stated figures (the pool line, the printed
concurrency, the KV memory); what survives decides, and a users figure is exact
only when every survivor gives it.

Why the platform alone does not settle it: from 0.8 to 0.29 every platform's
pool line says "GPU KV cache size" (CPU, TPU, HPU and NPU builds included), and
a CPU build's default moved from 16 to 128 (0.8.4 to 0.11.0 only with IPEX).
"""

from __future__ import annotations

from ..rules import KERNEL_BLOCK_SIZES, BlockSizeCandidate


def other_block_sizes(tried: tuple[BlockSizeCandidate, ...]) -> tuple[BlockSizeCandidate, ...]:
    """Every other block size vLLM accepts, for when no default fits the log."""
    seen = {t.block_size for t in tried}
    return tuple(
        BlockSizeCandidate(
            bs, f"the block size that reproduces the log's figures ({bs} tokens; not stated)"
        )
        for bs in KERNEL_BLOCK_SIZES
        if bs not in seen
    )
