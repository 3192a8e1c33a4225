"""Resource caps on the agent's shell: memory, processes and file size, and which of them were hit.

Every command is started through a short bash prefix that joins the environment's pids cgroup
(where the runner may make one: root with cgroup v1 or a delegated v2 tree), sets RLIMIT_AS and
RLIMIT_FSIZE, and RLIMIT_NPROC when there is no cgroup, then execs the launcher (bubblewrap or the
reaper). RLIMIT_NPROC alone does not bind root (the kernel exempts uid 0) and counts every process
of the uid on the host, so it is set to the uid's current count plus the cap. A cap hit is noticed
from the cgroup's counter or from the messages the kernel's refusals produce in the output.
"""

from __future__ import annotations

import os
import re
import signal
import uuid
from pathlib import Path

from envs.cgroup_owner import PREFIX, empty_and_remove, owner_tag, reap_orphans
from envs.config import EnvConfig
from envs.procfs import processes_of

CGROUP_ROOT = "/sys/fs/cgroup"

# Joins the cgroups named by the leading arguments, sets the limits, execs the rest.
_PREFIX = (
    'v=$1 f=$2 u=$3 t=$4 n=$5; shift 5; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; '
    'ulimit -S -H -v "$v" -f "$f" || exit 125; if [ "$u" != 0 ]; then ulimit -S -H -u "$u" || exit 125; fi; '
    'if [ "$t" != 0 ]; then ulimit -S -H -t "$t" || exit 125; fi; exec "$@"'
)

_MEMORY = re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|memory exhausted", re.IGNORECASE)
_PROCESSES = re.compile(r"fork: (retry: )?Resource temporarily unavailable|Cannot fork|can't fork", re.IGNORECASE)
_FILE_SIZE = re.compile(r"File size limit exceeded|File too large")


def file_size_cap(cfg: EnvConfig) -> int:
    """The largest file the agent may write (RLIMIT_FSIZE): `max_file_bytes`, and 1/32 below the disk
    quota. The cap counts a file's bytes, the quota the blocks the disk holds, the file system's own
    among them (a file written in pieces holds ~1.2% more on ext4), so one file at the cap is within
    the quota: a runaway writer meets `File too large`, which it can recover from, not the quota,
    which ends the job."""
    return min(cfg.max_file_bytes, cfg.disk_quota_bytes - cfg.disk_quota_bytes // 32)


class Caps:
    """The caps of one environment: the launch prefix, its cgroup, and the caps hit so far.

    `cpu_seconds` also caps each process's CPU time (RLIMIT_CPU; TheAgentCompany's evaluators get
    one, the agent's shell has its per-call wall-clock timeout instead)."""

    def __init__(self, cfg: EnvConfig, cpu_seconds: int | None = None) -> None:
        self.cfg = cfg
        self.cpu_seconds = cpu_seconds
        self.hit: list[str] = []
        self.cgroup = _make_pids_cgroup(cfg.max_processes)
        self._pids_max_events = _max_events(self.cgroup)

    def prefix(self) -> list[str]:
        """argv to put before the launcher: bash joining the cgroup and setting the rlimits."""
        nproc = 0 if self.cgroup else processes_of(os.getuid()) + self.cfg.max_processes
        procs = [f"{self.cgroup}/cgroup.procs"] if self.cgroup else []
        kb = lambda n: str(max(n // 1024, 1))  # noqa: E731 - bash's ulimit counts KB for -v and -f
        cpu = str(max(int(self.cpu_seconds), 1)) if self.cpu_seconds else "0"  # 0: left as it is
        fsize = file_size_cap(self.cfg)
        return ["/bin/bash", "-c", _PREFIX, "runningtab-limits", kb(self.cfg.max_memory_bytes),
                kb(fsize), str(nproc), cpu, str(len(procs)), *procs]

    def pids(self) -> list[int] | None:
        """Every process in the environment's cgroup (None without one)."""
        if not self.cgroup:
            return None
        return [int(p) for p in _read(f"{self.cgroup}/cgroup.procs").split() if p.isdigit()]

    def note(self, name: str) -> None:
        if name not in self.hit:
            self.hit.append(name)

    def check(self, output_tail: str, exit_code: int | None) -> None:
        """Record the caps this call ran into (from the cgroup's counter and the output's last bytes)."""
        events = _max_events(self.cgroup)
        low = output_tail.lower()  # each pattern is searched only where its word is: 4 KB took ~0.45 ms for the three
        if events > self._pids_max_events or ("fork" in low and _PROCESSES.search(output_tail)):
            self.note("processes")
        self._pids_max_events = events
        if ("memory" in low or "bad_alloc" in low) and _MEMORY.search(output_tail):
            self.note("memory")
        if exit_code == 128 + signal.SIGXFSZ or ("File " in output_tail and _FILE_SIZE.search(output_tail)):
            self.note("file_size")

    def close(self) -> None:
        """Kill whatever is still in the cgroup and remove it."""
        if not self.cgroup:
            return
        empty_and_remove(self.cgroup)
        self.cgroup = ""


def _make_pids_cgroup(max_processes: int) -> str:
    """A fresh pids cgroup capped at `max_processes`, or "" where this process may not make one.
    Its name says whose it is; those of runners killed outright are removed first (envs/cgroup_owner.py)."""
    for base in _pids_bases():
        reap_orphans(base)
        path = f"{base}/{PREFIX}{owner_tag()}-{uuid.uuid4().hex[:12]}"
        try:
            os.mkdir(path)
        except OSError:
            continue
        try:
            Path(path, "pids.max").write_text(str(max_processes))
            return path
        except OSError:
            try:
                os.rmdir(path)
            except OSError:
                pass
    return ""


def _pids_bases() -> list[str]:
    """Where a child pids cgroup of this process's own could go: cgroup v1's pids tree, then v2's."""
    bases = []
    for line in _read("/proc/self/cgroup").splitlines():
        _, controllers, rel = line.split(":", 2)
        if "pids" in controllers.split(","):
            bases.append(f"{CGROUP_ROOT}/pids{rel}".rstrip("/"))
        elif controllers == "" and "pids" in _read(f"{CGROUP_ROOT}/cgroup.controllers").split():
            bases.append(f"{CGROUP_ROOT}{rel}".rstrip("/"))
    return [b for b in bases if os.path.isdir(b)]


def _max_events(cgroup: str) -> int:
    """How often the cgroup refused a fork (its pids.events `max` counter)."""
    for line in _read(f"{cgroup}/pids.events").splitlines() if cgroup else []:
        key, _, value = line.partition(" ")
        if key == "max" and value.strip().isdigit():
            return int(value)
    return 0


def _read(path: str) -> str:
    """A kernel file's text ("" when it cannot be read). With os.read, not pathlib: the disk quota's
    watchdog reads the cgroup's process list at every poll (37 -> 12 us a read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return ""
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return ""
    finally:
        os.close(fd)
    return b"".join(chunks).decode(errors="replace")
