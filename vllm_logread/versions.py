"""vLLM versions: the one version type, its parser, and cdiv.

A log states its vLLM version as text ("0.9.2rc1", "0.11.0rc2.dev5+g1234"):
``parse_version`` reads it once into numbers; :class:`Version` is that number
with ONE comparison (trailing zeros do not count: "0.20" is "0.20.0"). Which
rule holds from which version, and what an unknown version means, is not
here: it is in :mod:`vllm_logread.rules`, the only module that compares
versions (docs/rules.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import UsageError


@dataclass(frozen=True, slots=True, eq=False)
class Version:
    """A vLLM release as numbers, ordered by one comparison.

    Trailing zeros do not count, so ``Version((0, 20)) == Version((0, 20, 0))``
    (a tuple would put ``(0, 20) < (0, 20, 0)``).

    >>> Version((0, 9, 1)) >= Version((0, 9)), Version((0, 20)) == Version((0, 20, 0))
    (True, True)
    >>> str(Version((0, 31, 0)))
    '0.31.0'
    """

    parts: tuple[int, ...]

    @property
    def _key(self) -> tuple[int, ...]:
        parts = self.parts
        while parts and parts[-1] == 0:
            parts = parts[:-1]
        return parts

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __lt__(self, other: Version) -> bool:
        return self._key < other._key

    def __le__(self, other: Version) -> bool:
        return self._key <= other._key

    def __gt__(self, other: Version) -> bool:
        return self._key > other._key

    def __ge__(self, other: Version) -> bool:
        return self._key >= other._key

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.parts)

    @classmethod
    def of(cls, version: object) -> Version | None:
        """A log's version as a Version; None when it states none or no
        version at all ("main", "").

        >>> Version.of("v0.9.2rc1"), Version.of("main"), Version.of(None)
        (Version(parts=(0, 9, 2)), None, None)
        """
        if isinstance(version, Version):
            return version
        if isinstance(version, Sequence) and not isinstance(version, str):
            return cls(tuple(int(p) for p in version)) if version else None
        parsed = version_or_none(version)
        return None if not parsed else cls(parsed)


#: What the code accepts where a version is expected: a :class:`Version`, the
#: log's text, a tuple of numbers, or None (the log states no version).
VersionLike = Version | str | Sequence[int] | None


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
