"""What a TheAgentCompany task gives the agent besides its workspace: the image's `/data`, and,
with `benchmark.file_server=served`, the company's file server inside its sandbox.

- **mounted** (the default, the paper's direct-interaction reading): the file server's files are
  the workspace itself (`Documents/…`); no server runs for the agent.
- **served**: the files live in the workspace's `.image/owncloud/` and are served by the file
  server (eval/tac/fileserver) on the sandbox's loopback at http://the-agent-company.com:8092,
  with the benchmark's credentials, as the benchmark's ownCloud serves them; the workspace itself
  holds only the task's local inputs, as the image's `/workspace` does. Shares go to
  `.image/fileserver/`.

Either way `.image/data` (the Dockerfile's `/data`, staged there) is bound at `/data`. What the agent
changes under `.image/` is in its record, and the evaluator gets it back (eval/tac/image_state.py).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from envs.sandbox import python_prefixes
from envs.sandbox_extras import WORKSPACE, SandboxExtras, Service
from eval.config import checkout_cache
from eval.tac import dockerfile
from eval.tac.image_state import AGENT_TOPS, FILESERVER, OWNCLOUD, STATE_DIR
from eval.tac.run_evaluator import FILESERVER_CODE, FILESERVER_PORT, fileserver_argv
from eval.tac.sandbox import SERVER_HOST

TAC_DIR = Path(__file__).resolve().parent
MODES = ("mounted", "served")
SERVER_URL = f"http://{SERVER_HOST}:{FILESERVER_PORT}"
USER = PASSWORD = "theagentcompany"


def image_folders(task_dir: Path, plan: dockerfile.Plan, cache: str | None = None) -> dict[str, Path]:
    """The files the task's Dockerfile puts in the image folders the agent gets (`/data`), staged at
    `.image/<top>/<path>`; built once per content of the task folder into the cache."""
    tops = [t for t in AGENT_TOPS if any(d == f"/{t}" or d.startswith(f"/{t}/") for d in _built(plan))]
    if not tops:
        return {}
    root = _build_once(task_dir, plan, cache)
    stage = {}
    for top in tops:
        for f in sorted((root / top).rglob("*")):
            if f.is_file():
                stage[f"{STATE_DIR}/{top}/{f.relative_to(root / top).as_posix()}"] = f
    return stage


def image_binds(task_dir: Path, plan: dockerfile.Plan) -> tuple[tuple[str, str], ...]:
    """`.image/<top>` at `/<top>` for each image folder the Dockerfile makes that the agent gets."""
    return tuple((f"{STATE_DIR}/{t}", f"/{t}") for t in AGENT_TOPS if any(d == f"/{t}" or d.startswith(f"/{t}/") for d in _built(plan)))


def served_files(export: Path) -> dict[str, Path]:
    """The file server's files staged under `.image/owncloud/` (served mode)."""
    return {f"{STATE_DIR}/{OWNCLOUD}/{f.relative_to(export).as_posix()}": f for f in sorted(export.rglob("*")) if f.is_file()}


def server_sandbox(binds: tuple[tuple[str, str], ...]) -> SandboxExtras:
    """The agent's sandbox with the file server beside its shell (served mode): the same isolated
    interpreter as the evaluator's, run from its code's folder, not the workspace."""
    files, state = f"{WORKSPACE}/{STATE_DIR}/{OWNCLOUD}", f"{WORKSPACE}/{STATE_DIR}/{FILESERVER}"
    argv = (*fileserver_argv(sys.executable, files, state), "--user", USER, "--password", PASSWORD)
    code = ((str(TAC_DIR / "fileserver"), f"{FILESERVER_CODE}/fileserver"), *((p, p) for p in python_prefixes("")))
    urls = tuple((f"{SERVER_URL}{mount}/", f"{STATE_DIR}/{OWNCLOUD}") for mount in ("/remote.php/webdav", f"/remote.php/dav/files/{USER}"))
    service = Service("owncloud", argv, FILESERVER_PORT, code, urls=urls, cwd=FILESERVER_CODE)
    return SandboxExtras(binds=binds, hosts=(SERVER_HOST,), service=service)


def empty_folder(cache: str | None = None) -> Path:
    """An empty folder: the workspace source of a served task (its files are all staged)."""
    path = checkout_cache(cache) / "tac-image" / "empty"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _built(plan: dockerfile.Plan) -> list[str]:
    return [*plan.mkdirs, *(c.dest for c in plan.copies), *(db for db, _ in plan.sqlite)]


def _build_once(task_dir: Path, plan: dockerfile.Plan, cache: str | None) -> Path:
    digest = hashlib.sha256()
    for f in sorted(p for p in task_dir.rglob("*") if p.is_file()):
        digest.update(f.relative_to(task_dir).as_posix().encode() + b"\0" + f.read_bytes())
    root = checkout_cache(cache) / "tac-image" / f"{task_dir.name}-{digest.hexdigest()[:16]}"
    if not root.is_dir():
        root.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}-", dir=root.parent))
        dockerfile.build(plan, tmp)
        try:
            os.rename(tmp, root)
        except OSError:  # another process built it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    return root
