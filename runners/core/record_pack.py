"""Finished job records packed per grid cell: one tar file and its index instead of ~11 files and
folders a job (a cluster's inode quota is 1–10 million files; a year of 100,000-job sweeps).

`<sweep>/packs/<name>.tar` holds records as plain tar members `<job_id>/<file>` (`tar -tf` lists
them, `tar -xf` gives the folders back); `<name>.idx` has one JSON line a packed record, written
after its bytes: the commit. A record is packed once it is booked (its ledger line written, uploaded,
tracked); its folder is then removed. The record stays the source of truth: `JobRecord` reads a
packed record's files from here (runners/core/job_record.py), a folder with `result.json` wins over
the pack (a record re-scored or run again since), and the index's last line of a job wins (read by
runners/core/pack_index.py).

Nothing the agent wrote is trusted: the packer walks the folder without following a link, takes
regular files, folders and links (kept as links, their text only, each pointing inside the record),
and packs a record only within `MAX_MEMBERS` entries and `MAX_BYTES` of file data, with no sparse
file; a record out of those bounds stays a folder (read as before). An append cut short (a killed driver) is cut off by the
next one; a torn index line is skipped. Packs of one sweep are written one append at a time
(`flock` on the index): Slurm slices of a sweep share its packs.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import stat
import tarfile
from pathlib import Path
from typing import Any

from envs.safeio import FILE_MODE, Walk, make_dirs, open_regular, remove_tree
from runners.core.pack_index import INDEXES, PACKS

log = logging.getLogger(__name__)

MAX_MEMBERS = 2_000  # entries of one record (files, folders, links): a record with more stays a folder
MAX_BYTES = 64 << 20  # file data of one record
_BLOCK = 512
_ENCODING = {"encoding": "utf-8", "errors": "surrogateescape"}  # a name that is not UTF-8 keeps its bytes


def _entries(job_dir: Path) -> list[tuple[str, os.stat_result]] | None:
    """The record's entries within the bounds, never following a link; None when out of them."""
    walk = Walk(job_dir, max_names=MAX_MEMBERS + 1)
    out, data = [], 0
    for rel, st in walk:
        if stat.S_ISREG(st.st_mode):
            data += st.st_size
            if st.st_blocks * 512 < st.st_size:  # sparse: packing would write its holes out
                return None
        elif stat.S_ISLNK(st.st_mode):
            if not _inside(rel, _link_text(job_dir, rel)):
                return None  # the record's links are relative and inside it (envs/deliverable.py)
        elif not stat.S_ISDIR(st.st_mode):
            return None  # not what a record holds
        out.append((rel, st))
        if len(out) > MAX_MEMBERS or data > MAX_BYTES:
            return None
    return None if walk.truncated else out


def _inside(rel: str, text: str) -> bool:
    """Whether a link at `rel` whose text is `text` points inside the record."""
    if not text or text.startswith("/") or "\0" in text:
        return False
    target = os.path.normpath(os.path.join(os.path.dirname(rel), text))
    return target != ".." and not target.startswith("../") and not target.startswith("/")


def _tar_bytes(job_id: str, job_dir: Path, entries: list[tuple[str, os.stat_result]], start: int) -> tuple[bytes, dict[str, list[Any]]]:
    """The tar members of the record and their entries for the index (offsets from `start`)."""
    chunks: list[bytes] = []
    members: dict[str, list[Any]] = {}
    at = start
    for rel, st in entries:
        info = tarfile.TarInfo(f"{job_id}/{rel}")
        info.mtime, info.mode = int(st.st_mtime), stat.S_IMODE(st.st_mode)  # whole seconds: no pax header (the index keeps the exact time)
        data = b""
        if stat.S_ISDIR(st.st_mode):
            info.type = tarfile.DIRTYPE
            entry: list[Any] = ["d", 0, 0, info.mode, st.st_mtime]
        elif stat.S_ISLNK(st.st_mode):
            info.type, info.linkname = tarfile.SYMTYPE, _link_text(job_dir, rel)
            entry = ["l", 0, 0, info.mode, st.st_mtime, info.linkname]
        else:
            with open_regular(job_dir, rel) as f:
                data = f.read(st.st_size + 1)
            if len(data) != st.st_size:
                raise OSError(f"{job_dir}/{rel} changed while it was packed")
            info.size = len(data)
            entry = ["f", 0, len(data), info.mode, st.st_mtime]
        try:
            head = info.tobuf(tarfile.USTAR_FORMAT, encoding="ascii", errors="strict")  # the common case: one block
        except ValueError:  # a long or non-ASCII name, a link's text: a pax header keeps it whole
            head = info.tobuf(tarfile.PAX_FORMAT, **_ENCODING)
        entry[1] = at + len(head)
        members[rel] = entry
        pad = -len(data) % _BLOCK
        chunks += [head, data, b"\0" * pad]
        at += len(head) + len(data) + pad
    return b"".join(chunks), members


def _link_text(job_dir: Path, rel: str) -> str:
    """A link's text, read without following it (its folder reached without links)."""
    parent, _, name = rel.rpartition("/")
    fd = os.open(job_dir / parent if parent else job_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return os.readlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def pack_record(sweep_dir: Path, job_id: str, name: str) -> bool:
    """Append the finished record `sweep_dir/job_id` to the pack `name` and remove its folder; False
    (the folder kept, nothing written) when it is out of bounds or not a folder."""
    job_dir = sweep_dir / job_id
    if not os.path.isdir(job_dir) or os.path.islink(job_dir):
        return False
    entries = _entries(job_dir)
    if entries is None:
        log.info("%s stays a folder: more than %d entries or %d bytes, a sparse file, or a special file", job_id, MAX_MEMBERS, MAX_BYTES)
        return False
    packs = sweep_dir / PACKS
    make_dirs(packs)
    index_path, pack_path = packs / f"{name}.idx", packs / f"{name}.tar"
    fd = os.open(index_path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        end, ends_clean = _committed_end(fd)
        pfd = os.open(pack_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            if os.fstat(pfd).st_size != end:
                os.ftruncate(pfd, end)  # what an append cut short left
            data, members = _tar_bytes(job_id, job_dir, entries, end)
            os.pwrite(pfd, data, end)
            os.fsync(pfd)
        finally:
            os.close(pfd)
        line = json.dumps({"job": job_id, "end": end + len(data), "members": members}, ensure_ascii=True, separators=(",", ":")).encode()
        at = os.fstat(fd).st_size + (0 if ends_clean else 1)
        os.write(fd, (b"" if ends_clean else b"\n") + line + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)  # the lock with it
    INDEXES.note(sweep_dir, job_id, (index_path, at, len(line)))  # this process's readers see it at once
    remove_tree(job_dir, check=True)
    return True


def _committed_end(fd: int) -> tuple[int, bool]:
    """Where the pack's committed bytes end (the last whole index line's `end`), and whether the
    index ends with a newline; read from the index's tail."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0, True
    back = min(size, 1 << 16)
    tail = os.pread(fd, back, size - back)
    while True:
        lines = tail.split(b"\n")
        for raw in reversed(lines[:-1]):  # whole lines (the last part is empty, or a torn line)
            try:
                return int(json.loads(raw)["end"]), tail.endswith(b"\n")
            except (ValueError, KeyError, TypeError):
                continue
        if back == size:
            return 0, tail.endswith(b"\n")
        back = min(size, back * 4)
        tail = os.pread(fd, back, size - back)
