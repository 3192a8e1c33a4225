"""Whose a shell's pids cgroup is, so that one a killed runner left behind is emptied and removed.

A runner removes its cgroups when its environments close. A runner killed outright (an episode actor
lost or killed, a sweep stopped with SIGKILL) leaves them, with whatever was in them still running:
a sandbox caught in its own start can wait forever (seen in a killed sweep's test: a `bwrap` blocked
on its set-up, orphaned, for hours), and on a node that runs sweeps for weeks the empty cgroups pile
up too. Each cgroup's name carries its owner: the pid namespace, pid and start time of the process
that made it (`runningtab-<ns>-<pid>-<start>-<hex>`). The next runner on the node that makes one
removes those whose owner is gone, at most once a minute. A cgroup of another pid namespace, or of
an owner still running, is never touched; names of another form (older runners') neither.
"""

from __future__ import annotations

import os
import re
import signal
import time

from envs.procfs import pid_namespace, start_time

PREFIX = "runningtab-"
REAP_EVERY_S = 60.0
_NAME = re.compile(r"runningtab-(\d+)-(\d+)-(\d+)-[0-9a-f]{12}")
_last_reap: dict[str, float] = {}
_tag: tuple[int, str] | None = None  # (pid, its tag)


def owner_tag() -> str:
    """This process as a cgroup's owner: `<pid namespace>-<pid>-<start time>` (kept per pid: a
    forked child is another owner)."""
    global _tag
    pid = os.getpid()
    if _tag is None or _tag[0] != pid:
        _tag = (pid, f"{pid_namespace()}-{pid}-{start_time(pid)}")
    return _tag[1]


def orphans(base: str) -> list[str]:
    """The cgroups under `base` whose owner (of this pid namespace) is gone."""
    try:
        names = os.listdir(base)
    except OSError:
        return []
    ns, alive = pid_namespace(), {}
    found = []
    for name in names:
        m = _NAME.fullmatch(name)
        if m is None or int(m[1]) != ns:
            continue
        owner = (int(m[2]), int(m[3]))
        if owner not in alive:
            alive[owner] = start_time(owner[0]) == owner[1]
        if not alive[owner]:
            found.append(f"{base}/{name}")
    return found


def _procs(path: str) -> list[str]:
    try:
        with open(f"{path}/cgroup.procs") as f:
            return f.read().split()
    except OSError:
        return []


def empty_and_remove(path: str) -> bool:
    """Kill every process in the cgroup at `path`, then remove it; False when it would not go."""
    for _ in range(50):
        pids = _procs(path)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
            except PermissionError:  # another user's: not ours to remove
                return False
    for _ in range(100):  # killed tasks leave the cgroup a moment after SIGKILL
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except PermissionError:
            return False
        except OSError:
            time.sleep(0.01)
    return False


def reap_orphans(base: str, now: float | None = None) -> int:
    """Empty and remove the cgroups under `base` whose owner is gone (at most once every
    `REAP_EVERY_S` per base in this process); returns how many went."""
    now = time.monotonic() if now is None else now
    last = _last_reap.get(base)
    if last is not None and now - last < REAP_EVERY_S:
        return 0
    _last_reap[base] = now
    return sum(empty_and_remove(path) for path in orphans(base))
