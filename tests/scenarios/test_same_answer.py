"""One input, one answer: every shipped sample log gives the same users in the text
headline, the text what-ifs, the CSV row, the markdown headline and ``--json``; a file
gets one headline (one per boot with ``--all-boots``); the gate's verdict is in the
JSON and the exit code.

Why: a boot resolved in several places gave several answers (the Gemma 3 sample's text
said 92 users for fp8 where its JSON said 93; a TP boot printed five headlines). The
expected values here are not computed by the code under test: each output is parsed
from its own words and held against the others.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_logs").glob("*.log"))

# "== vllm-logread: 37 users fit", "== vllm-logread (boot 2 of 2): 0 users at ...",
# "== vllm-logread: 26 to 31 users fit" (a range: --json's users is null).
_HEAD = re.compile(
    r"^== vllm-logread(?: \((?P<label>[^)]*)\))?: "
    r"(?:(?P<lo>[\d,]+) to (?P<hi>[\d,]+) users fit|(?P<users>[\d,]+) users (?:fit|at)"
    r"|users unknown|(?P<nopool>.*no KV pool))",
    re.M,
)
# A what-if line: "  kv_cache_dtype=fp8           93 users (+47), exact: ..."
_WHAT_IF = re.compile(r"^  (?P<change>\S+=\S+)\s+(?P<users>[\d,]+) users \(", re.M)


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def _n(text: str | None) -> int | None:
    return None if text is None else int(text.replace(",", ""))


def _headlines(text: str) -> list[re.Match[str]]:
    return [m for m in _HEAD.finditer(text) if not m.group(0).startswith("== vllm-logread load")]


@pytest.mark.parametrize("log", SAMPLES, ids=[p.name for p in SAMPLES])
def test_text_csv_markdown_and_json_give_the_same_users(log: Path) -> None:
    code, text, _ = _run(str(log))
    jcode, out, _ = _run(str(log), "--json")
    assert code == jcode
    heads = _headlines(text)
    obj = json.loads(out)
    if obj.get("servers") is not None:  # a /metrics text of several servers
        pytest.skip("several servers: held by test_many_inputs")
    if not heads:
        # No report at all: the log states no pool (exit 3), and --json says so.
        assert obj["users"] is None and code == 3
        return
    assert len(heads) == 1, f"{len(heads)} headlines for one file:\n{text}"
    head = heads[0]
    if head.group("users") is not None:
        users = _n(head.group("users"))
        assert obj["users"] == users
    elif head.group("lo") is not None:
        assert obj["users"] is None
        assert [_n(head.group("lo")), _n(head.group("hi"))] == obj["users_range"]
    else:
        assert obj["users"] is None
    # The what-ifs: each one the text names, the same users in the JSON.
    json_what_ifs = {w["change"]: w["users"] for w in obj.get("what_if") or []}
    for m in _WHAT_IF.finditer(text):
        if m.group("change") in json_what_ifs:
            assert json_what_ifs[m.group("change")] == _n(m.group("users")), m.group(0)
    # The CSV row and the markdown headline.
    _, table, _ = _run(str(log), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(table)))
    if rows and "users" in rows[0]:
        cell = rows[0]["users"]
        assert (int(cell) if cell else None) == obj["users"]
    _, md, _ = _run(str(log), "--format", "markdown")
    if obj["users"] is not None and obj.get("failure") is None:
        assert f"**{obj['users']:,} users fit at" in md


def test_a_file_with_two_boots_gives_one_headline_or_one_per_boot(tmp_path: Path) -> None:
    """Two boots in one file (a restart): the report is of the last (the one that runs at
    the end), said once, with a note; --all-boots gives each, labelled "boot k of 2"."""
    seed = (ROOT / "sample_logs" / "seed_qwen3-8b_l4.log").read_bytes()
    fp8 = (ROOT / "sample_logs" / "real_vllm_0.32_qwen3-8b_fp8.log").read_bytes()
    path = tmp_path / "two.log"
    path.write_bytes(seed + fp8)
    code, text, err = _run(str(path))
    assert code == 0, err
    heads = _headlines(text)
    assert [m.group("label") for m in heads] == ["boot 2 of 2"]
    # The fp8 boot: 48,192 tokens = 1,506 blocks of 32; 513+128-1 = 640 tokens charged
    # or 641: 20 or 21 blocks; either way more than the seed's 37.
    assert _n(heads[0].group("users")) != 37
    assert "holds 2 boots: the report is of boot 2" in err
    code, text, _ = _run(str(path), "--all-boots")
    heads = _headlines(text)
    assert [m.group("label") for m in heads] == ["boot 1 of 2", "boot 2 of 2"]
    assert _n(heads[0].group("users")) == 37


def test_the_gate_is_in_the_json_with_the_exit_code() -> None:
    """--min-users 38 on the seed (37 users): exit 1, and the JSON says so; 37 passes."""
    seed = str(ROOT / "sample_logs" / "seed_qwen3-8b_l4.log")
    code, out, err = _run(seed, "--min-users", "38", "--json")
    assert code == 1
    obj = json.loads(out)
    assert obj["exit_code"] == 1
    assert obj["gate"] == {
        "min_users": 38,
        "margin_pct": 0.0,
        "floor_users": 38,
        "users": 37,
        "passed": False,
        "is_within_margin": False,
    }
    assert "--min-users 38: only 37 users fit" in err
    code, out, _ = _run(seed, "--min-users", "37", "--json")
    assert code == 0
    obj = json.loads(out)
    assert obj["exit_code"] == 0
    assert (obj["gate"]["users"], obj["gate"]["passed"]) == (37, True)
    _, out, _ = _run(seed, "--json")
    assert json.loads(out)["gate"] is None


def test_each_input_carries_its_own_exit_code_in_the_json(tmp_path: Path) -> None:
    """Two inputs, one short of the gate and one without a pool: each server's JSON has
    its own code (1 and 3), the process exits with the highest."""
    seed = str(ROOT / "sample_logs" / "seed_qwen3-8b_l4.log")
    empty = tmp_path / "empty.log"
    empty.write_text("INFO nothing to see\n")
    code, out, _ = _run(seed, str(empty), "--min-users", "38", "--json")
    assert code == 3
    servers = json.loads(out)["servers"]
    assert [s["exit_code"] for s in servers] == [1, 3]
    assert (servers[0]["gate"]["users"], servers[0]["gate"]["passed"]) == (37, False)


@pytest.mark.parametrize(
    ("min_users", "margin", "code", "floor", "within"),
    [
        # 38 x 0.95 = 36.1 -> 37 passes (37 < 38: within the margin)
        (38, "5%", 0, 37, True),
        # 40 x 0.95 = 38 -> 37 fails
        (40, "5%", 1, 38, False),
        # 39 x 0.95 = 37.05 -> the floor is 38: 37 fails
        (39, "5", 1, 38, False),
        # 37 x 0.9 = 33.3 -> 34; 37 >= 37: passed without the margin's help
        (37, "10%", 0, 34, False),
    ],
    ids=["38-5pct-within", "40-5pct-short", "39-5-short", "37-10pct-clear"],
)
def test_the_gate_margin_absorbs_boot_to_boot_variance(
    min_users: int, margin: str, code: int, floor: int, within: bool
) -> None:
    """--margin: the gate fails only below min_users less the margin (the seed has 37)."""
    seed = str(ROOT / "sample_logs" / "seed_qwen3-8b_l4.log")
    got, out, err = _run(seed, "--min-users", str(min_users), "--margin", margin, "--json")
    assert got == code
    gate = json.loads(out)["gate"]
    assert (gate["floor_users"], gate["passed"], gate["is_within_margin"]) == (
        floor,
        code == 0,
        within,
    )
    assert ("within --margin" in err) is within


@pytest.mark.parametrize("bad", ["x", "-1", "100", "nan%"])
def test_a_bad_margin_or_one_without_a_gate_is_a_usage_error(bad: str) -> None:
    seed = str(ROOT / "sample_logs" / "seed_qwen3-8b_l4.log")
    code, _, err = _run(seed, "--min-users", "30", "--margin", bad)
    assert code == 2 and "--margin" in err
    code, _, err = _run(seed, "--margin", "5%")
    assert code == 2 and "give --min-users too" in err
