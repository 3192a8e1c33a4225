"""The one task model every benchmark adapts to.

A `Task` says what the agent is asked, which folder becomes its workspace, where the deliverable
goes, and what scores it (rubrics, checkpoints or an answer). Scoring data never enters the
workspace: the environment materializes only `workspace`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.sandbox_extras import SandboxExtras
from runners.core.task_extras import E, extras_as


@dataclass(frozen=True)
class Rubric:
    text: str
    check: dict[str, Any] | None = None


@dataclass(frozen=True)
class Checkpoint:
    text: str
    points: int = 1
    check: dict[str, Any] | None = None


@dataclass(frozen=True)
class Task:
    """One task. `workspace` is a source folder (never written); `output` is relative to the workspace.

    `stage` maps workspace-relative destination paths to source files placed into the workspace
    besides the folder (e.g. Workspace-Bench inputs staged under their original names).
    `extra` carries benchmark-specific data the judge needs (never shown to the agent): the
    benchmark's `TaskExtras` dataclass, whose fields say how each enters the job id
    (runners/core/task_extras.py), or a free-form mapping (hashed whole); read it with `extra_as`.
    `sandbox` is what the task adds to the agent's sandbox (its image's folders, a server beside it).
    """

    id: str
    prompt: str
    workspace: Path
    output: str = "output/"
    rubrics: tuple[Rubric, ...] = ()
    checkpoints: tuple[Checkpoint, ...] = ()
    answer: str | None = None
    stage: dict[str, Path] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    sandbox: SandboxExtras = field(default_factory=SandboxExtras)

    def extra_as(self, cls: type[E]) -> E:
        """The extras as `cls` (a `TaskExtras`): the typed view every reader of them takes."""
        return extras_as(self.extra, cls)

    @property
    def kind(self) -> str:
        """What scores this task: 'rubrics', 'checkpoints', 'answer' or 'none'."""
        if self.rubrics:
            return "rubrics"
        if self.checkpoints:
            return "checkpoints"
        if self.answer is not None:
            return "answer"
        return "none"
