"""Starting the window: arguments, the demo, and ``--screenshot`` for headless checks."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from .. import __version__
from ..viewing.image.slice_spec import SLICE_HELP, ArgumentError, SliceText, parse_slice, read_slice  # noqa: F401
from ..viewing.saved_views import add_look_arguments, saved_from_arguments

if TYPE_CHECKING:
    from ..scheduling import WorkerPool


_COMMANDS = """commands without a window:
  zarrview tree LOCATION                every node, one line each
  zarrview info LOCATION[::/node/path]  full metadata, attributes, stored chunks and bytes
  zarrview export LOCATION::/node [--slice 5,:,:] [--level N] [--raw] -o FILE.npy|.csv|.png
                                        one plane at full resolution (of an OME-Zarr image's
                                        level N), as the window shows it; CF values (masked,
                                        unpacked) unless --raw
  zarrview audit LOCATION[::/node] [--json]
                                        how each array below the node is stored: chunks stored
                                        and missing, bytes, compression, shard fill, a map
  zarrview validate LOCATION[::/node] [--json]
                                        where the store breaks the Zarr specifications and the
                                        OME-NGFF, GeoZarr and AnnData rules; exit status 1 on errors
  zarrview changes REPO@A REPO@B [--json]
                                        groups and arrays added, removed and changed between two
                                        versions of an Icechunk repository, and the chunks written
  zarrview snippet LOCATION::/node [--slice 5,:,:] [--level N] [--raw] --for zarr|xarray|tensorstore|zarrlib
                                        Python that reads exactly what export writes, into `data`
  zarrview decoders                     the native decoders stored bytes reach, with their versions

--slice by name: time=2001-03-04,level=500 fixes each named dimension at the value of its
coordinate variable nearest to the one given (a date, a number, 45.25N, 12.5W); the choice is
printed. level=#2 is index 2; a dimension without a coordinate variable takes an index (x=5)."""


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="zarrview", description="Browse Zarr v2 and v3 hierarchies.", epilog=_COMMANDS,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("location", nargs="?", help="folder, .zip, .ozx, or URL, optionally with ::/node/path; or a "
                                               "view saved as .zarrview, or a zarrview:// link")
    p.add_argument("--demo", action="store_true", help="open the bundled demo dataset")
    add_look_arguments(p)
    p.add_argument("--screenshot", metavar="FILE", help="save a PNG of the window once loaded, then exit")
    p.add_argument("--version", action="version", version=f"zarrview {__version__}")
    return p.parse_args(list(argv))


def run_app(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    from ..scheduling import WorkerPool

    # every background job of the app runs here, and every read of the app decodes on its
    # executor: ``--slice``'s coordinates, read before the window opens, too
    pool = WorkerPool()
    try:
        return _run(args, pool)
    finally:
        pool.close()


def _run(args: argparse.Namespace, pool: WorkerPool) -> int:
    try:  # malformed values are one line and exit status 2, before any window opens
        args = view_arguments(args)
        if args.demo and not args.location:
            from .resources import demo_path

            args.location = f"{demo_path()}::/cells"
            args.slice = args.slice or "12,:,:"
        request = read_slice(args.slice)
        saved = saved_from_arguments(args) if args.location else None
        plane = plane_argument(args, request, executor=pool.decode)
    except ArgumentError as e:
        print(e, file=sys.stderr)
        return 2
    if plane is None:
        return 1
    from .platform_check import explain, missing_xcb_libraries, no_display, uses_xcb

    if no_display():
        if not args.screenshot:
            print("zarrview: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); "
                  "--screenshot FILE works without one, as does QT_QPA_PLATFORM=offscreen", file=sys.stderr)
            return 3
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a headless screenshot needs no display
    if uses_xcb():  # Qt aborts the process without these: say what to install instead
        missing = missing_xcb_libraries()
        if missing:
            print(explain(missing), file=sys.stderr)
            return 3
    from PySide6.QtCore import QCoreApplication, QTimer
    from PySide6.QtWidgets import QApplication

    from .bridge import init_bridge
    from .gui_gc import collect_garbage_on_gui_thread
    from .icons import APP_ID, app_icon
    from .resources import demo_path
    from .window import MainWindow
    from ..zarrlib import tune_process

    tune_process()  # process-wide tuning is the program's choice: see zarrlib/tuning.py
    QCoreApplication.setOrganizationName("zarrview")
    QCoreApplication.setOrganizationDomain("zarrview.github.io")
    QCoreApplication.setApplicationName("zarrview")
    QCoreApplication.setApplicationVersion(__version__)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)  # the window's widgets need one: a bare QCoreApplication cannot show them
    app.setApplicationDisplayName("zarrview")
    app.setDesktopFileName(APP_ID)  # Wayland/X11 match the window to its .desktop file and icon
    app.setWindowIcon(app_icon())
    init_bridge()
    collect_garbage_on_gui_thread()
    window = MainWindow(pool)
    if args.screenshot:
        window.resize(1280, 820)  # screenshots are the same size whatever the saved geometry
        window.remembers_layout = False
    window.show()
    if saved is not None:
        window.open_view(saved, plane=plane)
    if args.screenshot:
        _screenshot_when_settled(window, args.screenshot, QTimer)
    code = app.exec()
    window.close()
    pool.close()
    window.deleteLater()
    del window
    app.processEvents()
    import gc

    gc.collect()  # collect Qt wrappers while Qt still exists, not during interpreter teardown
    return code


def view_arguments(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` where the location is a saved view (``.zarrview``) or a ``zarrview://`` link:
    the arguments it stands for, with this command line's ``--screenshot``; others as they are.
    Raises ``ArgumentError``."""
    from ..viewing.saved_views import MOST_BYTES, SCHEME, ViewFileError, flags, from_json, is_view, link_arguments

    location = args.location
    if location is None or not is_view(location):
        return args
    given = [flag.replace("_", "-") for flag in ("slice", "axes", "region", "level", "contrast", "colormap", "complex",
                                                 "channels", "tools", "options", "compare", "compare_options",
                                                 "compare_mode") if getattr(args, flag) is not None] \
        + (["raw"] if args.raw else [])
    if given:
        raise ArgumentError(f"zarrview: {location} holds its own view: --{', --'.join(given)} cannot be added to it")
    if location.startswith(f"{SCHEME}://"):
        argv = link_arguments(location)
    else:
        try:
            with open(location, "rb") as f:
                text = f.read(MOST_BYTES + 1)
        except OSError as e:
            raise ViewFileError(f"zarrview: cannot read the view {location}: {e.strerror or e}") from None
        argv = flags(from_json(text, location))
    again = parse_args([*argv, *(["--screenshot", args.screenshot] if args.screenshot else [])])
    if again.location is None or is_view(again.location):
        raise ArgumentError(f"zarrview: {location} names no store to open")
    return again


def plane_argument(args: argparse.Namespace, request: SliceText, *,
                   executor: ThreadPoolExecutor | None = None) -> dict[int, int] | None:
    """The indices ``--slice`` gives: named dimensions are matched against the node to open
    (its coordinate variables read now, before any window, decoded on ``executor``: the app's
    worker pool's; and each choice printed); None after saying why the node cannot be opened.
    Raises ``ArgumentError``."""
    from ..viewing.image.slice_spec import choose_plane, shown_error

    if not request.named:
        why = shown_error(request.positions, request.positions.rank or 0)
        if why is not None:
            raise ArgumentError(f"zarrview: {why}")
        return request.positions
    from ..viewing.decision import looked_at
    from ..zarrlib import ZarrError, open as open_node

    location = args.location
    if location is None:
        raise ArgumentError("zarrview: --slice names dimensions: give the LOCATION of an array to match them in")
    try:
        node = open_node(location)
    except ZarrError as e:
        print(f"zarrview: {e}", file=sys.stderr)
        return None
    try:
        plane, choices = choose_plane(looked_at(node), request, plane_only=True, executor=executor)
    finally:
        node.store.close()
    for choice in choices:
        print(f"zarrview: --slice {choice}", file=sys.stderr)
    return plane


def _screenshot_when_settled(window: object, path: str, timer_cls: object) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from .window import MainWindow

    assert isinstance(window, MainWindow)
    start = time.monotonic()
    settled_since: list[float | None] = [None]

    def check() -> None:
        now = time.monotonic()
        if window.is_settled():
            settled_since[0] = settled_since[0] or now
        else:
            settled_since[0] = None
        if (settled_since[0] is not None and now - settled_since[0] > 0.4) or now - start > 60:
            picture = window.grab()
            problem = window.data.problem or window.data.image.render_error
            if settled_since[0] is None:
                problem = problem or "the window was still reading after 60 s"
            if not picture.save(path):
                problem = f"cannot write the screenshot to {path}"
            if problem is not None:  # the picture shows the error; the exit status and stderr say it too
                print(f"zarrview: {' '.join(problem.split())}", file=sys.stderr)
                QApplication.exit(1)
                return
            print(f"zarrview: saved {path} ({picture.width()}x{picture.height()})")
            QApplication.quit()
        else:
            QTimer.singleShot(50, check)

    QTimer.singleShot(200, check)
