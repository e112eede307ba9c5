"""The resolver of unknowns: candidates, pruned by every figure the log prints.

Each unknown of a boot is a set of candidates (docs/candidates.md): the vLLM
releases the log can come from (:class:`~vllm_logread.boot.fingerprint.VersionRange`;
no range: any release), the layout (plain full attention, or a hybrid's KV cache
groups), the block size, the scheduler's caps. Every printed figure is a
constraint: a candidate survives only if it reproduces the figure under the
rules of every release it could be. A version rule is evaluated over the whole
range (:func:`rule_over`): when every release gives the same outcome it applies;
when they differ it decides nothing.

The layout is decided here, once (:func:`resolve_layout`): which figure settles
plain full attention (or a given config's reading), or why none does. The
findings are typed (:class:`LayoutFinding`); report/exactness.py words them.
Values the candidates agree on are one answer (:func:`agreed`): block sizes 16
and 128 that both give 33 users make 33 users exact, the block size alone
unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from ..kv.architectures import family_of_name
from ..vllm.rules import (
    GPU_MAX_NUM_SEQS_CANDIDATES,
    KERNEL_BLOCK_SIZES,
    BlockSizeCandidate,
    Feature,
    can_be_hybrid,
    concurrency_tells_layout,
    cpu_batch_defaults,
    default_block_sizes,
    supports,
)
from ..vllm.versions import Version, VersionLike, cdiv

if TYPE_CHECKING:
    from ..kv.specs import KVSpec
    from .boots import Boot
    from .fingerprint import VersionRange
    from .state import BootState

T = TypeVar("T")


def rule_over(versions: VersionRange | None, rule: Callable[[VersionLike], bool]) -> bool | None:
    """A version rule's outcome over every release the log can come from.

    True or False when every release in the range gives it; None when they
    differ (the rule decides nothing). No range (the log says nothing of its
    version): the rule's own answer for an unknown version (rules.py's policy).

    >>> from vllm_logread.boot.fingerprint import VersionRange
    >>> old = VersionRange(releases=("0.9.1", "0.9.2", "0.11.0"), evidence=())
    >>> rule_over(old, concurrency_tells_layout), rule_over(None, concurrency_tells_layout)
    (True, False)
    >>> rule_over(VersionRange(releases=("0.11.0", "0.24.0"), evidence=()), concurrency_tells_layout)
    """
    if versions is None or not versions.releases:
        return rule(None)
    outcomes = {rule(r) for r in versions.releases}
    return outcomes.pop() if len(outcomes) == 1 else None


def version_said(versions: VersionRange | None) -> str | None:
    """The releases as a person reads them: ``0.11.0`` or ``0.9.1 to 0.11.0``.

    >>> from vllm_logread.boot.fingerprint import VersionRange
    >>> version_said(VersionRange(releases=("0.9.1", "0.9.2"), evidence=()))
    '0.9.1 to 0.9.2'
    """
    if versions is None or not versions.releases:
        return None
    if versions.is_one_release:
        return versions.lowest
    return f"{versions.lowest} to {versions.highest}"


def agreed(values: Iterable[T]) -> T | None:
    """The one value every surviving candidate gives, else None (a range).

    >>> agreed([33, 33]), agreed([33, 34]), agreed([])
    (33, None, None)
    """
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


class CheckLike(Protocol):
    """A check of the plain reading against one printed figure (report/model.Check)."""

    @property
    def name(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def line(self) -> int | None: ...


#: What settled the layout, or why nothing did.
LayoutEvidence = Literal[
    # settled: the users need no other layout
    "no_groups",  # V0, or V1 before 0.9.1 over the whole range: no KV cache group exists
    "one_group_stated",  # "kv cache group sizes (16)" or one group stated
    "verified_config",  # a config whose architecture the tool has worked by hand
    "named_plain",  # the model's name says a plain family
    "blocks_stated",  # num_gpu_blocks x block size = pool, N / cdiv(L, bs) = concurrency
    "concurrency",  # every release before 0.20.1: the plain reading's concurrency printed
    "groups_confirm",  # an unverified config's groups, pool and concurrency all reproduced
    "empty_pool",  # a pool of 0 tokens holds nobody in any layout
    # open: the users rest on a layout the figures do not settle
    "hybrid_line",  # a line only several KV cache groups print: not plain
    "unverified",  # a config whose reading the log does not confirm
    "named_family",  # the name says a hybrid family
    "unknown_name",  # the name says no family
    "no_concurrency",  # nameless, and no concurrency the plain reading passes
    "pool_from_concurrency",  # nameless; releases from 0.20.1 print any layout alike
]

_SETTLED: frozenset[LayoutEvidence] = frozenset(
    {
        "no_groups",
        "one_group_stated",
        "verified_config",
        "named_plain",
        "blocks_stated",
        "concurrency",
        "groups_confirm",
        "empty_pool",
    }
)

# Lines only a boot with several KV cache groups prints: a Mamba cache mode (0.31+,
# Mamba and gated-delta-net hybrids).
_HYBRID_KINDS = ("mamba_cache_mode",)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlainFigures:
    """The plain reading's figures for one engine: what the constraints test."""

    num_blocks: int | None
    block_size: int | None
    pool_tokens: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutFinding:
    """How the layout was settled (or why not), with the figures and lines that did.

    Attributes:
        evidence: the constraint that decided (:data:`LayoutEvidence`).
        lines: the log's lines it read, in order.
        versions: the releases the rule was evaluated over (words: "0.9.1 to 0.11.0").
        printed_concurrency: the concurrency the log prints, when it decided.
        num_blocks, block_size, pool_tokens, max_model_len: the figures of
            ``blocks_stated`` (pool = blocks x block size, concurrency =
            blocks / cdiv(max len, block size)).
        family: the family the model's name says (named_family).
    """

    evidence: LayoutEvidence
    lines: tuple[int, ...] = ()
    versions: str | None = None
    printed_concurrency: float | None = None
    num_blocks: int | None = None
    block_size: int | None = None
    pool_tokens: int | None = None
    max_model_len: int | None = None
    family: str | None = None

    @property
    def is_settled(self) -> bool:
        """The users do not depend on a layout the log leaves open."""
        return self.evidence in _SETTLED

    @property
    def blocks_per_request(self) -> int | None:
        if not self.max_model_len or not self.block_size:
            return None
        return cdiv(self.max_model_len, self.block_size)


def _one_group_stated(boot: Boot) -> bool:
    groups = boot.last("num_kv_cache_groups")
    return groups is not None and int(groups.value) == 1


def _passed(checks: Sequence[CheckLike], name: str) -> CheckLike | None:
    return next((c for c in checks if c.name == name and c.status == "pass"), None)


def blocks_stated(boot: Boot, state: BootState, plain: PlainFigures) -> LayoutFinding | None:
    """One KV cache group, whatever the release, when the log states its blocks N,
    its pool P = N x block size and its concurrency N / cdiv(max len, block size)
    to the printed digits: a hybrid's pool line is smaller than N x block size from
    0.20.1 (int(concurrency x max len), its concurrency over every group's blocks)
    and N // groups x block size before. 20,000 blocks of 16 at 65,536: pool
    320,000 = 20,000 x 16 and 4.88x = 20,000 / 4,096."""
    engines = boot.pool_engines
    conc_f = state.concurrency_fact
    max_len, bs = state.max_model_len, plain.block_size
    if not engines or conc_f is None or not max_len or not bs:
        return None
    eng = engines[0]
    n, pool, pool_facts = eng.gpu_blocks, eng.pool_tokens, eng.pool_facts
    if n is None or n <= 0 or pool is None or not pool_facts or not eng.block_facts:
        return None
    if pool != n * bs or abs(round(n / cdiv(max_len, bs), 2) - float(conc_f.value)) > 0.0051:
        return None
    lines = sorted({pool_facts[0].line, conc_f.line, eng.block_facts[0].line})
    return LayoutFinding(
        evidence="blocks_stated",
        lines=tuple(line for line in lines if line is not None),
        printed_concurrency=float(conc_f.value),
        num_blocks=n,
        block_size=bs,
        pool_tokens=pool,
        max_model_len=max_len,
    )


def _concurrency_confirms(state: BootState, checks: Sequence[CheckLike]) -> LayoutFinding | None:
    """Every release the log can be is before 0.20.1 and the plain reading's
    concurrency is the printed one: a hybrid prints another there (gpt-oss-20b
    on 0.11.0: 3.28x where plain attention reads 3.63x)."""
    conc_f = state.concurrency_fact
    if conc_f is None or _passed(checks, "max_concurrency") is None:
        return None
    if rule_over(state.versions, concurrency_tells_layout) is not True:
        return None
    return LayoutFinding(
        evidence="concurrency",
        lines=() if conc_f.line is None else (conc_f.line,),
        versions=version_said(state.versions),
        printed_concurrency=float(conc_f.value),
    )


def _groups_confirm(boot: Boot, checks: Sequence[CheckLike]) -> LayoutFinding | None:
    """An unverified config's KV cache groups, confirmed by the log: it states its
    groups' block sizes (0.31+) and the tool's reading reproduces every group,
    the concurrency to its printed digits and the pool (no check fails)."""
    groups_f = boot.last("kv_group_block_sizes")
    if groups_f is None or any(c.status == "fail" for c in checks):
        return None
    decided = [_passed(checks, "kv_cache_groups"), _passed(checks, "max_concurrency")]
    if any(c is None for c in decided):
        return None
    memory = _passed(checks, "pool_vs_memory")
    lines = {c.line for c in (*decided, memory) if c is not None and c.line is not None}
    return LayoutFinding(evidence="groups_confirm", lines=tuple(sorted(lines)))


def _plain_evidence(
    boot: Boot, state: BootState, checks: Sequence[CheckLike], plain: PlainFigures
) -> LayoutFinding | None:
    """The figures that settle one plain group whatever the model's name says.

    Every figure must fit: a failed check, or a pool line that is not the stated
    blocks x block size (310,000 tokens beside 20,000 blocks of 16), leaves the
    plain reading pruned however well its concurrency fits.
    """
    if any(
        c.status == "fail" or (c.name == "blocks_vs_tokens" and c.status != "pass") for c in checks
    ):
        return None
    return blocks_stated(boot, state, plain) or _concurrency_confirms(state, checks)


def _with_config(
    boot: Boot,
    state: BootState,
    spec: KVSpec,
    checks: Sequence[CheckLike],
    plain: PlainFigures,
) -> LayoutFinding:
    """A config given or found: verified, confirmed by the log, or open."""
    if bool(getattr(spec, "is_verified", True)):
        return LayoutFinding(evidence="verified_config")
    if bool(getattr(spec, "is_uniform", True)):
        found = _plain_evidence(boot, state, checks, plain)
    else:
        found = _groups_confirm(boot, checks)
    return found or LayoutFinding(evidence="unverified")


def _without_config(
    boot: Boot, state: BootState, checks: Sequence[CheckLike], plain: PlainFigures
) -> LayoutFinding:
    """No config: the name's family, else the figures, else why nothing settles it."""
    if plain.pool_tokens == 0:
        return LayoutFinding(evidence="empty_pool")
    hybrid = next((f for k in _HYBRID_KINDS if (f := boot.first(k)) is not None), None)
    model = state.model_name
    if hybrid is not None and not model:
        lines = () if hybrid.line is None else (hybrid.line,)
        return LayoutFinding(evidence="hybrid_line", lines=lines)
    found = family_of_name(model) if model else None
    if found is not None and found[1]:
        return LayoutFinding(evidence="named_plain", family=found[0])
    settled = _plain_evidence(boot, state, checks, plain)
    if settled is not None:
        return settled
    if model:
        if found is None:
            return LayoutFinding(evidence="unknown_name")
        return LayoutFinding(evidence="named_family", family=found[0])
    conc_f = state.concurrency_fact
    if conc_f is None or _passed(checks, "max_concurrency") is None:
        return LayoutFinding(evidence="no_concurrency")
    return LayoutFinding(
        evidence="pool_from_concurrency",
        lines=() if conc_f.line is None else (conc_f.line,),
        versions=version_said(state.versions),
        printed_concurrency=float(conc_f.value),
    )


def resolve_layout(
    boot: Boot,
    state: BootState,
    spec: KVSpec | None,
    checks: Sequence[CheckLike],
    plain: PlainFigures,
) -> LayoutFinding:
    """The layout the users rest on, and the figure that settles it (or why none does).

    ``checks`` are the reading's checks against the log's figures (the plain
    reading's when ``spec`` is None); ``plain`` its figures for the first engine.
    The order is the constraints': no KV cache group can exist over the whole
    range; one group stated; a config (verified, or its reading confirmed by
    every figure); a plain family's name; then the figures, which beat a
    family's guess (IBM Granite 4.0's dense models beside its ``-h`` hybrids).
    """
    gen = state.generation
    if rule_over(state.versions, lambda v: can_be_hybrid(v, gen)) is False:
        return LayoutFinding(evidence="no_groups")
    if _one_group_stated(boot):
        return LayoutFinding(evidence="one_group_stated")
    if spec is not None:
        return _with_config(boot, state, spec, checks, plain)
    return _without_config(boot, state, checks, plain)


def block_size_candidates(
    state: BootState, *, is_mla: bool, is_all_sliding: bool
) -> tuple[BlockSizeCandidate, ...]:
    """The block sizes the boot can have run, most likely first: the stated (or
    given) one, else the platform's defaults (rules.default_block_sizes) for every
    release the log can be, each once. Why the platform alone does not settle it:
    from 0.8 to 0.29 every platform's pool line says "GPU KV cache size" (CPU,
    TPU, HPU and NPU builds included), and a CPU build's default moved from 16 to
    128 (0.8.4 to 0.11.0 only with IPEX)."""
    if state.block_size is not None:
        return (state.block_size,)
    ranged = state.versions is not None and not state.version and state.versions.releases
    releases: Sequence[str | None] = (
        state.versions.releases if ranged and state.versions is not None else (state.vllm_version,)
    )
    out: dict[int, BlockSizeCandidate] = {}
    for release in releases:
        for c in default_block_sizes(
            device=state.device,
            gen=state.generation,
            version=release,
            max_model_len=state.max_model_len,
            is_mla=is_mla,
            is_all_sliding=is_all_sliding,
            mla_kernel=state.cpu_mla_kernel,
        ):
            out.setdefault(c.block_size, c)
    return tuple(out.values())


def other_block_sizes(tried: tuple[BlockSizeCandidate, ...]) -> tuple[BlockSizeCandidate, ...]:
    """Every other block size vLLM accepts, when no default reproduces the log's
    figures (the pool line, the printed concurrency, the KV memory): what
    survives decides, and the users are exact only when every survivor gives them."""
    seen = {t.block_size for t in tried}
    return tuple(
        BlockSizeCandidate(
            bs, f"the block size that reproduces the log's figures ({bs} tokens; not stated)"
        )
        for bs in KERNEL_BLOCK_SIZES
        if bs not in seen
    )


def cpu_max_num_seqs_candidates(
    versions: VersionRange | None, generation: str | None, world_size: int
) -> tuple[int, ...]:
    """vLLM's default max_num_seqs on CPU for every release the log can be,
    smallest first: the CPU backend's own (rules.cpu_batch_defaults: 0.9.2's 32,
    128 a rank from 0.10.0), else the GPU rule by the host's RAM (256, or 1,024
    from 70 GiB). One release, or releases that agree: one value.

    >>> from vllm_logread.boot.fingerprint import VersionRange
    >>> cpu_max_num_seqs_candidates(VersionRange(releases=("0.10.0", "0.32.0"), evidence=()), "V1", 2)
    (256,)
    >>> cpu_max_num_seqs_candidates(VersionRange(releases=("0.9.2", "0.10.0"), evidence=()), "V1", 1)
    (32, 128)
    """
    releases: Sequence[str | None] = (
        (None,) if versions is None or not versions.releases else versions.releases
    )
    values: set[int] = set()
    for release in releases:
        own = cpu_batch_defaults(release, generation, world_size=world_size)
        values |= {own.max_num_seqs} if own is not None else set(GPU_MAX_NUM_SEQS_CANDIDATES)
    return tuple(sorted(values))


def rule_sets(versions: VersionRange | None, *, skip: str | None) -> tuple[str, ...]:
    """One release for each set of vLLM's rules the log can have run, newest first:
    the releases of ``versions`` (every release the fingerprint table knows when the
    log's lines name none), grouped by what the Feature table says of them, each group
    by its newest; ``skip``'s group left out (the rules already tried).

    >>> from vllm_logread.boot.fingerprint import VersionRange
    >>> rule_sets(VersionRange(releases=("0.11.0", "0.11.1", "0.11.2"), evidence=()), skip=None)
    ('0.11.2', '0.11.0')
    >>> rule_sets(VersionRange(releases=("0.11.0", "0.11.1", "0.11.2"), evidence=()), skip="0.11.1")
    ('0.11.0',)
    """
    from .fingerprint import known_releases

    releases = versions.releases if versions is not None and versions.releases else known_releases()

    def signature(release: str) -> tuple[bool, ...]:
        return tuple(supports(release, f) for f in Feature)

    groups: dict[tuple[bool, ...], str] = {}
    for release in sorted(releases, key=lambda r: Version.parse(r) or Version((0,)), reverse=True):
        groups.setdefault(signature(release), release)
    skipped = signature(skip) if skip is not None else None
    return tuple(r for sig, r in groups.items() if sig != skipped)


__all__ = [
    "CheckLike",
    "LayoutEvidence",
    "LayoutFinding",
    "PlainFigures",
    "agreed",
    "block_size_candidates",
    "blocks_stated",
    "cpu_max_num_seqs_candidates",
    "other_block_sizes",
    "resolve_layout",
    "rule_over",
    "rule_sets",
    "version_said",
]
