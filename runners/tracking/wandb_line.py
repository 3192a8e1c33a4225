"""The sweep's closing line about W&B: how many runs, where they are, and how to upload them.

    W&B: 9 runs (8 cells, summary) saved offline in outputs/s/wandb; upload them with: wandb sync outputs/s/wandb

Runs are counted by their W&B id, not by folder: a run written again (a partial cell completed by a
later invocation, a summary whose tables changed) keeps one folder per version, all under one id,
and `wandb sync` uploads them in order into that one run; `latest-run` is a link, not a run.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

RUN_PREFIXES = ("offline-run-", "run-")


def run_ids(wandb_dir: Path) -> dict[str, int]:
    """Each W&B run id under `wandb_dir` (its `<sweep>/wandb/`) and how many folders hold a version of it."""
    ids: dict[str, int] = {}
    if not wandb_dir.is_dir():
        return ids
    for p in wandb_dir.iterdir():
        if p.is_symlink() or not p.is_dir() or not p.name.startswith(RUN_PREFIXES):
            continue
        run_id = _run_id(p)
        ids[run_id] = ids.get(run_id, 0) + 1
    return ids


def _run_id(folder: Path) -> str:
    """The id from the folder's `run-<id>.wandb`; the folder's name is `<prefix><time>-<id>`, with a
    `-1`, `-2`… added when a run is written again within the same second, so it is only the fallback."""
    for f in folder.glob("run-*.wandb"):
        return f.name[len("run-"):-len(".wandb")]
    return folder.name.removeprefix("offline-").removeprefix("run-").partition("-")[2]


def shown(path: Path) -> str:
    """The path as the user would type it: relative to the working folder when inside it."""
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else str(path.resolve())


def closing_line(wandb_dir: Path, mode: str, project: str, entity: str | None, kinds: dict[str, str]) -> str | None:
    """One line naming the runs, their folder and the sync command (None when no run was written).
    `kinds` names the known run ids (`cell`, `summary`, `spend`); others count as runs all the same."""
    ids = run_ids(wandb_dir)
    if not ids:
        return None
    counts: dict[str, int] = {}
    for run_id in ids:
        kind = kinds.get(run_id, "other")
        counts[kind] = counts.get(kind, 0) + 1
    parts = [f"{counts['cell']} cell{'s' * (counts['cell'] != 1)}" if "cell" in counts else None,
             *(k for k in ("summary", "spend") if k in counts),
             f"{counts['other']} other" if "other" in counts else None]
    n, folders = len(ids), sum(ids.values())
    what = f"{n} run{'s' * (n != 1)} ({', '.join(p for p in parts if p)})"
    if folders != n:
        what += f" in {folders} folders (a run written again keeps a folder per version; sync uploads them in order)"
    where = shlex.quote(shown(wandb_dir))
    if mode == "offline":
        return f"W&B: {what} saved offline in {where}; upload them with: wandb sync {where}"
    target = f"{entity}/{project}" if entity else project
    return f"W&B: {what} logged {mode} to project {target}; local copies in {where}"
