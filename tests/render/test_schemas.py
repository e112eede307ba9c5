"""Every command's JSON validates against the shipped schema
(vllm_logread/data/report.schema.json, in the wheel and the sdist), and says
its schema_version: read, kv (spec, estimate, lists), diff and simulate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
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


def test_fleet_json() -> None:
    from vllm_logread.read.prometheus import Prometheus, Series, read_fleet
    from vllm_logread.render.fleet import fleet_text
    from vllm_logread.report.model import Options
    from vllm_logread.session.fleet import fleet_of

    class Answers(Prometheus):
        """A Prometheus that answers from a table (the rest: no series)."""

        def __init__(self, answers: dict[str, list[tuple[dict[str, str], float]]]) -> None:
            self.url = "http://prometheus.test:9090"
            self.answers = answers

        def query(self, promql: str) -> list[Any]:
            return [Series(labels=dict(lb), value=v) for lb, v in self.answers.get(promql, [])]

        def scrape_intervals_s(self) -> dict[tuple[str, str], float]:
            return {("a:8000", "vllm"): 15.0}

    target = {"instance": "a:8000", "job": "vllm", "engine": "0"}
    pool = {**target, "block_size": "16", "num_gpu_blocks": "1506", "cache_dtype": "auto"}
    gauge = {**target, "model_name": "Qwen/Qwen3-8B"}
    answers = {
        "last_over_time(vllm:cache_config_info[1h])": [(pool, 1.0)],
        "time() - timestamp(vllm:cache_config_info)": [(pool, 3.0)],
        "up": [({"instance": "a:8000", "job": "vllm"}, 1.0)],
        "last_over_time(vllm:num_requests_running[1h])": [(gauge, 5.0)],
    }
    fleet = fleet_of(read_fleet(Answers(answers)), Options())
    out = json.loads(fleet_text(fleet, "json"))
    _valid_as(out, "fleet")
    assert out["command"] == "read --prometheus"
    # 1,506 blocks of 16, 640 / 16 = 40 blocks a user: (1,506 - 1) // 40 = 37.
    assert out["servers"][0]["users"] == 37
