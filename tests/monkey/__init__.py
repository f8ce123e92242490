"""A day of use in minutes: a seeded monkey that drives the window through random actions a
person could take (``actions.py``) over a corpus of good and hostile stores (``corpus.py``) and
checks after every step that the window stayed healthy (``health.py``): nothing raised that was
not reported, every job answered exactly once, the GUI thread never stalled. ``run.py`` runs it
and gathers the figures; ``python -m tests.monkey --minutes N`` runs it for longer than CI does.
"""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:  # the stores' writers live beside this package (ome_stores, cf_datasets)
    sys.path.insert(0, _TESTS)
