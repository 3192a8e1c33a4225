"""Workspace-Bench (Tang et al. 2026) from its HF dataset or a local export, plus the role workspaces.

A record's role workspace is `<workspaces>/filesys/<role>_raw/` (role from `persona`, snake_case,
or `benchmark.roles[persona]`). Its inputs, stored as `data/<16-hex>_<name>`, are staged under
their original names at the workspace root, so that no hash prefix reaches the agent — unless
every one of them is already in the role workspace (a file of that name with the same bytes);
the inputs are never split between the two places. Rubrics, answers and other metadata go to
`Task.extra`, never into the workspace.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.benchmarks.base import BenchmarkError
from eval.benchmarks.task_texts import WORKSPACE_BENCH_OUTPUTS
from eval.config import BenchmarkConfig
from runners.core.config_fields import Enters, setting
from runners.core.paths import PATH, PATH_OR_NAME
from runners.core.task import Rubric, Task
from runners.core.task_extras import IdPart, TaskExtras, extra_field

REQUIRED = ("absolute_id", "persona", "task", "output_files", "rubrics", "data_manifest")


@dataclass
class Config(BenchmarkConfig):
    """Workspace-Bench: `dataset` + `split` (the HF cache) or `path` (a local parquet/JSON/JSONL
    export), and `workspaces` (the folder holding `filesys/` and `data/`); `roles` maps a persona to
    its `filesys/` folder when the default (`<persona_snake_case>_raw`) does not fit."""

    name: str = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default="workspace_bench")
    # where and which records: their content is in each task's id
    dataset: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH_OR_NAME)  # a HF dataset id, or a folder datasets can load
    split: str | None = setting(Enters.SWEEP_NAME, default=None)
    workspaces: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH)
    roles: dict[str, str] = setting(Enters.SWEEP_NAME, default_factory=dict)


@dataclass(frozen=True)
class Extras(TaskExtras):
    """A record's metadata for the judge, all of it the record's (so in the id); `steps` and
    `rubric_diffs` only when the record has them, so that the ids of records without them stay."""

    output_files: list[str] = extra_field(IdPart.VALUE, default_factory=list)
    persona: str = extra_field(IdPart.VALUE, default="")
    difficulty: Any = extra_field(IdPart.VALUE, default=None)
    rubric_types: list[str] = extra_field(IdPart.VALUE, default_factory=list)
    file_dep_graph: list[Any] = extra_field(IdPart.VALUE, default_factory=list)
    steps: Any = extra_field(IdPart.VALUE, default=None, omit_default=True)
    rubric_diffs: Any = extra_field(IdPart.VALUE, default=None, omit_default=True)


def load_records(cfg: Config) -> list[dict[str, Any]]:
    """The dataset's records, from `benchmark.path` (parquet/JSON/JSONL) or the HF cache."""
    if cfg.path:
        return _local_records(Path(cfg.path).expanduser())
    if not cfg.dataset:
        raise BenchmarkError(
            "workspace_bench needs benchmark.dataset (e.g. Workspace-Bench/Workspace-Bench-Lite) with "
            "benchmark.split, or benchmark.path=<local parquet/JSON/JSONL export>"
        )
    import datasets

    try:
        ds = datasets.load_dataset(cfg.dataset, split=cfg.split or "lite")
    except Exception as e:  # noqa: BLE001 - any failure here means the data is not available
        raise BenchmarkError(
            f"could not load HF dataset {cfg.dataset!r} split {cfg.split!r} ({type(e).__name__}: {e}). "
            "Download it into the HF cache where there is internet, or set benchmark.path to a local export."
        ) from None
    return [dict(r) for r in ds]


def _local_records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise BenchmarkError(f"benchmark.path {path} does not exist (expected a .parquet, .json or .jsonl export)")
    if path.suffix == ".parquet":
        import datasets

        return [dict(r) for r in datasets.Dataset.from_parquet(str(path))]
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    obj = json.loads(text)
    if isinstance(obj, dict):
        obj = obj.get("rows") or obj.get("data") or [obj]
    return [r.get("row", r) for r in obj]  # the dataset viewer wraps rows as {"row": {...}}


def role_folder(persona: str, cfg: Config, filesys: Path) -> Path:
    name = cfg.roles.get(persona) or re.sub(r"[^a-z0-9]+", "_", persona.lower()).strip("_") + "_raw"
    folder = filesys / name
    if not folder.is_dir():
        have = sorted(p.name for p in filesys.iterdir() if p.is_dir()) if filesys.is_dir() else []
        raise BenchmarkError(
            f"no role workspace {folder} for persona {persona!r}; folders in {filesys}: {have or 'none'}. "
            f"Map it with benchmark.roles={{'{persona}': <folder>}}"
        )
    return folder


def _by_name(folder: Path) -> dict[str, list[Path]]:
    """The role workspace's files by base name (the source folder the user provides, not the agent's)."""
    out: dict[str, list[Path]] = {}
    for parent, _, files in os.walk(folder):
        for name in files:
            out.setdefault(name, []).append(Path(parent) / name)
    return out


def _already_there(src: Path, name: str, present: dict[str, list[Path]]) -> bool:
    return any(filecmp.cmp(src, p, shallow=False) for p in present.get(name, []) if p.is_file())


def record_to_task(rec: dict[str, Any], cfg: Config, root: Path, names_cache: dict[Path, dict[str, list[Path]]]) -> Task:
    missing = [k for k in REQUIRED if k not in rec]
    if missing:
        raise BenchmarkError(f"Workspace-Bench record {rec.get('absolute_id', '?')} lacks field(s) {missing}")
    ws = role_folder(rec["persona"], cfg, root / "filesys")
    present = names_cache.setdefault(ws, _by_name(ws))
    stage = {}
    for entry in rec["data_manifest"] or []:
        src = root / entry["stored_relpath"]
        if not src.is_file():
            raise BenchmarkError(f"task {rec['absolute_id']}: input {src} is missing (data_manifest of the record)")
        stage[entry["filename"]] = src
    if all(_already_there(src, name, present) for name, src in stage.items()):
        stage = {}
    outputs = list(rec["output_files"] or [])
    return Task(
        id=str(rec["absolute_id"]),
        prompt=rec["task"] + _outputs_line(outputs),
        workspace=ws,
        output=outputs[0] if len(outputs) == 1 else "./",
        rubrics=tuple(Rubric(text=r) for r in rec["rubrics"]),
        stage=stage,
        extra=Extras(
            output_files=outputs,
            persona=rec["persona"],
            difficulty=rec.get("task_diff"),
            rubric_types=list(rec.get("rubric_types") or []),
            file_dep_graph=list(rec.get("file_dep_graph") or []),
            steps=rec.get("steps"),  # the judge's evidence (eval/judges/workspace_bench/protocol.py)
            rubric_diffs=rec.get("rubric_diffs"),
        ),
    )


def _outputs_line(outputs: list[str]) -> str:
    return WORKSPACE_BENCH_OUTPUTS.format(files=", ".join(outputs)) if outputs else ""


def record_task_text(task: Task) -> str:
    """The record's own task text (what the benchmark's judge is shown): the prompt without the line
    naming the outputs that the loader adds for the agent. Any other task: its prompt."""
    line = _outputs_line(list(task.extra_as(Extras).output_files or []))
    return task.prompt.removesuffix(line) if line else task.prompt


def load(cfg: Config) -> list[Task]:
    if not cfg.workspaces:
        raise BenchmarkError("workspace_bench needs benchmark.workspaces (the folder holding filesys/ and data/)")
    root = Path(cfg.workspaces).expanduser()
    if not (root / "filesys").is_dir():
        raise BenchmarkError(f"benchmark.workspaces={root} has no filesys/ folder (the role workspaces)")
    names_cache: dict[Path, dict[str, list[Path]]] = {}
    wanted = {str(i) for i in cfg.ids}
    records = load_records(cfg)
    known = [str(r.get("absolute_id")) for r in records]
    unknown = sorted(wanted - set(known), key=str)
    if unknown:
        shown = ", ".join(known[:40]) + (f", … ({len(known)} in all)" if len(known) > 40 else "")
        raise BenchmarkError(f"benchmark 'workspace_bench' has no task(s) {unknown}; tasks: {shown}")
    records = [r for r in records if not wanted or str(r.get("absolute_id")) in wanted]
    return [record_to_task(r, cfg, root, names_cache) for r in records]
