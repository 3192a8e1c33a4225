"""How the agent's bash commands are launched: a bubblewrap sandbox where it works, else a plain subprocess.

Under bubblewrap the command sees the workspace (writable, at its host path so paths agree with
`read`), /usr and the agent's Python read-only, a few /etc files programs need, a private /tmp,
no network, no capabilities, nothing else of the host. Without bubblewrap the command runs as a
plain subprocess: clean environment, workspace as cwd, own process group, but the host's files
and network are reachable (a warning is logged once).
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path

from envs.config import SECRET_NAME, EnvConfig

log = logging.getLogger(__name__)

# /etc entries programs need (dynamic linker, alternatives symlinks, fonts, time zone, name service).
ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "fonts", "localtime", "timezone",
    "nsswitch.conf", "mime.types", "magic", "papersize", "ImageMagick-6",
)
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


class SandboxUnavailable(RuntimeError):
    """env.sandbox=bwrap was asked for but bubblewrap cannot run here."""


def python_prefixes(agent_python: str) -> list[str]:
    """The Python installation(s) the agent's shell needs: the venv and the interpreter it links to."""
    prefix = os.path.abspath(agent_python or sys.prefix)
    found = [prefix]
    if not agent_python:
        found.append(sys.base_prefix)
    cfg = Path(prefix, "pyvenv.cfg")
    if cfg.exists():
        for line in cfg.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                found.append(str(Path(value.strip()).parent))
    for exe in ("python3", "python"):
        target = Path(prefix, "bin", exe)
        if target.exists():
            found.append(str(Path(os.path.realpath(target)).parent.parent))
    out: list[str] = []
    for p in found:
        p = os.path.realpath(p)
        if p not in out and not (p == "/usr" or p.startswith("/usr/")):
            out.append(p)
    return out


def agent_env(cfg: EnvConfig, home: str, tmpdir: str) -> dict[str, str]:
    """The agent's whole environment: an allow-list, never the runner's secrets."""
    prefix = os.path.abspath(cfg.agent_python or sys.prefix)
    env = {k: os.environ[k] for k in cfg.env_passthrough if k in os.environ and not SECRET_NAME.search(k)}
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        PATH=f"{prefix}/bin:/usr/local/bin:/usr/bin:/bin",
        HOME=home,
        TMPDIR=tmpdir,
        USER="agent",
        SHELL="/bin/bash",
    )
    env.update(cfg.env_set)
    return env


def bwrap_argv(workspace: str, scratch: str, ro_paths: list[str], command: str) -> list[str]:
    """The bubblewrap command line running `command` in bash inside the sandbox."""
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--hostname", "sandbox",
            "--ro-bind", "/usr", "/usr"]
    for name in ROOT_LINKS:
        host = f"/{name}"
        if os.path.islink(host):
            argv += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            argv += ["--ro-bind", host, host]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    for name in ETC_FILES:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for name in ("passwd", "group"):
        argv += ["--ro-bind", f"{scratch}/etc/{name}", f"/etc/{name}"]
    argv += ["--bind", f"{scratch}/tmp", "/tmp"]
    for path in ro_paths:
        argv += ["--ro-bind", path, path]
    argv += ["--bind", workspace, workspace, "--chdir", workspace, "--remount-ro", "/",
             "/bin/bash", "-c", command]
    return argv


def make_scratch() -> str:
    """A private per-environment directory: the sandbox's /tmp (and HOME) and its /etc/passwd."""
    scratch = tempfile.mkdtemp(prefix="runningtab-shell-")
    os.makedirs(f"{scratch}/tmp/home")
    os.makedirs(f"{scratch}/etc")
    Path(scratch, "etc", "passwd").write_text(
        "root:x:0:0:agent:/tmp/home:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    Path(scratch, "etc", "group").write_text("root:x:0:\nnogroup:x:65534:\n")
    return scratch


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot run here (None if it can): checked once per process with a real sandbox."""
    if shutil.which("bwrap") is None:
        return "bwrap is not on PATH (install the Debian/Ubuntu package 'bubblewrap')"
    scratch = make_scratch()
    try:
        ws = os.path.join(scratch, "probe-workspace")
        os.mkdir(ws)
        argv = bwrap_argv(ws, scratch, python_prefixes(""), "true")
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
        if proc.returncode != 0:
            return f"a trial bwrap sandbox failed (exit {proc.returncode}): {proc.stderr.strip()[:500]}"
        return None
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"a trial bwrap sandbox failed: {e}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def resolve_mode(sandbox: str) -> str:
    """'bwrap' or 'none' for env.sandbox (auto|bwrap|none); raises SandboxUnavailable for bwrap without it."""
    if sandbox == "none":
        return "none"
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    if sandbox == "bwrap":
        raise SandboxUnavailable(
            f"env.sandbox=bwrap but {problem}. Install bubblewrap, or set env.sandbox=auto (falls back to "
            "an unsandboxed subprocess) or env.sandbox=none."
        )
    _warn_fallback(problem)
    return "none"


@functools.cache
def _warn_fallback(problem: str) -> None:
    log.warning(
        "bash runs WITHOUT a sandbox (%s): commands see the host's files and network; the workspace is "
        "only their working directory.", problem,
    )


class Shell:
    """Launch settings for one workspace: argv, environment and cwd of each bash command."""

    def __init__(self, workspace: str, cfg: EnvConfig) -> None:
        self.mode = resolve_mode(cfg.sandbox)
        self.workspace = workspace
        self.scratch = make_scratch()
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.scratch, True)  # also if close() is never called
        if self.mode == "bwrap":
            self.env = agent_env(cfg, "/tmp/home", "/tmp")
            self._ro = [p for p in [*python_prefixes(cfg.agent_python), *cfg.extra_ro_binds] if os.path.exists(p)]
        else:
            self.env = agent_env(cfg, f"{self.scratch}/tmp/home", f"{self.scratch}/tmp")
            self._ro = []

    def argv(self, command: str) -> list[str]:
        if self.mode == "bwrap":
            return bwrap_argv(self.workspace, self.scratch, self._ro, command)
        return ["/bin/bash", "-c", command]

    def close(self) -> None:
        self._cleanup()
