"""The README is one screen a new user reads first: exactly two Quick-start
commands in one block, the first's command and output pasted as they really are
(tests/scenarios/test_docs.py runs the example and compares its output), `./run demo`
installing the tool alone, and .ci/run running exactly the second command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
RUN = (ROOT / "run").read_text(encoding="utf-8")


def _quick_start() -> str:
    return README.split("## Quick start\n", 1)[1].split("\n## ", 1)[0]


def _case(name: str) -> str:
    return RUN.split(f"    {name})\n", 1)[1].split(";;", 1)[0]


def test_the_readme_is_one_screen() -> None:
    # The bound: at most about 150 lines; the manual is docs/.
    assert len(README.splitlines()) <= 150


def test_quick_start_is_two_commands_in_one_block() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", _quick_start(), flags=re.S)
    commands = [line for line in blocks[0].splitlines() if line.strip()]
    assert commands == ["./run demo", "./run test"]


def test_the_demo_runs_the_readme_s_example() -> None:
    # The example under the Quick start is the demo's command; test_docs.py compares
    # its output with the block below it.
    demo = re.search(r"exec \.venv/bin/vllm-logread (.+)", _case("demo"))
    assert demo is not None
    shown = re.search(r"```sh\n\$ vllm-logread (.+)\n```\n\n```text\n", _quick_start())
    assert shown is not None
    assert shown.group(1) == demo.group(1)


def test_the_demo_installs_the_tool_alone_and_the_test_everything() -> None:
    assert 'setup run ""' in _case("demo")
    assert 'setup test "[test]"' in _case("test")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    test_extra = re.search(r"^test = \[(.*)\]$", pyproject, flags=re.M)
    assert test_extra is not None
    for tool in ("pytest", "ruff", "mypy", "mkdocs", "build"):
        assert f'"{tool}>=' in test_extra.group(1)


def test_ci_runs_exactly_the_second_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [
        line for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    assert commands[-1] == "exec ./run test"
    test_part = _case("test")
    for step in (
        "ruff check .",
        "ruff format --check .",
        "mypy --strict vllm_logread",
        "mkdocs build --strict",
        "-m pytest",
        "-m pytest -q -m real_vllm tests/real_vllm",
    ):
        assert step in test_part
    # mkdocs --quiet hides the warnings --strict counts: a broken link would pass.
    mkdocs = next(line for line in test_part.splitlines() if "mkdocs build" in line)
    assert "--quiet" not in mkdocs.split("#")[0] and " -q " not in mkdocs
