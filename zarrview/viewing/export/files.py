"""Files written whole or not at all.

A file is written under a temporary name beside its destination and renamed over it once
complete, so a full disk, a cancel or a read error never leaves half a file behind.
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from .errors import WriteFailed


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """``data`` to ``path`` whole or not at all (a screenshot, already encoded)."""
    path = Path(path)
    with replacing(path) as f:
        f.write(data)
    return path


@contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A new file beside ``path``, renamed over it only once everything was written."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
    try:  # os.open with a mode (not mkstemp's 0600): the result has the permissions of any new file
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as e:
        raise WriteFailed(path, reason(e, path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
        os.replace(tmp, path)
    except OSError as e:
        discard(tmp)
        raise WriteFailed(path, reason(e, path)) from None
    except BaseException:
        discard(tmp)
        raise


def discard(tmp: Path) -> None:
    try:
        tmp.unlink()
    except OSError:
        pass


def reason(e: OSError, path: Path) -> str:
    if e.errno == errno.ENOENT:
        return f"the folder {path.parent} does not exist"
    if e.errno == errno.ENOSPC:
        return "the disk is full"
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"permission denied ({e.strerror})"
    return e.strerror or str(e)
