"""The Export menu: the displayed plane's data, its image, or a screenshot.

"Export data" and "Export image" write the plane the view stands for at full resolution,
read again on a worker thread (the view may hold only a preview or the visible region), with
a progress dialog that cancels the read. A screenshot is the only export of what is on
screen as drawn. A failure is a dialog and a status line naming the file and the reason,
never a success message over a missing file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QProgressDialog, QWidget

from ..viewing.export.errors import ExportCancelled, ExportError, WriteFailed
from ..viewing.export.files import write_bytes
from ..viewing.export.plane import PlaneSpec, export_plane, plane_nbytes
from ..scheduling import Context, Done, Driver, Job, Task, Tasks, call_job
from ..viewing.anndata.table_export import export_frame_csv
from ..zarrlib import CancelToken
from .bridge import post
from .data_view import DataView
from ..describe import human_bytes
from .export import grab, png_bytes

#: a plane larger than this in memory is read only after the user says yes
ASK_ABOVE_BYTES = 512 << 20
#: progress reports reach the GUI thread at most this often
PROGRESS_INTERVAL_S = 0.05
DATA_FILTERS = "NumPy array (*.npy);;CSV table (*.csv)"
PNG_FILTER = "PNG image (*.png)"


@dataclass
class _Job:
    spec: PlaneSpec
    path: str
    cancel: CancelToken
    dialog: QProgressDialog
    reported: float = 0.0


class ExportActions(QObject):
    """Owns the three actions of the Export menu and the export running, if any."""

    def __init__(self, window: QWidget, view: DataView, menu: QMenu, status: Callable[[str], None]) -> None:
        super().__init__(window)
        self.window = window
        self.view = view
        self.status = status
        self._exports = self._driver("export", self._exported)  # one at a time: ``start`` refuses a second
        self._screenshots = self._driver("screenshot", self._shot)
        self.ask_above = ASK_ABOVE_BYTES
        self.job: _Job | None = None
        self.last_error: str | None = None
        self.error_box: QMessageBox | None = None
        self.data_action = self._add(menu, "Export &Data (NPY, CSV)…", self.export_data,
                                     "The displayed plane's values at full resolution, in the array's index order")
        self.image_action = self._add(menu, "Export &Image (PNG)…", self.export_image,
                                      "The displayed plane at full resolution through the current levels and colours")
        self.table_action = self._add(menu, "Export &Table (CSV)…", self.export_table,
                                      "The AnnData dataframe shown, every row, as pandas writes it")
        self._tables = self._driver("table export", self._tabled)
        self.table_writing = False
        menu.addSeparator()
        self.screenshot_action = self._add(menu, "Save &Screenshot (PNG)…", self.save_screenshot,
                                           "The data view as drawn on screen, at screen resolution")
        menu.aboutToShow.connect(self.update)
        view.loaded.connect(self.update)
        view.stack.currentChanged.connect(lambda _: self.update())
        self.update()

    def _driver(self, name: str, took: Callable[[Done[Any]], None]) -> Driver[Task[Any], Task[Any], Done[Any]]:
        """A driver of one-off writes whose answers reach ``took`` on the GUI thread, while this exists."""
        return Driver(Tasks(), self.view.pool, took, post=lambda fn: post(fn, self), name=name)

    def _add(self, menu: QMenu, text: str, slot: Callable[[], None], tip: str) -> QAction:
        action = QAction(text, self.window)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    def update(self) -> None:
        """Enable what the view can export now: nothing without an array, no image of a table."""
        spec = self.view.plane_spec()
        idle = self.job is None
        self.data_action.setEnabled(spec is not None and idle)
        self.image_action.setEnabled(spec is not None and spec.renderable and idle)
        self.screenshot_action.setEnabled(spec is not None or self.view.anndata.frame is not None)
        self.table_action.setEnabled(self.view.anndata.frame is not None and not self.table_writing)

    # -- asking the user (tests replace these) ----------------------------------------------
    def ask_path(self, caption: str, filters: str) -> str | None:
        """A file name from a save dialog, given the suffix of the chosen filter when it has none."""
        path, chosen = QFileDialog.getSaveFileName(self.window, caption, "", filters)
        if not path:
            return None
        if not Path(path).suffix and "(*." in chosen:
            path += chosen[chosen.index("(*.") + 2:].rstrip(")")
        return path

    def confirm_size(self, spec: PlaneSpec, nbytes: int) -> bool:
        answer = QMessageBox.question(
            self.window, "Export a large plane",
            f"{spec.label} takes {human_bytes(nbytes)} in memory at full resolution. Read and write it all?")
        return answer == QMessageBox.StandardButton.Yes

    def fail(self, message: str) -> None:
        """Say what failed, on the status bar and in a dialog that does not block the event loop."""
        self.last_error = message
        self.status(message)
        box = QMessageBox(QMessageBox.Icon.Warning, "Export failed", message, QMessageBox.StandardButton.Ok,
                          self.window)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.error_box = box

    # -- the actions ----------------------------------------------------------------------
    def export_data(self) -> None:
        spec = self.view.plane_spec()
        path = self.ask_path("Export data", DATA_FILTERS) if spec is not None else None
        if spec is not None and path:
            self.start(spec, path)

    def export_image(self) -> None:
        spec = self.view.plane_spec()
        path = self.ask_path("Export image", PNG_FILTER) if spec is not None and spec.renderable else None
        if spec is not None and path:
            self.start(spec, path)

    def start(self, spec: PlaneSpec, path: str) -> bool:
        """Read and write ``spec``'s plane to ``path`` on a worker thread; False when the user
        declined a large plane or another export is running."""
        nbytes = plane_nbytes(spec)
        if self.job is not None or (nbytes > self.ask_above and not self.confirm_size(spec, nbytes)):
            return False
        token = CancelToken()
        dialog = QProgressDialog(f"Reading {spec.label} at full resolution…", "Cancel", 0, 0, self.window)
        dialog.setWindowTitle("Export")
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.setMinimumDuration(300)
        dialog.canceled.connect(token.cancel)
        dialog.canceled.connect(self._exports.cancel)
        job = _Job(spec, path, token, dialog)
        self.job = job
        self.update()

        def progress(done: int, total: int) -> None:  # on the reading threads
            now = time.monotonic()
            if done == total or now - job.reported >= PROGRESS_INTERVAL_S:
                job.reported = now
                post(lambda: self._progress(job, done, total), self)

        self.status(f"Exporting {spec.label} to {path}…")
        def work(ctx: Context) -> None:
            export_plane(spec, path, progress=progress, cancel=ctx.cancel, executor=ctx.executor)

        self._exports.show(Task(Job(work, f"export of {spec.label}"), about=job))
        return True

    def _progress(self, job: _Job, done: int, total: int) -> None:
        if job is not self.job or job.cancel.cancelled:
            return
        if done >= total:
            job.dialog.setLabelText(f"Writing {job.path}…")
            job.dialog.setRange(0, 0)
        else:
            job.dialog.setRange(0, total)
            job.dialog.setValue(done)

    def _exported(self, done: Done[None]) -> None:
        """The export running is over, written, failed or cancelled: the next one may start."""
        job, answer = done.task.about, done.answer
        assert isinstance(job, _Job)
        error = answer.error
        if answer.cancelled and error is None:  # stopped before it began, or the window closing
            error = ExportCancelled(job.path)
        job.dialog.close()
        job.dialog.deleteLater()
        self.job = None
        self.update()
        if error is None:
            shape = " x ".join(str(n) for n in job.spec.shape) or "one value"
            self.status(f"Exported {job.spec.label} ({shape}, full resolution) to {job.path}")
        elif isinstance(error, ExportCancelled):
            self.status(f"Export cancelled: nothing written to {job.path}")
        else:
            self.fail(_message(job.path, error))

    def export_table(self) -> None:
        """The dataframe shown to CSV, a page at a time on a worker (``zarrview export`` writes the same)."""
        frame = self.view.anndata.frame
        path = self.ask_path("Export table", "CSV table (*.csv)") if frame is not None else None
        if frame is None or not path or self.table_writing:
            return
        self.table_writing = True
        self.update()
        self.status(f"Exporting {frame.path} ({frame.rows:,} rows) to {path}…")

        self._tables.show(Task(Job(lambda ctx: export_frame_csv(frame, path, cancel=ctx.cancel, executor=ctx.executor),
                                   f"export of {frame.path}"), about=(frame.path, frame.rows, path)))

    def _tabled(self, done: Done[Any]) -> None:
        """The one table export running is over: the action is offered again."""
        (name, rows, path), answer = done.task.about, done.answer
        self.table_writing = False
        self.update()
        if answer.error is not None:
            self.fail(_message(path, answer.error))
        elif answer.cancelled:
            self.status(f"Export cancelled: nothing written to {path}")
        else:
            self.status(f"Exported {name} ({rows:,} rows) to {path}")

    def save_screenshot(self) -> None:
        """The view as drawn, grabbed here and encoded and written on a worker thread."""
        widget = self.view.stack.currentWidget()
        shown = self.view.plane_spec() is not None or self.view.anndata.frame is not None
        path = self.ask_path("Save screenshot", PNG_FILTER) if shown and widget is not None else None
        if not path or widget is None:
            return
        image = grab(widget)

        def work() -> Any:
            data = png_bytes(image)
            if not data:
                raise WriteFailed(path, "the image could not be encoded as PNG")
            return write_bytes(path, data)

        self._screenshots.show(Task(call_job(work, label=f"screenshot to {path}"), about=path))

    def _shot(self, done: Done[Any]) -> None:
        """The newest screenshot written, or why not (one replaced by a newer one says nothing)."""
        path, answer = done.task.about, done.answer
        error = answer.error
        if answer.cancelled and error is None:
            self.status(f"Screenshot to {path} cancelled")
        elif error is None:
            self.status(f"Saved a screenshot of the data view to {path}")
        else:
            self.fail(_message(path, error))


def _message(path: str, error: BaseException) -> str:
    return str(error) if isinstance(error, ExportError) else f"cannot export to {path}: {error!r}"
