"""The window acts on the decision of what a node is shown as (``viewing.decision``), the one
``zarrview export`` prints: the same refusal in the same words, the same first view. The decision
itself is tested without Qt in ``tests/viewing/test_decision.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import zarrview.zarrlib as zl
from _window_helpers import click
from decision_stores import decision_stores
from test_app import _settle, window  # noqa: F401  (the window fixture)
from zarrview.app.window import MainWindow
from zarrview.cli import main
from zarrview.viewing.decision import Kind, decide


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return decision_stores(tmp_path_factory.mktemp("decision"))


def _export_says(capsys: pytest.CaptureFixture[str], tmp_path: Path, location: str, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["export", location, *args, "-o", str(tmp_path / "p.npy")])
    return code, capsys.readouterr().err.strip().splitlines()[0]


@pytest.mark.parametrize("name,plane,level,flags,code", [
    ("broken image", None, None, (), 1),
    ("vol", {0: 9}, None, ("--slice", "9,:,:"), 2),
    ("vol", None, 1, ("--level", "1"), 2),
    ("image", {0: 4}, None, ("--slice", "4,:,:"), 2),
    ("image", None, 5, ("--level", "5"), 2),
    ("pyramid", {0: 2}, None, ("--slice", "2,:,:"), 2),
])
def test_the_window_and_export_refuse_in_the_decisions_words(
        qtbot: Any, window: MainWindow, stores: dict[str, str], tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str], name: str, plane: dict[int, int] | None, level: int | None,
        flags: tuple[str, ...], code: int) -> None:
    location = stores[name]
    shown = decide(zl.open(location), plane, level)
    refused = shown.refused
    assert refused is not None
    window.data.pending_level = level  # as --level is handed to the window
    window.open_location(location, plane=plane)
    _settle(qtbot, window)
    assert window.data.problem == refused.window
    assert window.data.message.text() == refused.window
    if refused.request is not None and refused.request == "--slice" or shown.kind is Kind.PLANE:
        assert window.status_label.text() == refused.window  # a request that names nothing is said there too
    assert window.data.pending_level is None if refused.spends_level else window.data.pending_level == level
    said, first_line = _export_says(capsys, tmp_path, location, *flags)
    assert (said, first_line) == (code, f"zarrview: {refused.text}")


def test_a_plain_group_is_the_same_group_to_both(qtbot: Any, window: MainWindow, stores: dict[str, str],  # noqa: F811
                                                 tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shown = decide(zl.open(stores["sub"]))
    assert shown.kind is Kind.GROUP and shown.refused is not None
    window.open_location(stores["sub"])
    _settle(qtbot, window)
    assert window.data.message.text() == shown.message and window.data.problem is None
    assert _export_says(capsys, tmp_path, stores["sub"]) == (1, f"zarrview: {shown.refused.text}")


def test_an_unreadable_node_shows_its_error(qtbot: Any, window: MainWindow, stores: dict[str, str]) -> None:  # noqa: F811
    root = stores["bad"].split("::")[0]
    bad = next(m for m in zl.open(root).members() if m.name == "bad")  # type: ignore[attr-defined]
    shown = decide(bad)
    assert shown.kind is Kind.ERROR and shown.refused is not None
    window.open_location(root)
    _settle(qtbot, window)
    click(qtbot, window, "bad")
    assert window.data.problem == shown.refused.window


@pytest.mark.parametrize("name", ["vol", "xy", "image", "label image", "pyramid", "image without level 0"])
def test_the_window_draws_the_decisions_first_view(qtbot: Any, window: MainWindow, stores: dict[str, str],  # noqa: F811
                                                  name: str) -> None:
    shown = decide(zl.open(stores[name]))
    assert shown.refused is None and shown.state is not None and shown.array is not None
    window.open_location(stores[name])
    _settle(qtbot, window)
    state = window.data.state
    assert state is not None and window.data.problem is None
    assert (state.y_dim, state.x_dim) == (shown.state.y_dim, shown.state.x_dim)
    assert state.array.shape == shown.array.shape and state.array.path == shown.array.path
    assert state.indices == shown.state.indices


def test_the_window_exports_what_export_writes_where_level_0_is_unreadable(
        qtbot: Any, window: MainWindow, stores: dict[str, str], tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """The window shows the finest readable level, and its Export writes the plane ``zarrview
    export`` writes: both level 1's."""
    import numpy as np

    from zarrview.viewing.export.plane import export_plane

    location = stores["image without level 0"]
    window.open_location(location)
    _settle(qtbot, window)
    spec = window.data.plane_spec()
    assert window.data.problem is None and spec is not None and spec.array.path == "/1"
    export_plane(spec, tmp_path / "window.npy")
    assert main(["export", location, "-o", str(tmp_path / "cli.npy")]) == 0
    assert "writing level 1" in capsys.readouterr().err
    np.testing.assert_array_equal(np.load(tmp_path / "window.npy"), np.load(tmp_path / "cli.npy"))
