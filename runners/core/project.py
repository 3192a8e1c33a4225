"""Where this checkout is, for the processes the driver starts (Ray's workers, the live report)."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def pythonpath(existing: str | None) -> str:
    """`PYTHONPATH` with this checkout first: a child imports the project from here, wherever it runs from."""
    return os.pathsep.join(filter(None, [str(PROJECT), existing]))
