"""TheAgentCompany (Xu et al. 2025): its file-server-only tasks, over a local export of the file server.

From a checkout's tasks folder (`benchmark.tasks_dir`, one folder per task with task.md,
checkpoints.md, dependencies.yml, evaluator.py and data files) and the file server's files
(`benchmark.export_dir`, the folder holding `Documents/`). A task is in the subset when its
dependencies.yml lists only `owncloud`; `include` narrows it to named tasks (which may also be
tasks with no dependencies at all), `exclude` drops some (conf/benchmark/agentcompany_paper.yaml:
the paper's 31 tasks). The workspace is the export; the files the task's Dockerfile copies into
`/workspace` are staged there as the agent's inputs (without a Dockerfile, as in the sample
excerpts: the data files task.md names as `/workspace/<path>`); the other data files are grader
references, kept out of the workspace (the evaluator sees them where the Dockerfile puts them).
What the Dockerfile builds in `/data` is the agent's too, and `file_server=served` runs the company's
file server in the agent's sandbox (eval/tac/agent_sandbox.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from envs.sandbox import bwrap_problem
from envs.sandbox_extras import SandboxExtras
from eval.benchmarks.base import BenchmarkError
from eval.benchmarks.task_texts import AGENTCOMPANY_PREFACE, AGENTCOMPANY_SERVED_PREFACE
from eval.config import BenchmarkConfig
from eval.tac import agent_sandbox, dockerfile
from runners.core.config_fields import Enters, setting
from runners.core.paths import PATH
from runners.core.task import Checkpoint, Task
from runners.core.task_extras import IdPart, TaskExtras, extra_field

FILE_SERVER = "owncloud"
_META = {"task.md", "checkpoints.md", "dependencies.yml", "evaluator.py", "evaluator.py.enc", "scenarios.json", "Dockerfile"}
_POINTS = r"[(\[]\s*(\d+)\s*(?:pts?|points?)\s*[)\]]"
# "## Checkpoint 1 (1pt)", "(2pts)", "(1 point)" headings (also as the benchmark misspells them:
# "Checkpoing 1", "Checkpint 3"), and "1. [2pts] text" list items.
_CHECKPOINT = re.compile(
    rf"^#{{1,6}}\s*Checkp\w*\s*(\d+)\s*:?\s*{_POINTS}[^\n]*$|^[ \t]*(?:(\d+)[.)]|[-*])[ \t]*{_POINTS}",
    re.I | re.M,
)


def dependencies(task_dir: Path) -> list[str]:
    path = task_dir / "dependencies.yml"
    if not path.is_file():
        return []
    deps = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(deps, list):
        raise BenchmarkError(f"{path} must be a YAML list of service names")
    return [str(d).strip() for d in deps]


def numbered_checkpoints(text: str) -> list[tuple[int | None, Checkpoint]]:
    """The checkpoints of checkpoints.md (headings or list items, see `_CHECKPOINT`), each with the
    number it is given (None for an unnumbered item), its text and its points."""
    heads = list(_CHECKPOINT.finditer(text))
    out = []
    for i, m in enumerate(heads):
        body = text[m.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)].strip()
        number = m.group(1) or m.group(3)
        out.append((int(number) if number else None, Checkpoint(text=body, points=int(m.group(2) or m.group(4)))))
    return out


def parse_checkpoints(text: str) -> tuple[Checkpoint, ...]:
    """The checkpoints of checkpoints.md, in order (for display and counts before any scoring)."""
    return tuple(c for _, c in numbered_checkpoints(text))


def checkpoint_texts(text: str, points: list[int]) -> list[str]:
    """A text from checkpoints.md for each checkpoint the evaluator returned (`points`, in order):
    the one numbered like it (by position when the items are unnumbered or numbered twice) when
    their points agree, else "". The evaluator's list is the task's; checkpoints.md only names them."""
    md = numbered_checkpoints(text)
    numbers = [n for n, _ in md]
    if None in numbers or len(set(numbers)) < len(numbers):
        by_number = {i + 1: c for i, (_, c) in enumerate(md)}
    else:
        by_number = {n: c for n, c in md if n is not None}
    return [c.text if (c := by_number.get(i + 1)) is not None and c.points == p else "" for i, p in enumerate(points)]


def staged_inputs(task_dir: Path, task_md: str, plan: dockerfile.Plan | None = None) -> dict[str, Path]:
    """The agent's inputs: what the Dockerfile copies into /workspace; without a Dockerfile, the data
    files that task.md names under /workspace, at the path it names."""
    if (task_dir / "Dockerfile").is_file():
        return (plan or _plan(task_dir)).workspace_inputs()
    stage = {}
    for f in sorted(p for p in task_dir.rglob("*") if p.is_file() and p.name not in _META):
        rel = f.relative_to(task_dir).as_posix()
        for name in (rel, f.name):
            if f"/workspace/{name}" in task_md:
                stage[name] = f
                break
    return stage


@dataclass
class Config(BenchmarkConfig):
    """TheAgentCompany's file-server-only tasks: `tasks_dir` (a checkout's `workspaces/tasks`) and
    `export_dir` (the file server's files, the folder that holds `Documents/`); `include`/`exclude`
    task names."""

    name: str = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default="agentcompany")
    # where and which tasks: each task's folder enters its id by content (`Extras`)
    tasks_dir: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH)
    export_dir: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH)
    include: list[str] = setting(Enters.SWEEP_NAME, default_factory=list)
    exclude: list[str] = setting(Enters.SWEEP_NAME, default_factory=list)
    # mounted: the file server's files are the workspace (the paper's reading); served: the
    # company's file server runs in the agent's sandbox (eval/tac/agent_sandbox.py); the task says which
    file_server: str = setting(Enters.SWEEP_NAME, default="mounted")


@dataclass(frozen=True)
class Extras(TaskExtras):
    """What the agentcompany judge needs of a task: its folder (entering the id by its content, so
    the same checkout elsewhere is the same job), its evaluator (inside that folder: by name), the
    services it depends on and the file-server mode."""

    task_dir: str = extra_field(IdPart.CONTENT, default="")
    evaluator: str = extra_field(IdPart.NAME, default="")
    dependencies: list[str] = extra_field(IdPart.VALUE, default_factory=list)
    file_server: str = extra_field(IdPart.VALUE, default="mounted")


def _plan(task_dir: Path) -> dockerfile.Plan:
    try:
        return dockerfile.plan(task_dir)
    except dockerfile.DockerfileError as e:
        raise BenchmarkError(str(e)) from e


def load_task(task_dir: Path, export: Path, file_server: str = "mounted") -> Task:
    task_md = (task_dir / "task.md").read_text(encoding="utf-8")
    cp = task_dir / "checkpoints.md"
    plan = _plan(task_dir)
    stage = {**staged_inputs(task_dir, task_md, plan), **agent_sandbox.image_folders(task_dir, plan)}
    binds = agent_sandbox.image_binds(task_dir, plan)
    served = file_server == "served"
    return Task(
        id=task_dir.name,
        prompt=(AGENTCOMPANY_SERVED_PREFACE if served else AGENTCOMPANY_PREFACE) + task_md.strip(),
        workspace=agent_sandbox.empty_folder() if served else export,
        output="./",
        checkpoints=parse_checkpoints(cp.read_text(encoding="utf-8")) if cp.is_file() else (),
        stage={**agent_sandbox.served_files(export), **stage} if served else stage,
        extra=Extras(task_dir=str(task_dir), evaluator=str(task_dir / "evaluator.py"), dependencies=dependencies(task_dir),
                     file_server=file_server),
        sandbox=agent_sandbox.server_sandbox(binds) if served else SandboxExtras(binds=binds),
    )


def load(cfg: Config) -> list[Task]:
    if not cfg.tasks_dir:
        raise BenchmarkError("agentcompany needs benchmark.tasks_dir (a TheAgentCompany checkout's workspaces/tasks)")
    if not cfg.export_dir:
        raise BenchmarkError("agentcompany needs benchmark.export_dir (the file server's files: the folder holding Documents/)")
    if cfg.file_server not in agent_sandbox.MODES:
        raise BenchmarkError(f"benchmark.file_server={cfg.file_server!r}: choose one of {', '.join(agent_sandbox.MODES)}")
    if cfg.file_server == "served" and (problem := bwrap_problem()) is not None:
        raise BenchmarkError(f"benchmark.file_server=served runs the file server in the agent's bubblewrap sandbox, but {problem}; "
                             "install bubblewrap or use benchmark.file_server=mounted")
    tasks_dir, export = Path(cfg.tasks_dir).expanduser(), Path(cfg.export_dir).expanduser()
    if not tasks_dir.is_dir():
        raise BenchmarkError(f"benchmark.tasks_dir={tasks_dir} does not exist")
    if not export.is_dir():
        raise BenchmarkError(f"benchmark.export_dir={export} does not exist")
    folders = {p.name: p for p in sorted(tasks_dir.iterdir()) if (p / "task.md").is_file()}
    if not folders:
        raise BenchmarkError(f"no task folders (with task.md) in benchmark.tasks_dir={tasks_dir}")
    deps = {n: dependencies(p) for n, p in folders.items()}
    subset = {n for n, d in deps.items() if d == [FILE_SERVER]}
    if cfg.include:
        bad = [n for n in cfg.include if deps.get(n) not in ([FILE_SERVER], [])]
        if bad:
            raise BenchmarkError(
                f"benchmark.include names task(s) that are neither file-server-only nor dependency-free tasks of {tasks_dir}: {bad}"
            )
        subset = set(cfg.include)
    subset -= set(cfg.exclude)
    return [load_task(folders[n], export, cfg.file_server) for n in sorted(subset)]
