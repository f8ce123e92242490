"""``--slice`` text: the same rules for the window and for ``zarrview export``.

Parsed here, without Qt, so the headless export writes the plane the window would show for
the same text, and a malformed value is refused before anything is opened.

Two forms. By position, ``5,:,:`` fixes dimension 0 at index 5 (the ':' dimensions are shown).
By name, ``time=2001-03-04,level=500`` names dimensions and says where each is fixed: a
geoscience user knows the date and the pressure level, not their indices. A value is matched
to the nearest value of the dimension's coordinate variable (CF's rule for which array that is:
``cf.coords``), as xarray's ``.sel(method="nearest")`` does, and the choice is printed, since
nearest may be far. ``#N`` is always index N; a dimension without a coordinate variable takes
its index plainly (``x=5``). The two forms do not mix: a position beside a name is ambiguous.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...zarrlib import Array, Group, Node

if TYPE_CHECKING:
    from ..cf.coords import CoordAxis
    from ..cf.view import CFOnce

#: the index form of a named part: ``level=#3`` is index 3 whatever the coordinate says
INDEX_MARK = "#"
SLICE_HELP = ("the plane: by position, 5,:,: (integers fix dimensions, the ':' ones are shown); or by "
              "dimension name, time=2001-03-04,level=500 (a value is matched to the nearest of the "
              "dimension's coordinate variable and the choice printed; name=#N is index N; a dimension "
              "without a coordinate variable takes an index, x=5)")


class ArgumentError(ValueError):
    """A malformed command-line value; its message is the one line the user sees."""


class Positions(dict[int, int]):
    """Fixed indices by dimension, and how many dimensions the text gave (``rank``; None where
    it gave none): ``5,:`` names a 2-D array's plane, never a 3-D one's."""

    def __init__(self, fixed: Mapping[int, int] | None = None, rank: int | None = None) -> None:
        super().__init__(fixed or {})
        self.rank = rank


@dataclass(frozen=True)
class SliceText:
    """``--slice`` as typed: indices by position, or (dimension name, value text) pairs in the
    order typed; one of the two is empty."""

    positions: Positions
    named: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SliceChoice:
    """Where a named dimension was fixed: its index and the coordinate value there (None for a
    dimension without a coordinate variable)."""

    dim: int
    name: str
    index: int
    label: str | None

    def __str__(self) -> str:
        if self.label is None:
            return f"{self.name}=index {self.index} (no coordinate variable)"
        return f"{self.name}={self.label} (index {self.index})"


def read_slice(text: str | None, reduced: int = 0) -> SliceText:
    """The two forms told apart, without opening anything: ``"5,:,:"`` -> positions ``{0: 5}``,
    ``"time=2001-03-04,level=#2"`` -> named ``(("time", "2001-03-04"), ("level", "#2"))``.
    ``reduced`` dimensions (``--reduce``) may be given as ':' beside the plane's two."""
    if not text or not text.strip():
        return SliceText(Positions())
    parts = [p.strip() for p in text.split(",")]
    if not any("=" in p for p in parts):
        return SliceText(_positions(text, parts, reduced))
    named: list[tuple[str, str]] = []
    for part in parts:
        name, eq, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not eq:
            raise ArgumentError(f"zarrview: --slice {text!r} mixes positions and names: give every fixed "
                                "dimension as NAME=VALUE (like time=2001-03-04,level=500), or none")
        if not name or not value:
            raise ArgumentError(f"zarrview: --slice {part!r} needs a dimension name and a value (like level=500)")
        if any(name == seen for seen, _ in named):
            raise ArgumentError(f"zarrview: --slice names {name} twice")
        named.append((name, value))
    return SliceText(Positions(), tuple(named))


def parse_slice(text: str | None) -> dict[int, int]:
    """``"5,:,:"`` -> ``{0: 5}``: the fixed index of each dimension that is not shown. Names need
    the array (see ``choose_plane``) and are refused here."""
    request = read_slice(text)
    if request.named:
        raise ArgumentError(f"zarrview: --slice {text!r} names dimensions; only positions (like 5,:,:) here")
    return request.positions


def _positions(text: str, parts: list[str], reduced: int = 0) -> Positions:
    shown = sum(part in ("", ":") for part in parts)
    if shown > 2 + reduced:
        besides = " besides the reduced one (like :,5,:,: with --reduce max:0)" if reduced else " (like 5,:,:)"
        raise ArgumentError(f"zarrview: --slice {text!r} shows {shown} dimensions; a plane shows two{besides}")
    out = Positions(rank=len(parts))
    for dim, part in enumerate(parts):
        if part and part != ":":
            try:
                out[dim] = int(part)
            except ValueError:
                raise ArgumentError(f"zarrview: --slice takes integers and ':' separated by commas (like 5,:,:) "
                                    f"or NAME=VALUE pairs (like time=2001-03-04,level=500), not {text!r}") from None
    return out


def resolve_slice(request: SliceText, path: str, names: tuple[str | None, ...],
                  axes: Mapping[int, CoordAxis], notes: tuple[str, ...] = ()) -> tuple[dict[int, int], list[SliceChoice]]:
    """The indices ``request`` names, for a node at ``path`` whose dimensions are ``names`` with
    coordinate ``axes`` (by dimension index); ``notes`` on those coordinates are quoted where a
    value cannot be matched. No I/O. Raises ``ArgumentError`` with one line naming the part."""
    from ..cf.coords import CoordError

    plane = dict(request.positions)
    choices: list[SliceChoice] = []
    for name, value in request.named:
        if name not in names:
            known = ", ".join(str(n) for n in names if n is not None)
            have = f"its dimensions: {known}" if known else "its dimensions have no names: give positions, like 5,:,:"
            raise ArgumentError(f"zarrview: --slice {name}={value}: {path} has no dimension {name!r} ({have})")
        dim = names.index(name)
        axis = axes.get(dim)
        if value.startswith(INDEX_MARK) or axis is None:
            index = _index(name, value, axis is None)
        else:
            try:
                index = axis.nearest(value, within=True)
            except CoordError as e:
                said = [n for n in notes if n.startswith(f"{axis.name}:") or f" {axis.name} " in f" {n} "]
                raise ArgumentError(f"zarrview: --slice {name}={value}: {e}"
                                    + (f" ({'; '.join(said)})" if said else "")) from None
        plane[dim] = index
        label = None
        if axis is not None and 0 <= index < len(axis):
            label = axis.label(index)
        choices.append(SliceChoice(dim, name, index, label))
    return plane, choices


def _index(name: str, value: str, no_coordinate: bool) -> int:
    digits = value.removeprefix(INDEX_MARK).strip()
    try:
        return int(digits)
    except ValueError:
        why = (f"{name} has no coordinate variable: give an index ({name}=5 or {name}=#5)" if no_coordinate
               else f"after {INDEX_MARK} comes an index (like {name}=#3)")
        raise ArgumentError(f"zarrview: --slice {name}={value}: {why}") from None


class Dimensioned(Protocol):
    """What ``--slice`` is matched against: the node asked for, the array whose shape checks the
    indices (the node, or a pyramid's first readable level), the names of its dimensions (None:
    a node with no dimensions to name) and its CF coordinates, read once where asked for. What
    the node is shown as (``viewing.decision.Shown``) is one."""

    @property
    def node(self) -> Node: ...

    @property
    def array(self) -> Array | None: ...

    @property
    def names(self) -> tuple[str | None, ...] | None: ...

    @property
    def coordinates(self) -> CFOnce | None: ...


def choose_plane(shown: Dimensioned, request: SliceText, plane_only: bool = False, *,
                 executor: ThreadPoolExecutor | None = None) -> tuple[dict[int, int], list[SliceChoice]]:
    """``request``'s indices for ``shown.node`` (an array, or an OME-Zarr image group or
    multiscales pyramid, whose axis names are its dimensions), checked against its shape; with
    ``plane_only`` (the window) a request that selects less than a plane is refused
    (``shown_error``). Reads an array's coordinate variables (once, through
    ``shown.coordinates``, decoded on ``executor``): call it off the GUI thread. Raises
    ``ArgumentError``; a coordinate that cannot be read is no coordinate (the value must then
    be an index)."""
    node = shown.node
    plane, choices = _choose(shown, request, executor)
    ndim = node.ndim if isinstance(node, Array) else None
    if ndim is None and isinstance(node, Group) and request.named:
        ndim = len(shown.names or ())
    why = shown_error(plane, ndim, node.path) if plane_only and ndim else None
    if why is not None:
        raise ArgumentError(f"zarrview: {why}")
    return plane, choices


def _choose(shown: Dimensioned, request: SliceText, executor: ThreadPoolExecutor | None
            ) -> tuple[dict[int, int], list[SliceChoice]]:
    if not request.named:
        return request.positions, []
    node = shown.node
    if isinstance(node, Array):
        names, axes, notes = _array_dimensions(node, shown.coordinates, executor)  # read for #N too: the choice names its value
        plane, choices = resolve_slice(request, node.path, names, axes, notes)
        check_plane(node, plane)
        return plane, choices
    if isinstance(node, Group) and shown.names is not None:
        plane, choices = resolve_slice(request, node.path, shown.names, {})
        if shown.array is not None:
            check_plane(shown.array, plane)
        return plane, choices
    raise ArgumentError(f"zarrview: --slice names dimensions, but {node.path} is not an array or an OME-Zarr "
                        "image: name an array with ::/path")


def _array_dimensions(arr: Array, coordinates: CFOnce | None = None, executor: ThreadPoolExecutor | None = None
                      ) -> tuple[tuple[str | None, ...], dict[int, CoordAxis], tuple[str, ...]]:
    """Dimension names, coordinate axes and their notes (``coordinates``: the CF view read once,
    its coordinates decoded on ``executor``)."""
    from ..cf.dims import dimension_names
    from ..cf.view import read_cf

    view = (coordinates(executor=executor) if coordinates is not None  # coordinates searched up to the store's root
            else read_cf(arr, executor=executor))
    return dimension_names(arr), dict(view.axes) if view else {}, view.notes if view else ()


def shown_error(plane: Mapping[int, int], ndim: int, path: str | None = None) -> str | None:
    """Why ``plane`` (``--slice``) leaves too few dimensions of an ``ndim``-D node to show a
    plane in the window (a line of a 1-D array), or None. The window never widens a selection:
    ``5,:,3`` selects a line, which ``zarrview export`` writes and the window refuses."""
    rank = getattr(plane, "rank", None) or ndim
    free = rank - len(plane)
    if free >= min(2, rank):
        return None
    what = "one value" if free <= 0 else "a line"
    of = f" of {path}" if path else ""
    return (f"--slice fixes {len(plane)} of {rank} dimensions{of}, which selects {what}; the window shows a plane: "
            "leave two dimensions as ':' (zarrview export writes a line or a value to .npy or .csv)")


def plane_error(arr: Array, plane: Mapping[int, int]) -> str | None:
    """Why the indices asked for (``--slice``) name no plane of ``arr``, or None when they do."""
    rank = getattr(plane, "rank", None)
    if rank is not None and rank != arr.ndim:
        return f"--slice gives {rank} dimensions; {arr.path} has {arr.ndim}"
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
