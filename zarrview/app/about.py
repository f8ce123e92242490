"""Help ▸ About: what this build is and which parts of Zarr it reads."""

from __future__ import annotations

import platform

from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .. import __version__
from .icons import app_icon

#: only addresses that exist: the project has no public home yet
LINKS = [
    ("Zarr specifications", "https://zarr-specs.readthedocs.io"),
    ("OME-NGFF", "https://ngff.openmicroscopy.org"),
]
FEATURES = [
    "Zarr v3: groups, arrays, sharding (nested, index at start or end), every core data type and "
    "fill-value encoding, both chunk-key encodings, must_understand",
    "Extension data types: string, bytes, fixed_length_utf32, null_terminated_bytes, raw_bytes, "
    "numpy.datetime64/timedelta64, struct",
    "Zarr v2: every dtype (structured, object strings/bytes/arrays), C and F order, filters, "
    "nested keys, implicit groups",
    "The 2022 draft of v3 with its sharding storage transformer (zarr-python 2.x)",
    "Codecs: bytes, transpose, gzip, zstd, blosc, crc32c, vlen-utf8/bytes, numcodecs.* "
    "(pcodec and zfpy with zarrview[codecs]); pickle is refused",
    "Stores: folders, .zip, .ozx (single-file OME-Zarr), HTTP(S), S3 and GCS (zarrview[cloud]); consolidated metadata",
    "Read-only: zarrview never writes to your data",
    "Broken or hostile stores cost an error naming the key, within bounded time and memory "
    "(ZARRVIEW_LIMITS raises the bounds)",
]


def about_html() -> str:
    from numcodecs import __version__ as numcodecs_version

    from ..zarrlib.codecs import libzstd
    from ..zarrlib.codecs.native_versions import summary

    features = "".join(f"<li>{f}</li>" for f in FEATURES)
    links = " · ".join(f'<a href="{url}">{text}</a>' for text, url in LINKS)
    zstd = f"system libzstd {libzstd.version()}" if libzstd.version() else "numcodecs"
    return (f"<h2>zarrview {__version__}</h2>"
            "<p>A desktop viewer for Zarr hierarchies, local or remote.</p>"
            f"<p><b>Reads</b></p><ul>{features}</ul>"
            f"<p>{links}</p>"
            f"<p><small>Python {platform.python_version()} · Qt {qVersion()} · numcodecs {numcodecs_version} · "
            f"zstd via {zstd} · MIT licence</small></p>"
            f"<p><small>Native decoders: {summary()} (<code>zarrview decoders</code> says which codecs reach each)"
            "</small></p>")


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About zarrview")
        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(96, 96))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.text = QLabel(about_html())
        self.text.setWordWrap(True)
        self.text.setOpenExternalLinks(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.text.setMinimumWidth(520)
        row = QHBoxLayout()
        row.addWidget(icon)
        row.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(buttons)
