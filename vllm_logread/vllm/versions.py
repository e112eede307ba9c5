"""vLLM versions: the one version type, its parser, and cdiv.

A log states its vLLM version as text ("0.9.2rc1", "0.11.0rc2.dev5+g1234"):
``Version.parse`` (the one parser) reads it once into numbers; :class:`Version` is that number
with ONE comparison (trailing zeros do not count: "0.20" is "0.20.0"). Which
rule holds from which version, and what an unknown version means, is not
here: it is in :mod:`vllm_logread.vllm.rules`, the only module that compares
versions (docs/rules.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeAlias

from ..errors import UsageError


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
    def parse(cls, version: VersionLike, *, strict: bool = False) -> Version | None:
        """THE version parser: a log's text ("v0.9.2rc1", "0.11.0rc2.dev5+g1234",
        "0.10.1.1"), a tuple of numbers or a Version, as a Version; dev/rc
        suffixes dropped. None when there is no version ("main", "", None);
        ``strict`` raises UsageError for text that is no version (an option the
        user typed), except None and "".

        >>> Version.parse("v0.9.2rc1"), Version.parse("main"), Version.parse(None)
        (Version(parts=(0, 9, 2)), None, None)
        >>> Version.parse("0.10.1.1").parts, Version.parse((0, 11, 1)).parts
        ((0, 10, 1, 1), (0, 11, 1))
        """
        if isinstance(version, Version):
            return version
        if version is None or version == "":
            return None
        if not isinstance(version, str):
            return cls(tuple(int(p) for p in version)) if version else None
        parts = _parts(version)
        if not parts:
            if strict:
                raise UsageError(f"cannot read vLLM version {version!r}")
            return None
        return cls(parts)

    @property
    def minor(self) -> Version:
        """The minor release ("0.34.1" -> 0.34).

        >>> str(Version((0, 34, 1)).minor)
        '0.34'
        """
        return Version(self.parts[:2])


@lru_cache(maxsize=256)
def _parts(text: str) -> tuple[int, ...]:
    """The numbers of a version's text, read once per text (a boot's version is
    asked by every rule: the parse is cached, not repeated); () when none.

    >>> _parts("v0.11.0rc2.dev5+g1234"), _parts("main")
    ((0, 11, 0), ())
    """
    parts: list[int] = []
    for piece in text.strip().lstrip("vV").split("+")[0].split("."):
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
    return tuple(parts)


#: What the code accepts where a version is expected: a :class:`Version`, the
#: log's text, a tuple of numbers, or None (the log states no version).
VersionLike: TypeAlias = "Version | str | Sequence[int] | None"


def cdiv(a: int, b: int) -> int:
    """Ceiling division, as vLLM's ``cdiv``.

    >>> cdiv(640, 16), cdiv(641, 16)
    (40, 41)
    """
    return -(-a // b)
