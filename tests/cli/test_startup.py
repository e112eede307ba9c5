"""Start-up stays light: CI runs the tool on every boot, where start-up is most
of the cost (benchmarks/README.md times it against ``import click``).

``--help`` must not import the reading machinery (the patterns table, the
``regex`` module) nor any heavy optional dependency; a report on a short log
must not import pandas, numpy or matplotlib.
"""

from __future__ import annotations

import subprocess
import sys

from strategies import SAMPLE_LOGS

HEAVY = ("pandas", "numpy", "matplotlib", "huggingface_hub")


def _modules_after(*argv: str) -> set[str]:
    code = (
        "import sys\n"
        "from vllm_logread.cli import main\n"
        f"sys.argv = ['vllm-logread', *{list(argv)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    line = proc.stderr.rsplit("MODULES ", 1)[1]
    return set(line.split())


def test_help_imports_only_click() -> None:
    mods = _modules_after("--help")
    assert not mods & {*HEAVY, "regex", "vllm_logread.read.patterns", "vllm_logread.session"}
    # options.py imports rules.py (dataclasses); shutil imports bz2 and lzma
    # (docs/performance.md, "Start-up").
    assert not mods & {"vllm_logread.options", "vllm_logread.rules", "shutil"}


# What only an option or an input kind needs: --target-users, a sweep,
# --compare-metrics, an SGLang log, request lines or /metrics.
ON_DEMAND = (
    "vllm_logread.report.plan",
    "vllm_logread.report.sweep",
    "vllm_logread.report.crosscheck",
    "vllm_logread.report.sglang",
    "vllm_logread.observed",
)


def test_a_plain_report_imports_no_option_it_was_not_given() -> None:
    mods = _modules_after(str(SAMPLE_LOGS / "seed_qwen3-8b_l4.log"), "--no-echo")
    assert "vllm_logread.report.build" in mods  # it did build a report
    assert not mods & set(ON_DEMAND)


def test_the_options_import_what_they_need() -> None:
    mods = _modules_after(
        str(SAMPLE_LOGS / "seed_qwen3-8b_l4.log"),
        "--no-echo",
        "--target-users",
        "60",
        "--prompt",
        "256,512",
    )
    assert {"vllm_logread.report.plan", "vllm_logread.report.sweep"} <= mods


def test_a_report_imports_nothing_heavy() -> None:
    mods = _modules_after(str(SAMPLE_LOGS / "seed_qwen3-8b_l4.log"), "--no-echo")
    assert "vllm_logread.session" in mods  # it did read the log
    assert not mods & set(HEAVY)
