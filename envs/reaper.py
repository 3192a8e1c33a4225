"""Runs one command without bubblewrap and kills every process it left behind, even past `setsid`.

Started as `python -I -S envs/reaper.py ARGV...` (standalone: no project imports). It makes itself
a child subreaper, so descendants whose parents exit (`setsid cmd &`, `nohup cmd &`, double forks)
are re-parented to it instead of to init; when the command returns (after a short grace for
output) or on SIGTERM (the runner's timeout), it SIGKILLs all of its descendants and exits with the
command's status. Under bubblewrap the sandbox's PID namespace does this instead.

It starts once per bash call, so it imports only built-in modules: `_signal` rather than `signal`
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
GRACE_S = 0.2  # background children may finish writing their output this long


def set_subreaper() -> None:
    try:
        import _ctypes

        prctl = _ctypes.dlsym(_ctypes.dlopen(None, os.RTLD_NOW), "prctl")
        _ctypes.call_function(prctl, (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
    except (ImportError, AttributeError, OSError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


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


def main(argv: list[str]) -> int:
    set_subreaper()
    _signal.signal(_signal.SIGTERM, lambda *_: (kill_all(), os._exit(128 + _signal.SIGTERM)))
    child = os.fork()
    if child == 0:
        _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
        os.execv(argv[0], argv)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    end = time.monotonic() + GRACE_S
    while time.monotonic() < end and descendants(os.getpid()):
        reap()
        time.sleep(0.02)
    kill_all()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
