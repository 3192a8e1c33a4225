"""Writing the report's files: whole, under a temporary name, never through a link in their place."""

from __future__ import annotations

import os
from pathlib import Path

REPORT_DIR = "report"  # in the sweep folder


def _written(path: Path, text: str) -> Path:
    """`text` in a temporary file beside `path`. Text the agent made that is not valid Unicode (a
    lone surrogate: a name that is not UTF-8) is written as its escape, `\\udcff`: a JSON escape
    inside the page's data, visible text elsewhere; names are shown as `\\xff` where the page shows
    them (`shown`)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(text)
    return tmp


def write_page(path: Path, text: str) -> None:
    """Renamed over the page (a link in its place is replaced, never followed)."""
    os.replace(_written(path, text), path)


def write_new(path: Path, text: str) -> bool:
    """Only where nothing is at `path` when the page is done (a hard link fails on anything there):
    a build never writes over the page the sweep's driver wrote for a job that finished meanwhile.
    False when something was there."""
    tmp = _written(path, text)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: checked, then renamed (a narrow window)
        if os.path.lexists(path):
            return False
        os.replace(tmp, path)
        return True
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
