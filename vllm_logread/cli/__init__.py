"""The command line: click's commands (commands.py, the one module that imports
click), the shared options (options.py), one module per command (app.py runs
read; diff_app, kv_app, simulate_app, fleet_app) and each input's exit code
(outcome.py)."""

from __future__ import annotations


def main() -> None:
    """The ``vllm-logread`` console script (pyproject.toml). click's group is
    imported here, when the command runs, so that importing ``cli.app`` (the
    read command as a library call) does not import click."""
    from .commands import main as group

    group()
