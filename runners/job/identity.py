"""Job identity: the one function that decides whether two jobs are the same job.

Ids, resume (locally and from a bucket) and every "already complete" check go through
`identity()`. It covers everything that can change what the agent does — the agent's, method's,
environment's and model's settings, the seed, and the task's content (its record and a manifest of
its workspace) — and nothing that cannot: where records go, prices, retries, HTTP timeouts, how a
model server is started, and the judge (a new judge re-scores a record, it does not re-run it).
Paths are replaced by content, so the same benchmark checked out elsewhere is the same job.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from envs.safeio import open_regular, walk_regular
from eval.benchmarks import load_benchmark
from runners.config.runner import AgentConfig
from runners.config.schema import RootConfig, job_record_config
from runners.core.config_fields import Enters, names, values
from runners.core.frozen_fields import FROZEN_JOB, defaults_of, drop_new_defaults
from runners.core.harness_names import is_own_loop
from runners.core.task import Task
from runners.core.task_extras import IdPart, TaskExtras
from runners.models.registry import config_classes, flat_defaults, flat_model
from runners.models.scripted import ScriptedModelConfig
from runners.models.server import ServerConfig

_FULL_HASH_MAX = 1 << 20  # larger files are identified by size plus their first and last 256 KiB
_EDGE = 256 * 1024
_file_digests: dict[tuple[str, int, int, int], str] = {}


def identity(cfg: RootConfig, task: Task) -> dict[str, Any]:
    """What a job's id hashes: the agent-relevant config and the task's content."""
    return {"config": config_identity(cfg), "task": task_digest(task)}


def config_identity(cfg: RootConfig) -> dict[str, Any]:
    """The config part of the identity: the same for every task of a grid cell."""
    d = job_record_config(cfg)
    for k in names([RootConfig], Enters.JOB_ID, present=False):  # the judge, what may be spent, …
        d.pop(k, None)
    d["benchmark"] = values(cfg.benchmark, Enters.JOB_ID)  # where and which tasks: the task digest covers content
    d["model"] = flat_model(cfg.model)  # every kind's fields, as before each kind had its class: ids stay
    d["task"] = None  # which task: the task digest says; `runners.job` names it here, a sweep's cell does not
    for k in names([AgentConfig], Enters.JOB_ID, present=False):
        d["agent"].pop(k)
    d["env"].pop("shell_session")  # how bash calls are launched, not what they see
    for k in names(config_classes(), Enters.JOB_ID, present=False):  # how a reply is fetched, billed, cached
        d["model"].pop(k)
    for k in names([ServerConfig], Enters.JOB_ID, present=False):  # how and where a server starts
        d["model"]["server"].pop(k)
    if isinstance(cfg.model, ScriptedModelConfig) and cfg.model.script:
        d["model"]["script"] = _script_digest(cfg.model.script)
    if isinstance(cfg.model, ScriptedModelConfig) and cfg.model.script_dir:  # its scripts, wherever the folder is
        d["model"]["script_dir"] = _folder_digest(cfg.model.script_dir)
    defaults = defaults_of(cfg)
    defaults["model"] = flat_defaults(cfg.model)
    return drop_new_defaults(d, defaults, FROZEN_JOB)


def identity_digest(cfg: RootConfig, task: Task) -> str:
    blob = json.dumps(identity(cfg, task), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class CellDigest:
    """`identity_digest` for many tasks of one cell: the config part is serialized and hashed once.

    The bytes hashed are exactly `json.dumps(identity(cfg, task), sort_keys=True, default=str)`:
    its keys sort as "config" < "task", so the blob is a fixed prefix plus the task's digest."""

    def __init__(self, cfg: RootConfig) -> None:
        config = json.dumps(config_identity(cfg), sort_keys=True, default=str)
        self._prefix = hashlib.sha256(f'{{"config": {config}, "task": '.encode())

    def __call__(self, task_digest: str) -> str:
        h = self._prefix.copy()
        h.update(f"{json.dumps(task_digest)}}}".encode())
        return h.hexdigest()


def task_digests(tasks: list[Task]) -> dict[str, str]:
    """`task_digest` of each task by id, walking each distinct workspace once (tasks share them)."""
    manifests: dict[Path, list[tuple[str, int, str]]] = {}
    out = {}
    for t in tasks:
        root = Path(t.workspace)
        if root not in manifests:
            manifests[root] = workspace_manifest(root)
        out[t.id] = task_digest(t, manifests[root])
    return out


def task_digest(task: Task, manifest: list[tuple[str, int, str]] | None = None) -> str:
    """A hash of `task_identity`; `manifest`: the workspace's, when the caller already has it."""
    blob = json.dumps(task_identity(task, manifest), sort_keys=True, default=_plain)
    return hashlib.sha256(blob.encode()).hexdigest()


def task_identity(task: Task, manifest: list[tuple[str, int, str]] | None = None) -> dict[str, Any]:
    """What a task's digest hashes: its record (prompt, answer, rubrics, …), its workspace and staged
    files by content, and what it adds to the sandbox."""
    record = {f.name: getattr(task, f.name) for f in dataclasses.fields(task) if f.name not in ("workspace", "stage", "sandbox")}
    if task.sandbox:  # a task that adds nothing to the sandbox keeps the id it had before the field
        record["sandbox"] = task.sandbox.identity()
    record["extra"] = extras_identity(task.extra)
    record["workspace"] = workspace_manifest(task.workspace) if manifest is None else manifest
    record["stage"] = {dest: _file_digest(Path(src)) for dest, src in sorted(task.stage.items())}
    return record


def extras_identity(extra: Mapping[str, Any]) -> Any:
    """What of a task's extras enters its id: a `TaskExtras` field by field as each declares
    (a location by name or content, never its path; a judging choice not at all), a free-form
    mapping whole."""
    if not isinstance(extra, TaskExtras):
        return extra
    out: dict[str, Any] = {}
    for name, how, value in extra.identity_fields():
        if value is not None and how is IdPart.NAME:
            value = PurePath(value).name
        elif value is not None and how is IdPart.CONTENT:
            value = _location_digest(Path(value))
        out[name] = value
    return out


def _location_digest(path: Path) -> str | None:
    """A file's or a folder's content digest (without Python's bytecode caches, which running a
    task's code in place would add); None when nothing is there."""
    if path.is_dir():
        files = [e for e in workspace_manifest(path) if "__pycache__" not in PurePath(e[0]).parts]
        return hashlib.sha256(json.dumps(files).encode()).hexdigest()
    return _file_digest(path) if path.is_file() else None


def workspace_manifest(root: Path) -> list[tuple[str, int, str]]:
    """(path, size, content digest) of every regular file under `root`, sorted; cached by stat."""
    if not Path(root).is_dir():
        return []
    return sorted((rel, st.st_size, _file_digest(Path(root) / rel, Path(root), rel, st)) for rel, st in walk_regular(root))


def _file_digest(path: Path, root: Path | None = None, rel: str | None = None, st: os.stat_result | None = None) -> str:
    st = st or os.stat(path)
    key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if key not in _file_digests:
        h = hashlib.sha256()
        with open_regular(root or path.parent, rel or path.name) as f:
            if st.st_size <= _FULL_HASH_MAX:
                h.update(f.read())
            else:
                h.update(f.read(_EDGE))
                f.seek(st.st_size - _EDGE)
                h.update(f.read(_EDGE))
        _file_digests[key] = f"{st.st_size}:{h.hexdigest()}"
    return _file_digests[key]


def _script_digest(script: str) -> str:
    p = Path(script)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else script


def _folder_digest(folder: str) -> str:
    blob = json.dumps(workspace_manifest(Path(folder)))
    return hashlib.sha256(blob.encode()).hexdigest()


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return str(obj)


_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class JobSpec:
    """One job: its id (a hash of its identity, runners/job/identity.py), config and task."""

    job_id: str
    cfg: RootConfig
    task_id: str


def job_id(cfg: RootConfig, task: Task | str) -> str:
    """Readable and deterministic: the same job identity (runners/job/identity.py) always gives the same id.

    `task` is the task, or its id (then the benchmark is loaded to read the task's content)."""
    if isinstance(task, str):
        task = load_benchmark(cfg.benchmark).task(task)
    return readable_id(cfg, task.id, identity_digest(cfg, task))


def readable_id(cfg: RootConfig, task_id: str, digest: str) -> str:
    """`<benchmark>__<task>__[<harness>__]<method>__<model>__s<seed>__<hash>`: a production harness's
    job says its harness (our own loop's ids are as they always were)."""
    harness = () if is_own_loop(cfg.agent.harness) else (cfg.agent.harness,)
    parts = (cfg.benchmark.label, task_id, *harness, cfg.method.name, cfg.model.id, f"s{cfg.seed}", digest[:10])
    return "__".join(_SAFE.sub("-", str(p)) for p in parts)
