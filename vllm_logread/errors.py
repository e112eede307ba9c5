"""The LogReadError tree: every error the library raises.

The library knows no exit codes: the command line maps each error to its documented
one (session/events.exit_code_of, docs/exit-codes.md).
"""

from __future__ import annotations


class LogReadError(ValueError):
    """Base of every error the library raises."""


class UsageError(LogReadError):
    """Bad options or arguments."""


class InputError(LogReadError):
    """An input that cannot be read at all: missing file, directory."""


class ConfigError(LogReadError):
    """A model config that cannot be read or modelled."""


class MissingPoolError(LogReadError):
    """The log lacks what was asked, e.g. no KV pool line."""


class WrappedError(LogReadError):
    """An error said again with more context (e.g. which input of a diff it is about);
    ``wrapped`` is the original, whose exit code it keeps."""

    def __init__(self, message: str, wrapped: LogReadError) -> None:
        super().__init__(message)
        self.wrapped = wrapped
