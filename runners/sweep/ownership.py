"""One driver per sweep folder, or per slice of it: the driver's lock.

Two drivers on one folder run every job twice and clear each other's records (`fresh_job_dir`), so
a driver holds `<sweep>/.driver.lock` (a Slurm array task: `.driver.slice-I-of-N.lock`, its slice
`grid.slice=I/N`) from before it writes anything until it ends. A second driver whose jobs overlap
refuses with the holder's host and pid; slices that share no job run side by side (slice I of N
and J of M share jobs when I ≡ J mod gcd(N, M); the whole sweep shares with every slice).

How a holder is known to be alive:

- The lock is a `flock` on the file, which the kernel drops when the holder's process ends however
  it ends (SIGKILL, OOM, a lost node's lease on NFS): a free lock is a dead holder, taken over at
  once. On Linux NFS clients `flock` is carried by the server's byte-range locks (NLM for NFSv3,
  NFSv4 locks), so it holds across nodes.
- Where it may not (`local_lock=flock` or `nolock` NFS mounts, Lustre without `-o flock`, some
  FUSE file systems), the lock on one node is invisible on another. So the file also names its
  holder (host, pid, the kernel's boot id, the command) and the holder rewrites it every
  `HEARTBEAT_S` seconds. A driver that gets the kernel lock while the file names a holder on
  another kernel (another boot id) whose last rewrite is younger than `STALE_S` cannot check that
  process: it refuses, and says when the lock counts as stale. The age is measured on the file
  server's clock (the lock file's mtime against a probe file's), never against this host's.
- On the same kernel (same boot id: this host, or a container of it) the kernel lock is exact.
  A holder whose host rebooted (same name, another boot id) is gone.

A driver that ends normally empties the file; a killed one leaves it naming a process that is gone.
"""

from __future__ import annotations

import fcntl
import json
import logging
import math
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

log = logging.getLogger(__name__)

HEARTBEAT_S = 30.0  # how often a holder rewrites its lock file
STALE_S = 120.0  # a holder on another host unrefreshed this long is taken as dead
GRACE_S = 2.0  # how long a lock held by someone else is retried (a check holds one for microseconds)
RECORD = 1024  # bytes of the holder's record in the lock file
PATTERN = re.compile(r"\.driver(?:\.slice-(\d+)-of-(\d+))?\.lock")


class SweepBusy(RuntimeError):
    """Another driver runs this sweep (or a slice sharing jobs with ours): a one-line message."""


@dataclass(frozen=True)
class Holder:
    """Who holds a lock, as its file says."""

    host: str
    pid: int
    boot_id: str
    started: str
    command: str

    def same_kernel(self, other: Holder) -> bool:
        if self.boot_id and other.boot_id:
            return self.boot_id == other.boot_id
        return self.host == other.host


def lock_name(part: tuple[int, int] | None) -> str:
    """The lock file of the whole sweep (None) or of slice I of N."""
    return ".driver.lock" if part is None or part[1] == 1 else f".driver.slice-{part[0]}-of-{part[1]}.lock"


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether slice a (I of N) and slice b (J of M) of one grid share a job: I ≡ J (mod gcd(N, M))."""
    g = math.gcd(a[1], b[1])
    return a[0] % g == b[0] % g


class DriverLock:
    """Held while a driver runs a sweep (or its slice `part`); `SweepBusy` when another one does."""

    def __init__(self, sweep_dir: Path, part: tuple[int, int] | None = None) -> None:
        self.dir = Path(sweep_dir)
        self.part = part or (0, 1)
        self.path = self.dir / lock_name(part)
        self.me = Holder(socket.gethostname(), os.getpid(), boot_id(), time.strftime("%Y-%m-%d %H:%M:%S"),
                         " ".join(sys.argv)[:500])
        self._fd: int | None = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def __enter__(self) -> DriverLock:
        self.acquire()
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.release()

    def acquire(self) -> None:
        fd = _lock_file(self.path)
        try:
            self._take_over(fd)
            for other in self._others():
                _check_other(other, self.me, self._server_now)
        except BaseException:
            os.close(fd)  # drops the lock
            raise
        self._fd = fd
        _write(fd, self.me)
        self._beat = threading.Thread(target=self._heartbeat, name="driver-lock", daemon=True)
        self._beat.start()

    def release(self) -> None:
        """Empty the file (nobody holds it) and drop the lock."""
        if self._fd is None:
            return
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        try:
            os.ftruncate(self._fd, 0)
            os.fsync(self._fd)
        except OSError as e:
            log.warning("could not clear %s: %s", self.path, e)
        os.close(self._fd)
        self._fd = None

    def _take_over(self, fd: int) -> None:
        """With the kernel lock held: refuse a holder on another host that may be alive, else take over."""
        before, mtime = _read(fd), os.fstat(fd).st_mtime
        if before is None:
            return
        if not before.same_kernel(self.me):
            age = self._server_now() - mtime
            if age < STALE_S:
                raise SweepBusy(_remote_message(self.path, before, age))
        log.warning("taking over %s from pid %d on %s (gone)", self.path, before.pid, before.host)

    def _others(self) -> list[Path]:
        """The lock files of the other slicings that share jobs with ours."""
        out = []
        for p in sorted(self.dir.glob(".driver*.lock")):
            m = PATTERN.fullmatch(p.name)
            if p == self.path or not m:
                continue
            part = (int(m[1]), int(m[2])) if m[1] else (0, 1)
            if overlaps(part, self.part):
                out.append(p)
        return out

    def _server_now(self) -> float:
        """The file server's clock: the mtime of a file written now (NFS sets it on the server)."""
        probe = self.dir / f".driver-clock-{self.me.host}-{self.me.pid}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, b".")
            os.fsync(fd)
            return os.fstat(fd).st_mtime
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                _write(self._fd, self.me)  # type: ignore[arg-type]
            except OSError as e:  # a full or gone file system: the kernel lock still holds
                log.warning("could not refresh %s: %s", self.path, e)


def _lock_file(path: Path) -> int:
    """An open descriptor of `path` holding its exclusive lock; `SweepBusy` when another process
    holds it for `GRACE_S`. Retried when the file was replaced meanwhile (then a lock on the old one
    would guard nothing)."""
    for _ in range(10):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            _flock(fd, fcntl.LOCK_EX, GRACE_S)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            raise SweepBusy(_busy_message(path, holder)) from None
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
    raise SweepBusy(f"{path} keeps being replaced while this driver locks it; is something deleting it?")


def _check_other(path: Path, me: Holder, server_now: Callable[[], float]) -> None:
    """`SweepBusy` when the lock `path` (a slicing that shares jobs with ours) is held."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        try:
            _flock(fd, fcntl.LOCK_SH, 0.0)
        except BlockingIOError:
            raise SweepBusy(_busy_message(path, _read(fd))) from None
        fcntl.flock(fd, fcntl.LOCK_UN)
        holder = _read(fd)
        if holder is not None and not holder.same_kernel(me):
            age = server_now() - os.fstat(fd).st_mtime
            if age < STALE_S:
                raise SweepBusy(_remote_message(path, holder, age))
    finally:
        os.close(fd)


def _flock(fd: int, mode: int, wait_s: float) -> None:
    """flock without blocking, retried for `wait_s`; BlockingIOError when still held."""
    ends = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= ends:
                raise
            time.sleep(0.05)


def _write(fd: int, me: Holder) -> None:
    """The holder as one fixed-size record, written in one call: a reader on another host never
    sees the file empty or half written while it is held."""
    data = json.dumps({**asdict(me), "refreshed": time.strftime("%Y-%m-%d %H:%M:%S")}).encode()
    os.pwrite(fd, data[: RECORD - 1].ljust(RECORD - 1) + b"\n", 0)
    os.ftruncate(fd, RECORD)
    os.fsync(fd)  # on NFS: the server has it (and sets the mtime other hosts compare)


def _read(fd: int) -> Holder | None:
    """The holder the file names; None when it is empty (released). What cannot be read names an
    unknown holder on an unknown host (so only its age can free it)."""
    raw = os.pread(fd, 2 * RECORD, 0)
    if not raw.strip():
        return None
    try:
        d = json.loads(raw)
        return Holder(str(d["host"]), int(d["pid"]), str(d.get("boot_id") or ""), str(d.get("started") or "?"),
                      str(d.get("command") or ""))
    except (ValueError, TypeError, KeyError):
        return Holder("(unreadable lock file)", 0, "", "?", "")


def _busy_message(path: Path, holder: Holder | None) -> str:
    who = f"pid {holder.pid} on host {holder.host} (since {holder.started})" if holder else "another process"
    stop = f"kill {holder.pid} on {holder.host}" if holder else f"stop it (`fuser {path}` shows it)"
    return (f"{path.parent} is being run by another driver: {who} holds {path.name}. Two drivers would run "
            f"every job twice; wait for it to end (re-running then resumes), or {stop}")


def _remote_message(path: Path, holder: Holder, age: float) -> str:
    return (f"{path.parent} was being run by pid {holder.pid} on host {holder.host} (since {holder.started}), which "
            f"refreshed {path.name} {age:.0f} s ago; this host cannot check a process on another host. If it runs, "
            f"wait for it; if it was killed, its lock counts as stale {max(0.0, STALE_S - age):.0f} s from now "
            f"(or remove {path} if you are sure it is gone)")


def boot_id() -> str:
    """This kernel's boot id (Linux), "" where there is none."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""
