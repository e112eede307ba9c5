"""What reading an input gives: typed outputs while it is read, and its results at the end.

Why a module of its own: the session makes these and the renderers format them, so they
sit below both (the session knows nothing of text; the renderers nothing of sessions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .read.facts import Fact, ParseWarning
from .read.metrics import Server
from .report.model import Options, Report
from .report.sweep import SweepRow
from .watch import LoadSummary

#: ``report``, ``alert``, ``summary``, ``warning`` (stderr), ``echo`` (input
#: bytes passed through, in ``data``) or ``workload`` (the workload a log's
#: request lines showed: ``report.observed``, at the end of its boot).
OutputKind = Literal["report", "alert", "summary", "warning", "echo", "workload"]


@dataclass(slots=True)
class Output:
    """One thing to tell the user, the moment it is known.

    Attributes:
        kind: see ``OutputKind``.
        line: the input line after which it belongs (None: now).
        summary: a load summary (``summary``), with its ``title`` or the
            /metrics ``server`` it came from; the renderer words it.
    """

    kind: OutputKind
    report: Report | None = None
    text: str = ""
    line: int | None = None
    data: bytes = b""
    summary: LoadSummary | None = None
    title: str = ""
    server: Server | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BootResult:
    """One boot as ``--json`` gives it: its report, the facts it stated and its load."""

    report: Report
    facts: list[Fact]
    load: LoadSummary | None


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
    spec_resolver: Callable[..., Any] | None = field(default=None)
    # What is wrong with this input on its own (no pool, a failed engine, a
    # contradiction): its exit code (0: nothing) and message. Tables, totals
    # and JSON totals count only the inputs with error_code 0.
    error_code: int = 0
    error: str = ""
    # A sweep (--prompt/--output lists): each report's answer at each workload,
    # computed once (report/sweep.py, outcome.with_sweep); the gate, JSON, CSV
    # and text read these rows.
    sweep: tuple[SweepRow, ...] = ()

    @property
    def is_good(self) -> bool:
        """Read, with a pool that served and agrees with the model: counted in totals."""
        return self.error_code == 0
