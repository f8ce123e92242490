"""Entry point of the PyInstaller bundle (the same as the ``zarrview`` console script)."""

import sys

from zarrview.cli import main

if __name__ == "__main__":
    sys.exit(main())
