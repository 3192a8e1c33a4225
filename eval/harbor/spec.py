"""A task as the exported verifier reads it back: `tests/spec/task.json` beside the original workspace.

The spec holds what our judge needs and the agent must never see (rubrics, checkpoints, answers,
TheAgentCompany's evaluator): it lives in the verifier's image only. Paths are relative to the spec
folder, so the same spec reads the same on the host (tests) and in the image.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.config import JudgeConfig
from runners.core.task import Checkpoint, Rubric, Task

SPEC_FILE = "task.json"
WORKSPACE_DIR = "workspace"  # the original workspace, staged inputs included
TAC_DIR = "tac"  # TheAgentCompany's task folder (evaluator.py, Dockerfile, ...)
SPEC_VERSION = 1


@dataclass(frozen=True)
class Spec:
    """The task, which benchmark it came from, how it is judged and whether the tab was on."""

    task: Task
    benchmark: str  # the benchmark's label, as our records name it (`builtin-workspace`)
    benchmark_config: dict[str, Any]
    judge: dict[str, Any]  # the judge config, as a job record keeps it
    default_judge: str  # what `judge=auto` runs for this benchmark
    tab: bool
    method: str  # how our records name the arm: `runningtab` (tab on) or `dci` (the agent alone)
    tab_method: str = "runningtab"  # the tab's settings for the MCP server (a method with a tab: an ablation too)

    @property
    def judge_name(self) -> str:
        """The judge that scores the task (`auto`: the benchmark's own)."""
        name = str(self.judge.get("name") or "auto")
        return self.default_judge if name == "auto" else name


def judge_doc(jc: JudgeConfig) -> dict[str, Any]:
    """A judge config as a job record keeps it (`eval.score.judge_config` reads it back)."""
    from runners.models.registry import flat_model

    doc = dataclasses.asdict(jc)
    doc["model"] = flat_model(jc.model) if jc.model is not None else None
    return doc


def task_doc(task: Task, tac: bool) -> dict[str, Any]:
    """`task` with its workspace (and TheAgentCompany's folder) as spec-relative paths; the staged
    inputs are already in the exported workspace."""
    extra = dict(task.extra)
    if tac:
        extra["task_dir"] = TAC_DIR
        extra["evaluator"] = f"{TAC_DIR}/evaluator.py"
    return {
        "id": task.id, "prompt": task.prompt, "output": task.output, "answer": task.answer,
        "rubrics": [dataclasses.asdict(r) for r in task.rubrics],
        "checkpoints": [dataclasses.asdict(c) for c in task.checkpoints],
        "extra": extra,
    }


def write_spec(folder: Path, spec: Spec) -> None:
    tac = bool(spec.task.extra.get("evaluator"))
    doc = {
        "spec_version": SPEC_VERSION, "task": task_doc(spec.task, tac), "benchmark": spec.benchmark,
        "benchmark_config": spec.benchmark_config, "judge": spec.judge, "default_judge": spec.default_judge,
        "tab": spec.tab, "method": spec.method, "tab_method": spec.tab_method,
    }
    (folder / SPEC_FILE).write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def read_spec(folder: Path) -> Spec:
    """The spec in `folder`, its paths made absolute under it."""
    path = folder / SPEC_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a task spec written by `python -m eval.export harbor` ({e})") from None
    if doc.get("spec_version") != SPEC_VERSION:
        raise ValueError(f"{path}: spec_version {doc.get('spec_version')!r}; this RunningTab reads {SPEC_VERSION}: export the task again")
    t = doc["task"]
    extra = dict(t["extra"])
    for key in ("task_dir", "evaluator"):
        if key in extra:
            extra[key] = str(folder / extra[key])
    task = Task(
        id=t["id"], prompt=t["prompt"], workspace=folder / WORKSPACE_DIR, output=t["output"], answer=t["answer"],
        rubrics=tuple(Rubric(**r) for r in t["rubrics"]), checkpoints=tuple(Checkpoint(**c) for c in t["checkpoints"]),
        extra=extra,
    )
    return Spec(task, doc["benchmark"], doc["benchmark_config"], doc["judge"], doc["default_judge"], doc["tab"], doc["method"],
                doc["tab_method"])
