"""How the agent's bash commands are launched: a bubblewrap sandbox where it works, else a plain subprocess.

Under bubblewrap the command sees the workspace (writable, at `env.agent_root`, /workspace: the
same path for every job, which host-side tools translate, `envs.paths.PathView`), /usr and the agent's Python read-only, a few /etc files programs need, a private /tmp,
the runner's saved outputs read-only, no network, no capabilities, nothing else of the host.
Without bubblewrap the command runs under `envs/reaper.py` (one per job, as the shell session's
supervisor): clean environment, workspace as cwd, everything it started killed when it returns, but the host's files and network are reachable (a
warning is logged once). Either way the command text reaches bash through an inherited memfd,
never argv (no kernel argument limit), and `envs/limits.py` caps memory, processes and file size.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path

from envs import seccomp
from envs.config import SECRET_NAME, EnvConfig
from envs.limits import Caps
from envs.paths import PathView
from envs.safeio import remove_tree
from envs.sandbox_extras import SandboxExtras
from envs.shell_session import ShellSession, supervisor_argv

log = logging.getLogger(__name__)

# /etc entries programs need (dynamic linker, alternatives symlinks, fonts, time zone, name service).
ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "fonts", "localtime", "timezone",
    "nsswitch.conf", "mime.types", "magic", "papersize", "ImageMagick-6",
)
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
SHM_BYTES = 64 << 20  # /dev/shm of a sandbox that is given no size (the trial sandbox)
REAPER_TERM_S = 2.0  # how long the reaper (no bubblewrap) may take to kill what a command left on timeout
NO_EXTRAS = SandboxExtras()


class SandboxUnavailable(RuntimeError):
    """env.sandbox=bwrap was asked for but bubblewrap cannot run here."""


def python_prefixes(agent_python: str) -> list[str]:
    """The Python installation(s) the agent's shell needs: the venv and the interpreter it links to.
    Resolved once per process and setting (`realpath` of each: ~0.4 ms, at every job's start before)."""
    return list(_python_prefixes(agent_python))


@functools.cache
def _python_prefixes(agent_python: str) -> tuple[str, ...]:
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
    return tuple(out)


def agent_root(cfg: EnvConfig, workspace: str) -> str:
    """Where the agent will see `workspace`: `env.agent_root` under bubblewrap, else its real path."""
    mode = resolve_mode(cfg.sandbox)
    return cfg.agent_root if mode == "bwrap" and cfg.agent_root else os.path.realpath(workspace)


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


# Where the runner's saved bash outputs appear inside the sandbox (read-only).
AGENT_OUTPUTS = "/runningtab/bash-output"
SUPERVISOR_SHELL = "/runningtab/sh"  # the session supervisor's shell, an execute-only copy of /bin/sh


def bwrap_argv(
    workspace: str, scratch: str, ro_paths: list[str], agent_root: str | None = None, read_only: bool = False,
    extras: SandboxExtras = NO_EXTRAS, shm_bytes: int = SHM_BYTES, seccomp_fd: int | None = None,
) -> list[str]:
    """The bubblewrap command line up to the command to run inside the sandbox; the workspace is
    bound at `agent_root` (and the saved outputs at AGENT_OUTPUTS), or at its host path when None;
    `read_only`: the workspace bound read-only, for a judge that inspects what an agent left; the
    task's `extras`: its workspace folders at their paths, its host names in /etc/hosts, its service's code.
    /dev is read-only but for its devices and /dev/shm, a tmpfs of at most `shm_bytes` (the disk
    quota: bubblewrap's /dev is a tmpfs of half the host's memory that no other cap bounds).
    `seccomp_fd`: the filter that refuses space allocated without writing (envs/seccomp.py)."""
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--hostname", "sandbox",
            "--ro-bind", "/usr", "/usr"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    for name in ROOT_LINKS:
        host = f"/{name}"
        if os.path.islink(host):
            argv += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            argv += ["--ro-bind", host, host]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(shm_bytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    for name in ETC_FILES:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for name in ("passwd", "group", *(["hosts"] if extras.hosts else [])):
        argv += ["--ro-bind", f"{scratch}/etc/{name}", f"/etc/{name}"]
    argv += ["--bind", f"{scratch}/tmp", "/tmp"]
    for path in [*ro_paths, commands_dir(scratch)]:
        argv += ["--ro-bind", path, path]
    outputs = outputs_dir(scratch)
    argv += ["--ro-bind", outputs, outputs if agent_root is None else AGENT_OUTPUTS]
    for host, target in extras.service.ro_binds if extras.service else ():
        argv += ["--ro-bind", host, target]
    root = agent_root or workspace
    argv += ["--ro-bind" if read_only else "--bind", workspace, root]
    for rel, target in extras.binds:
        argv += ["--bind", os.path.join(workspace, rel), target]
    argv += ["--chdir", root, "--remount-ro", "/"]
    return argv


_BINDS = frozenset({"--bind", "--ro-bind", "--ro-bind-try", "--dev-bind"})


def make_mount_points(argv: list[str], tmp: str) -> None:
    """Make, in the agent's fresh /tmp (`tmp` on the host), the folder or empty file bubblewrap would
    make there for each path `argv` binds under /tmp (the commands folder, a venv under /tmp), before
    the disk quota's baseline: made by bubblewrap when the sandbox starts, they were charged to the
    agent (4 KB each), so a file of exactly the quota passed it while its writer was still running."""
    for i, op in enumerate(argv[:-2]):
        target = argv[i + 2]
        if op not in _BINDS or not target.startswith("/tmp/"):
            continue
        path = os.path.join(tmp, target[len("/tmp/"):])
        if os.path.isdir(argv[i + 1]):
            os.makedirs(path, exist_ok=True)
        elif os.path.exists(argv[i + 1]):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))


def outputs_dir(scratch: str) -> str:
    """The runner's own files (saved bash outputs): outside the workspace, read-only to the agent."""
    return f"{scratch}/bash-output"


def commands_dir(scratch: str) -> str:
    """Where the runner writes each command for the job's shell session: read-only to the agent
    under bubblewrap (without it, the agent's user owns it, as it owns everything else)."""
    return f"{scratch}/commands"


def run_from_fd(fd: int) -> list[str]:
    """bash reading the command from inherited descriptor `fd` (closed before the command runs).

    `eval` keeps `bash -c`'s behaviour (`$0` is bash, errors say `bash: line N`), and the words are
    expanded before the redirection closes the descriptor.
    """
    return ["/bin/bash", "-c", f'eval "$(</dev/fd/{fd})" {fd}<&-']

SHELL_SCRATCH_PREFIX = "runningtab-shell-"


def make_scratch(hosts: tuple[str, ...] = ()) -> str:
    """A private per-environment directory: the sandbox's /tmp (and HOME), its /etc/passwd (and
    /etc/hosts with `hosts` on loopback). Named `runningtab-shell-<pid>-…` so that what a killed
    process left can be found and removed."""
    scratch = tempfile.mkdtemp(prefix=f"{SHELL_SCRATCH_PREFIX}{os.getpid()}-")
    os.makedirs(f"{scratch}/tmp/home")
    os.makedirs(f"{scratch}/etc")
    os.makedirs(outputs_dir(scratch))
    os.makedirs(commands_dir(scratch))
    Path(scratch, "etc", "passwd").write_text(
        "root:x:0:0:agent:/tmp/home:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    Path(scratch, "etc", "group").write_text("root:x:0:\nnogroup:x:65534:\n")
    if hosts:
        Path(scratch, "etc", "hosts").write_text(f"127.0.0.1\tlocalhost {' '.join(hosts)}\n::1\tlocalhost\n")
    return scratch


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot run here (None if it can): checked once per process with a real sandbox."""
    if shutil.which("bwrap") is None:
        return "bwrap is not on PATH (install the Debian/Ubuntu package 'bubblewrap')"
    scratch = make_scratch()
    fd = seccomp.filter_fd()
    shell = _shell_fd()
    try:
        ws = os.path.join(scratch, "probe-workspace")
        os.mkdir(ws)
        # as a session starts (its supervisor's shell copied in: bubblewrap 0.5 or newer), running `true`
        argv = [*session_launcher(bwrap_argv(ws, scratch, python_prefixes(""), seccomp_fd=fd), shell), SUPERVISOR_SHELL, "-c", "true"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"},
                              pass_fds=(shell,) if fd is None else (fd, shell))
        if proc.returncode != 0:
            return f"a trial bwrap sandbox failed (exit {proc.returncode}): {proc.stderr.strip()[:500]}"
        return None
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"a trial bwrap sandbox failed: {e}"
    finally:
        for descriptor in (fd, shell):
            if descriptor is not None:
                os.close(descriptor)
        remove_tree(scratch)


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


def preflight(config: EnvConfig) -> None:
    """Refuse to start work that requires bubblewrap where it cannot run (one line with the install hint)."""
    if config.sandbox != "bwrap":
        return
    problem = bwrap_problem()
    if problem is not None:
        problem = " ".join(problem.split())
        raise ValueError(f"env.sandbox=bwrap but {problem}; install it (apt-get install bubblewrap) or set env.sandbox=auto")


@functools.cache
def _warn_fallback(problem: str) -> None:
    log.warning(
        "bash runs WITHOUT a sandbox (%s): commands see the host's files and network; the workspace is "
        "only their working directory.", problem,
    )


class Shell:
    """Launch settings for one workspace: argv, environment, caps and the runner's output folder.
    `extras` are the task's additions to the sandbox (envs/sandbox_extras.py)."""

    def __init__(self, workspace: str, cfg: EnvConfig, extras: SandboxExtras = NO_EXTRAS, *, read_only: bool = False) -> None:
        self.mode = resolve_mode(cfg.sandbox)
        if read_only and self.mode != "bwrap":
            raise SandboxUnavailable("a read-only workspace needs bubblewrap (env.sandbox=bwrap where it runs)")
        self.workspace = workspace
        extras = _usable(extras, self.mode, cfg.shell_session)
        self.scratch = os.path.realpath(make_scratch(extras.hosts))
        self.tmp = f"{self.scratch}/tmp"  # the agent's /tmp and HOME, on the host
        self.outputs = outputs_dir(self.scratch)
        # A descriptor of the output folder: the runner writes there by name relative to it, never
        # through a path the agent could swap (without bubblewrap the agent can reach the folder).
        self.outputs_fd = os.open(self.outputs, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.caps = Caps(cfg)
        self._binds: list[str] = []
        self.session: ShellSession | None = None
        self._filter: int | None = None
        self._shell: int | None = None
        seen_at = agent_root(cfg, workspace)
        fixed = seen_at if seen_at != workspace else None  # bound elsewhere in the sandbox
        self.view = PathView(workspace, seen_at, self.outputs, AGENT_OUTPUTS if fixed else self.outputs)
        if self.mode == "bwrap":
            self.env = agent_env(cfg, "/tmp/home", "/tmp")
            ro = [p for p in [*python_prefixes(cfg.agent_python), *cfg.extra_ro_binds] if os.path.exists(p)]
            self._binds = [rel for rel, _ in extras.binds]
            real_folders(workspace, self._binds)
            self._filter = seccomp.filter_fd()
            self._launcher = bwrap_argv(workspace, self.scratch, ro, fixed, read_only, extras, cfg.disk_quota_bytes, self._filter)
            make_mount_points(self._launcher, self.tmp)
            if cfg.shell_session:
                self._shell = _shell_fd()
                launcher = session_launcher(self._launcher, self._shell)
                fds = (*self.pass_fds, self._shell)
                self.session = ShellSession([*self.caps.prefix(), *launcher], self.env, workspace, commands_dir(self.scratch),
                                            supervisor_argv(SUPERVISOR_SHELL, commands_dir(self.scratch)), extras.service,
                                            seen_at=seen_at, before_start=functools.partial(_prepare, workspace, self._binds, fds),
                                            pass_fds=fds)
        else:
            self.env = agent_env(cfg, f"{self.scratch}/tmp/home", f"{self.scratch}/tmp")
            self._launcher = [sys.executable, "-I", "-S", str(Path(__file__).with_name("reaper.py"))]
            if cfg.shell_session:
                scripts = commands_dir(self.scratch)
                self.session = ShellSession(self.caps.prefix(), self.env, workspace, scripts,
                                            [*self._launcher, "--session", scripts, workspace], terminate_s=REAPER_TERM_S)
        self._cleanup = weakref.finalize(self, _cleanup, self.scratch, self.caps, self.session,
                                         (self.outputs_fd, self._filter, self._shell))

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """Descriptors every launch of this shell must pass on (the seccomp filter's)."""
        return () if self._filter is None else (self._filter,)

    def argv(self, command_fd: int) -> list[str]:
        """The command line running the command that descriptor `command_fd` holds; launch it at once,
        passing `command_fd` and `pass_fds`."""
        if self.mode == "bwrap":
            _prepare(self.workspace, self._binds, self.pass_fds)
        return [*self.caps.prefix(), *self._launcher, *run_from_fd(command_fd)]

    def release(self) -> None:
        """Free what the agent holds outside its workspace (its /tmp and HOME, the saved outputs), once
        its processes are killed at its disk quota: none of it is its deliverable or its record, and
        the record must still be written on the disk it may have filled. No later call runs."""
        for name in os.listdir(self.tmp):
            remove_tree(os.path.join(self.tmp, name))
        for name in os.listdir(self.outputs_fd):
            try:
                os.unlink(name, dir_fd=self.outputs_fd)
            except OSError:
                pass

    def close(self) -> None:
        self._cleanup()


def _prepare(workspace: str, binds: list[str], fds: tuple[int, ...]) -> None:
    """Before a sandbox starts (nothing of the agent's runs then): its bound folders made real
    again, the descriptors it reads (the filter, the supervisor's shell) rewound: bubblewrap reads
    them from their offset."""
    real_folders(workspace, binds)
    for fd in fds:
        os.lseek(fd, 0, os.SEEK_SET)


def real_folders(workspace: str, rels: list[str]) -> None:
    """Make each workspace folder bound into the sandbox a real folder all the way down, before a
    sandbox starts (when nothing of the agent runs): bubblewrap follows links in a bind's source,
    so a `.image/data` the agent made a link to `/` would mount the host's root. A link or file in
    the way is removed (the agent put it there) and the folder made again."""
    for rel in rels:
        path = workspace
        for part in rel.split("/"):
            path = os.path.join(path, part)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                os.mkdir(path)
                continue
            if not stat.S_ISDIR(st.st_mode):
                log.warning("%s was not a folder (a link or a file the agent made); made a folder again", path)
                os.unlink(path)
                os.mkdir(path)


def _usable(extras: SandboxExtras, mode: str, session: bool) -> SandboxExtras:
    """The extras this shell can give: a service needs a bubblewrap session (an error otherwise);
    folders and host names need bubblewrap (dropped with a warning otherwise)."""
    if extras.service is not None and (mode != "bwrap" or not session):
        raise SandboxUnavailable(
            "this task runs a service beside the agent's shell (TheAgentCompany's file server, "
            "benchmark.file_server=served), which needs bubblewrap and env.shell_session=true; install bubblewrap "
            "and keep env.shell_session=true, or use benchmark.file_server=mounted"
        )
    if extras and mode != "bwrap":
        log.warning("the task's sandbox folders %s are not given without bubblewrap", [t for _, t in extras.binds])
        return NO_EXTRAS
    return extras


def session_launcher(launcher: list[str], shell_fd: int) -> list[str]:
    """A session's bubblewrap command line: its supervisor as the sandbox's PID 1, and the supervisor's
    shell, read from `shell_fd`, copied in at SUPERVISOR_SHELL, execute-only (see `_shell_copy`)."""
    return [launcher[0], "--as-pid-1", "--perms", "0111", "--file", str(shell_fd), SUPERVISOR_SHELL, *launcher[1:]]


def _shell_fd() -> int:
    """A descriptor of the shell's copy with an offset of its own (bubblewrap reads it from there)."""
    return os.open(f"/proc/self/fd/{_shell_copy()}", os.O_RDONLY | os.O_CLOEXEC)


@functools.cache
def _shell_copy() -> int:
    """A memfd holding the system's /bin/sh (sealed, one per process): bubblewrap copies it into each
    session's sandbox, execute-only, as the supervisor's shell. The kernel makes a process that runs a
    program it may not read not dumpable, and the sandbox's uid may not read that copy (it has no
    capability to override permissions), so nothing in the sandbox can open the supervisor's
    /proc/1/fd/*, trace it or read its memory: a shell cannot make itself not dumpable otherwise."""
    with open(os.path.realpath("/bin/sh"), "rb") as f:
        data = f.read()
    fd = os.memfd_create("runningtab-supervisor-sh", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(fd, data)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    return fd


def _cleanup(scratch: str, caps: Caps, session: ShellSession | None, fds: tuple[int | None, ...]) -> None:
    if session is not None:
        session.close()
    caps.close()
    for fd in fds:
        try:
            if fd is not None:
                os.close(fd)
        except OSError:
            pass
    remove_tree(scratch)
