"""fingerprint.py: a log's vLLM release from its call sites and process labels.

The call sites come from vLLM's header (lines.py keeps them on each LogLine and
fact); the boot collects them (boots.py); version_range looks them up in
data/fingerprint.json. The test over every sample log removes its version
line and checks that the range still holds the release that printed it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from vllm_logread.boot.boots import Boot, BootTracker
from vllm_logread.boot.fingerprint import VersionRange, _table, version_range
from vllm_logread.read.facts import Fact
from vllm_logread.read.lines import parse_line
from vllm_logread.read.scanner import scan_bytes

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
REAL = ROOT.parent / "shared" / "real_logs"


# -- the call site of a line -------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "site"),
    [
        # 0.8+: the site in brackets.
        (
            "INFO 11-29 12:34:56 [kv_cache_utils.py:716] GPU KV cache size: 5 tokens",
            "kv_cache_utils.py:716",
        ),
        # Before 0.8: no opening bracket.
        (
            "INFO 07-24 10:00:00 gpu_executor.py:83] # GPU blocks: 100, # CPU blocks: 20",
            "gpu_executor.py:83",
        ),
        # A process tag, colours and a docker timestamp peeled first.
        (
            "2025-01-02T03:04:05.123Z \x1b[1;36m(VllmWorkerProcess pid=12)\x1b[0;0m "
            "INFO 07-24 10:00:00 worker.py:150] Memory profiling results: x",
            "worker.py:150",
        ),
        # Colour codes that lost their ESC byte.
        ("[1;36m(EngineCore_0 pid=1)[0;0m INFO 04-01 00:00:00 [core.py:172] x", "core.py:172"),
        # A header whose level was trimmed.
        (
            "[kv_cache_utils.py:868] Maximum concurrency for 4096 tokens per request: 2.00x",
            "kv_cache_utils.py:868",
        ),
        # A logging format that prints the path: the base name, as the default format gives.
        (
            "INFO 11-29 12:34:56 [vllm/v1/core/kv_cache_utils.py:716] GPU KV cache size: 5 tokens",
            "kv_cache_utils.py:716",
        ),
        # Fractions of a second in the time, and a WARNING.
        ("WARNING 11-29 12:34:56.789 [arg_utils.py:1234] x", "arg_utils.py:1234"),
        # Python logging's default format is another library's: no vLLM site.
        ("2026-02-02 18:25:03,837 - INFO - autotuner.py:256 - msg", None),
        # No header at all.
        ("GPU KV cache size: 5 tokens", None),
    ],
)
def test_parse_line_keeps_the_call_site(line: str, site: str | None) -> None:
    assert parse_line(line, 1).site == site


def _boots(text: str, *, drop_version: bool = False) -> list[Boot]:
    tracker = BootTracker()
    facts = [e for e in scan_bytes(text.encode()) if isinstance(e, Fact)]
    if drop_version:
        facts = [f for f in facts if f.kind != "vllm_version"]
    tracker.add_all(facts)
    return tracker.boots


_HAND_LOG = """\
(EngineCore_DP0 pid=7) INFO 08-01 10:00:01 [gpu_model_runner.py:1892] Model loading took 15.27 GiB and 3.1 seconds
(EngineCore_DP0 pid=7) INFO 08-01 10:00:02 [gpu_worker.py:276] Available KV cache memory: 12.42 GiB
(EngineCore_DP0 pid=7) INFO 08-01 10:00:03 [kv_cache_utils.py:849] GPU KV cache size: 90,432 tokens
(EngineCore_DP0 pid=7) INFO 08-01 10:00:03 [kv_cache_utils.py:853] Maximum concurrency for 40,960 tokens per request: 2.21x
(EngineCore_DP1 pid=8) INFO 08-01 10:00:03 [kv_cache_utils.py:849] GPU KV cache size: 90,432 tokens
"""


def test_a_boot_collects_its_call_sites_with_their_first_line() -> None:
    (boot,) = _boots(_HAND_LOG)
    assert boot.call_sites() == {
        ("gpu_model_runner.py", 1892): 1,
        ("gpu_worker.py", 276): 2,
        ("kv_cache_utils.py", 849): 3,  # lines 3 and 5: the first
        ("kv_cache_utils.py", 853): 4,
    }
    assert boot.process_labels() == {"EngineCore_DP0": 1, "EngineCore_DP1": 5}


# -- the table --------------------------------------------------------------------


def test_the_table_covers_0_5_0_to_0_34_0_with_every_patch_release() -> None:
    releases = _table().releases
    assert releases[-1] == "0.34.0"
    for r in ("0.5.0", "0.5.0.post1", "0.6.1.post2", "0.9.0.1", "0.10.1.1", "0.32.0"):
        assert r in releases
    assert len(releases) == len(set(releases))


def test_the_pool_line_of_0_32_0_is_at_its_logger_call() -> None:
    # vllm 0.32.0's vllm/v1/core/kv_cache_utils.py: the one-line pool and concurrency
    # logger.info starts at line 2327 and ends at 2334 (read in its wheel).
    t = _table()
    i = t.releases.index("0.32.0")
    assert t.site_mask("kv_cache_utils.py", 2327) >> i & 1
    assert t.site_mask("kv_cache_utils.py", 2334) >> i & 1  # any line of the call
    assert not t.site_mask("kv_cache_utils.py", 2335) >> i & 1


def test_a_version_line_is_one_release() -> None:
    log = "INFO 08-01 10:00:00 [api_server.py:1]  vLLM API server version 0.9.2\n" + _HAND_LOG
    (boot,) = _boots(log)
    r = version_range(boot)
    assert r is not None and r.releases == ("0.9.2",) and r.evidence == ((1, "version line"),)


def test_a_log_without_sites_or_labels_has_no_range() -> None:
    (boot,) = _boots("GPU KV cache size: 90,432 tokens\n")
    assert version_range(boot) is None


def test_a_call_site_tells_0_8_4_from_0_8_3() -> None:
    # "Model loading took" is a logger.info at gpu_model_runner.py:1291 in 0.8.4's wheel
    # and at line 1273 in 0.8.3's (read in both wheels): a line printed at 1291 is not 0.8.3's.
    log = (
        "(VllmWorker rank=0 pid=7) INFO 04-16 13:50:27 [gpu_model_runner.py:1291] "
        "Model loading took 34.4340 GiB and 18.761683 seconds\n"
    )
    (boot,) = _boots(log)
    r = version_range(boot)
    assert r is not None and "0.8.4" in r.releases and "0.8.3" not in r.releases
    assert (1, "gpu_model_runner.py:1291") in r.evidence


def test_a_site_no_release_explains_is_ignored() -> None:
    # A plugin's file: no vLLM release has a logger call in vllm_fork_worker.py.
    log = "INFO 08-01 10:00:02 [vllm_fork_worker.py:77] Available KV cache memory: 12.42 GiB\n"
    (boot,) = _boots(log)
    assert version_range(boot) is None


# -- every sample log, without its version line -----------------------------------


def _name_version(path: Path) -> str | None:
    """The release a sample's name states: era_0_10_1_docker -> 0.10.1,
    real_vllm_0.32_qwen3-8b -> 0.32 (a minor version: any of its releases)."""
    m = re.match(r"era_(\d+)_(\d+)_(\d+)_", path.name)
    if m:
        return ".".join(m.groups())
    m = re.match(r"real_vllm_(\d+\.\d+(?:\.\d+)?)_", path.name)
    return m.group(1) if m else None


def _source_version(path: Path) -> str | None:
    meta = path.with_suffix(".source.json")
    if not meta.exists():
        return None
    said = json.loads(meta.read_text()).get("vllm_version")
    m = re.match(r"(\d+\.\d+\.\d+(?:\.post\d+|\.\d+)?) \(", said or "")
    return m.group(1) if m else None


# Where the version a sample's source gives is not the one that printed it.
_CORRECTED = {
    # The title says 0.8.3; the log prints "Model loading took" at
    # gpu_model_runner.py:1291, where 0.8.4's wheel has that logger.info (0.8.3's
    # has it at line 1273), and is dated 04-16, two days after 0.8.4's release.
    "049.log": "0.8.4",
}


def _known_version(path: Path, boot: Boot) -> str | None:
    stated = boot.first("vllm_version")
    if stated is not None:
        return str(stated.value)
    if path.parent == REAL and path.name in _CORRECTED:
        return _CORRECTED[path.name]
    return _name_version(path) or _source_version(path)


def _holds(r: VersionRange, version: str) -> bool:
    """Whether the range holds the version (a minor version: any release of it;
    a local build ``0.9.2+cpu``: its release)."""
    base = re.split(r"[+]|\.dev|rc", version)[0]
    if base.count(".") == 1:
        return any(x == base or x.startswith(base + ".") for x in r.releases)
    return base in r.releases


def _logs() -> list[Path]:
    logs = sorted(SAMPLES.glob("*.log"))
    if REAL.is_dir():
        logs += sorted(REAL.glob("*.log"))
    return logs


def _in_table(version: str) -> bool:
    base = re.split(r"[+]|\.dev|rc", version)[0]
    releases = _table().releases
    return any(x == base or x.startswith(base + ".") for x in releases)


@pytest.mark.parametrize("log", _logs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_sample_without_its_version_line_gets_a_range_that_holds_its_version(
    log: Path,
) -> None:
    text = log.read_text(errors="replace")
    known = {b.index: _known_version(log, b) for b in _boots(text)}
    versions = {v for v in known.values() if v}
    if len(versions) != 1:
        pytest.skip(f"version not known, or several: {sorted(versions)}")
    (version,) = versions
    if not _in_table(version):
        pytest.skip(f"{version} is not a release of the table")
    for boot in _boots(text, drop_version=True):
        r = version_range(boot)
        if r is not None:
            assert _holds(r, version), f"{r} lacks {version}"


def test_the_generator_s_helpers_hold_their_examples() -> None:
    # tools/fingerprint.py is no package module (test_doctests does not see it).
    import doctest
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "fingerprint_tool", ROOT / "tools" / "fingerprint.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted >= 5


def test_v0_lines_keep_the_releases_that_run_v0() -> None:
    # Real log 022's lines (shared/real_logs/022.log): its call sites worker.py:238
    # and executor_base.py:95 are explained by 0.6.4 and by 0.33/0.34 alike, on a V0
    # boot ("# CUDA blocks: 6001, # CPU blocks: 1638"). V0 runs only before 0.11.0
    # (its scheduler and worker are gone from 0.11.0's wheel), so the range is
    # 0.6.4 alone, never "0.6.4 or 0.33".
    log = (
        "INFO 01-16 09:40:00 worker.py:238] the current vLLM instance can use "
        "total_gpu_memory (79.22GiB) x gpu_memory_utilization (0.90) = 71.29GiB\n"
        "INFO 01-16 09:40:00 executor_base.py:95] # CUDA blocks: 6001, # CPU blocks: 1638\n"
    )
    (boot,) = _boots(log)
    found = version_range(boot)
    assert found is not None
    assert found.releases and all(r.startswith("0.6.4") for r in found.releases), found
    assert (2, "V0 engine lines") in found.evidence


def test_a_build_between_releases_spans_the_releases_its_sites_name() -> None:
    # Real log 021's lines (a build of April 2025, between 0.8.4 and 0.8.5): the pool
    # and concurrency calls sit where 0.8.4-0.8.5.post1 (and, for :637, up to 0.9.0.1)
    # have them; the model-loading call sits where only 0.7.3 has it. No release
    # explains all three, two agree: the build lies within 0.7.3-0.9.0.1.
    log = (
        "INFO 04-24 16:33:00 [gpu_model_runner.py:1316] Model loading took 14.9889 GiB "
        "and 3.652170 seconds\n"
        "INFO 04-24 16:33:13 [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens\n"
        "INFO 04-24 16:33:13 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens "
        "per request: 4.84x\n"
    )
    (boot,) = _boots(log)
    found = version_range(boot)
    assert found is not None and found.is_weighed
    assert (found.lowest, found.highest) == ("0.7.3", "0.9.0.1")
    assert "0.8.4" in found.releases and "0.8.5" in found.releases
