"""AnnData stores written by anndata itself, in the Python 3.12 oracle venvs, with what anndata
reads back from each (``tests/viewing/anndata/anndata_writer.py``): anndata 0.13 writes Zarr v3
with sharding, anndata 0.12 Zarr v2. Session fixtures, registered in the root ``conftest.py`` so
that each is written once a test run; a test that needs one is skipped, with the reason, where no
3.12 oracle can be built."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import py312_env
from written_once import written_once

WRITER = Path(__file__).parent / "viewing" / "anndata_format" / "anndata_writer.py"
BASE = ("zarr==3.4.*", "numpy", "scipy", "pandas")
ANNDATA_013 = py312_env.ORACLES
ANNDATA_012 = ("anndata==0.12.19", *BASE)


@dataclass(frozen=True)
class Written:
    """A store anndata wrote (``store``) and anndata's own reads of it, beside it."""

    folder: Path
    expected: dict[str, Any]

    @property
    def store(self) -> Path:
        return self.folder / "adata.zarr"

    def csv_rows(self, name: str) -> list[list[str]]:
        with open(self.folder / f"{name}.csv", newline="", encoding="utf-8") as f:
            return list(csv.reader(f))

    def npy(self, name: str) -> np.ndarray:
        return np.load(self.folder / f"{name}.npy")


def write(out: Path, requirements: tuple[str, ...], n_obs: int, fmt: int, n_var: int, chunk: int) -> Written:
    python = py312_env.require(requirements)
    py312_env.run(python, WRITER, str(out), str(n_obs), str(fmt), str(n_var), str(chunk), timeout=600)
    return Written(out, json.loads((out / "expected.json").read_text()))


#: each store: the oracle, cells, Zarr format, genes, chunk length (0: anndata's own chunks and shards)
STORES: dict[str, tuple[tuple[str, ...], int, int, int, int]] = {
    "anndata_v3": (ANNDATA_013, 20_000, 3, 300, 1000),  # Zarr v3, chunks of 1,000 in shards of 4,000
    "anndata_v3_default": (ANNDATA_013, 1000, 3, 60, 0),  # what write_zarr does by itself
    "anndata_v2": (ANNDATA_012, 3000, 2, 40, 500),
    "anndata_million": (ANNDATA_013, 1_000_000, 3, 4, 50_000),  # shards of 200,000 cells
}


def _store_fixture(name: str) -> Any:
    @pytest.fixture(scope="session", name=name)
    def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
        out = written_once(tmp_path_factory, name, lambda folder: write(folder, *STORES[name]))
        return Written(out, json.loads((out / "expected.json").read_text()))

    return written


anndata_v3 = _store_fixture("anndata_v3")
anndata_v3_default = _store_fixture("anndata_v3_default")
anndata_v2 = _store_fixture("anndata_v2")
anndata_million = _store_fixture("anndata_million")
