"""Spec + pool + workload -> users, charged the way vLLM charges a request.

vLLM hands out KV memory in blocks of ``block_size`` tokens from one pool. A
request that holds ``n`` tokens of context owns ``ceil(n / block_size)``
blocks of each full-attention KV cache group. With the seed numbers (Qwen3-8B
on an L4): 24,096 tokens / 16 = 1,506 blocks; vLLM keeps one as its null
block, so 1,505 are usable; a user of 512 prompt + 128 output tokens holds 640
tokens = 40 blocks, so 1,505 // 40 = 37 users fit at the end of their answers,
and 1,505 // ceil(576 / 16) = 1,505 // 36 = 41 mid-answer.
"""

from __future__ import annotations

from dataclasses import dataclass


def cdiv(a: int, b: int) -> int:
    """Ceiling division, as vLLM's ``cdiv``.

    >>> cdiv(640, 16), cdiv(641, 16)
    (40, 41)
    """
    return -(-a // b)


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """Tokens one user holds: its prompt and the answer it gets."""

    prompt_tokens: int = 512
    output_tokens: int = 128

    @property
    def tokens_per_user(self) -> int:
        """Context held at the end of the answer."""
        return self.prompt_tokens + self.output_tokens

    @property
    def tokens_mid_answer(self) -> int:
        """Context held halfway through the answer (prompt + half the output)."""
        return self.prompt_tokens + self.output_tokens // 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Capacity:
    """How many users of a workload fit in a pool, with the arithmetic's parts.

    Attributes:
        num_blocks: blocks in the pool as vLLM allocated it.
        usable_blocks: blocks a request can get (V1 keeps one null block).
        block_size: tokens per block.
        blocks_per_user: blocks one user holds at the end of its answer.
        users: ``usable_blocks // blocks_per_user``.
        blocks_per_user_mid: blocks one user holds mid-answer.
        users_mid_answer: ``usable_blocks // blocks_per_user_mid``.
        is_exact: False when the model's layout is not modelled exactly.
    """

    num_blocks: int
    usable_blocks: int
    block_size: int
    blocks_per_user: int
    users: int
    blocks_per_user_mid: int
    users_mid_answer: int
    is_exact: bool = True


def blocks_for_tokens(num_tokens: int, block_size: int) -> int:
    """Blocks one request holding ``num_tokens`` of context owns (full attention).

    >>> blocks_for_tokens(640, 16)
    40
    """
    return cdiv(max(num_tokens, 0), block_size)


def users_that_fit(
    *, num_blocks: int, block_size: int, workload: Workload, has_null_block: bool = True
) -> Capacity:
    """Users of ``workload`` that fit in ``num_blocks`` blocks (one KV cache group).

    Args:
        num_blocks: the pool in blocks (``# GPU blocks``, or pool tokens / block size).
        block_size: tokens per block; must be positive.
        workload: prompt and output tokens per user.
        has_null_block: V1 reserves block 0 of the pool as a null block.

    >>> c = users_that_fit(num_blocks=1506, block_size=16, workload=Workload())
    >>> (c.usable_blocks, c.blocks_per_user, c.users, c.users_mid_answer)
    (1505, 40, 37, 41)
    """
    if block_size <= 0:
        raise ValueError(f"block size must be positive, got {block_size}")
    usable = max(num_blocks - (1 if has_null_block else 0), 0)
    per_user = max(blocks_for_tokens(workload.tokens_per_user, block_size), 1)
    per_user_mid = max(blocks_for_tokens(workload.tokens_mid_answer, block_size), 1)
    return Capacity(
        num_blocks=num_blocks,
        usable_blocks=usable,
        block_size=block_size,
        blocks_per_user=per_user,
        users=usable // per_user,
        blocks_per_user_mid=per_user_mid,
        users_mid_answer=usable // per_user_mid,
    )
