"""The real-vLLM harness's reading of the machine, without a vLLM: which CPUs
skip the fp8 boot (from /proc/cpuinfo's flags, never from the crash), how its
timeouts scale with the first boot, and the tool's reading a failed test shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from . import harness

ROOT = Path(__file__).resolve().parents[2]

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
flags\t\t: fpu vme sse sse2 avx avx2 fma
bugs\t\t: spectre_v1

processor\t: 1
flags\t\t: fpu vme sse sse2 avx avx2 fma
"""


def test_cpu_flags_are_read_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(CPUINFO)
    assert harness.cpu_flags(info) == frozenset({"fpu", "vme", "sse", "sse2", "avx", "avx2", "fma"})
    assert harness.cpu_flags(tmp_path / "absent") is None


@pytest.mark.parametrize(
    ("machine", "flags", "runs"),
    [
        ("x86_64", {"avx2", "fma"}, False),  # the AVX2-only 2-core machine of issue 36
        ("x86_64", {"avx2", "avx512f", "avx512bw"}, True),
        ("x86_64", {"avx2", "amx_tile", "amx_bf16"}, True),
        ("aarch64", {"asimd", "sve"}, False),
        ("x86_64", None, True),  # flags unknown: the boot is tried, its failure read
    ],
)
def test_fp8_kv_cache_needs_avx512_or_amx(
    machine: str, flags: set[str] | None, runs: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if flags is None:
        monkeypatch.setattr(harness, "cpu_flags", lambda: None)
    reason = harness.fp8_kv_cache_unsupported(machine, None if flags is None else frozenset(flags))
    assert (reason is None) == runs
    if not runs:
        assert reason is not None and "needs x86 with AVX-512 or AMX" in reason


@pytest.fixture
def fresh_pace() -> Iterator[None]:
    saved = list(harness._PACE)
    harness._PACE.clear()
    yield
    harness._PACE[:] = saved


@pytest.mark.usefixtures("fresh_pace")
def test_timeouts_scale_with_the_first_boot() -> None:
    assert harness.scaled(300) == 300  # no boot yet: the reference machine's figure
    harness.record_boot(90.0)  # 90 s against the reference 45 s: twice as slow
    harness.record_boot(30.0)  # only the first boot sets the pace
    assert harness.pace() == 2.0 and harness.scaled(300) == 600


@pytest.mark.usefixtures("fresh_pace")
def test_a_faster_machine_keeps_the_reference_timeouts() -> None:
    harness.record_boot(20.0)  # faster than the reference: never less time than there
    assert harness.scaled(180) == 180


def test_a_failed_boot_shows_the_tool_s_reading() -> None:
    """What a failed real-vLLM test prints: the cause on its line and the fix
    (a refused boot: line 67 of this real 0.32 log), not only the log's tail."""
    log = ROOT / "sample_logs" / "real_vllm_0.32_llama-3.2-1b_kv_too_small.log"
    text = harness.tool_reading(log)
    assert "(exit 3)" in text.splitlines()[0]
    assert f"{log}:67: the boot serves nobody: KV cache too small" in text
    assert "fix: --max-model-len 1024 or less" in text
