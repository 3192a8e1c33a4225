"""The job record on disk: one directory per job, the source of truth for judges and analyses.

`result.json` is written last and atomically: a directory without it is an incomplete record
(a killed job) and is cleared before the job runs again; a directory with it is never rerun.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, TextIO

RESULT = "result.json"
SCORES = "scores.json"


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temp file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1, ensure_ascii=False, default=str)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any:
    with open(path) as f:
        return json.load(f)


def is_complete(job_dir: Path, scored: bool) -> bool:
    """A record is complete once its result (and, when a judge is configured, its scores) exist."""
    return (job_dir / RESULT).is_file() and (not scored or (job_dir / SCORES).is_file())


def fresh_job_dir(job_dir: Path) -> Path:
    """Start a job directory from nothing, discarding what a killed attempt left behind."""
    if job_dir.exists():
        if (job_dir / RESULT).exists():
            raise FileExistsError(f"{job_dir} already holds a finished job; refusing to overwrite it")
        shutil.rmtree(job_dir)
    job_dir.mkdir(parents=True)
    return job_dir


class Trajectory:
    """Appends every message to `trajectory.jsonl` as it happens, so a crash keeps what was done."""

    def __init__(self, job_dir: Path) -> None:
        self.path = job_dir / "trajectory.jsonl"
        self._f: TextIO = open(self.path, "a")

    def __call__(self, message: dict[str, Any]) -> None:
        self._f.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def load_trajectory(job_dir: Path) -> list[dict[str, Any]]:
    with open(job_dir / "trajectory.jsonl") as f:
        return [json.loads(line) for line in f if line.strip()]
