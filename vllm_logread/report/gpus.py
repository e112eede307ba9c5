"""GPU memory by card name: the table behind ``--what-if gpu=NAME`` and ``--gpu NAME``.

The figures are what the CUDA driver reports as total memory, the number vLLM
multiplies by ``gpu_memory_utilization`` (``total_gpu_memory (79.19GiB) x
gpu_memory_utilization (0.90) = 71.27GiB`` on an H100 80GB), not the card's
marketed size: the driver keeps some for itself. Each row says where its
figure comes from (data/gpus.json).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import UsageError


@dataclass(frozen=True, slots=True, kw_only=True)
class Gpu:
    """One card: its name in the table, the memory CUDA reports, and the source."""

    name: str
    total_gib: float
    source: str

    @property
    def is_estimate(self) -> bool:
        """True when the figure is not read from a vLLM log."""
        return self.source.startswith("estimate")


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, Any], dict[str, str]]:
    # Beside this module in every install, like data/models.json.
    text = (Path(__file__).resolve().parent.parent / "data" / "gpus.json").read_text(
        encoding="utf-8"
    )
    data = json.loads(text)
    return data["gpus"], data["aliases"]


def _key(name: str) -> str:
    """``"nvidia h100 80gb"`` -> ``"H10080GB"``: case, spaces, dashes and the vendor dropped.

    >>> _key("NVIDIA GeForce RTX 4090"), _key("h100-80gb")
    ('RTX4090', 'H10080GB')
    """
    name = re.sub(r"(?i)\b(nvidia|geforce|tesla)\b", "", name)
    return re.sub(r"[\s_\-]", "", name).upper()


def gpu_names() -> list[str]:
    """The table's card names, largest memory first."""
    gpus, _ = _table()
    return sorted(gpus, key=lambda n: -float(gpus[n]["total_gib"]))


def find_gpu(name: str) -> Gpu:
    """The table's row for ``name`` (``H100-80GB``, ``h100``, ``NVIDIA L4``...).

    Raises:
        UsageError: the name is not in the table (the message lists the names).

    >>> find_gpu("h100").total_gib, find_gpu("L4").name
    (79.19, 'L4')
    """
    gpus, aliases = _table()
    wanted = _key(name)
    rows = {_key(k): k for k in gpus}
    rows.update({_key(a): t for a, t in aliases.items()})
    key = rows.get(wanted)
    if key is None:
        raise UsageError(
            f"GPU {name!r} is not in the table ({', '.join(gpu_names())}); "
            "use gpu_memory_gib=N with the total memory CUDA reports for it"
        )
    row = gpus[key]
    return Gpu(name=key, total_gib=float(row["total_gib"]), source=str(row["source"]))


def all_gpus() -> list[Gpu]:
    """Every row, largest memory first."""
    return [find_gpu(n) for n in gpu_names()]
