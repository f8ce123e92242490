"""``zarrview tree``, ``info`` and ``export`` on reference sets, in every spelling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zarrview.cli import main

pytest.importorskip("kerchunk")
pytest.importorskip("h5py")

from reference_sets import kerchunk_json, kerchunk_parquet, truth, write_hdf5  # noqa: E402


@pytest.fixture(scope="module")
def refs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clirefs")
    h5 = write_hdf5(root / "data.h5")
    kerchunk_parquet(kerchunk_json(h5, root / "refs.json"), root / "refs.parq")
    return root


def locations(root: Path) -> list[str]:
    return [f"reference::{root}/refs.json", f"reference::file://{root}/refs.json", f"{root}/refs.json",
            f"reference::{root}/refs.parq", f"{root}/refs.parq"]


@pytest.mark.parametrize("index", range(5))
def test_tree_info_and_export(refs: Path, tmp_path: Path, index: int, capsys: pytest.CaptureFixture[str]) -> None:
    location = locations(refs)[index]
    assert main(["tree", location]) == 0
    tree = capsys.readouterr().out
    assert tree.splitlines()[0].startswith("reference::")
    for name in ("temp", "counts", "mask", "level", "scalar", "deep"):
        assert name in tree
    assert main(["info", f"{location}::/temp"]) == 0
    info = capsys.readouterr().out
    assert "40" in info and "30" in info and "float32" in info
    out = tmp_path / "p.npy"
    assert main(["export", f"{location}::/grp/deep", "--slice", "1,:,:", "-o", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), truth(refs / "data.h5", "grp/deep")[1])


def test_a_refused_target_is_one_line_naming_the_key(refs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    doc = json.loads((refs / "refs.json").read_text())
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "refs.json").write_text(json.dumps(doc))  # targets in another folder
    code = main(["export", f"reference::{tmp_path}/set/refs.json::/counts", "-o", str(tmp_path / "c.npy")])
    err = capsys.readouterr().err
    assert code == 1 and "counts/0.0" in err and "not authorised" in err
