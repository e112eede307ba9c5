"""Start-up stays light: CI runs the tool on every boot, where start-up is most
of the cost (benchmarks/README.md times it against ``import click``).

``--help`` must not import the reading machinery (the patterns table, the
``regex`` module) nor any heavy optional dependency; a report on a short log
must not import pandas, numpy or matplotlib, nor the /metrics reader; the
machinery is imported with the garbage collector paused and its objects then
frozen; a file's boot is built once after its last line. Structure, not
timings: the times are benchmarks/bench.py's (``--only startup``).
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from strategies import SAMPLE_LOGS

HEAVY = ("pandas", "numpy", "matplotlib", "huggingface_hub")


def _after(*argv: str) -> tuple[set[str], int, bool]:
    """The modules a fresh process imported for ``vllm-logread ARGV``, and its
    garbage collector's frozen count and on/off state after."""
    code = (
        "import gc, sys\n"
        "from vllm_logread.cli.commands import main\n"
        f"sys.argv = ['vllm-logread', *{list(argv)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write(f'\\nGC {gc.get_freeze_count()} {gc.isenabled()}\\n')\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    gc_line, modules = proc.stderr.rsplit("\nGC ", 1)[1].split("\nMODULES ", 1)
    frozen, enabled = gc_line.split()
    return set(modules.split()), int(frozen), enabled == "True"


def _modules_after(*argv: str) -> set[str]:
    return _after(*argv)[0]


def test_help_imports_only_click() -> None:
    mods = _modules_after("--help")
    assert not mods & {
        *HEAVY,
        "regex",
        "vllm_logread.read.patterns",
        "vllm_logread.session.session",
    }
    # options.py imports rules.py (dataclasses); shutil imports bz2 and lzma
    # (docs/performance.md, "Start-up").
    assert not mods & {"vllm_logread.cli.options", "vllm_logread.vllm.rules", "shutil"}
    # events.py (exit codes, results: 5 dataclasses) is imported for an error only.
    assert "vllm_logread.session.events" not in mods


# What only an option or an input kind needs: --target-users, a sweep,
# --compare-metrics, an SGLang log, request lines or /metrics.
ON_DEMAND = (
    "vllm_logread.report.plan",
    "vllm_logread.report.sweep",
    "vllm_logread.report.crosscheck",
    "vllm_logread.report.sglang",
    "vllm_logread.report.observed",
    "vllm_logread.read.metrics",  # a /metrics text (read/sniff.py tells one from a log)
    "prometheus_client",
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
    assert "vllm_logread.session.session" in mods  # it did read the log
    assert not mods & set(HEAVY)


def test_a_metrics_text_imports_the_metrics_reader() -> None:
    mods = _modules_after(str(SAMPLE_LOGS / "metrics_v1_0_10_qwen3-8b.txt"), "--no-echo")
    assert "vllm_logread.read.metrics" in mods


def test_a_report_freezes_what_its_imports_made() -> None:
    # cli._machinery: the collector paused while the reading machinery is imported,
    # its objects then frozen (35,895 for the seed report when this was written), and
    # the collector on again for the reading.
    mods, frozen, enabled = _after(str(SAMPLE_LOGS / "seed_qwen3-8b_l4.log"), "--no-echo")
    assert "vllm_logread.cli.app" in mods
    assert frozen > 10_000
    assert enabled


def test_help_freezes_nothing() -> None:
    # Nothing of the machinery is imported, so nothing is paused or frozen.
    _, frozen, enabled = _after("--help")
    assert frozen == 0
    assert enabled


def test_a_files_boot_is_built_once_after_its_last_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # Session.report_for after finish: the printed report, the exit code's and the
    # JSON's are one object, built once (Report is frozen).
    from vllm_logread.cli.outcome import results_of
    from vllm_logread.kv.config import resolve_spec
    from vllm_logread.report.model import Options
    from vllm_logread.session import session as session_module
    from vllm_logread.session.inputs import run

    built: list[int] = []
    real = session_module.build_report

    def counted(boot: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(boot.index)
        return real(boot, *args, **kwargs)

    monkeypatch.setattr(session_module, "build_report", counted)
    seed = SAMPLE_LOGS / "seed_qwen3-8b_l4.log"
    session = session_module.Session(
        str(seed), Options(), spec_resolver=resolve_spec, is_live=False
    )
    with seed.open("rb") as fh:
        outputs = list(run(session, fh))
    printed = [o.report for o in outputs if o.kind == "report"]
    [result] = results_of([session], all_boots=False)
    # Once at the pool line (line 16 of 19, for its alerts), once after line 19.
    assert built == [0, 0]
    assert len(printed) == 1
    assert result.reports[0] is printed[0]
    assert result.json_boots[0].report is printed[0]


def _fingerprint_loaded_for(log: str) -> bool:
    """Whether reading ``log`` to its report parsed data/fingerprint.json (528 KB)."""
    from vllm_logread.boot import fingerprint
    from vllm_logread.cli.outcome import results_of
    from vllm_logread.kv.config import resolve_spec
    from vllm_logread.report.model import Options
    from vllm_logread.session.inputs import run
    from vllm_logread.session.session import Session

    fingerprint._table.cache_clear()
    path = SAMPLE_LOGS / log
    session = Session(str(path), Options(), spec_resolver=resolve_spec, is_live=False)
    with path.open("rb") as fh:
        list(run(session, fh))
    results_of([session], all_boots=False)
    return fingerprint._table.cache_info().currsize > 0


def test_a_log_with_a_version_line_never_loads_the_fingerprint() -> None:
    # The seed log's banner prints "version 0.32.0" (line 3): the range is that line.
    assert not _fingerprint_loaded_for("seed_qwen3-8b_l4.log")


def test_a_log_without_one_loads_it() -> None:
    # era_0_2_7_v0.log prints no version: its call sites name the releases.
    assert _fingerprint_loaded_for("era_0_2_7_v0.log")
