"""The native benchmark format: a folder with `tasks.jsonl` and `workspaces/<name>/…`.

Each line of tasks.jsonl is one task:

    {"id": "t1", "prompt": "...", "workspace": "office", "output": "output/report.md",
     "rubrics": [{"text": "...", "check": {"type": "contains", "file": "output/report.md", "values": ["42"]}}]}

`output` (default `output/`) is relative to the workspace. A task has exactly one of `rubrics`
(each `{"text", "check"?}`), `checkpoints` (each `{"text", "points"?, "check"?}`) or `answer`
(a string). `extra` (an object) is passed to the judge (e.g. `{"scoring": "bonus_for_completing_final"}`).
The check language is in `eval/judges/rule/check_kinds.py`. Everything beside `workspaces/` (tasks.jsonl,
solutions/) stays outside the agent's workspace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.judges.rule.check_kinds import CheckError, validate
from runners.core.task import Checkpoint, Rubric, Task

TASKS_FILE = "tasks.jsonl"
WORKSPACES = "workspaces"
_KEYS = {"id", "prompt", "workspace", "output", "rubrics", "checkpoints", "answer", "extra"}


class NativeFormatError(ValueError):
    """A native benchmark folder or its lines are malformed; `problems` holds one line per bad line
    of tasks.jsonl (every one of them, so that one run names them all), or the folder's one problem."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


SHOWN_PROBLEMS = 50  # bad lines named one by one; past that, how many more


def load_native(root: Path) -> list[Task]:
    """All tasks of the native benchmark at `root`, in file order. Every bad line is named (a file
    with three mistakes is fixed in one round, not three)."""
    root = Path(root)
    tasks_file = root / TASKS_FILE
    if not tasks_file.is_file():
        raise NativeFormatError(
            f"no {TASKS_FILE} in {root.resolve()}: a native benchmark is a folder with {TASKS_FILE} "
            f"and {WORKSPACES}/<name>/ (set benchmark.path to such a folder)"
        )
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(tasks_file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = task_from_json(json.loads(line), root)
        except (json.JSONDecodeError, NativeFormatError, TypeError) as e:
            problems.append(f"{tasks_file}:{lineno}: {e}")
            continue
        if task.id in seen:
            problems.append(f"{tasks_file}:{lineno}: duplicate task id {task.id!r} (first on line {seen[task.id]})")
            continue
        seen[task.id] = lineno
        tasks.append(task)
    if problems:
        shown = problems[:SHOWN_PROBLEMS]
        if len(problems) > SHOWN_PROBLEMS:
            shown.append(f"{tasks_file}: {len(problems) - SHOWN_PROBLEMS} more bad line(s) not shown")
        raise NativeFormatError("\n".join(shown), shown)
    if not tasks:
        raise NativeFormatError(f"{tasks_file} holds no tasks")
    return tasks


def task_from_json(obj: Any, root: Path) -> Task:
    """One task line → `Task`, checking every field."""
    if not isinstance(obj, dict):
        raise NativeFormatError(f"a task line must be a JSON object, got {type(obj).__name__}")
    unknown = set(obj) - _KEYS
    if unknown:
        raise NativeFormatError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    for key in ("id", "prompt", "workspace"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            raise NativeFormatError(f"field {key!r} is missing or not a non-empty string")
    ws = root / WORKSPACES / obj["workspace"]
    inside = (root / WORKSPACES).resolve()
    if inside not in ws.resolve().parents:
        raise NativeFormatError(
            f"task {obj['id']!r}: workspace {obj['workspace']!r} must be a folder inside {inside} "
            "(a name under workspaces/, no '..', no absolute path): the agent must never see tasks.jsonl"
        )
    if not ws.is_dir():
        raise NativeFormatError(f"task {obj['id']!r}: workspace folder {ws} does not exist")
    kinds = [k for k in ("rubrics", "checkpoints", "answer") if obj.get(k) is not None]
    if len(kinds) != 1:
        raise NativeFormatError(
            f"task {obj['id']!r} must have exactly one of 'rubrics', 'checkpoints', 'answer' (has {kinds or 'none'})"
        )
    rubrics = tuple(_rubric(r, i) for i, r in enumerate(obj.get("rubrics") or []))
    checkpoints = tuple(_checkpoint(c, i) for i, c in enumerate(obj.get("checkpoints") or []))
    answer = obj.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise NativeFormatError(f"task {obj['id']!r}: 'answer' must be a string")
    extra = obj.get("extra") or {}
    if not isinstance(extra, dict):
        raise NativeFormatError(f"task {obj['id']!r}: 'extra' must be an object")
    return Task(
        id=obj["id"],
        prompt=obj["prompt"],
        workspace=ws,
        output=obj.get("output") or "output/",
        rubrics=rubrics,
        checkpoints=checkpoints,
        answer=answer,
        extra=extra,
    )


def _check(obj: dict[str, Any], what: str) -> dict[str, Any] | None:
    check = obj.get("check")
    if check is None:
        return None
    if not isinstance(check, dict):
        raise NativeFormatError(f"{what}: 'check' must be an object")
    try:
        validate(check)
    except CheckError as e:
        raise NativeFormatError(f"{what}: {e}") from None
    return check


def _rubric(obj: Any, i: int) -> Rubric:
    if isinstance(obj, str):
        return Rubric(text=obj)
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        raise NativeFormatError(f"rubric {i} must be a string or an object with a 'text' string")
    return Rubric(text=obj["text"], check=_check(obj, f"rubric {i}"))


def _checkpoint(obj: Any, i: int) -> Checkpoint:
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        raise NativeFormatError(f"checkpoint {i} must be an object with a 'text' string")
    points = obj.get("points", 1)
    if not isinstance(points, int) or points < 1:
        raise NativeFormatError(f"checkpoint {i}: 'points' must be a positive integer")
    return Checkpoint(text=obj["text"], points=points, check=_check(obj, f"checkpoint {i}"))


def task_to_json(task: dict[str, Any]) -> str:
    """One tasks.jsonl line (stable key order, so that generated benchmarks are byte-identical)."""
    order = ["id", "prompt", "workspace", "output", "rubrics", "checkpoints", "answer", "extra"]
    return json.dumps({k: task[k] for k in order if k in task}, ensure_ascii=False)
