"""What an export that did not happen says: the file or node, and why."""

from __future__ import annotations

import os
from pathlib import Path


class ExportError(Exception):
    """An export that did not happen; the message names the file or node and the reason."""

    def __init__(self, message: str, path: str | os.PathLike[str]) -> None:
        super().__init__(message)
        self.path = Path(path)


class WriteFailed(ExportError):
    """The file could not be written: a missing folder, no permission, a full disk."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}", path)
        self.reason = reason


class ReadFailed(ExportError):
    """The plane could not be read from the store."""

    def __init__(self, path: str | os.PathLike[str], label: str, reason: str) -> None:
        super().__init__(f"cannot read {label}: {reason}", path)
        self.reason = reason


class ExportCancelled(ExportError):
    """The user cancelled; nothing was written."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(f"export to {path} cancelled", path)


class UnsupportedExport(ExportError):
    """The plane cannot be written in the format the file name asks for."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"cannot export to {path}: {reason}", path)
        self.reason = reason
