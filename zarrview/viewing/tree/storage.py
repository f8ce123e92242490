"""What each row of the tree holds in its store, for the tree's Stored and Ratio columns.

The columns are shown on request (View ▸ Storage Columns), and then each row asks for its own
figures as it comes into view: an array's from its audit (one listing of what is below it and,
where sharded, its shard indexes: ``Array.audit``), a group's from one listing of the chunk and
shard objects of every array below it (``stored_objects``, stopped at ``GROUP_LIMIT``). Nothing
reads chunk data. An array whose codecs are missing is still sized from its listing; a store
that cannot list (a plain HTTP server) says so instead of a size.

No Qt here: ``app/tree/model.py`` asks for a row's figures and puts them in its columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...scheduling import Answer, Context, Job, ReadOnce
from ...zarrlib import Array, Group, Node, ReadCancelled, UnsupportedArray, ZarrError
from ..metadata import human_bytes

#: objects a group's Stored column counts before it says "at least" (each is one listed name)
GROUP_LIMIT = 1_000_000


@dataclass(frozen=True)
class StorageFigures:
    """A row's stored size and, for an array, its compression ratio; ``error`` says why a
    figure is missing (None where the store cannot list: ``listable`` is then False)."""

    stored_bytes: int | None = None
    objects: int | None = None
    #: False where a group's count stopped at ``GROUP_LIMIT`` objects: there are more
    complete: bool = True
    ratio: float | None = None
    chunks_stored: int | None = None
    chunks_expected: int | None = None
    listable: bool = True
    error: str | None = None


@dataclass(frozen=True, eq=False)
class StorageAsk:
    """The figures of ``node``; ``about`` is what the receiver needs to place them (its row)."""

    node: Node
    about: Any = None


@dataclass(frozen=True, eq=False)
class StorageRequest(ReadOnce):
    ask: StorageAsk
    job: Job[StorageFigures]


@dataclass(frozen=True, eq=False)
class Stored:
    """Figures as the tree puts them in; ``figures`` is None where the read was cancelled (the
    columns were hidden or the window is closing): the row asks again when next shown."""

    ask: StorageAsk
    figures: StorageFigures | None


def sizes_of(node: Node) -> bool:
    """Whether the columns say anything of ``node``: arrays (with their codecs or without) and
    groups; error rows have nothing stored to size."""
    return isinstance(node, (Array, UnsupportedArray, Group))


def figures_of(node: Node, ctx: Context | None = None) -> StorageFigures:
    """``node``'s figures, read now (on a worker: a listing, and shard indexes for an array)."""
    cancel = ctx.cancel if ctx is not None else None
    if not node.store.can_list:
        return StorageFigures(listable=False)
    try:
        if isinstance(node, Array) and not isinstance(node, UnsupportedArray):
            audit = node.audit(cancel)
            return StorageFigures(audit.stored_bytes, audit.objects_stored, True, audit.ratio,
                                  audit.chunks_stored, audit.chunks_expected,
                                  error="; ".join(audit.errors[:3]) or None)
        if isinstance(node, (UnsupportedArray, Group)):
            counted = node.stored_objects(cancel=cancel, limit=None if isinstance(node, UnsupportedArray) else GROUP_LIMIT)
            if counted is None:
                return StorageFigures(listable=False)
            return StorageFigures(counted.nbytes, counted.count, counted.complete)
    except ReadCancelled:
        raise
    except ZarrError as e:
        return StorageFigures(error=str(e))
    return StorageFigures(error="nothing stored to size")


def stored_text(f: StorageFigures | None) -> str:
    """The Stored column: "…" while read, "—" where nothing can be said, "≥" where a count stopped."""
    if f is None:
        return "…"
    if f.stored_bytes is None:
        return "—"
    return ("" if f.complete else "≥ ") + human_bytes(f.stored_bytes)


def ratio_text(f: StorageFigures | None) -> str:
    """The Ratio column: decoded bytes of the stored chunks over their stored bytes, as "3.2×"."""
    if f is None:
        return "…"
    if f.ratio is None:
        return "—"
    return f"{f.ratio:.1f}×" if f.ratio < 100 else f"{f.ratio:.0f}×"


def figures_tooltip(f: StorageFigures | None, group: bool) -> str:
    """What the two columns mean for this row, with the counts behind them."""
    if f is None:
        return "Reading what is stored…"
    if not f.listable:
        return "The store cannot list its objects (a plain HTTP server): what is stored is unknown"
    lines = []
    if f.objects is not None:
        what = "chunk and shard objects of the arrays below" if group else "objects"
        lines.append(f"{'at least ' if not f.complete else ''}{f.objects:,} {what}"
                     + ("" if f.stored_bytes is None else f", {f.stored_bytes:,} bytes"))
    if f.chunks_expected is not None and f.chunks_stored is not None:
        lines.append(f"{f.chunks_stored:,} of {f.chunks_expected:,} chunks stored")
    if f.ratio is not None:
        lines.append(f"compression {f.ratio:.2f}× (decoded over stored bytes of the stored chunks)")
    if f.error:
        lines.append(f.error)
    return "\n".join(lines) or "Nothing stored"


def storage_job(node: Node) -> Job[StorageFigures]:
    return Job(lambda ctx: figures_of(node, ctx), f"what {node.path} stores")


class StorageModel:
    """Each ask is one read of a row's figures; nothing is drawn meanwhile (the row says "…")."""

    def request(self, ask: StorageAsk) -> StorageRequest:
        return StorageRequest(ask, storage_job(ask.node))

    def waiting(self, request: StorageRequest | None) -> Stored | None:
        return None

    def apply(self, request: StorageRequest, answer: Answer[StorageFigures]) -> Stored:
        if answer.cancelled:
            return Stored(request.ask, None)
        if answer.error is not None:
            error = answer.error
            text = str(error) if isinstance(error, ZarrError) else f"{type(error).__name__}: {error}"
            return Stored(request.ask, StorageFigures(error=text))
        return Stored(request.ask, answer.value)
