"""A byte quota on what one job's agent keeps on disk, enforced while its commands run.

The per-file cap (RLIMIT_FSIZE) bounds one file, not a job: `yes > f1; yes > f2; ...` fills the disk
the records share. There is no portable kernel quota a runner may set (project quotas need the
file system's mount options, size-limited mounts need root and RAM or an image per job), so a
watchdog measures instead: one thread per process polls every environment whose command is running
(`DiskQuota.start` .. `stop`), first one poll interval after the command began (the last call's
measure saw what was there before it), and a last measure follows each call. Over quota, every process of
the environment is killed at once, what it holds beyond its deliverable is freed (its /tmp, HOME and
the saved outputs: the record must still fit on the disk it may have filled), the call's result says
so and the episode ends (`disk_quota`).

What is measured: the blocks the agent's writable folders hold (the workspace, its /tmp and HOME),
each file, folder or link counted at least `MIN_ENTRY` bytes (an inode: many empty files count),
a hard-linked file once, a sparse file by what it really holds; plus files the agent's processes
hold open or mapped after deleting them, and (without bubblewrap, where it can write anywhere) files they
have open for writing outside those folders, counted from then on. The quota is on the growth over
what the workspace held before the first call (the task's own files are not the agent's).

The walk never follows a link (each folder opened relative to its parent with `O_NOFOLLOW`), keeps a
folder open only while it has folders left to enter, and stops as soon as the quota is passed, so
it is bounded whatever the agent made. A folder it cannot open counts as over quota (the usage
could not be measured). The poll interval is 20 times the CPU time of the last round (5% of a core
at most), between `POLL_MIN_S` and `POLL_MAX_S`: the overshoot is what the agent writes in one
interval (docs/env.md, "Disk quota").
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import stat
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)
MIN_ENTRY = 4096
POLL_MIN_S = 0.05
POLL_MAX_S = 2.0
CPU_SHARE = 0.05
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_OUTSIDE = 10_000  # files outside the folders remembered (no bubblewrap)
_DELETED = b" (deleted)\n"


class Unmeasurable(OSError):
    """A folder of the agent's could not be opened: its usage is unknown."""


class DiskQuota:
    """The quota of one environment: `limit` bytes over the baseline of `roots`.

    `pids()` lists the environment's processes (killed over quota); `holders()` those whose open and
    mapped files count (default: all of them; bubblewrap's launcher, outside the sandbox, is left out
    by the bash tool); `outside`: also count files open for writing outside `roots` (no bubblewrap)."""

    def __init__(self, limit: int, roots: list[str], pids: Callable[[], list[int]], outside: bool = False,
                 holders: Callable[[], list[int]] | None = None, release: Callable[[], None] | None = None) -> None:
        """Measures the baseline: make it when the workspace is ready and before the agent runs.
        `release` frees what the agent holds beyond its deliverable once its processes are killed."""
        self.limit = limit
        self.roots = [os.path.realpath(r) for r in roots]
        self._pids = pids
        self.holders = holders or pids
        self._release = release
        self._outside_too = outside
        self._outside: dict[tuple[int, int], str] = {}
        self._lock = threading.Lock()
        self.baseline = measure(self.roots, None)[0]
        self.used = 0  # bytes over the baseline at the last measure
        self.exceeded: str | None = None  # why the quota was exceeded, once it was

    def start(self) -> None:
        """A command begins: watch until `stop`."""
        _watchdog().add(self)

    def stop(self) -> str | None:
        """The command ended: stop watching, measure once more; the reason if the quota was exceeded."""
        _watchdog().discard(self)
        self.check()
        return self.exceeded

    def check(self) -> bool:
        """Measure now; over quota, kill every process of the environment. True when exceeded."""
        with self._lock:
            if self.exceeded is not None:
                return True
            stop_at = self.baseline + self.limit
            try:
                total, links = measure(self.roots, stop_at)
                if total <= stop_at:
                    total += self._open_files(links)
                self.used = total - self.baseline
                if self.used > self.limit:
                    self.exceeded = f"its files grew by {self.used:,} bytes"
            except Unmeasurable as e:
                self.exceeded = f"its usage could not be measured ({e})"
            if self.exceeded is not None:
                kill(self._pids)
                if self._release is not None:  # the disk it filled must still take the job's record
                    self._release()
            return self.exceeded is not None

    def _open_files(self, links: set[tuple[int, int]]) -> int:
        """Bytes of files the processes hold open that the walk did not see: deleted ones, and
        (without bubblewrap) ones written outside the folders, counted from then on."""
        total = 0
        for pid in self.holders():
            fds = f"/proc/{pid}/fd"
            try:
                names = os.listdir(fds)
            except OSError:
                continue
            for name in names:
                try:
                    st = os.stat(f"{fds}/{name}")
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if not stat.S_ISREG(st.st_mode) or key in links:
                    continue
                if st.st_nlink == 0:
                    links.add(key)
                    total += _charge(st)
                elif self._outside_too and key not in self._outside and len(self._outside) < _MAX_OUTSIDE:
                    self._remember(f"{fds}/{name}", pid, name, key)
            total += _deleted_mappings(pid, links)
        for key, path in self._outside.items():
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == key and key not in links:
                links.add(key)
                total += _charge(st)
        return total

    def _remember(self, link: str, pid: int, fd: str, key: tuple[int, int]) -> None:
        """A file open for writing outside the folders (no bubblewrap): counted from now on."""
        try:
            path = os.readlink(link)
            with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as f:
                flags = next((int(line.split()[1], 8) for line in f if line.startswith("flags:")), 0)
        except (OSError, ValueError):
            return
        inside = any(path == r or path.startswith(r + "/") for r in self.roots)
        if flags & os.O_ACCMODE != os.O_RDONLY and not inside and path.startswith("/"):
            self._outside[key] = path


def _deleted_mappings(pid: int, links: set[tuple[int, int]]) -> int:
    """Bytes of deleted files the process has mapped (a file can be mapped, closed, unlinked and
    still written through the mapping)."""
    total = 0
    try:
        fd = os.open(f"/proc/{pid}/maps", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return 0
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return 0
    finally:
        os.close(fd)
    text = b"".join(chunks)
    if _DELETED not in text:  # the common case, found without splitting the text into lines
        return 0
    for line in text.splitlines():
        if not line.endswith(b" (deleted)"):
            continue
        span = line.split(b" ", 1)[0].decode("ascii", "replace")
        try:
            st = os.stat(f"/proc/{pid}/map_files/{span}")
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and key not in links:
            links.add(key)
            total += _charge(st)
    return total


def measure(roots: list[str], stop_at: int | None) -> tuple[int, set[tuple[int, int]]]:
    """Bytes the trees under `roots` hold (see the module's docstring), and the multiply-linked
    files seen; stops once past `stop_at`. Raises Unmeasurable for a folder it cannot open."""
    total, links = 0, set()
    for root in roots:
        try:
            top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise Unmeasurable(f"{root}: {e.strerror}") from None
        total = _walk(top, total, stop_at, links)
        if stop_at is not None and total > stop_at:
            break
    return total, links


def _walk(top: int, total: int, stop_at: int | None, links: set[tuple[int, int]]) -> int:
    """Add up the tree under the folder descriptor `top` (closed here) to `total`."""
    stack: list[tuple[int, list[str]]] = []
    fd: int | None = top
    try:
        while True:
            if fd is not None:
                subdirs = []
                with os.scandir(fd) as it:
                    for e in it:
                        try:
                            st = e.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        if stat.S_ISDIR(st.st_mode):
                            subdirs.append(e.name)
                        elif st.st_nlink > 1:
                            key = (st.st_dev, st.st_ino)
                            if key in links:
                                continue
                            links.add(key)
                        total += _charge(st)
                        if stop_at is not None and total > stop_at:
                            return total
                if subdirs:
                    stack.append((fd, subdirs))
                else:
                    os.close(fd)
                fd = None
            if not stack:
                return total
            parent, names = stack[-1]
            name = names.pop()
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                fd = None
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a link or a file meanwhile
                    fd = None
                else:
                    raise Unmeasurable(f"a folder cannot be opened: {e.strerror}") from None
            if not names:
                stack.pop()
                os.close(parent)
    finally:
        if fd is not None:
            os.close(fd)
        for parent, _ in stack:
            os.close(parent)


def _charge(st: os.stat_result) -> int:
    return max(st.st_blocks * 512, MIN_ENTRY)


def kill(pids: Callable[[], list[int]]) -> None:
    """SIGKILL every process `pids()` lists, again until none is left (what forked meanwhile)."""
    for _ in range(20):
        found = pids()
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.005)


def format_bytes(n: int) -> str:
    """4.0 GB, 512.0 KB: the quota as the agent and the record are told it."""
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} bytes"


class _Watchdog:
    """The process's one polling thread; runs while some quota is watched."""

    def __init__(self) -> None:
        self._active: set[DiskQuota] = set()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._woken = False  # a command began while none was watched: its first interval starts now

    def add(self, quota: DiskQuota) -> None:
        with self._cond:
            idle = not self._active
            self._active.add(quota)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="disk-quota", daemon=True)
                self._thread.start()
            if idle:
                self._woken = True
                self._cond.notify()

    def discard(self, quota: DiskQuota) -> None:
        with self._cond:
            self._active.discard(quota)

    def _run(self) -> None:
        """A round every interval; a command that began has written nothing yet, so a new one
        (which does not wake the thread) is first measured at the next round, at most one interval
        on, as an idle thread's first round is one interval after it is woken (also when it was
        waiting out the interval of a command that ended meanwhile)."""
        interval = POLL_MIN_S
        while True:
            with self._cond:
                if not self._active:
                    self._cond.wait(timeout=60)
                    if not self._active:
                        self._thread = None
                        return
                self._woken = False
                deadline = time.monotonic() + interval
                while (left := deadline - time.monotonic()) > 0:
                    self._cond.wait(timeout=left)
                    if self._woken:
                        self._woken = False
                        deadline = time.monotonic() + interval
                watched = list(self._active)
            began = time.thread_time()
            for quota in watched:
                try:
                    quota.check()
                except Exception:  # a bug must not end the watching of every other job in the process
                    log.exception("measuring a job's disk quota failed; its last measure after the call still runs")
            interval = min(max((time.thread_time() - began) / CPU_SHARE, POLL_MIN_S), POLL_MAX_S)


_WATCHDOG: _Watchdog | None = None
_WATCHDOG_LOCK = threading.Lock()


def _watchdog() -> _Watchdog:
    global _WATCHDOG
    with _WATCHDOG_LOCK:
        if _WATCHDOG is None:
            _WATCHDOG = _Watchdog()
        return _WATCHDOG
