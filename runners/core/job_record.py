"""The job record's one reader (`JobRecord`) and its writers: every file of a job directory is read
and written here (names in `record_files`, documents in `record_types`).

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
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

from envs.deliverable import Delivery, Diff, copy_deliverable
from envs.names import json_bytes
from envs.safeio import make_dirs, open_append, walk_regular
from runners.core.document_checks import (
    check_extracted,
    check_message,
    check_plugin,
    check_view,
)
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
    read_json,
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


def _document(path: Path) -> Any:
    try:
        return read_json(path)
    except (OSError, ValueError) as e:
        raise RecordError(f"{path} cannot be read: {e}") from None


def read_scores_of(job_dir: Path) -> Scores | None:
    """The job's scores, None when it has none: one open and no stat (a resume reads 20,000)."""
    path = Path(job_dir) / SCORES
    try:
        doc = read_json(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise RecordError(f"{path} cannot be read: {e}") from None
    try:
        return read_scores(doc)
    except RecordError as e:
        raise RecordError(f"{path}: {e}") from None


def read_result(job_dir: Path) -> Result | None:
    """The job's result, or None when it has none (unfinished) or it is torn. A result this version
    cannot read (a newer schema, another shape) raises RecordError: resume must not clear what it
    cannot read."""
    path = Path(job_dir) / RESULT
    try:
        doc = read_json(path)
    except (OSError, json.JSONDecodeError):
        return None
    except ValueError as e:
        raise RecordError(f"{path} cannot be read: {e}") from None
    return Result.from_json(doc, Path(job_dir).name)


def is_job_dir(path: Path) -> bool:
    return (Path(path) / JOB).is_file()


class JobRecord:
    """One job directory, read lazily: what every judge, analysis and resume check reads."""

    def __init__(self, job_dir: Path) -> None:
        self.dir = Path(job_dir)
        if not self.dir.is_dir():
            raise RecordError(f"job directory {self.dir} does not exist")
        self.skipped_lines: list[str] = []  # the last `trajectory()`'s lines that are not messages, and why

    @cached_property
    def meta(self) -> JobMeta:
        path = self.dir / JOB
        if not path.is_file():
            raise RecordError(f"{path} is missing: {self.dir} is not a job directory")
        return JobMeta.from_json(_document(path))

    @cached_property
    def result(self) -> Result:
        """The result; a RecordError when the job has not finished."""
        path = self.dir / RESULT
        if not path.is_file():
            raise RecordError(f"{path} is missing: the job has not finished (no {RESULT})")
        return Result.from_json(_document(path), self.dir.name)

    @property
    def finished(self) -> bool:
        return (self.dir / RESULT).is_file()

    @property
    def scored(self) -> bool:
        return (self.dir / SCORES).is_file()

    @cached_property
    def scores(self) -> Scores | None:
        return read_scores_of(self.dir)

    @property
    def extracted(self) -> dict[str, Any] | None:
        """The deliverable's text as the judges read it (`extracted.json`), None for a record without
        it; RecordError for one of another shape (`document_checks`), as for every document below."""
        path = self.dir / EXTRACTED
        return check_extracted(_document(path)) if path.is_file() else None

    def plugin(self, name: str) -> dict[str, Any] | None:
        """A method plugin's record (`tab` for the tab), None when the job had no such plugin."""
        path = self.dir / plugin_file(name)
        return check_plugin(name, _document(path)) if path.is_file() else None

    @property
    def view(self) -> dict[str, Any]:
        """The evaluator view ({} when the job wrote none). Read on every use: it runs to megabytes."""
        path = self.dir / VIEW
        return check_view(_document(path)) if path.is_file() else {}

    def trajectory(self) -> list[dict[str, Any]]:
        """Every message, in order. A line that is not one (a killed job's torn last write, or a line
        of another shape) is skipped, and why is kept in `skipped_lines` (one warning a file)."""
        path = self.dir / TRAJECTORY
        self.skipped_lines = []
        if not path.is_file():
            return []
        out = []
        with open(path, encoding="utf-8", errors="replace") as f:  # a byte that is not UTF-8: that line is not JSON
            for n, line in enumerate(f, 1):
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

    @property
    def deliverable_dir(self) -> Path:
        return deliverable_dir(self.dir)

    def deliverable_files(self) -> list[str]:
        """Workspace-relative paths of the deliverable (files, and links to its files), sorted."""
        root = self.deliverable_dir
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
