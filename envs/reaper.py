"""The agent's shell supervisor: runs each command and kills every process it left behind, even past `setsid`.

Three uses, one program:
- `reaper.py ARGV...` runs one command without bubblewrap (`env.shell_session` false);
- `reaper.py --session COMMANDS WORKSPACE` is the job's shell session without bubblewrap;
- `reaper.py --sandbox COMMANDS WORKSPACE [SERVICE PORT TRIES]` is the session's supervisor inside the
  bubblewrap sandbox, its PID 1, with the task's service (its script in COMMANDS, its port, how many
  50 ms waits it gets to listen) run beside the commands.
A session (envs/shell_session.py speaks to it) reads command numbers on stdin, runs `COMMANDS/<n>` as
its child (`bash -c 'eval "$(</dev/fd/9)"'`, stdin /dev/null, output on its own stderr, the workspace
as cwd), kills what the command left and writes the exit code on stdout (and, with a service, whether
it was listening when the command began: `0 1`). One Python start per job, not per call.

The pipes are the runner's: nothing the agent runs may write a status line or read a command number.
The supervisor makes itself not dumpable (PR_SET_DUMPABLE 0), so a process of the same uid without
CAP_SYS_PTRACE (in the sandbox: every process, all capabilities dropped) can neither open its
/proc/<pid>/fd/* nor trace it, nor read or write its memory; its children's exec makes them dumpable
again, as the agent's own. In the sandbox it is PID 1 of its namespace and leaves every signal at its
default, which the kernel then never delivers from inside: nothing there can stop or kill it.

Without bubblewrap it makes itself a child subreaper, so descendants whose parents exit (`setsid cmd &`,
`nohup cmd &`, double forks) are re-parented to it instead of to init; when the command returns (after a
short grace for output) or on SIGTERM (the runner's timeout), it SIGKILLs all of its descendants. That
mode isolates nothing (the agent, of the runner's uid, can signal it: docs/env.md, threat model).

Standalone (no project imports, Python 3.8+): in the sandbox, where the project is not, it runs as
`python -I -S -c SOURCE`. It imports only built-in modules: `_signal` rather than `signal` (which
imports `enum`), and prctl through `_ctypes` (ctypes itself costs ~10 ms of CPU to import; it remains
the fallback). Descendants are found by walking `/proc/<pid>/task/<tid>/children` from here down, not
by reading every process's stat (the scan is the fallback when the kernel lacks that file).
"""

import _signal
import os
import sys
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 0.2  # without bubblewrap, background children may finish writing their output this long
POLL_S = 0.05  # a service's wait to listen, per try


def prctl(option: int, value: int) -> None:
    try:
        import _ctypes

        fn = _ctypes.dlsym(_ctypes.dlopen(None, os.RTLD_NOW), "prctl")
        _ctypes.call_function(fn, (option, value, 0, 0, 0))
    except (ImportError, AttributeError, OSError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def children(pid: int) -> list:
    """Children of `pid` (from each of its threads); [] once it is gone."""
    out = []
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


def descendants_walk(root: int) -> list:
    out, todo = [], [root]
    while todo:
        for pid in children(todo.pop()):
            out.append(pid)
            todo.append(pid)
    return out


def descendants_scan(root: int) -> list:
    """The fallback: every process's parent from /proc/*/stat."""
    kids = {}
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


def descendants(root: int) -> list:
    if os.path.exists(f"/proc/{root}/task/{root}/children"):  # CONFIG_PROC_CHILDREN
        return descendants_walk(root)
    return descendants_scan(root)


def reap() -> list:
    """Collect every child that has ended; returns their pids."""
    done = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append(pid)


# The dispositions Python changes at start (it ignores SIGPIPE and SIGXFSZ), and the supervisor's
# SIGTERM: a command gets them at their default, as subprocess's restore_signals does, so that `yes |
# head` ends on SIGPIPE.
DEFAULT_SIGNALS = (_signal.SIGPIPE, _signal.SIGXFSZ, _signal.SIGTERM)


def restore_signals() -> None:
    """In a forked child about to exec: DEFAULT_SIGNALS back to their default."""
    for sig in DEFAULT_SIGNALS:
        _signal.signal(sig, _signal.SIG_DFL)


def status_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def listening(port: int, net: str = "/proc/net") -> bool:
    """Whether a socket listens on TCP `port` in this network namespace (the kernel's own table), or
    in the one of `net`, /proc/<pid>/net of a process in another (the runner's view of a sandbox)."""
    want = b":%04X" % port
    for table in ("tcp", "tcp6"):
        try:
            with open(f"{net}/{table}", "rb") as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[1].endswith(want) and fields[3] == b"0A":
                return True
    return False


def mine() -> list:
    return descendants(os.getpid())


def kill_all(others, reaped=lambda pids: None) -> None:
    """SIGKILL every process `others()` lists, again until none is left (what forked meanwhile)."""
    for _ in range(200):
        found = others()
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
        reaped(reap())


def leftovers(others, grace: float, reaped=lambda pids: None) -> None:
    """What a command left: given `grace` seconds to finish writing its output, then killed."""
    end = time.monotonic() + grace
    while time.monotonic() < end and others():
        reaped(reap())
        time.sleep(0.02)
    kill_all(others, reaped)


class Supervisor:
    """One job's session: its commands, what they leave, and the task's service (in the sandbox)."""

    def __init__(self, commands: str, workspace: str, sandboxed: bool, service: list) -> None:
        self.workspace, self.sandboxed = workspace, sandboxed
        self.dir_fd = os.open(commands, os.O_RDONLY | os.O_DIRECTORY)
        self.null = os.open("/dev/null", os.O_RDWR)
        self.out = os.dup(2)  # the output pipe; the supervisor's own errors go nowhere
        os.dup2(self.null, 2)
        self.service = service[0] if service else ""
        self.port = int(service[1]) if service else 0
        self.tries = int(service[2]) if service else 0
        self.spid = 0  # the service's pid while it runs

    def spawn(self, argv: list, script: int, out: int) -> int:
        """`argv` as a child (posix_spawn: a vfork, not a copy of this process), stdin /dev/null, output
        on `out`, `script` as its descriptor 9, in the workspace, with default signal dispositions."""
        try:
            os.chdir(self.workspace)
        except OSError:
            pass
        actions = [(os.POSIX_SPAWN_DUP2, self.null, 0), (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, out, 2)]
        if script >= 0:
            actions.append((os.POSIX_SPAWN_DUP2, script, 9))
        return os.posix_spawn(argv[0], argv, os.environ, file_actions=actions, setsigdef=DEFAULT_SIGNALS)

    def reaped(self, pids: list) -> None:
        if self.spid in pids:
            self.spid = 0

    def others(self) -> list:
        """The processes to kill once a command returned: in the sandbox every live one of its PID
        namespace but this one and the service; without it, this process's descendants."""
        if not self.sandboxed:
            return descendants(os.getpid())
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in (1, self.spid):
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in (b"Z", b"X"):
                found.append(int(name))
        return found

    def serve(self) -> bool:
        """Start the service when it is not running, wait (up to its tries) until it listens; whether it does."""
        self.reaped(reap())
        if not self.spid:
            try:
                self.spid = self.spawn(["/bin/sh", self.service], -1, self.null)
            except OSError:  # no process left to fork
                return False
            for _ in range(self.tries):
                self.reaped(reap())
                if not self.spid or listening(self.port):
                    break
                time.sleep(POLL_S)
        return listening(self.port)

    def run_one(self, name: str) -> int:
        """`<dir>/<name>` as a fresh bash, its output on the pipe; its exit code once it and all it left are gone."""
        try:
            script = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=self.dir_fd)
        except OSError:
            return 126
        if script == 9:  # dup2 onto itself would leave it close-on-exec
            script = os.dup(script)
            os.close(9)
        try:
            child = self.spawn(["/bin/bash", "-c", 'eval "$(</dev/fd/9)" 9<&-'], script, self.out)
        except OSError:  # no process left to fork (the processes cap): the command did not run
            return 126
        finally:
            os.close(script)
        while True:
            pid, status = os.waitpid(-1, 0)
            self.reaped([pid])
            if pid == child:
                break
        code = status_code(status)
        leftovers(self.others, 0 if self.sandboxed else GRACE_S, self.reaped)
        return code

    def loop(self) -> int:
        if self.service:
            self.serve()  # at once, so that the runner's own wait sees it listen before the first command
        pending = b""
        while True:
            line, sep, pending = pending.partition(b"\n")
            if not sep:
                chunk = os.read(0, 4096)
                if not chunk:
                    return 0
                pending = line + chunk
                continue
            ok = self.serve() if self.service else None
            name = line.decode(errors="replace").strip()
            code = self.run_one(name) if name.isdigit() else 126
            os.write(1, (f"{code}\n" if ok is None else f"{code} {int(ok)}\n").encode())


def session(commands: str, workspace: str, sandboxed: bool, service: list) -> int:
    prctl(PR_SET_DUMPABLE, 0)
    if sandboxed:
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)  # PID 1: a signal left at its default never arrives from inside
    else:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
    sup = Supervisor(commands, workspace, sandboxed, service)
    if not sandboxed:
        _signal.signal(_signal.SIGTERM, lambda *_: (kill_all(sup.others, sup.reaped), os._exit(128 + _signal.SIGTERM)))
    try:
        return sup.loop()
    except OSError:  # the runner is gone
        return 1
    finally:
        kill_all(sup.others, sup.reaped)


def main(argv: list) -> int:
    if argv[:1] in (["--session"], ["--sandbox"]):
        return session(argv[1], argv[2], argv[0] == "--sandbox", argv[3:6])
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    _signal.signal(_signal.SIGTERM, lambda *_: (kill_all(mine), os._exit(128 + _signal.SIGTERM)))
    child = os.fork()
    if child == 0:
        restore_signals()
        os.execv(argv[0], argv)
    _, status = os.waitpid(child, 0)
    code = status_code(status)
    leftovers(mine, GRACE_S)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
