"""Host-side access to files inside a tree the agent controls.

The agent can plant symlinks, FIFOs and device nodes, and can swap a folder for a link between
two of our calls. Every host-side open of a path inside the workspace therefore goes through
here: each component is opened relative to its parent's descriptor with `O_NOFOLLOW`, the last
one with `O_NONBLOCK` (a FIFO opens at once instead of hanging), and only regular files are
returned. Nothing here follows a symlink or blocks on a special file.

`write_json` is the project's one atomic JSON write (job records, judge and probe caches, the MCP
session's tab record): a reader sees the old file or the new one, never half of it.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafePath(OSError):
    """The path is not a regular file reached without symlinks (or does not exist)."""


def _parts(rel: str | os.PathLike[str]) -> list[str]:
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts) or Path(rel).is_absolute():
        raise UnsafePath(f"{rel!s}: expected a path relative to the workspace, without '..'")
    return parts


@contextmanager
def _dir_fd(root: str | os.PathLike[str], parts: list[str]) -> Iterator[int]:
    """A descriptor of `root/parts...`, each component opened without following links."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts:
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                raise UnsafePath(f"{name}: not a plain folder ({e.strerror})") from e
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def open_regular(root: str | os.PathLike[str], rel: str | os.PathLike[str]) -> BinaryIO:
    """Open `root/rel` for reading in binary mode, only if every step is a real folder and the end a regular file.

    Raises `UnsafePath` for a missing path, a symlink anywhere on the way, a FIFO, socket or device.
    """
    parts = _parts(rel)
    with _dir_fd(root, parts[:-1]) as dfd:
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=dfd)
        except OSError as e:
            raise UnsafePath(f"{rel!s}: cannot open ({e.strerror})") from e
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafePath(f"{rel!s}: not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_regular(root: str | os.PathLike[str], rel: str | os.PathLike[str], limit: int | None = None) -> bytes | None:
    """The bytes of `root/rel` (at most `limit`), or None when it is not a regular file reached without links."""
    try:
        with open_regular(root, rel) as f:
            return f.read() if limit is None else f.read(limit)
    except UnsafePath:
        return None


def lstat_inside(root: str | os.PathLike[str], rel: str | os.PathLike[str]) -> os.stat_result | None:
    """`lstat` of `root/rel` reached without following links on the way, or None when it is unreachable."""
    try:
        parts = _parts(rel)
        with _dir_fd(root, parts[:-1]) as dfd:
            return os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
    except OSError:
        return None


def walk_regular(
    root: str | os.PathLike[str], skip: frozenset[str] = frozenset(), links: bool = False
) -> Iterator[tuple[str, os.stat_result]]:
    """Every regular file under `root` as (relative posix path, stat), never entering a symlinked folder.

    `skip` holds top-level names not to enter. With `links`, symlinks are listed too (their lstat),
    never followed. Order is sorted per folder, so the walk is deterministic.
    """
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield from _walk(top, "", skip, links)
    finally:
        os.close(top)


def _walk(dfd: int, prefix: str, skip: frozenset[str], links: bool) -> Iterator[tuple[str, os.stat_result]]:
    try:
        names = sorted(os.listdir(dfd))
    except OSError:
        return
    for name in names:
        if not prefix and name in skip:
            continue
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            continue
        rel = f"{prefix}{name}"
        if stat.S_ISREG(st.st_mode) or (links and stat.S_ISLNK(st.st_mode)):
            yield rel, st
        elif stat.S_ISDIR(st.st_mode):
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=dfd)
            except OSError:
                continue
            try:
                yield from _walk(sub, rel + "/", skip, links)
            finally:
                os.close(sub)


def open_for_write(root: str | os.PathLike[str], rel: str | os.PathLike[str]) -> BinaryIO:
    """Open `root/rel` for writing (created or truncated), making missing folders, never through a link.

    Raises `UnsafePath` when a folder on the way is a link or not a folder, or the end is not a regular file.
    """
    parts = _parts(rel)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts[:-1]:
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            except OSError as e:
                raise UnsafePath(f"{name}: cannot make the folder ({e.strerror})") from e
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                raise UnsafePath(f"{name}: not a plain folder ({e.strerror})") from e
            os.close(fd)
            fd = nxt
        return create_in(fd, parts[-1], truncate=True)
    finally:
        os.close(fd)


def create_in(dir_fd: int, name: str, truncate: bool = False) -> BinaryIO:
    """Open `name` in the folder `dir_fd` for writing without following a link or blocking on a FIFO.

    With `truncate`, an existing regular file is emptied; otherwise anything at `name` is removed
    first and a new file made (`O_EXCL`), so a planted link or FIFO is replaced, never written through.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    if truncate:
        flags |= os.O_TRUNC
    else:
        flags |= os.O_EXCL
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise UnsafePath(f"{name}: cannot replace ({e.strerror})") from e
    try:
        fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
    except OSError as e:
        raise UnsafePath(f"{name}: cannot open for writing ({e.strerror})") from e
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePath(f"{name}: not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temp file in the same folder, synced, then renamed over `path`).

    Values JSON does not know are written as their text (`default=str`); on any failure the old
    file stays and the temp file is removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1, ensure_ascii=False, default=str)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
