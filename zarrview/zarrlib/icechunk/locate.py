"""Recognise a repository in what a user typed, and open the version it names.

A folder is a repository when it holds a ``repo`` file (spec 2) or a ``refs/`` folder (spec
1). A URL cannot be listed everywhere, so a remote repository is recognised by its ``repo``
file, looked for when the location names a version, passes an Icechunk option, or ends in
``.icechunk`` (a plain Zarr store over HTTP costs no extra request).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import StoreError, StoreNotFoundError
from ..limits import limits
from ..storage.access import AUTHORIZE, policy_of
from ..storage.base import Store
from ..storage.location import CHAINS
from ..storage.references import is_fsspec_reference
from ..storage.local import local_path
from .store import IcechunkStore
from .versions import Version, require_version, split_version

OpenPlain = Callable[..., Store]


def _local_repository(loc: str) -> bool:
    path = local_path(loc)
    return path is not None and path.is_dir() and ((path / "repo").is_file() or (path / "refs").is_dir())


def open_repository(location: str, storage_options: Mapping[str, Any], open_plain: OpenPlain) -> Store | None:
    """The ``IcechunkStore`` of the repository ``location`` names, at the version it names; None
    where it names none (a zip or a reference set never holds one), for ``open_plain`` to open:
    the opener ``storage.location`` offers every location to."""
    if location.startswith(CHAINS) or is_fsspec_reference(location):
        return None
    options = dict(storage_options)
    version_option = options.pop("version", None)
    loc, version = split_version(location)
    if version_option is not None:
        parsed = (version_option if isinstance(version_option, Version)
                  else require_version(str(version_option), f"cannot open {location}: version={version_option!r}"))
        if version is not None and parsed != version:
            raise StoreError(f"cannot open {location}: it names version {version} and version={parsed}")
        version = parsed
    local = local_path(loc) is not None
    asked = version is not None  # authorize= alone does not: a window passes it to every store
    if local:
        if not _local_repository(loc):
            if asked:
                raise StoreNotFoundError(f"{loc} is not an Icechunk repository (no repo file and no refs/)")
            return None
    elif not asked and not loc.rstrip("/").lower().endswith(".icechunk"):
        return None
    authorize = options.pop(AUTHORIZE, None)
    base = open_plain(loc, **options)
    try:
        return IcechunkStore(base, version, policy_of(authorize, loc))
    except StoreNotFoundError:
        if asked:
            base.close()
            raise
        return base  # a remote location named *.icechunk that holds plain Zarr
    except BaseException:
        base.close()
        raise


def as_repository(store: Store, storage_options: Mapping[str, Any]) -> IcechunkStore | None:
    """``store`` opened as the main branch of the repository it holds, or None where it holds
    none (its ``repo`` file, or spec 1's main branch ref, is missing): for remote locations
    not recognised by name, tried only once no Zarr metadata was found there."""
    if isinstance(store, IcechunkStore):
        return None
    try:
        if store.get_bounded("repo", limits().metadata_bytes) is None and store.get_bounded("refs/branch.main/ref.json", 1 << 16) is None:
            return None
        return IcechunkStore(store, None, policy_of(storage_options.get(AUTHORIZE), store.url))
    except StoreNotFoundError:
        return None
