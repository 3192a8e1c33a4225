"""The folder the `wb_agent` judge inspects: what the agent left, and what it was given.

    deliverable/    the files the agent created or changed, at their workspace paths
    inputs/         the task's workspace as the agent was given it (its folder and staged inputs)
    agent_run.json  the agent's final message, its steps (each event as the trace summary of
                    eval/judges/workspace_bench/protocol.py clips it, all of them), the files it deleted, and
                    the deliverable files left out of this folder

The judge's shell sees the folder read-only (bubblewrap); its `read` tool only reads. The
deliverable is the agent's, so it is copied as the project copies agent files (envs/safeio.py:
regular files only, no link followed), at most `MAX_FILES` files and `MAX_BYTES` bytes; what does
not fit is named in agent_run.json. The inputs are materialized as the agent's workspace is by
default (a copy, copy-on-write where the filesystem allows). The folder is named like the agent
shells' scratch (`runningtab-shell-<pid>-…`), so that a sweep's start removes what a killed
process left (runners/job/scratch.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from envs.deliverable import copy_tree
from envs.safeio import write_json
from envs.sandbox import SHELL_SCRATCH_PREFIX
from envs.workspace import materialize
from eval.judges.workspace_bench.protocol import shown, trace_summary
from runners.core.job_record import JobRecord
from runners.core.task import Task

MAX_FILES = 10_000
MAX_BYTES = 1 << 30
MAX_LISTED = 200  # names of left-out files listed; the rest counted


def copy_deliverable(record: JobRecord, dest: Path) -> list[str]:
    """Copy the record's deliverable to `dest` within the caps; the paths left out (shown escaped)."""
    dest.mkdir(parents=True, exist_ok=True)
    if not record.deliverable_dir.is_dir():
        return []
    got = copy_tree(record.deliverable_dir, dest, MAX_FILES, MAX_BYTES)
    return [shown(rel) for rel in got.left_out] + ["…"] * got.rest


def agent_run(record: JobRecord, left_out: list[str]) -> dict[str, Any]:
    """What agent_run.json holds (everything in it was written by the agent under test)."""
    more = len(left_out) - MAX_LISTED
    return {
        "finalMessage": record.final_answer,
        "steps": trace_summary(record.view.get("messages") or [], max_items=None),
        "deletedFiles": [shown(p) for p in record.result.deleted],
        "leftOutOfDeliverable": left_out[:MAX_LISTED] + ([f"...and {more} more"] if more > 0 else []),
    }


@contextmanager
def judge_folder(task: Task, record: JobRecord) -> Iterator[Path]:
    """A fresh folder laid out as the module doc says, removed on exit."""
    root = Path(tempfile.mkdtemp(prefix=f"{SHELL_SCRATCH_PREFIX}{os.getpid()}-judge-"))
    inputs = root / "inputs"
    try:
        source = Path(task.workspace) if Path(task.workspace).is_dir() else None
        stage = {rel: src for rel, src in task.stage.items() if Path(src).is_file()}
        materialize(source, inputs, stage)
        left_out = copy_deliverable(record, root / "deliverable")
        write_json(root / "agent_run.json", agent_run(record, left_out))
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)
