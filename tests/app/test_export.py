"""Exported slices hold exactly the values shown (read back with numpy and the csv module)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from zarrview.app.export import save_csv, save_npy


def test_npy_round_trip(tmp_path: Path) -> None:
    data = np.arange(12, dtype=">i4").reshape(3, 4)
    save_npy(data, tmp_path / "a.npy")
    back = np.load(tmp_path / "a.npy")
    assert back.dtype == data.dtype
    np.testing.assert_array_equal(back, data)


def test_csv_numbers_are_exact(tmp_path: Path) -> None:
    data = np.array([[0.1, 1e-300], [np.nan, -2.5]], dtype="f8")
    save_csv(data, tmp_path / "a.csv")
    rows = list(csv.reader(open(tmp_path / "a.csv", encoding="utf-8")))
    np.testing.assert_array_equal(np.array(rows, dtype="f8"), data)


def test_csv_strings_and_records(tmp_path: Path) -> None:
    save_csv(np.array(["São Paulo", "a,b", 'quote"d'], dtype=object), tmp_path / "s.csv")
    assert [r[0] for r in csv.reader(open(tmp_path / "s.csv", encoding="utf-8"))] == ["São Paulo", "a,b", 'quote"d']
    rec = np.array([(1, 2.5), (3, 4.0)], dtype=[("id", "i4"), ("v", "f8")])
    save_csv(rec, tmp_path / "r.csv")
    rows = list(csv.reader(open(tmp_path / "r.csv", encoding="utf-8")))
    assert rows == [["id", "v"], ["1", "2.5"], ["3", "4.0"]]
