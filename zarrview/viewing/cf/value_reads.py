"""The values shown as text, as a view model a driver runs (``scheduling.Driver``): the value of
a 0-d array and the pages of a table (``table_plane.TablePlane``), decoded as the image decodes
them.

Each ask is read anew (a table asks for its next page once the one before is appended); a
newer ask replaces the read in flight, whose answer the driver drops. What an answer makes of
the view is a ``ValuesShown``: the value's text or the page's rows, what the status bar says,
why nothing can be shown, and a store's refusal the window asks about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...scheduling import Answer, Job, ReadOnce, read_job
from ...zarrlib import Array, ChunkFailure
from ...zarrlib.storage.access import AccessDeniedError
from ..image.readout import format_value, request_label
from .table_plane import TablePlane
from .view import CFView

#: rows a table reads at a time
TABLE_PAGE = 2_000


@dataclass(frozen=True, eq=False)
class ValueAsk:
    """The value of the 0-d ``array``, decoded and labelled as ``cf`` says."""

    array: Array
    cf: CFView | None = None


@dataclass(frozen=True, eq=False)
class PageAsk:
    """The page of ``plane``'s rows from ``start``, for ``table`` (what the page is appended to:
    the view's table model, opaque here)."""

    plane: TablePlane
    start: int
    table: Any = None


@dataclass(frozen=True, eq=False)
class ValuesRequest(ReadOnce):
    """A read of a 0-d array's value or of a page of a table."""

    job: Job[Any]
    ask: ValueAsk | PageAsk



@dataclass(frozen=True, eq=False)
class ValuesShown:
    """What the view shows of a read. ``said``: the status bar's lines, in order; ``answered``:
    the read is over (the view has its value, or knows why not). Of an answer with a value:
    ``text`` (a 0-d value) or ``page`` (rows for ``request.ask.table``) with the chunks that
    could not be read; of a read that failed, its ``error`` (shown instead of the values).
    ``refused``: a store refused access to a chunk (the window asks, and reads again if allowed)."""

    request: ValuesRequest
    said: tuple[str, ...] = ()
    answered: bool = False
    text: str | None = None
    page: np.ndarray | None = None
    failures: tuple[ChunkFailure, ...] = ()
    error: BaseException | None = None
    refused: AccessDeniedError | None = None


def value_request(ask: ValueAsk) -> ValuesRequest:
    dec = None if ask.cf is None else ask.cf.decoding
    label = request_label(ask.array.path, (), ask.array.shape)
    decode = dec.values if dec is not None and dec.active else None
    return ValuesRequest(read_job(ask.array, (), label=label, decode=decode), ask)


def page_request(ask: PageAsk) -> ValuesRequest:
    plane = ask.plane
    stop = min(plane.row_count, ask.start + TABLE_PAGE) if plane.rows is not None else 1
    sel = plane.selection(ask.start, stop) if plane.rows is not None else ()
    label = request_label(plane.array.path, sel, plane.array.shape)
    return ValuesRequest(read_job(plane.array, sel, label=label, decode=plane.page_values), ask)


class ValuesModel:
    def __init__(self) -> None:
        self._asked: ValueAsk | PageAsk | None = None
        self._pending: ValuesRequest | None = None

    def clear(self) -> None:
        """Nothing is read (the driver dropped what was in flight)."""
        self._asked = self._pending = None

    def request(self, ask: ValueAsk | PageAsk) -> ValuesRequest | None:
        """The read ``ask`` needs; the one under way for the ask being read, None once it is."""
        if ask is self._asked:
            return self._pending
        self._asked = ask
        self._pending = value_request(ask) if isinstance(ask, ValueAsk) else page_request(ask)
        return self._pending

    def waiting(self, request: ValuesRequest | None) -> ValuesShown | None:
        """What is shown stays while the read runs; the status bar says what is read."""
        return None if request is None else ValuesShown(request, (f"Reading {request.job.label}…",))

    def apply(self, request: ValuesRequest, answer: Answer[Any]) -> ValuesShown:
        if request is self._pending:
            self._pending = None
        label = request.job.label
        if answer.cancelled:
            return ValuesShown(request, (f"Cancelled reading {label}",), answered=True)
        if answer.error is not None:
            return ValuesShown(request, (f"Error: {answer.error}",), answered=True, error=answer.error)
        data = answer.value
        assert data is not None
        ask = request.ask
        text = page = None
        heading = ""
        if isinstance(ask, ValueAsk):
            value = data[()]
            formatted = value if isinstance(value, str) else format_value(value)
            text = formatted if ask.cf is None else ask.cf.value_text(value, formatted)
        else:
            page = data if data.ndim else data.reshape(1)
            heading = ask.plane.heading
        said = [f"Read {label} in {answer.seconds * 1000:.0f} ms" + (f": {heading}" if heading else "")]
        failures = answer.failures
        refused = None
        if failures:
            n = len(failures)
            said.append(f"{n} chunk{'s' if n > 1 else ''} of {label} could not be read: {failures[0].message}")
            refused = next((f.error for f in failures if isinstance(f.error, AccessDeniedError)), None)
        return ValuesShown(request, tuple(said), answered=True, text=text, page=page, failures=failures,
                           refused=refused)
