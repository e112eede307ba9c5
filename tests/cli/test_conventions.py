"""One convention for every command (issue 29): the GPU and model tables that
help when they end, the shared options checked in one place, and output that
can be pasted and piped."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from vllm_logread.cli.commands import main
from vllm_logread.report.gpus import find_gpu

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
SEED = str(SAMPLES / "seed_qwen3-8b_l4.log")
REAL_SEED = str(SAMPLES / "real_vllm_0.32_qwen3-8b_seed.log")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


# --------------------------------------------------------------------------- GPU names


@pytest.mark.parametrize(
    ("name", "row", "gib"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-80GB", 79.19),  # nvidia-smi --query-gpu=name
        ("NVIDIA A100-SXM4-40GB", "A100-40GB", 39.39),
        ("NVIDIA A100 80GB PCIe", "A100-80GB", 79.15),
        ("NVIDIA L4", "L4", 22.05),
        ("Tesla T4", "T4", 14.75),
        ("Tesla V100-SXM2-32GB", "V100-32GB", 31.75),
        ("NVIDIA GeForce RTX 4090", "RTX4090", 23.64),
        ("AMD Instinct MI300X", "MI300X", 192.0),  # ROCm's product name
        ("AMD Instinct MI250X/MI250", "MI250X", 64.0),  # one GCD, as vLLM sees it
        ("MI210", "MI210", 64.0),
        ("mi325x", "MI325X", 256.0),
        ("MI355X", "MI355X", 288.0),
        ("Gaudi 2", "Gaudi2", 96.0),
        ("HL-225", "Gaudi2", 96.0),
        ("Gaudi3", "Gaudi3", 128.0),
        ("Intel(R) Data Center GPU Max 1550", "Max-1550", 128.0),
        ("Max 1100", "Max-1100", 48.0),
    ],
)
def test_gpu_names_as_the_tools_print_them(name: str, row: str, gib: float) -> None:
    g = find_gpu(name)
    assert (g.name, g.total_gib) == (row, gib)
    if row.startswith(("MI", "Gaudi", "Max")):  # the vendor's spec until a log is read
        assert g.is_estimate and "spec" in g.source


def test_every_new_card_names_its_source() -> None:
    r = run("kv", "--list-gpus", "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = {row["gpu"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
    for name in ("MI210", "MI250X", "MI300X", "MI325X", "MI355X", "Gaudi2", "Gaudi3"):
        assert rows[name]["source"].startswith("estimate: "), name
    assert rows["MI300X"]["total_gib"] == "192.0" and rows["MI300X"]["estimate"] == "yes"
    assert rows["H100-80GB"]["estimate"] == "no"  # read in a vLLM log


def test_kv_estimates_on_mi300x_and_nvidia_smi_names() -> None:
    mi = run("kv", "Qwen/Qwen3-8B", "--gpu", "MI300X", "--vllm-version", "0.32.0")
    assert mi.exit_code == 0, mi.output
    # 192 GiB x vLLM 0.32's 0.92 = 176.64 GiB.
    assert "192.00 GiB x 0.92" in mi.stdout and "= 176.64 GiB per GPU" in mi.stdout
    # vLLM 0.34 (the default): the extensible KV cache takes 192 GiB x 1.00.
    assert "192.00 GiB x 1.00" in run("kv", "Qwen/Qwen3-8B", "--gpu", "MI300X").stdout
    smi = run("kv", "Qwen/Qwen3-8B", "--gpu", "NVIDIA H100 80GB HBM3")
    assert smi.exit_code == 0 and smi.stdout == run("kv", "Qwen/Qwen3-8B", "--gpu", "H100").stdout


def test_gpu_memory_gib_for_any_card() -> None:
    r = run("kv", "Qwen/Qwen3-8B", "--gpu-memory-gib", "94", "--json")
    assert r.exit_code == 0, r.output
    est = json.loads(r.stdout)["boot_estimate"]
    assert est["gpu"]["total_gib"] == 94.0 and est["gpu"]["source"] == "--gpu-memory-gib"
    # 94 x 0.92 = 86.48 GiB (vLLM 0.32); 94 x 1.00 = 94.00 GiB (0.34, the default).
    old = run("kv", "Qwen/Qwen3-8B", "--gpu-memory-gib", "94", "--vllm-version", "0.32.0")
    assert "= 86.48 GiB per GPU" in old.stdout
    assert "= 94.00 GiB per GPU" in run("kv", "Qwen/Qwen3-8B", "--gpu-memory-gib", "94").stdout
    both = run("kv", "Qwen/Qwen3-8B", "--gpu", "L4", "--gpu-memory-gib", "22")
    assert both.exit_code == 2 and "not both" in both.stderr


def test_an_unknown_gpu_says_what_is_close_and_how_to_go_on() -> None:
    r = run("kv", "Qwen/Qwen3-8B", "--gpu", "MI300A")
    assert r.exit_code == 2
    assert "did you mean MI300X" in r.stderr
    assert "--list-gpus" in r.stderr and "--gpu-memory-gib N" in r.stderr
    assert "Traceback" not in r.output


# --------------------------------------------------------------------------- models


def test_a_model_off_by_a_suffix_gets_a_did_you_mean_and_the_fetch_command() -> None:
    r = run("kv", "google/gemma-3-27b")
    assert r.exit_code == 2
    assert "Did you mean google/gemma-3-27b-it" in r.stderr
    assert "huggingface-cli download google/gemma-3-27b config.json" in r.stderr
    assert "https://huggingface.co/google/gemma-3-27b/resolve/main/config.json" in r.stderr


def test_list_models() -> None:
    r = run("kv", "--list-models", "--json")
    assert r.exit_code == 0
    names = [m["model"] for m in json.loads(r.stdout)["models"]]
    assert "Qwen/Qwen3-8B" in names and "google/gemma-3-27b-it" in names
    assert names == sorted(names)
    assert run("kv", "Qwen/Qwen3-8B", "--list-models").exit_code == 2
    assert run("kv").exit_code == 2


def test_kv_plans_with_the_newest_vllm_unless_told() -> None:
    r = run("kv", "Qwen/Qwen3-8B")
    assert "how:     vLLM version 0.34.0" in r.stdout
    # ... with --gpu too: one version everywhere (rules.ESTIMATE_VERSION).
    assert "vLLM 0.34.0's rules" in run("kv", "Qwen/Qwen3-8B", "--gpu", "L4").stdout
    old = run("kv", "Qwen/Qwen3-8B", "--vllm-version", "0.30.0")
    assert "how:     vLLM version 0.30.0" in old.stdout


# --------------------------------------------------------------------------- shared options


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["diff", SEED, REAL_SEED, "--prompt", "256,512"], "diff takes one value"),
        (["kv", "Qwen/Qwen3-8B", "--gpu", "L4", "--output", "1:3"], "kv takes one value"),
        (["simulate", SEED, "--users", "4", "--prompt", "256,512"], "simulate takes one"),
        (["diff", SEED, REAL_SEED, "--json", "--format", "csv"], "--json is --format json"),
        ([SEED, "--json", "--format", "csv"], "--json is --format json"),
        (["kv", "Qwen/Qwen3-8B", "--format", "csv"], "--list-models and --list-gpus"),
    ],
)
def test_shared_options_are_checked_the_same_way(args: list[str], needle: str) -> None:
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert needle in r.stderr


def test_diff_and_simulate_take_the_same_prompt_grammar() -> None:
    # One value in read's grammar (a one-value range) is one workload.
    a = run("diff", SEED, REAL_SEED, "--prompt", "512:512", "--json")
    b = run("diff", SEED, REAL_SEED, "--prompt", "512", "--json")
    assert a.exit_code == 0 and a.stdout == b.stdout


def test_diff_as_csv_has_plain_values() -> None:
    r = run("diff", SEED, REAL_SEED, "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = {row["figure"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
    # The seed's 1,506 blocks of 16 against the real boot's 753 blocks of 32.
    assert (rows["num_blocks"]["old"], rows["num_blocks"]["new"]) == ("1506", "753")
    assert rows["num_blocks"]["change"] == "-753"
    assert rows["pool_tokens"]["old"] == "24096"


def test_simulate_as_csv_is_the_steps() -> None:
    r = run("simulate", SEED, "--users", "40", "--format", "csv")
    assert r.exit_code == 0, r.output
    head = r.stdout.splitlines()[0]
    assert head.startswith("step,running,waiting")


# --------------------------------------------------------------------------- paste-ready


def test_an_option_the_output_cannot_carry_is_named_on_stderr() -> None:
    r = run(str(SAMPLES / "real_vllm_0.32_qwen3-8b_load.log"), "--simulate", "--json")
    assert r.exit_code == 0
    assert "--simulate adds its verdict to the text load summary" in r.stderr
    assert "--format json does not carry it" in r.stderr
    csv_run = run(SEED, "--what-if", "kv_cache_dtype=fp8", "--format", "csv")
    assert "--what-if answers one workload's report" in csv_run.stderr
    assert run(SEED, "--what-if", "kv_cache_dtype=fp8").stderr == ""


def test_a_failed_boot_s_fix_is_paste_ready() -> None:
    log = SAMPLES / "never_wrong_v1_kv_too_small.log"
    r = run(str(log))
    assert r.exit_code == 3
    assert "fix: --max-model-len 24096 or less" in r.stderr  # never 24,096 inside a flag
    # The first fix as one line to paste, and as arguments in the JSON.
    line = (
        "as one line: vllm serve Qwen/Qwen3-8B --max-model-len 24096 (and the boot's other options)"
    )
    assert line in r.stderr
    failure = json.loads(run(str(log), "--json").stdout)["failure"]
    assert failure["serve_args"] == ["--max-model-len", "24096"]


def test_what_if_gpu_on_a_log_without_its_gpu_says_what_settles_it() -> None:
    r = run(SEED, "--what-if", "gpu=H100-80GB")
    assert "gpu=H100-80GB           users unknown: add --gpu NAME, the card it ran on" in r.stdout
    settled = run(SEED, "--what-if", "gpu=H100-80GB", "--gpu", "NVIDIA L4")
    assert "users unknown" not in settled.stdout


def test_sort_users_is_asked_for_never_the_default() -> None:
    dp2 = str(SAMPLES / "era_0_19_0_dp2_aggregated.log")

    def users(*more: str) -> list[str]:
        out = run(SEED, dp2, "--format", "csv", *more).stdout
        return [row["users"] for row in csv.DictReader(io.StringIO(out))]

    # The DP 2 log's pools hold 594, its engines' max_num_seqs (256 each, the least
    # vLLM's rule allows: the card is not in the log) admit 512 at once.
    assert users() == ["37", "512"]  # input order
    assert users("--sort", "users") == ["512", "37"]
