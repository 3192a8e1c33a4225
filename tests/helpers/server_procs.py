"""Finding a test's model-server processes from /proc, and killing a driver as a session is killed.

A test gives its server a mark in its environment (`model.server.env`): every process of the server
inherits it (vLLM's engine and workers, whose command lines are renamed), so a server that outlived
its driver is found wherever it was reparented, and finding it also shows that `model.server.env`
reached the server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

MARK = "RT_TEST_SERVER_MARK"


def new_mark() -> str:
    return uuid.uuid4().hex


def marked(mark: str) -> list[int]:
    """Live processes whose environment carries `MARK=mark` (zombies excluded)."""
    want = f"{MARK}={mark}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if want in environ.read_bytes().split(b"\0") and _state(environ.parent) != "Z":
                found.append(int(environ.parent.name))
        except (OSError, ValueError):
            continue
    return sorted(found)


def wait_marked(mark: str, timeout_s: float, gone: bool) -> list[int]:
    """Wait until processes carrying `mark` exist (`gone=False`) or none is left (`gone=True`)."""
    deadline = time.monotonic() + timeout_s
    while True:
        pids = marked(mark)
        if bool(pids) != gone or time.monotonic() > deadline:
            return pids
        time.sleep(0.25)


def kill_session(sid: int) -> list[int]:
    """SIGKILL every process of session `sid` at once (the driver, Ray's processes and workers), as
    a closed terminal or a stopped job does; a server in a session of its own is not among them."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[3]) == sid:
                pids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


def kill_driver_session(driver: subprocess.Popen[bytes], mark: str, wait_s: float) -> list[int]:
    """SIGKILL the driver's whole session mid-run (`kill_session`); the processes carrying `mark`
    still alive `wait_s` later."""
    kill_session(driver.pid)
    driver.wait()
    return wait_marked(mark, wait_s, gone=True)


def clean_up(driver: subprocess.Popen[bytes], mark: str) -> None:
    """After a test, passed or failed: its driver's session and its server's process groups."""
    kill_session(driver.pid)
    kill_group(marked(mark))


def kill_group(pids: list[int]) -> None:
    """SIGKILL the process groups of `pids`."""
    for pid in pids:
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def _state(proc: Path) -> str:
    return (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
