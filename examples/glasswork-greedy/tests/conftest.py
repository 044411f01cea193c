"""Let the suite run from a checkout too: when the package is not installed, import it from src/.

Installed (``pip install -e .`` or a wheel), the installed copy is used and this does nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("glasswork_greedy") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
