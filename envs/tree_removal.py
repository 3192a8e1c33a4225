"""Removing a small tree in this process: what `safeio.remove_tree` tries before it runs `rm -rf`.

Each job removes a few folders when it ends (its workspace, the shell's scratch, the job's scratch);
starting `rm` costs ~2 ms of CPU each time, more than removing a task's few dozen files. A tree is
removed here when it is shallow and small; anything unusual (deeper than `MAX_DEPTH`, more than
`MAX_NAMES` names, another file system, a name that cannot be removed) stops this removal, and `rm
-rf`, which takes any depth, removes what is left. No link is followed: each folder is opened
relative to its parent with `O_NOFOLLOW`, and a link is removed as a name.
"""

from __future__ import annotations

import os
import stat

MAX_DEPTH = 32
MAX_NAMES = 20_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _Unusual(Exception):
    """This tree is left to `rm -rf`."""


def remove_small_tree(path: str) -> bool:
    """Remove `path` (a folder, a file or a link) if it is small and shallow; True when it is gone.
    False leaves it, perhaps in part, for `rm -rf`."""
    path = os.path.abspath(path)
    try:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(path)
            return True
        parent = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _remove(parent, os.path.basename(path), st.st_dev, 0, [MAX_NAMES])
        finally:
            os.close(parent)
    except FileNotFoundError:
        return not os.path.lexists(path)
    except (OSError, _Unusual):
        return False
    return True


def _remove(parent: int, name: str, dev: int, depth: int, budget: list[int]) -> None:
    """Remove the folder `name` of the folder descriptor `parent`, and what it holds."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    try:
        if os.fstat(fd).st_dev != dev:
            raise _Unusual
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        budget[0] -= len(entries)
        if budget[0] < 0:
            raise _Unusual
        for entry, is_dir in entries:
            if not is_dir:
                os.unlink(entry, dir_fd=fd)
            elif depth >= MAX_DEPTH:
                raise _Unusual
            else:
                _remove(fd, entry, dev, depth + 1, budget)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)
