"""What the runner reads of /proc about processes, in one place: the process ids, a process's parent
and start time (its `stat` line, read past the command name, which may hold spaces and parentheses),
a process tree, the processes of a user, this process's pid namespace. Every reader returns nothing
for a process that is gone by the time it is read. (`envs/reaper.py` keeps its own: it runs as a
script of the standard library alone.)"""

from __future__ import annotations

import os
from collections.abc import Iterator


def pids() -> Iterator[int]:
    """Every process id this pid namespace shows."""
    return (int(name) for name in os.listdir("/proc") if name.isdigit())


def stat_fields(pid: int) -> list[bytes] | None:
    """The fields of `/proc/<pid>/stat` after the command name (the state first: field 3 of proc(5)),
    None once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()
    except OSError:
        return None


def parent(pid: int) -> int | None:
    fields = stat_fields(pid)
    try:
        return int(fields[1]) if fields else None
    except (ValueError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, None once it is gone."""
    fields = stat_fields(pid)
    try:
        return int(fields[19]) if fields else None
    except (ValueError, IndexError):
        return None


def descendants(tops: list[int]) -> list[int]:
    """`tops` and every process below them (one pass over /proc)."""
    children: dict[int, list[int]] = {}
    for pid in pids():
        ppid = parent(pid)
        if ppid is not None:
            children.setdefault(ppid, []).append(pid)
    out, todo = [], list(tops)
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def processes_of(uid: int) -> int:
    """How many processes `uid` runs."""
    count = 0
    for pid in pids():
        try:
            count += os.stat(f"/proc/{pid}").st_uid == uid
        except OSError:
            pass
    return count


def pid_namespace() -> int:
    return os.stat("/proc/self/ns/pid").st_ino
