"""The workload file reader: CSV and JSONL rows -> requests, and clear errors naming the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_logread.errors import InputError
from vllm_logread.vllm.workload import parse_workload, read_workload


def sizes(text: str) -> list[tuple[int, int, int]]:
    return [(r.prompt_tokens, r.output_tokens, r.count) for r in parse_workload(text).requests]


def test_csv_with_counts_and_comments() -> None:
    text = "# from a trace\nprompt_tokens,output_tokens,count\n512,128,3\n\n2048,256,1\n"
    mix = parse_workload(text)
    assert sizes(text) == [(512, 128, 3), (2048, 256, 1)]
    # 3 requests of the first row + 1 of the second
    assert mix.num_requests == 4
    assert [r.line for r in mix.requests] == [3, 5]
    assert not mix.is_uniform
    assert [r.tokens for r in mix.expanded()] == [640, 640, 640, 2304]


def test_column_aliases_case_and_separators() -> None:
    # a benchmark's names, a semicolon file, thousands separators in a cell
    assert sizes("Input_Len;Output_Len\n1,024;64\n") == [(1024, 64, 1)]
    assert sizes("input_tokens\tcompletion_tokens\n7\t9\n") == [(7, 9, 1)]
    mix = parse_workload("prompt_len,max_tokens\n100,10\n")
    assert mix.columns == ("prompt_len", "max_tokens")


def test_jsonl() -> None:
    text = '{"prompt_tokens": 512, "output_tokens": 128}\n\n{"prompt_tokens": 100.0, "output_tokens": 1}\n'
    assert sizes(text) == [(512, 128, 1), (100, 1, 1)]
    assert parse_workload('{"prompt_tokens": 5, "output_tokens": 5}').is_uniform


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("prompt,answer\n1,2\n", "needs a prompt column"),
        (
            "prompt_tokens,output_tokens\n512,0\n",
            "line 2: output_tokens must be a whole number >= 1",
        ),
        ("prompt_tokens,output_tokens\n512,12.5\n", "line 2"),
        ("prompt_tokens,output_tokens\n-1,3\n", ">= 1"),
        ("prompt_tokens,output_tokens\n512\n", "1 cells, the header has 2"),
        ("prompt_tokens,output_tokens\n", "no requests"),
        ('{"prompt_tokens": 5, "output_tokens": 5}\n[1]\n', "line 2: not a JSON object"),
        ('{"prompt_tokens": 5, "output_tokens": true}\n', "whole number"),
        ('{"prompt_tokens": 5}\n', "needs a prompt column"),
        ("prompt_tokens,output_tokens,count\n5,5,0\n", "count must be a whole number >= 1"),
    ],
)
def test_bad_rows_are_errors_naming_the_line(text: str, fragment: str) -> None:
    with pytest.raises(InputError, match=None) as err:
        parse_workload(text, source="w.csv")
    assert fragment in str(err.value)
    assert str(err.value).startswith("w.csv")


def test_read_workload_file_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read the workload"):
        read_workload(tmp_path / "absent.csv")
    bad = tmp_path / "latin1.csv"
    bad.write_bytes(b"prompt_tokens,output_tokens\n\xff,1\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_workload(bad)
    good = tmp_path / "w.csv"
    good.write_text("\ufeffprompt_tokens,output_tokens\n3,4\n")
    assert read_workload(good).requests[0].prompt_tokens == 3
