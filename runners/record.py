"""The job record on disk: one directory per job, the source of truth for judges and analyses.

`result.json` is written last and atomically: a directory without it is an incomplete record
(a killed job) and is cleared before the job runs again. A record whose stop reason is an error
(`env_error`, `model_error`: `"errored": true`) is not a result: it is run again on resume, up to
`cluster.error_retries` more times, and the new record keeps the earlier attempts' errors in
`earlier_errors`. Any other finished record is never rerun.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, TextIO

from envs.safeio import write_json as write_json  # the one atomic JSON write, re-exported
from runners.ledger import Logged

RESULT = "result.json"
SCORES = "scores.json"
ERROR_STOPS = ("env_error", "model_error")
VOUCHED = ("ok", "timeout")  # ledger statuses of records that are results: never rewritten by a rerun


def read_json(path: Path) -> Any:
    with open(path) as f:
        return json.load(f)


def read_result(job_dir: Path) -> dict[str, Any] | None:
    """The job's result.json, or None when there is none (or it cannot be read)."""
    try:
        return read_json(job_dir / RESULT)
    except (OSError, ValueError):
        return None


def errored(result: dict[str, Any]) -> bool:
    return result.get("stop_reason") in ERROR_STOPS


def attempt(result: dict[str, Any]) -> int:
    """How many times this job has run to a result (records before `attempt` existed count as one)."""
    return int(result.get("attempt") or 1)


def retries_left(result: dict[str, Any], error_retries: int) -> bool:
    """Whether an errored record may be run again."""
    return errored(result) and attempt(result) <= error_retries


def is_complete(job_dir: Path, scored: bool, error_retries: int, logged: Logged | None = None) -> bool:
    """A record is complete once its result (and, when a judge is configured, its scores) exist,
    unless it errored and has retries left.

    `logged`: the job's last record line in the ledger. When it vouches for the record (see
    `ledger_vouches`), result.json is only stat'ed, not read: a resume of 20,000 jobs opens none."""
    vouched = ledger_vouches(job_dir, logged)
    if vouched is None:
        result = read_result(job_dir)
        if result is None or retries_left(result, error_retries):
            return False
    elif not vouched:
        return False
    return not scored or os.path.isfile(os.path.join(job_dir, SCORES))


def ledger_vouches(job_dir: Path, logged: Logged | None) -> bool | None:
    """Whether the ledger line `logged` settles that `job_dir` holds a finished, non-errored record
    without reading it: True when the line logged a result that is never rerun (`ok`, `timeout`)
    and result.json exists, written no later than the line (the record is the one it logged);
    False when result.json is gone (removed after the line: not complete); None when the line
    cannot tell — none, an errored record (its retries are read from the record itself), no time,
    or a result.json newer than the line (an actor finished after a killed driver's line)."""
    if logged is None or logged.status not in VOUCHED or logged.time is None:
        return None
    try:
        st = os.stat(os.path.join(job_dir, RESULT))
    except OSError:
        return False
    return True if st.st_mtime <= logged.time else None


def fresh_job_dir(job_dir: Path) -> list[dict[str, Any]]:
    """Start a job directory from nothing, discarding what a killed attempt left behind; returns the
    errors of the earlier attempts that ended in an error (kept in the new record)."""
    earlier: list[dict[str, Any]] = []
    if job_dir.exists():
        result = read_result(job_dir)
        if result is not None:
            if not errored(result):
                raise FileExistsError(f"{job_dir} already holds a finished job; refusing to overwrite it")
            earlier = [*result.get("earlier_errors", []), _error_entry(result)]
        shutil.rmtree(job_dir)
    job_dir.mkdir(parents=True)
    return earlier


def _error_entry(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result.get(k) for k in ("attempt", "stop_reason", "error", "turns", "wall_s")} | {"attempt": attempt(result)}


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
