"""``zarrview export STORE::/obs -o obs.csv`` and ``zarrview info`` on AnnData stores, against
anndata's own ``to_csv`` and attributes."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from anndata_stores import Written
from zarrview.cli import main


@pytest.mark.parametrize("which", ["anndata_v3", "anndata_v2"])
@pytest.mark.parametrize("frame", ["obs", "var"])
def test_export_dataframe_csv(which: str, frame: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    written: Written = request.getfixturevalue(which)
    out = tmp_path / f"{frame}.csv"
    assert main(["export", f"{written.store}::/{frame}", "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as f:
        got = list(csv.reader(f))
    truth = written.csv_rows(frame)
    assert got[0] == truth[0]
    assert len(got) == len(truth) and got == truth


def test_export_dataframe_refuses_what_does_not_fit(anndata_v2: Written, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    store = anndata_v2.store
    assert main(["export", f"{store}::/obs", "-o", str(tmp_path / "obs.npy")]) == 2
    assert "/obs is an AnnData dataframe: write it to a .csv file" in capsys.readouterr().err
    assert main(["export", f"{store}::/obs", "--slice", "0", "-o", str(tmp_path / "obs.csv")]) == 2
    assert "--slice is not for a dataframe" in capsys.readouterr().err
    assert main(["export", f"{store}::/layers/counts", "-o", str(tmp_path / "c.csv")]) == 1
    assert "/layers/counts is a group (AnnData csr_matrix)" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_info_names_the_encoding(anndata_v3: Written, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", f"{anndata_v3.store}::/obs"]) == 0
    out = capsys.readouterr().out
    assert "AnnData encoding  dataframe 0.2.0 (a dataframe)" in out
    assert main(["info", f"{anndata_v3.store}"]) == 0
    assert "anndata 0.1.0 (an AnnData object)" in capsys.readouterr().out
