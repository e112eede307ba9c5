"""Golden files: sample_logs/NAME.golden.json holds reviewed expectations for
NAME.log (the arguments to run it with, and the keys of the --json output to
compare). Only the keys a golden file lists are compared, so a golden file
states exactly what a reviewer checked by hand; lists of objects compare each
listed object against the output entry with the same name/change/label, or, for
``facts``, the whole list in order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
GOLDEN = sorted(SAMPLES.glob("*.golden.json"))


def _match(expected: Any, got: Any, where: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: expected an object, got {got!r}"
        for key, value in expected.items():
            assert key in got, f"{where}.{key}: missing"
            _match(value, got[key], f"{where}.{key}")
    elif isinstance(expected, list) and where.endswith(
        ("checks", "what_if", "engines", "unknowns", "observed_workload.users")
    ):
        for item in expected:
            key = "name" if "name" in item else "change" if "change" in item else "engine"
            key = "label" if "label" in item else key
            found = [g for g in got if g.get(key) == item[key]]
            assert found, f"{where}: no entry with {key}={item[key]!r}"
            _match(item, found[0], f"{where}[{item[key]}]")
    else:
        assert got == expected, f"{where}: expected {expected!r}, got {got!r}"


@pytest.mark.parametrize("golden", GOLDEN, ids=[g.name for g in GOLDEN])
def test_golden(golden: Path) -> None:
    spec = json.loads(golden.read_text())
    log = golden.with_name(golden.name.replace(".golden.json", spec.get("log_suffix", ".log")))
    result = CliRunner().invoke(main, [str(log), *spec.get("args", []), "--json"])
    assert result.exit_code == spec.get("exit_code", 0), result.stderr
    _match(spec["expect"], json.loads(result.stdout), golden.name)
