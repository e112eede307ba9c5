#!/usr/bin/env python3
"""Generate vllm_logread/data/fingerprint.json from every vLLM release on PyPI.

Why: a pasted log rarely keeps its version line, but its headers name the
logger call that printed each line (``[kv_cache_utils.py:716]``) and its tags
name the processes (``(EngineCore_DP0 pid=7)``); which releases have a logger
call at that file and line, and name processes so, is a fact of each
release's source. This script reads every release's source and keeps only
those facts (no vLLM code): docs/fingerprint.md.

    python tools/fingerprint.py build      # all releases FIRST..LAST: fetch, read, write the table
    python tools/fingerprint.py build --last 0.35.0    # after a new release
    python tools/fingerprint.py fetch      # only download (network), e.g. ahead of a build

Each release is fetched once into --scratch (default /work/scratch/vllm-src,
outside the repository): pip downloads its wheel (vLLM's sdists cannot be
downloaded without building them: pip prepares an sdist's metadata by
running its build, which pulls torch; the wheel holds the same .py files),
the vllm/**/*.py files are copied into a small zip and the wheel is deleted
(about 400 MB each for the newest releases; 2 to 14 MB kept). Each release's
facts are cached beside it (facts.json), so a rebuild after a new release
reads only the new one. About 30 s a release on this machine, mostly download.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCRATCH = Path("/work/scratch/vllm-src")
FIRST, LAST = "0.2.0", "0.34.0"
PLATFORMS = (
    "manylinux1_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_24_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux_2_31_x86_64",
    "manylinux_2_35_x86_64",
)
# How vLLM names its processes in the log's tags, by shape (numbers as N), and
# the text a release's source must hold to name a process so: any one of them.
# The shortest text that forms the name, so that no release that prints the
# label is missed (a release with the text but no tag is only a wider range).
LABELS: dict[str, tuple[str, ...]] = {
    "VllmWorkerProcess": ("VllmWorkerProcess",),
    "VllmWorker rank=N": ("VllmWorker rank=",),
    # 0.10.1: "VllmWorker" and the worker's ranks ("VllmWorker TP0", "VllmWorker PP0_TP1").
    "VllmWorker TPN": ('process_name = "VllmWorker"',),
    "VllmWorker PPN": ('process_name = "VllmWorker"',),
    "VllmWorker PPN_TPN": ('process_name = "VllmWorker"',),
    "VllmWorker-N": ("VllmWorker-",),
    "EngineCore": ('"EngineCore"',),
    "EngineCore_N": ("EngineCore_",),
    "EngineCore_DPN": ("EngineCore_DP",),
    "APIServer": ('"APIServer"',),
    "APIServer_DPN": ("APIServer_DP",),
    "DPCoordinator": ('"DPCoordinator"',),
    "RayWorkerWrapper": ("RayWorkerWrapper",),
    "Worker": ('"Worker")', 'name="Worker"', 'process_name = "Worker"'),
    # Worker_DPN_PPN_TPN...: the prefix, then each part where the release adds it.
    "Worker_": ('process_name = "Worker"', '"Worker_', 'f"Worker_'),
    "Worker_DP": ("_DP{",),
    "Worker_PP": ("_PP{",),
    "Worker_TP": ("_TP{",),
    "Worker_PCP": ("_PCP{",),
    "Worker_DCP": ("_DCP{",),
    "Worker_EP": ("_EP{",),
}
# The line kinds (read/patterns.py rows) whose wordings the table keeps: the lines
# the report's figures come from.
WORDING_ROWS = frozenset(
    {
        "version",
        "engine_config",
        "non_default_args",
        "max_model_len",
        "platform",
        "weights",
        "starting_to_load",
        "v0_profile_oneline",
        "v0_profile_total",
        "v0_profile_split",
        "v1_profile_debug",
        "profile_tabular",
        "available_kv",
        "free_memory_summary",
        "blocks",
        "cpu_backend_blocks",
        "pool_tokens",
        "max_concurrency",
        "cache_config_info",
        "kv_group_sizes",
        "kv_lcm_block_size",
        "too_small_v0",
        "too_small_v1",
        "cpu_kvcache_space",
        "chunked_prefill_batch",
        "graph_capture",
        "engine_ready",
        "stats",
    }
)
PYTHONS = ("3.12", "3.11", "3.10", "3.9", "3.8")


def version_key(version: str) -> tuple[int, ...]:
    """Sort key of a release: ``0.6.1.post2`` -> (0, 6, 1, 0, 2).

    >>> version_key("0.6.1.post2") > version_key("0.6.1") > version_key("0.6.0")
    True
    >>> version_key("0.10.1.1") > version_key("0.10.1.post1")
    True
    """
    main, _, post = version.partition(".post")
    parts = [int(p) for p in main.split(".")]
    parts += [0] * (4 - len(parts))
    return (*parts, int(post) if post else 0)


def pypi_releases(first: str, last: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "vllm"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"Available versions: (.*)", out)
    assert match, out
    found = [v.strip() for v in match.group(1).split(",")]
    keep = [v for v in found if version_key(first) <= version_key(v) <= version_key(last)]
    return sorted(keep, key=version_key)


def slim_path(version: str, scratch: Path) -> Path:
    return scratch / version / f"vllm-{version}-py.zip"


def fetch(version: str, scratch: Path) -> Path:
    """The release's vllm/**/*.py in a small zip (the wheel is deleted once read)."""
    slim = slim_path(version, scratch)
    if slim.exists():
        return slim
    folder = scratch / version / "dl"
    folder.mkdir(parents=True, exist_ok=True)
    for python in PYTHONS:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--python-version",
            python,
            "-d",
            str(folder),
            f"vllm=={version}",
        ]
        for platform in PLATFORMS:
            cmd += ["--platform", platform]
        if subprocess.run(cmd, capture_output=True, text=True).returncode == 0:
            break
    wheels = list(folder.glob("*.whl"))
    if not wheels:
        raise SystemExit(f"no wheel of vllm=={version}")
    tmp = slim.with_suffix(".tmp")
    with zipfile.ZipFile(wheels[0]) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            if name.startswith("vllm/") and name.endswith(".py"):
                dst.writestr(name, src.read(name))
        dst.writestr("WHEEL_NAME", wheels[0].name)
    tmp.rename(slim)
    shutil.rmtree(folder)
    return slim


# ---------------------------------------------------------------------------
# extract: one release's facts (its logger calls, their wordings, its labels)

LOG_METHODS = frozenset(
    {
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "fatal",
        "log",
        "info_once",
        "warning_once",
        "debug_once",
        "error_once",
    }
)
# The names vLLM's modules log through: "lgr" is the logger that
# entrypoints/utils.py's log_version_and_model is handed (the logo and version
# lines, 0.12+).
LOGGER_NAMES = frozenset({"logger", "_logger", "LOGGER", "log", "_log", "lgr"})
# vLLM's own helpers that print through a logger (vllm/utils.py, 0.4-0.6).
PRINT_HELPERS = frozenset({"print_warning_once", "print_info_once", "print_error_once"})
_CALL_RX = re.compile(
    r"\b(?:self\.)?(?:_?logger|LOGGER|_?log|lgr)\.(?:" + "|".join(sorted(LOG_METHODS)) + r")\("
    r"|\b(?:" + "|".join(sorted(PRINT_HELPERS)) + r")\("
)


def _is_logger(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in LOGGER_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in LOGGER_NAMES or node.attr.endswith("logger")
    return False


def _template(node: ast.expr | None) -> str:
    """A call's message as text, with every value it formats in as ``{}``."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.sub(r"%[-+ #0-9.]*[sdifrxXeEgGc%]", "{}", node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left = _template(node.left)
        return left + _template(node.right) if isinstance(node.op, ast.Add) else left
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    ):
        return re.sub(r"\{[^{}]*\}", "{}", _template(node.func.value))
    return "{}"


def calls_in_source(text: str, *, exact: bool = True) -> list[tuple[int, int, str]]:
    """(first line, last line, message template) of every logger call in a module;
    ``exact=False`` finds them in the text (8x faster, the same first lines: see
    ``_calls_by_regex``).

    >>> calls_in_source('import x\\nlogger.info(\\n    "took %.2f s", t)\\nprint(1)\\n')
    [(2, 3, 'took {} s')]
    """
    if not _CALL_RX.search(text):
        return []  # (three modules in four)
    if not exact:
        return _calls_by_regex(text)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return _calls_by_regex(text)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in LOG_METHODS and _is_logger(func.value):
            args = node.args[1:] if func.attr == "log" else node.args
        elif isinstance(func, ast.Name) and func.id in PRINT_HELPERS:
            args = node.args
        else:
            continue
        first = args[0] if args else None
        end = node.end_lineno or node.lineno
        out.append((node.lineno, end, _template(first)))
    return sorted(out)


def _calls_by_regex(text: str) -> list[tuple[int, int, str]]:
    """The same from the text, for a module newer than this Python's parser or
    without a line the tool reads: the call's lines run to its closing
    parenthesis (strings are not parsed: a parenthesis inside a message may end
    it early). On vLLM 0.32.0 this finds the same 3,309 calls as the parser,
    at the same first lines, and 3,308 of their last lines; the templates are
    rougher (the quoted strings of the call, joined), so modules with a line
    the tool reads are parsed.

    >>> _calls_by_regex('x = 1\\nlogger.warning("a %s b",\\n  y)\\n')
    [(2, 3, 'a {} b')]
    """
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _CALL_RX.search(line)
        if m is None or line.lstrip().startswith("#"):
            continue
        depth, j, k = 0, i, m.end() - 1
        while j < len(lines) and j < i + 40:
            for ch in lines[j][k:]:
                depth += (ch == "(") - (ch == ")")
                if depth == 0:
                    break
            if depth == 0:
                break
            j, k = j + 1, 0
        quoted = re.findall(r'"([^"]*)"', "\n".join(lines[i : j + 1]))
        out.append((i + 1, j + 1, re.sub(r"\{[^{}]*\}|%[-+ #0-9.]*[sdifr]", "{}", "".join(quoted))))
    return out


def _wording_markers() -> list[str]:
    """The markers of the line kinds whose wordings the table keeps."""
    sys.path.insert(0, str(REPO))
    from vllm_logread.read.patterns import ROWS

    return [mk for row in ROWS if row.name in WORDING_ROWS for mk in row.markers]


def read_texts(version: str, scratch: Path) -> tuple[set[str], set[str]]:
    """Which texts of LABELS the release's source holds, and the base names of
    its modules that hold a marker of a line kind in WORDING_ROWS (the modules
    that print the lines a boot's figures come from). Read at each build: LABELS
    and the patterns table may grow without reading every release's calls again."""
    wanted = {n for alternatives in LABELS.values() for n in alternatives}
    markers = _wording_markers()
    found: set[str] = set()
    files: set[str] = set()
    with zipfile.ZipFile(fetch(version, scratch)) as z:
        for name in z.namelist():
            if name.startswith("vllm/") and name.endswith(".py"):
                text = z.read(name).decode("utf-8", errors="replace")
                found |= {n for n in wanted - found if n in text}
                if any(mk in text for mk in markers):
                    files.add(name.rsplit("/", 1)[-1])
    return found, files


def extract(version: str, scratch: Path) -> dict[str, Any]:
    """One release's logger calls, cached beside its archive: [base name,
    first line, last line, template] each."""
    cache = scratch / version / "facts.json"
    facts: dict[str, Any] = json.loads(cache.read_text()) if cache.exists() else {}
    names = sorted(LOGGER_NAMES)
    if facts.get("logger_names") == names:
        return facts
    # A cache made with fewer logger names: read again only the modules that use
    # a name it lacked (the calls only grow).
    had = facts.get("logger_names", ["LOGGER", "_log", "_logger", "log", "logger"])
    new_names = [n for n in names if n not in had]
    calls: list[tuple[str, int, int, str]] = [tuple(c) for c in facts.get("calls", [])]
    known = set(calls)
    markers = _wording_markers()
    with zipfile.ZipFile(fetch(version, scratch)) as z:
        for name in sorted(z.namelist()):
            if not (name.startswith("vllm/") and name.endswith(".py")):
                continue
            text = z.read(name).decode("utf-8", errors="replace")
            if facts and not any(f"{n}." in text for n in new_names):
                continue
            base = name.rsplit("/", 1)[-1]
            exact = any(mk in text for mk in markers)
            for a, b, t in calls_in_source(text, exact=exact):
                if (base, a, b, t) not in known:
                    calls.append((base, a, b, t))
    facts = {"version": version, "logger_names": names, "calls": calls}
    cache.write_text(json.dumps(facts))
    return facts


def spans(indices: Iterable[int]) -> str:
    """Release indices as intervals: ``[0, 1, 2, 5]`` -> ``"0-2,5"``.

    >>> spans([5, 0, 1, 2]), spans([3])
    ('0-2,5', '3')
    """
    out: list[str] = []
    for i in sorted(set(indices)):
        if out and int(out[-1].rsplit("-", 1)[-1]) == i - 1:
            out[-1] = out[-1].split("-")[0] + f"-{i}"
        else:
            out.append(str(i))
    return ",".join(out)


def build(releases: list[str], scratch: Path, *, all_files: bool) -> dict[str, object]:
    """The table: the logger calls of every release (unless ``all_files``, only
    in the modules whose base name holds, in some release, a marker of a line
    kind in WORDING_ROWS: a boot keeps the call sites of the lines it reads, and
    a site in another module is then foreign and ignored, never misread), the
    wordings of those line kinds, and the process labels."""
    sys.path.insert(0, str(REPO))
    from vllm_logread.read.patterns import ROWS

    sites: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    wordings: dict[str, dict[tuple[str, str], set[int]]] = defaultdict(lambda: defaultdict(set))
    labels: dict[str, set[int]] = defaultdict(set)
    kept: set[str] = set()
    num_calls = 0
    for index, version in enumerate(releases):
        found, marker_files = read_texts(version, scratch)
        kept |= marker_files
        for label, wanted in LABELS.items():
            if any(n in found for n in wanted):
                labels[label].add(index)
        calls = extract(version, scratch)["calls"]
        assert isinstance(calls, list)
        num_calls += len(calls)
        for base, first, last, template in calls:
            key = str(first) if last == first else f"{first}-{last}"
            sites[base][key].add(index)
            for row in ROWS:
                if row.name in WORDING_ROWS and any(mk in template for mk in row.markers):
                    wordings[row.name][(template, f"{base}:{first}")].add(index)
    return {
        "about": "vLLM's logger calls, line wordings and process labels by release "
        "(docs/fingerprint.md); generated by tools/fingerprint.py, do not edit",
        "releases": releases,
        "num_calls": num_calls,
        "num_files": len(sites),
        "sites": {
            base: {
                key: spans(ix)
                for key, ix in sorted(keys.items(), key=lambda kv: _first_line(kv[0]))
            }
            for base, keys in sorted(sites.items())
            if all_files or base in kept
        },
        "wordings": {
            name: [
                [template, where, spans(ix)]
                for (template, where), ix in sorted(rows.items(), key=lambda kv: min(kv[1]))
            ]
            for name, rows in sorted(wordings.items())
        },
        "labels": {label: spans(ix) for label, ix in sorted(labels.items())},
    }


def _first_line(key: str) -> int:
    return int(key.split("-")[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "phase", choices=["fetch", "build"], help="fetch: download only; build: the table"
    )
    parser.add_argument("--first", default=FIRST)
    parser.add_argument("--last", default=LAST)
    parser.add_argument("--scratch", type=Path, default=SCRATCH)
    parser.add_argument(
        "--out", type=Path, default=REPO / "vllm_logread" / "data" / "fingerprint.json"
    )
    parser.add_argument(
        "--all-files", action="store_true", help="every module's calls (default: see build)"
    )
    args = parser.parse_args()
    releases = pypi_releases(args.first, args.last)
    print(len(releases), "releases", releases[0], "to", releases[-1], flush=True)
    for version in releases:
        started = time.monotonic()
        if args.phase == "fetch":
            fetch(version, args.scratch)
        else:
            extract(version, args.scratch)
        print(version, f"{time.monotonic() - started:.0f}s", flush=True)
    if args.phase == "build":
        table = build(releases, args.scratch, all_files=args.all_files)
        text = json.dumps(table, separators=(",", ":"), sort_keys=False) + "\n"
        args.out.write_text(text)
        print(f"{args.out}: {len(text):,} bytes", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
