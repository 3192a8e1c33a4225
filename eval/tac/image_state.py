"""What of a task's image besides /workspace the agent changes, kept in its workspace so the record has it.

In the benchmark the agent and the evaluator share one container: what the agent writes to
`/data` (a task's database) or into the file server (the shares it makes) is there when the
evaluator runs. Here they run in two sandboxes, so those places live in the workspace, under
`.image/`: `.image/data` is the agent's `/data` (the Dockerfile's, staged there by the loader,
bound at `/data` in the agent's sandbox) and `.image/fileserver` the file server's state. The
record's deliverable carries what changed; the evaluator gets them back at `/data` and
`/srv/fileserver` (and, served, the server's files at `/srv/owncloud`), and its `/workspace`
without `.image/`.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

STATE_DIR = ".image"
FILESERVER = "fileserver"  # the file server's state (its shares)
OWNCLOUD = "owncloud"  # the file server's files, when served (eval/tac/agent_sandbox.py)
AGENT_TOPS = ("data",)  # image folders the agent's sandbox gets (the Dockerfile's; /utils never)


def take_state(workspace: Path, image: dict[str, Path], dest: Path) -> None:
    """Move `.image/<top>` out of the evaluator's workspace copy into `dest`, in place of the image's
    `<top>` (the agent's final /data over the Dockerfile's); `.image/fileserver` (the server's state,
    made empty when the agent's sandbox had no server) and `.image/owncloud` (the server's files,
    when they were served) to image["srv"]. Only real folders are moved, never a link; `.image` is
    then removed from the workspace."""
    state, srv = workspace / STATE_DIR, image["srv"]
    srv.mkdir(parents=True, exist_ok=True)
    if _is_dir(state):
        dest.mkdir(parents=True, exist_ok=True)
        for top in AGENT_TOPS:
            if _is_dir(state / top):
                os.replace(state / top, dest / top)
                image[top] = dest / top
        for name in (FILESERVER, OWNCLOUD):
            if _is_dir(state / name):
                os.replace(state / name, srv / name)
        shutil.rmtree(state, ignore_errors=True)
    elif os.path.lexists(state):
        os.unlink(state)
    (srv / FILESERVER).mkdir(exist_ok=True)


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
