"""How one run of a TheAgentCompany evaluator ended, and whose doing that is.

The rule (docs/concepts.md, "Errored, failed, unscored"): an evaluator that fails after it opened
(or its file server served) a path that is not one of the task's own files left unchanged, that is
a path the agent made, changed or removed, or one it never made, failed on what the agent left: a
result. The checkpoints it finished keep their points, the others score 0, and `evaluator_failure`
in scores.json names the outcome (`timeout`, `cpu_time`, `memory`, `file_size`, `processes`: a
limit; `raised`: an exception, `error` its type; `exited`: another non-zero exit; `no_result`). A
1.6 KB xlsx that claims a million rows, a `link.txt` that is not UTF-8, a file swapped for a
folder, a deliverable never made: all the agent's.

The failure is the host's (the job stays unscored, re-scorable) on evidence the agent cannot write:
the evaluator never started (its sandbox, its file server or its import failed, before anything of
the agent's was read), it opened nothing of the agent's (a broken evaluator, a file of the task's
own), a limit stopped it while a judge-model call was in flight, or a judge-model call had failed
(the provider's error). The evidence comes from the evaluator's own process and the judge's proxy,
never from what the agent wrote.

Which checkpoints were done, the scoring strategy, the files read, whether it was handed the
trajectory and the type of what it raised come from the progress lines `run_evaluator.py` writes
on a pipe no program it starts inherits (see there).
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
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
    handed: bool = False  # grade_checkpoints was given the trajectory
    raised: str = ""  # the type of the exception the evaluator ended on

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
            if item.get("handed") == "trajectory":
                p.handed = True
            if isinstance(item.get("raised"), str):
                p.raised = item["raised"][:100]
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


def agent_files_read(progress: Progress, unchanged: Callable[[str], bool]) -> list[str]:
    """The paths (workspace-relative) the evaluator opened or was served that are not original files
    left unchanged (`unchanged(rel)`): made, changed or removed by the agent, or never made. In order."""
    out = []
    for path in progress.opened:
        for prefix, rel_prefix in IN_WORKSPACE:
            if path.startswith(prefix):
                rel = rel_prefix + path[len(prefix) :]
                if not unchanged(rel) and rel not in out:
                    out.append(rel)
                break
    return out


def host_failure(end: Ended, progress: Progress, read: list[str], llm_errors: int) -> str | None:
    """Why a failed evaluator run is the host's (one line), or None when it is the agent's: a result.
    `read`: `agent_files_read`. The trajectory it was handed is not counted: every evaluator gets it,
    a broken one too."""
    limit = limit_hit(end)
    if not progress.started:
        return "the evaluator did not start (its sandbox, file server or import failed), before it read anything of the agent's"
    if limit and end.llm_in_flight:
        return f"it hit its {limit} limit while waiting for the judge model"
    if llm_errors:
        return f"{llm_errors} judge-model call(s) failed before it ended"
    if not read:
        return (f"{limit + ' limit' if limit else 'exit ' + str(end.returncode)} before it opened anything the agent made, "
                "changed, removed or never made")
    return None


def evaluator_failure(end: Ended, progress: Progress, read: list[str], has_result: bool) -> dict[str, Any]:
    """`evaluator_failure` for scores.json: the outcome named, what of the agent's it read, how far it got."""
    limit = limit_hit(end)
    if limit:
        outcome, error = limit, progress.raised or None
    elif progress.raised:
        outcome, error = "raised", progress.raised
    elif end.returncode:
        outcome, error = "exited", f"exit code {end.returncode}"
    else:
        outcome, error = "no_result", None if has_result else "it wrote no result"
    doc: dict[str, Any] = {"outcome": outcome, "error": error, "handed_trajectory": progress.handed,
                           "agent_files_read": read[:20], "checkpoints_done": len(progress.checkpoints)}
    if limit:
        doc["limit"] = limit  # the field records before the outcome had
    return doc


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
