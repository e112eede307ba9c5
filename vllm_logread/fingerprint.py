"""Which vLLM printed a log: its version as a range of releases.

A pasted log rarely keeps its ``vLLM API server version`` line, but it still
says which vLLM printed it: the call sites in its prefixes
(``[kv_cache_utils.py:716]``), its process labels (``(EngineCore_DP0 pid=..)``)
and its wordings. :func:`version_range` turns that evidence into the releases
the log can come from; the resolver of unknowns (docs/rules.md) evaluates every
version rule over that range, so a rule whose releases all agree applies.

This first form reads only the version line; the fingerprint table of every
release's call sites narrows a nameless log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .boots import Boot


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionRange:
    """The vLLM releases a log can come from, and the lines that say so.

    Attributes:
        releases: every release consistent with the log, oldest first
            (``("0.9.1", "0.9.2")``); one release when the log states it.
        evidence: (line number, what it showed) pairs that decided the range,
            e.g. ``(7, "kv_cache_utils.py:716")`` or ``(1, "version line")``.
    """

    releases: tuple[str, ...]
    evidence: tuple[tuple[int, str], ...]

    @property
    def lowest(self) -> str:
        return self.releases[0]

    @property
    def highest(self) -> str:
        return self.releases[-1]

    @property
    def is_one_release(self) -> bool:
        return len(self.releases) == 1


def version_range(boot: Boot) -> VersionRange | None:
    """The releases ``boot`` can come from, or None when the log says nothing of it."""
    fact = boot.first("vllm_version")
    if fact is None:
        return None
    return VersionRange(releases=(str(fact.value),), evidence=((fact.line, "version line"),))
