"""Facts: one named value that one log line states (see FACTS.md).

Every number the tool reports is computed from these, and ``--json`` lists them
all, so a reader can audit each figure back to its line. A fact keeps the
precision it was printed with: ``3.31 GiB`` means [3.305, 3.315), and checks
use that interval instead of a magic tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Value = int | float | str | bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """One value stated by one line.

    Attributes:
        kind: a name from FACTS.md (``pool_tokens``, ``weights_gib``, ...).
        value: the value in the unit the kind names.
        line: 1-based number of the (first) physical line in the input.
        process: the process tag (``EngineCore_DP0 pid=200``) or None.
        decimals: how many decimals the value was printed with (None: exact or
            not a printed float), so ``half_ulp`` gives the printed precision.
        source: which input (file name or ``-``) the line came from.
        time: the line's header time ``MM-DD HH:MM:SS`` or None (not in the JSON).
    """

    kind: str
    value: Value
    line: int
    process: str | None = None
    decimals: int | None = None
    source: str = "-"
    time: str | None = None

    @property
    def half_ulp(self) -> float:
        """Half a unit in the last printed place (0.005 for ``3.31``).

        >>> Fact(kind="available_kv_gib", value=3.31, line=1, decimals=2).half_ulp
        0.005
        """
        if self.decimals is None:
            return 0.0
        return 0.5 * 10.0 ** (-self.decimals)

    def to_json(self) -> dict[str, Any]:
        """The FACTS.md JSON shape: kind, value, line, process."""
        return {"kind": self.kind, "value": self.value, "line": self.line, "process": self.process}


class LogReadError(ValueError):
    """Base of every error the library raises; the CLI maps it to an exit code."""

    exit_code = 2


class UsageError(LogReadError):
    """Bad options or arguments (exit 2)."""

    exit_code = 2


class InputError(LogReadError):
    """An input that cannot be read at all: missing file, directory (exit 2)."""

    exit_code = 2


class ConfigError(LogReadError):
    """A model config that cannot be read or modelled (exit 2)."""

    exit_code = 2


class MissingPoolError(LogReadError):
    """The log lacks what was asked, e.g. no KV pool line (exit 3)."""

    exit_code = 3


class ContradictionError(LogReadError):
    """The log contradicts the model config beyond printed precision (exit 4)."""

    exit_code = 4
