"""The process that reads deliverable files for judging, one file per child, each under its limits.

    python -m eval.judges.extract.worker     (started by eval/judges/extract/pool.py; never by hand)

It reads one request a line on stdin, `{"root", "rel", "limits"}`, and answers one line on stdout,
`{"cpu_s", "maxrss_kb", "wall_s", "result": <Extracted as JSON, or {"host_error": why}>}`. This process never parses a file:
for each request it imports the format's library (once; children inherit it, so a file costs a
fork, not an import) and forks a child that sets its own limits (RLIMIT_AS, RLIMIT_CPU, no file
writes, no core), reads the file (eval/judges/extract/read.py) and writes its answer to a pipe. A child past
its wall time is killed; one that dies (CPU limit, a crash out of memory) is reported with the
reason. It exits when its stdin closes, i.e. when the process that started it is gone.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import resource
import signal
import sys
import time
from pathlib import Path

from envs.fd_wait import readable
from eval.config import ExtractLimits, MiB
from eval.judges.extract.read import OFFICE_SUFFIXES, HostError, extract_file

MAX_REPLY = 256 * MiB  # far above what the text and cell limits let an answer reach


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        req = json.loads(line)
        out.write(serve(Path(req["root"]), req["rel"], ExtractLimits(**req["limits"])) + b"\n")
        out.flush()


def serve(root: Path, rel: str, limits: ExtractLimits) -> bytes:
    """One file read in a child under `limits`: the answer line (without its newline)."""
    library = OFFICE_SUFFIXES.get(Path(rel).suffix.lower())
    if library:
        importlib.import_module(library)
    started = time.monotonic()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its outcome is what the parent reports
        os.close(r)
        _child(w, root, rel, limits)
    os.close(w)
    data, late = _collect(r, started + limits.wall_s)
    if late:
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    result = _outcome(data, late, status, limits)
    cpu = usage.ru_utime + usage.ru_stime
    head = f'{{"cpu_s": {cpu:.3f}, "maxrss_kb": {usage.ru_maxrss}, "wall_s": {time.monotonic() - started:.3f}, "result": '
    return head.encode() + result + b"}"


def _child(w: int, root: Path, rel: str, limits: ExtractLimits) -> None:
    """Set the limits, read the file, write the answer, exit: never returns."""
    out_of_memory = json.dumps({"error": f"needs more than {limits.memory_bytes // MiB:,} MiB of memory to read"}).encode()
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the parent's protocol is on 0 and 1; libraries' warnings go nowhere
            os.dup2(null, fd)
        _limit(resource.RLIMIT_AS, limits.memory_bytes)
        cpu = max(1, math.ceil(limits.cpu_s))
        _limit(resource.RLIMIT_CPU, cpu, cpu + 1)  # SIGXCPU at the soft limit, SIGKILL a second later
        _limit(resource.RLIMIT_FSIZE, 0)
        _limit(resource.RLIMIT_CORE, 0)
        data = json.dumps(extract_file(root, rel, limits).to_json()).encode()
    except HostError as e:  # not the file's fault: the parent raises it, never a score
        data = json.dumps({"host_error": str(e)}).encode()
    except MemoryError:
        data = out_of_memory
    except BaseException as e:  # noqa: BLE001 - whatever happens, the parent gets an answer
        # extract_file turns whatever the file causes into its error: this is the process's own failure
        data = json.dumps({"host_error": f"the reading process failed: {type(e).__name__}"}).encode()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(w, view) :]
    finally:
        os._exit(0)


def _limit(which: int, soft: int, hard: int | None = None) -> None:
    """Lower a limit (never above what this process already has: only root may raise one)."""
    _, cur = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if cur != resource.RLIM_INFINITY:
        soft, hard = min(soft, cur), min(hard, cur)
    resource.setrlimit(which, (soft, hard))


def _collect(fd: int, deadline: float) -> tuple[bytes, bool]:
    """What the child writes until it closes the pipe; (data so far, True) when past the deadline."""
    chunks, size = [], 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not readable([fd], left):
                return b"".join(chunks), True
            chunk = os.read(fd, MiB)
            if not chunk:
                return b"".join(chunks), False
            size += len(chunk)
            if size > MAX_REPLY:
                return b"", True
            chunks.append(chunk)
    finally:
        os.close(fd)


def _outcome(data: bytes, late: bool, status: int, limits: ExtractLimits) -> bytes:
    """The child's answer, or an error saying which limit ended it."""
    if late:
        return _error(f"took more than {limits.wall_s:g} s to read")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return _error(f"used more than {limits.cpu_s:g} s of CPU to read")
        return _error(f"the reading process died of {signal.Signals(sig).name} (its memory limit is {limits.memory_bytes // MiB:,} MiB)")
    if not data:
        return _error(f"the reading process ended without an answer (exit status {os.WEXITSTATUS(status)})")
    return data


def _error(reason: str) -> bytes:
    return json.dumps({"error": reason}).encode()


if __name__ == "__main__":
    main()
