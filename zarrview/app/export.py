"""Saving what is shown: the rendered view as PNG, the slice's values as NPY or CSV."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from PySide6.QtWidgets import QWidget


def save_npy(data: np.ndarray, path: str | Path) -> None:
    np.save(path, data, allow_pickle=data.dtype.kind == "O")


def save_csv(data: np.ndarray, path: str | Path) -> None:
    """Rows as lines; a 1-D or 0-d slice becomes one column; records get a header of field names."""
    arr = np.atleast_1d(data)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        if arr.dtype.names:
            writer.writerow(arr.dtype.names)
            for rec in arr.reshape(-1):
                writer.writerow([_text(rec[n]) for n in arr.dtype.names])
            return
        rows = arr.reshape(-1, 1) if arr.ndim == 1 else arr.reshape(arr.shape[0], -1)
        for row in rows:
            writer.writerow([_text(v) for v in row])


def _text(v: object) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", "backslashreplace")
    if isinstance(v, np.generic):
        return repr(v.item()) if v.dtype.kind in "f" else str(v.item() if v.dtype.kind not in "mMV" else v)
    return str(v)


def save_png(widget: QWidget, path: str | Path) -> bool:
    return bool(widget.grab().save(str(path)))
