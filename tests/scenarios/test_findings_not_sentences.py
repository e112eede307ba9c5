"""The model stage holds values, render/ the words (DESIGN.md: "render/ every English word,
from typed findings"; pyflakes' messages): outside render/, nothing appends a sentence to a
``warnings`` or ``notes`` list, and no function takes ``warnings`` / ``notes: list[str]`` to
fill in. A finding is a class of vllm_logread/findings.py, returned by the function that
finds it and worded by render/words.py.

Not every module is converted yet: ``STILL_SENTENCES`` lists those that still append
sentences, with how many. The test fails when any other module appends one (a new module
cannot start), and when a listed module's count changes (convert it, then lower or drop
its row): the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import vllm_logread

PACKAGE = Path(vllm_logread.__file__).parent
NAMES = frozenset({"warnings", "notes"})

# module -> (sentences appended to warnings/notes, list[str] output parameters), today.
STILL_SENTENCES: dict[str, tuple[int, int]] = {
    "read/metrics.py": (2, 0),
    "report/observed.py": (2, 0),
    "report/whatif.py": (8, 0),
}


def _is_finding(node: ast.expr) -> bool:
    """``SomeFinding(...)``: a class (CapWords) called, not a sentence."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id[:1].isupper()
    )


def _sentences(tree: ast.AST) -> tuple[int, int]:
    """(appends of anything but a finding to warnings/notes, list[str] warnings/notes params)."""
    appends = params = 0
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in NAMES
            and not (node.args and _is_finding(node.args[0]))
        ):
            appends += 1
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            params += sum(
                1
                for a in (*node.args.args, *node.args.kwonlyargs)
                if a.arg in NAMES
                and a.annotation is not None
                and ast.unparse(a.annotation) == "list[str]"
            )
    return appends, params


def _counts() -> dict[str, tuple[int, int]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("render/"):
            continue
        found = _sentences(ast.parse(path.read_text(encoding="utf-8")))
        if found != (0, 0):
            out[rel] = found
    return out


def test_only_the_listed_modules_append_sentences() -> None:
    assert _counts() == STILL_SENTENCES


def test_the_converted_stages_hold_findings() -> None:
    # kv/ (the spec, its layer kinds and dtype, the KV cache groups and their rules),
    # capacity, the workload a boot serves and a fleet server's window: every note is a
    # finding.
    counts = _counts()
    converted = [
        m
        for m in counts
        if m.startswith("kv/") or m in ("report/capacity.py", "report/mix.py", "read/prometheus.py")
    ]
    assert converted == []


def test_the_scan_sees_a_sentence() -> None:
    # The scan itself, on a sentence appended and on a finding appended.
    said = ast.parse(
        "def f(notes: list[str]) -> None:\n"
        "    notes.append(f'TP {tp} > {n} KV heads')\n"
        "    notes.append(KVHeadsReplicated(tensor_parallel_size=tp, total_num_kv_heads=n))\n"
    )
    assert _sentences(said) == (1, 1)
