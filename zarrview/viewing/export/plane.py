"""Writing the displayed plane to a file, at full resolution, without Qt.

What is on screen may be a coarse preview or a zoomed-in region; an export never writes
that. It reads the whole plane the view stands for again, through the array's own reader, so
the window's export and ``zarrview export`` on a server write the same bytes. Values go out
in the array's own index order (an XZ plane of a (z, y, x) array is (z, x) in the .npy),
and only a PNG is oriented as displayed, rows by columns, through the display's levels and
lookup table.

A file is written under a temporary name beside its destination and renamed over it once
complete, so a full disk, a cancel or a read error never leaves half a file behind.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

import numpy as np

from ...zarrlib import Array, CancelToken, ReadCancelled, ZarrError
from ...zarrlib.limits import limits
from ..cf.decoded import decoding_of
from ..image.channels import ChannelSetting, auto_windows, composite
from ..image.contrast import displayable, percentile_levels
from ..image.pixels import rgba
from ..image.state import COMPLEX_MODES, ViewState
from ..labels.export import LabelExportError, LabelOverlay, blend, overlays, read_overlays
from ..labels.layers import LabelLayer
from ..ome.model import Multiscale, OmeImage
from .csv_table import csv_axes, write_csv
from .errors import ExportCancelled, ReadFailed, UnsupportedExport
from .files import replacing
from .png import PngShapeError, write_png

FORMATS = (".npy", ".csv", ".png")
#: elements rendered or written at a time, bounding the extra memory of a PNG or CSV export
BLOCK_ELEMENTS = 1 << 20

Progress = Callable[[int, int], None]

if TYPE_CHECKING:
    from ..cf.view import CFOnce


class PlaneValues(Protocol):
    """Values computed in place of reading the plane (a projection over a dimension); ``label``
    names them in an error. Returns the plane's values in the shape of ``PlaneSpec.shape``,
    decoded on ``executor`` where given (the export's job's, ``Array.read``'s argument)."""

    @property
    def label(self) -> str: ...

    def __call__(self, cancel: CancelToken | None, progress: Progress | None, *,
                 executor: ThreadPoolExecutor | None = None) -> np.ndarray: ...


@dataclass(frozen=True, eq=False)
class PlaneSpec:
    """The plane a view shows, as values: safe to hand to a worker thread."""

    array: Array
    #: full resolution, in the array's own index order: an int for every fixed dimension,
    #: ``slice(None)`` for the displayed dimensions and a colour dimension
    selection: tuple[int | slice, ...]
    #: the displayed (rows, columns) dimensions; None for a plot, a value or a table
    dims: tuple[int, int] | None = None
    #: the dimension shown as RGB(A) channels, or None
    channel_dim: int | None = None
    complex_mode: str = "magnitude"
    #: display levels (black, white); None: percentiles of the finite values
    levels: tuple[float, float] | None = None
    #: the display's lookup table, (N, 3|4) uint8; None: a grey ramp
    lut: np.ndarray | None = None
    #: the channels of a composite (their colours, windows, visibility): with ``channel_dim``,
    #: a PNG is drawn as the view draws it, not as raw RGB
    channels: tuple[ChannelSetting, ...] = ()
    #: label layers drawn over a PNG (``labels.export.overlays``), as the window shows them
    labels: tuple[LabelOverlay, ...] = ()
    #: CF values (masked as NaN, unpacked; times as dates: ``cf.decoded``), as xarray reads them;
    #: else as stored
    decode: bool = False
    #: values computed in place of reading the plane (a projection shown in the window); None: read
    values: PlaneValues | None = None
    #: rows drawn bottom-up in a PNG, as the window draws them (``ViewState.rows_up``: north up);
    #: .npy and .csv keep the array's order whatever this says
    rows_up: bool = False
    #: the array's CF coordinates, read once (``CFOnce``) for the orientation and a CSV's labels;
    #: None: read where needed
    coordinates: CFOnce | None = None

    def __post_init__(self) -> None:
        free = {d for d, s in enumerate(self.selection) if isinstance(s, slice)}
        if len(self.selection) != self.array.ndim:
            raise ValueError(f"a selection of {len(self.selection)} items for {self.array.ndim} dimensions")
        if not {*(self.dims or ()), *(() if self.channel_dim is None else (self.channel_dim,))} <= free:
            raise ValueError("the displayed and colour dimensions must be whole slices of the selection")
        if self.complex_mode not in COMPLEX_MODES:
            raise ValueError(f"complex mode {self.complex_mode!r} is not one of {COMPLEX_MODES}")
        if self.lut is not None and (self.lut.dtype != np.uint8 or self.lut.ndim != 2 or self.lut.shape[1] not in (3, 4)
                                     or not len(self.lut)):
            raise ValueError(f"a lookup table is (N, 3|4) uint8, not {self.lut.shape} {self.lut.dtype}")

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the values written to .npy: the sliced dimensions, in the array's order."""
        return tuple(n for n, s in zip(self.array.shape, self.selection) if isinstance(s, slice))

    @property
    def label(self) -> str:
        if self.values is not None:
            return self.values.label
        return f"{self.array.path}[{', '.join(':' if isinstance(s, slice) else str(s) for s in self.selection)}]"

    @property
    def renderable(self) -> bool:
        """Whether the plane can be drawn as an image (a PNG): two displayed dimensions of numbers."""
        return self.dims is not None and not self.array.dtype.names and self.array.dtype.kind in "biufcmM"


def is_table(arr: Array) -> bool:
    """Records, strings and objects are shown as a table, never as an image."""
    return bool(arr.dtype.names) or arr.dtype.kind in "OSUVT"


def table_selection(arr: Array, fixed: Mapping[int, int] | None = None) -> tuple[int | slice, ...]:
    """What a table or a plot shows, whole: the first dimension as rows, the second as columns
    (a record is one row), every further dimension at its index in ``fixed`` (else 0)."""
    shown = 1 if arr.dtype.names else 2
    return tuple(slice(None) if d < shown else int((fixed or {}).get(d, 0)) for d in range(arr.ndim))


def default_spec(arr: Array, plane: Mapping[int, int] | None = None, *, state: ViewState | None = None,
                 coordinates: CFOnce | None = None) -> PlaneSpec:
    """The plane the window shows first for ``arr`` and a ``--slice`` (``plane``), with levels
    left to the data and a grey ramp; ``state``: that first view where already decided
    (``array_state``), ``coordinates``: the array's CF view, read once for every use."""
    if arr.ndim < 2 or is_table(arr):
        return narrowed(PlaneSpec(arr, table_selection(arr, plane), coordinates=coordinates), plane or {})
    from ..cf.view import CFOnce
    from ..conventions.georef import array_state, array_view

    coordinates = coordinates if coordinates is not None else CFOnce(arr)
    state = state if state is not None else array_state(arr, plane)
    try:  # the window's orientation (north up) comes from the coordinates: read them as it does
        state = state.with_(cf=array_view(arr, coordinates()))
    except ZarrError:
        pass  # unreadable coordinates: drawn as stored, as the window draws them
    spec = PlaneSpec(arr, state.plane_selection(), (state.y_dim, state.x_dim), state.channel_dim, state.complex_mode,
                     rows_up=state.rows_up, coordinates=coordinates)
    return narrowed(spec, plane or {})


def narrowed(spec: PlaneSpec, fixed: Mapping[int, int]) -> PlaneSpec:
    """``spec`` with every dimension ``fixed`` (``--slice``, in ``spec.array``'s indices) kept at
    its index, also where the plane would have shown it, and every dimension it leaves free
    shown: ``5,:,3`` of a 3-D array is the line it selects and ``3,4,5`` one value, never the
    plane around them. A narrowed spec shows no plane (``dims`` None), so it writes to .npy and
    .csv and is refused as a .png."""
    hit = [d for d, s in enumerate(spec.selection) if isinstance(s, slice) and d in fixed]
    if not hit:
        return spec
    selection = tuple(int(fixed[d]) if d in hit else s if d in fixed else slice(None)
                      for d, s in enumerate(spec.selection))
    return PlaneSpec(spec.array, selection, None, None, spec.complex_mode, decode=spec.decode,
                     coordinates=spec.coordinates)


def selected(spec: PlaneSpec) -> str:
    """What a spec that shows no plane selects, in words: "one value", "a line of 30 values"."""
    shape = spec.shape
    if not shape:
        return "one value"
    if len(shape) == 1:
        return f"a line of {shape[0]:,} values"
    return f"a {'x'.join(map(str, shape))} block of values"


def level_error(image: OmeImage, level: int) -> str | None:
    """Why ``--level`` names no readable level of ``image``'s first multiscale, or None when it does."""
    return pyramid_level_error(image.multiscales[0] if image.multiscales else None, image.path, level)


def pyramid_level_error(ms: Multiscale | None, path: str, level: int) -> str | None:
    """Why ``--level`` names no readable level of the pyramid ``ms`` (of the group at ``path``;
    None: metadata too broken to list levels), or None when it does."""
    readable = [lv.index for lv in ms.readable_levels] if ms is not None else []
    if level in readable:
        return None
    have = f"its readable levels are {', '.join(map(str, readable))}" if readable else "no level of it can be read"
    return f"--level {level}: the image at {path} has no such level ({have})"


def image_spec(image: OmeImage, plane: Mapping[int, int] | None = None, level: int | None = None,
               labels: tuple[LabelLayer, ...] = ()) -> PlaneSpec:
    """The plane the window shows first for an OME-Zarr image (``plane`` in level-0 indices, as
    ``--slice`` gives them; else the ``rdefs`` default Z and T), read whole from pyramid ``level``
    of its first multiscale (None: the finest readable one): the fixed indices are carried into
    that level as the view carries them; ``labels`` are drawn over a PNG. Raises ``ValueError``
    (with :func:`level_error`'s words) for a level that cannot be read."""
    from ..ome.view import image_state

    why = level_error(image, level) if level is not None else None
    state = image_state(image, plane) if why is None else None
    if state is None or not state.pyramid:
        raise ValueError(why or f"no level of the image {image.path} can be read")
    return state_spec(state.with_(labels=labels), state.pyramid[0].index if level is None else level, plane)


def state_spec(state: ViewState, level: int, fixed: Mapping[int, int] | None = None) -> PlaneSpec:
    """The plane of a pyramid's view ``state``, read whole from ``level``; a displayed dimension
    that ``fixed`` (``--slice``, in level-0 indices) names stays at its index (``narrowed``)."""
    from ..image.levels import level_views

    view = level_views(state.with_(level=level))[0]
    shown = state.plane_dims
    selection = tuple(slice(None) if d in shown else i for d, i in enumerate(view.indices))
    spec = PlaneSpec(view.array, selection, (state.y_dim, state.x_dim), state.channel_dim, state.complex_mode,
                     channels=state.channels if state.composite else (), labels=overlays(state, level))
    fixed = dict(fixed or {})
    if state.pyramid:  # a fixed level-0 index carried into this level, as the view carries the others
        fixed = {d: _level_index(state, view.index, d, i) if d in shown else i for d, i in fixed.items()}
    return narrowed(spec, fixed)


def _level_index(state: ViewState, level: int, dim: int, index: int) -> int:
    """Level-0 ``index`` of ``dim`` in pyramid ``level``, as the view carries a fixed index."""
    from ..ome import pyramid as arith

    levels = [lv for lv in state.pyramid or () if lv.array is not None]
    target = next(lv for lv in levels if lv.index == level)
    return int(arith.map_index(levels[0], target, dim, index))


def plane_nbytes(spec: PlaneSpec) -> int:
    """The bytes the full-resolution plane takes in memory (8 per element for objects and strings)."""
    return math.prod(spec.shape) * spec.array.dtype.itemsize


def export_format(path: str | os.PathLike[str]) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UnsupportedExport(path, f"the file name must end in {', '.join(FORMATS)}, not {suffix or 'nothing'!r}")
    return suffix


def export_plane(spec: PlaneSpec, path: str | os.PathLike[str], *, progress: Progress | None = None,
                 cancel: CancelToken | None = None, values: PlaneValues | None = None,
                 executor: ThreadPoolExecutor | None = None) -> Path:
    """Read ``spec``'s plane at full resolution and write it to ``path`` (.npy, .csv or .png);
    ``progress(done, total)`` counts chunks read. ``values`` computes the plane instead of
    reading it (a projection; ``spec.values`` where not given), written the same way. The
    plane, its label layers and a CSV's coordinates decode on ``executor`` (an export job's,
    from its context; None: zarrlib's default). Raises an :class:`ExportError`."""
    path = Path(path)
    values = values if values is not None else spec.values
    fmt = export_format(path)
    if fmt == ".png" and spec.dims is None and spec.array.ndim >= 2 and not is_table(spec.array):
        raise UnsupportedExport(path, f"{spec.label} is {selected(spec)}, and a .png holds a plane: write .npy or "
                                      ".csv, or leave two dimensions as ':' in --slice")
    if fmt == ".png" and not spec.renderable:
        raise UnsupportedExport(path, f"{spec.label} ({spec.array.dtype}) is not a plane of numbers to draw; "
                                      "write .npy or .csv")
    try:
        with replacing(path) as f:  # created first: a folder that cannot be written fails before the read
            data = (_read(spec, path, progress, cancel, executor, text=fmt == ".csv") if values is None
                    else _computed(values, path, progress, cancel, executor))
            if cancel is not None:
                cancel.raise_if_cancelled()
            if fmt == ".npy":
                data = fixed_width(data)
                np.save(f, data, allow_pickle=data.dtype.kind == "O")
            elif fmt == ".csv":
                write_csv(data, f, cancel, csv_axes(spec.array, spec.selection, spec.coordinates, executor=executor))
            else:
                write_image(spec, data, f, cancel, read_overlays(spec.labels, cancel, executor) if spec.labels else [])
    except ReadCancelled:
        raise ExportCancelled(path) from None
    except PngShapeError as e:
        raise UnsupportedExport(path, str(e)) from None
    except LabelExportError as e:
        raise ReadFailed(path, spec.label, str(e)) from None
    return path


def fixed_width(data: np.ndarray) -> np.ndarray:
    """Text as numpy's fixed-width unicode (bytes as fixed-width bytes): a ``.npy`` of strings
    loads without pickle, which a careful reader refuses. Mixed objects stay objects, and so do
    strings whose fixed width would cost more than a read may (one long string among many)."""
    if data.dtype.kind not in "OT" or data.size == 0:
        return data
    items = data.reshape(-1).tolist()
    kinds = {type(v) for v in items}
    if kinds <= {str} or kinds <= {bytes}:
        width = max(len(v) for v in items) or 1
        per_item = 4 * width if kinds <= {str} else width
        if data.size * per_item <= limits().read_bytes:
            return np.array(items, dtype=f"<U{width}" if kinds <= {str} else f"S{width}").reshape(data.shape)
    return data


def _read(spec: PlaneSpec, path: Path, progress: Progress | None, cancel: CancelToken | None,
          executor: ThreadPoolExecutor | None, text: bool = False) -> np.ndarray:
    """The plane as stored, or decoded (``spec.decode``) as every view shows it: CF times as
    datetime64 (their labels in a calendar numpy has not, and with ``text``, for a CSV)."""
    try:
        data = spec.array.read(spec.selection, cancel=cancel, progress=progress, executor=executor)
    except ReadCancelled:
        raise
    except ZarrError as e:
        raise ReadFailed(path, spec.label, str(e)) from None
    return decoding_of(spec.array).values(data, text=text, inplace=True) if spec.decode else data


def _computed(values: PlaneValues, path: Path, progress: Progress | None, cancel: CancelToken | None,
              executor: ThreadPoolExecutor | None) -> np.ndarray:
    try:
        return values(cancel, progress, executor=executor)
    except ReadCancelled:
        raise
    except ZarrError as e:
        raise ReadFailed(path, values.label, str(e)) from None


# -- PNG ------------------------------------------------------------------------------------
def oriented(spec: PlaneSpec, data: np.ndarray) -> np.ndarray:
    """The read plane as (rows, columns[, channels]) as displayed (bottom-up where the window
    draws it so): a view, not a copy."""
    assert spec.dims is not None
    y, x = spec.dims
    kept = [d for d, s in enumerate(spec.selection) if isinstance(s, slice)]
    order = [kept.index(y), kept.index(x)] + ([kept.index(spec.channel_dim)] if spec.channel_dim is not None else [])
    out = np.transpose(data, order + [i for i in range(data.ndim) if i not in order])
    return out[::-1] if spec.rows_up else out


def image_channels(spec: PlaneSpec) -> int:
    """3 (RGB) or 4 (RGBA): RGBA for a 4-channel colour plane or a lookup table with alpha."""
    if spec.channel_dim is not None and not spec.channels:
        return spec.array.shape[spec.channel_dim]
    return 3 if spec.lut is None or spec.channels else spec.lut.shape[1]


def render(values: np.ndarray, levels: tuple[float, float], lut: np.ndarray | None) -> np.ndarray:
    """Numbers (rows, columns[, channels]) to uint8 pixels as the display maps them
    (``image.pixels``): levels scale to the lookup table's N entries (clipped), or to 0..255 per
    channel without one; a NaN is ``contrast.NAN_RGBA``. RGB, or RGBA for a table with alpha or a
    4-channel colour plane."""
    out = rgba(values, levels, lut)
    channels = values.shape[-1] if values.ndim == 3 else 3 if lut is None else lut.shape[1]
    return np.ascontiguousarray(out[..., :channels])


def write_image(spec: PlaneSpec, data: np.ndarray, f: BinaryIO, cancel: CancelToken | None = None,
                label_planes: list[np.ndarray] | None = None) -> None:
    """The plane as a PNG, at full resolution, block by block of rows, with ``spec.labels``
    (their planes in ``label_planes``) drawn over it."""
    img = oriented(spec, data)
    height, width = img.shape[:2]
    if spec.channels and spec.channel_dim is not None:
        blocks = _composite_blocks(img, spec, cancel)
    else:
        levels = spec.levels or percentile_levels(displayable(data, spec.complex_mode))
        blocks = (render(displayable(np.ascontiguousarray(block), spec.complex_mode), levels, spec.lut)
                  for block in _row_blocks(img, cancel))
    if label_planes:
        blocks = _with_labels(blocks, spec, label_planes)
    write_png(f, height, width, image_channels(spec), blocks)


def _with_labels(blocks: Iterator[np.ndarray], spec: PlaneSpec, planes: list[np.ndarray]) -> Iterator[np.ndarray]:
    row = 0
    for block in blocks:
        yield blend(block, row, spec.labels, planes)
        row += block.shape[0]


def _row_blocks(img: np.ndarray, cancel: CancelToken | None) -> Iterator[np.ndarray]:
    step = max(1, BLOCK_ELEMENTS // max(1, img.shape[1]))
    for r in range(0, img.shape[0], step):
        if cancel is not None:
            cancel.raise_if_cancelled()
        yield img[r:r + step]


def _composite_blocks(img: np.ndarray, spec: PlaneSpec, cancel: CancelToken | None) -> Iterator[np.ndarray]:
    """A composite as the view draws it: each channel through its window (from the whole plane
    where the view has none yet, so that every block agrees) and colour."""
    settings = auto_windows(img, spec.channels, only_missing=True)
    for block in _row_blocks(img, cancel):
        yield np.round(composite(np.asarray(block, dtype=np.float32), settings) * 255).astype(np.uint8)
