"""--workload on hostile cells met in review: exact whole numbers, never a
float's rounding stated as a count, never a traceback."""

from __future__ import annotations

import pytest

from vllm_logread.errors import InputError
from vllm_logread.vllm.workload import parse_workload


def test_a_long_integer_cell_is_read_exactly() -> None:
    # 999,999,999,999 tokens (under the 2**40 = 1,099,511,627,776 bound) is read
    # as an int, exactly. 99,999,999,999,999,999,999,999 read through a float
    # came back as 99,999,999,999,999,991,611,392 (a double keeps 53 bits): a
    # wrong number stated as exact; past 2**40 it is now refused.
    mix = parse_workload("prompt_tokens,output_tokens\n999999999999,128\n")
    assert mix.requests[0].prompt_tokens == 999_999_999_999
    with pytest.raises(InputError, match="line 2: prompt_tokens is 99,999,999,999,999,999,999,999"):
        parse_workload("prompt_tokens,output_tokens\n99999999999999999999999,128\n")


def test_a_long_integer_in_json_is_read_exactly() -> None:
    # 2**53 + 1 = 9,007,199,254,740,993 is not a double; 2**40 - 1 is under the bound.
    mix = parse_workload('{"prompt_tokens": 1099511627775, "output_tokens": 5}')
    assert mix.requests[0].prompt_tokens == 1_099_511_627_775
    with pytest.raises(InputError):
        parse_workload('{"prompt_tokens": 9007199254740993, "output_tokens": 5}')


@pytest.mark.parametrize("digits", [400, 5000])
def test_a_huge_json_integer_is_an_input_error(digits: int) -> None:
    # 10**400 overflowed float() in the mean's division; past 4,300 digits
    # json.loads itself refuses (ValueError, not JSONDecodeError): both were
    # tracebacks.
    text = '{"prompt_tokens": 1' + "0" * digits + ', "output_tokens": 5}'
    with pytest.raises(InputError, match="line 1"):
        parse_workload(text)


def test_a_decimal_that_is_not_exact_is_refused() -> None:
    # 1e30 as a float is 1,000,000,019,884,624,838,656: not the count written.
    with pytest.raises(InputError):
        parse_workload("prompt_tokens,output_tokens\n1e30,128\n")


def test_exact_decimals_still_read() -> None:
    # 1e3 = 1,000 and "512.0" = 512, as before.
    mix = parse_workload('prompt_tokens,output_tokens\n1e3,128\n"512.0",128\n')
    assert [r.prompt_tokens for r in mix.requests] == [1000, 512]
