"""The examples in the package's docstrings (DESIGN.md: pure helpers carry a
doctest) run with the tests, so they cannot go stale."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import vllm_logread

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(vllm_logread.__path__, "vllm_logread.")
    if m.name != "vllm_logread.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_some_modules_have_examples() -> None:
    attempted = sum(
        doctest.testmod(importlib.import_module(n), report=False).attempted for n in MODULES
    )
    assert attempted >= 30
