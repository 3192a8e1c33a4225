"""A TheAgentCompany task image, rebuilt from its Dockerfile without Docker.

Each task's Dockerfile starts from the benchmark's base image (which holds `/utils` with the
helper modules and `/workspace`) and then copies files and builds data. The steps that need no
network are replayed into a folder per top-level image directory (`utils/`, `data/`, ...):
`COPY` (Docker's rules: into a directory when the target is one or ends in `/`; a source may be a
glob, `COPY eval_data/* /utils`, as Docker's), `RUN mkdir`, and `RUN sqlite3 DB < SQL` (run with
Python's sqlite3). Everything else (`pip install`, `apt-get`, `ENV`, ...) is not replayed, nor is a
`mkdir` of an empty folder outside the image folders rebuilt here (`/app/logs`, for the agent's own
server); `Plan.skipped` says which lines and why. A step that would put files outside those folders
is refused when the plan is made (the loader's refusal), never while scoring. `COPY … /workspace`
targets are not built here: they are the agent's inputs, staged into its workspace by the loader.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

BASE_DIRS = ("/utils", "/workspace", "/instruction", "/outputs")  # folders the base image already has
IMAGE_TOPS = ("utils", "data", "instruction", "npc", "workspace")  # top-level folders a task may build into
PIP_REASON = "Python packages: provided by the `tac` extra (pip install -e '.[tac]'), not installed per task"
_SQLITE = re.compile(r"^sqlite3\s+(\S+)\s*<\s*(\S+)$")
_MKDIR = re.compile(r"^mkdir(?:\s+-p)?((?:\s+/\S+)+)$")


class DockerfileError(ValueError):
    """A Dockerfile step that names something outside the task folder or the image."""


@dataclass(frozen=True)
class Copy:
    sources: tuple[Path, ...]
    dest: str
    into_dir: bool


@dataclass
class Plan:
    copies: list[Copy] = field(default_factory=list)
    mkdirs: list[str] = field(default_factory=list)
    sqlite: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def workspace_inputs(self) -> dict[str, Path]:
        """Files the image copies into /workspace, at their workspace-relative paths."""
        out: dict[str, Path] = {}
        for c in self.copies:
            if not _in_workspace(c.dest):
                continue
            for src, rel in _expand(c):
                out[str(PurePosixPath(rel).relative_to("/workspace"))] = src
        return out


def logical_lines(text: str) -> list[str]:
    """Instructions with backslash continuations joined, comments and blank lines dropped."""
    out, buf = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append((buf + line).strip())
        buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


def plan(task_dir: Path) -> Plan:
    """What the task's Dockerfile does (an empty plan when the folder has none)."""
    path = task_dir / "Dockerfile"
    result = Plan()
    if not path.is_file():
        return result
    made = set(BASE_DIRS)
    for line in logical_lines(path.read_text(encoding="utf-8")):
        op, _, rest = line.partition(" ")
        op = op.upper()
        if op == "FROM":
            continue
        if op in ("COPY", "ADD"):
            result.copies.append(_copy(task_dir, rest, made))
        elif op == "RUN":
            _run(rest.strip(), result, made, line, task_dir)
        else:
            result.skipped.append((line, f"{op} has no effect on the files the evaluator reads"))
    return result


def _copy(task_dir: Path, rest: str, made: set[str]) -> Copy:
    args = json.loads(rest) if rest.strip().startswith("[") else shlex.split(rest)
    args = [a for a in args if not a.startswith("--")]
    if len(args) < 2:
        raise DockerfileError(f"{task_dir}/Dockerfile: COPY needs a source and a destination: {rest!r}")
    *srcs, dest = args
    sources = []
    root = task_dir.resolve()
    for s in srcs:
        names = sorted(glob.glob(s, root_dir=task_dir, include_hidden=True)) if glob.has_magic(s) else [s]
        if not names:
            raise DockerfileError(f"{task_dir}/Dockerfile: COPY source {s!r} matches no file of the task folder")
        for name in names:
            if not (task_dir / name).resolve().is_relative_to(root) or not (task_dir / name).exists():
                raise DockerfileError(f"{task_dir}/Dockerfile: COPY source {name!r} is not a file of the task folder")
            sources.append(Path(os.path.normpath(task_dir / name)))
    clean = "/" + str(PurePosixPath(dest)).strip("/")
    into = dest.endswith("/") or len(sources) > 1 or clean in made
    made.add(clean if into else str(PurePosixPath(clean).parent))
    copy = Copy(tuple(sources), clean, into)
    if not _in_workspace(clean):
        for _, image_path in _expand(copy):
            _image_path(image_path, task_dir)
    return copy


def _run(cmd: str, result: Plan, made: set[str], line: str, task_dir: Path) -> None:
    parts = [p.strip() for p in cmd.split("&&")]
    if all(_MKDIR.match(p) for p in parts):
        folders = [d for p in parts for d in _MKDIR.match(p).group(1).split()]  # type: ignore[union-attr]
        outside = [d for d in folders if not _replayed(d)]
        if outside:
            result.skipped.append((line, f"{', '.join(outside)}: an empty folder outside the image folders rebuilt here ({', '.join(IMAGE_TOPS)})"))
        for d in folders:
            if _replayed(d):
                result.mkdirs.append(d)
                made.add("/" + d.strip("/"))
        return
    m = _SQLITE.match(cmd)
    if m:
        for path in m.groups():
            _image_path(path, task_dir)
        result.sqlite.append((m.group(1), m.group(2)))
        return
    reason = PIP_REASON if re.match(r"^(pip3?|python3? -m pip)\s+install\b", cmd) else "needs the network or system packages"
    result.skipped.append((line, reason))


def _expand(c: Copy) -> list[tuple[Path, str]]:
    """(source file, image path) for every file a COPY puts in the image."""
    out = []
    for src in c.sources:
        base = f"{c.dest}/{src.name}" if c.into_dir and src.is_file() else c.dest
        if src.is_file():
            out.append((src, base))
        else:
            out += [(f, f"{base}/{f.relative_to(src).as_posix()}") for f in sorted(src.rglob("*")) if f.is_file()]
    return out


def _replayed(image_path: str) -> bool:
    parts = PurePosixPath(image_path).parts[1:]
    return bool(parts) and parts[0] in IMAGE_TOPS and ".." not in parts and PurePosixPath(image_path).is_absolute()


def _in_workspace(image_path: str) -> bool:
    return image_path == "/workspace" or image_path.startswith("/workspace/")


def _image_path(image_path: str, task_dir: Path) -> None:
    """Refuse, when the plan is made, a step that would put files where the image is not rebuilt."""
    if not _replayed(image_path):
        raise DockerfileError(f"{task_dir}/Dockerfile: the image path {image_path} is outside the folders replayed here ({', '.join(IMAGE_TOPS)})")


def _host(root: Path, image_path: str) -> Path:
    if not _replayed(image_path):
        raise DockerfileError(f"the image path {image_path} is outside the folders replayed here ({', '.join(IMAGE_TOPS)})")
    return root.joinpath(*PurePosixPath(image_path).parts[1:])


def build(p: Plan, root: Path) -> list[str]:
    """Replay the plan under `root` (one folder per top-level image directory); /workspace copies are
    the loader's. Returns the top-level folders that exist afterwards."""
    for top in ("utils", "data", "instruction"):
        (root / top).mkdir(parents=True, exist_ok=True)
    for d in p.mkdirs:
        _host(root, d).mkdir(parents=True, exist_ok=True)
    for c in p.copies:
        if _in_workspace(c.dest):
            continue
        for src, image_path in _expand(c):
            target = _host(root, image_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
    for db, sql in p.sqlite:
        script = _host(root, sql).read_text(encoding="utf-8")
        with sqlite3.connect(_host(root, db)) as conn:
            conn.executescript(script)
        conn.close()
    return sorted(d.name for d in root.iterdir() if d.is_dir())
