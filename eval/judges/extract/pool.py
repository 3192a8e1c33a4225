"""The reading processes of this process: a few `eval.judges.extract.worker`s, each asked for one file at a time.

A file is read outside the process that judges it: a bomb costs its child's memory and time, never
this process's (an episode actor hosting dozens of jobs, whose threads share one interpreter lock).
At most `SLOTS` files are read at once per process; a caller waits for a free worker (each read is
bounded by its wall time), and a worker that stops answering is killed and replaced. A worker never
parses a file itself (its children do), so one that cannot start or answer twice in a row is a
failure of the host, not of the file: `ExtractionFailed`, and the job stays unscored (re-scorable)
rather than scoring 0. Workers live
as long as this process (they exit when its end of their stdin closes) and are reused by every
job, so a file costs a fork in a warm process, not a Python start and its imports.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from envs.fd_wait import readable
from eval.config import ExtractLimits, MiB
from eval.judges.extract.extracted import Extracted

SLOTS = max(2, min(8, os.cpu_count() or 2))
GRACE_S = 30.0  # beyond a file's wall time, for the worker itself to answer
_SOURCE_ROOT = Path(__file__).resolve().parents[3]  # the worker imports this checkout's `eval`


class ExtractionFailed(RuntimeError):
    """The reading processes cannot be started or do not answer (the host's failure, not the file's)."""


@dataclass(frozen=True)
class Read:
    """One file's extraction and what reading it cost (in its child process)."""

    extracted: Extracted
    wall_s: float
    cpu_s: float = 0.0
    maxrss_kb: int = 0


class Worker:
    """One `python -m eval.judges.extract.worker` process."""

    def __init__(self) -> None:
        env = {"PATH": os.defpath, "LANG": "C.UTF-8", "PYTHONPATH": str(_SOURCE_ROOT)}  # nothing of ours: no secret
        self.proc = subprocess.Popen([sys.executable, "-m", "eval.judges.extract.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, cwd=_SOURCE_ROOT, bufsize=0)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, root: Path, rel: str, limits: ExtractLimits) -> dict[str, Any]:
        """The worker's answer for `root/rel`; OSError/ValueError when it cannot give one."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"root": str(root), "rel": rel, "limits": asdict(limits)}).encode() + b"\n")
        line = _read_line(self.proc.stdout.fileno(), time.monotonic() + limits.wall_s + GRACE_S)
        return json.loads(line)

    def close(self) -> None:
        if self.alive:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


class Pool:
    """At most `slots` workers, each reading one file at a time."""

    def __init__(self, slots: int = SLOTS) -> None:
        self.slots = slots
        self._idle: list[Worker] = []
        self._count = 0
        self._cond = threading.Condition()

    def read(self, root: Path, rel: str, limits: ExtractLimits) -> Read:
        """`root/rel` read in a worker's child under `limits` (whatever the file, a `Read`; its
        `extracted.error` says why it is unreadable). `ExtractionFailed` when no worker answers, when
        `root` is relative (the worker's working folder is not the caller's: it would read another
        file, or none) or when the worker cannot open `root` (a folder of the host)."""
        if not Path(root).is_absolute():
            raise ExtractionFailed(f"{root}: a relative folder reached the reading process (paths are made absolute at the entry point)")
        for attempt in (1, 2):  # a worker may have ended since it was last used: one more, fresh
            try:
                worker = self._take()
            except OSError as e:
                raise ExtractionFailed(f"cannot start the reading process: {e}") from e
            try:
                reply = worker.ask(root, rel, limits)
                if "host_error" in reply["result"]:
                    raise ExtractionFailed(f"{rel!r} not read: {reply['result']['host_error']} (a failure of the host, not of the file)")
                return Read(Extracted.from_json(reply["result"]), reply["wall_s"], reply["cpu_s"], reply["maxrss_kb"])
            except ExtractionFailed:
                raise
            except (OSError, ValueError, KeyError, TypeError) as e:
                worker.close()
                if attempt == 2:
                    raise ExtractionFailed(f"the reading process did not answer for {rel!r}: {type(e).__name__}: {e}") from e
            finally:
                self._give(worker)
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Stop the idle workers (those reading finish and are stopped when handed back)."""
        with self._cond:
            idle, self._idle, self.slots = self._idle, [], 0
            self._count -= len(idle)
        for w in idle:
            w.close()

    def _take(self) -> Worker:
        with self._cond:
            while not self._idle and self._count >= max(self.slots, 1):
                self._cond.wait()
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                self._count -= 1  # ended while idle (killed from outside): replaced below
                worker.close()
            self._count += 1
        try:
            return Worker()
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def _give(self, worker: Worker) -> None:
        with self._cond:
            if worker.alive and self.slots:
                self._idle.append(worker)
                worker = None  # type: ignore[assignment]
            else:
                self._count -= 1
            self._cond.notify()
        if worker is not None:
            worker.close()


def _read_line(fd: int, deadline: float) -> bytes:
    """One line from `fd` by `deadline` (TimeoutError), EOF an OSError."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not readable([fd], left):
            raise TimeoutError("no answer in time")
        chunk = os.read(fd, MiB)
        if not chunk:
            raise OSError("the reading process ended")
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            return b"".join(chunks)


_shared: Pool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> Pool:
    """This process's pool, started on first use and stopped at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Pool()
            atexit.register(_shared.close)
        return _shared
