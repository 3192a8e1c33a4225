"""The task's workspace as the agent left it, the way judges need it: "which files did the agent
leave, and where are they", answered without copying the workspace.

The job record (runners/core/job_record.py) holds the deliverable (every file the agent created or
modified, at its workspace-relative path) and, in its result, the files the agent deleted and those
left out of the record past its caps (`left_out`, `left_out_rest`). A left-out file is missing here,
like a deleted one: never the workspace's original, which the agent changed.
"""

from __future__ import annotations

import fnmatch
import os
from functools import cached_property
from pathlib import Path

from runners.core.job_record import JobRecord
from runners.core.task import Task


class FinalFiles:
    """The task's workspace as the agent left it: deliverable over the original, minus deletions."""

    def __init__(self, task: Task, record: JobRecord):
        self.task = task
        self.deliverable = record.deliverable_dir
        self.delivered = set(record.deliverable_files())
        result = record.result
        self.deleted = set(result.deleted)
        self.left_out = {r for r in result.left_out if not r.endswith("/")}
        self.left_out_dirs = tuple(r for r in result.left_out if r.endswith("/"))
        self.left_out_rest = result.left_out_rest

    def gone(self, rel: str) -> bool:
        """Whether `rel`, unless delivered, is missing: deleted, or changed but left out of the record."""
        return self.left_out_rest or rel in self.deleted or rel in self.left_out or rel.startswith(self.left_out_dirs)

    @cached_property
    def _original(self) -> dict[str, Path]:
        files = {rel: self.task.workspace / rel for rel in _walk(self.task.workspace)}
        files.update({rel: Path(src) for rel, src in self.task.stage.items()})
        return files

    def originals(self) -> dict[str, Path]:
        """Every file of the task's workspace as it was before the agent ran (staged inputs included)."""
        return dict(self._original)

    def original(self, rel: str) -> Path | None:
        """The untouched workspace file at `rel`, if the task's workspace has one."""
        rel = _clean(rel)
        if rel in self.task.stage:
            return Path(self.task.stage[rel])
        p = self.task.workspace / rel
        return p if p.is_file() else None

    def path(self, rel: str) -> Path:
        """Where the final version of `rel` is on disk."""
        if rel in self.delivered:
            return self.deliverable / rel
        p = None if self.gone(rel) else self.original(rel)
        if p is None:
            raise FileNotFoundError(f"{rel} is not in the deliverable, and deleted, left out or not in the workspace")
        return p

    def locate(self, rel: str) -> tuple[Path, str]:
        """`path(rel)` as (a folder, a path below it) for reading without following links below the folder."""
        if rel in self.delivered:
            return self.deliverable, rel
        if rel in self.task.stage:
            src = Path(self.task.stage[rel])
            return src.parent, src.name
        return self.task.workspace, _clean(rel)

    def match(self, pattern: str) -> list[str]:
        """Final files matching a workspace-relative path, folder (trailing /) or glob, sorted.

        A plain path is resolved directly, so that tasks over large workspaces never walk them.
        """
        pattern = _clean(pattern)
        if not pattern:
            return sorted(self.delivered)
        is_glob = any(ch in pattern for ch in "*?[")
        if not is_glob and not pattern.endswith("/"):
            if pattern in self.delivered or (not self.gone(pattern) and self.original(pattern) is not None):
                return [pattern]
            pattern += "/"  # a folder named without its slash
        if pattern.endswith("/"):
            pattern += "**"
        candidates = self.delivered | {r for r in self._original if not self.gone(r)}
        return sorted(r for r in candidates if _glob_match(r, pattern))


def _glob_match(rel: str, pattern: str) -> bool:
    """fnmatch where `**/` may also match no folder at all (`a/**/*.md` matches `a/x.md`)."""
    return fnmatch.fnmatchcase(rel, pattern) or ("**/" in pattern and fnmatch.fnmatchcase(rel, pattern.replace("**/", "")))


def _clean(rel: str) -> str:
    rel = rel.strip().replace("\\", "/")
    while rel.startswith("./"):
        rel = rel[2:]
    return "" if rel in (".", "./") else rel.lstrip("/")


def _walk(root: Path) -> list[str]:
    if not root.is_dir():
        return []
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            out.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return sorted(out)
