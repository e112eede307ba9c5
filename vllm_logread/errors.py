"""The LogReadError tree: every error the library raises, each with its documented exit code."""

from __future__ import annotations


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
