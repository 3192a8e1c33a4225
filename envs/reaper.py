"""Runs commands without bubblewrap and kills every process each left behind, even past `setsid`.

Two uses, one mechanism. `python -I -S envs/reaper.py ARGV...` runs one command (a bash call
when `env.shell_session` is false). `python -I -S envs/reaper.py --session COMMANDS WORKSPACE` is
the job's shell session without bubblewrap (envs/shell_session.py speaks to it as to the sandbox's
supervisor): it reads command numbers on stdin, runs `COMMANDS/<n>` as its child exactly as the
supervisor does (`bash -c 'eval "$(</dev/fd/9)"'`, stdin /dev/null, output on its own stderr, the
workspace as cwd), kills what the command left and writes the exit code on stdout; EOF on stdin
or SIGTERM kills everything it started and ends it. One Python start per job, not per call. The
session is not dumpable, so that a runner that is not root keeps the agent out of its pipes (the
agent, of the runner's uid, can still kill it: that mode isolates nothing).

Standalone (no project imports). It makes itself
a child subreaper, so descendants whose parents exit (`setsid cmd &`, `nohup cmd &`, double forks)
are re-parented to it instead of to init; when the command returns (after a short grace for
output) or on SIGTERM (the runner's timeout), it SIGKILLs all of its descendants and exits with the
command's status. Under bubblewrap the sandbox's PID namespace does this instead.

It starts once per job (once per call without a session), so it imports only built-in modules: `_signal` rather than `signal`
(which imports `enum`), and prctl through `_ctypes` (ctypes itself costs ~10 ms of CPU to import;
it remains the fallback). Descendants are found by walking `/proc/<pid>/task/<tid>/children` from
here down, not by reading every process's stat (the scan is the fallback when the kernel lacks
that file).
"""

import _signal
import os
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
GRACE_S = 0.2  # background children may finish writing their output this long


def prctl(option: int, value: int) -> None:
    try:
        import _ctypes

        fn = _ctypes.dlsym(_ctypes.dlopen(None, os.RTLD_NOW), "prctl")
        _ctypes.call_function(fn, (option, value, 0, 0, 0))
    except (ImportError, AttributeError, OSError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def set_subreaper() -> None:
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def children(pid: int) -> list[int]:
    """Children of `pid` (from each of its threads); [] once it is gone."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return out


def descendants_walk(root: int) -> list[int]:
    out, todo = [], [root]
    while todo:
        for pid in children(todo.pop()):
            out.append(pid)
            todo.append(pid)
    return out


def descendants_scan(root: int) -> list[int]:
    """The fallback: every process's parent from /proc/*/stat."""
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for pid in kids.get(todo.pop(), []):
            out.append(pid)
            todo.append(pid)
    return out


def descendants(root: int) -> list[int]:
    if os.path.exists(f"/proc/{root}/task/{root}/children"):  # CONFIG_PROC_CHILDREN
        return descendants_walk(root)
    return descendants_scan(root)


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all() -> None:
    me = os.getpid()
    for _ in range(200):
        found = descendants(me)
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
        reap()


def restore_signals() -> None:
    """In a child about to exec: the dispositions Python changed at start back to the default
    (as subprocess's restore_signals does), so that `yes | head` ends on SIGPIPE."""
    for name in ("SIGPIPE", "SIGXFSZ"):
        _signal.signal(getattr(_signal, name), _signal.SIG_DFL)


def status_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def leftovers() -> None:
    """Give what the command left a short grace to finish writing, then kill it."""
    end = time.monotonic() + GRACE_S
    while time.monotonic() < end and descendants(os.getpid()):
        reap()
        time.sleep(0.02)
    kill_all()


def run_one(dir_fd: int, name: str, workspace: str, out: int, null: int) -> int:
    """`<dir>/<name>` as a fresh bash, its output on `out`; its exit code once it and all it left are gone."""
    try:
        script = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return 126
    child = os.fork()
    if child == 0:
        try:
            os.dup2(script, 9)
            os.set_inheritable(9, True)
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            try:
                os.chdir(workspace)
            except OSError:
                pass
            _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
            restore_signals()
            os.execv("/bin/bash", ["/bin/bash", "-c", 'eval "$(</dev/fd/9)" 9<&-'])
        finally:
            os._exit(127)
    os.close(script)
    _, status = os.waitpid(child, 0)
    code = status_code(status)
    leftovers()
    return code


def session(commands: str, workspace: str) -> int:
    set_subreaper()
    # Not dumpable: a process of the runner's uid without CAP_SYS_PTRACE (the agent's, when the runner
    # is not root) can then neither open /proc/<pid>/fd/* (the session's pipes) nor trace this one.
    prctl(PR_SET_DUMPABLE, 0)
    _signal.signal(_signal.SIGTERM, lambda *_: (kill_all(), os._exit(128 + _signal.SIGTERM)))
    out = os.dup(2)  # the output pipe; the reaper's own errors go nowhere
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 2)
    dir_fd = os.open(commands, os.O_RDONLY | os.O_DIRECTORY)
    pending = b""
    try:
        while True:
            line, sep, pending = pending.partition(b"\n")
            if not sep:
                chunk = os.read(0, 4096)
                if not chunk:
                    return 0
                pending = line + chunk
                continue
            name = line.decode(errors="replace").strip()
            code = run_one(dir_fd, name, workspace, out, null) if name.isdigit() else 126
            os.write(1, f"{code}\n".encode())
    except OSError:  # the runner is gone
        return 1
    finally:
        kill_all()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--session"]:
        return session(argv[1], argv[2])
    set_subreaper()
    _signal.signal(_signal.SIGTERM, lambda *_: (kill_all(), os._exit(128 + _signal.SIGTERM)))
    child = os.fork()
    if child == 0:
        _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
        restore_signals()
        os.execv(argv[0], argv)
    _, status = os.waitpid(child, 0)
    code = status_code(status)
    leftovers()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
