"""What each planned job of a sweep is: a result, or which kind of not-result (docs/concepts.md,
"Errored, failed, unscored"), and the sweep's plan that says which jobs there should be.

One classification for every reader: Table 1's accounting (eval/report/analyses/accounting.py),
`eval.frames`, and the sweep's last line and exit code (runners/sweep/ending.py).

`plan.jsonl` (in the sweep's folder) lists the jobs of the grid the last driver ran, one JSON object
a line with the job's id and axes; the driver writes it once it holds the sweep, before any job
runs, so that a job that never started is still counted (`not_started`). A job with a record that
the plan does not list (a grid narrowed since) counts as planned too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from envs.safeio import write_bytes
from runners.core.record_types import Result

PLAN = "plan.jsonl"
MAX_PLAN_BYTES = 256 << 20  # ~1 million jobs

# A result is in the tables; the others are not results, each counted apart and never a 0.
STATUSES = {
    "result": "finished and, when the sweep has a judge, scored: in every table",
    "errored": "the host's failure (env_error, model_error, the sweep's or its cell's budget): every run of the sweep runs it again",
    "unscored": "finished, but its judge could not read the record for a reason of the host's: scored again on resume (or python -m eval.score)",
    "unfinished": "a record without result.json (its attempt was killed, or failed outside its record): a resume runs it",
    "not_started": "planned, no record (a budget held it back, or the sweep stopped first): a resume runs it",
}
NOT_RESULTS = tuple(s for s in STATUSES if s != "result")


def job_status(result: Result | None, scored: bool, judged: bool = True, recorded: bool = True) -> str:
    """The job's status from its record: `result` (None: no result.json), whether it has scores,
    whether its sweep has a judge, and whether it has a record at all."""
    if not recorded:
        return "not_started"
    if result is None:
        return "unfinished"
    if result.errored:
        return "errored"
    return "result" if scored or not judged else "unscored"


@dataclass(frozen=True)
class Planned:
    """One job of the plan: its id and axes (Table 1's row is benchmark, harness, model, method)."""

    job_id: str
    benchmark: str
    harness: str
    model: str
    method: str
    task_id: str
    seed: int

    @property
    def row(self) -> tuple[str, str, str, str]:
        return self.benchmark, self.harness, self.model, self.method


def write_plan(sweep_dir: Path, jobs: Iterable[Planned]) -> None:
    """The plan, written whole (atomically) in place of the last one."""
    write_bytes(Path(sweep_dir) / PLAN, b"".join(json.dumps(asdict(j)).encode() + b"\n" for j in jobs))


def read_plan(sweep_dir: Path) -> list[Planned]:
    """The plan (empty for a sweep written before there was one); a line that is not a planned job is skipped."""
    path = Path(sweep_dir) / PLAN
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PLAN_BYTES)
    except OSError:
        return []
    names = [f.name for f in fields(Planned)]
    out = []
    for line in data.splitlines():
        try:
            doc = json.loads(line)
            job = Planned(**{k: doc[k] for k in names})
        except (ValueError, TypeError, KeyError):
            continue
        if all(isinstance(getattr(job, k), str) for k in names if k != "seed") and isinstance(job.seed, int):
            out.append(job)
    return out
