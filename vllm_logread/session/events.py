"""What reading an input gives: typed outputs while it is read, and its results at the end.

Why a module of its own: the session makes these and the renderers format them, so they
sit below both (the session knows nothing of text; the renderers nothing of sessions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Literal

from ..errors import LogReadError, MissingPoolError, WrappedError

if TYPE_CHECKING:  # its fields' types; /metrics, crosscheck and sweep only when asked for
    from ..jsontypes import JSONObject
    from ..read.facts import Fact, ParseWarning
    from ..read.metrics import Server
    from ..report.crosscheck import Agreement
    from ..report.model import Options, Report, SpecResolver
    from ..report.sweep import SweepRow
    from .watch import LoadSummary

#: ``report``, ``alert``, ``summary``, ``warning`` (stderr), ``echo`` (input
#: bytes passed through, in ``data``) or ``workload`` (the workload a log's
#: request lines showed: ``report.observed``, at the end of its boot); a ``note``
#: goes to stderr like a warning but is no fault of the input (``--strict`` ignores it).
OutputKind = Literal["report", "alert", "summary", "warning", "note", "echo", "workload"]


@dataclass(slots=True)
class Output:
    """One thing to tell the user, the moment it is known.

    Attributes:
        kind: see ``OutputKind``.
        line: the input line after which it belongs (None: now).
        summary: a load summary (``summary``), with its ``title`` or the
            /metrics ``server`` it came from; the renderer words it.
        title: a report's label when an input holds several boots ("boot 2 of 3").
        is_update: a live pipe's report again, its answer changed by a later line.
    """

    kind: OutputKind
    report: Report | None = None
    text: str = ""
    line: int | None = None
    data: bytes = b""
    summary: LoadSummary | None = None
    title: str = ""
    server: Server | None = None
    is_update: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class BootResult:
    """One boot as ``--json`` gives it: its report, the facts it stated and its load."""

    report: Report
    facts: list[Fact]
    load: LoadSummary | None


class ExitCode(IntEnum):
    """The documented exit codes (docs/exit-codes.md); several inputs exit with the
    highest of theirs (a contradiction outranks a missing pool, which outranks a file
    that cannot be opened, which outranks a failed gate)."""

    OK = 0
    GATE_FAILED = 1  # --min-users, diff --max-drop, the fleet's gate
    USAGE = 2  # a bad option or file, an unreadable config, a missing dependency
    MISSING = 3  # the log lacks what was asked (no pool line; a boot that serves nobody)
    CONTRADICTION = 4  # stated or given figures contradict each other


def exit_code_of(err: LogReadError) -> ExitCode:
    """A library error's exit code: 3 when the log lacks what was asked, else 2.

    >>> from vllm_logread.errors import UsageError
    >>> int(exit_code_of(MissingPoolError("no pool"))), int(exit_code_of(UsageError("bad")))
    (3, 2)
    >>> int(exit_code_of(WrappedError("OLD: no pool", MissingPoolError("no pool"))))
    3
    """
    while isinstance(err, WrappedError):
        err = err.wrapped
    return ExitCode.MISSING if isinstance(err, MissingPoolError) else ExitCode.USAGE


@dataclass(frozen=True, slots=True)
class ExitStatus:
    """A command's exit code and what it says on stderr (docs/exit-codes.md):
    one input's, or the worst of several (outcome.worst)."""

    code: ExitCode
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class GateResult:
    """What ``--min-users`` judged of one input: the lowest users over its workloads
    (None: unknown, which fails), against the threshold less ``--margin``.

    The margin is boot-to-boot tolerance: the memory profile moves a pool by a few
    percent between boots of the same settings, so a gate at exactly the users one boot
    gave would flap. ``--min-users 30 --margin 5%`` fails below 30 x 0.95 = 28.5, so 29
    passes (said as within the margin) and 28 fails.

    >>> g = GateResult(min_users=30, users=29, margin_pct=5.0)
    >>> g.floor_users, g.passed, g.is_within_margin
    (29, True, True)
    >>> GateResult(min_users=30, users=28, margin_pct=5.0).passed
    False
    """

    min_users: int
    users: int | None
    margin_pct: float = 0.0

    @property
    def floor_users(self) -> int:
        """The fewest users that pass: min_users less the margin, rounded up (exact)."""
        from fractions import Fraction

        floor = Fraction(self.min_users) * (1 - Fraction(str(self.margin_pct)) / 100)
        return max(0, -(-floor.numerator // floor.denominator))

    @property
    def passed(self) -> bool:
        return self.users is not None and self.users >= self.floor_users

    @property
    def is_within_margin(self) -> bool:
        """Passed only thanks to the margin (below min_users itself)."""
        return self.passed and self.users is not None and self.users < self.min_users

    def to_json(self) -> JSONObject:
        return {
            "min_users": self.min_users,
            "margin_pct": self.margin_pct,
            "floor_users": self.floor_users,
            "users": self.users,
            "passed": self.passed,
            "is_within_margin": self.is_within_margin,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class InputResult:
    """One input once read: what every output format and the exit code need.

    ``reports`` and ``loads`` are the boots to give (the last boot with a pool, or
    every boot with ``--all-boots`` and for /metrics texts); ``json_boots`` the
    boots ``--json`` lists; ``missing_pool`` exit 3's message when no boot stated
    a pool ("" otherwise); ``error_code`` and ``error`` what is wrong with it.
    """

    source: str
    warnings: tuple[ParseWarning, ...]
    reports: tuple[Report, ...]
    loads: tuple[LoadSummary | None, ...]
    json_boots: tuple[BootResult, ...]
    missing_pool: str
    is_reported: bool
    options: Options | None = None
    spec_resolver: SpecResolver | None = field(default=None)
    # What is wrong with this input on its own (no pool, a failed engine, a
    # contradiction): its exit code (0: nothing) and message. Tables, totals
    # and JSON totals count only the inputs with error_code 0.
    error_code: ExitCode = ExitCode.OK
    error: str = ""
    # A sweep (--prompt/--output lists): each report's answer at each workload,
    # computed once (report/sweep.py, outcome.with_sweep); the gate, JSON, CSV
    # and text read these rows.
    sweep: tuple[SweepRow, ...] = ()
    # The input's whole exit code (what is wrong with it, --strict, the gate) and
    # what the gate judged; set once the command's options are applied (outcome.judged).
    exit_code: ExitCode = ExitCode.OK
    gate: GateResult | None = None
    # --compare-metrics: the log's figures against the server's /metrics, side by side.
    crosscheck: tuple[Agreement, ...] = ()

    @property
    def is_good(self) -> bool:
        """Read, with a pool that served and agrees with the model: counted in totals."""
        return self.error_code == 0
