"""The layout the users rest on, in the report's words; speculative decoding's charge.

Which figure settles the layout, or why none does, is decided once by the
resolver of unknowns (boot/resolve.resolve_layout; docs/candidates.md): no KV
cache group can exist over the log's releases, the log states one group, a
verified config, a plain family's name, the log's blocks, pool and concurrency
(one group whatever the release), a concurrency only plain attention prints
(every release before 0.20.1), or an unverified config whose every group, pool
and concurrency the log reproduces ("confirmed by the log"). Here those
findings become the report's checks and unknowns (:func:`layout_words`): a
model named only by a path, a served name or a hybrid family's name, or a log
that names none, whose figures fit plain attention and a hybrid alike, is never
"exact" (970 users for a gated-delta-net hybrid served from /models/my-qwen3-next
would be a wrong exact number).
"""

from __future__ import annotations

from ..boot.boots import Boot
from ..boot.resolve import LayoutFinding
from ..kv.specs import KVSpec
from ..vllm.rules import Feature
from .model import Check, Unknown

NAMELESS_SETTLE = (
    "pass --config PATH to the model's config.json (or read a log that names the model)"
)

SETTLE = (
    "pass --config PATH to the model's config.json (an architecture the tool has verified "
    "gives exact users), or a log that states its KV cache groups (vLLM 0.31+ prints "
    "'kv cache group sizes (...)')"
)


def spec_source(spec: KVSpec, finding: LayoutFinding | None = None) -> str:
    """Where the bytes per token come from, and "not verified" when they are not
    (or "confirmed by the log" when the log's own figures reproduce the reading)."""
    source = str(spec.source)
    if bool(getattr(spec, "is_verified", True)):
        return source
    arch = getattr(spec, "architecture", None) or "its architecture"
    if finding is not None and finding.is_settled and finding.evidence != "verified_config":
        return (
            f"{source}; confirmed by the log (lines {_lines(finding.lines)}): the tool has no "
            f"hand-worked check of {arch}, and its reading reproduces the log's figures"
        )
    return f"{source}; not verified: the tool has no hand-worked check of {arch}"


def _open_unknown(
    finding: LayoutFinding, spec: KVSpec | None, model: str | None, users: str
) -> Unknown:
    """The Unknown of a layout the log's figures leave open."""
    if finding.evidence == "unverified" and spec is not None:
        arch = getattr(spec, "architecture", None) or "this model"
        why = str(getattr(spec, "architecture_note", None) or f"{arch} is not verified")
        return Unknown(
            name="architecture",
            candidates=(f"{users} users if the tool's reading of {arch} is vLLM's", "other"),
            why=why,
            settle="a log that states one KV cache group ('kv cache group sizes (16)', vLLM "
            f"0.31+) settles it; the tool has no hand-worked check of {arch} (vllm-logread kv "
            "--list-architectures)",
        )
    if finding.evidence in ("unknown_name", "named_family"):
        why = (
            f"the log names the model only as {model!r}, which names no family the tool "
            "knows, and its pool line reads the same for plain attention and for a hybrid "
            "(sliding-window, Mamba or linear-attention layers)"
            if finding.evidence == "unknown_name"
            else f"the model's name {model!r} says {finding.family}, whose KV cache groups the "
            "log's pool line does not settle without its config"
        )
        return Unknown(
            name="attention_layout",
            candidates=(f"plain full attention: {users} users", "a hybrid: other users"),
            why=why,
            settle=SETTLE,
        )
    return _nameless_unknown(finding, users)


def _nameless_unknown(finding: LayoutFinding, users: str) -> Unknown:
    """A log that names no model: why no figure confirms plain full attention."""
    candidates = (
        f"plain full attention: {users} users",
        "a hybrid (sliding-window, Mamba or linear-attention layers): other users",
    )
    if finding.evidence == "hybrid_line":
        return Unknown(
            name="attention_layout",
            candidates=candidates[1:],
            why=f"the log names no model, and line {finding.lines[0]} (mamba_cache_mode) is "
            "printed only by a model with several KV cache groups: not plain full attention",
            settle=NAMELESS_SETTLE,
        )
    if finding.evidence == "no_concurrency":
        why = (
            "the log names no model and prints no maximum concurrency it can be checked "
            "against, the one figure that tells plain attention from a hybrid's KV cache "
            "groups"
        )
    else:
        version = finding.versions
        said = (
            f"the log names no model, and vLLM {version} (as every vLLM from "
            f"{Feature.POOL_TOKENS_FROM_CONCURRENCY.value.since}) prints"
            if version
            else "the log names neither its model nor its vLLM version, and every vLLM from "
            f"{Feature.POOL_TOKENS_FROM_CONCURRENCY.value.since} prints"
        )
        why = (
            f"{said} its pool as int(max concurrency x max model len) for every layout, so its "
            f"{finding.printed_concurrency or 0:.2f}x (line {finding.lines[0]}) fits plain "
            "attention and a hybrid alike"
        )
    return Unknown(name="attention_layout", candidates=candidates, why=why, settle=NAMELESS_SETTLE)


def _lines(lines: tuple[int, ...]) -> str:
    return ", ".join(str(n) for n in lines)


def _settled_check(finding: LayoutFinding) -> Check | None:
    """The check a figure that settled the layout adds to the report, if any."""
    line = finding.lines[-1] if finding.lines else None
    if finding.evidence == "blocks_stated":
        n, bs, per_req = finding.num_blocks, finding.block_size, finding.blocks_per_request
        return Check(
            name="attention_layout",
            status="pass",
            detail=f"one KV cache group: pool {finding.pool_tokens or 0:,} = {n or 0:,} x {bs} "
            f"and {finding.printed_concurrency or 0:.2f}x = {n or 0:,} / {per_req or 0:,}, "
            f"lines {_lines(finding.lines)}",
            line=line,
        )
    if finding.evidence == "concurrency":
        return Check(
            name="attention_layout",
            status="pass",
            detail=f"plain full attention, confirmed by the log's maximum concurrency "
            f"{finding.printed_concurrency or 0:.2f}x (line {finding.lines[0]}): vLLM "
            f"{finding.versions} prints a hybrid's pool as blocks // groups x block size, "
            "whose concurrency is not pool / max model len",
            line=line,
        )
    if finding.evidence == "groups_confirm":
        return Check(
            name="attention_layout",
            status="pass",
            detail="the tool's reading of the config reproduces the log's KV cache groups, "
            f"its maximum concurrency and its pool (lines {_lines(finding.lines)}): "
            "confirmed by the log",
            line=line,
        )
    return None


def layout_words(
    finding: LayoutFinding, spec: KVSpec | None, model: str | None, users: str
) -> Unknown | Check | None:
    """The resolver's layout finding (boot/resolve.resolve_layout) as the report
    says it: a check when a figure settled it, an Unknown when none did, else None.

    ``users`` is the figure the assumed layout gives ("970"), for the candidates.
    """
    if finding.is_settled:
        return _settled_check(finding)
    return _open_unknown(finding, spec, model, users)


# Methods whose drafter keeps no KV cache of its own and reserves no lookahead
# slots (vLLM 0.33's num_lookahead_tokens is 0 for them).
_NO_DRAFTER_KV = frozenset({"ngram", "ngram_gpu", "suffix"})


def lookahead_slots(method: str | None, num_speculative_tokens: int) -> int | None:
    """KV slots a request reserves past its scheduled tokens (VllmConfig.num_lookahead_tokens,
    0.33 source): eagle, eagle3, mtp, draft_model, dspark: k; dflash: k + 1 (its bonus
    query); ngram / suffix: 0; None for a method the tool does not know.

    >>> lookahead_slots("eagle3", 3), lookahead_slots("dflash", 3), lookahead_slots("ngram", 5)
    (3, 4, 0)
    """
    k = num_speculative_tokens
    if method in _NO_DRAFTER_KV:
        return 0
    if method == "dflash":
        return k + 1
    if method in ("eagle", "eagle3", "mtp", "draft_model", "dspark"):
        return k
    return None


def speculative_unknown(
    boot: Boot,
    *,
    single_group: bool,
    usable_blocks: int | None,
    block_size: int | None,
    tokens_per_user: int,
) -> tuple[Unknown, tuple[int, int] | None] | None:
    """Speculative decoding's charge: an Unknown with the users' range, or None.

    Each request also holds, at its peak, the k draft tokens being verified and the
    drafter's lookahead slots (k, or k + 1 for DFlash); how many of them a finished
    answer still holds depends on the tokens accepted, so the users are a range:
    from ``usable // cdiv(T + k + lookahead, bs)`` to ``usable // cdiv(T, bs)``
    (Qwen3-8B, 1,505 usable blocks of 16, 640 tokens, EAGLE-3 k = 3: 1,505 // 41 = 36
    to 1,505 // 40 = 37). The drafter's own layers (EAGLE heads, MTP layers) share the
    pool: with one KV cache group they are in the stated block count already; with
    several they join the groups in a way the tool does not model.
    """
    k_f = boot.last("num_speculative_tokens")
    method_f = boot.last("speculative_method")
    method = None if method_f is None else str(method_f.value)
    if k_f is None and method is None:
        return None
    k = 0 if k_f is None else int(k_f.value)
    if method in _NO_DRAFTER_KV or k <= 0:
        return None
    slots = lookahead_slots(method, k)
    draft_f = boot.last("draft_model")
    drafter = f"method {method or 'not stated'}, {k} speculative tokens" + (
        f", drafter {draft_f.value}" if draft_f is not None else ""
    )
    line = (k_f or method_f).line  # type: ignore[union-attr]
    settle = (
        "the range is the drafter's: the users at its low end are safe; a /metrics "
        "scrape or --simulate on a real run shows where between them it serves"
    )
    if not single_group or usable_blocks is None or not block_size:
        why = (
            f"speculative decoding ({drafter}; line {line}): the drafter's layers join the "
            "KV cache groups and each request holds lookahead slots; the drafter's shape in "
            "these groups is not known to the tool"
        )
        return (
            Unknown(
                name="speculative_decoding",
                candidates=("users without the drafter", "fewer"),
                why=why,
                settle=settle,
            ),
            None,
        )
    extra = k + (k + 1 if slots is None else slots)
    low_blocks = -(-(tokens_per_user + extra) // block_size)
    high_blocks = -(-tokens_per_user // block_size)
    low, high = usable_blocks // low_blocks, usable_blocks // high_blocks
    why = (
        f"speculative decoding ({drafter}; line {line}): a request also holds up to {k} "
        f"draft tokens and {'up to ' + str(k + 1) if slots is None else slots} lookahead "
        f"slots: {usable_blocks:,} // cdiv({tokens_per_user:,} + {extra}, {block_size}) = "
        f"{low:,} to {usable_blocks:,} // {high_blocks} = {high:,} users"
    )
    return (
        Unknown(
            name="speculative_decoding",
            candidates=(f"{low:,} users (every draft slot held)", f"{high:,} users (none)"),
            why=why,
            settle=settle,
        ),
        (low, high),
    )


def drafter_checks(checks: list[Check], boot: Boot) -> list[Check]:
    """With a drafter, the pool also holds its layers: a pool-vs-memory figure off by
    them is the tool's missing drafter, not the log contradicting itself."""
    method_f = boot.last("speculative_method")
    k_f = boot.last("num_speculative_tokens")
    if k_f is None or int(k_f.value) <= 0:
        return checks
    if method_f is not None and str(method_f.value) in _NO_DRAFTER_KV:
        return checks
    from dataclasses import replace

    return [
        replace(
            c,
            status="unknown",
            detail=f"{c.detail}; the drafter's layers share this pool (speculative decoding) "
            "and are not in the model's bytes per token: not a contradiction",
        )
        if c.name == "pool_vs_memory" and c.status == "fail"
        else c
        for c in checks
    ]
