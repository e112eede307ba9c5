"""The test suite's own layout: a folder per stage of the pipeline, each test file
named after what it tests, never after a review round or an issue (docs/development.md)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
STAGES = {"read", "kv", "vllm", "answer", "render", "cli", "scenarios", "real_vllm"}
# Names that say when a test was written rather than what it tests.
ROUND_NAME = re.compile(r"review|issue|round|_\d+\.py$|one_answer|mnbt")


def test_every_test_file_sits_in_a_stage_folder() -> None:
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert loose == []
    folders = {p.parent.name for p in TESTS.rglob("test_*.py")}
    assert folders <= STAGES, folders - STAGES


def test_no_test_file_is_named_after_a_round_or_an_issue() -> None:
    named = sorted(p.name for p in TESTS.rglob("test_*.py") if ROUND_NAME.search(p.name))
    assert named == []


def test_test_file_names_are_unique_across_folders() -> None:
    # pytest imports each folder's files by their base name (no __init__.py).
    names = [p.name for p in TESTS.rglob("test_*.py") if p.parent.name != "real_vllm"]
    assert len(names) == len(set(names))
