"""The package's size bars (docs/development.md): no class over 300 lines, no
function over 80, counted by the ast as ``end_lineno - lineno`` (the ``def`` or
``class`` line to the last line of its body; a decorator is not counted).

A definition over its bar is split along what it does, not cut in the middle.
``ALLOWED`` names the few that are over today, each with its size when it was
listed; remove a name once its definition is under the bar (the last test says
when).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "vllm_logread"
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 80

# (module under vllm_logread/, qualified name): its size when it was listed.
# None is over its bar today; a name here needs its reason beside it.
ALLOWED: dict[tuple[str, str], int] = {}


@functools.cache
def _sizes() -> dict[tuple[str, str], tuple[int, int]]:
    """Every class and function of the package: (module, qualified name) -> (lines, bar)."""
    found: dict[tuple[str, str], tuple[int, int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()

        def visit(node: ast.AST, prefix: str, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    name = prefix + child.name
                    bar = MAX_CLASS_LINES if isinstance(child, ast.ClassDef) else MAX_FUNCTION_LINES
                    assert child.end_lineno is not None
                    found[module, name] = (child.end_lineno - child.lineno, bar)
                    visit(child, name + ".")
                else:
                    visit(child, prefix)

        visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_no_class_over_300_lines_and_no_function_over_80() -> None:
    over = {
        f"{module}:{name} {lines} lines (bar {bar})"
        for (module, name), (lines, bar) in _sizes().items()
        if lines > bar and (module, name) not in ALLOWED
    }
    assert sorted(over) == []


def test_the_allowed_ones_grow_no_further() -> None:
    sizes = _sizes()
    grown = {
        f"{module}:{name} {sizes[module, name][0]} lines (listed at {listed})"
        for (module, name), listed in ALLOWED.items()
        if (module, name) in sizes and sizes[module, name][0] > listed
    }
    assert sorted(grown) == []


def test_every_allowed_one_is_still_over_its_bar() -> None:
    # Once a listed definition is under its bar (or gone), its name leaves ALLOWED.
    sizes = _sizes()
    stale = sorted(
        f"{module}:{name}"
        for module, name in ALLOWED
        if (module, name) not in sizes or sizes[module, name][0] <= sizes[module, name][1]
    )
    assert stale == []
