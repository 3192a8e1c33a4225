"""What the agent left in its workspace, and the record's bounded copy of it (the deliverable).

`diff_workspace` walks the workspace as the agent left it (never following a link, never opening
anything but regular files) and compares it with where it came from: the files created or
modified, the links, the files deleted. `copy_deliverable` copies that into the record's
`deliverable/`, bounded whatever the agent made:

- a link is recorded as a link (a relative symlink inside the deliverable to the file that holds
  its bytes), so a file is never copied twice: nine links to a file are nine symlinks; a link to
  a file the agent did not change gets that file's bytes once, at the first link's path;
- holes are kept (`safeio.copy_sparse`): a sparse file costs in the record what it costs in the
  workspace;
- at most `max_files` files and links, holding at most `max_bytes` bytes as a reader sees them
  (a link counts the size of its file, a sparse file its whole size): a bound on every copy of the
  record (its disk, an S3 upload, what judges read);
- paths at most MAX_PATH_BYTES long with at most MAX_DEPTH folders (so that every reader of the
  record can open and walk them); the walk reads at most `2 * max_files + MAX_LISTED` entries
  that are not the task's own, so a million files cost what ten thousand do.

What does not fit is left out and listed (`Delivery.left_out`, `result.json`), so that judges see
it as missing and never as the workspace's original file; past MAX_LISTED names, `rest` says that
every file not in the deliverable counts as left out. Of the permission bits only the owner's
execute bit is copied (an evaluator may run what the agent built): files are made 0644, or 0744 when
the agent's was executable, and folders 0755, under the user's umask (never setuid, setgid, sticky or
writable by others).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from envs.safeio import (
    UnsafePath,
    Walk,
    copy_sparse,
    lstat_inside,
    make_dirs,
    make_link,
    open_for_write,
    open_regular,
)
from envs.workspace import BOOKKEEPING_DIR, check_rel, source_files

MAX_PATH_BYTES = 1024  # a delivered path's length: the record's folder + this stays under PATH_MAX
MAX_DEPTH = 32  # folders in a delivered path: readers that recurse (os.walk, rglob, rmtree) stay far from their limits
MAX_LISTED = 1000  # left-out names listed in result.json; past it, `rest`


@dataclass
class Diff:
    """The workspace against its origin. Paths are workspace-relative, sorted."""

    changed: list[str] = field(default_factory=list)  # regular files created or modified
    deleted: list[str] = field(default_factory=list)  # files of the origin that are gone
    links: dict[str, str] = field(default_factory=dict)  # symlink -> the regular file inside it resolves to
    unwalked: list[str] = field(default_factory=list)  # folders not entered ("a/b/"): too deep or too long
    cut: bool = False  # the walk stopped at its budget: what it did not reach is unknown (`deleted` then empty)


@dataclass
class Delivery:
    """What the record's deliverable holds, and what it lacks."""

    files: list[str] = field(default_factory=list)  # files and links in the record, sorted
    left_out: list[str] = field(default_factory=list)  # changed files (and "folder/"s) the record lacks
    rest: bool = False  # more was left out than listed: every file not in `files` counts as left out
    limits_hit: list[str] = field(default_factory=list)  # deliverable_files | _bytes | _paths | _entries


def diff_workspace(
    source: Path | None, stage: dict[str, Path] | None, workspace: Path, max_files: int | None = None
) -> Diff:
    """The workspace against `source` plus `stage` (a staged file wins over a source file at its path).

    A file is unchanged when size and mtime match its origin; when only the mtime differs the
    contents decide. `.runningtab/` is ignored; FIFOs, sockets and devices are not files. With
    `max_files`, the walk stops after `2 * max_files + MAX_LISTED` entries not of the origin (`cut`).
    """
    origin = dict(source_files(Path(source))) if source is not None else {}
    for rel, src in (stage or {}).items():
        origin[str(check_rel(rel))] = Path(src)
    origin_dirs = {parent for rel in origin for parent in _parents(rel)}
    budget = None if max_files is None else 2 * max_files + MAX_LISTED
    root = os.path.realpath(workspace)
    diff = Diff()

    def enter(rel: str, st: os.stat_result) -> bool:
        if rel in origin_dirs or (rel.count("/") < MAX_DEPTH and len(os.fsencode(rel)) < MAX_PATH_BYTES):
            return True
        diff.unwalked.append(rel + "/")
        return False

    walk = Walk(root, frozenset({BOOKKEEPING_DIR}), enter, None if budget is None else len(origin) + budget)
    seen, new = set(), 0
    for rel, st in walk:
        if stat.S_ISREG(st.st_mode) and rel in origin:
            seen.add(rel)
            if _differs(root, rel, st, origin[rel]):
                diff.changed.append(rel)
            continue
        if stat.S_ISDIR(st.st_mode) and rel in origin_dirs:
            continue
        new += 1
        if budget is not None and new > budget:
            diff.cut = True
            break
        if stat.S_ISREG(st.st_mode):
            diff.changed.append(rel)
        elif stat.S_ISLNK(st.st_mode) and (target := _inside_target(root, rel)) is not None:
            diff.links[rel] = target
            seen.add(rel)
    diff.cut = diff.cut or walk.truncated
    diff.changed.sort()
    diff.deleted = [] if diff.cut else sorted(rel for rel in origin if rel not in seen)
    return diff


def copy_deliverable(workspace: Path, diff: Diff, dest: Path, max_files: int, max_bytes: int) -> Delivery:
    """Copy `diff`'s files and links to `dest` (module doc); returns what it holds and what it lacks.

    The workspace is read through `envs/safeio.py`; a file that is no longer a regular file inside
    it (swapped for a link or a FIFO after the diff) is left out. Errors writing `dest` (a full
    disk) are raised, with no partly written file left behind."""
    copier = _Copier(os.path.realpath(workspace), dest, max_files, max_bytes)
    out = copier.out
    out.rest = diff.cut
    if diff.cut:
        out.limits_hit.append("deliverable_entries")
    for rel in diff.unwalked:
        copier.leave(rel, "deliverable_paths")
    for rel in diff.changed:
        copier.file(rel, rel)
    changed = set(diff.changed)
    for rel in sorted(diff.links):
        target = diff.links[rel]
        if target in copier.held:
            copier.link(rel, copier.held[target], copier.sizes[target])
        elif target in changed:  # a file that was itself left out
            copier.leave(rel, None)
        else:  # an unchanged file: its bytes once, at this link's path
            copier.file(rel, target)
    out.files.sort()
    return out


def copy_tree(src: Path, dest: Path, max_files: int, max_bytes: int, keep: Callable[[str], bool] = lambda rel: True) -> Delivery:
    """A bounded copy of the folder `src` (a record, or a workspace without an origin) to `dest`, its
    links kept as links, as the deliverable is copied; `keep` chooses by relative path."""
    diff = diff_workspace(None, None, src, max_files)
    diff.changed = [rel for rel in diff.changed if keep(rel)]
    diff.links = {rel: target for rel, target in diff.links.items() if keep(rel)}
    make_dirs(dest)
    return copy_deliverable(src, diff, dest, max_files, max_bytes)


class _Copier:
    def __init__(self, root: str, dest: Path, max_files: int, max_bytes: int) -> None:
        self.root, self.dest, self.max_files, self.max_bytes = root, dest, max_files, max_bytes
        self.out = Delivery()
        self.bytes = 0
        self.held: dict[str, str] = {}  # workspace file (link-free) -> the record's path holding its bytes
        self.sizes: dict[str, int] = {}
        self.inodes: dict[tuple[int, int], str] = {}  # hard links: one copy

    def leave(self, rel: str, limit: str | None) -> None:
        if limit is not None and limit not in self.out.limits_hit:
            self.out.limits_hit.append(limit)
        if len(self.out.left_out) < MAX_LISTED:
            self.out.left_out.append(rel)
        else:
            self.out.rest = True

    def fits(self, rel: str, size: int) -> bool:
        if len(os.fsencode(rel)) > MAX_PATH_BYTES or rel.count("/") > MAX_DEPTH:
            self.leave(rel, "deliverable_paths")
        elif len(self.out.files) >= self.max_files:
            self.leave(rel, "deliverable_files")
        elif self.bytes + size > self.max_bytes:
            self.leave(rel, "deliverable_bytes")
        else:
            return True
        return False

    def link(self, rel: str, holder: str, size: int) -> None:
        if self.fits(rel, size):
            make_link(self.dest, rel, holder)
            self.out.files.append(rel)
            self.bytes += size

    def file(self, rel: str, src_rel: str) -> None:
        """`src_rel`'s bytes at `rel` in the record (a link to an earlier copy of the same inode)."""
        try:
            src = open_regular(self.root, src_rel)
        except UnsafePath:
            self.leave(rel, None)
            return
        with src:
            st = os.fstat(src.fileno())
            if not self.fits(rel, st.st_size):
                return
            self.sizes[src_rel] = st.st_size
            same = self.inodes.get((st.st_dev, st.st_ino))
            if same is not None:
                make_link(self.dest, rel, same)
            else:
                self._copy(src, rel, st)
                self.inodes[(st.st_dev, st.st_ino)] = rel
            self.held[src_rel] = same or rel
            self.out.files.append(rel)
            self.bytes += st.st_size

    def _copy(self, src: BinaryIO, rel: str, st: os.stat_result) -> None:
        try:
            with open_for_write(self.dest, rel) as dst:
                copy_sparse(src, dst, st.st_size)
                if st.st_mode & stat.S_IXUSR:
                    os.fchmod(dst.fileno(), stat.S_IMODE(os.fstat(dst.fileno()).st_mode) | stat.S_IXUSR)
                os.utime(dst.fileno(), ns=(st.st_atime_ns, st.st_mtime_ns))
        except BaseException:
            try:
                os.unlink(self.dest / rel)
            except OSError:
                pass
            raise


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _inside_target(root: str, rel: str) -> str | None:
    """The link-free relative path of the regular file `rel` resolves to inside root, else None."""
    real = os.path.realpath(os.path.join(root, rel))
    if not real.startswith(root + os.sep):
        return None
    target = os.path.relpath(real, root)
    st = lstat_inside(root, target)
    return target if st is not None and stat.S_ISREG(st.st_mode) else None


def _differs(root: str, rel: str, st: os.stat_result, origin: Path) -> bool:
    o = origin.stat()
    if st.st_size != o.st_size:
        return True
    if st.st_mtime_ns == o.st_mtime_ns:
        return False
    try:
        with open_regular(root, rel) as f, open(origin, "rb") as g:
            while True:
                x, y = f.read(1 << 20), g.read(1 << 20)
                if x != y:
                    return True
                if not x:
                    return False
    except UnsafePath:
        return True
