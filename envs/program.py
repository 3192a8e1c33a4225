"""One long program in the job's sandbox (a production harness), owned by the environment as each of
our own shell's calls is: launched in the same sandbox, with files written under its HOME before
anything of it runs, the task's service started beside it and waited for, the disk quota watched for
the whole run, its output bounded, and its whole process group killed when it must stop.

`run_program(env, …)` runs one in a `WorkspaceEnv`; what stops it early is the caller's (`stop`: the job's model
ended it), the quota's and the job's deadline's.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envs.bash_tool import command_fd
from envs.safeio import create_in
from envs.sandbox_extras import Service

if TYPE_CHECKING:
    from envs.environment import WorkspaceEnv

HOME = "/tmp/home"  # the agent's HOME inside the sandbox (envs/sandbox.py)
SERVICE_DOWN_EXIT = 97
POLL_S = 0.2


@dataclass
class ProgramRun:
    exit_code: int | None = None
    killed: str | None = None  # why it was stopped: "time_limit", "disk_quota", or the caller's reason
    stdout: str = ""
    stderr: str = ""


def write_home_files(env: WorkspaceEnv, files: dict[str, str]) -> None:
    """Files under the sandbox's HOME (`relative path -> text`), before anything of the agent runs,
    each created anew without following a link (the folder is the agent's /tmp)."""
    for rel, text in files.items():
        host = Path(env.shell.tmp, "home", rel)
        host.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(host.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            with create_in(fd, host.name) as f:
                f.write(text.encode())
        finally:
            os.close(fd)


async def run_program(
    env: WorkspaceEnv, script: str, until: float, stop: Callable[[], str | None] = lambda: None,
    service: Service | None = None, out_cap: int = 16 << 20, err_cap: int = 64 << 10,
) -> ProgramRun:
    """Run the bash `script` in `env`'s sandbox (the task's `service` started first) until it exits, or
    `stop()` gives a reason, the disk quota is exceeded, or `until` (monotonic) passes: then its whole
    process group is killed. Its stdout and stderr are kept up to their caps (the rest is read and
    dropped, so it never blocks)."""
    fd = command_fd(service_start(service, env.agent_root) + script)
    try:
        proc = await asyncio.create_subprocess_exec(
            *env.shell.argv(fd), pass_fds=(fd, *env.shell.pass_fds), env=env.shell.env, cwd=env.root,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)
    finally:
        os.close(fd)
    run = ProgramRun()
    quota = env.disk_quota
    quota.start()  # watched for the whole run, as each of our own shell's calls is
    out = asyncio.ensure_future(_bounded(proc.stdout, out_cap))
    err = asyncio.ensure_future(_bounded(proc.stderr, err_cap))
    waiting = asyncio.ensure_future(proc.wait())
    try:
        while not waiting.done():
            await asyncio.wait({waiting}, timeout=POLL_S)
            if waiting.done():
                break
            run.killed = stop() or ("disk_quota" if quota.exceeded is not None else None) or \
                ("time_limit" if time.monotonic() >= until else None)
            if run.killed:
                _kill(proc.pid)
                await waiting
    finally:
        if not waiting.done():  # cancelled: the job's sweep limit
            _kill(proc.pid)
            await asyncio.shield(waiting)
        if await asyncio.to_thread(quota.stop) is not None and run.killed is None:
            run.killed = "disk_quota"
    run.exit_code = proc.returncode
    run.stdout, run.stderr = await out, await err
    return run


def service_start(service: Service | None, root: str) -> str:
    """The task's service started before the program (TheAgentCompany's file server, served), waited
    for on its port as the agent's shell session waits for it. Not listening by then, the program is
    not started (exit `SERVICE_DOWN_EXIT`): never a dead server scored as the agent's."""
    if service is None:
        return ""
    tries = max(int(service.start_s * 10), 1)
    probe = f"(exec 3<>/dev/tcp/127.0.0.1/{service.port}) 2>/dev/null"
    down = f"the task's service {service.name} was not listening on port {service.port} {service.start_s:g} s after it was started"
    return (f"( {service.command(root)} ) > /tmp/.runningtab-service.log 2>&1 &\n"
            f"i=0; until {probe} || [ $i -ge {tries} ]; do sleep 0.1; i=$((i+1)); done\n"
            f"{probe} || {{ echo {shlex.quote(down)} >&2; exit {SERVICE_DOWN_EXIT}; }}\n")


async def _bounded(stream: asyncio.StreamReader | None, cap: int) -> str:
    """What the stream says, up to `cap` bytes; the rest is read and dropped (the program never blocks)."""
    kept = bytearray()
    while stream is not None and (chunk := await stream.read(1 << 16)):
        if len(kept) < cap:
            kept += chunk[: cap - len(kept)]
    return kept.decode("utf-8", errors="replace")


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
