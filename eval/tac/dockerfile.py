"""A TheAgentCompany task image, rebuilt from its Dockerfile without Docker.

Each task's Dockerfile starts from the benchmark's base image (which holds `/utils` with the
helper modules and `/workspace`) and then copies files and builds data. The steps that need no
network are replayed into a folder per top-level image directory (`utils/`, `data/`, ...):
`COPY` (Docker's rules: into a directory when the target is one or ends in `/`), `RUN mkdir`, and
`RUN sqlite3 DB < SQL` (run with Python's sqlite3). Everything else (`pip install`, `apt-get`,
`ENV`, ...) is not replayed; `Plan.skipped` says which lines and why. `COPY … /workspace` targets
are not built here: they are the agent's inputs, staged into its workspace by the loader.
"""

from __future__ import annotations

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
            if not (c.dest == "/workspace" or c.dest.startswith("/workspace/")):
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
            _run(rest.strip(), result, made, line)
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
        if not (task_dir / s).resolve().is_relative_to(root) or not (task_dir / s).exists():
            raise DockerfileError(f"{task_dir}/Dockerfile: COPY source {s!r} is not a file of the task folder")
        sources.append(Path(os.path.normpath(task_dir / s)))
    clean = "/" + str(PurePosixPath(dest)).strip("/")
    into = dest.endswith("/") or len(sources) > 1 or clean in made
    made.add(clean if into else str(PurePosixPath(clean).parent))
    return Copy(tuple(sources), clean, into)


def _run(cmd: str, result: Plan, made: set[str], line: str) -> None:
    parts = [p.strip() for p in cmd.split("&&")]
    if all(_MKDIR.match(p) for p in parts):
        for p in parts:
            for d in _MKDIR.match(p).group(1).split():  # type: ignore[union-attr]
                result.mkdirs.append(d)
                made.add("/" + d.strip("/"))
        return
    m = _SQLITE.match(cmd)
    if m:
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


def _host(root: Path, image_path: str) -> Path:
    parts = PurePosixPath(image_path).parts[1:]
    if not parts or parts[0] not in IMAGE_TOPS or ".." in parts:
        raise DockerfileError(f"the image path {image_path} is outside the folders replayed here ({', '.join(IMAGE_TOPS)})")
    return root.joinpath(*parts)


def build(p: Plan, root: Path) -> list[str]:
    """Replay the plan under `root` (one folder per top-level image directory); /workspace copies are
    the loader's. Returns the top-level folders that exist afterwards."""
    for top in ("utils", "data", "instruction"):
        (root / top).mkdir(parents=True, exist_ok=True)
    for d in p.mkdirs:
        _host(root, d).mkdir(parents=True, exist_ok=True)
    for c in p.copies:
        if c.dest == "/workspace" or c.dest.startswith("/workspace/"):
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
