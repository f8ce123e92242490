"""Help ▸ User Guide: the README that ships with the installed package, shown in the app.

The project has no public documentation site, so the guide is the text every installation
already holds: the README beside a checkout, or the distribution's long description (the
README, in its metadata) of a wheel. Its screenshot resolves against the bundled
resources.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from .resources import resources_dir

_CHECKOUT_README = Path(__file__).resolve().parents[2] / "README.md"


class GuideMissingError(LookupError):
    """Neither the installed metadata nor a checkout holds the README."""


def guide_markdown() -> str:
    """The README of the checkout the package runs from (current, where an editable install's
    metadata holds the README of its install), else the installed one (its metadata);
    GuideMissingError otherwise."""
    if _CHECKOUT_README.is_file():
        return _CHECKOUT_README.read_text(encoding="utf-8")
    try:  # the README is the metadata's body, which it names Description
        text = metadata.metadata("zarrview")["Description"]
    except (metadata.PackageNotFoundError, KeyError):
        text = None
    if isinstance(text, str) and text.strip():
        return text
    raise GuideMissingError("this installation holds no README (neither in its metadata nor beside the package)")


def fit_images(browser: QTextBrowser, width: int) -> None:
    """Images wider than ``width`` pixels are shown at that width: the README's screenshot is
    1280 px wide, and a guide that scrolls sideways to see it is not read."""
    doc = browser.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.isImageFormat():
                image = fmt.toImageFormat()
                pixmap = doc.resource(doc.ResourceType.ImageResource, image.name())
                natural = getattr(pixmap, "width", lambda: 0)()
                if natural > width:
                    image.setWidth(width)
                    image.setHeight(pixmap.height() * width / natural)
                    cursor = QTextCursor(doc)
                    cursor.setPosition(fragment.position())
                    cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                    cursor.setCharFormat(image)
            it += 1
        block = block.next()


class GuideDialog(QDialog):
    """The guide, rendered from Markdown, its links opened in the system's browser."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("zarrview User Guide")
        self.resize(820, 700)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        # the README names its screenshot as resources/screenshots/…: resolve it in the bundle
        self.browser.setSearchPaths([str(resources_dir().parent)])
        try:
            self.browser.setMarkdown(guide_markdown())
            fit_images(self.browser, 760)
        except GuideMissingError as e:
            self.browser.setPlainText(f"The user guide cannot be shown: {e}.")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
