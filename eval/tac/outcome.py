"""How one run of a TheAgentCompany evaluator ended, and what that means for the job's score.

An evaluator that hits one of its limits (wall-clock timeout, CPU time, memory, file size,
processes) after reading a file the agent made failed *on the agent's files*: a 1.6 KB xlsx that
claims a million rows is the agent's deliverable, so the checkpoints the evaluator had not
finished score 0 and the job is scored (`evaluator_failure` in scores.json says so). Anything
else that stops it (the sandbox does not start, the evaluator cannot be imported or raises, a
limit hit before it read any agent-made file, or while a judge-model call was in flight) is an
infrastructure failure: the job stays unscored and can be re-scored.

Which checkpoints were done, the scoring strategy and the files read come from the progress
lines `run_evaluator.py` writes (see there).
"""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass, field
from typing import Any

from eval.tac.compat.scoring import STRATEGIES, Checkpoint, sum_strategy

MAX_PROGRESS_LINES = 5000
# What the processes' own words say when a limit refused them (the kernel's, Python's, bash's).
_MEMORY = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory")
_PROCESSES = ("Resource temporarily unavailable", "BlockingIOError: [Errno 11]", "can't start new thread")
_FILE_SIZE = ("File size limit exceeded", "File too large")


@dataclass
class Progress:
    """What the evaluator reported before it ended."""

    started: bool = False
    checkpoints: list[tuple[int, int]] = field(default_factory=list)
    strategy: str = ""
    opened: list[str] = field(default_factory=list)
    # (checkpoint index, service): a service that is not here, which that checkpoint reached for
    # (compat/absent.py says which checkpoint); it scored 0 for it
    absent: list[tuple[int, str]] = field(default_factory=list)
    withheld: dict[int, int] = field(default_factory=dict)  # checkpoint index -> the points its evaluator gave it

    @classmethod
    def parse(cls, text: str) -> Progress:
        """From the progress pipe's text (bounded by the caller); lines that do not parse are skipped."""
        p = cls()
        for line in text.splitlines()[:MAX_PROGRESS_LINES]:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if not isinstance(item, dict):
                continue
            if item.get("started") is True:
                p.started = True
            cp = item.get("checkpoint")
            if isinstance(cp, list) and len(cp) == 2 and all(isinstance(v, int) and v >= 0 for v in cp) and cp[1] <= cp[0]:
                p.checkpoints.append((cp[0], cp[1]))
            if isinstance(item.get("strategy"), str):
                p.strategy = item["strategy"][:100]
            if isinstance(item.get("open"), str):
                p.opened.append(item["open"][:4096])
            services = item.get("unreachable")
            if p.checkpoints and isinstance(services, list) and len(p.absent) < MAX_PROGRESS_LINES:
                index = len(p.checkpoints) - 1  # the checkpoint just reported
                p.absent += [(index, s[:100]) for s in services[:20] if isinstance(s, str)]
                points = item.get("withheld")
                if isinstance(points, int) and not isinstance(points, bool) and 0 < points <= p.checkpoints[index][0]:
                    p.withheld[index] = points
        return p


@dataclass(frozen=True)
class Ended:
    """The evaluator process's end: exit code (negative: a signal), timed out, its stderr's tail,
    and whether a judge-model call was still in flight."""

    returncode: int | None
    timed_out: bool
    stderr: str
    llm_in_flight: bool = False


def limit_hit(end: Ended) -> str | None:
    """Which limit stopped the evaluator: timeout, cpu_time, memory, file_size, processes, or None."""
    if end.timed_out:
        return "timeout"
    code = end.returncode
    if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return "cpu_time"
    if code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or any(s in end.stderr for s in _FILE_SIZE):
        return "file_size"
    if code in (-signal.SIGKILL, 128 + signal.SIGKILL) or any(s in end.stderr for s in _MEMORY):
        return "memory"  # RLIMIT_AS refusals surface as MemoryError; the OOM killer as SIGKILL
    if any(s in end.stderr for s in _PROCESSES):
        return "processes"
    return None


# Where the evaluator's sandbox has the agent's workspace files (eval/tac/image_state.py).
IN_WORKSPACE = (("/workspace/", ""), ("/data/", ".image/data/"), ("/srv/owncloud/", ".image/owncloud/"))


def agent_files_read(progress: Progress, agent_files: set[str]) -> list[str]:
    """The agent-made files (workspace-relative) the evaluator opened or was served, in order."""
    out = []
    for path in progress.opened:
        for prefix, rel_prefix in IN_WORKSPACE:
            if path.startswith(prefix):
                rel = rel_prefix + path[len(prefix) :]
                if rel in agent_files and rel not in out:
                    out.append(rel)
                break
    return out


def failure_on_agent_files(end: Ended, progress: Progress, agent_files: set[str]) -> dict[str, Any] | None:
    """`evaluator_failure` for scores.json when the evaluator failed on the agent's files; None when
    it is an infrastructure failure (the caller then leaves the job unscored)."""
    limit = limit_hit(end)
    read = agent_files_read(progress, agent_files)
    if limit is None or not progress.started or end.llm_in_flight or not read:
        return None
    return {"limit": limit, "agent_files_read": read[:20], "checkpoints_done": len(progress.checkpoints)}


def why_infrastructure(end: Ended, progress: Progress) -> str:
    """One line on why an evaluator run that failed is not the agent's doing."""
    limit = limit_hit(end)
    if not progress.started:
        return "the evaluator did not start (sandbox or import failure)"
    if limit and end.llm_in_flight:
        return f"it hit its {limit} limit while waiting for the judge model"
    if limit:
        return f"it hit its {limit} limit before reading any file the agent made"
    return f"exit {end.returncode}"


def unfinished_result(progress: Progress, md_points: list[int]) -> dict[str, Any]:
    """The evaluator's result as it would be with every unfinished checkpoint at 0: the ones it made,
    then the rest of checkpoints.md's (their points), scored by its strategy (sum if unknown)."""
    done = [Checkpoint(total, result) for total, result in progress.checkpoints]
    rest = [Checkpoint(points, 0) for points in md_points[len(done) :]]
    strategy = STRATEGIES.get(progress.strategy.removesuffix("_strategy") or "sum", sum_strategy)
    checkpoints = done + rest
    return {"checkpoints": [{"total": c.total, "result": c.result} for c in checkpoints], "final_score": strategy(checkpoints)}


def unreachable(progress: Progress, count: int) -> dict[int, list[str]]:
    """The services not here that each of the `count` checkpoints reached for (index -> services)."""
    out: dict[int, list[str]] = {}
    for index, service in progress.absent:
        if index < count and service not in out.setdefault(index, []):
            out[index].append(service)
    return out
