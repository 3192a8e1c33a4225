"""Runs one command without bubblewrap and kills every process it left behind, even past `setsid`.

Started as `python -I -S envs/reaper.py ARGV...` (standalone: no project imports). It makes itself
a child subreaper, so descendants whose parents exit (`setsid cmd &`, `nohup cmd &`, double forks)
are re-parented to it instead of to init; when the command returns (after a short grace for
output) or on SIGTERM (the runner's timeout), it SIGKILLs all of its descendants and exits with the
command's status. Under bubblewrap the sandbox's PID namespace does this instead.
"""

import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 0.2  # background children may finish writing their output this long


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            out.append(pid)
            todo.append(pid)
    return out


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
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
        reap()


def main(argv: list[str]) -> int:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGTERM, lambda *_: (kill_all(), os._exit(128 + signal.SIGTERM)))
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
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
