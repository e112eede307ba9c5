"""Every command's JSON validates against the shipped schema
(vllm_logread/data/report.schema.json, in the wheel and the sdist), and says
its schema_version: read, kv (spec, estimate, lists), diff and simulate. The
schema is the one render/json_schema.py generates from the result types, and the
JSON walker (render/json.py) writes what it declares."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any, Literal

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.render.json import REPORT_KEYS, ReportKey, report_json, walk
from vllm_logread.report.model import Check, EngineReport, Failure, Report, Unknown

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


def test_the_shipped_schema_is_the_generated_one() -> None:
    # Never edited by hand: `python -m vllm_logread.render.json_schema` writes it from
    # render/json.py's REPORT_KEYS, report/model.py's fields and json_schema.py's parts.
    from vllm_logread.render.json_schema import PATH, main, schema_text

    assert PATH.read_text(encoding="utf-8") == schema_text()
    assert main(["--check"]) == 0


@pytest.mark.parametrize("cls", [Report, EngineReport, Check, Unknown, Failure])
def test_every_result_field_says_its_json(cls: type) -> None:
    """A field added without JSON or NOT_JSON metadata fails here; a Report field's
    metadata names a key of REPORT_KEYS (its own name, or the key its value reaches)."""
    keys = {k.name for k in REPORT_KEYS}
    for f in fields(cls):
        assert "json" in f.metadata, f"{cls.__name__}.{f.name}: no JSON / NOT_JSON metadata"
        reaches = f.name if f.metadata["json"] is True else f.metadata["json"]
        if cls is Report and reaches is not None:
            assert reaches in keys, f"Report.{f.name} reaches {reaches!r}, not a report key"


def test_every_report_key_is_in_the_schema_once() -> None:
    from vllm_logread.render.json_schema import REPORT_PARTS, report_schema

    names = [k.name for k in REPORT_KEYS]
    assert len(names) == len(set(names))
    assert set(REPORT_PARTS) <= set(names), "a declared part no key writes"
    schema = report_schema()
    assert list(schema["properties"]) == names
    assert schema["required"] == [k.name for k in REPORT_KEYS if k.when == "always"]
    assert schema["additionalProperties"] is False


def test_a_report_key_without_a_schema_fails() -> None:
    from vllm_logread.render.json_schema import key_schema

    with pytest.raises(TypeError, match="REPORT_PARTS"):
        key_schema(ReportKey("peak_users", get=lambda r: 0))


def test_schemas_of_type_hints() -> None:
    from vllm_logread.render.json_schema import schema_of

    assert schema_of(int | None) == {"$ref": "#/definitions/nint"}
    assert schema_of(bool | None) == {"type": ["boolean", "null"]}
    assert schema_of(tuple[str, ...]) == {"type": "array", "items": {"type": "string"}}
    assert schema_of(tuple[int, int]) == {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 2,
        "maxItems": 2,
    }
    assert schema_of(Literal["pass", "fail"] | None) == {"enum": ["pass", "fail", None]}
    check = schema_of(Check)
    # Check.line is NOT_JSON: three keys, all required, nothing else.
    assert check["required"] == ["name", "status", "detail"]
    assert check["properties"]["status"] == {"enum": ["pass", "fail", "unknown"]}
    assert check["additionalProperties"] is False
    with pytest.raises(TypeError, match="no JSON schema"):
        schema_of(set[int])


def test_the_walker_writes_a_result_field_by_field() -> None:
    failure = Failure(cause="KV cache too small", line=57, fix=("--max-model-len 24096",))
    assert walk(failure) == {
        "cause": "KV cache too small",
        "line": 57,
        "fix": ["--max-model-len 24096"],
        "serve_args": [],
    }
    check = Check(name="pool_tokens", status="pass", detail="24,096 = 1,506 x 16", line=60)
    assert walk(check) == {"name": "pool_tokens", "status": "pass", "detail": "24,096 = 1,506 x 16"}


def test_a_boot_without_a_report_has_every_always_key() -> None:
    out = report_json(None, [], ["no KV pool line"])
    assert list(out) == [k.name for k in REPORT_KEYS if k.when == "always"]
    assert out["schema_version"] == 1 and out["warnings"] == ["no KV pool line"]
    assert out["engines"] == [] and out["arithmetic"] == [] and out["facts"] == []
    assert out["model"] is None and out["workload"] is None and out["users"] is None
    jsonschema.validate(out, {**SCHEMA, "oneOf": [{"$ref": "#/definitions/report"}]})
