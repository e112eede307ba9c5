"""Which vLLM printed a log: its version as a range of releases.

A pasted log rarely keeps its ``vLLM API server version`` line, but it still
says which vLLM printed it: the call sites in its prefixes
(``[kv_cache_utils.py:716]``) and its process labels (``(EngineCore_DP0 pid=..)``).
:func:`version_range` turns that evidence into the releases the log can come
from; the resolver of unknowns (docs/rules.md) evaluates every version rule
over that range, so a rule whose releases all agree applies.

The table of every release's logger calls and process labels is
data/fingerprint.json, generated from vLLM's released packages by
tools/fingerprint.py (docs/fingerprint.md: its coverage, how to regenerate it,
and how a range is decided). It is read only for a log without a version line.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..vllm.rules import Feature, supports
from .boots import engine_generation

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
        num_ignored: call sites and labels no release of the table explains
            (a plugin's or a fork's own files), left out of the decision.
        is_weighed: the log's sites disagree even without those, and the
            range is the releases that explain clearly the most of them.
        runs: the range as runs of consecutive releases of the table, oldest
            first (``(("0.6.4", "0.6.4.post1"), ("0.33.0", "0.34.0"))``); empty
            when it is one run or one release.
    """

    releases: tuple[str, ...]
    evidence: tuple[tuple[int, str], ...]
    num_ignored: int = 0
    is_weighed: bool = False
    runs: tuple[tuple[str, str], ...] = ()

    @property
    def lowest(self) -> str:
        return self.releases[0]

    @property
    def highest(self) -> str:
        return self.releases[-1]

    @property
    def is_one_release(self) -> bool:
        return len(self.releases) == 1

    @property
    def minor_versions(self) -> tuple[str, ...]:
        """The minor versions the range spans, oldest first.

        >>> VersionRange(releases=("0.9.1", "0.9.2", "0.10.0"), evidence=()).minor_versions
        ('0.9', '0.10')
        """
        return tuple(dict.fromkeys(".".join(r.split(".")[:2]) for r in self.releases))

    def __str__(self) -> str:
        """The range and the lines that decided it.

        >>> str(VersionRange(releases=("0.9.1", "0.9.2"),
        ...     evidence=((7, "kv_cache_utils.py:716"), (3, "gpu_worker.py:233"))))
        '0.9.1-0.9.2: kv_cache_utils.py:716 (line 7), gpu_worker.py:233 (line 3)'
        """
        runs = self.runs or ((self.lowest, self.highest),)
        span = ", ".join(a if a == b else f"{a}-{b}" for a, b in runs)
        said = ", ".join(f"{what} (line {line})" for line, what in self.evidence)
        return f"{span}: {said}" if said else span


def version_range(boot: Boot) -> VersionRange | None:
    """The releases ``boot`` can come from, or None when the log does not say.

    The version line when printed; else the releases whose logger calls and
    process labels explain every call site and label of the log that some
    release explains (data/fingerprint.json; docs/fingerprint.md).
    """
    fact = boot.first("vllm_version")
    if fact is not None:
        return VersionRange(releases=(str(fact.value),), evidence=((fact.line, "version line"),))
    table = _table()
    clues = [
        (line, f"{file}:{num}", table.site_mask(file, num))
        for (file, num), line in boot.call_sites().items()
    ]
    shapes: dict[str, int] = {}
    # A label counts beside a call site only: a /metrics text's engines are
    # labelled by the reader, not by vLLM, and a label alone is a weak clue.
    labels = boot.process_labels() if clues else {}
    for label, line in labels.items():
        shapes.setdefault(label_shape(label), line)  # rank=0 and rank=3 are one clue
    clues += [(line, f"({shape})", table.label_mask(shape)) for shape, line in shapes.items()]
    v0_line = _v0_line(boot)
    if v0_line is not None:
        # V0's lines narrow a range to the releases that still run V0 (before
        # 0.11.0): a V0 paste whose one call site also sits in 0.33's file is
        # 0.6.4, not "0.6.4 or 0.33".
        clues.append((v0_line, "V0 engine lines", _v0_mask(table.releases)))
    return decide(clues, table.releases)


def _v0_line(boot: Boot) -> int | None:
    """The first line only the V0 engine prints (boots.engine_generation's V0 lines)."""
    if engine_generation(boot) != "V0":
        return None
    return next((f.line for f in boot.facts if f.kind in ("cpu_blocks", "swapped_reqs")), None)


def _v0_mask(releases: tuple[str, ...]) -> int:
    """The releases that run the V0 engine, as a mask over ``releases``.

    >>> bin(_v0_mask(("0.9.2", "0.10.2", "0.11.0", "0.34.0")))
    '0b11'
    """
    return sum(1 << i for i, r in enumerate(releases) if supports(r, Feature.V0_ENGINE))


# Weighing a log whose sites no release explains all together: the best
# releases must explain at least this many sites, and this many more than any
# other release (a plugin's site that happens to match another release's line
# must not decide; docs/fingerprint.md).
MIN_AGREEING_SITES = 3
MIN_LEAD_SITES = 2


def decide(clues: list[tuple[int, str, int]], releases: tuple[str, ...]) -> VersionRange | None:
    """The range from clues (line, what, mask of the releases that explain it).

    A clue no release explains (mask 0) is foreign and ignored; a clue every
    release explains decides nothing and is not listed.

    >>> rel = ("0.9.0", "0.9.1", "0.9.2", "0.10.0")
    >>> str(decide([(7, "kv_cache_utils.py:716", 0b0110), (3, "gpu_worker.py:233", 0b1110),
    ...             (9, "worker.py:99", 0)], rel))
    '0.9.1-0.9.2: gpu_worker.py:233 (line 3), kv_cache_utils.py:716 (line 7)'
    >>> decide([(7, "a.py:1", 0b0001), (8, "b.py:2", 0b1000)], rel) is None
    True
    >>> str(decide([(1, "worker.py:238", 0b1001)], rel))
    '0.9.0, 0.10.0: worker.py:238 (line 1)'
    """
    everything = (1 << len(releases)) - 1
    known = [c for c in clues if c[2]]
    if not known:
        return None
    num_ignored = len(clues) - len(known)
    mask = everything
    for _, _, m in known:
        mask &= m
    is_weighed = False
    if not mask:
        mask = _weighed(known, len(releases)) or _between_releases(known)
        if not mask:
            return None
        is_weighed = True
    evidence = tuple(
        (line, what) for line, what, m in sorted(known) if m != everything and (m & mask)
    )
    if mask == everything:
        return None
    chosen = tuple(r for i, r in enumerate(releases) if mask >> i & 1)
    runs = _runs(mask, releases)
    return VersionRange(
        releases=chosen,
        evidence=evidence,
        num_ignored=num_ignored,
        is_weighed=is_weighed,
        runs=runs if len(runs) > 1 else (),
    )


def _runs(mask: int, releases: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The releases of ``mask`` as runs of consecutive ones.

    >>> _runs(0b11001, ("0.6.4", "0.6.4.post1", "0.6.5", "0.33.0", "0.34.0"))
    (('0.6.4', '0.6.4'), ('0.33.0', '0.34.0'))
    """
    out: list[tuple[str, str]] = []
    start = None
    for i in range(len(releases) + 1):
        inside = i < len(releases) and bool(mask >> i & 1)
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            out.append((releases[start], releases[i - 1]))
            start = None
    return tuple(out)


def _weighed(clues: list[tuple[int, str, int]], num_releases: int) -> int:
    """The releases that explain clearly the most clues, or 0 when none does.

    >>> bin(_weighed([(1, "a", 0b01), (2, "b", 0b01), (3, "c", 0b01), (4, "d", 0b10)], 2))
    '0b1'
    >>> _weighed([(1, "a", 0b01), (2, "b", 0b01), (3, "c", 0b10), (4, "d", 0b10)], 2)
    0
    """
    counts = [sum(m >> i & 1 for _, _, m in clues) for i in range(num_releases)]
    best = max(counts)
    runner_up = max((c for c in counts if c < best), default=0)
    if best < MIN_AGREEING_SITES or best - runner_up < MIN_LEAD_SITES:
        return 0
    return sum(1 << i for i, c in enumerate(counts) if c == best)


def _between_releases(clues: list[tuple[int, str, int]]) -> int:
    """A build between two releases (a dev or distribution build): its call sites
    sit where one release or another has them, never all in one. When at least
    two clues agree on some release, the build lies within the span of every
    release that explains any clue (the oldest to the newest): a wide span that
    decides no rule, or a narrow one that does.

    Real log 021 (April 2025): kv_cache_utils.py:634 and :637 are 0.8.4-0.8.5's,
    gpu_model_runner.py:1316 is 0.7.3's: the span 0.7.3-0.9.0.1, all before
    0.9.1's KV cache groups.

    >>> bin(_between_releases([(1, "a", 0b0001), (2, "b", 0b0110), (3, "c", 0b1110)]))
    '0b1111'
    >>> _between_releases([(1, "a", 0b0001), (2, "b", 0b1000)])
    0
    """
    agree = max(
        (
            sum(m >> i & 1 for _, _, m in clues)
            for i in range(max(m.bit_length() for *_, m in clues))
        ),
        default=0,
    )
    if agree < 2:
        return 0
    union = 0
    for _, _, m in clues:
        union |= m
    low = (union & -union).bit_length() - 1
    return (1 << union.bit_length()) - (1 << low)


def label_shape(label: str) -> str:
    """A process label with its numbers as ``N``: the shape a release names processes in.

    >>> label_shape("EngineCore_DP1"), label_shape("VllmWorker rank=3"), label_shape("Worker_PP1_TP0")
    ('EngineCore_DPN', 'VllmWorker rank=N', 'Worker_PPN_TPN')
    """
    return re.sub(r"\d+", "N", label)


def parse_spans(text: str) -> int:
    """Release indices written as intervals, as a bit mask.

    >>> bin(parse_spans("0-2,5"))
    '0b100111'
    """
    mask = 0
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        lo, hi = int(first), int(last or first)
        mask |= ((1 << (hi - lo + 1)) - 1) << lo
    return mask


@dataclass(frozen=True, slots=True, eq=False)  # hashed by identity (lru_cache)
class _Table:
    """data/fingerprint.json, with each file's calls parsed when first asked."""

    releases: tuple[str, ...]
    sites: dict[str, dict[str, str]]
    labels: dict[str, str]

    def site_mask(self, file: str, line: int) -> int:
        """The releases with a logger call in a file of that base name whose
        lines span ``line`` (Python's logging prints the call's first line from
        3.8; any line of the call is accepted, to be safe)."""
        mask = 0
        for first, last, releases in _calls(self, file):
            if first > line:
                break
            if line <= last:
                mask |= releases
        return mask

    def label_mask(self, shape: str) -> int:
        """The releases whose source can name a process so (0: no release does)."""
        if shape in self.labels:
            return parse_spans(self.labels[shape])
        if shape.startswith("Worker_"):
            # Worker_DPN_PPN_TPN...: each part is added where the release adds it.
            mask = parse_spans(self.labels["Worker_"]) if "Worker_" in self.labels else 0
            for part in shape[len("Worker_") :].split("_"):
                mask &= parse_spans(self.labels.get(f"Worker_{part.rstrip('N')}", ""))
            return mask
        return 0


@functools.lru_cache(maxsize=512)
def _calls(table: _Table, file: str) -> tuple[tuple[int, int, int], ...]:
    calls = []
    for key, spans in table.sites.get(file, {}).items():
        first, _, last = key.partition("-")
        calls.append((int(first), int(last or first), parse_spans(spans)))
    return tuple(sorted(calls))


def known_releases() -> tuple[str, ...]:
    """Every release the table was built from, oldest first."""
    return _table().releases


@functools.cache
def _table() -> _Table:
    # Beside this module in every install, like data/gpus.json.
    path = Path(__file__).resolve().parent.parent / "data" / "fingerprint.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return _Table(tuple(data["releases"]), data["sites"], data["labels"])
