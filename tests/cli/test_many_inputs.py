"""Many inputs, each on its own: every input its own report, facts and errors;
the table and its total list the good ones and name the bad ones once; the
exit code is the highest of the inputs' (README, Exit codes). And the
--min-users gate over every workload of a sweep."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from vllm_logread.cli.commands import main

S = Path(__file__).resolve().parents[2] / "sample_logs"
SEED, TQDM = str(S / "seed_qwen3-8b_l4.log"), str(S / "wrap_tqdm.log")


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_a_bad_input_does_not_change_the_seed() -> None:
    alone = run(SEED)
    both = run(SEED, TQDM)
    assert both.exit_code == 3  # wrap_tqdm has no pool line
    # The seed's report, unchanged but for the line naming its input.
    assert both.stdout.replace(f"  input:        {SEED}\n", "").startswith(alone.stdout)
    assert "37 users" in both.stdout
    assert SEED not in both.stderr  # nothing false about the seed
    assert both.stderr.count(TQDM) == 1  # the bad one, named once
    assert "no KV cache pool line" in both.stderr


def test_csv_of_every_sample_lists_the_good_and_names_the_bad_once() -> None:
    logs = sorted(str(p) for p in S.glob("*.log"))
    r = run(*logs, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    bad = [line.split(":")[0] for line in r.stderr.splitlines() if line.startswith(str(S))]
    assert len(set(bad)) == len(bad)  # each named once
    assert TQDM in bad
    servers = [row for row in rows if row["source"] != "total"]
    totals = [row for row in rows if row["source"] == "total"]
    # Input order (the logs were given sorted), every input in the table or named.
    assert [row["source"] for row in servers] == [x for x in logs if x not in bad]
    assert rows[: len(servers)] == servers  # the totals come after every server
    seed = next(row for row in rows if row["source"] == SEED)
    assert seed["users"] == "37"
    assert totals  # several samples share a model (Qwen/Qwen3-8B)
    for total in totals:  # one per model with several servers, never across models
        mine = [row for row in servers if row["model"] == total["model"]]
        assert len(mine) >= 2, total["model"]
        if all(row["users"] for row in mine):
            assert int(total["users"]) == sum(int(row["users"]) for row in mine)
        else:  # a server whose users are unknown (a range): the total is unknown, never low
            assert total["users"] == ""
    assert len({t["model"] for t in totals}) == len(totals)
    assert r.exit_code == 3  # the worst: no pool (wrap_tqdm), boots that serve nobody


def test_exit_code_is_the_highest_of_the_inputs() -> None:
    assert run(SEED, "--min-users", "38").exit_code == 1
    assert run(SEED, TQDM, "--min-users", "38").exit_code == 3
    assert run(SEED, str(S / "missing.log")).exit_code == 2
    assert run(SEED, SEED).exit_code == 0


def test_min_users_holds_every_workload_of_a_sweep() -> None:
    # 256+128 = 24 blocks -> 62 users; 512+128 = 40 blocks -> 37 users
    r = run(SEED, "--prompt", "256,512", "--min-users", "40")
    assert r.exit_code == 1
    assert "only 37 users fit at 512+128 tokens" in r.stderr
    assert "256+128" not in r.stderr  # the one that falls short, not the others
    assert run(SEED, "--prompt", "256,512", "--min-users", "37").exit_code == 0
    j = run(SEED, "--prompt", "256,512", "--min-users", "40", "--json")
    assert j.exit_code == 1


def test_text_mode_ends_with_the_total_of_the_good_ones() -> None:
    # seed 37 + era_0_18_0_dp2: its pools hold 607 + 608 = 1,215, but each engine's
    # max_num_seqs (256: the log does not name the card, 256 is the least vLLM's
    # rule allows) admits 256: 256 + 256 = 512 -> 37 + 512 = 549; mid-answer 41 + 512 = 553.
    r = run(SEED, TQDM, str(S / "era_0_18_0_dp2.log"), "--no-stats")
    assert r.stdout.splitlines()[-2:] == [
        "== vllm-logread total: 549 users at 512+128 tokens over 2 servers (553 mid-answer);",
        "  not counted: 1 input (named on stderr)",
    ]
