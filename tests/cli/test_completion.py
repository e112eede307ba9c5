"""Shell completion (click's, turned on as every command's help says): the
first word completes to a subcommand or a log file, a file option to file
names, ``kv MODEL`` to the shipped table's models and ``--gpu`` to the GPU
table's names."""

from __future__ import annotations

import pytest
from click.shell_completion import ShellComplete

from vllm_logread.cli.commands import main


def complete(line: str) -> list[tuple[str, str]]:
    """(type, value) of each completion of ``vllm-logread LINE`` (the last word
    is the one being typed; a trailing space: a new word)."""
    words = line.split(" ")
    comp = ShellComplete(main, {}, "vllm-logread", "_VLLM_LOGREAD_COMPLETE")
    return [(c.type, c.value) for c in comp.get_completions(words[:-1], words[-1])]


def test_the_first_word_is_a_subcommand_or_a_log_file() -> None:
    got = complete("")
    assert got[0] == ("file", "")  # first: bash falls back to files when no command matches
    assert {v for t, v in got if t == "plain"} == {"read", "kv", "diff", "simulate"}
    assert complete("si") == [("file", "si"), ("plain", "simulate")]


def test_options_complete_after_a_log() -> None:
    assert ("plain", "--prompt") in complete("seed.log --pro")


@pytest.mark.parametrize(
    "line",
    [
        "seed.log --config ",
        "seed.log --workload ",
        "seed.log --stats-csv ",
        "seed.log --plot ",
        "seed.log ",
        "diff old.log ",
        "simulate ",
        "simulate seed.log --steps-csv ",
        "kv Qwen/Qwen3-8B --config ",
    ],
)
def test_a_file_completes_to_the_shell_s_file_names(line: str) -> None:
    assert ("file", "") in complete(line)


def test_kv_model_completes_to_the_shipped_table() -> None:
    got = complete("kv Qwen/Qwen3-8")
    # data/models.json holds these two (and the FP8 one); a file name when none match.
    assert {("plain", "Qwen/Qwen3-8B"), ("plain", "Qwen/Qwen3-8B-FP8")} <= set(got)
    assert all(v.startswith("Qwen/Qwen3-8") for _, v in got)
    assert complete("kv qwen/qwen3-8b-f") == [
        ("file", "qwen/qwen3-8b-f"),
        ("plain", "Qwen/Qwen3-8B-FP8"),
    ]
    assert complete("kv ./my-model/") == [("file", "./my-model/")]


@pytest.mark.parametrize("command", ["kv Qwen/Qwen3-8B", "seed.log"])
def test_gpu_completes_to_the_gpu_table(command: str) -> None:
    got = complete(f"{command} --gpu h")
    assert ("plain", "H100-80GB") in got and ("plain", "H200") in got
    assert all(t == "plain" and v.lower().startswith("h") for t, v in got)
