"""Bundled data: icons, the demo dataset and screenshots (installed as zarrview.resources)."""
