"""Whether the model's KV layout is known well enough for exact users.

Two ways a layout is assumed rather than known (README.md, "Exact or not"):

* the model's config was found but its architecture is not verified (no
  hand-worked test, or fields the tool does not read): kv/architectures.py;
* no config was found and the log names the model only by a path, a served
  name, or a name whose family is a hybrid one: the log's pool line cannot tell
  plain attention from a hybrid (vLLM prints a hybrid's pool as concurrency x
  max len, which plain attention at the same block size reproduces), so "970
  users, exact" for a gated-delta-net hybrid served from /models/my-qwen3-next
  would be a wrong exact number.

The log settles it when it states its KV cache groups ("kv cache group sizes
(...)", vLLM 0.31+) as one group, or when no group can exist (V0, or V1 before
the hybrid manager): then the pool is one full-attention group and the users
follow from its blocks alone.

A log that names no model at all (a pasted fragment) is read as plain full
attention only when its own figures confirm it (:func:`nameless_layout`): a
version before 0.20.1 whose printed maximum concurrency is the plain reading's
(vLLM then prints a hybrid's pool as blocks // groups x block size and its
concurrency as blocks / the blocks of all groups, which differ: gpt-oss-20b on
0.11.0 prints 29,760 tokens and 3.28x, where plain attention would print 3.63x).
From 0.20.1 the pool line is int(concurrency x max len) for every layout, so
that concurrency confirms nothing, and neither does a log that prints none.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..boots import Boot
from ..kv.architectures import family_of_name
from ..kv.specs import KVSpec
from ..rules import Feature, can_be_hybrid, concurrency_tells_layout
from .model import Check, Unknown

SETTLE = (
    "pass --config PATH to the model's config.json (an architecture the tool has verified "
    "gives exact users), or a log that states its KV cache groups (vLLM 0.31+ prints "
    "'kv cache group sizes (...)')"
)


def spec_source(spec: KVSpec) -> str:
    """Where the bytes per token come from, and "not verified" when they are not."""
    source = str(spec.source)
    if bool(getattr(spec, "is_verified", True)):
        return source
    arch = getattr(spec, "architecture", None) or "its architecture"
    return f"{source}; not verified: the tool has no hand-worked check of {arch}"


def _one_group_stated(boot: Boot) -> bool:
    groups = boot.last("num_kv_cache_groups")
    return groups is not None and int(groups.value) == 1


def layout_unknown(
    boot: Boot, spec: KVSpec | None, model: str | None, *, can_be_hybrid: bool, users: str
) -> Unknown | None:
    """An Unknown when the users rest on a layout the tool assumed, else None.

    ``users`` is the figure the assumed layout gives ("970"), for the candidates.
    """
    if not can_be_hybrid or _one_group_stated(boot):
        return None
    if spec is not None:
        if bool(getattr(spec, "is_verified", True)):
            return None
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
    if not model:
        return None  # no name at all: nameless_layout decides
    found = family_of_name(model)
    if found is not None and found[1]:
        return None
    if found is None:
        why = (
            f"the log names the model only as {model!r}, which names no family the tool "
            "knows, and its pool line reads the same for plain attention and for a hybrid "
            "(sliding-window, Mamba or linear-attention layers)"
        )
    else:
        why = (
            f"the model's name {model!r} says {found[0]}, whose KV cache groups the log's "
            "pool line does not settle without its config"
        )
    return Unknown(
        name="attention_layout",
        candidates=(f"plain full attention: {users} users", "a hybrid: other users"),
        why=why,
        settle=SETTLE,
    )


NAMELESS_SETTLE = (
    "pass --config PATH to the model's config.json (or read a log that names the model)"
)

# Lines only a boot with several KV cache groups prints: a Mamba cache mode (0.31+,
# Mamba and gated-delta-net hybrids), the groups' lcm block size (0.31+, printed
# only when there is more than one group).
_HYBRID_KINDS = ("mamba_cache_mode",)


def nameless_layout(
    boot: Boot,
    *,
    version: str | None,
    generation: str | None,
    checks: Sequence[Check],
    users: str,
) -> Unknown | Check | None:
    """For a log that names no model: the check that confirms plain full attention,
    the Unknown that says why nothing does, or None when no KV cache group can
    exist (V0, V1 before 0.9.1) or the log states one group.

    ``checks`` are the plain reading's (its ``max_concurrency`` passed or the
    reading would not be here); ``users`` the figure plain attention gives.
    """
    if not can_be_hybrid(version, generation) or _one_group_stated(boot):
        return None
    candidates = (
        f"plain full attention: {users} users",
        "a hybrid (sliding-window, Mamba or linear-attention layers): other users",
    )
    hybrid = next((f for k in _HYBRID_KINDS if (f := boot.first(k)) is not None), None)
    if hybrid is not None:
        return Unknown(
            name="attention_layout",
            candidates=candidates[1:],
            why=f"the log names no model, and line {hybrid.line} ({hybrid.kind}) is printed "
            "only by a model with several KV cache groups: not plain full attention",
            settle=NAMELESS_SETTLE,
        )
    conc = next((c for c in checks if c.name == "max_concurrency"), None)
    conc_f = boot.first("max_concurrency")
    if conc_f is None or conc is None or conc.status != "pass":
        why = (
            "the log names no model and prints no maximum concurrency it can be checked "
            "against, the one figure that tells plain attention from a hybrid's KV cache "
            "groups"
        )
    elif not concurrency_tells_layout(version):
        said = (
            f"the log names no model, and vLLM {version} (as every vLLM from "
            f"{Feature.POOL_TOKENS_FROM_CONCURRENCY.value.since}) prints"
            if version
            else "the log names neither its model nor its vLLM version, and every vLLM from "
            f"{Feature.POOL_TOKENS_FROM_CONCURRENCY.value.since} prints"
        )
        why = (
            f"{said} its pool as int(max concurrency x max model len) for every layout, so its "
            f"{float(conc_f.value):.2f}x (line {conc_f.line}) fits plain attention and a "
            "hybrid alike"
        )
    else:
        return Check(
            name="attention_layout",
            status="pass",
            detail=f"plain full attention, confirmed by the log's maximum concurrency "
            f"{float(conc_f.value):.2f}x (line {conc_f.line}): vLLM {version} prints a "
            "hybrid's pool as blocks // groups x block size, whose concurrency is not "
            "pool / max model len",
            line=conc_f.line,
        )
    return Unknown(name="attention_layout", candidates=candidates, why=why, settle=NAMELESS_SETTLE)


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
