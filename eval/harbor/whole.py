"""A folder that appears whole or not at all: built in a temporary sibling, renamed into place.

The import, the ATIF export and the exported verifier write records and trials this way: a failure
half-way (a hostile file, a full disk, a kill) leaves the temporary folder at worst, never a torn
record; what was at the destination before (an earlier import, files planted there) is replaced,
never merged with the new folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def whole_folder(dest: Path) -> Iterator[Path]:
    """Yield an empty temporary folder beside `dest`; on success it replaces `dest` in one rename."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name[:60]}.", suffix=".partial", dir=dest.parent))
    try:
        yield tmp
        _replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace(new: Path, dest: Path) -> None:
    old = None
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{dest.name[:60]}.", suffix=".old", dir=dest.parent))
        os.rename(dest, old / dest.name)
    os.rename(new, dest)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
