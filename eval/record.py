"""Reading a job record the way judges need it (see the job record layout in docs/benchmarks.md).

`deliverable/` holds every file the agent created or modified, at its workspace-relative path;
`result.json` the final answer and the files the agent deleted; `evaluator_view.json` the
trajectory judges may read (tab traces removed). `FinalFiles` answers "which files did the agent
leave, and where are they" without copying the workspace.
"""

from __future__ import annotations

import fnmatch
import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any

from eval.task import Task


class RecordError(ValueError):
    """A job directory lacks what scoring needs."""


class JobRecord:
    """One job directory, read lazily."""

    def __init__(self, job_dir: Path):
        self.dir = Path(job_dir)
        if not self.dir.is_dir():
            raise RecordError(f"job directory {self.dir} does not exist")

    def _json(self, name: str, required: bool) -> dict[str, Any]:
        p = self.dir / name
        if not p.is_file():
            if required:
                raise RecordError(f"{p} is missing: the job has not finished (no {name})")
            return {}
        with open(p, encoding="utf-8") as f:
            return json.load(f)

    @cached_property
    def job(self) -> dict[str, Any]:
        return self._json("job.json", required=True)

    @cached_property
    def result(self) -> dict[str, Any]:
        return self._json("result.json", required=True)

    @cached_property
    def view(self) -> dict[str, Any]:
        """The evaluator view ({} when the job wrote none)."""
        return self._json("evaluator_view.json", required=False)

    @property
    def final_answer(self) -> str:
        return self.result.get("final_answer") or self.view.get("final_answer") or ""

    @property
    def deleted(self) -> list[str]:
        return list(self.result.get("deleted") or [])

    @property
    def deliverable_dir(self) -> Path:
        return self.dir / "deliverable"

    def deliverable_files(self) -> list[str]:
        """Workspace-relative paths of the deliverable, sorted."""
        return _walk(self.deliverable_dir)


class FinalFiles:
    """The task's workspace as the agent left it: deliverable over the original, minus deletions."""

    def __init__(self, task: Task, record: JobRecord):
        self.task = task
        self.deliverable = record.deliverable_dir
        self.delivered = set(record.deliverable_files())
        self.deleted = set(record.deleted)

    @cached_property
    def _original(self) -> dict[str, Path]:
        files = {rel: self.task.workspace / rel for rel in _walk(self.task.workspace)}
        files.update({rel: Path(src) for rel, src in self.task.stage.items()})
        return files

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
        p = self.original(rel)
        if p is None:
            raise FileNotFoundError(f"{rel} is neither in the deliverable nor in the workspace")
        return p

    def match(self, pattern: str) -> list[str]:
        """Final files matching a workspace-relative path, folder (trailing /) or glob, sorted.

        A plain path is resolved directly, so that tasks over large workspaces never walk them.
        """
        pattern = _clean(pattern)
        if not pattern:
            return sorted(self.delivered)
        is_glob = any(ch in pattern for ch in "*?[")
        if not is_glob and not pattern.endswith("/"):
            if pattern in self.delivered or (pattern not in self.deleted and self.original(pattern) is not None):
                return [pattern]
            pattern += "/"  # a folder named without its slash
        if pattern.endswith("/"):
            pattern += "**"
        candidates = self.delivered | (set(self._original) - self.deleted)
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
