"""zarrview's packages are layers: each may use the ones below it, never one above.

    zarrlib  <  scheduling  <  viewing  <  app        (top-level modules: cli, describe, ...)

zarrlib is the reading library (scripts, the CLI, worker processes), scheduling runs reads
on threads, viewing is the view-model the window shows; none of them may pull in Qt or
pyqtgraph, and only app may use the top-level modules. Checked two ways, over every module
of every package found in ``zarrview/`` (a new package fails here until it is given a layer):

* statically, every ``import``/``from ... import`` in the source (inside functions and
  ``TYPE_CHECKING`` blocks too, so a lazy upward import is caught before anything runs it),
  and ``importlib.import_module``/``__import__`` of a constant name;
* at run time, each package's modules imported one by one in a fresh interpreter (nothing
  else in the test session has loaded Qt or app first), with ``sys.modules`` checked after
  each import for what it brought in.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import zarrview

pytestmark = pytest.mark.timeout(300)

#: the layers, lowest first
LAYERS = ("zarrlib", "scheduling", "viewing", "app")
#: Qt and its plotting library, which only ``app`` may import
QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6", "PySide2", "shiboken2")
ROOT = Path(zarrview.__file__).resolve().parent


def packages() -> list[str]:
    return sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())


def top_level_modules() -> list[str]:
    return sorted(p.stem for p in ROOT.glob("*.py") if p.stem != "__init__")


def modules(package: str) -> dict[str, Path]:
    """Every module of ``zarrview.<package>`` (subpackages included) by dotted name."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def forbidden_for(package: str) -> tuple[str, ...]:
    """Module names (and their submodules) that ``zarrview.<package>`` must not import."""
    above = LAYERS[LAYERS.index(package) + 1:]
    if not above:
        return ()
    return (*(f"zarrview.{p}" for p in above), *(f"zarrview.{m}" for m in top_level_modules()), *QT_MODULES)


def is_within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _absolute(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name ``from <level dots><target> import ...`` refers to in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imported_names(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the source, wherever it stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            yield node.lineno, base
            for alias in node.names:  # ``from zarrview import app`` imports a module by its name
                yield node.lineno, f"{base}.{alias.name}"
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and _is_import_call(node.func):
            yield node.lineno, node.args[0].value


def _is_import_call(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id in ("__import__", "import_module")) or \
        (isinstance(func, ast.Attribute) and func.attr == "import_module")


def test_every_package_has_a_layer() -> None:
    found = packages()
    assert {"zarrlib", "scheduling", "app"} <= set(found), found
    assert set(found) <= set(LAYERS), f"give {sorted(set(found) - set(LAYERS))} a place in LAYERS"


@pytest.mark.parametrize("package", [p for p in LAYERS if p != "app"])
def test_no_upward_import_in_the_source(package: str) -> None:
    if not (ROOT / package).is_dir():
        pytest.skip(f"zarrview.{package} does not exist yet")
    forbidden = forbidden_for(package)
    found = modules(package)
    assert found, package
    bad = [f"{path.relative_to(ROOT.parent)}:{line}: imports {name}"
           for module, path in found.items() for line, name in imported_names(module, path)
           if is_within(name, forbidden)]
    assert not bad, "\n".join(bad)


SCRIPT = r"""
import importlib, json, pkgutil, sys

package, forbidden = sys.argv[1], tuple(json.loads(sys.argv[2]))

def loaded():
    return {m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in forbidden)}

out = {}
before = loaded()
top = importlib.import_module(package)
out[package] = sorted(loaded() - before)
for info in pkgutil.walk_packages(top.__path__, package + "."):
    if info.name.rsplit(".", 1)[-1] == "__main__":
        continue
    before = loaded()
    importlib.import_module(info.name)
    out[info.name] = sorted(loaded() - before)
print(json.dumps(out))
"""


@pytest.mark.parametrize("package", [p for p in LAYERS if p != "app"])
def test_importing_every_module_loads_nothing_above(package: str) -> None:
    if not (ROOT / package).is_dir():
        pytest.skip(f"zarrview.{package} does not exist yet")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, f"zarrview.{package}", json.dumps(forbidden_for(package))],
                          capture_output=True, text=True, timeout=240, cwd=str(ROOT.parent), env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(out) == set(modules(package)) - {f"zarrview.{package}.__main__"}, "not every module was imported"
    bad = {module: sorted({_top(n) for n in names}) for module, names in out.items() if names}
    assert not bad, f"importing these loads modules above zarrview.{package}: {bad}"


def _top(name: str) -> str:
    """A loaded module as a message names it: Qt by its package, zarrview's by their module."""
    parts = name.split(".")
    return ".".join(parts[:3]) if parts[0] == "zarrview" else parts[0]


def test_the_checks_see_an_upward_import(tmp_path: Path) -> None:
    """The static check resolves relative, lazy and dynamic imports (a check that sees
    nothing passes everything)."""
    source = tmp_path / "cache.py"
    source.write_text("import numpy\nfrom .errors import StoreError\n"
                      "def f():\n    from ..app import window\n    from .. import viewing\n"
                      "    import PySide6.QtCore\n    importlib.import_module('zarrview.scheduling.scheduler')\n")
    names = {n for _, n in imported_names("zarrview.zarrlib.cache", source)}
    assert {"zarrview.zarrlib.errors", "zarrview.app", "zarrview.viewing", "PySide6.QtCore",
            "zarrview.scheduling.scheduler"} <= names
    forbidden = forbidden_for("zarrlib")
    assert sorted(n for n in names if is_within(n, forbidden)) == [
        "PySide6.QtCore", "zarrview.app", "zarrview.app.window", "zarrview.scheduling.scheduler", "zarrview.viewing"]


#: what runs work on threads: the app builds these around the view models, which own none
RUNNERS = {"Lane", "Driver", "Prefetch", "WorkerPool"}


def test_no_view_model_owns_a_lane_or_a_driver() -> None:
    """Every view model is run by a driver the app makes (``scheduling.Driver``): none in
    ``viewing`` imports a lane, a driver, a prefetcher or a pool to run itself."""
    bad = []
    for module, path in modules("viewing").items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module is not None and "scheduling" in node.module:
                bad += [f"{module}: imports {alias.name}" for alias in node.names if alias.name in RUNNERS]
    assert not bad, "\n".join(bad)


def test_the_app_creates_no_lanes_of_its_own() -> None:
    """Every read the app starts goes through a driver (``scheduling.Driver``) of a Qt-free model
    or of ``scheduling.Tasks``: no module in ``app`` imports a lane or a prefetcher to run work."""
    bad = []
    for module, path in modules("app").items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module is not None and "scheduling" in node.module:
                bad += [f"{module}: imports {alias.name}" for alias in node.names if alias.name in {"Lane", "Prefetch"}]
    assert not bad, "\n".join(bad)


def test_the_app_makes_one_worker_pool() -> None:
    """Every background job of the app runs on the one pool ``main`` makes and hands the window,
    which hands it on: no widget makes a pool of its own when given none (a silent second set of
    threads, with its own chunk cache)."""
    made = []
    for module, path in modules("app").items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "WorkerPool":
                made.append(f"{module}:{node.lineno}")
    assert [m.split(":")[0] for m in made] == ["zarrview.app.main"], made
