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
from typing import TypedDict

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


class _GpuRow(TypedDict):
    """One row of data/gpus.json."""

    total_gib: float
    source: str


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, _GpuRow], dict[str, str]]:
    # Beside this module in every install, like data/models.json.
    text = (Path(__file__).resolve().parent.parent / "data" / "gpus.json").read_text(
        encoding="utf-8"
    )
    data = json.loads(text)
    return data["gpus"], data["aliases"]


#: Words of a product name that do not tell cards apart: the vendor and family
#: (nvidia-smi's ``NVIDIA H100 80GB HBM3``, ROCm's ``AMD Instinct MI300X``,
#: ``Intel(R) Data Center GPU Max 1550``) and the memory type or form factor,
#: which the table's rows do not carry (an H100 SXM5 and PCIe both have 80 GB).
#: ``NVL`` stays: an H100 NVL has 94 GB, not an H100's 80.
_NOISE = re.compile(
    r"(?i)(?<![a-z0-9])(nvidia|geforce|tesla|amd|radeon|instinct|intel(\((r|tm)\))?|habana|"
    r"data\s+center\s+gpu|hbm\d?e?|pcie|sxm\d?|oam)(?![a-z0-9])"
)


def _key(name: str) -> str:
    """``"nvidia h100 80gb hbm3"`` -> ``"H10080GB"``: case, spaces, dashes, the
    vendor and the memory type dropped.

    >>> _key("NVIDIA GeForce RTX 4090"), _key("h100-80gb"), _key("NVIDIA H100 80GB HBM3")
    ('RTX4090', 'H10080GB', 'H10080GB')
    >>> _key("AMD Instinct MI300X"), _key("Intel(R) Data Center GPU Max 1550")
    ('MI300X', 'MAX1550')
    """
    name = _NOISE.sub("", name)
    return re.sub(r"[\s_\-]", "", name).upper()


def gpu_names() -> list[str]:
    """The table's card names, largest memory first."""
    gpus, _ = _table()
    return sorted(gpus, key=lambda n: -float(gpus[n]["total_gib"]))


def _rows() -> dict[str, str]:
    """Every spelling's key -> the table's row name."""
    gpus, aliases = _table()
    rows = {_key(k): k for k in gpus}
    rows.update({_key(a): t for a, t in aliases.items()})
    return rows


def close_gpu_names(name: str) -> list[str]:
    """The table's rows whose names are close to ``name`` (difflib), best first.

    >>> close_gpu_names("MI300A")
    ['MI300X', 'RTX3090']
    """
    import difflib

    rows = _rows()
    hits = difflib.get_close_matches(_key(name), list(rows), n=6, cutoff=0.6)
    return list(dict.fromkeys(rows[h] for h in hits))[:3]


def find_gpu(name: str) -> Gpu:
    """The table's row for ``name`` (``H100-80GB``, ``h100``, ``NVIDIA L4``,
    ``NVIDIA H100 80GB HBM3``, ``AMD Instinct MI300X``...).

    Raises:
        UsageError: the name is not in the table (the message says which rows
            are close, how to list them, and how to give any card's memory).

    >>> find_gpu("h100").total_gib, find_gpu("L4").name, find_gpu("NVIDIA A100-SXM4-40GB").name
    (79.19, 'L4', 'A100-40GB')
    """
    gpus, _ = _table()
    key = _rows().get(_key(name))
    if key is None:
        close = close_gpu_names(name)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise UsageError(
            f"GPU {name!r} is not in the table; {hint}(vllm-logread kv --list-gpus lists "
            "them). For any card give its memory instead: --gpu-memory-gib N (in --what-if, "
            "gpu_memory_gib=N), N the total the driver reports (vLLM's total_gpu_memory)"
        )
    row = gpus[key]
    return Gpu(name=key, total_gib=float(row["total_gib"]), source=str(row["source"]))


#: The most memory a card given by its size may have (``--gpu-memory-gib``,
#: ``--what-if gpu_memory_gib=N``): far above any GPU (the table's largest has
#: a few hundred GiB), low enough that its bytes stay a finite float (1e308 GiB
#: x 2**30 B is inf, which no pool arithmetic survives).
MAX_GPU_GIB = 100_000.0


def gpu_of_memory(total_gib: float) -> Gpu:
    """A card the table need not know, by the memory given (``--gpu-memory-gib``).

    >>> gpu_of_memory(94).name
    'a 94 GiB GPU'

    Raises:
        UsageError: not a number of GiB above 0 and below MAX_GPU_GIB (nan, inf).
    """
    if not 0 < total_gib < MAX_GPU_GIB:  # False for nan too
        raise UsageError(
            f"--gpu-memory-gib {total_gib:g}: give the card's memory in GiB, above 0 and "
            f"below {MAX_GPU_GIB:,.0f}"
        )
    return Gpu(
        name=f"a {total_gib:g} GiB GPU", total_gib=float(total_gib), source="--gpu-memory-gib"
    )


def all_gpus() -> list[Gpu]:
    """Every row, largest memory first."""
    return [find_gpu(n) for n in gpu_names()]
