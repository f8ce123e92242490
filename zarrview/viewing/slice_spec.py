"""``--slice`` text: the same rules for the window and for ``zarrview export``.

Parsed here, without Qt, so the headless export writes the plane the window would show for
the same text, and a malformed value is refused before anything is opened.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..zarrlib import Array


class ArgumentError(ValueError):
    """A malformed command-line value; its message is the one line the user sees."""


def parse_slice(text: str | None) -> dict[int, int]:
    """``"5,:,:"`` -> ``{0: 5}``: the fixed index of each dimension that is not shown."""
    if not text:
        return {}
    out = {}
    for dim, part in enumerate(text.split(",")):
        part = part.strip()
        if part and part != ":":
            try:
                out[dim] = int(part)
            except ValueError:
                raise ArgumentError(f"zarrview: --slice takes integers and ':' separated by commas "
                                    f"(like 5,:,:), not {text!r}") from None
    return out


def plane_error(arr: Array, plane: Mapping[int, int]) -> str | None:
    """Why the indices asked for (``--slice``) name no plane of ``arr``, or None when they do."""
    for dim, index in sorted(plane.items()):
        if dim >= arr.ndim:
            return f"--slice names {dim + 1} dimensions; {arr.path} has {arr.ndim}"
        if not 0 <= index < arr.shape[dim]:
            name = (arr.dimension_names or (None,) * arr.ndim)[dim] or f"dimension {dim}"
            return f"--slice index {index} is out of range for {name} of {arr.path} (size {arr.shape[dim]})"
    return None


def check_plane(arr: Array, plane: Mapping[int, int]) -> None:
    """Refuse indices that name no plane of ``arr``: an index is never clamped to the nearest one."""
    why = plane_error(arr, plane)
    if why is not None:
        raise ArgumentError(f"zarrview: {why}")
