"""The workspace as it was when the tab attached: only those files, unchanged since, are evidence.

A file the agent created, rewrote or replaced during the episode holds its own words, not the
organization's; `Originals` keeps each file's (size, mtime_ns, ctime_ns, inode) from the job's start
and a file counts as original only while its lstat still matches (never following a link). The
ctime cannot be set back (`touch -r` restores mtime only), so a same-size rewrite is caught without
hashing any content.
"""

from __future__ import annotations

import stat
from pathlib import Path

from envs.safeio import lstat_inside, walk_regular

Signature = tuple[int, int, int, int]


def _signature(st: object) -> Signature:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)  # type: ignore[attr-defined]


class Originals:
    """Regular files under `root` at construction, by workspace-relative POSIX path."""

    def __init__(self, root: str | Path, skip: frozenset[str] = frozenset()) -> None:
        self.root = str(root)
        self.files: dict[str, Signature] = {rel: _signature(st) for rel, st in walk_regular(root, skip)}

    def original(self, rel: str) -> bool:
        """Whether `rel` was there at the start and is unchanged (same size, mtime, ctime and inode)."""
        start = self.files.get(rel)
        if start is None:
            return False
        st = lstat_inside(self.root, rel)
        return st is not None and stat.S_ISREG(st.st_mode) and _signature(st) == start

    def under(self, folders: list[str], limit: int) -> list[str]:
        """Original files under these folders ('' is the root), at most `limit` (sorted)."""
        prefixes = tuple(f"{d}/" if d else "" for d in folders)
        found = [rel for rel in self.files if rel.startswith(prefixes)]
        return found[:limit]
