#!/usr/bin/env bash
# Build the one-folder zarrview application from a clean checkout.
#
#   packaging/build.sh            # in a fresh virtual environment under build/ (needs the package index)
#   packaging/build.sh --here     # with the current Python environment (what the test suite does)
#
# The bundle lands in ${ZARRVIEW_DIST:-dist}/zarrview (zarrview.app on macOS); run it with
# dist/zarrview/zarrview --demo. ZARRVIEW_BUNDLE_CLOUD=1 also bundles the S3/GCS drivers.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIST="${ZARRVIEW_DIST:-$ROOT/dist}"
WORK="${ZARRVIEW_WORK:-$ROOT/build/pyinstaller}"
cd "$ROOT"

if [[ "${1:-}" == "--here" ]]; then
    PY="${PYTHON:-python3}"
else
    python3 -m venv "$ROOT/build/venv"
    PY="$ROOT/build/venv/bin/python"
    "$PY" -m pip install -q --upgrade pip
    extras="codecs"
    [[ "${ZARRVIEW_BUNDLE_CLOUD:-0}" == "1" ]] && extras="codecs,cloud"
    "$PY" -m pip install -q ".[$extras]" "pyinstaller>=6.5"
fi

"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" "$ROOT/packaging/zarrview.spec"

echo "built $DIST/zarrview: $(du -sh "$DIST/zarrview" | cut -f1)"
