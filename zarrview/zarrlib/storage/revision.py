"""What a store says of one object's version, to tell that it changed since a reference to its
bytes was recorded (an Icechunk virtual chunk carries its file's ETag or modification time):
bytes at a recorded offset of a rewritten file are some other data, read without any error."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

__all__ = ["Revision", "revision_of", "mismatch"]

_ETAG_KEYS = ("ETag", "etag", "e_tag")
_TIME_KEYS = ("LastModified", "Last-Modified", "last_modified", "updated", "mtime")


@dataclass(frozen=True)
class Revision:
    etag: str | None = None
    modified: float | None = None  # seconds since the epoch


def _seconds(value: Any) -> float | None:
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).timestamp()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value:
        try:  # an HTTP date, or ISO 8601 as GCS writes it
            return parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError, IndexError):
            pass
        try:
            return _seconds(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def revision_of(info: Mapping[str, Any]) -> Revision:
    """A revision from an object's listing entry, as fsspec drivers and obstore name its fields."""
    etag = next((str(info[k]) for k in _ETAG_KEYS if info.get(k)), None)
    modified = next((s for k in _TIME_KEYS if (s := _seconds(info.get(k))) is not None), None)
    return Revision(etag, modified)


def _bare(etag: str) -> str:
    """An ETag without its quotes and weak mark: servers and clients differ in keeping them."""
    etag = etag.strip()
    return (etag[2:] if etag.startswith("W/") else etag).strip('"')


def mismatch(now: Revision | None, etag: str | None, last_modified: int) -> str | None:
    """Why the object is not the one recorded (``etag``, or modified after ``last_modified``
    seconds), or None where it is, or where the store cannot tell."""
    if now is None:
        return None
    if etag and now.etag is not None and _bare(now.etag) != _bare(etag):
        return f"its ETag is now {now.etag}, not the {etag} recorded with the chunk"
    if last_modified and now.modified is not None and int(now.modified) > last_modified:
        return (f"it was modified after the chunk was recorded (at {last_modified}, "
                f"modified at {int(now.modified)})")
    return None
