"""What `pip install` and a downstream packager get: the sdist and the wheel
built as CI builds them (`python -m build`: the sdist, then the wheel from the
sdist), the sdist holding what its tests and docs need, the wheel the package
with its data and the `vllm-logread` command, and the sdist's own tests running
from the unpacked sdist.

The whole unit suite from the sdist takes as long as the suite itself (2 to 4
minutes on the project's machine), so the sdist runs the README and docs tests
here: they run every documented command on the sample logs, so they need the
package, sample_logs and docs from the sdist, and nothing from the clone.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the test tools hold setuptools (pyproject's [test]); no index needed.
    r = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


def _sdist(dist: Path) -> tarfile.TarFile:
    (path,) = dist.glob("vllm_logread-*.tar.gz")
    return tarfile.open(path)


def test_the_sdist_holds_the_package_the_samples_the_tests_and_the_docs(dist: Path) -> None:
    with _sdist(dist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for want in (
        "vllm_logread/cli/commands.py",
        "vllm_logread/data/models.json",
        "vllm_logread/data/report.schema.json",
        "sample_logs/seed_qwen3-8b_l4.log",
        "tests/scenarios/test_docs.py",
        "tests/data/mix_seed.csv",
        "tests/real_vllm/NOTES.md",
        "docs/index.md",
        "docs/vllm-numbers.md",
        "mkdocs.yml",
        "README.md",
        "LICENSE",
        "run",
        ".ci/run",
    ):
        assert want in names, f"the sdist lacks {want}"
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    # Every docs page and sample log of the clone is in it.
    for folder in ("docs", "sample_logs"):
        for f in (ROOT / folder).iterdir():
            assert f"{folder}/{f.name}" in names, f"the sdist lacks {folder}/{f.name}"


def test_the_wheel_holds_the_package_its_data_and_the_command(dist: Path) -> None:
    (path,) = dist.glob("vllm_logread-*.whl")
    with zipfile.ZipFile(path) as whl:
        names = set(whl.namelist())
        entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        entry_points = whl.read(entry).decode()
        metadata = whl.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    for want in (
        "vllm_logread/cli/commands.py",
        "vllm_logread/py.typed",
        "vllm_logread/data/gpus.json",
    ):
        assert want in names
    for data in (ROOT / "vllm_logread" / "data").iterdir():
        assert f"vllm_logread/data/{data.name}" in names
    assert not any(n.startswith(("tests/", "sample_logs/", "docs/")) for n in names)
    assert "vllm-logread = vllm_logread.cli:main" in entry_points
    # A /metrics text needs no extra: prometheus-client is a plain dependency.
    requires = [
        line for line in metadata.decode().splitlines() if line.startswith("Requires-Dist:")
    ]
    plain = [r for r in requires if "extra ==" not in r]
    assert any("prometheus-client" in r for r in plain), requires
    assert not any(r.split()[1].startswith(("pytest", "mkdocs", "ruff")) for r in plain)
    # pandas is the [table] extra (the CSV is the csv module's), and no extra is empty.
    assert not any(r.split()[1].startswith(("pandas", "numpy")) for r in plain), requires
    extras = [
        line.split(":", 1)[1].strip()
        for line in metadata.decode().splitlines()
        if line.startswith("Provides-Extra:")
    ]
    assert set(extras) == {"table", "plot", "docs", "test"}
    for extra in extras:
        assert any(f'extra == "{extra}"' in r for r in requires), f"[{extra}] is empty"


def test_the_sdist_s_docs_tests_run_from_the_sdist(dist: Path, tmp_path: Path) -> None:
    with _sdist(dist) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+, 3.11.4+
            tar.extractall(tmp_path, filter="data")
        else:  # pragma: no cover - our own sdist, built a moment ago
            tar.extractall(tmp_path)
    (src,) = tmp_path.iterdir()
    # `python -m` puts the working folder first on sys.path: the sdist's own package
    # is the one imported, not the clone's editable install.
    where = subprocess.run(
        [sys.executable, "-c", "import vllm_logread; print(vllm_logread.__file__)"],
        cwd=src,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(src)
    r = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("tests/scenarios/test_readme.py", "tests/scenarios/test_docs.py"),
        ],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-3000:]
