"""The job record's one reader (`JobRecord`) and its writers: every file of a job directory is read
and written here (names in `record_files`, documents in `record_types`). A finished record may be
packed with its cell's (runners/core/record_pack.py): every reader here reads it from the pack, the
same; a writer of a packed record (re-scoring) has it `unpacked` first.

Writes are atomic (`envs.safeio.write_json`), `result.json` last: a directory without it is an
unfinished record. The trajectory is appended message by message, so a crash keeps what was done.
A write that fails (a full disk) raises `RecordWriteError` and leaves nothing torn: the old file
stays, a half-written trajectory line is cut off, a half-copied deliverable file is removed; the
job is then left unfinished, and a resume runs it again. Any name or text the agent made can be
written (`envs.names.json_bytes`).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

from envs.deliverable import Delivery, Diff, copy_deliverable
from envs.names import json_bytes
from envs.safeio import make_dirs, open_append, remove_tree, walk_regular
from runners.core.document_checks import (
    check_extracted,
    check_message,
    check_plugin,
    check_view,
)
from runners.core.pack_index import INDEXES, Packed
from runners.core.record_files import (
    DELIVERABLE,
    EXTRACTED,
    JOB,
    RESULT,
    SCHEMA_VERSION,
    SCORES,
    TRAJECTORY,
    VIEW,
    bounded,
    parse_json,
    plugin_file,
    write_json,
)
from runners.core.record_types import JobMeta, RecordError, Result, Scores, read_scores

log = logging.getLogger(__name__)


class RecordWriteError(OSError):
    """A file of the record could not be written (a full disk, a read-only folder): the job is
    left unfinished, with nothing torn, and runs again on resume."""


@contextmanager
def _writing(what: Path) -> Iterator[None]:
    try:
        yield
    except RecordWriteError:
        raise
    except OSError as e:
        raise RecordWriteError(
            e.errno, f"cannot write the job record ({what}: {e.strerror or e}); the job is left unfinished "
            "and runs again on resume: free space there (or fix the folder) first"
        ) from e


def packed_record(job_dir: Path) -> Packed | None:
    """The pack entry a reader takes for `job_dir` (None: its folder): a folder holding `result.json`
    wins (a record re-scored or run again since it was packed), else the record's last packed copy,
    else the folder (an unfinished job, or a record never packed). The index is asked first: a record
    that was never packed costs no stat here (a resume checks 100,000)."""
    found = INDEXES.packed(Path(job_dir))
    if found is None or os.path.isfile(os.path.join(job_dir, RESULT)):
        return None
    return found


class _Files:
    """A record's files, from its folder or its pack (`packed_record`), decided once; a folder that
    its packer removes meanwhile (it packs after the record is booked) is read from the pack."""

    def __init__(self, job_dir: Path) -> None:
        self.dir = Path(job_dir)
        self.packed = packed_record(self.dir)

    def _repacked(self) -> bool:
        if self.packed is None and not self.dir.is_dir():
            self.packed = INDEXES.packed(self.dir, fresh=True)
        return self.packed is not None

    def has(self, name: str) -> bool:
        if self.packed is not None:
            return self.packed.has(name)
        return os.path.isfile(self.dir / name) or (self._repacked() and self.has(name))

    def mtime(self, name: str) -> float | None:
        """When the file was written (kept in the pack), None when the record has none."""
        if self.packed is not None:
            return self.packed.mtime(name)
        try:
            return os.stat(self.dir / name).st_mtime
        except OSError:
            return self.mtime(name) if self._repacked() else None

    def read(self, name: str) -> bytes:
        """FileNotFoundError when the record has no such file."""
        if self.packed is not None:
            return self.packed.read(name)
        try:
            with open(self.dir / name, "rb") as f:
                return f.read()
        except FileNotFoundError:
            if self._repacked():
                return self.packed.read(name)  # type: ignore[union-attr]
            raise

    def document(self, name: str) -> Any:
        """A JSON document of the record; RecordError when it cannot be read, FileNotFoundError when absent."""
        try:
            data = self.read(name)
        except FileNotFoundError:
            raise
        except OSError as e:
            raise RecordError(f"{self.dir / name} cannot be read: {e}") from None
        try:
            return parse_json(data.decode("utf-8"))
        except ValueError as e:  # UnicodeDecodeError, JSONDecodeError, too deep
            raise RecordError(f"{self.dir / name} cannot be read: {e}") from None

    def names(self) -> set[str]:
        """The names at the record's top (its documents, `deliverable`)."""
        if self.packed is not None:
            return {rel.split("/", 1)[0] for rel in self.packed.members}
        try:
            with os.scandir(self.dir) as entries:
                return {e.name for e in entries}
        except OSError:
            return set()


def _document(files: _Files, name: str, default: Any = None) -> Any:
    try:
        return files.document(name)
    except FileNotFoundError:
        return default


def read_scores_of(job_dir: Path) -> Scores | None:
    """The job's scores, None when it has none: one open and no stat (a resume reads 20,000)."""
    return _scores(_Files(job_dir), Path(job_dir))


def _scores(files: _Files, job_dir: Path) -> Scores | None:
    doc = _document(files, SCORES)
    if doc is None:
        return None
    try:
        return read_scores(doc)
    except RecordError as e:
        raise RecordError(f"{job_dir / SCORES}: {e}") from None


def read_result(job_dir: Path) -> Result | None:
    """The job's result, or None when it has none (unfinished) or it is torn. A result this version
    cannot read (a newer schema, another shape) raises RecordError: resume must not clear what it
    cannot read."""
    files = _Files(job_dir)
    try:
        data = files.read(RESULT)
    except OSError:
        return None
    try:
        doc = parse_json(data.decode("utf-8"))
    except json.JSONDecodeError:
        return None
    except ValueError as e:
        raise RecordError(f"{Path(job_dir) / RESULT} cannot be read: {e}") from None
    return Result.from_json(doc, Path(job_dir).name)


def record_mtime(job_dir: Path, name: str) -> float | None:
    """When the record's file `name` was written (packed or not), None when it has none."""
    return _Files(job_dir).mtime(name)


def has_file(job_dir: Path, name: str) -> bool:
    """Whether the record (packed or not) has the file `name`."""
    return _Files(job_dir).has(name)


def is_job_dir(path: Path) -> bool:
    """Whether `path` is a job's record: a folder with job.json, or a record in its sweep's packs."""
    return (Path(path) / JOB).is_file() or INDEXES.packed(Path(path), fresh=True) is not None


def record_ids(sweep_dir: Path) -> list[str]:
    """The ids of the sweep's job records, folders and packed ones, sorted."""
    folders = {e.name for e in os.scandir(sweep_dir) if e.is_dir(follow_symlinks=False) and os.path.isfile(os.path.join(e.path, JOB))}
    return sorted(folders.union(INDEXES.ids(Path(sweep_dir))))


def linked_entries(sweep_dir: Path) -> list[str]:
    """Names in the sweep's folder that are links (the project writes none there): never followed,
    so a reader names them as broken records instead of passing them over in silence."""
    return sorted(e.name for e in os.scandir(sweep_dir) if e.is_symlink())


def unpacked(job_dir: Path) -> Path:
    """`job_dir` as a folder holding its whole record, unpacked from its pack when it was packed (for
    a writer: re-scoring writes its scores beside the record and reads its deliverable's files)."""
    packed = packed_record(job_dir)
    if packed is not None:
        if os.path.lexists(job_dir):  # an unfinished rerun's folder: the packed record is the one to score
            remove_tree(job_dir, check=True)
        packed.unpack(Path(job_dir))
    return Path(job_dir)


class JobRecord:
    """One job's record, read lazily from its folder or its pack: what every judge, analysis and resume check reads."""

    def __init__(self, job_dir: Path) -> None:
        self.dir = Path(job_dir)
        if self.dir.is_symlink():  # the project writes no link for a record: never followed
            raise RecordError(f"{self.dir.name} is a link, not a record: not followed")
        self._files = _Files(self.dir)
        if self._files.packed is None and not self.dir.is_dir():
            raise RecordError(f"job directory {self.dir} does not exist")
        self.skipped_lines: list[str] = []  # the last `trajectory()`'s lines that are not messages, and why

    @property
    def packed(self) -> bool:
        """Whether the record is read from its sweep's packs (runners/core/record_pack.py)."""
        return self._files.packed is not None

    @cached_property
    def meta(self) -> JobMeta:
        doc = _document(self._files, JOB)
        if doc is None:
            raise RecordError(f"{self.dir / JOB} is missing: {self.dir} is not a job directory")
        return JobMeta.from_json(doc)

    @cached_property
    def result(self) -> Result:
        """The result; a RecordError when the job has not finished."""
        doc = _document(self._files, RESULT)
        if doc is None:
            raise RecordError(f"{self.dir / RESULT} is missing: the job has not finished (no {RESULT})")
        return Result.from_json(doc, self.dir.name)

    @property
    def finished(self) -> bool:
        return self._files.has(RESULT)

    @property
    def scored(self) -> bool:
        return self._files.has(SCORES)

    @cached_property
    def scores(self) -> Scores | None:
        return _scores(self._files, self.dir)

    @property
    def extracted(self) -> dict[str, Any] | None:
        """The deliverable's text as the judges read it (`extracted.json`), None for a record without
        it; RecordError for one of another shape (`document_checks`), as for every document below."""
        doc = _document(self._files, EXTRACTED)
        return None if doc is None else check_extracted(doc)

    def plugin(self, name: str) -> dict[str, Any] | None:
        """A method plugin's record (`tab` for the tab), None when the job had no such plugin."""
        doc = _document(self._files, plugin_file(name))
        return None if doc is None else check_plugin(name, doc)

    @property
    def view(self) -> dict[str, Any]:
        """The evaluator view ({} when the job wrote none). Read on every use: it runs to megabytes."""
        doc = _document(self._files, VIEW)
        return {} if doc is None else check_view(doc)

    def names(self) -> set[str]:
        """The names at the top of the record (which documents it has, and `deliverable`)."""
        return self._files.names()

    def trajectory(self) -> list[dict[str, Any]]:
        """Every message, in order. A line that is not one (a killed job's torn last write, or a line
        of another shape) is skipped, and why is kept in `skipped_lines` (one warning a file)."""
        path = self.dir / TRAJECTORY
        self.skipped_lines = []
        try:
            text = self._files.read(TRAJECTORY).decode("utf-8", errors="replace")  # a byte that is not UTF-8: that line is not JSON
        except FileNotFoundError:
            return []
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append(check_message(parse_json(line), f"line {n}"))
                except ValueError as e:  # RecordError, JSONDecodeError, too deep
                    self.skipped_lines.append(f"line {n}: {e}")
        if self.skipped_lines:
            log.warning("%s: %d line(s) skipped (%s)", path, len(self.skipped_lines), self.skipped_lines[0])
        return out

    @property
    def final_answer(self) -> str:
        return self.result.final_answer or self.view.get("final_answer") or ""

    @cached_property
    def deliverable_dir(self) -> Path:
        """The deliverable's folder. A packed record's is unpacked into a temporary folder that lives
        as long as this object (a reader never writes into the sweep; a writer unpacks the record
        itself: `unpacked`)."""
        if self._files.packed is None:
            return deliverable_dir(self.dir)
        self._scratch = tempfile.TemporaryDirectory(prefix="runningtab-record-")
        copy = Path(self._scratch.name) / self.dir.name
        self._files.packed.unpack(copy, only=DELIVERABLE)
        return deliverable_dir(copy)

    def deliverable_files(self) -> list[str]:
        """Workspace-relative paths of the deliverable (files, and links to its files), sorted."""
        if self._files.packed is not None:
            prefix = DELIVERABLE + "/"
            return sorted(rel[len(prefix):] for rel, m in self._files.packed.members.items()
                          if rel.startswith(prefix) and m.kind in ("f", "l"))
        root = deliverable_dir(self.dir)
        if not root.is_dir():
            return []
        return sorted(rel for rel, _ in walk_regular(root, links=True))


def _write(path: Path, doc: Any) -> None:
    """Every document of the record is written here (and the trajectory's lines by `Trajectory`),
    `bounded`: a record is always one its readers read back."""
    with _writing(path):
        write_json(path, bounded(doc))


def write_meta(job_dir: Path, meta: JobMeta) -> None:
    _write(job_dir / JOB, meta.to_json())


def write_result(job_dir: Path, result: Result) -> None:
    """The record's last write: from here on the job is finished."""
    _write(job_dir / RESULT, result.to_json())


def write_scores(job_dir: Path, scores: dict[str, Any]) -> dict[str, Any]:
    """Returns the document as written (with its schema version)."""
    doc = {**scores, "schema_version": SCHEMA_VERSION}
    _write(job_dir / SCORES, doc)
    return doc


def write_extracted(job_dir: Path, doc: dict[str, Any]) -> None:
    """Before the scores: a scored record always has the text its judges read."""
    write_json(job_dir / EXTRACTED, bounded(doc))


def write_view(job_dir: Path, view: dict[str, Any]) -> None:
    _write(job_dir / VIEW, view)


def write_plugin_record(job_dir: Path, name: str, doc: dict[str, Any]) -> None:
    _write(job_dir / plugin_file(name), doc)


def write_deliverable(job_dir: Path, workspace: Path, diff: Diff, max_files: int, max_bytes: int) -> Delivery:
    """The record's bounded copy of what the agent created or changed (`envs/deliverable.py`)."""
    dest = deliverable_dir(job_dir)
    with _writing(dest):
        if diff.changed or diff.links:
            make_dirs(dest)
        return copy_deliverable(workspace, diff, dest, max_files, max_bytes)


def deliverable_dir(job_dir: Path) -> Path:
    return job_dir / DELIVERABLE


class Trajectory:
    """Appends every message to the trajectory as it happens, so a crash keeps what was done.

    A line is written whole or not at all: when a write fails (a full disk), the file is cut back
    to its last whole line and `RecordWriteError` is raised."""

    def __init__(self, job_dir: Path) -> None:
        self.path = job_dir / TRAJECTORY
        with _writing(self.path):
            self._f = open_append(self.path)

    def __call__(self, message: dict[str, Any]) -> None:
        """One write a message (the file is opened to append); where the line began is asked of the
        file only when a write fails, not before each one (a second system call a message)."""
        line = json_bytes(bounded(message)) + b"\n"
        fd = self._f.fileno()
        view = memoryview(line)
        with _writing(self.path):
            try:
                while view:
                    view = view[os.write(fd, view):]
            except OSError:  # cut off what of the line got written
                os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_END) - (len(line) - len(view)))
                raise

    def close(self) -> None:
        self._f.close()
