"""vLLM versions parsed once; the version where each rule changes; cdiv."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import UsageError

# vLLM versions where the rules change (VLLM_LINES.md sections 4.5, 4.6, 5).
V1_DEFAULT_FROM = (0, 8, 0)  # V1 engine by default; before it V0 (V1 opt-in)


POOL_TOKENS_LINE_FROM = (0, 8, 0)  # "GPU KV cache size: N tokens"


HYBRID_MANAGER_FROM = (0, 9, 1)  # KV cache groups; the max-concurrency fix #19029


POOL_TOKENS_FROM_CONCURRENCY = (0, 21, 0)  # tokens = int(concurrency x max_model_len)


CONCURRENCY_SUM_OF_CDIV_FROM = (0, 27, 0)


GROUP_SIZE_MAX_HEURISTIC_FROM = (0, 33, 0)  # group_size = max if max < 1.5 min


CHUNKED_HYBRID_OFF_FROM = (0, 10, 1)  # #21761: chunked local attention turns HMA off


# The newest vLLM release whose lines and rules this tool encodes (VLLM_LINES.md
# was read against the 0.33.0 source). A log from a later release is read as
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
