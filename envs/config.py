"""The workspace environment's settings (registered in Hydra's ConfigStore as the `env` group)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from envs.path_fields import path_field

SANDBOX_MODES = ("auto", "bwrap", "none")
CONTEXT_LEVELS = (0, 1, 2, 3)
# Top-level folders of the sandbox that the agent's workspace may not be bound over.
_SYSTEM_DIRS = ("", "usr", "etc", "tmp", "proc", "dev", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "runningtab")
MATERIALIZE_METHODS = ("copy", "overlay", "auto")

# A variable whose name looks like a credential never reaches the agent's shell, even if listed.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


@dataclass
class EnvConfig:
    """Tools, limits and confinement of one job's workspace.

    Defaults are the paper's setting (Pi's limits: 2,000 lines or 50 KB per tool result).
    """

    bash_timeout: int = 300  # seconds, when the call gives none
    bash_timeout_max: int = 900  # a call may ask for up to this many seconds
    sandbox: str = "auto"  # auto | bwrap | none
    # bwrap: one sandbox per job, each bash call a child of a supervisor in it (envs/shell_session.py);
    # none: one reaper per job (envs/reaper.py --session). false: a new sandbox (~12 ms more kernel
    # CPU) or reaper (~20 ms more, a Python start) per call. Not part of a job's identity.
    shell_session: bool = True
    write_tool: bool = False  # offer `write` and `edit` (off in the paper's setting)
    read_max_lines: int = 2000
    read_max_bytes: int = 51200
    bash_max_lines: int = 2000
    bash_max_bytes: int = 51200
    # The saved full output of one bash call stops growing here (the tail shown is still the real tail).
    bash_output_max_bytes: int = 100 * 1024 * 1024
    # All saved full outputs of one job together stop here (later calls still show their tail).
    saved_output_max_bytes: int = 1024 * 1024 * 1024
    # Caps on everything the agent's shell starts (envs/limits.py): address space per process,
    # processes at once (a pids cgroup where the runner may make one, else RLIMIT_NPROC), file size.
    max_memory_bytes: int = 4 * 1024 * 1024 * 1024
    max_processes: int = 512
    max_file_bytes: int = 1024 * 1024 * 1024
    # What the agent may add on disk while it runs (its workspace, /tmp, HOME; envs/disk_quota.py):
    # past it every process of its shell is killed and the episode ends with `disk_quota`.
    disk_quota_bytes: int = 4 * 1024 * 1024 * 1024
    # The record's copy of what the agent created or changed (envs/deliverable.py): at most this many
    # files and links, holding at most this many bytes as a reader sees them; the rest is left out,
    # listed in result.json and judged missing.
    deliverable_max_files: int = 10_000
    deliverable_max_bytes: int = 256 * 1024 * 1024
    # How workspaces are made (envs/workspace.py): copy | overlay | auto. overlay/auto need root and
    # discard_workspace() at the end of each job.
    materialize: str = "copy"
    # Variables copied from the runner's environment into the agent's shell (when set there).
    env_passthrough: list[str] = field(default_factory=lambda: ["LANG", "LC_ALL", "TZ"])
    # Variables set in the agent's shell (after PATH/HOME/TMPDIR, which the environment sets itself).
    env_set: dict[str, str] = field(
        default_factory=lambda: {"TERM": "dumb", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
    )
    # Python prefix (a venv or an installation) put first on the agent's PATH; "" = the runner's own.
    agent_python: str = path_field("")
    # Host paths bound read-only into the bubblewrap sandbox besides /usr and a few /etc files.
    extra_ro_binds: list[str] = path_field(list_of=True)
    # Where the agent sees its workspace under bubblewrap, whatever the scratch folder on the host, so
    # that the same job is sent the same prompt every time; null: at its host path (the MCP server, whose
    # agent knows the workspace by that path). Without bubblewrap the agent always sees the host path.
    agent_root: str | None = "/workspace"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the bad field and what is allowed."""
        if self.sandbox not in SANDBOX_MODES:
            raise ValueError(f"env.sandbox={self.sandbox!r}: choose one of {', '.join(SANDBOX_MODES)}")
        if self.materialize not in MATERIALIZE_METHODS:
            raise ValueError(
                f"env.materialize={self.materialize!r}: choose one of {', '.join(MATERIALIZE_METHODS)}"
            )
        for name in ("bash_timeout", "bash_timeout_max", "read_max_lines", "read_max_bytes",
                     "bash_max_lines", "bash_max_bytes", "bash_output_max_bytes", "saved_output_max_bytes",
                     "max_memory_bytes", "max_processes", "max_file_bytes", "disk_quota_bytes", "deliverable_max_files",
                     "deliverable_max_bytes"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"env.{name} must be a positive integer, got {getattr(self, name)!r}")
        if self.bash_timeout > self.bash_timeout_max:
            raise ValueError(
                f"env.bash_timeout={self.bash_timeout} exceeds env.bash_timeout_max={self.bash_timeout_max}"
            )
        root = self.agent_root
        if root is not None and (not root.startswith("/") or root != posixpath.normpath(root)
                                 or root.split("/")[1] in _SYSTEM_DIRS):
            raise ValueError(
                f"env.agent_root={root!r}: give a normalized absolute path of its own, e.g. /workspace, "
                "outside the sandbox's system folders (/usr, /etc, /tmp, /proc, /dev, /runningtab ...), or null for the host path"
            )
        leaked = [n for n in [*self.env_passthrough, *self.env_set] if SECRET_NAME.search(n)]
        if leaked:
            raise ValueError(
                f"env.env_passthrough/env_set name credential-like variables {leaked}: the agent's shell "
                "never receives secrets; remove them"
            )
