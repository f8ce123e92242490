"""CF flags (CF 3.5): a land/sea mask or a quality code means nothing as a number under the cursor,
so ``flag_values``, ``flag_masks`` and ``flag_meanings`` turn the stored value into its name.
Bad flag attributes give no legend and a note, never an error: the number is still shown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...zarrlib.errors import short


@dataclass(frozen=True)
class FlagLegend:
    """One meaning per flag value and/or mask, in the order of ``flag_meanings``."""

    values: tuple[int, ...] | None
    masks: tuple[int, ...] | None
    meanings: tuple[str, ...]

    def name_of(self, value: int) -> str | None:
        """``flag_values`` alone: the meaning of an equal value. ``flag_masks`` alone: the meanings
        whose bits are set, joined by " + ". Both: the meanings whose mask selects their value
        (CF 3.5's blend of bit fields and codes). None where nothing matches."""
        try:
            v = int(value)
        except (TypeError, ValueError, OverflowError):
            return None
        if self.masks is None:
            values = self.values or ()
            return self.meanings[values.index(v)] if v in values else None
        if self.values is None:
            hits = [m for mask, m in zip(self.masks, self.meanings) if v & mask]
        else:
            hits = [m for mask, fv, m in zip(self.masks, self.values, self.meanings) if v & mask == fv]
        return " + ".join(hits) or None


def flag_legend(attrs: Mapping[str, Any]) -> tuple[FlagLegend | None, list[str]]:
    """The legend of an array's attributes, or None; and notes naming the flag attributes that are
    bad (a legend is still made from the good ones where it can)."""
    notes: list[str] = []
    if not isinstance(attrs, Mapping):
        return None, notes
    has_values, has_masks = "flag_values" in attrs, "flag_masks" in attrs
    if not has_values and not has_masks:
        if "flag_meanings" in attrs:
            notes.append("flag_meanings without flag_values or flag_masks: no legend")
        return None, notes
    raw_meanings = attrs.get("flag_meanings")
    if not isinstance(raw_meanings, str) or not raw_meanings.split():
        notes.append(f"flag_meanings {short(raw_meanings)} is not a blank-separated list of words: no legend")
        return None, notes
    meanings = tuple(raw_meanings.split())
    values = _integers(attrs, "flag_values", len(meanings), notes) if has_values else None
    masks = _integers(attrs, "flag_masks", len(meanings), notes) if has_masks else None
    if values is None and masks is None:
        return None, notes
    return FlagLegend(values, masks, meanings), notes


def _integers(attrs: Mapping[str, Any], name: str, count: int, notes: list[str]) -> tuple[int, ...] | None:
    """A list of whole numbers (one number alone counts as a list of one), one per meaning."""
    raw = attrs[name]
    items = raw if isinstance(raw, (list, tuple)) else [raw]
    out: list[int] = []
    for item in items:
        whole = isinstance(item, (int, np.integer)) or (isinstance(item, (float, np.floating)) and item.is_integer())
        if not whole or isinstance(item, (bool, np.bool_)):
            notes.append(f"{name} {short(raw)} is not a list of integers: ignored")
            return None
        out.append(int(item))
    if len(out) != count:
        notes.append(f"{name} {short(raw)} has {len(out)} values for {count} flag_meanings: ignored")
        return None
    return tuple(out)
