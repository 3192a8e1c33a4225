"""Reading records packed per grid cell (written by runners/core/record_pack.py): a packed record's
entries (`Packed`: its files read by offset from the pack) and where each job's is, from the
sweep's index files (`PackIndex`; `INDEXES`, this process's, one per sweep).

An index line is only parsed when its record is opened, and is trusted no more than the agent's
files it describes: a line of another shape (torn by a killed driver, edited) is skipped, a member
path that leaves the record refused, a file cut short an OSError.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.safeio import make_dirs, make_link, open_for_write

PACKS = "packs"  # in the sweep folder
PARSED = 256  # index lines kept parsed


@dataclass(frozen=True, slots=True)
class Member:
    """One entry of a packed record: a file's data at `offset` in the pack (`size` bytes), a folder
    (`kind` "d"), or a link (`kind` "l", its text in `link`)."""

    kind: str  # "f" | "d" | "l"
    offset: int
    size: int
    mode: int
    mtime: float
    link: str | None = None


@dataclass(frozen=True, slots=True)
class Packed:
    """A packed record: its pack and its entries by path in the record (`deliverable/out.md`)."""

    job_id: str
    pack: Path
    members: dict[str, Member]

    def has(self, rel: str) -> bool:
        m = self.members.get(rel)
        return m is not None and m.kind == "f"

    def mtime(self, rel: str) -> float | None:
        m = self.members.get(rel)
        return m.mtime if m is not None and m.kind == "f" else None

    def read(self, rel: str) -> bytes:
        """A file's bytes; FileNotFoundError when the record has no such file."""
        m = self.members.get(rel)
        if m is None or m.kind != "f":
            raise FileNotFoundError(f"{self.pack}: {self.job_id}/{rel} is not in the pack")
        with open(self.pack, "rb") as f:
            data = os.pread(f.fileno(), m.size, m.offset)
        if len(data) != m.size:
            raise OSError(f"{self.pack}: {self.job_id}/{rel} is cut short ({len(data)} of {m.size} bytes)")
        return data

    def unpack(self, dest: Path, only: str | None = None) -> None:
        """The record as a folder at `dest` (made; never written through a link); `only`: just the
        entries under that top name (`deliverable`)."""
        make_dirs(dest)
        for rel, m in sorted(self.members.items()):
            if only is not None and rel != only and not rel.startswith(only + "/"):
                continue
            if m.kind == "d":
                make_dirs(dest / rel)
            elif m.kind == "l":
                make_link(dest, rel, os.path.normpath(os.path.join(os.path.dirname(rel), m.link or "")))
            else:
                with open_for_write(dest, rel) as f:
                    f.write(self.read(rel))
                    if m.mode & 0o100:  # the agent made it executable: 0744, as the record had it
                        os.fchmod(f.fileno(), os.fstat(f.fileno()).st_mode & 0o777 | 0o100)
                os.utime(dest / rel, (m.mtime, m.mtime))


def _member(raw: Any) -> Member | None:
    if not isinstance(raw, list) or len(raw) < 5 or raw[0] not in ("f", "d", "l"):
        return None
    kind, offset, size, mode, mtime = raw[:5]
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in (offset, size, mode)):
        return None
    if not isinstance(mtime, int | float):
        return None
    link = raw[5] if kind == "l" and len(raw) > 5 and isinstance(raw[5], str) else None
    return Member(kind, offset, size, mode, float(mtime), link)


def _read_line(raw: bytes, pack: Path) -> Packed | None:
    """One index line as a packed record, None for a line of another shape (torn, edited)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("job"), str) or not isinstance(doc.get("members"), dict):
        return None
    members = {}
    for rel, m in doc["members"].items():
        member = _member(m)
        if member is None or not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/"):
            return None
        members[rel] = member
    return Packed(doc["job"], pack, members)


class PackIndex:
    """Where each packed record of one sweep is: job id -> (index file, line offset, length). The
    lines are parsed when a record is opened, so 100,000 packed jobs cost a few MB here."""

    def __init__(self, sweep_dir: Path) -> None:
        self.dir = Path(sweep_dir) / PACKS
        self.where: dict[str, tuple[Path, int, int]] = {}
        self.read_to: dict[Path, int] = {}  # how far each index file was read
        self._parsed: OrderedDict[str, tuple[tuple[Path, int, int], Packed]] = OrderedDict()  # the last records opened

    def refresh(self) -> None:
        """Read what was appended since the last look (and any new pack)."""
        try:
            names = sorted(n for n in os.listdir(self.dir) if n.endswith(".idx"))
        except OSError:
            return
        for n in names:
            path = self.dir / n
            at = self.read_to.get(path, 0)
            try:
                with open(path, "rb") as f:
                    f.seek(at)
                    data = f.read()
            except OSError:
                continue
            whole = data.rfind(b"\n") + 1
            pos = at
            for raw in data[:whole].split(b"\n")[:-1]:
                job = _job_of(raw)
                if job is not None:
                    self.where[job] = (path, pos, len(raw))
                pos += len(raw) + 1
            self.read_to[path] = at + whole

    def get(self, job_id: str) -> Packed | None:
        """The packed record of `job_id` (its index line parsed once while it is among the last
        `PARSED` opened: a reader opens one record several times in a row)."""
        spot = self.where.get(job_id)
        if spot is None:
            return None
        hit = self._parsed.get(job_id)
        if hit is not None and hit[0] == spot:
            self._parsed.move_to_end(job_id)
            return hit[1]
        path, offset, length = spot
        try:
            with open(path, "rb") as f:
                raw = os.pread(f.fileno(), length, offset)
        except OSError:
            return None
        packed = _read_line(raw, path.with_suffix(".tar"))
        if packed is None or packed.job_id != job_id:
            return None
        self._parsed[job_id] = (spot, packed)
        while len(self._parsed) > PARSED:
            self._parsed.popitem(last=False)
        return packed


def _job_of(raw: bytes) -> str | None:
    """The job id of an index line, without parsing its members (they are parsed when it is read)."""
    head = raw[:400]
    start = head.find(b'"job":"')
    if start < 0:
        return None
    end = head.find(b'"', start + 7)
    try:
        job = json.loads(head[start + 6 : end + 1])
    except ValueError:
        return None
    return job if isinstance(job, str) and job and "/" not in job else None


class _Indexes:
    """The pack index of each sweep this process read. A record this process packs is noted at once;
    one packed by another process (a Slurm slice, a driver beside a report) is seen once the index is
    read again, at most every `REFRESH_S` on a miss: a resume asking for 100,000 records that are not
    packed reads the sweep's indexes a few times, not 100,000."""

    REFRESH_S = 2.0

    def __init__(self) -> None:
        self._by_sweep: dict[Path, tuple[PackIndex, list[float]]] = {}
        self._lock = threading.Lock()

    def _of(self, sweep_dir: Path, fresh: bool) -> PackIndex:
        with self._lock:
            found = self._by_sweep.get(sweep_dir)
            if found is None:
                found = self._by_sweep[sweep_dir] = (PackIndex(sweep_dir), [0.0])
            index, last = found
            now = time.monotonic()
            if fresh or now - last[0] >= self.REFRESH_S:
                index.refresh()
                last[0] = now
            return index

    def note(self, sweep_dir: Path, job_id: str, spot: tuple[Path, int, int]) -> None:
        """A record this process just packed (its index line at `spot`)."""
        with self._lock:
            found = self._by_sweep.get(Path(sweep_dir))
            if found is not None:
                found[0].where[job_id] = spot

    def packed(self, job_dir: Path, fresh: bool = False) -> Packed | None:
        """The record of `job_dir` in its sweep's packs, None when it is not packed (as far as the
        index read at most `REFRESH_S` ago knows; `fresh`: read it again first)."""
        index = self._of(Path(job_dir).parent, fresh)
        with self._lock:  # its cache of parsed lines is shared by the driver's threads
            return index.get(Path(job_dir).name)

    def ids(self, sweep_dir: Path) -> list[str]:
        """Every packed job of the sweep (its indexes read again)."""
        index = self._of(Path(sweep_dir), fresh=True)
        with self._lock:
            return list(index.where)


INDEXES = _Indexes()
