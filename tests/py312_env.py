"""A Python 3.12 virtual environment for oracles that need a newer Python than zarrview's.

Icechunk 2.x runs on Python 3.12 and newer, while zarrview supports 3.11; tests that need
such an oracle run a script in a venv built here once and kept in a cache folder named by
its requirement list (``~/.cache/zarrview-tests/py312-<hash>``), so a second run costs
nothing. Where no 3.12 interpreter exists or the install fails, ``require`` skips the test
with the reason.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

#: the writers that resolve together, in one venv built once (a fresh CI builds each venv, so
#: one shared environment instead of six saves minutes): icechunk 2.3; zarr-python 3.4.2 (the
#: first release that writes rectilinear chunk grids) with pcodec, ml_dtypes and cast-value-rs
#: (its cast_value codec); geozarr-toolkit; anndata 0.13; VirtualiZarr with its HDF5 readers
ORACLES = ("icechunk==2.3.*", "zarr==3.4.2", "numpy", "h5py==3.16.*", "pcodec", "ml_dtypes", "cast-value-rs",
           "geozarr-toolkit==0.1.2", "anndata==0.13.4", "scipy", "pandas", "virtualizarr==2.8.*",
           "h5netcdf==1.8.*", "kerchunk==0.2.*", "fastparquet==2026.9.*")
ICECHUNK = ORACLES
ZARR_342 = ORACLES

CACHE = Path(os.environ.get("ZARRVIEW_TEST_CACHE", Path.home() / ".cache" / "zarrview-tests"))


def find_python312() -> str | None:
    """A 3.12 interpreter: pyenv's versions, ``python3.12`` on PATH, or uv's managed ones."""
    candidates = sorted(glob.glob(str(Path.home() / ".pyenv" / "versions" / "3.12*" / "bin" / "python3.12")),
                        reverse=True)
    on_path = shutil.which("python3.12")
    if on_path:
        candidates.append(on_path)
    candidates += sorted(glob.glob(str(Path.home() / ".local" / "share" / "uv" / "python" / "cpython-3.12*"
                                       / "bin" / "python3.12")), reverse=True)
    for exe in candidates:
        try:
            out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                                 capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == "True":
            return exe
    return None


def venv_python(requirements: Sequence[str], timeout: float = 420) -> str:
    """The venv's python with ``requirements`` installed (built once); raises RuntimeError
    with the reason where it cannot be built."""
    key = hashlib.sha256("\n".join(sorted(requirements)).encode()).hexdigest()[:16]
    folder = CACHE / f"py312-{key}"
    python = folder / "bin" / "python"
    done = folder / ".installed"
    if done.exists() and python.exists():
        return str(python)
    CACHE.mkdir(parents=True, exist_ok=True)
    # test workers running side by side build it once: the others wait for the first
    with open(CACHE / f"py312-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists() and python.exists():
            return str(python)
        return _build(requirements, folder, timeout)


def _build(requirements: Sequence[str], folder: Path, timeout: float) -> str:
    python = folder / "bin" / "python"
    base = find_python312()
    if base is None:
        raise RuntimeError("no Python 3.12 interpreter found (pyenv, python3.12 on PATH, uv)")
    building = folder.with_name(folder.name + f".building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    building.parent.mkdir(parents=True, exist_ok=True)
    steps = [[base, "-m", "venv", str(building)],
             [str(building / "bin" / "python"), "-m", "pip", "install", "-q", *requirements]]
    for step in steps:
        try:
            out = subprocess.run(step, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            shutil.rmtree(building, ignore_errors=True)
            raise RuntimeError(f"{' '.join(step[:4])} took more than {timeout:.0f} s") from None
        if out.returncode != 0:
            shutil.rmtree(building, ignore_errors=True)
            raise RuntimeError(f"{' '.join(step[:4])} failed: {(out.stderr or out.stdout)[-800:]}")
    (building / ".installed").write_text("\n".join(requirements))
    try:
        building.rename(folder)
    except OSError:  # another process finished first: use its venv
        shutil.rmtree(building, ignore_errors=True)
    return str(python)


def require(requirements: Sequence[str]) -> str:
    """``venv_python``, or skip the test with the reason."""
    try:
        return venv_python(requirements)
    except RuntimeError as e:
        pytest.skip(f"Python 3.12 oracle unavailable: {e}")


def run(python: str, script: Path | str, *args: str, timeout: float = 300) -> str:
    """Run ``script`` in the venv; its stdout, or AssertionError with its output on failure."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    out = subprocess.run([python, str(script), *args], capture_output=True, text=True, timeout=timeout, env=env)
    if out.returncode != 0:
        raise AssertionError(f"{script} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
    return out.stdout


__all__ = ["ICECHUNK", "ZARR_342", "find_python312", "venv_python", "require", "run"]
