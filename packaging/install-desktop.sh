#!/usr/bin/env bash
# Register zarrview with the desktop (menu entry, icon, "Open with" for *.zarr folders and zips).
#
#   packaging/install-desktop.sh                # for this user, under ~/.local/share
#   PREFIX=/usr/local packaging/install-desktop.sh   # system-wide (as root)
#
# `zarrview` must be on PATH (pip install, or a link to dist/zarrview/zarrview).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARE="${PREFIX:+$PREFIX/share}"
SHARE="${SHARE:-${XDG_DATA_HOME:-$HOME/.local/share}}"
ID=io.github.zarrview.zarrview

install -Dm644 "$ROOT/packaging/linux/$ID.desktop" "$SHARE/applications/$ID.desktop"
install -Dm644 "$ROOT/packaging/linux/$ID.metainfo.xml" "$SHARE/metainfo/$ID.metainfo.xml"
install -Dm644 "$ROOT/packaging/linux/zarrview-mime.xml" "$SHARE/mime/packages/$ID.xml"
for size in 16 24 32 48 64 128 256 512; do
    install -Dm644 "$ROOT/resources/icons/zarrview-$size.png" "$SHARE/icons/hicolor/${size}x${size}/apps/$ID.png"
done
install -Dm644 "$ROOT/resources/icons/zarrview.svg" "$SHARE/icons/hicolor/scalable/apps/$ID.svg"

command -v update-mime-database >/dev/null && update-mime-database "$SHARE/mime" || true
command -v update-desktop-database >/dev/null && update-desktop-database "$SHARE/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$SHARE/icons/hicolor" || true
echo "installed the zarrview desktop entry under $SHARE"
