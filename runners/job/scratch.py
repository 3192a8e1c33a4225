"""Per-job scratch folders (the materialized workspace), named so that a sweep can find its own.

A job's scratch is `<work_dir or $TMPDIR>/rt-ws-<tag>-<pid>-<random>/`: `tag` is derived from the
job id, `pid` is the process that runs the job. A driver or actor that is killed leaves its scratch
behind; a sweep's start removes the scratch of its own jobs whose process is gone (a job still
running in an orphaned actor keeps its folder), and the agent shells' scratch
(`$TMPDIR/runningtab-shell-<pid>-*`) of processes that are gone.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from envs.safeio import remove_tree
from envs.sandbox import SHELL_SCRATCH_PREFIX
from envs.workspace import discard_workspace
from runners.models.lifeline import pid_alive

log = logging.getLogger(__name__)
PREFIX = "rt-ws-"


def tag(job_id: str) -> str:
    return hashlib.sha256(job_id.encode()).hexdigest()[:12]


def job_scratch(job_id: str, work_dir: str | None) -> Path:
    """A new scratch folder for one attempt of `job_id`, owned by this process (`work_dir` is made
    if it does not exist yet)."""
    if work_dir:
        os.makedirs(work_dir, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{tag(job_id)}-{os.getpid()}-", dir=work_dir))


def remove_scratch(parent: Path) -> None:
    discard_workspace(parent / "workspace")
    remove_tree(parent)


def clean_stale(job_ids: list[str], work_dirs: set[str | None]) -> list[Path]:
    """Remove the scratch folders of these jobs whose owning process no longer runs; returns them."""
    tags = {tag(j) for j in job_ids}
    removed = []
    for d in work_dirs:
        base = Path(d or tempfile.gettempdir())
        for p in base.glob(f"{PREFIX}*-*-*") if base.is_dir() else []:
            t, _, rest = p.name[len(PREFIX):].partition("-")
            pid = rest.partition("-")[0]
            if t in tags and pid.isdigit() and not pid_alive(int(pid)) and p.is_dir() and not p.is_symlink():
                remove_scratch(p)
                removed.append(p)
    removed += _stale_shell_scratch(Path(tempfile.gettempdir()))
    if removed:
        log.info("removed %d stale scratch folder(s) left by killed processes", len(removed))
    return removed


def _stale_shell_scratch(base: Path) -> list[Path]:
    """The agent shells' scratch (envs/sandbox.make_scratch) of processes that no longer run."""
    removed = []
    for p in base.glob(f"{SHELL_SCRATCH_PREFIX}*-*"):
        pid = p.name[len(SHELL_SCRATCH_PREFIX):].partition("-")[0]
        if pid.isdigit() and not pid_alive(int(pid)) and p.is_dir() and not p.is_symlink():
            remove_tree(p)
            removed.append(p)
    return removed
