"""Reference sets in the window: two open at once, a dropped ``.json`` and Parquet folder, the
row named after the reference file, and the question to allow a prefix outside the set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from test_app import _settle, window  # noqa: F401
from zarrview.app.access_prompt import SETTINGS_KEY
from zarrview.app.window import MainWindow

pytest.importorskip("kerchunk")
pytest.importorskip("h5py")

from _window_helpers import click, drop  # noqa: E402
from reference_sets import kerchunk_json, kerchunk_parquet, truth, write_hdf5  # noqa: E402
from drawn import drawn


@pytest.fixture(scope="module")
def refs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("apprefs")
    h5 = write_hdf5(root / "data.h5")
    doc = kerchunk_json(h5, root / "a.json")
    kerchunk_json(h5, root / "b.json", inline=200)
    kerchunk_parquet(doc, root / "c.parq")
    (root / "away").mkdir()
    (root / "away" / "far.json").write_text(json.dumps(doc))  # targets in the folder above it
    return root


def top_names(w: MainWindow) -> list[str]:
    return [w.model.data(w.model.index(r, 0)) for r in range(w.model.rowCount())]


def drawn_when_in(qtbot: Any, window: MainWindow, expected: np.ndarray, kind: str | None = "f") -> np.ndarray:
    """The image drawn once the clicked node's plane is in (its shape and, given ``kind``, its
    values' kind): on a loaded machine the image item still holds the node before, or none,
    when the click returns."""
    def shown() -> bool:
        plane = drawn(window.data)
        return plane is not None and plane.shape == expected.shape and (kind is None or plane.dtype.kind == kind)

    qtbot.waitUntil(shown, timeout=60_000)
    plane = drawn(window.data)
    assert plane is not None
    return plane


def test_two_reference_stores_open_at_once(qtbot, window: MainWindow, refs: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location("reference://", fo=str(refs / "a.json"))
    window.open_location("reference://", fo=str(refs / "b.json"))  # while the first is opening
    _settle(qtbot, window)
    assert sorted(top_names(window)) == ["a.json", "b.json"]
    click(qtbot, window, "temp")
    np.testing.assert_array_equal(drawn_when_in(qtbot, window, truth(refs / "data.h5", "temp")),
                                  truth(refs / "data.h5", "temp"))
    window.open_location(f"reference::{refs}/a.json")  # the same set, spelled otherwise: open already
    _settle(qtbot, window)
    assert sorted(top_names(window)) == ["a.json", "b.json"] and "open already" in window.status_label.text()


def test_dropped_reference_files_open_as_references(qtbot, window: MainWindow, refs: Path) -> None:  # type: ignore[no-untyped-def]
    drop(qtbot, window, refs / "a.json")
    drop(qtbot, window, refs / "c.parq")
    assert top_names(window) == ["a.json", "c.parq"]
    click(qtbot, window, "temp")  # in c.parq, the last store: real values, not the fill value
    expected = truth(refs / "data.h5", "temp")
    plane = drawn_when_in(qtbot, window, expected)
    assert not np.isnan(plane).any()
    np.testing.assert_array_equal(plane, expected)


def test_refused_reads_ask_and_remember(qtbot, window: MainWindow, refs: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    asked: list[tuple[str, str]] = []

    def answer(parent, name: str, prefix: str) -> tuple[bool, bool]:  # type: ignore[no-untyped-def]
        asked.append((name, prefix))
        return True, True

    monkeypatch.setattr(window.access, "question", answer)
    window.open_location(f"reference::{refs}/away/far.json::/temp")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: bool(asked), timeout=10000)
    _settle(qtbot, window)
    assert asked == [("far.json", f"file://{refs}/")]
    qtbot.waitUntil(lambda: not np.isnan(drawn(window.data)).all(), timeout=10000)
    np.testing.assert_array_equal(drawn(window.data), truth(refs / "data.h5", "temp"))
    assert QSettings().value(SETTINGS_KEY) in ([f"file://{refs}/"], f"file://{refs}/")
    # opened again (another window, a later session): allowed at once, no question
    window.model.remove_top(0)
    asked.clear()
    window.open_location(f"reference::{refs}/away/far.json::/counts")
    _settle(qtbot, window)
    assert asked == []
    np.testing.assert_array_equal(drawn(window.data), truth(refs / "data.h5", "counts"))


def test_a_refusal_stands_and_leaves_the_window_working(qtbot, window: MainWindow, refs: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    asked: list[str] = []
    monkeypatch.setattr(window.access, "question", lambda parent, name, prefix: (asked.append(prefix), (False, False))[1])
    window.open_location(f"reference::{refs}/away/far.json::/temp")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: bool(asked), timeout=10000)
    _settle(qtbot, window)
    window.data.request_plane()  # read again: refused again, not asked again
    _settle(qtbot, window)
    assert len(asked) == 1
    assert "not authorised" in window.status_label.text() or window.data.scene.tiles()
    assert QSettings().value(SETTINGS_KEY) in (None, [], "")


def test_file_open_references_dialog(qtbot, window: MainWindow, refs: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QFileDialog

    picked = iter([str(refs / "b.json"), str(refs / "c.parq" / ".zmetadata")])  # a Parquet set by its .zmetadata
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (next(picked), ""))
    action = next(a for a in window.menuBar().actions()[0].menu().actions() if a.text().startswith("Open &References"))
    action.trigger()
    _settle(qtbot, window)
    action.trigger()
    _settle(qtbot, window)
    assert top_names(window) == ["b.json", "c.parq"]
    click(qtbot, window, "counts")
    counts = truth(refs / "data.h5", "counts")
    np.testing.assert_array_equal(drawn_when_in(qtbot, window, counts, kind=None), counts)


def test_app_command_line_spelling(qtbot, window: MainWindow, refs: Path) -> None:  # type: ignore[no-untyped-def]
    from zarrview.app.main import parse_args

    args = parse_args([f"reference::file://{refs}/c.parq::/grp/deep"])
    window.open_location(args.location)
    _settle(qtbot, window)
    assert top_names(window) == ["c.parq"]
    assert window.data.array is not None and window.data.array.path == "/grp/deep"


def test_a_table_asks_too_and_shows_the_values_once_allowed(qtbot, window: MainWindow, refs: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    asked: list[str] = []
    monkeypatch.setattr(window.access, "question", lambda parent, name, prefix: (asked.append(prefix), (True, False))[1])
    window.open_location(f"reference::{refs}/away/far.json::/names")  # fixed-length strings: a table
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: bool(asked), timeout=10000)
    assert asked == [f"file://{refs}/"]
    want = [v.decode() for v in truth(refs / "data.h5", "names")]

    def shown() -> list[str]:
        model = window.data.table.model()
        return [] if model is None else [str(model.data(model.index(r, 0))) for r in range(model.rowCount())]

    qtbot.waitUntil(lambda: shown() == want, timeout=10000)
