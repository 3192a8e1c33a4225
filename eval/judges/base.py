"""The judge seam: `score(task, job_dir) -> scores.json content`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from runners.core.task import Task


class JudgeError(RuntimeError):
    """Scoring could not be done (missing evaluator, wrong task kind, a crashed evaluator)."""


class InfrastructureFailure(JudgeError):
    """The judge could not read the record for a reason that is not the agent's (a record folder
    missing on the host, a reading process that cannot start or answer). Never a score: the job stays
    unscored, counted as such, and re-scorable (`python -m eval.score`, or the sweep on resume)."""


class Judge(Protocol):
    name: str

    def score(self, task: Task, job_dir: Path) -> dict[str, Any]:
        """The scores.json document for one finished job of `task`."""
        ...


def scores_doc(judge: str, task: Task, metrics: dict[str, float], items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The scores.json shape every judge writes."""
    return {"judge": judge, "task_id": task.id, "kind": task.kind, "metrics": metrics, "items": items, **extra}
