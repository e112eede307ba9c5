"""vLLM versions parsed once; the version where each rule changes; cdiv."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import UsageError

# vLLM versions where the rules change (docs/vllm-numbers.md sections 4, 5, 7).
V1_DEFAULT_FROM = (0, 8, 0)  # V1 engine by default; before it V0 (V1 opt-in)


POOL_TOKENS_LINE_FROM = (0, 8, 0)  # "GPU KV cache size: N tokens"


HYBRID_MANAGER_FROM = (0, 9, 1)  # KV cache groups; the max-concurrency fix #19029


POOL_TOKENS_FROM_CONCURRENCY = (0, 21, 0)  # tokens = int(concurrency x max_model_len)


CONCURRENCY_SUM_OF_CDIV_FROM = (0, 27, 0)


GROUP_SIZE_MAX_HEURISTIC_FROM = (
    0,
    31,
    0,
)  # group_size = max if max < 1.5 min (in 0.31, 0.32 and 0.33)


CHUNKED_HYBRID_OFF_FROM = (0, 10, 1)  # #21761: chunked local attention turns HMA off


# From here on, facts audited in the 0.31, 0.32 and 0.33 wheels (docs/rules.md);
# "from 0.31" means "true in 0.31, not checked before".
CHUNKED_HYBRID_ON_AGAIN_FROM = (0, 31, 0)  # VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1


IN_FLIGHT_BUDGET_FROM = (0, 31, 0)  # windowed layers budget max_concurrent_batches x mnbt


MAMBA_ALIGN_MODE_FROM = (0, 31, 0)  # prefix caching on -> mamba_cache_mode "align"


MAMBA_CACHE_MODE_ALL_UNTIL = (0, 32, 0)  # mode "all" exists in 0.31 only


MAMBA2_CHECKPOINT_BLOCK_FROM = (0, 32, 0)  # Mamba2 layers set 1 prefill checkpoint block


HYBRID_BLOCK_KERNEL_LCM_FROM = (0, 32, 0)  # hybrid block rounded to the backends' lcm


HYBRID_BLOCK_CHECKPOINT_ALIGN_FROM = (0, 33, 0)  # lcm with the GDN checkpoint alignment (64)


PAGE_SIZE_UNIFICATION_FROM = (0, 31, 0)  # unify_kv_cache_spec_page_size scales blocks


KV_SHARING_NO_ALLOCATION_FROM = (0, 31, 0)  # kv_sharing_target_layer_name -> no spec


HEAD_SIZE_V_FROM = (0, 31, 0)  # AttentionSpec pages use head_size + head_size_v


MLA_BLOCK_RULES_FROM = (0, 31, 0)  # sparse MLA at 64 (indexer), dense MLA 16 on SM90, 32 on SM10x


MLA_MODEL_TYPES_FROM = (0, 31, 0)  # is_deepseek_mla's 24 model types


KV_DTYPES_FROM = (0, 31, 0)  # the 18-value CacheDType list


KV_DTYPES_ULTRAQUANT_FROM = (0, 32, 0)  # + ultraquant_4bit


KV_DTYPES_OCTAVE_FROM = (0, 33, 0)  # + octave_k3v4 / k3v3 / k3v3_compact (ROCm)


def version_text(version: tuple[int, ...] | None) -> str:
    """A version tuple for a person; None is the newest the tool knows.

    >>> version_text((0, 31, 0)), version_text(None)
    ('0.31.0', 'newest (0.33)')
    """
    return "newest (0.33)" if version is None else ".".join(str(p) for p in version)


# The newest vLLM release whose lines and rules this tool encodes (its lines and
# rules were read against the 0.33.0 source). A log from a later release is read as
# 0.33 would print it, and the report says so.
NEWEST_CHECKED = (0, 33)


def version_past_checked(version: str | Sequence[int] | None) -> str | None:
    """The warning for a log from a vLLM newer (by minor release) than
    NEWEST_CHECKED, or None (no version, or one the tool knows).

    >>> version_past_checked("0.34.0")
    'checked against vLLM up to 0.33; 0.34 may print or allocate differently'
    >>> version_past_checked("0.33.1"), version_past_checked(None), version_past_checked("999.999.999")
    (None, None, None)
    """
    try:
        parsed = parse_version(version)
    except UsageError:
        return None
    if parsed is None or tuple(parsed[:2]) <= NEWEST_CHECKED:
        return None
    if any(p >= 999 for p in parsed):
        return None  # "999.999.999": a source build without version metadata
    newest = ".".join(map(str, NEWEST_CHECKED))
    seen = ".".join(map(str, parsed[:2]))
    return f"checked against vLLM up to {newest}; {seen} may print or allocate differently"


def cdiv(a: int, b: int) -> int:
    """Ceiling division, as vLLM's ``cdiv``.

    >>> cdiv(640, 16), cdiv(641, 16)
    (40, 41)
    """
    return -(-a // b)


def parse_version(version: str | Sequence[int] | None) -> tuple[int, ...] | None:
    """A vLLM version as a tuple of ints; dev/rc suffixes dropped.

    >>> parse_version("0.10.1.1"), parse_version("v0.9.2rc1"), parse_version(None)
    ((0, 10, 1, 1), (0, 9, 2), None)
    """
    if version is None:
        return None
    if not isinstance(version, str):
        return tuple(int(p) for p in version)
    parts: list[int] = []
    for piece in version.strip().lstrip("vV").split("+")[0].split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break
    if not parts:
        raise UsageError(f"cannot read vLLM version {version!r}")
    return tuple(parts)


def version_or_none(version: object) -> tuple[int, ...] | None:
    """``parse_version`` of a log's text, None when it is no version at all.

    >>> version_or_none("0.11.0"), version_or_none("main"), version_or_none(None)
    ((0, 11, 0), None, None)
    """
    if version is None or version == "":
        return None
    try:
        return parse_version(str(version))
    except UsageError:
        return None


def at_least(version: object, floor: str) -> bool:
    """The log's version is ``floor`` or newer (an unreadable version: newest).

    >>> at_least("0.11.1", "0.11.1"), at_least("0.9.2", "0.11.1"), at_least(None, "0.1")
    (True, False, True)
    """
    return _at_least(version_or_none(version), parse_version(floor) or ())


def _at_least(version: tuple[int, ...] | None, floor: tuple[int, ...]) -> bool:
    """None means "the newest vLLM"."""
    return version is None or version >= floor
