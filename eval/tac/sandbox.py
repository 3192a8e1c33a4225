"""Where a TheAgentCompany evaluator runs: a bubblewrap sandbox shaped like the task's image.

    /workspace    the agent's final workspace (file-server export + staged inputs, the deliverable
                  over them, deletions removed): a temp copy, writable, also the file server's root
    /utils        the base image's helpers (eval/tac/compat), the task's evaluator.py and what
                  the Dockerfile copies there (writable, as in the image: evaluators save files
                  there, e.g. slide images under /utils/figs)
    /data, ...    what the Dockerfile builds there (eval/tac/dockerfile.py)
    /instruction  task.md;  /outputs  the trajectory;  /run/rt  the judge LLM's socket
    /srv/fileserver  the file server's state (the shares the agent made); /opt/runningtab its code

`run_evaluator.py` (an isolated interpreter, /utils put on its sys.path explicitly) starts the
company's file server (eval/tac/fileserver, isolated too, run from its code's folder) over /workspace on the
sandbox's own loopback, port 8092, where /etc/hosts sends the-agent-company.com, before it loads
the evaluator: the evaluator's own WebDAV requests and share-link downloads reach it.

Every image folder is a copy made for this evaluation, so what the evaluator writes there
reaches no other job. The evaluator's own paths (`/utils/answers.txt`, a relative `financial_report.db` from the
working directory `/workspace`) therefore resolve as in the benchmark, with no source rewriting.
Only the Python that runs it (its prefix, the venv's packages, the shared libraries) and a shell
with core utilities are visible from the host: no other /usr/bin, no /usr/local, no JDK, so an
evaluator probing for `java` finds none, and an agent-written program it runs stays confined. No
network beyond its own loopback, no capabilities, a clean environment.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from envs.sandbox import ETC_FILES, ROOT_LINKS, python_prefixes
from eval.tac.run_evaluator import FILESERVER_CODE
from runners.core.job_record import JobRecord
from runners.core.task import Task

TAC_DIR = Path(__file__).resolve().parent
# The base image's helpers, and stand-ins for the packages it installs whose services are not here
# (litellm asks the judge; sotopia and rocketchat_API fail the checkpoint that uses them: compat/absent.py).
COMPAT = ("common.py", "config.py", "scoring.py", "absent.py", "litellm.py", "sotopia", "rocketchat_API")
HIDDEN_LIB_DIRS = ("/usr/lib/jvm",)
# The shell and core utilities every task image has (evaluators may shell out; python:3.12 has git too:
# sde-sotopia-update-ci asks it for the branches of the agent's clone); nothing else of /usr/bin.
BASE_TOOLS = ("sh", "dash", "bash", "cat", "ls", "cp", "mv", "rm", "mkdir", "echo", "head", "tail", "grep", "sed",
              "awk", "wc", "sort", "env", "test", "true", "false", "touch", "find", "uname", "date", "curl", "git")
SOCKET_DIR = "/run/rt"
SERVER_HOST = "the-agent-company.com"
HOSTS = f"127.0.0.1\tlocalhost {SERVER_HOST}\n::1\tlocalhost\n"


class SandboxError(RuntimeError):
    """bubblewrap is missing or cannot run here."""


def build_files_view(task: Task, record: JobRecord, dest: Path) -> Path:
    """Materialize the final workspace at `dest` (see module doc). A file left out of the record
    (past its caps) is missing, like a deleted one; when more was left out than the record lists,
    only the deliverable is there. Whatever shape the agent left (a file where the task had a
    folder, a folder where it had a file) is rebuilt as it left it, never an error of the judge's."""
    result = record.result
    if result.left_out_rest:
        dest.mkdir(parents=True, exist_ok=True)
    else:
        _copy_tree(task.workspace, dest)
        for rel, src in task.stage.items():
            _place(Path(src), dest, rel)
    for rel in [*result.deleted, *result.left_out]:
        _clear(dest, rel.rstrip("/"), whole=rel.endswith("/"))
    for rel in record.deliverable_files():
        _place(record.deliverable_dir / rel, dest, rel)
    return dest


def _clear(root: Path, rel: str, whole: bool = False) -> None:
    """Remove what is at `root/rel` (a folder only when `whole`), never following a link."""
    target = root / rel
    if not _inside(root, rel):
        return
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif whole and target.is_dir():
        shutil.rmtree(target)


def _inside(root: Path, rel: str) -> bool:
    """Whether every folder on the way to `root/rel` is a real folder (none a link or a file)."""
    here = root
    for part in Path(rel).parts[:-1]:
        here = here / part
        if here.is_symlink() or not here.is_dir():
            return False
    return True


def _place(src: Path, root: Path, rel: str) -> None:
    """`src` copied to `root/rel`: a file or link on the way is replaced by a folder, a folder at
    `rel` by the file (the agent swapped one for the other)."""
    dest, here = root / rel, root
    for part in Path(rel).parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            here.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.is_dir():
        shutil.rmtree(dest)
    shutil.copyfile(src, dest)
    if src.stat().st_mode & stat.S_IXUSR:  # the record keeps the owner's execute bit (envs/deliverable.py)
        dest.chmod(stat.S_IMODE(dest.stat().st_mode) | stat.S_IXUSR)


def _copy_tree(src: Path, dest: Path) -> None:
    """A real copy (evaluators may write), copy-on-write where the filesystem supports it."""
    if shutil.which("cp") and src.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["cp", "-a", "--reflink=auto", str(src), str(dest)], capture_output=True, text=True)
        if proc.returncode == 0:
            return
        shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, symlinks=True)


def install_base_utils(utils: Path, evaluator: Path, task_dir: Path) -> None:
    """What the base image's /utils holds: the helper modules, the runner, then what its `ONBUILD`
    steps copy from the task's folder: its own `*.py` files (helpers an evaluator imports, e.g.
    sde-add-wiki-page's `prompts`) and `dependencies.yml`; the task's evaluator last."""
    utils.mkdir(parents=True, exist_ok=True)
    for name in COMPAT:
        src = TAC_DIR / "compat" / name
        if src.is_dir():
            shutil.copytree(src, utils / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(src, utils / name)
    shutil.copyfile(TAC_DIR / "run_evaluator.py", utils / "run_evaluator.py")
    deps = task_dir / "dependencies.yml"
    for src in [*task_files(task_dir, "*.py"), *([deps] if deps.is_file() and not deps.is_symlink() else [])]:
        shutil.copyfile(src, utils / src.name)
    shutil.copyfile(evaluator, utils / "evaluator.py")


def task_files(task_dir: Path, pattern: str) -> list[Path]:
    """The regular files at the top of the task's folder that match `pattern` (as a Dockerfile's `COPY *.py`)."""
    return sorted(p for p in task_dir.glob(pattern) if p.is_file() and not p.is_symlink())


def require_bwrap() -> str:
    exe = shutil.which("bwrap")
    if exe is None:
        raise SandboxError(
            "the agentcompany judge runs each evaluator in a bubblewrap sandbox shaped like the task's image; "
            "install the Debian/Ubuntu package 'bubblewrap'"
        )
    return exe


def bwrap_argv(image: dict[str, Path], socket_dir: Path, hosts: Path, command: list[str]) -> list[str]:
    """The sandbox command line; `image` maps top-level image folders (workspace, utils, data, srv, ...)
    to host folders; `hosts` is the sandbox's /etc/hosts (`HOSTS`)."""
    argv = [require_bwrap(), "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--hostname", "task",
            "--ro-bind", "/usr/lib", "/usr/lib", "--ro-bind-try", "/usr/lib64", "/usr/lib64",
            "--ro-bind-try", "/usr/share/zoneinfo", "/usr/share/zoneinfo"]
    for tool in BASE_TOOLS:
        argv += ["--ro-bind-try", f"/usr/bin/{tool}", f"/usr/bin/{tool}"]
    for hidden in HIDDEN_LIB_DIRS:
        if os.path.isdir(hidden):
            argv += ["--tmpfs", hidden]
    for name in ROOT_LINKS:
        host = f"/{name}"
        if os.path.islink(host):
            argv += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host) and name.startswith("lib"):
            argv += ["--ro-bind", host, host]
    for name in ETC_FILES:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--ro-bind", str(hosts), "/etc/hosts"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", str(socket_dir), SOCKET_DIR]
    argv += ["--ro-bind", str(TAC_DIR / "fileserver"), f"{FILESERVER_CODE}/fileserver"]
    for prefix in python_prefixes(""):  # after /tmp's tmpfs, which would hide a venv under /tmp
        argv += ["--ro-bind", prefix, prefix]
    for top, host in sorted(image.items()):  # each evaluation's own copy, writable as in the image
        argv += ["--bind", str(host), f"/{top}"]
    return [*argv, "--remount-ro", "/", "--chdir", "/workspace", *command]


def sandbox_env() -> dict[str, str]:
    """The evaluator's whole environment: no host variables, so no secrets. PYTHONSAFEPATH: a Python
    the evaluator starts from /workspace (the agent's files) never imports from there."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": "/utils",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONSAFEPATH": "1",
        "RT_TAC_LLM_SOCKET": f"{SOCKET_DIR}/llm.sock",
        # git reads the config of a repository the agent made: no program of its config runs (hooks, fsmonitor)
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "false",
        "GIT_CONFIG_KEY_1": "core.hooksPath", "GIT_CONFIG_VALUE_1": "/dev/null",
    }
