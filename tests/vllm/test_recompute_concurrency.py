"""The proof: vLLM's own "Maximum concurrency" is recomputed from the pool for every log that has both.

vLLM prints its maximum concurrency from the same block count it prints the
pool from, by rules that changed across versions and attention kinds (one
group: blocks x block size / max_model_len, then blocks / cdiv(max_model_len,
block size); hybrid models: blocks / the blocks one max-length request needs
summed over the KV cache groups). Reproducing the printed figure is the best
evidence that the tool read the right pool, block size, length and layout.

For every log in ``../shared/real_logs`` (the corpus of real logs, when this
checkout sits beside it) and in ``sample_logs/`` whose text has a pool line and
a "Maximum concurrency" line, the tool's ``max_concurrency`` check must pass.
When it cannot run (absent) or says "unknown", the report must say why, in one
of these ways:

* the model could not be resolved: ``kv_bytes_per_token`` is null and a check
  or warning says the KV shape is unknown (or the config could not be read);
* the KV cache groups could not be formed or the pool line decoded for them
  (a warning or check naming the KV cache groups);
* the concurrency line itself is unreadable (cut off): a near-miss warning
  names it.

A "fail" is allowed only for the logs in ``CONTRADICTIONS``, each a log that
really contradicts itself, with the reason; for them the test insists on the
fail, so it reminds us to remove the entry if the tool learns to tell the two
sources apart.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
SHARED = Path(__file__).resolve().parents[3] / "shared"
REAL_LOGS = SHARED / "real_logs"

# Raw-text markers, independent of the tool's patterns: a pool line (V1 tokens,
# V0/early-V1 blocks, the API server's num_gpu_blocks) and a concurrency line.
# A hard-wrapped or cut line still carries its opening words.
POOL_MARK = re.compile(r"KV cache size: [\d,]+|blocks: \d+|num_gpu_blocks is: \d+")
CONC_MARK = re.compile(r"Maximum concurrency for")

# Logs that contradict themselves: name -> why (the check must say "fail").
CONTRADICTIONS = {
    # Records of two different servers glued into one file: a V1 boot of
    # 11-29 (24,096 tokens = 1,506 blocks; 1,506 / 512 = 2.94x) and a V0 boot
    # of 02-10 ("# CUDA blocks: 27927"; 27,927 x 16 / 8,192 = 54.54x). Each
    # pool agrees with its own line; read as one boot, the 27,927 blocks
    # contradict the 2.94x.
    "wrap_glued.log": "two servers' records glued together (2.94x and 54.54x pools)",
}

UNRESOLVED = re.compile(r"KV shape is unknown|model config:")
GROUPS_NOTE = re.compile(r"KV cache group")


def _has_pool_and_concurrency(path: Path) -> bool:
    text = path.read_bytes().decode("utf-8", "replace")
    return bool(POOL_MARK.search(text) and CONC_MARK.search(text))


def _logs() -> list[Path]:
    logs = sorted(SAMPLES.glob("*.log"))
    if REAL_LOGS.is_dir():
        logs = sorted(REAL_LOGS.glob("*.log")) + logs
    return [p for p in logs if _has_pool_and_concurrency(p)]


LOGS = _logs()


def _id(path: Path) -> str:
    where = "real" if path.parent == REAL_LOGS else "sample"
    why = CONTRADICTIONS.get(path.name)
    return f"{where}/{path.name}" + (f" (contradiction: {why})" if why else "")


@pytest.fixture(autouse=True)
def _shipped_table_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolve models from the shipped table, not from this machine's HF cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))


def _report(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, [str(path), "--json"])
    # 3: the engine died after printing its pool (the failed-boot sample);
    # its pool and concurrency lines are still vLLM's own arithmetic.
    assert result.exit_code in (0, 3, 4), f"exit {result.exit_code}: {result.stderr}"
    out: dict[str, Any] = json.loads(result.stdout)
    if "servers" in out:  # several inputs; one file gives one object
        out = out["servers"][0]
    return out


def _explains(out: dict[str, Any]) -> str | None:
    """Why the report could not recompute the concurrency, or None if it does not say."""
    texts = [c["detail"] for c in out["checks"]] + list(out["warnings"])
    if out["vllm_max_concurrency"] is None:
        cut = [t for t in out["warnings"] if "max_concurrency" in t]
        return cut[0] if cut else None
    if out["kv_bytes_per_token"] is None:
        said = [t for t in texts if UNRESOLVED.search(t)]
        if said:
            return said[0]
    said = [t for t in texts if GROUPS_NOTE.search(t)]
    return said[0] if said else None


def test_the_corpus_is_not_empty() -> None:
    names = {p.name for p in LOGS}
    assert {"seed_qwen3-8b_l4.log", "hybrid_gemma3_27b.log"} <= names
    for name in CONTRADICTIONS:
        assert name in names, f"{name} is listed as a contradiction but is not checked"


@pytest.mark.skipif(not REAL_LOGS.is_dir(), reason=f"no shared corpus of real logs at {REAL_LOGS}")
def test_real_logs_are_included() -> None:
    assert any(p.parent == REAL_LOGS for p in LOGS)


@pytest.mark.parametrize("path", LOGS, ids=[_id(p) for p in LOGS])
def test_max_concurrency_is_recomputed(path: Path) -> None:
    out = _report(path)
    if out.get("failure") and out["pool_tokens"] is None and out["num_blocks"] is None:
        # A paste whose last run failed before its pool (036: a good run, then
        # "KV cache too small"): the report is that failure.
        assert out["users"] is None and out["failure"]["cause"]
        return
    assert out["pool_tokens"] is not None or out["num_blocks"] is not None, "the pool was not read"
    check = next((c for c in out["checks"] if c["name"] == "max_concurrency"), None)
    status = None if check is None else check["status"]
    if path.name in CONTRADICTIONS:
        # With no config the plain layout was only assumed: the figures that
        # break it make the layout unknown (and the users), never exit 4.
        assert status == "unknown", f"{path.name}: {check}"
        assert [u["name"] for u in out.get("unknowns", [])] == ["attention_layout"]
        assert out["users"] is None
        return
    if status == "pass":
        return
    assert status != "fail", f"{path.name}: {check['detail'] if check else ''}"
    why = _explains(out)
    assert why, (
        f"{path.name}: max_concurrency is {status or 'absent'} and the report does not say why"
    )


@pytest.mark.skipif(not REAL_LOGS.is_dir(), reason=f"no shared corpus of real logs at {REAL_LOGS}")
@pytest.mark.parametrize("name", ["010.log", "038.log"])
def test_unresolved_hybrid_real_logs_say_why(name: str) -> None:
    """Qwen3.6-27B (a Gated DeltaNet hybrid) served from a local path / not named.

    Its pool line (619,479 / 619,202 tokens, not a whole number of blocks) is
    vLLM's int(concurrency x max_model_len) for several KV cache groups, which
    cannot be decoded without the model's layout: no block count, no check.
    """
    out = _report(REAL_LOGS / name)
    assert out["kv_bytes_per_token"] is None and out["num_blocks"] is None
    assert not any(c["name"] == "max_concurrency" for c in out["checks"])
    assert any("KV shape is unknown" in c["detail"] for c in out["checks"])
