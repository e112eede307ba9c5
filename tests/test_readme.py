"""The README's Quick start is what a new user runs: exactly two commands in
one block, the first's output pasted as it really is, and .ci/run running
exactly the second."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from vllm_logread.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start() -> str:
    return README.split("## Quick start\n", 1)[1].split("\n## ", 1)[0]


def test_quick_start_is_two_commands_in_one_block() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", _quick_start(), flags=re.S)
    assert len(blocks) == 1
    commands = [line for line in blocks[0].splitlines() if line.strip()]
    assert commands == ["./run demo", "./run test"]


def test_the_pasted_output_is_the_demo_s_real_output() -> None:
    run = (ROOT / "run").read_text(encoding="utf-8")
    demo = re.search(r"exec \.venv/bin/vllm-logread (.+)", run)
    assert demo is not None
    args = shlex.split(demo.group(1))
    pasted = re.search(r"```text\n(.*?)```", _quick_start(), flags=re.S)
    assert pasted is not None
    result = CliRunner().invoke(main, [str(ROOT / args[0]), *args[1:]], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout == pasted.group(1)


def test_ci_runs_exactly_the_second_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [
        line for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    assert commands[-1] == "exec ./run test"
    run = (ROOT / "run").read_text(encoding="utf-8")
    test_part = run.split("    test)\n", 1)[1].split(";;", 1)[0]
    for step in (
        "ruff check .",
        "ruff format --check .",
        "mypy --strict vllm_logread",
        "-m pytest",
        "-m pytest -q -m real_vllm tests/real_vllm",
    ):
        assert step in test_part
