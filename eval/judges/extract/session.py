"""One job's scoring reads each file once, out of process, and keeps what the report needs.

`score_job` opens a session (`scoring`) around its judge: every check and every judge of the job
asks it (`current()`) for a file, which is read in the bounded extraction process
(eval/judges/extract/pool.py) the first time and reused after. All the files of a job together get
`job_wall_s`; a file asked for after that is unreadable without being read, so a deliverable of many
bombs cannot hold its job (or, through a busy pool, any other) for long.

After judging, the session's text of every deliverable file is written to the record
(`extracted.json`, bounded: `KEEP_CHARS` in all, `KEEP_FILES` files), so that the report reads what
the judges read without ever parsing a deliverable. For a record scored before there was such a
file, `deliverable_texts` reads the deliverable now, bounded the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from eval.config import ExtractLimits
from eval.judges.extract.extracted import Extracted
from eval.judges.extract.pool import Pool, Read, shared_pool
from runners.core.job_record import JobRecord

KEEP_CHARS = 1_000_000  # deliverable text kept in extracted.json, all files together
KEEP_FILES = 1_000


class Extractions:
    """The files one job's scoring has read, each read once (see module doc)."""

    def __init__(self, limits: ExtractLimits | None = None, pool: Pool | None = None) -> None:
        self.limits = limits or ExtractLimits()
        self._pool = pool
        self._done: dict[tuple[str, str], Extracted] = {}
        self.reads: list[Read] = []
        self.spent_s = 0.0

    def get(self, root: Path, rel: str) -> Extracted:
        """`root/rel` as judges read it (`error` set when it is unreadable)."""
        key = (str(root), rel)
        if key not in self._done:
            if self.spent_s >= self.limits.job_wall_s:
                self._done[key] = Extracted(error=f"not read: this job's {self.limits.job_wall_s:g} s for reading files were spent")
            else:
                read = (self._pool or shared_pool()).read(root, rel, self.limits)
                self.reads.append(read)
                self.spent_s += read.wall_s
                self._done[key] = read.extracted
        return self._done[key]


_current: ContextVar[Extractions | None] = ContextVar("extractions", default=None)


@contextmanager
def scoring(limits: ExtractLimits) -> Iterator[Extractions]:
    """The session of one job's scoring: `current()` answers it until the block ends."""
    session = Extractions(limits)
    token = _current.set(session)
    try:
        yield session
    finally:
        _current.reset(token)


def current() -> Extractions:
    """The session of the scoring under way, else a new one (a judge called on its own)."""
    return _current.get() or Extractions()


def kept_doc(session: Extractions, record: JobRecord) -> dict[str, Any]:
    """`extracted.json`: each deliverable file's text (or why it is unreadable), within KEEP_CHARS/KEEP_FILES."""
    files: list[dict[str, Any]] = []
    rels, used = record.deliverable_files(), 0
    for rel in rels[:KEEP_FILES]:
        if used >= KEEP_CHARS:
            break
        e = session.get(record.deliverable_dir, rel)
        entry: dict[str, Any] = {"path": shown(rel)}
        if e.error:
            entry["error"] = e.error
        else:
            entry["text"] = e.text[: KEEP_CHARS - used]
            used += len(entry["text"])
            if len(entry["text"]) < len(e.text):
                entry["clipped"] = len(e.text) - len(entry["text"])
        files.append(entry)
    return {"files": files, "left_out": len(rels) - len(files), "keep_chars": KEEP_CHARS}


def deliverable_doc(record: JobRecord) -> dict[str, Any]:
    """`extracted.json`, else the same document read now (a record scored before it existed)."""
    doc = record.extracted
    return kept_doc(Extractions(), record) if doc is None else doc


def deliverable_texts(record: JobRecord) -> list[str]:
    """The text of each deliverable file as the judges read it (from `extracted.json`, else read now)."""
    doc = deliverable_doc(record)
    return [str(f.get("text", "")) for f in doc.get("files") or [] if isinstance(f, dict)]


def shown(rel: str) -> str:
    """A workspace path as text that any JSON writer takes (bytes that are not UTF-8 as escapes)."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
