"""Every command's JSON validates against the shipped schema
(vllm_logread/data/report.schema.json, in the wheel and the sdist), and says
its schema_version: read, kv (spec, estimate, lists), diff and simulate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli import main

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
SEED = SAMPLES / "seed_qwen3-8b_l4.log"
SCHEMA = json.loads((ROOT / "vllm_logread" / "data" / "report.schema.json").read_text())


def _json(*args: str) -> dict[str, Any]:
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code in (0, 1, 3), r.output
    out = json.loads(r.stdout)
    assert isinstance(out, dict)
    return out


def _valid_as(obj: dict[str, Any], definition: str) -> None:
    """Valid against the whole schema (exactly one of its kinds) and against the
    named definition."""
    jsonschema.validate(obj, SCHEMA)
    jsonschema.validate(obj, {**SCHEMA, "oneOf": [{"$ref": f"#/definitions/{definition}"}]})
    assert obj["schema_version"] == 1


@pytest.mark.parametrize(
    "args",
    [
        ("kv", "Qwen/Qwen3-8B", "--json"),
        ("kv", "Qwen/Qwen3-8B", "--format", "json", "--tp", "2", "--kv-cache-dtype", "fp8"),
        ("kv", "google/gemma-3-27b-it", "--json"),
        ("kv", "Qwen/Qwen3-8B", "--gpu", "L4", "--json"),
        ("kv", "Qwen/Qwen3-8B", "--gpu", "NVIDIA H100 80GB HBM3", "--format", "json"),
        ("kv", "Qwen/Qwen3-8B", "--gpu-memory-gib", "94", "--json"),
    ],
)
def test_kv_json(args: tuple[str, ...]) -> None:
    out = _json(*args)
    _valid_as(out, "kv")
    assert out["command"] == "kv"


@pytest.mark.parametrize("what", ["models", "gpus"])
def test_kv_lists_json(what: str) -> None:
    out = _json("kv", f"--list-{what}", "--json")
    _valid_as(out, "kv_list")
    assert out["command"] == f"kv --list-{what}" and out[what]


def test_simulate_json() -> None:
    out = _json("simulate", str(SEED), "--users", "40", "--format", "json")
    _valid_as(out, "simulate")
    assert out["command"] == "simulate" and out["settled_running"] == 37


def test_diff_json() -> None:
    old = SAMPLES / "real_vllm_0.32_qwen3-8b_seed.log"
    out = _json("diff", str(SEED), str(old), "--format", "json")
    _valid_as(out, "diff")


def test_read_json_one_and_several() -> None:
    _valid_as(_json(str(SEED), "--format", "json"), "report")
    _valid_as(_json(str(SEED), str(SAMPLES / "hybrid_gemma3_27b.log"), "--json"), "servers")


def test_the_schema_is_shipped_with_the_package() -> None:
    # package-data puts data/*.json in the wheel and the sdist alike.
    assert '"data/*.json"' in (ROOT / "pyproject.toml").read_text()
    from importlib.resources import files

    shipped = files("vllm_logread").joinpath("data/report.schema.json").read_text()
    assert json.loads(shipped) == SCHEMA
