"""Options shared by several commands read and behave the same in each: the
test walks every command's ``--help``, parses its options and their metavars,
and holds the shared ones against each other; then it gives each command the
same values (a percentage, a workload of 0 tokens, a list where one value
works) and compares what they say.

Why: a newcomer who learned ``--margin 5%`` met "not a valid float range" at
``diff --max-drop 10%``; ``kv``, ``simulate`` and ``diff`` showed
``--prompt N[,N...]|START:STOP[:STEP]`` but took one value; ``--prompt 0
--output 0`` was read as a request of no tokens; ``--stats-csv`` wrote the
log's stats lines in ``read`` and the simulation's steps in ``simulate``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "sample_logs" / "seed_qwen3-8b_l4.log")
COMMANDS = ("read", "kv", "simulate", "diff")
#: Each command's arguments before its options, so that one option can be tried alone.
ARGS = {
    "read": [SEED],
    "kv": ["Qwen/Qwen3-8B"],
    "simulate": [SEED, "--users", "4"],
    "diff": [SEED, SEED],
}
#: The commands with a CI gate (an option that makes the exit code 1).
GATES = {"read": "--min-users", "diff": "--max-drop"}
#: One metavar per kind of value (a number, a percentage, a file, ...).
KINDS = {
    "N",
    "PCT",
    "FILE",
    "PATH",
    "NAME",
    "URL",
    "FILE|URL",
    "DURATION",
    "LABEL[,LABEL...]",
    "CHANGE",
    "X.Y.Z",
    "DTYPE",
    "uniform:LO:HI",
    "N[,N...]|START:STOP[:STEP]",
    "[MODEL]",
}
LIST = "N[,N...]|START:STOP[:STEP]"
# "  --prompt N[,N...]|START:STOP[:STEP]  Prompt ..." / "  --json  Print ..." /
# "  --format [text|json]  ..." / "  --echo / --no-echo  ...": the option, its metavar.
_OPTION = re.compile(r"^  (?:-\w, )?(--[\w-]+)(?: / --[\w-]+)?(?: (\S+))?(?:  |$)")


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner(env=env).invoke(main, list(args))


def options_of(command: str) -> dict[str, str | None]:
    """``--option: metavar`` (None for a flag) as ``command --help`` prints them."""
    r = run(command, "--help", env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    out: dict[str, str | None] = {}
    for line in r.output.split("Options:", 1)[1].splitlines():
        if line.startswith(("\b", "Examples", "Exit codes")):
            break
        m = _OPTION.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


HELP = {c: options_of(c) for c in COMMANDS}


def test_every_command_help_is_parsed() -> None:
    # Options every command has; the parse found them in each.
    for command, opts in HELP.items():
        assert {"--format", "--json", "--help", "--prompt", "--output"} <= opts.keys(), command


def test_every_metavar_names_a_kind() -> None:
    bad = {
        f"{c} {o} {m}"
        for c, opts in HELP.items()
        for o, m in opts.items()
        if m is not None and not m.startswith("[") and m not in KINDS
    }
    assert not bad


@pytest.mark.parametrize(
    "option", sorted({o for opts in HELP.values() for o in opts if o not in ("--help",)})
)
def test_a_shared_option_reads_the_same_in_every_command(option: str) -> None:
    having = {c: opts[option] for c, opts in HELP.items() if option in opts}
    if len(having) < 2:
        pytest.skip(f"{option}: one command only")
    if option in ("--prompt", "--output"):
        # A list or a range only where a sweep works: read's.
        assert having == {c: LIST if c == "read" else "N" for c in having}
    elif option == "--format":
        # Each command's own formats; every gate writes GitHub's annotations.
        for command in GATES:
            assert "github" in str(having[command]), command
    else:
        assert len(set(having.values())) == 1, having


def test_numeric_options_show_n() -> None:
    """Every option that takes a number reads ``N`` (not INTEGER, INTEGER RANGE,
    FLOAT RANGE or a word of its own)."""
    import click

    numeric = (click.types.IntParamType, click.types.FloatParamType)
    for command in COMMANDS:
        cmd = main.commands[command]
        for p in cmd.params:
            if isinstance(p, click.Option) and isinstance(p.type, numeric) and not p.hidden:
                assert HELP[command][p.opts[0]] == "N", f"{command} {p.opts[0]}"


# --------------------------------------------------------------------------- percentages


@pytest.mark.parametrize(
    ("command", "option", "extra"),
    [("read", "--margin", ["--min-users", "1"]), ("diff", "--max-drop", [])],
)
def test_percentages_parse_one_way(command: str, option: str, extra: list[str]) -> None:
    with_sign = run(command, *ARGS[command], option, "10%", *extra, "--json")
    bare = run(command, *ARGS[command], option, "10", *extra, "--json")
    assert with_sign.exit_code == bare.exit_code == 0, with_sign.output
    assert with_sign.stdout == bare.stdout
    bad = run(command, *ARGS[command], option, "120%", *extra)
    assert bad.exit_code == 2
    assert f"Invalid value for '{option}': '120%' is not a percentage from 0 to" in bad.stderr


def test_diff_max_drop_in_percent_is_the_gate() -> None:
    # The seed against itself: 37 -> 37 users, a drop of 0%: the gate passes at 10%.
    obj = json.loads(run("diff", SEED, SEED, "--max-drop", "10%", "--json").stdout)
    assert obj["gate"] == {"max_drop_pct": 10.0, "passed": True, "message": None}


# --------------------------------------------------------------------------- workloads


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("option", ["--prompt", "--output"])
def test_workload_values_are_at_least_1(command: str, option: str) -> None:
    r = run(command, *ARGS[command], option, "0")
    assert r.exit_code == 2, r.output
    assert f"Invalid value for '{option}': 0 is not in the range 1<=x<=10000000" in r.stderr


@pytest.mark.parametrize("command", ["kv", "simulate", "diff"])
def test_one_value_where_lists_do_not_work(command: str) -> None:
    r = run(command, *ARGS[command], "--prompt", "256,512")
    assert r.exit_code == 2
    assert (
        f"Invalid value for '--prompt': '256,512': {command} takes one value "
        "(read sweeps lists and ranges)"
    ) in r.stderr
    assert run(command, *ARGS[command], "--prompt", "256", "--json").exit_code == 0


def test_read_sweeps_a_list() -> None:
    r = run("read", SEED, "--prompt", "256,512", "--json")
    assert r.exit_code == 0, r.stderr


# --------------------------------------------------------------------------- one meaning


def test_simulate_steps_csv_and_its_old_name(tmp_path: Path) -> None:
    """simulate's CSV of steps is --steps-csv; --stats-csv (read's name for the log's
    stats lines) still works there, hidden, with a note on stderr."""
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    a = run("simulate", SEED, "--users", "4", "--steps-csv", str(new))
    b = run("simulate", SEED, "--users", "4", "--stats-csv", str(old))
    assert a.exit_code == b.exit_code == 0, b.output
    assert new.read_text() == old.read_text() and new.read_text().startswith("step,")
    assert "warning: simulate --stats-csv is now --steps-csv" in b.stderr
    assert "--stats-csv" not in a.stderr
    assert "--stats-csv" not in HELP["simulate"] and "--steps-csv" in HELP["simulate"]
    assert "--stats-csv" in HELP["read"] and "--steps-csv" not in HELP["read"]
