"""Qt runs offscreen in tests; settings go to a throwaway location."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
