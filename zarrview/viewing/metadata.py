"""Metadata documents as a person can read them: bounded, whatever the store holds.

A consolidated root document can describe 100,000 nodes (50 MB of JSON): indented and put into
a text widget on the GUI thread it froze the window for half a minute, to show text nobody reads
past the first screens. Every object and list is cut to its first ``MAX_ITEMS`` entries here,
with an entry saying how many were left out (each node's own document is one click away).
"""

from __future__ import annotations

from typing import Any

#: entries of one object or list shown; the rest are counted
MAX_ITEMS = 200
#: the key (and the list item) that says what was left out
ELIDED = "…"


def elide(value: Any, max_items: int = MAX_ITEMS) -> Any:
    """``value`` with every dict and list longer than ``max_items`` cut to its first entries
    plus one saying how many more there are; the same object where nothing is cut."""
    if isinstance(value, dict):
        items = list(value.items())
        kept = [(k, elide(v, max_items)) for k, v in items[:max_items]]
        if len(items) > max_items:
            kept.append((ELIDED, f"{len(items) - max_items:,} more entries not shown"))
        elif all(v is value[k] for k, v in kept):
            return value
        return dict(kept)
    if isinstance(value, list):
        kept_list = [elide(v, max_items) for v in value[:max_items]]
        if len(value) > max_items:
            kept_list.append(f"{ELIDED} {len(value) - max_items:,} more items not shown")
        elif all(a is b for a, b in zip(kept_list, value)):
            return value
        return kept_list
    return value


def human_bytes(n: int | float) -> str:
    """A size as people read it: ``1.5 MiB``, whole bytes below a KiB."""
    if n < 1024:
        return f"{int(n)} B"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        n /= 1024
        if n < 1024:
            return f"{n:.1f} {unit}"
        if unit == "EiB":
            return f"{n:.3g} {unit}"  # declared shapes of 2**62 elements exist
    raise AssertionError("unreachable")
