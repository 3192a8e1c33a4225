"""Which job records are finished for good, and clearing the rest before a job runs again.

A directory without `result.json` is an incomplete record (a killed job) and is cleared before the
job runs again. A record whose stop is the host's (`errored`: `env_error`, `model_error`, the
sweep's or its cell's `budget`) is not a result: every run of the sweep runs it again (within a run,
up to `cluster.error_retries` times), and the new record keeps the earlier attempts' errors in
`earlier_errors`. A record stopped at its own `budget.job_usd` (`job_budget`) is a result, replaced
only by a run under a higher `job_usd`. Any other finished record is never rerun.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.safeio import make_dirs, remove_tree
from runners.config.schema import RootConfig
from runners.core.job_record import has_file, read_result, record_mtime
from runners.core.record_files import RESULT, SCORES
from runners.core.record_types import Result

VOUCHED = ("ok", "timeout")  # ledger statuses of records that are results
REPLACEABLE = ("job_budget", "budget")  # results a run under a higher budget replaces: their record decides (`Reruns`)


@dataclass(frozen=True)
class Reruns:
    """What decides whether a finished record runs again, read from the config that would run it:
    `job_usd` (`budget.job_usd`, None: no budget now, higher than any) for one stopped at its own budget."""

    job_usd: float | None = None

    @classmethod
    def of(cls, cfg: RootConfig) -> Reruns:
        return cls(cfg.budget.job_usd)

    def again(self, result: Result) -> bool:
        """Whether the record `result` runs again: an errored one always (a host failure is never
        final; the sweep's admission decides whether one stopped by its budget starts); one stopped
        at its own budget only under a higher `job_usd` (it continues from the cache, and replaces
        that result)."""
        if result.stop_reason == "job_budget":
            return self.job_usd is None or result.budget_usd is None or self.job_usd > result.budget_usd
        return result.errored


def is_final(job_dir: Path, scored: bool, reruns: Reruns, logged: Logged | None = None) -> bool:
    """A record is complete once its result (and, when a judge is configured, its scores) exist,
    unless `reruns` would run it again.

    `logged`: the job's last record line in the ledger. When it vouches for the record (see
    `ledger_vouches`), result.json is only stat'ed, not read: a resume of 20,000 jobs opens none."""
    vouched = ledger_vouches(job_dir, logged)
    if vouched is None:
        result = read_result(job_dir)
        if result is None or reruns.again(result):
            return False
    elif not vouched:
        return False
    return not scored or has_file(job_dir, SCORES)


def ledger_vouches(job_dir: Path, logged: Logged | None) -> bool | None:
    """Whether the ledger line `logged` settles that `job_dir` holds a finished, non-errored record
    without reading it: True when the line logged a result that is never rerun (`ok`, `timeout`)
    and result.json exists, written no later than the line (the record is the one it logged);
    False when result.json is gone (removed after the line: not complete); None when the line
    cannot tell — none, an errored record (its retries are read from the record itself), no time,
    or a result.json newer than the line (an actor finished after a killed driver's line)."""
    if logged is None or logged.status not in VOUCHED or logged.time is None or logged.stop_reason in REPLACEABLE:
        return None
    written = record_mtime(job_dir, RESULT)
    if written is None:
        return False
    return True if written <= logged.time else None


def ledger_vouches_scores(job_dir: Path, logged: Logged | None, key: str) -> bool:
    """Whether the ledger line `logged` settles that `job_dir`'s scores are by the judge whose key is
    `key`, without reading them: the line logged those scores with that key (a record it vouches
    for: `ledger_vouches`), and scores.json was written no later than the line (a re-score since
    rewrote it: then it is read)."""
    if logged is None or logged.judge_key != key or logged.status not in VOUCHED or logged.time is None:
        return False
    written = record_mtime(job_dir, SCORES)
    return written is not None and written <= logged.time


def fresh_job_dir(job_dir: Path) -> list[dict[str, Any]]:
    """Start a job directory from nothing, discarding what a killed attempt left behind; returns the
    earlier attempts that ended in an error or at the job's own budget (kept in the new record, with
    what each paid)."""
    earlier: list[dict[str, Any]] = []
    result = read_result(job_dir)  # from its folder or its pack (a packed record run again)
    if result is not None:
        if not (result.errored or result.stop_reason == "job_budget"):
            raise FileExistsError(f"{job_dir} already holds a finished job; refusing to overwrite it")
        earlier = [*result.earlier_errors, result.error_entry()]
    if os.path.lexists(job_dir):
        remove_tree(job_dir, check=True)
    make_dirs(job_dir)
    return earlier


@dataclass(frozen=True, slots=True)
class Logged:
    """What the ledger says of a job's record: its status, which run of the record, when, its stop,
    and the judge key of the scores it logged (None: not scored, or a line from before the key was logged)."""

    status: str
    record_attempt: int
    time: float | None
    stop_reason: str | None = None
    judge_key: str | None = None
