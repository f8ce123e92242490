"""The window's dialogs: Open URL (with fsspec storage options) and Preferences."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QMessageBox,
    QSpinBox,
    QWidget,
)


TYPICAL_URL = "https://storage.example.org/bucket/project/2026/sample-042/image.ome.zarr"
#: the storage option that asks each cloud's client for anonymous access
ANONYMOUS: dict[str, tuple[str, Any]] = {"s3": ("anon", True), "gs": ("token", "anon"), "gcs": ("token", "anon"),
                                         "az": ("anon", True), "abfs": ("anon", True), "abfss": ("anon", True)}


class OpenUrlDialog(QDialog):
    """A URL and its fsspec storage options; anonymous access by default, since most public
    buckets need no credentials and the SDKs would otherwise go looking for some."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open URL")
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://…, s3://bucket/path.zarr, gs://…, az://…")
        # a typical object-store URL stays readable without scrolling inside the field
        self.url.setMinimumWidth(self.url.fontMetrics().horizontalAdvance(TYPICAL_URL) + 24)
        self.anonymous = QCheckBox("Anonymous access")
        self.anonymous.setChecked(True)
        self.options = QLineEdit()
        self.options.setPlaceholderText('fsspec storage options as JSON, e.g. {"endpoint_url": "…"}')
        form = _form(self, [("URL", self.url), ("", self.anonymous), ("Options", self.options)])
        _buttons(self, form, QDialogButtonBox.StandardButton.Open, self._accept)

    def _accept(self) -> None:
        try:
            self.values()
        except ValueError as e:
            QMessageBox.warning(self, "Storage options", str(e))
            return
        self.accept()

    def values(self) -> tuple[str, dict[str, Any]]:
        text = self.options.text().strip()
        try:
            options = json.loads(text) if text else {}
        except json.JSONDecodeError as e:
            raise ValueError(f"storage options are not valid JSON: {e}") from e
        if not isinstance(options, dict):
            raise ValueError("storage options must be a JSON object")
        url = self.url.text().strip()
        scheme = url.split("://", 1)[0].lower()
        if self.anonymous.isChecked() and scheme in ANONYMOUS:
            options.setdefault(*ANONYMOUS[scheme])
        return url, options


class PreferencesDialog(QDialog):
    """The decoded-chunk cache, the chunks one view may read before it previews instead, and the
    Dask scheduler projections run on."""

    def __init__(self, cache_mib: int, budget: int, parent: QWidget | None = None, scheduler: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.cache = QSpinBox()
        self.cache.setRange(0, 1 << 20)
        self.cache.setSuffix(" MiB")
        self.cache.setValue(cache_mib)
        self.budget = QSpinBox()
        self.budget.setRange(1, 1 << 20)
        self.budget.setSuffix(" chunks")
        self.budget.setValue(budget)
        self.scheduler = QLineEdit(scheduler)
        self.scheduler.setPlaceholderText("none: projections run on this machine")
        self.scheduler.setToolTip("A dask.distributed scheduler (tcp://host:8786) whose workers can open the "
                                  "stores you view: projections send their chunks there")
        form = _form(self, [("Decoded-chunk cache", self.cache),
                            ("Chunks per view (larger views are previewed)", self.budget),
                            ("Dask scheduler for projections", self.scheduler)])
        _buttons(self, form, QDialogButtonBox.StandardButton.Ok, self.accept)

    def values(self) -> tuple[int, int]:
        return self.cache.value(), self.budget.value()


def _form(dialog: QDialog, rows: list[tuple[str, QWidget]]) -> QFormLayout:
    form = QFormLayout(dialog)
    for label, widget in rows:
        form.addRow(label, widget)
    return form


def _buttons(dialog: QDialog, form: QFormLayout, ok: QDialogButtonBox.StandardButton, accept: Any) -> None:
    """The dialog's confirm button (Open, OK) and Cancel under its form."""
    buttons = QDialogButtonBox(ok | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(accept)
    buttons.rejected.connect(dialog.reject)
    form.addRow(buttons)
