"""SGLang boot logs -> the same report: its pool is in tokens, handed out in pages.

SGLang states its KV pool twice at boot: ``KV Cache is allocated. #tokens: N,
K size: X GB, V size: Y GB`` (mem_cache/memory_pool.py, one line per TP rank)
and ``max_total_num_tokens=N, ..., max_running_requests=R, context_len=L``
(managers/scheduler.py). The lines are rows of read/patterns.py; this module does
the arithmetic, which differs from vLLM's in three ways:

* The pool is counted in tokens and a request holds ``ceil(tokens /
  page_size)`` pages of ``page_size`` tokens (``--page-size``, 1 by default;
  some attention backends raise it, and say so). A user of 512 + 128 tokens
  holds 640 slots at page size 1, or 10 pages of 64 at page size 64.
* No null block inside the pool. The allocator hands out slots 1..N
  (``TokenToKVPoolAllocator.clear``: ``free_pages = arange(1, size + 1)``;
  the paged allocator: pages 1..size // page_size): slot 0 "is used for
  writing dummy outputs from padded tokens" and the K and V buffers are
  allocated with ``size + page_size`` rows for it
  (``MHATokenToKVPool._create_buffers``). So all N tokens are usable, and the
  printed K and V sizes cover N + page_size slots.
* "GB" is ``1024 ** 3`` bytes (memory_pool.py ``GB = 1024 * 1024 * 1024``,
  and ``get_available_gpu_memory`` divides by ``1 << 30``): GiB in our units.

Worked through for Qwen/Qwen3-8B (36 layers x 8 KV heads x head size 128 x 2
bytes = 73,728 bytes of K per token, as much of V): ``#tokens: 250000`` at page
size 1 gives K = 73,728 x 250,001 = 18,432,073,728 bytes = 17.17 GiB, and
users of 512 + 128 tokens: 250,000 // 640 = 390 (434 mid-answer, at 576).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..boot.boots import Boot, Engine, ranks_seen
from ..errors import LogReadError
from ..findings import (
    Finding,
    ModelConfigUnread,
    SGLangMixedAttention,
    SGLangOnePoolsBytes,
    SGLangRanksDisagree,
    SGLangRunningCap,
    SGLangSeveralPools,
    SharedPrefixSGLangRadix,
    UsersNotUnderstood,
)
from ..kv.specs import KVSpec
from ..read.facts import Fact, Value
from .capacity import Capacity, Workload, users_that_fit
from .checks import CheckBasis, range_check, tool_model_failures
from .failure import start_up_end, stopped_warning
from .mix import BootWorkload, boot_workload, users_arithmetic
from .model import Check, EngineReport, Failure, Options, Report, SpecResolver, Unknown
from .whatif import WhatIf

GIB = 1 << 30


DEFAULT_PAGE_SIZE = 1  # ServerArgs.page_size when nothing raised it


def _page_size(boot: Boot, opts: Options) -> tuple[int, str]:
    f = boot.last("block_size")
    if f is not None and int(f.value) > 0:
        return int(f.value), f"SGLang's page_size (line {f.line})"
    if opts.block_size:
        return opts.block_size, "--block-size"
    return DEFAULT_PAGE_SIZE, "SGLang's default page_size (not stated in the log)"


def _int_fact(boot: Boot, kind: str) -> int | None:
    f = boot.last(kind)
    return None if f is None else int(f.value)


def kv_allocation(boot: Boot) -> tuple[Fact, list[Fact]] | None:
    """The first ``KV Cache is allocated`` line: its ``#tokens`` fact and the
    K, V (or MLA's single KV) size facts of the same line."""
    tokens = boot.first("kv_alloc_tokens")
    if tokens is None:
        return None
    sizes: list[Fact] = []
    for f in boot.facts:
        # One of each: two records glued on one line ("...TP1] KV Cache ...\r
        # ...TP0] KV Cache ...") must not count the K and V sizes twice.
        if f.line == tokens.line and f.kind in ("kv_k_gib", "kv_v_gib", "kv_size_gib"):
            if all(g.kind != f.kind for g in sizes):
                sizes.append(f)
    return (tokens, sizes) if sizes else None


def measured_bytes_per_token(
    boot: Boot, page_size: int
) -> tuple[float, float, int, Fact, list[Fact]] | None:
    """Bytes per token from the KV Cache line, as the interval its printed
    precision allows: (low, high, slots, #tokens fact, size facts).

    The buffers hold ``#tokens + page_size`` slots, so 17.17 + 17.17 GiB over
    250,001 slots is 147,446..147,532 bytes per token (Qwen3-8B: 147,456).
    """
    found = kv_allocation(boot)
    if found is None:
        return None
    tokens, sizes = found
    slots = int(tokens.value) + page_size
    if slots <= 0:
        return None
    low = sum(max(float(f.value) - f.half_ulp, 0.0) for f in sizes) * GIB / slots
    high = sum(float(f.value) + f.half_ulp for f in sizes) * GIB / slots
    return low, high, slots, tokens, sizes


@dataclass(frozen=True, slots=True, kw_only=True)
class _Pools:
    """Every engine's users from its pool, and what the second (SWA) pool leaves unknown."""

    engines: list[EngineReport]
    first_cap: Capacity | None
    unknowns: tuple[Unknown, ...]
    users_range: tuple[int, int] | None
    warnings: tuple[Finding, ...]

    @property
    def pool_tokens(self) -> int | None:
        return self.engines[0].pool_tokens if self.engines else None


def build_sglang_report(
    boot: Boot, opts: Options, *, source: str = "-", spec_resolver: SpecResolver | None = None
) -> Report:
    """The report for one SGLang boot (same shape as report.build_report's)."""
    arithmetic: list[str] = []
    model = boot.value("model")
    page, page_src = _page_size(boot, opts)
    tp = _int_fact(boot, "tensor_parallel_size") or opts.tensor_parallel_size or 1
    kv_dtype_f = boot.last("kv_cache_dtype")
    kv_cache_dtype = _kv_cache_dtype(boot, str(kv_dtype_f.value) if kv_dtype_f else None)
    max_len_f = boot.last("max_model_len")
    max_model_len = None if max_len_f is None else int(max_len_f.value)
    served = _served(boot, opts, max_model_len)
    workload = served.workload
    spec, config_unread = _spec(boot, opts, spec_resolver, tp, kv_cache_dtype)
    is_uniform = spec is None or bool(getattr(spec, "is_uniform", True))
    pools = _pools(boot, page, workload, spec, is_uniform, arithmetic)
    kv, one_pool = _kv_said(boot, page, spec, pools.pool_tokens, model)
    checks, not_understood = _sglang_checks(kv, opts, spec, is_uniform)
    engines, unknowns, users_range = pools.engines, pools.unknowns, pools.users_range
    if not_understood is not None:
        unknowns, users_range = (*unknowns, not_understood), None
    if unknowns or any(c.status == "fail" for c in checks):
        engines = [replace(e, users=None, users_mid_answer=None) for e in engines]
    failure, stopped = _start_up_failure(boot, engines)
    # In the order they were found; the stop is report/failure.py's words (a string).
    warnings: tuple[Finding | str, ...] = (
        *config_unread,
        *pools.warnings,
        *one_pool,
        *(() if not_understood is None else (UsersNotUnderstood(why=not_understood.why),)),
        *(() if stopped is None else (stopped,)),
    )
    if failure is not None:
        engines = [replace(e, users=0, users_mid_answer=0) for e in engines]
        users_range = None
    first_cap = pools.first_cap
    what_if = _what_ifs(boot, first_cap, page, kv.bytes_per_token, kv_cache_dtype, workload)
    return Report(
        source=source,
        boot=boot,
        model=str(model) if model else None,
        vllm_version=None,
        engine_generation=None,
        device=None,
        pool_tokens=pools.pool_tokens,
        num_blocks=engines[0].num_blocks if engines else None,
        block_size=page,
        block_size_source=page_src,
        max_model_len=max_model_len,
        vllm_max_concurrency=None,
        concurrency_tokens=None,
        available_kv_gib=kv.memory_gib,
        kv_cache_dtype=kv_cache_dtype,
        tensor_parallel_size=tp,
        is_tensor_parallel_stated=_int_fact(boot, "tensor_parallel_size") is not None
        or opts.tensor_parallel_size is not None,
        ranks_seen=ranks_seen(boot),
        kv_bytes_per_token=kv.bytes_per_token,
        kv_bytes_per_token_source=kv.source,
        kv_shape=kv.shape,
        is_exact=first_cap.is_exact if first_cap is not None else is_uniform,
        workload=workload,
        capacity=first_cap,
        engines=tuple(engines),
        checks=tuple(checks),
        what_if=tuple(what_if),
        warnings=warnings,
        arithmetic=tuple(arithmetic),
        users_range=users_range,
        unknowns=unknowns,
        failure=failure,
        served=served,
    )


def _pools(
    boot: Boot,
    page: int,
    workload: Workload,
    spec: KVSpec | None,
    is_uniform: bool,
    arithmetic: list[str],
) -> _Pools:
    """Each engine's users from its pool, held against the SWA pool and capped by
    max_running_requests; a pool no line names is no pool."""
    swa = _swa_pool(boot, spec, page, workload)
    found: list[Finding] = []
    if not is_uniform and swa is None:
        found.append(SGLangMixedAttention())
    engines: list[EngineReport] = []
    first_cap: Capacity | None = None
    unknowns: list[Unknown] = []
    users_range: tuple[int, int] | None = None
    for eng in boot.pool_engines:
        if eng.ranks_disagree:
            found.append(SGLangRanksDisagree(engine_key=eng.key))
        if not eng.pool_facts and len({f.value for f in eng.stated_pool_facts}) > 1:
            # Two "KV Cache is allocated" sizes and no line saying which pool is which
            # (a draft model's, or a sliding-window model's two pools): no pool to divide.
            said = tuple(int(f.value) for f in eng.stated_pool_facts)
            found.append(SGLangSeveralPools(engine_key=eng.key, pool_tokens=said))
            engines.append(EngineReport.of(eng, pool_tokens=None, num_blocks=None, c=None))
            continue
        er, c = _engine_users(eng, page, workload, arithmetic)
        if c is not None and swa is not None:
            er, c, unknown, rng = _with_swa_pool(er, c, swa, arithmetic)
            if unknown is not None:
                unknowns.append(unknown)
                users_range = rng
        er, capped = _capped(er, boot, arithmetic)
        found += capped
        engines.append(er)
        first_cap = first_cap or c
    if first_cap is not None and not is_uniform and swa is None:
        first_cap = replace(first_cap, is_exact=False)
    return _Pools(
        engines=engines,
        first_cap=first_cap,
        unknowns=tuple(unknowns),
        users_range=users_range,
        warnings=tuple(found),
    )


def _kv_said(
    boot: Boot,
    page: int,
    spec: KVSpec | None,
    pool_tokens: int | None,
    model: Value | None,
) -> tuple[_KVFromLog, tuple[Finding, ...]]:
    """The KV bytes per token the report states (_kv_from_log), said to be one pool's
    when SGLang keeps two and the model's own shape is unknown (and a finding says so)."""
    kv = _kv_from_log(boot, page, spec, pool_tokens, model)
    if spec is not None or boot.last("sglang_swa_tokens") is None or not kv.bytes_per_token:
        return kv, ()
    # Two pools, each with its own KV Cache line: the first holds some layers only.
    return replace(
        kv,
        source=f"{kv.source}; of one of its two pools (full and sliding-window layers "
        "apart), not every layer's",
    ), (SGLangOnePoolsBytes(),)


def _sglang_checks(
    kv: _KVFromLog,
    opts: Options,
    spec: KVSpec | None,
    is_uniform: bool,
) -> tuple[list[Check], Unknown | None]:
    """The KV Cache line's checks, with the tool's own failure (the model's shape
    it does not understand) named in SGLang's words, not vLLM's."""
    checks, not_understood = tool_model_failures(
        list(kv.checks),
        CheckBasis(
            is_hybrid=not is_uniform,
            is_plain_config_given=opts.is_config_given and spec is not None and is_uniform,
            is_block_size_stated=True,
            is_pool_from_concurrency=False,
            is_one_group_rule=False,
            vllm_version=None,
        ),
    )
    if not_understood is None:
        return checks, None
    # (SGLang's shape, not vLLM's: the sentence names the engine.)
    not_understood = replace(
        not_understood, why=not_understood.why.replace("vLLM (version not stated)", "SGLang")
    )
    checks = [
        replace(c, detail=c.detail.replace("vLLM (version not stated)", "SGLang")) for c in checks
    ]
    return checks, not_understood


def _start_up_failure(boot: Boot, engines: list[EngineReport]) -> tuple[Failure | None, str | None]:
    """An error after SGLang stated its pool and before it was ready ("The server is fired
    up and ready to roll!" comes after uvicorn's "Application startup complete."): that
    pool serves nobody (report/failure.py); a stop the operator asked for is said beside."""
    if not boot.has_pool:
        return None, None
    end = start_up_end(boot)
    if end.error is None or end.cause is None:
        return None, stopped_warning(end)
    users = engines[0].users if len(engines) == 1 else None
    once = "" if users is None else f"; then this pool holds {users:,} users"
    return (
        Failure(
            cause=f"the server failed to start after stating its pool ({end.cause.value}), so "
            "that pool never served",
            line=end.cause.line,
            fix=("fix the error printed above this line and start again" + once,),
        ),
        None,
    )


# The KV Cache line's torch dtype -> SGLang's --kv-cache-dtype name, for a cache in FP8
# that server_args leave at 'auto' (an FP8 checkpoint's KV scales, or a platform default).
_FP8_TORCH_DTYPES = {"torch.float8_e4m3fn": "fp8_e4m3", "torch.float8_e5m2": "fp8_e5m2"}


def _kv_cache_dtype(boot: Boot, stated: str | None) -> str | None:
    """server_args' kv_cache_dtype, unless it says 'auto' (or nothing) and the KV Cache
    line (SGLang 2025+: "KV Cache is allocated. dtype: torch.float8_e4m3fn, ...") says
    the cache is FP8."""
    alloc = boot.first("kv_alloc_dtype")
    if alloc is None or stated not in (None, "auto"):
        return stated
    return _FP8_TORCH_DTYPES.get(str(alloc.value), stated)


def _served(boot: Boot, opts: Options, max_model_len: int | None) -> BootWorkload:
    """The workload as this boot serves it: --workload's requests over the context
    length are rejected as by vLLM; --shared-prefix is not modelled for SGLang's
    radix cache (said, not guessed)."""
    served = boot_workload(
        opts.workload,
        shared_prefix_tokens=0,
        boot=boot,
        gen=None,
        max_model_len=max_model_len,
        layout=None,
    )
    if opts.shared_prefix_tokens <= 0:
        return served
    return replace(
        served,
        notes=(
            *served.notes,
            SharedPrefixSGLangRadix(shared_prefix_tokens=opts.shared_prefix_tokens),
        ),
        shared_prefix_tokens_asked=opts.shared_prefix_tokens,
    )


def _spec(
    boot: Boot,
    opts: Options,
    spec_resolver: SpecResolver | None,
    tp: int,
    kv_cache_dtype: str | None,
) -> tuple[KVSpec | None, tuple[Finding, ...]]:
    """The model's KV spec from its config (None: no resolver, or it failed: the
    finding says why)."""
    if spec_resolver is None:
        return None, ()
    model = opts.model or boot.value("model")  # --model NAME over the log's name
    dtype_f = boot.first("dtype")
    pp = _int_fact(boot, "pipeline_parallel_size") or 1
    kwargs: dict[str, str | int | None] = {
        "config": opts.config,
        "tensor_parallel_size": tp,
        "kv_cache_dtype": kv_cache_dtype or "auto",
        "dtype": str(dtype_f.value) if dtype_f else None,
    }
    if pp > 1:
        kwargs["pipeline_parallel_size"] = pp
    try:
        return spec_resolver(str(model) if model else None, **kwargs), ()
    except LogReadError as err:
        return None, (ModelConfigUnread(error=str(err)),)


@dataclass(frozen=True, slots=True, kw_only=True)
class _KVFromLog:
    """The KV bytes per token as the report states them, and the checks behind them."""

    bytes_per_token: int | None
    source: str | None
    shape: str | None
    memory_gib: float | None
    checks: tuple[Check, ...]


def _kv_from_log(
    boot: Boot, page: int, spec: KVSpec | None, pool_tokens: int | None, model: Value | None
) -> _KVFromLog:
    """SGLang's KV Cache line (K + V GiB over its slots) held against the model's shape;
    without a model config, the bytes the line states stand in for it."""
    checks: list[Check] = []
    kv_bpt = None if spec is None else int(spec.kv_bytes_per_token)
    kv_src = None if spec is None else str(spec.source)
    kv_shape = None if spec is None else str(spec.describe())
    kv_memory_gib = None
    measured = measured_bytes_per_token(boot, page)
    if measured is not None:
        low, high, slots, tokens_f, sizes = measured
        kv_memory_gib = round(sum(float(f.value) for f in sizes), 2)
        what = " + ".join(f"{float(f.value):.2f}" for f in sizes)
        span = f"{what} GiB / {slots:,} slots ({int(tokens_f.value):,} tokens + {page} padding)"
        if spec is not None:
            checks.append(
                range_check(
                    "kv_bytes_per_token",
                    low=low,
                    high=high,
                    value=int(spec.kv_bytes_per_token),
                    how=span,
                    unit="bytes per token",
                    stated="the model's shape gives",
                    mismatch="the log does not match this model's KV shape",
                    line=tokens_f.line,
                )
            )
        else:
            # The log states the bytes itself: use them when the model is unknown.
            kv_bpt = round((low + high) / 2)
            kv_src = f"SGLang's KV Cache line (line {tokens_f.line}), not the model config"
            kv_shape = f"{span} = {kv_bpt:,} bytes per token (+-{(high - low) / 2:,.0f})"
        if pool_tokens is not None:
            same = int(tokens_f.value) == pool_tokens
            checks.append(
                Check(
                    name="pool_tokens",
                    status="pass" if same else "unknown",
                    detail=f"KV Cache line #tokens {int(tokens_f.value):,}; "
                    f"max_total_num_tokens {pool_tokens:,}"
                    + ("" if same else " (a draft model or a second pool may explain it)"),
                    line=tokens_f.line,
                )
            )
    elif spec is None:
        checks.append(
            Check(
                name="kv_bytes_per_token",
                status="unknown",
                detail=f"the model's KV shape is unknown ({model or 'model not named in the log'}) "
                "and the log has no KV Cache line; pass --config PATH to a config.json",
            )
        )
    return _KVFromLog(
        bytes_per_token=kv_bpt,
        source=kv_src,
        shape=kv_shape,
        memory_gib=kv_memory_gib,
        checks=tuple(checks),
    )


def _engine_users(
    eng: Engine, page: int, workload: Workload, arithmetic: list[str]
) -> tuple[EngineReport, Capacity | None]:
    """Users of one SGLang engine (a DP rank with its TP ranks)."""
    pool = eng.pool_tokens
    c: Capacity | None = None
    pages = None
    if pool is not None and pool >= 0:
        # SGLang rounds max_total_num_tokens down to whole pages, so this is exact.
        pages = pool // page
        # P + O charged, not vLLM's P + O - 1 (capacity.users_that_fit's counts_last_token).
        c = users_that_fit(
            num_blocks=pages,
            block_size=page,
            workload=workload,
            has_null_block=False,
            counts_last_token=True,
        )
        unit = "slots" if page == 1 else f"pages of {page} tokens"
        per = (
            f"{c.blocks_per_user:,} slots"
            if page == 1
            else f"{c.blocks_per_user} pages ({c.blocks_per_user * page:,} slots)"
        )
        per_mid = f"{c.blocks_per_user_mid:,}" if page == 1 else f"{c.blocks_per_user_mid} pages"
        how = (
            users_arithmetic(c, workload)
            if c.mix is not None
            else f"{c.tokens_held:,} tokens hold {per} -> {pages:,} // "
            f"{c.blocks_per_user:,} = {c.users:,} users; mid-answer "
            f"{c.tokens_held_mid:,} tokens = {per_mid} -> {c.users_mid_answer:,}"
        )
        arithmetic.append(
            f"SGLang {eng.key}: pool {pool:,} tokens ({_POOL_LINE_NAMES[eng.stated_pool_facts[0].kind]}, "
            f"line {eng.pool_line}) = {pages:,} {unit}, all usable (its padding slot 0 is "
            f"allocated beside them); {how}"
        )
    return EngineReport.of(eng, pool_tokens=pool, num_blocks=pages, c=c), c


# Which line the pool was read from (boots.Engine.stated_pool_facts).
_POOL_LINE_NAMES = {
    "pool_tokens": "max_total_num_tokens",
    "sglang_full_tokens": "the full-attention pool, full_layer_tokens",
    "sglang_swa_tokens": "the sliding-window pool, swa_layer_tokens, every layer sliding",
    "kv_alloc_tokens": "KV Cache is allocated, #tokens",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class _SWAPool:
    """A sliding-window hybrid's second pool (SGLang keeps the full-attention layers' and
    the sliding layers' tokens in two pools; a request holds its tokens in the first, at
    most those of its window in the second).

    Attributes:
        tokens: the SWA pool's tokens ("swa_layer_tokens=M").
        line: its line.
        window_tokens: the model's sliding window (its config), or None: not known.
        users_if_all_held: users if each held all its tokens in the SWA pool (the least
            the SWA pool allows: a request never holds more there than in the full pool).
        users_if_window_held: users if each held only its window (None: window unknown, or
            the workload's tokens fit in it).
    """

    tokens: int
    line: int
    window_tokens: int | None
    users_if_all_held: int
    users_if_window_held: int | None


def _swa_pool(boot: Boot, spec: KVSpec | None, page: int, workload: Workload) -> _SWAPool | None:
    """The SWA pool of a hybrid whose full pool is stated too, or None."""
    swa_f = boot.last("sglang_swa_tokens")
    if swa_f is None or boot.last("sglang_full_tokens") is None or workload.is_mix:
        return None
    tokens = int(swa_f.value)
    window = None if spec is None else getattr(spec, "sliding_window_tokens", None)
    held = users_that_fit(
        num_blocks=tokens // page, block_size=page, workload=workload, has_null_block=False
    )
    in_window = None
    if window and workload.tokens_per_user > window:
        # Tokens out of the window are freed from the SWA pool: about W (+ a page) each.
        per = -(-(window + page) // page)
        in_window = (tokens // page) // per
    return _SWAPool(
        tokens=tokens,
        line=swa_f.line,
        window_tokens=window,
        users_if_all_held=held.users,
        users_if_window_held=in_window,
    )


def _with_swa_pool(
    er: EngineReport, c: Capacity, swa: _SWAPool, arithmetic: list[str]
) -> tuple[EngineReport, Capacity, Unknown | None, tuple[int, int] | None]:
    """The users the full pool gives, held against the SWA pool: exact when the SWA pool
    cannot bind (each user holds at most its tokens there), else a range and why."""
    if swa.users_if_all_held >= c.users:
        arithmetic.append(
            f"the sliding-window pool ({swa.tokens:,} tokens, line {swa.line}) holds "
            f"{swa.users_if_all_held:,} users even if each kept all its tokens there: the full "
            f"pool binds, {c.users:,} users"
        )
        return er, c, None, None
    low = swa.users_if_all_held
    high = c.users if swa.users_if_window_held is None else min(c.users, swa.users_if_window_held)
    why = (
        f"the sliding-window pool ({swa.tokens:,} tokens, line {swa.line}) holds "
        f"{low:,} users if each keeps all its tokens there and more if SGLang frees those "
        "out of the window"
        + ("" if swa.window_tokens is None else f" ({swa.window_tokens:,} tokens)")
        + f"; the full pool holds {c.users:,}"
    )
    arithmetic.append(why)
    unknown = Unknown(
        name="swa_pool",
        candidates=(f"{low:,} users", f"{high:,} users"),
        why=why,
        settle="the users at full load in SGLang's 'Decode batch' lines (#running-req), or "
        "a shorter workload",
    )
    return er, c, unknown, (low, high)


def _capped(
    er: EngineReport, boot: Boot, arithmetic: list[str]
) -> tuple[EngineReport, tuple[Finding, ...]]:
    """SGLang runs at most max_running_requests requests at once (the scheduler's and the
    server_args' figure): users beyond it wait in its queue, so the cap binds (a finding
    says so)."""
    f = boot.last("max_num_seqs")
    if f is None or er.users is None or int(f.value) <= 0 or int(f.value) >= er.users:
        return er, ()
    cap = int(f.value)
    said = SGLangRunningCap(
        max_running_requests=cap, line=f.line, users=er.users, engine_key=er.engine
    )
    arithmetic.append(
        f"SGLang {er.engine}: max_running_requests {cap:,} (line {f.line}) binds: of the "
        f"{er.users:,} users the pool holds, {cap:,} run at once and the rest wait in its queue"
    )
    mid = er.users_mid_answer
    return replace(er, users=cap, users_mid_answer=None if mid is None else min(mid, cap)), (said,)


def _what_ifs(
    boot: Boot,
    c: Capacity | None,
    page: int,
    kv_bpt: int | None,
    kv_cache_dtype: str | None,
    workload: Workload,
) -> list[WhatIf]:
    out: list[WhatIf] = []
    if c is None:
        return out

    def fit(num_tokens: int) -> Capacity:
        return users_that_fit(
            num_blocks=num_tokens // page,
            block_size=page,
            workload=workload,
            has_null_block=False,
            counts_last_token=True,
        )

    pool = c.num_blocks * page
    if kv_cache_dtype and kv_cache_dtype.startswith("fp8"):
        out.append(
            WhatIf(
                change="kv_cache_dtype=fp8",
                pool_tokens=pool,
                users=c.users,
                note="the KV cache is FP8 already",
                is_exact=True,
            )
        )
    else:
        # SGLang sizes the pool as memory // bytes per token: one byte per
        # value instead of two doubles the tokens (250,000 -> about 500,000).
        doubled = fit(2 * pool)
        out.append(
            WhatIf(
                change="kv_cache_dtype=fp8",
                pool_tokens=2 * pool // page * page,
                users=doubled.users,
                note=f"--kv-cache-dtype fp8_e5m2 (or fp8_e4m3) halves the bytes per token: about "
                f"{2 * pool:,} tokens, {doubled.users:,} users; measure quality on your own eval "
                "first",
                is_exact=False,
            )
        )
    weights = boot.first("weights_gib")
    if kv_bpt and weights is not None and float(weights.value) > 0:
        # Estimate: FP8 weights free about half of 16-bit weights' memory,
        # and SGLang gives what mem_fraction_static leaves to the pool.
        extra = int(float(weights.value) / 2 * GIB) // kv_bpt // page * page
        est = fit(pool + extra)
        out.append(
            WhatIf(
                change="weights=fp8",
                pool_tokens=pool + extra,
                users=est.users,
                note=f"estimate: FP8 weights free about half of {float(weights.value):.2f} GiB "
                f"(+{extra:,} tokens), if the weights were 16-bit",
                is_exact=False,
            )
        )
    return out
