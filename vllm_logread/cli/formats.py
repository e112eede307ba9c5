"""The output formats of each command, in a module of its own so that commands.py
can declare ``--format``'s choices without importing the options machinery
(``vllm-logread --help`` then imports click and this: docs/performance.md,
"Start-up"). options.py checks a command's format against the same table.
"""

from __future__ import annotations

#: The output formats of each command: tables where the output is one.
FORMATS: dict[str, tuple[str, ...]] = {
    "read": ("text", "markdown", "csv", "json", "github"),
    "kv": ("text", "json", "markdown", "csv"),
    "diff": ("text", "json", "markdown", "csv", "github"),
    "simulate": ("text", "json", "csv"),
}
