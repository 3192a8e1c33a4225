"""Host-side access to files inside a tree the agent controls.

The agent can plant symlinks, FIFOs and device nodes, and can swap a folder for a link between
two of our calls. Every host-side open of a path inside the workspace therefore goes through
here: each component is opened relative to its parent's descriptor with `O_NOFOLLOW`, the last
one with `O_NONBLOCK` (a FIFO opens at once instead of hanging), and only regular files are
returned. Nothing here follows a symlink or blocks on a special file.

`write_json` is the project's one atomic JSON write (job records, judge and probe caches, the MCP
session's tab record): a reader sees the old file or the new one, never half of it. What the runner
writes is made with FILE_MODE / DIR_MODE under the user's umask (never the 0600 of a temp file, never
more than 0644 / 0755), so colleagues on a shared file system can read records.
"""

from __future__ import annotations

import errno
import os
import posixpath
import secrets
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from envs.names import json_bytes
from envs.tree_removal import remove_small_tree

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# What the runner makes: readable by others, never more (the user's umask takes away from it).
FILE_MODE = 0o644
DIR_MODE = 0o755


class UnsafePath(OSError):
    """The path is not a regular file reached without symlinks (or does not exist)."""


def _parts(rel: str | os.PathLike[str]) -> list[str]:
    """The names of a relative path (`a//b/./c` is a, b, c), as `Path(rel).parts` gives them, without
    building a Path: the capture asks this for every name an output shows."""
    text = os.fspath(rel)
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or text.startswith("/"):
        raise UnsafePath(f"{rel!s}: expected a path relative to the workspace, without '..'")
    return parts


def open_regular(root: str | os.PathLike[str], rel: str | os.PathLike[str]) -> BinaryIO:
    """Open `root/rel` for reading in binary mode, only if every step is a real folder and the end a regular file.

    Raises `UnsafePath` for a missing path, a symlink anywhere on the way, a FIFO, socket or device.
    """
    parts = _parts(rel)
    if len(parts) == 1:  # no folder on the way: the name under root, its last step not followed
        try:
            fd = os.open(os.path.join(root, parts[0]), _FILE_FLAGS)
        except OSError as e:
            raise UnsafePath(f"{rel!s}: cannot open ({e.strerror})") from e
    else:
        with _folder_fd(root, parts[:-1]) as dfd:
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
        if len(parts) == 1:
            return os.lstat(os.path.join(root, parts[0]))
        with _folder_fd(root, parts[:-1]) as dfd:
            return os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
    except OSError:
        return None


def walk_regular(
    root: str | os.PathLike[str], skip: frozenset[str] = frozenset(), links: bool = False
) -> Iterator[tuple[str, os.stat_result]]:
    """Every regular file under `root` as (relative posix path, stat), never entering a symlinked folder.

    `skip` holds top-level names not to enter. With `links`, symlinks are listed too (their lstat),
    never followed. Order is sorted per folder, so the walk is deterministic; any depth.
    """
    for rel, st in Walk(root, skip):
        if stat.S_ISREG(st.st_mode) or (links and stat.S_ISLNK(st.st_mode)):
            yield rel, st


class Walk:
    """Every entry under `root` (files, folders, links, anything) as (relative posix path, lstat),
    folder by folder in sorted order, depth first; iterative, so a tree of any depth walks.

    Never follows a link: each folder is opened relative to its parent's descriptor with
    `O_NOFOLLOW`, and the walk holds one descriptor per level it is in. `enter(rel, st)` says
    whether to go into a folder (default: always); `max_names` bounds what is read of one folder
    (more names than that: the rest of it is not read and `truncated` is set), so memory stays
    bounded whatever an agent made. Folders that cannot be opened are passed over.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        skip: frozenset[str] = frozenset(),
        enter: Callable[[str, os.stat_result], bool] | None = None,
        max_names: int | None = None,
    ) -> None:
        self.root, self.skip, self.enter, self.max_names = root, skip, enter, max_names
        self.truncated = False

    def __iter__(self) -> Iterator[tuple[str, os.stat_result]]:
        stack: list[tuple[int, str, Iterator[str]]] = []
        try:
            top = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            stack.append((top, "", iter(self._names(top, ""))))
            while stack:
                dfd, prefix, names = stack[-1]
                name = next(names, None)
                if name is None:
                    os.close(stack.pop()[0])
                    continue
                try:
                    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                except OSError:
                    continue
                rel = prefix + name
                yield rel, st
                if stat.S_ISDIR(st.st_mode) and (self.enter is None or self.enter(rel, st)):
                    try:
                        sub = os.open(name, _DIR_FLAGS, dir_fd=dfd)
                    except OSError:
                        continue
                    stack.append((sub, rel + "/", iter(self._names(sub, rel + "/"))))
        finally:
            for dfd, _, _ in stack:
                os.close(dfd)

    def _names(self, dfd: int, prefix: str) -> list[str]:
        names = []
        try:
            with os.scandir(dfd) as it:
                for e in it:
                    if not prefix and e.name in self.skip:
                        continue
                    if self.max_names is not None and len(names) >= self.max_names:
                        self.truncated = True
                        break
                    names.append(e.name)
        except OSError:
            return []
        return sorted(names)


def open_for_write(root: str | os.PathLike[str], rel: str | os.PathLike[str]) -> BinaryIO:
    """Open `root/rel` for writing (created or truncated), making missing folders, never through a link.

    Raises `UnsafePath` when a folder on the way is a link or not a folder, or the end is not a regular file.
    """
    parts = _parts(rel)
    with _folder_fd(root, parts[:-1], make=True) as fd:
        return create_in(fd, parts[-1], truncate=True)


def make_link(root: str | os.PathLike[str], rel: str, target: str) -> None:
    """Make `root/rel` a relative symlink to `root/target` (both relative to root), making folders.

    For trees the runner writes (the record's deliverable): the link stays inside `root` wherever
    the tree is copied or moved."""
    parts = _parts(rel)
    _parts(target)
    text = posixpath.relpath(target, posixpath.dirname(rel) or ".")
    with _folder_fd(root, parts[:-1], make=True) as fd:
        os.symlink(text, parts[-1], dir_fd=fd)


@contextmanager
def _folder_fd(root: str | os.PathLike[str], parts: list[str], make: bool = False) -> Iterator[int]:
    """A descriptor of `root/parts...` (made with DIR_MODE where missing when `make`), each
    component opened without following links."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts:
            if make:
                try:
                    os.mkdir(name, DIR_MODE, dir_fd=fd)
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
        yield fd
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
        fd = os.open(name, flags, FILE_MODE, dir_fd=dir_fd)
    except OSError as e:
        raise UnsafePath(f"{name}: cannot open for writing ({e.strerror})") from e
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePath(f"{name}: not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


def copy_sparse(src: BinaryIO, dst: BinaryIO, size: int) -> None:
    """Copy the first `size` bytes of an opened regular file into an empty one, holes kept.

    Only the data the file holds is copied (`SEEK_DATA`/`SEEK_HOLE`, in the kernel with
    `copy_file_range` where it can: a reflink on XFS/btrfs); a hole stays a hole, so a sparse
    200 MB file of 4 KB of data costs 4 KB again, not 200 MB."""
    fi, fo = src.fileno(), dst.fileno()
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fi, pos, os.SEEK_DATA)
            end = min(os.lseek(fi, start, os.SEEK_HOLE), size)
        except OSError as e:
            if e.errno == errno.ENXIO:  # only a hole is left
                break
            if e.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                raise
            start, end = pos, size  # a file system that cannot tell: all of it is data
        if start >= size:
            break
        _copy_range(fi, fo, start, end)
        pos = end
    os.ftruncate(fo, size)


def _copy_range(fi: int, fo: int, start: int, end: int) -> None:
    pos = start
    while pos < end:
        try:
            n = os.copy_file_range(fi, fo, end - pos, pos, pos)
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                raise
            n = 0
        if n == 0:  # not in the kernel here (or the file shrank): by hand
            chunk = os.pread(fi, min(1 << 20, end - pos), pos)
            if not chunk:
                return
            n = os.pwrite(fo, chunk, pos)
        pos += n


def remove_tree(path: str | os.PathLike[str], check: bool = False) -> None:
    """Remove a folder the agent may have filled, whatever its depth (`rm -rf`: Python's rmtree
    recurses and fails past ~1,000 levels); never follows a link; a missing path is fine. A small,
    shallow tree is removed in this process instead (envs/tree_removal.py: starting rm costs more).
    `check`: raise OSError when something could not be removed."""
    if not os.path.lexists(path) or remove_small_tree(os.fspath(path)):
        return
    rm = shutil.which("rm", path=os.defpath) or "rm"  # the system's, whatever PATH the caller has
    proc = subprocess.run([rm, "-rf", "--one-file-system", "--", os.fspath(path)], capture_output=True)
    if check and proc.returncode != 0:
        raise OSError(f"removing {os.fsdecode(path)} failed: {os.fsdecode(proc.stderr).strip()[-500:]}")


def make_dirs(path: str | os.PathLike[str]) -> None:
    """`mkdir -p` with DIR_MODE for every folder it makes (os.makedirs gives the parents 0o777)."""
    missing = []
    p = Path(path)
    while not p.is_dir():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            if not d.is_dir():
                raise


def open_append(path: Path, readable: bool = False) -> BinaryIO:
    """`path` opened for appending (made with FILE_MODE), never through a link at its name;
    `readable`: its descriptor can also be read (`os.pread`), e.g. to look at its last byte."""
    make_dirs(path.parent)
    access = os.O_RDWR if readable else os.O_WRONLY
    fd = os.open(path, access | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    return os.fdopen(fd, "ab")


def write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """Write a file atomically (temp file in the same folder, synced, then renamed over `path`).

    Made with FILE_MODE under the user's umask; on any failure (a full disk included) the old file
    stays and the temp file is removed. `durable=False` skips the sync, for files whose readers
    take a torn copy (a crash before the data reached the disk) for an absent one: the call cache."""
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, FILE_MODE)
    except FileNotFoundError:  # its folder first (looked for only when missing: a stat per write saved)
        make_dirs(path.parent)
        fd = os.open(tmp, flags, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any, durable: bool = True) -> None:
    """Write JSON atomically (`write_bytes` of `json_bytes(obj, indent=1)`).

    Values JSON does not know are written as their text (`default=str`); names that are not UTF-8
    stay lossless (`json_bytes`)."""
    write_bytes(path, json_bytes(obj, indent=1), durable)
