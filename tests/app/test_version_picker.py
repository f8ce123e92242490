"""File ▸ Open Version on an Icechunk repository written by icechunk 2.3: the picker lists the
repository's own branches, tags and ancestry, and the version picked opens beside the first
with the values icechunk reads from it."""

from __future__ import annotations

import json

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QDialog  # noqa: E402

from icechunk_repos import repositories  # noqa: E402
import zarrview.zarrlib as zl  # noqa: E402
from test_app import _settle, store, window  # noqa: E402,F401
from zarrview.app.version_actions import pick_version  # noqa: E402
from zarrview.app.version_dialog import VersionDialog  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.versions import icechunk_store, version_rows  # noqa: E402
from drawn import drawn



@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return repositories(tmp_path_factory)


def _open(qtbot, w: MainWindow, location: str, **options: Any) -> None:  # type: ignore[no-untyped-def]
    rows = w.model.rowCount()
    w.open_location(location, **options)
    qtbot.waitUntil(lambda: w.model.rowCount() == rows + 1 and w.pending_opens == 0, timeout=15000)
    _settle(qtbot, w)
    w.tree.setCurrentIndex(w.proxy.mapFromSource(w.model.index(rows, 0)))


@pytest.mark.parametrize("repo", ["repo2.icechunk", "repo1.icechunk"])
def test_rows_are_the_repositorys_refs_and_ancestry(repos: dict[str, Any], repo: str) -> None:
    spec = repos["repos"][repo]
    root = zl.open(str(repos["root"] / repo))
    store = icechunk_store(root)
    assert store is not None
    table = version_rows(store)
    kinds = {(r.kind, r.name): r.snapshot for r in table.rows if r.kind != "commit"}
    assert kinds == {**{("branch", n): s for n, s in spec["branches"].items()},
                     **{("tag", n): s for n, s in spec["tags"].items()}}
    for r in table.rows:  # every ref shows its commit's message, on the open version's ancestry or not
        if r.kind != "commit":
            assert r.message == spec["ancestry"][r.version][0][3] and r.time, r
    commits = [(r.snapshot, r.message) for r in table.rows if r.kind == "commit"]
    assert commits == [(a[0], a[3]) for a in spec["ancestry"]["branch.main"]]
    assert table.rows[table.current].version == "branch.main"
    for r in table.rows:  # each commit's metadata, one "name: JSON value" line per item
        lines = dict(line.split(": ", 1) for line in r.metadata.splitlines())
        assert {k: json.loads(v) for k, v in lines.items()} == spec["metadata"][r.snapshot], r


def test_picked_version_opens_beside_with_icechunks_values(qtbot, window: MainWindow, repos: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    spec = repos["repos"]["repo2.icechunk"]
    location = repos["root"] / "repo2.icechunk"
    _open(qtbot, window, str(location), authorize=[repos["prefix"]])
    dialog = pick_version(window)
    assert isinstance(dialog, VersionDialog)
    qtbot.waitUntil(lambda: dialog.table is not None, timeout=15000)
    assert dialog.view.topLevelItemCount() == len(dialog.table.rows)
    assert dialog.chosen() == "branch.main"  # the version open now is selected
    tag = sorted(spec["tags"])[0]
    row = next(i for i, r in enumerate(dialog.table.rows) if r.version == f"tag.{tag}")
    dialog.view.setCurrentItem(dialog.view.topLevelItem(row))
    dialog.done(QDialog.DialogCode.Accepted)
    qtbot.waitUntil(lambda: window.model.rowCount() == 2 and window.pending_opens == 0, timeout=15000)
    top = window.model.index(1, 0)
    assert window.model.data(top).endswith(f"@tag.{tag}")
    root = window.model.node(top)
    assert root is not None
    opened = icechunk_store(root)
    assert opened is not None and str(opened.version) == f"tag.{tag}" and opened.snapshot_id == spec["tags"][tag]
    want = spec["versions"][f"tag.{tag}"]["arrays"]
    assert want, "the tag holds arrays"
    for path, npy in want.items():
        got = root[path.strip("/")]
        assert isinstance(got, zl.Array)
        np.testing.assert_array_equal(got[...], np.load(npy), err_msg=path)


def test_a_plain_store_has_no_versions(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    _open(qtbot, window, str(store))
    assert pick_version(window) is None
    assert "Icechunk" in window.status_label.text()


def test_virtual_chunks_ask_before_they_are_read(qtbot, window: MainWindow, repos: dict[str, Any], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    asked: list[tuple[str, str]] = []

    def answer(parent, name: str, prefix: str) -> tuple[bool, bool]:  # type: ignore[no-untyped-def]
        asked.append((name, prefix))
        return True, False  # allowed for this window only

    monkeypatch.setattr(window.access, "question", answer)
    window.open_location(f"{repos['root'] / 'repo2.icechunk'}::/vc")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: bool(asked), timeout=10000)
    assert [prefix for _, prefix in asked] == [repos["prefix"]]
    want = np.load(repos["repos"]["repo2.icechunk"]["versions"]["branch.main"]["arrays"]["/vc"])
    qtbot.waitUntil(lambda: drawn(window.data) is not None
                    and np.array_equal(drawn(window.data), want.astype(drawn(window.data).dtype)),
                    timeout=10000)


def test_every_node_says_which_version_it_is_read_from(repos: dict[str, Any]) -> None:
    from zarrview.describe import summary

    spec = repos["repos"]["repo2.icechunk"]
    for label in ("tag.v1", "branch.main", "branch.dev"):
        rows = dict(summary(zl.open(f"{repos['root'] / 'repo2.icechunk'}@{label}::/a")))
        snapshot = spec["ancestry"][label][0][0]
        assert rows["Repository"] == "Icechunk, format version 2"
        assert rows["Version"].startswith(f"{label}: snapshot {snapshot} ("), rows["Version"]
    assert dict(summary(zl.open(str(repos["root"] / "repo1.icechunk"))))["Repository"] == "Icechunk, format version 1"


def test_compare_with_open_lists_what_icechunk_says_changed(qtbot, window: MainWindow, repos: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    """The picker's Compare with Open: from the version open (main) to the one selected, the
    groups and arrays and chunks icechunk's own diff names."""
    location = repos["root"] / "repo2.icechunk"
    _open(qtbot, window, str(location), authorize=[repos["prefix"]])
    dialog = pick_version(window)
    assert isinstance(dialog, VersionDialog)
    qtbot.waitUntil(lambda: dialog.table is not None, timeout=15000)
    assert dialog.table is not None
    entries = {(e["from"], e["to"]): e for e in repos["changes"]["repo2.icechunk"]["pairs"]}
    # a version main descends from, and one that diverged from it: icechunk answers the first only
    for row, version in enumerate(r.version for r in dialog.table.rows):
        entry = entries.get(("branch.main", version))
        if entry is None or version == "branch.main":
            continue
        dialog.view.setCurrentItem(dialog.view.topLevelItem(row))
        dialog.compare.click()
        qtbot.waitUntil(lambda: not dialog.changes.toPlainText().startswith("Reading"), timeout=15000)
        text = dialog.changes.toPlainText()
        truth = entry["icechunk"] if "icechunk" in entry else entry["model"]
        assert text.startswith("changes from branch.main (snapshot "), text
        for field in ("new_arrays", "deleted_arrays", "updated_arrays", "new_groups", "deleted_groups"):
            for path in truth[field]:
                assert f"\n  {path}\n" in text + "\n", (version, field, path, text)
        for path, chunks in truth["updated_chunks"].items():
            assert f"  {path}: {len(chunks)} chunk" in text, (version, path, text)
        if not any(truth[f] for f in truth):
            assert "no changes" in text
