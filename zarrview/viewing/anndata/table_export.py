"""A dataframe written to CSV as pandas writes one (``DataFrame.to_csv``): a header of the
index's name and the columns in ``column-order``, categoricals as their labels, missing values
empty, floats exactly; a page of rows at a time, so a frame of millions of rows writes in the
memory of a page."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ...zarrlib import CancelToken, ReadCancelled, ZarrError
from ..export.errors import ExportCancelled, ReadFailed
from ..export.files import replacing
from .frame import Frame

EXPORT_ROWS = 50_000


def export_frame_csv(frame: Frame, path: str | os.PathLike[str], *, cancel: CancelToken | None = None,
                     progress: Callable[[int, int], None] | None = None, page: int = EXPORT_ROWS,
                     executor: ThreadPoolExecutor | None = None) -> Path:
    """Write ``frame`` to ``path``, its pages decoded on ``executor`` (an export job's); an
    ExportError says why not (nothing is left half-written)."""
    path = Path(path)
    try:
        with replacing(path) as f:
            text = io.TextIOWrapper(f, encoding="utf-8", newline="")
            writer = csv.writer(text, lineterminator="\n")
            writer.writerow([frame.index_name or "", *(c.name for c in frame.columns)])
            width = 1 + len(frame.columns)
            for start in range(0, frame.rows, page):
                rows = frame.read_page(start, start + page, cancel=cancel, executor=executor)
                writer.writerows([rows.text(r, c, missing="") for c in range(width)]
                                 for r in range(rows.start, rows.stop))
                if progress is not None:
                    progress(rows.stop, frame.rows)
            text.flush()
            text.detach()
    except ReadCancelled:
        raise ExportCancelled(path) from None
    except ZarrError as e:
        raise ReadFailed(path, frame.path, str(e)) from None
    return path
