"""Optional dependencies never traceback: the CLI in a process where the
extras (matplotlib for --plot, pandas for reading the stats CSV back as a
table) cannot be imported, as after ``pip install vllm-logread`` alone, and one
where even the plain dependencies prometheus-client and stringzilla (serving
mode then searches with CPython: read/simd.py) are missing, as after
``pip install --no-deps``. Every documented command either works or exits 2
naming the pip command; the tables and CSV files need no pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_logs"
SEED = str(S / "seed_qwen3-8b_l4.log")
METRICS = str(S / "metrics_v1_0_10_qwen3-8b.txt")
FP8 = str(S / "real_vllm_0.32_qwen3-8b_fp8.log")
REAL_SEED = str(S / "real_vllm_0.32_qwen3-8b_seed.log")
LOAD = str(S / "real_vllm_0.32_qwen3-8b_load.log")
MIX = str(ROOT / "tests" / "data" / "mix_seed.csv")

# Hidden modules import as if absent (sys.modules[name] = None: ImportError,
# and importlib.util.find_spec says None).
SHIM = """
import sys
for name in sys.argv[1].split(","):
    if name:
        sys.modules[name] = None
sys.argv = ["vllm-logread", *sys.argv[2:]]
from vllm_logread.cli.commands import run
run()
"""

EXTRAS = "matplotlib,pandas,numpy"
NO_DEPS = EXTRAS + ",prometheus_client,stringzilla"

# (hidden, arguments, exit code, what stderr must say)
CASES = [
    (EXTRAS, [SEED], 0, ""),
    (EXTRAS, [SEED, "--json"], 0, ""),
    (EXTRAS, [SEED, "--prompt", "256,512"], 0, ""),
    (EXTRAS, [SEED, "--format", "csv"], 0, ""),
    (EXTRAS, [SEED, "--format", "markdown"], 0, ""),
    (EXTRAS, [SEED, "--format", "github"], 0, ""),
    (EXTRAS, ["kv", "Qwen/Qwen3-8B"], 0, ""),
    (EXTRAS, [SEED, "--plot", "{tmp}/c.png"], 2, "pip install 'vllm-logread[plot]'"),
    (EXTRAS, [METRICS], 0, ""),  # prometheus-client is a plain dependency
    # the commands and options added since: each works without the extras or names its extra
    (EXTRAS, ["kv", "Qwen/Qwen3-8B", "--gpu", "H100-80GB", "--prompt", "512"], 0, ""),
    (EXTRAS, [SEED, "--workload", MIX], 0, ""),
    (EXTRAS, [SEED, "--shared-prefix", "64"], 0, ""),
    (EXTRAS, ["diff", REAL_SEED, FP8], 0, ""),
    (EXTRAS, ["diff", REAL_SEED, METRICS], 0, ""),
    (EXTRAS, ["simulate", LOAD, "--users", "48"], 0, ""),
    (EXTRAS, ["simulate", LOAD, "--users", "48", "--plot", "{tmp}/s.png"], 2, "[plot]"),
    (EXTRAS, ["--prometheus", "http://127.0.0.1:9"], 2, "127.0.0.1:9"),
    (NO_DEPS, [SEED], 0, ""),
    (NO_DEPS, [SEED, "--json"], 0, ""),
    (NO_DEPS, [SEED, "--prompt", "256,512"], 0, ""),
    (NO_DEPS, [SEED, "--format", "csv"], 0, ""),
    (NO_DEPS, [SEED, "--stats-csv", "{tmp}/s.csv"], 0, ""),
    (NO_DEPS, [METRICS], 2, "pip install prometheus-client"),
    (NO_DEPS, ["diff", REAL_SEED, METRICS], 2, "pip install prometheus-client"),
]


@pytest.mark.parametrize(
    ("hidden", "args", "code", "says"),
    CASES,
    ids=[("no-deps " if h == NO_DEPS else "") + " ".join(a[1:] or a) for h, a, _, _ in CASES],
)
def test_no_traceback_without_the_extras(
    tmp_path: Path, hidden: str, args: list[str], code: int, says: str
) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = subprocess.run(
        [sys.executable, "-c", SHIM, hidden, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == code, r.stderr
    assert says in r.stderr
