"""What the headless subcommands share: storage options from ``--authorize``, errors as one
line that says how to allow a refused read, and a parser whose errors are one line too."""

from __future__ import annotations

import argparse
import sys
from typing import Any

AUTHORIZE_HELP = ("a URL prefix (file:///data/, s3://bucket/, https://host/) that virtual chunks and references may "
                  "read from besides the store's own location; repeat for several")


def storage_options(authorize: list[str] | None) -> dict[str, Any]:
    """Storage options from the command line: reads outside the store only where allowed."""
    return {"authorize": authorize} if authorize else {}


def said(error: BaseException) -> str:
    """An error as the command line prints it; a refused read outside the store says how to allow it."""
    from .zarrlib.storage.access import AccessDeniedError

    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, AccessDeniedError):
        cause = cause.__cause__ or cause.__context__
    hint = f" (allow it with --authorize {cause.prefix})" if isinstance(cause, AccessDeniedError) else ""
    return f"zarrview: {error}{hint}"


class OneLineParser(argparse.ArgumentParser):
    """Malformed arguments are one line and exit status 2, not a usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"zarrview: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)
