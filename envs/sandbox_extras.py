"""What a task adds to the agent's sandbox: folders of its workspace at fixed paths, host names
on loopback, and a service run beside the shell (a benchmark's own server).

TheAgentCompany's tasks need the image's `/data` and, served, the company's file server at
`http://the-agent-company.com:8092` (eval/tac/agent_sandbox.py builds theirs). Everything stays
inside the bubblewrap sandbox: the service runs as the agent does, in its namespaces, so whatever
it reads or follows is what the agent could reach anyway. Without bubblewrap nothing of this can
be given (a warning for folders, an error for a service; see `envs/sandbox.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

WORKSPACE = "{workspace}"  # in a service's argv: the workspace's path


@dataclass(frozen=True)
class Service:
    """A program the sandbox runs beside the shell: started with it, never killed between calls,
    started again before a call when it has died; the first call waits (up to `start_s`) until it
    listens on 127.0.0.1:`port`, and when it does not, the job ends in an environment error (later,
    the call says so: the agent may have stopped it). `ro_binds` are host folders it needs (its
    code, its Python)."""

    name: str  # what the service is (a job's identity holds this, not the host paths in argv)
    argv: tuple[str, ...]
    port: int
    ro_binds: tuple[tuple[str, str], ...] = ()  # (host path, sandbox path)
    env: tuple[tuple[str, str], ...] = ()
    # (URL prefix, workspace-relative folder): fetching a URL under the prefix reads that file of the
    # workspace (the tab records a `curl` of one as a read of the file)
    urls: tuple[tuple[str, str], ...] = ()
    start_s: float = 60.0  # its wait ends as soon as it listens; a loaded machine can take this long
    cwd: str = ""  # its working folder in the sandbox ("": the workspace, which the agent writes)

    def command(self, workspace: str) -> str:
        """The service's command line for /bin/sh (exec'd, so its pid is the service's)."""
        from shlex import quote

        env = " ".join(f"{k}={quote(v)}" for k, v in self.env)
        argv = " ".join(quote(a.replace(WORKSPACE, workspace)) for a in self.argv)
        run = f"exec env {env} {argv}" if env else f"exec {argv}"
        return f"cd {quote(self.cwd)} && {run}" if self.cwd else run


@dataclass(frozen=True)
class SandboxExtras:
    """`binds`: (workspace-relative folder, absolute sandbox path) bound writable, so what the agent
    writes there is in its workspace (and its record); `hosts`: names that resolve to 127.0.0.1."""

    binds: tuple[tuple[str, str], ...] = ()
    hosts: tuple[str, ...] = ()
    service: Service | None = None

    def __bool__(self) -> bool:
        return bool(self.binds or self.hosts or self.service)

    def identity(self) -> dict[str, object]:
        """What of it the agent can tell apart (a job's identity): no host paths."""
        service = {"name": self.service.name, "port": self.service.port} if self.service else None
        return {"binds": [list(b) for b in self.binds], "hosts": list(self.hosts), "service": service}
