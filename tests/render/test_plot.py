"""--plot: the capacity curve and the load panel, drawn from sample logs."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main
from vllm_logread.errors import UsageError
from vllm_logread.render import plot
from vllm_logread.render.plot import capacity_curve, check_available

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_logs" / "seed_qwen3-8b_l4.log"
LOAD = ROOT / "sample_logs" / "load_preempt_qwen3-8b_l4.log"

pytest.importorskip("matplotlib")


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    return width, height


def pixel_spread(path: Path) -> float:
    import matplotlib.image

    pixels = matplotlib.image.imread(str(path))
    return float(pixels[..., :3].std())


def test_capacity_plot_from_the_seed(tmp_path: Path) -> None:
    out = tmp_path / "capacity.png"
    r = run(str(SEED), "--plot", str(out))
    assert r.exit_code == 0, r.stderr
    assert png_size(out) == (1000, 600)  # one panel: 10 x 6 inches at 100 dpi
    assert pixel_spread(out) > 0.05  # not blank


def test_load_plot_from_a_log_with_stats_lines(tmp_path: Path) -> None:
    out = tmp_path / "load.png"
    r = run(str(LOAD), "--plot", str(out), "--format", "csv")
    assert r.exit_code == 0, r.stderr
    assert png_size(out) == (1000, 1000)  # two panels: 10 x 10 inches
    assert pixel_spread(out) > 0.05


def test_svg(tmp_path: Path) -> None:
    out = tmp_path / "capacity.svg"
    assert run(str(SEED), "--plot", str(out)).exit_code == 0
    assert out.read_text().lstrip().startswith("<?xml") and "<svg" in out.read_text()


def test_the_curve_passes_through_our_users_and_vllms_figure() -> None:
    from vllm_logread.kv.config import resolve_spec
    from vllm_logread.report.model import Options
    from vllm_logread.session.inputs import run
    from vllm_logread.session.session import Session

    session = Session(str(SEED), Options(), spec_resolver=resolve_spec)
    with SEED.open("rb") as fh:
        for _ in run(session, fh):
            pass
    report = session.report_for(session.last_boot)
    xs, ys = capacity_curve(report)
    curve = dict(zip(xs, ys, strict=True))
    assert curve[640] == 37  # 1,505 // 40
    assert curve[8192] == 2  # 1,505 // 512: vLLM's 2.94x is 1,506 / 512 unrounded
    assert xs[0] == 64 and xs[-1] == 8192


def test_a_bad_suffix_and_a_missing_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match=r"\.png or \.svg"):
        check_available("out.jpg")
    real = plot.importlib.util.find_spec

    def no_matplotlib(name: str, *args: Any) -> Any:
        return None if name == "matplotlib" else real(name, *args)

    monkeypatch.setattr(plot.importlib.util, "find_spec", no_matplotlib)
    with pytest.raises(UsageError, match=r"pip install 'vllm-logread\[plot\]'"):
        check_available("out.png")
    r = run(str(SEED), "--plot", "out.png")
    assert r.exit_code == 2 and "needs matplotlib" in r.stderr


def test_help_imports_neither_pandas_nor_matplotlib() -> None:
    code = (
        "import sys\n"
        "from vllm_logread.cli.commands import main\n"
        "for args in (['--help'], ['read', '--help']):\n"
        "    try:\n"
        "        main(args, prog_name='vllm-logread')\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "--what-if" in done.stdout and "--plot" in done.stdout


def test_the_capacity_axes_are_labelled_at_every_decade() -> None:
    from matplotlib.figure import Figure

    from vllm_logread.kv.config import resolve_spec
    from vllm_logread.report.model import Options
    from vllm_logread.session.session import Session

    session = Session(str(SEED), Options(), spec_resolver=resolve_spec)
    session.feed(SEED.read_bytes())
    list(session.finish())
    report = session.report_for(session.last_boot)
    fig = Figure()
    ax = fig.subplots()
    plot._draw_capacity(ax, [report])
    fig.canvas.draw()  # type: ignore[no-untyped-call]
    low, high = ax.get_ylim()
    labels = [t.get_text() for t in ax.get_yticklabels() if low <= t.get_position()[1] <= high]
    # Users run from 1 (a user of the whole pool) to thousands: 1, 10, 100, 1,000 ...
    assert labels[:3] == ["1", "10", "100"]
    assert all(label for label in labels)
    xs = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert "1,024" in xs and "16,384" in xs  # every power of two tokens
